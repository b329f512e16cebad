"""The steady state of a spare pool's sparse Markov chain: a direct sparse LU up to
:data:`DIRECT_STATES` states, past it :func:`_solve` (restarted GMRES bounded in
iterations, :func:`_gmres`, then preconditioned by an incomplete LU bounded in memory);
the chain of pools asked together past it by BiCGSTAB first (:func:`_bicgstab`).
Split from :mod:`netmodel.study.availability_threshold`; the chains it solves are the busy
count's (:mod:`netmodel.study.availability_analytic`) and the holdings'
(:mod:`netmodel.study.availability_threshold`).
"""

from __future__ import annotations

import math

import numpy as np


def _steady_state(n: int, rows, cols, vals, iterations: int | None = None,
                  unsettled_raises: bool = False, coupled: bool = False) -> np.ndarray:
    """The steady state of the Markov chain of ``n`` states (state 0 recurrent) with
    transition rates ``vals`` from ``rows`` to ``cols``: the balance equations of the
    other states with state 0's weight set to 1, then normalized. Up to
    :data:`DIRECT_STATES` states by SuperLU; past it by :func:`_solve` (GMRES in
    ``iterations``, :data:`GMRES_ITERATIONS` where None), then, where it does not settle,
    by :func:`_bicgstab`, then by SuperLU; or :class:`_Unsettled` where ``unsettled_raises``
    (the chain of holdings, whose SuperLU fill-in is not bounded; there :func:`_solve`
    retries with its incomplete LU first). 512 H100 at TP 1 built chains of the busy count
    of 7,000 states that SuperLU took 1.3 s each to factor (study lite-gpu --models
    Llama-3-8B: 15.2 s in 485 solves, GMRES 0.7 s); at 34 global spares (29,647 states,
    GPU failures 1e-3 an hour, one-day repairs) GMRES stalls at 1.04e-11 of the 1e-11
    asked, and SuperLU took 116-170 s where BiCGSTAB settles it in 0.08 s (0.54 s CPU
    the solve, GMRES's iterations first).

    ``coupled``: the chain of pools asked together
    (:func:`~netmodel.study.availability_busy._chain_of`), past :data:`DIRECT_STATES`
    solved by :func:`_bicgstab` first, then by :func:`_solve` with its incomplete LU, and
    :class:`_Unsettled` where neither settles (never SuperLU: its fill-in on these chains,
    a lattice of as many dimensions as the kinds of failure in progress, ran to 8.9
    million entries at 7,942 states, 1.3 s, and 89 million at 26,663, 85 s).

    A birth-death chain of 1,200 states (rates 1 up, 1.001 down): ``pi_k`` is
    ``1.001^-k`` normalized, either way:

    >>> k = np.arange(1_199)
    >>> r, c, v = np.r_[k, k + 1], np.r_[k + 1, k], np.r_[np.ones(1_199), np.full(1_199, 1.001)]
    >>> hand = 1.001 ** -np.arange(1_200.0)
    >>> [float(abs(_steady_state(1_200, r, c, v, coupled=x) / (hand / hand.sum()) - 1).max())
    ...  < 1e-10 for x in (True, False)]
    [True, True]
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    if n == 1:
        return np.ones(1)
    v = np.asarray(vals) / max(vals)
    out = np.bincount(rows, weights=v, minlength=n)   # each state's rate out
    qt = (coo_matrix((v, (cols, rows)), shape=(n, n))
          - coo_matrix((out, (range(n), range(n))), shape=(n, n))).tocsc()
    a, rhs = -qt[1:, 1:], qt[1:, 0].toarray().ravel()   # an M-matrix, as _solve takes
    x = None
    if n > DIRECT_STATES and coupled:
        x = _bicgstab(a.tocsr(), rhs, GMRES_RTOL, BICGSTAB_ITERATIONS)
        if x is None:
            x = _solve(a, rhs, GMRES_ITERATIONS if iterations is None else iterations)
        if x is None:
            raise _Unsettled(f"the steady state of {n} states of pools asked together")
    elif n > DIRECT_STATES:
        x = _solve(a, rhs, GMRES_ITERATIONS if iterations is None else iterations,
                   fill=ILU_FILL if unsettled_raises else 0)
        if x is None and unsettled_raises:
            raise _Unsettled(f"the steady state of {n} states")
        if x is None:
            x = _bicgstab(a.tocsr(), rhs, GMRES_RTOL, BICGSTAB_ITERATIONS)
    if x is None:
        x = spsolve(a, rhs)
    pi = np.clip(np.r_[1.0, np.atleast_1d(x)], 0.0, None)
    return pi / pi.sum()


#: Most states of the holdings' chain
#: (:func:`~netmodel.study.availability_threshold._held_moments`) solved by a sparse LU
#: (SuperLU); past it by :func:`_solve` (GMRES). SuperLU's fill-in grows fast with the
#: holdings (64 H100 at TP 1: 865 states 3 ms a factorization, 2,284 22 ms, 5,417 0.3 s)
#: where GMRES takes tens of iterations at any size (4, 6, 9 ms) but a Python loop's
#: overhead on small chains (study lite-gpu's 2,229 solves, all small: 1.4 s against
#: SuperLU's 0.1 s).
DIRECT_STATES = 1_000


#: Most GMRES iterations of :func:`_solve` (restarted every 100), then as many again
#: preconditioned by an incomplete LU: the chains of
#: :func:`~netmodel.study.availability_threshold._held_moments` settle in 30-45 plain
#: ones (64 H100 at TP 1, 419 to 9,181 states).
GMRES_ITERATIONS = 2_000
#: GMRES's residual, relative to the right-hand side's, at which :func:`_solve` stops. At
#: 1e-13 the largest chain of 512 H100 at TP 1 with 23 global spares (19,092 states) never
#: settled: its residual stalls near 1e-12 (rounding), so 2,000 plain iterations and as
#: many preconditioned ran 12.5 s to give up and the overlap fell back to the thinning,
#: where a direct solve (SuperLU, 22.7 s) and GMRES at 1e-11 (0.1 s) agree to 5e-11.
GMRES_RTOL = 1e-11
#: The incomplete LU of :func:`_solve`'s fallback keeps at most this many times the
#: matrix's entries (SuperLU's ``fill_factor``): its memory is known before it is made,
#: where a complete LU's fill-in is not (5,417 states: 0.3 s a factorization, and it grows
#: fast with the holdings).
ILU_FILL = 10
#: Most bytes of that incomplete LU (12 a kept entry: value and index), checked before
#: it is made; past it :func:`_solve` gives up (None).
ILU_BYTES = 256 * 2 ** 20


#: Most BiCGSTAB iterations of :func:`_bicgstab` (two products by the matrix each) on
#: the chain of pools asked together: two pools asked by an instance spanning both (9
#: Erlangs) and each by its own kind of another repair time (0.3 Erlangs) settle in
#: 158 (7,942 states), 170 (26,663) and 188 (93,993).
BICGSTAB_ITERATIONS = 1_000


class _Unsettled(ArithmeticError):
    """:func:`_solve` did not settle within its iterations (a chain's moments unread)."""


def _solve(a, rhs: np.ndarray, iterations: int = GMRES_ITERATIONS,
           fill: float = ILU_FILL) -> np.ndarray | None:
    """``a^-1 rhs`` for a sparse ``a`` that is an M-matrix dominant on its diagonal by
    columns (``s I - Q'`` of a chain's generator ``Q``, ``s > 0``; or the balance
    equations with a recurrent state's taken out): GMRES to a residual of :data:`GMRES_RTOL` of
    ``rhs``'s within ``iterations`` (restarted every 100; the chains of
    :func:`~netmodel.study.availability_threshold._held_moments` settle in tens: 9 ms at
    5,417 states where SuperLU's fill-in took 0.3 s); where it does not settle (a chain far slower than ``s``), as many again
    preconditioned by an incomplete LU of at most ``fill`` times ``a``'s entries (none
    where ``fill`` is 0 or its :data:`ILU_BYTES` would be passed: both bounded before
    anything is allocated); None where neither settles.

    >>> from scipy.sparse import csc_matrix
    >>> _solve(csc_matrix([[2.0, -1.0], [-1.0, 2.0]]), np.array([1.0, 1.0])).round(12)
    array([1., 1.])
    """
    from scipy.sparse.linalg import spilu

    if not rhs.any():
        return np.zeros_like(rhs)
    n = rhs.shape[0]
    # two restart cycles at least: GMRES checks the true residual (not the preconditioned
    # one it iterates on) only at a cycle's end
    restart = max(1, min(n, 100, int(iterations) // 2))
    cycles = max(2, int(iterations) // restart)

    def run(psolve=None):
        x, settled = _gmres(a, rhs, GMRES_RTOL, restart, cycles, psolve)
        return x if settled and np.isfinite(x).all() else None

    x = run()
    if x is not None or fill <= 0 or 12 * fill * a.nnz > ILU_BYTES:
        return x
    try:
        ilu = spilu(a.tocsc(), drop_tol=1e-4, fill_factor=fill)
    except RuntimeError:   # exactly singular to the incomplete LU
        return None
    return run(ilu.solve)


def _bicgstab(a, b: np.ndarray, rtol: float, iterations: int) -> np.ndarray | None:
    """``a^-1 b`` by BiCGSTAB (van der Vorst 1992; Saad, *Iterative Methods for Sparse
    Linear Systems*, 2nd ed., algorithm 7.7) from ``x = 0``, unpreconditioned: settled
    where the true residual ``|b - a x|`` is at most ``rtol |b|`` within ``iterations``
    (checked where the recurrence's residual says so); None where it breaks down (a
    vanishing denominator) or does not settle. Two products by ``a`` and a few vector
    operations an iteration, against GMRES's orthogonalization against up to 100 basis
    vectors a step (:func:`_gmres`): the chains of pools asked together
    (:func:`_steady_state`) settled in 170 iterations at 26,663 states, 0.04 s, where
    GMRES took 193 steps, 0.6 s. Inner products in numpy's own loops, as :func:`_gmres`.

    >>> from scipy.sparse import csr_matrix
    >>> _bicgstab(csr_matrix([[2.0, -1.0], [-1.0, 2.0]]), np.ones(2), 1e-11, 10).round(12)
    array([1., 1.])
    """
    x = np.zeros_like(b)
    target = rtol * math.sqrt(_dot(b, b))
    if target == 0.0:
        return x
    r = b.copy()
    shadow = b.copy()
    p, v = np.zeros_like(b), np.zeros_like(b)
    rho = alpha = omega = 1.0
    for _ in range(int(iterations)):
        rho_next = _dot(shadow, r)
        if rho_next == 0.0 or omega == 0.0:
            return None
        p = r + (rho_next / rho) * (alpha / omega) * (p - omega * v)
        v = a @ p
        sv = _dot(shadow, v)
        if sv == 0.0:
            return None
        alpha = rho_next / sv
        s = r - alpha * v
        if math.sqrt(_dot(s, s)) <= target:
            x = x + alpha * p
        else:
            t = a @ s
            tt = _dot(t, t)
            if tt == 0.0:
                return None
            omega = _dot(t, s) / tt
            x = x + alpha * p + omega * s
            r = s - omega * t
            rho = rho_next
            if math.sqrt(_dot(r, r)) > target:
                continue
        true = b - a @ x
        if not np.isfinite(x).all():
            return None
        if math.sqrt(_dot(true, true)) <= target:
            return x
        r = true   # the recurrence drifted from the true residual: restart from it
        shadow, p, v = r.copy(), np.zeros_like(b), np.zeros_like(b)
        rho = alpha = omega = 1.0
    return None


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """``x . y`` in numpy's own loop (einsum), not BLAS: see :func:`_gmres`."""
    return float(np.einsum("i,i", x, y))


def _gmres(a, b: np.ndarray, rtol: float, restart: int, maxiter: int, psolve=None
           ) -> tuple[np.ndarray, bool]:
    """``(x, settled)``: restarted GMRES (Saad and Schultz 1986; Saad, *Iterative Methods
    for Sparse Linear Systems*, 2nd ed., sections 6.5.3-6.5.5) on ``a x = b`` from
    ``x = 0``, settled where the true residual ``|b - a x|`` is at most ``rtol |b|``:
    at most ``maxiter`` cycles of ``restart`` Arnoldi steps, left preconditioned by
    ``psolve`` (``v -> M^-1 v``; none where None).

    Written for the chains of holdings, not for generality: each Arnoldi step
    orthogonalizes the new vector twice against the basis by classical Gram-Schmidt (two
    passes keep it orthogonal to rounding, as one modified pass does, in two array
    products instead of a Python loop of dots); the least-squares problem is kept
    triangular by Givens rotations, so its residual, the preconditioned residual's norm,
    is read each step; a cycle stops where that reaches the target scaled by the
    preconditioner's gain on the cycle's starting residual, and the true residual is
    computed at each cycle's end. Inner products, norms and the update run in numpy's
    own loops (``einsum``), not BLAS: OpenBLAS hands a dot of more than 10,000 entries to
    its threads, and GMRES takes thousands of them a solve; on 2 cores shared with other
    work the threads waited on one another, and the chains of holdings of
    ``study lite-gpu --models Llama-3-8B --gpus H100-SXM,Lite`` (10,901 to 19,465 states)
    took 1.5-6 s CPU a solve through scipy's gmres, 40 s of the 41 s its 258 solves took
    (``tests/netmodel/test_gmres_loops_h538.py`` checks this against direct solves).

    >>> from scipy.sparse import csc_matrix
    >>> x, settled = _gmres(csc_matrix([[2.0, -1.0], [-1.0, 2.0]]), np.ones(2), 1e-11, 2, 2)
    >>> x.round(12), settled
    (array([1., 1.]), True)
    """
    from scipy.linalg import solve_triangular

    def norm(v: np.ndarray) -> float:
        return math.sqrt(_dot(v, v))

    def precondition(v: np.ndarray) -> np.ndarray:
        return v if psolve is None else psolve(v)

    n = len(b)
    x = np.zeros(n)
    target = rtol * norm(b)
    if target == 0.0:
        return x, True
    m = max(1, min(int(restart), n))
    basis = np.empty((m + 1, n))
    r = b.copy()
    r_norm = norm(r)
    for _ in range(int(maxiter)):
        if r_norm <= target:
            break
        z = precondition(r)
        beta = norm(z)
        if beta == 0.0 or not math.isfinite(beta):
            break
        goal = target * beta / r_norm   # the target, as the preconditioner scales r
        basis[0] = z / beta
        hess = np.zeros((m + 1, m))       # column j: the new vector's coefficients
        cos, sin = np.zeros(m), np.zeros(m)
        g = np.zeros(m + 1)
        g[0] = beta
        k = 0
        for j in range(m):
            w = precondition(a @ basis[j])
            size = norm(w)
            for _pass in range(2):
                c = np.einsum("ij,j->i", basis[:j + 1], w)
                w = w - np.einsum("i,ij->j", c, basis[:j + 1])
                hess[:j + 1, j] += c
            h_next = norm(w)
            hess[j + 1, j] = h_next
            for i in range(j):   # the earlier rotations, on the new column
                top, bottom = hess[i, j], hess[i + 1, j]
                hess[i, j] = cos[i] * top + sin[i] * bottom
                hess[i + 1, j] = cos[i] * bottom - sin[i] * top
            rho = math.hypot(hess[j, j], hess[j + 1, j])
            if rho == 0.0:   # the new direction adds nothing: solve on the first j
                break
            cos[j], sin[j] = hess[j, j] / rho, hess[j + 1, j] / rho
            hess[j, j], hess[j + 1, j] = rho, 0.0
            g[j + 1] = -sin[j] * g[j]
            g[j] = cos[j] * g[j]
            k = j + 1
            if h_next <= np.finfo(float).eps * size or abs(g[j + 1]) <= goal:
                break   # the Krylov space holds the solution, or the residual is small
            basis[j + 1] = w / h_next
        if k == 0:
            break
        y = solve_triangular(hess[:k, :k], g[:k], lower=False, check_finite=False)
        x += np.einsum("i,ij->j", y, basis[:k])
        r = b - a @ x
        r_norm = norm(r)
    settled = r_norm <= target and bool(np.isfinite(x).all())
    return x, settled
