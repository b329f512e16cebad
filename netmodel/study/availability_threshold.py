"""The closed form's bound on the time below that bunched refusals make, and the chains of
a spare pool it reads (split from :mod:`netmodel.study.availability_analytic`, which uses
them).

**The moments.** The refusals in progress of each type ``Y_t`` (a kind's failures refused
``r`` instances, by their loss and repair) as one pool brings them together: their binomial
moments ``E[prod_t C(Y_t, c_t)]`` on the pool's chain of holdings (:func:`_held_moments`:
each failure in progress by its hold, the spares it took and the refusal it carries;
exponential holds), or past its limit on the busy count's birth-death chain
(:func:`_pool_moments`).

**The bound** (:func:`_missed`, :func:`_threshold_low`): the refusals that do not cross the
threshold alone (:func:`_outcomes`) keep the cluster below only where some least set of them
is in progress at once, so that time is at most the sum over those sets of their moments
(Markov's inequality); the flag ``threshold_low`` is set where it reaches the reading.

**The overlap** (:func:`_crossing_overlap`): the refusals that cross alone
(:func:`_crossings`) come while the pool is held, often by a failure that is itself below;
the chance that none is in progress from the same chain, by inclusion-exclusion over the
moments, in place of the thinning's Poisson one; where no pool's chain holds them (pools
asked together, a failure of several kinds, a chain past its limit or unsettled) the
thinning stays, and the result says so (``overlap_thinned``).

Also the refusal counts of a kind granted in part (:func:`_top`, :func:`_refused_counts`),
which the blocking's chains read too. The chains' steady states are solved by
:mod:`netmodel.study.availability_solve`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from netmodel.study.availability_chain import _breadth_first, _one_pool_reads
from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_solve import (
    DIRECT_STATES,
    GMRES_ITERATIONS,
    _dot,
    _solve,
    _steady_state,
    _Unsettled,
)
from netmodel.study.reliability_spares import SparePools

__all__ = ["DECIDED", "MAX_HELD_STATES", "MAX_OVERLAP_STATES", "MISSED_PAIRS", "MOST_MOMENTS"]


def _top(x: Kind) -> int:
    """The last step of a kind granted in part (:attr:`Kind.steps`; :attr:`Kind.pieces`
    where every instance takes :attr:`Kind.per`)."""
    return len(x.steps) - 1 if x.each else x.pieces


def _refused_counts(x: Kind) -> np.ndarray:
    """Instances refused at each ``r`` of
    :func:`~netmodel.study.availability_analytic._short_of` (where every instance takes
    :attr:`Kind.per`, ``r`` itself)."""
    if not x.each:
        return np.arange(x.pieces + 1)
    return np.array([x.refused(_top(x) - r) for r in range(_top(x) + 1)])


#: A blocking within this of 0 or 1 decides alone (:func:`_threshold_low`).
DECIDED = 1e-9


def _outcomes(x: Kind, bk: float, limit: float) -> list[tuple[int, float]]:
    """The refusals of kind ``x`` that :func:`_threshold_low` counts: ``(r, loss)`` for
    each number ``r`` of its instances a failure can be refused (1 where its ask is all or
    nothing, :func:`_refused_counts` where it is granted in part) whose loss, ``r`` of its
    :attr:`Kind.pieces` of its down and slowed instances' worth over every cell it
    strikes, is no more than ``limit``: a refusal crossing alone is a single event, which
    the thinning counts at its rate. None where the kind asks no spares or its blocking
    is within :data:`DECIDED` of 0 or 1 (refused always or never: nothing to bunch)."""
    if x.units <= 0 or not DECIDED < bk < 1.0 - DECIDED:
        return []
    whole = (x.down_worth + x.slow) * x.cells
    counts = sorted(set(_refused_counts(x).tolist()) - {0}) if x.pieces > 1 else [1]
    return [(r, whole * r / max(x.pieces, 1)) for r in counts
            if whole * r / max(x.pieces, 1) <= limit]


#: Most refusals at once whose binomial moments :func:`_threshold_low` takes; past it
#: the bound counts any more as crossing (looser, never below the truth in its model).
MOST_MOMENTS = 8
#: Most pairs of terms one product of :func:`_missed`'s truncated generating functions
#: may walk (the terms: count vectors over the refusal types of total at most
#: :data:`MOST_MOMENTS`, C(types + 8, 8) of them; 5 types, 1,287 terms, 1.7 million
#: pairs, about a second a product). Past it the bound is not worked out and the reading
#: is flagged as one that may read low: 16,384 Lites of lite-flat with 2% global spares
#: (11 types, 75,582 terms, 5.7e9 pairs a product) ran for more than ten minutes.
MISSED_PAIRS = 4_000_000


def _pool_moments(kinds, lam, q: np.ndarray, types: list, top: int) -> dict:
    """``E[prod_t C(Y_t, c_t)]`` for every count vector ``c`` of at most ``top``, where
    ``Y_t`` is the refusals of type ``t`` (``types``: ``(arrive, d)`` pairs, ``arrive[j,
    j']`` the type's arrivals a second with ``j`` spares busy that leave ``j'`` busy, a
    failure refused in part taking what it is granted; each in progress ``d`` s,
    exponential) by one pool whose busy spares follow a birth-death chain with the
    steady state ``q`` (the closed form's own,
    :func:`~netmodel.study.availability_analytic._blocking`): a failure of kind ``k``
    (``lam[k]`` a second at this pool) finding ``j`` busy takes :meth:`Kind.take`
    of the free spares, and each grant is undone at the rate that keeps ``q`` (detailed
    balance: the real chain's steady state, its dynamics approximated). Refusals of types
    ``t_1 .. t_m`` (oldest first) with gaps ``w_i`` between them and the last ``v`` s ago
    are all in progress with probability ``exp(-(s_1 w_1 + .. + s_(m-1) w_(m-1) + s_m
    v))``, ``s_i`` the sum of ``1 / d`` of the first ``i``, so the moment is the sum over
    the orders of ``q' A_t1 R(s_1) A_t2 R(s_2) .. A_tm 1 / s_m``, ``R(s) = (s I - Q)^-1``
    (``Q`` the chain's generator, ``A_t`` the type's ``arrive``), which one pass over the
    count vectors gives (``s_i`` hangs on the counts only). As a dict from count tuples.
    Independent thinning has ``prod_t E[Y_t]^c_t / c_t!``.

    One kind of one spare on a pool of 1 (Erlang, load 1): busy half the time, each
    failure then refused:

    >>> k = Kind("gpu", "x", 1.0, down=1, slow=0.0, units=1, restored=0.0,
    ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=0.0)
    >>> refused = np.array([[0.0, 0.0], [0.0, 1.0]])   # at 1 busy, stays 1 busy
    >>> mo = _pool_moments([k], [1.0], np.array([0.5, 0.5]), [(refused, 1.0)], 2)
    >>> # E[Y] = d lam B = 0.5; R(1) (0, 1) = (1/3, 2/3), so E[C(Y, 2)] = 0.5 x 2/3 / 2
    >>> {c: round(v, 6) for c, v in mo.items()}
    {(0,): 1.0, (1,): 0.5, (2,): 0.166667}
    """
    from scipy.linalg import lu_factor, lu_solve

    cap = len(q) - 1
    gen = np.zeros((cap + 1, cap + 1))
    for k, x in enumerate(kinds):
        if lam[k] <= 0 or x.units <= 0:
            continue
        for j in range(cap + 1):
            t = x.take(cap - j)
            if t > 0 and q[j] > 0 and q[j + t] > 0:
                gen[j, j + t] += lam[k]
                gen[j + t, j] += lam[k] * q[j] / q[j + t]
    gen -= np.diag(gen.sum(axis=1))
    zero = (0,) * len(types)
    out = {zero: 1.0}
    left = {zero: np.asarray(q, dtype=float)}   # the row vector before the next arrival
    lus: dict = {}
    for m in range(1, top + 1):
        nxt: dict = {}
        for c, row in left.items():
            for t, (arrive, _) in enumerate(types):
                cc = (*c[:t], c[t] + 1, *c[t + 1:])
                v = row @ arrive
                if not v.any():
                    continue
                nxt[cc] = nxt.get(cc, 0.0) + v
        left = {}
        for c, v in nxt.items():
            s = sum(n / d for n, (_, d) in zip(c, types, strict=True))
            out[c] = float(v.sum()) / s
            if m < top:
                key = round(s, 15)
                if key not in lus:
                    lus[key] = lu_factor((s * np.eye(cap + 1) - gen).T)
                left[c] = lu_solve(lus[key], v)
    return out


#: Most states of :func:`_held_moments`'s chain (the spares each failure in progress
#: holds, by the kind and the refusal it carries); past it :func:`_pool_moments`'s chain
#: of the busy count, which can read the bound low (see :func:`_held_moments`).
MAX_HELD_STATES = 4_000


def _held_states(classes, cap: int) -> int:
    """An upper bound on the states of :func:`_held_moments`'s chain before it is built:
    the multisets of the holdings its ``classes`` can grant (``(rate, takes, marks,
    hold)``, each free count's grant and the refusal it carries) that fit in ``cap``
    spares (a count of partitions, one pass per holding; every one of them is reached
    where each grant can follow the others, as 64 H100 at TP 1 with 10 spares: 419).

    >>> k = Kind("gpu", "x", 1.0, down=1, slow=0.0, units=1, restored=0.0,
    ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=0.0)
    >>> # one holding of one spare on a pool of 3: 0, 1, 2 or 3 of them
    >>> _held_states([(1.0, tuple(k.take(f) for f in range(4)), (-1,) * 4, 1.0)], 3)
    4
    """
    held = {(hold, t, m) for _, takes, marks, hold in classes
            for t, m in zip(takes, marks, strict=True) if t > 0}
    ways = [1] + [0] * cap   # multisets using u spares
    for _, t, _ in held:
        for u in range(t, cap + 1):
            ways[u] += ways[u - t]
    return sum(ways)


def _held_moments(kinds, lam, cap: int, types: list, durations: list, top: int,
                  limit: int | None = None, iterations: int = GMRES_ITERATIONS
                  ) -> dict | None:
    """:func:`_pool_moments` on the pool's chain of holdings: a state is the failures in
    progress that hold spares, each by its hold, what it took and the refusal type it
    carries, so that a grant is undone by its own failure's release (exponential holds,
    as :func:`~netmodel.study.availability_busy._chain`'s), not at the busy count's average
    rate, and a failure granted in part carries its refused instances for as long as it holds
    its grant (in the model
    both last its repair; the pool's refusals bunch most in that case: a TP-1 DGX host
    refused 2 of its 8 instances on a pool of 6 takes every free spare and keeps them,
    and the GPU failures of that day are refused).

    ``types``: per refusal type its ``(kind, r)`` outcomes, ``durations`` its repair;
    ``lam[k]``: kind ``k``'s failures a second at this pool. A failure refused in whole
    (it takes nothing) is a timer of its type (in progress ``d`` s, exponential, its
    arrivals ``a_t`` a diagonal: the state stays); one that takes spares and is refused
    some carries the refusal in the state. With ``L_a`` the row over states after the
    timer arrivals ``a`` (:func:`_pool_moments`'s recursion: ``q' A_t1 R(s_1) .. A_tm
    R(s_m)``) and ``f_b(state)`` the product of ``C(carried_t, b_t)``, the moment of ``c``
    is ``sum over a + b = c of L_a f_b`` (Vandermonde: ``C(x + y, c) = sum C(x, a) C(y,
    c - a)``). None past ``limit`` states (:data:`MAX_HELD_STATES` where None, counted
    before the chain is built: :func:`_held_states`); :class:`_Unsettled` where a solve
    past :data:`DIRECT_STATES` does not settle in ``iterations`` (:func:`_solve`). The
    chain and its moments are kept for the same inputs asked again
    (:func:`_held_chain`, :func:`_moments_of`).

    One kind of one spare on a pool of 2, as :func:`_pool_moments` by hand (1/22): the
    busy count is then the whole state.

    >>> k = Kind("gpu", "x", 1.0, down=1, slow=0.0, units=1, restored=0.0,
    ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=0.0)
    >>> mo = _held_moments([k], [1.0], 2, [[(0, 1)]], [1.0], 2)
    >>> round(mo[(1,)], 12) == 0.2, round(mo[(2,)], 12) == round(1 / 22, 12)
    (True, True)
    """
    n_types = len(types)
    mark = {(k, r): t for t, outs in enumerate(types) for k, r in outs}
    alike: dict = {}   # kinds the pool tells apart by what they take and carry only
    for k, x in enumerate(kinds):
        if lam[k] <= 0 or x.units <= 0:
            continue
        takes, refused = _grant_table(x, int(cap))
        sig = (takes, tuple(mark.get((k, r), -1) for r in refused), x.hold)
        alike[sig] = alike.get(sig, 0.0) + lam[k]
    classes = tuple((rate, *sig) for sig, rate in alike.items())
    allowed = MAX_HELD_STATES if limit is None else limit
    if _held_states(classes, cap) > allowed:   # estimated before the chain is built
        return None
    out = _moments_of(classes, int(cap), n_types, tuple(float(d) for d in durations),
                      int(top), int(allowed), int(iterations))
    return None if out is None else dict(out)


@functools.lru_cache(maxsize=1024)
def _grant_table(x: Kind, cap: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(takes, refused)``: for each count of free spares ``0 .. cap``, the spares a
    failure of kind ``x`` finding them takes (:meth:`Kind.take`) and the instances it is
    refused (:meth:`Kind.refused` of :meth:`Kind.granted`'s step), kept per kind and pool
    size: :func:`_held_moments` reads them for every pool it is asked of, each pool size
    many times over (the spare search and the spare curve: 250 reads, 80,000 calls of
    ``take`` and ``granted`` in ``study lite-gpu``'s blast radius).

    >>> k = Kind("host", "x", 1.0, down=2, slow=0.0, units=16, restored=0.0,
    ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=0.0, per=8)
    >>> _grant_table(k, 17)[0][::4], _grant_table(k, 17)[1][::4]
    ((0, 0, 8, 8, 16), (2, 2, 1, 1, 0))
    """
    frees = range(cap + 1)
    return tuple(x.take(f) for f in frees), tuple(x.refused(x.granted(f)) for f in frees)


class _HeldChain:
    """The chain of holdings of :func:`_held_moments` (built by :func:`_breadth_first`: a
    failure in progress is its hold, the spares it took and the refusal type it carries;
    its states, steady state ``pi``, ``-Q'`` with every diagonal entry stored, the timer
    arrivals ``arrive`` and the carried refusals' binomials ``fb``) and, where it is
    solved by a sparse LU
    (:data:`DIRECT_STATES`), the factorization of each ``s I - Q'`` met, kept for the
    next series order and the next call alike."""

    def __init__(self, classes: tuple, cap: int, n_types: int, allowed: int,
                 iterations: int):
        def arrivals(used: tuple) -> list:   # a grant: its release hangs on its hold only
            free = cap - used[0]
            return [((hold, takes[free], marks[free]), (takes[free],), hold)
                    if takes[free] > 0 else None for _, takes, marks, hold in classes]

        # the chain, its steady state, -Q' and the LUs: kept for the next pool whose
        # chain reads its classes alike (_held_core)
        core = _held_core(cap, tuple(c[0] for c in classes), arrivals, allowed, iterations)
        chain = core.chain
        # the timer arrivals a second of each type (refused in whole: the state stays),
        # per spares busy
        timer = np.zeros((cap + 1, n_types))
        for used in np.unique(chain.busy[:, 0]).tolist():
            here = [0.0] * n_types
            for rate, takes, marks, _ in classes:
                if takes[cap - used] <= 0 and marks[cap - used] >= 0:
                    here[marks[cap - used]] += rate
            timer[used] = here
        self.n, self.direct, self.pi = core.n, core.direct, core.pi
        self.iterations = iterations
        self.arrive = timer[chain.busy[:, 0]].T
        carried = np.zeros((n_types, self.n), dtype=np.int64)   # each state's refusals
        for j, (_, _, m) in enumerate(chain.types):              # carried
            if m >= 0:
                carried[m] += chain.counts[:, j]
        self.carried = carried
        self.minus, self.diagonal = core.minus, core.diagonal
        self.lus = core.lus   # s -> splu(s I - Q').solve, direct chains only
        self.core = core

    def fb(self, top: int) -> dict:
        """``f_b``: the carried refusals' binomials ``prod_t C(carried_t, b_t)`` per state,
        for each ``b`` of at most ``top`` that some state carries."""
        carried = self.carried
        most = int(carried.max(initial=0))
        binom = np.array([[math.comb(x, j) for j in range(top + 1)]
                          for x in range(most + 1)], dtype=float)   # C(x, j)
        out: dict = {}
        for vec in {tuple(col) for col in carried.T.tolist()}:
            for b in np.ndindex(*(v + 1 for v in vec)):
                if sum(b) <= top and b not in out:
                    out[b] = np.prod([binom[carried[t], bt] for t, bt in enumerate(b)],
                                     axis=0)
        return out

    def solver(self, s: float, lus: dict):
        """``v -> (s I - Q')^-1 v``: a sparse LU kept in the chain where it is direct, else
        :func:`_solve` (GMRES) kept in ``lus`` for this call only (a copy of the matrix
        each: not held across calls past :data:`DIRECT_STATES`)."""
        from scipy.sparse.linalg import splu

        key = round(s, 15)
        kept = self.lus if self.direct else lus
        if key not in kept:   # s I - Q': s added on the stored diagonal
            shifted = self.minus.copy()
            shifted.data[self.diagonal] += s
            kept[key] = splu(shifted).solve if self.direct else functools.partial(
                self._gmres, shifted)
        return kept[key]

    def _gmres(self, a, v: np.ndarray) -> np.ndarray:
        x = _solve(a, v, self.iterations)
        if x is None:
            raise _Unsettled(f"a resolvent of {self.n} states")
        return x


class _PastLimit(Exception):
    """A chain of holdings grew past its limit of states while it was built."""


class _HeldCore:
    """What :class:`_HeldChain` reads of its chain alone (:func:`_held_core`): the chain
    (:func:`_breadth_first`'s states), ``n`` its states, whether it is ``direct``, its
    steady state ``pi``, ``-Q'`` (``minus``, every diagonal entry stored, at
    ``diagonal``), the LUs of each ``s I - Q'`` met (``lus``, direct chains) and the
    moments worked out on it (``moments``, :func:`_moments_of`)."""

    def __init__(self, cap: int, rates: tuple, arrivals, allowed: int, iterations: int):
        from scipy.sparse import coo_matrix, identity

        chain = _breadth_first((cap,), list(rates), arrivals, allowed)
        if chain is None:
            raise _PastLimit
        rows, cols, vals = chain.rows, chain.cols, chain.vals
        self.chain = chain
        n = self.n = len(chain.busy)
        self.direct = n <= DIRECT_STATES
        self.pi = _steady_state(n, rows, cols, vals, iterations, unsettled_raises=True)
        gen = coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
        gen = (gen - coo_matrix((np.asarray(gen.sum(axis=1)).ravel(), (range(n), range(n))),
                                shape=(n, n))).T.tocsc()   # Q', for row vectors
        # -Q' with every diagonal entry stored (1 added, found, and taken off in place),
        # so that each s I - Q' is a copy with s added there
        minus = (identity(n, format="csc") - gen).tocsc()
        minus.sort_indices()
        # each column's one stored diagonal entry, in column order (1 + its rate out: never
        # 0, so never dropped)
        column = np.repeat(np.arange(n), np.diff(minus.indptr))
        self.diagonal = np.flatnonzero(minus.indices == column).astype(np.int64)
        minus.data[self.diagonal] -= 1.0
        self.minus = minus
        self.lus: dict = {}
        self.moments: dict = {}   # _moments_of's, by what else they hang on


#: The chain :func:`_held_core` made last: ``[(its name, it)]`` (None: past its limit),
#: or empty.
_LAST_CORE: list = []


def _held_core(cap: int, rates: tuple, arrivals, allowed: int, iterations: int
               ) -> _HeldCore:
    """:class:`_HeldCore` of the chain of holdings of ``rates`` and ``arrivals`` on a pool
    of ``cap`` spares, the last one kept by what the chain reads of them
    (:func:`~netmodel.study.availability_chain._one_pool_reads`), its rates, limit and
    iterations and the functions that build and solve it: the spare search's next pool
    where no grant can take its one spare more (a pool of 5 where the failures take 4,
    after the pool of 4), whose classes (:func:`_held_chain`'s key) differ only where no
    state reads them, has the same chain, steady state and LUs to the last bit (``study
    lite-gpu``'s blast radius: 108 chains of holdings, 45 distinct, each the one before
    where met again). :class:`_PastLimit` past ``allowed`` states."""
    key = (_one_pool_reads(cap, arrivals), rates, allowed, iterations, _breadth_first,
           _steady_state)
    last = next(iter(_LAST_CORE), None)   # (key, core); read whole (another thread's)
    if last is not None and last[0] == key:
        core = last[1]
    else:
        _LAST_CORE.clear()   # the last one (and its LUs) let go before the next is made
        try:
            core = _HeldCore(cap, rates, arrivals, allowed, iterations)
        except _PastLimit:
            core = None
        _LAST_CORE[:] = [(key, core)]
    if core is None:
        raise _PastLimit
    return core


@functools.lru_cache(maxsize=1)
def _held_chain(classes: tuple, cap: int, n_types: int, allowed: int, iterations: int
                ) -> _HeldChain | None:
    """:class:`_HeldChain` of ``classes`` (``(rate, takes, marks, hold)`` each) on a pool
    of ``cap`` spares, the last one kept: the series orders of one pool read it once
    (``study lite-gpu``: 331 reads, 155 chains; keeping 2 or 8 finds no more and holds
    their LUs, 35 and 66 MB more at the peak); None past ``allowed`` states. A chain
    whose steady state does not settle raises :class:`_Unsettled` (not kept)."""
    try:
        return _HeldChain(classes, cap, n_types, allowed, iterations)
    except _PastLimit:
        return None


@functools.lru_cache(maxsize=256)
def _moments_of(classes: tuple, cap: int, n_types: int, durations: tuple, top: int,
                allowed: int, iterations: int) -> dict | None:
    """:func:`_held_moments`'s moments of its chain (:func:`_held_chain`), kept for the
    same pool, types and order asked again (the spare search asks one pool's chain at
    many thresholds and sizes; the caller gets a copy)."""
    chain = _held_chain(classes, cap, n_types, allowed, iterations)
    if chain is None:
        return None
    # the moments hang on the chain (kept by what it reads: _held_core), its timer
    # arrivals, the refusals its states carry, the durations and the order alone: the
    # next pool's, where these are the same, are these (the caller gets a copy)
    key = (chain.arrive.shape, chain.arrive.tobytes(), chain.carried.shape,
           chain.carried.tobytes(), durations, top)
    out = chain.core.moments.get(key)
    if out is None:
        out = chain.core.moments[key] = _series(chain, n_types, durations, top)
    return out


def _series(chain: _HeldChain, n_types: int, durations: tuple, top: int) -> dict:
    """:func:`_moments_of` worked out on ``chain``."""
    pi, arrive = chain.pi, chain.arrive
    fb = chain.fb(top)
    zero = (0,) * n_types
    out: dict = {}

    def add(a, row):   # L_a f_b into the moment of a + b
        for b, f in fb.items():
            c = tuple(i + j for i, j in zip(a, b, strict=True))
            if sum(c) <= top:
                out[c] = out.get(c, 0.0) + _dot(row, f)

    add(zero, pi)
    left = {zero: pi}
    lus: dict = {}
    for m in range(1, top + 1):
        nxt: dict = {}
        for c, row in left.items():
            for t in range(n_types):
                if not arrive[t].any():
                    continue
                v = row * arrive[t]
                if v.any():
                    cc = (*c[:t], c[t] + 1, *c[t + 1:])
                    nxt[cc] = nxt.get(cc, 0.0) + v
        left = {}
        for c, v in nxt.items():
            s = sum(k / d for k, d in zip(c, durations, strict=True))
            if m == top:   # only f_0 = 1 follows: L_a 1 = v 1 / s, no solve
                out[c] = out.get(c, 0.0) + float(v.sum()) / s
                continue
            left[c] = chain.solver(s, lus)(v)
            add(c, left[c])
    return out


def _pool_slots(kinds, pools: SparePools, occupancy: dict) -> tuple[list, set, dict]:
    """``(over, joint, sizes)``: the pools each kind's failures spread over, the group
    slots solved together with others (``occupancy``'s ``comp``), and how many pools of
    each ``(slot, reachable spares)`` there are."""
    n_groups = pools.groups if any(x.group >= 0 for x in kinds) else 1
    over = [pools.pools if x.group < 0 else pools.pools // n_groups for x in kinds]
    sizes: dict = {}
    for p, c in enumerate(pools.reachable):
        sizes[(p % n_groups, c)] = sizes.get((p % n_groups, c), 0) + 1
    return over, set(occupancy.get("comp", {})), sizes


def _threshold_low(kinds, b, limit: float, tail: float, pools: SparePools | None = None,
                   occupancy: dict | None = None) -> bool:
    """Whether the time below the threshold (``tail``,
    :func:`~netmodel.study.availability_loss._compound_poisson_tail`) may read low by as
    much as it reads. The tail thins each failure's refusal apart from
    the others', but a pool a failure found busy stays busy for the next ones: refusals
    come together. That matters where it takes several refused failures at once to fall
    below (:func:`_outcomes`: the refusals that do not cross ``limit`` alone, typed by
    their loss and repair). Any moment below it with the refusals in progress ``Y_t`` of
    each type meets some least count vector ``c`` whose losses pass ``limit``, so
    ``P(cross) <= sum over those c of E[prod_t C(Y_t, c_t)]`` (Markov's inequality; past
    :data:`MOST_MOMENTS` refusals at once, ``P(sum Y >= MOST_MOMENTS + 1)`` bounds the
    rest), the moments as each pool's chain brings its refusals together
    (:func:`_held_moments`, the chain of its holdings; past its limit
    :func:`_pool_moments`, the busy count's, which can read low; pools apart independent,
    their generating functions multiplied; refusals of pools solved together,
    :func:`~netmodel.study.availability_analytic._coupled_blocking`, or with no ``occupancy``:
    Poisson). That bounds the time the thinning can miss; the flag is set where the bound
    reaches ``tail`` itself, so that unflagged the time below is at
    most about twice the reading (in the chain's model of the pool).

    On 256 H100 at TP 1 (GPU failures 1e-3 an hour, one-day repairs, 17 global spares) a
    refused GPU failure is one instance of 256 and 3 cross 99% (2.56): the former rule
    (two at once, Poisson ``R^2 / 2``, at least a tenth of the tail) was unmet at 4.8e-5
    against 6.0e-4, but a host holding 8 spares leaves 9 for the GPUs for a day, and their
    refusals come in bursts; the Monte Carlo reads 1.9e-3
    (tests/netmodel/test_threshold_low_bursts_h484.py).

    >>> k = Kind("host", "x", 0.1, down=2, slow=0.0, units=32, restored=0.0,
    ...          d_repair=1.0, d_swap=0.1, hold=1.0, d_slow=0.0, per=16)
    >>> # a host refused 1 of its 2 instances loses 1, both 2; below 1.5, two refusals of
    >>> # one cross; no pool's chain given: Poisson, R = 0.1 x 0.3 x 1, R^2 / 2 = 4.5e-4
    >>> _threshold_low([k], [0.3], 1.5, 4.5e-4), _threshold_low([k], [0.3], 1.5, 4.6e-4)
    (True, False)
    >>> _threshold_low([k], [0.3], 0.5, 1e-9), _threshold_low([k], [1.0], 1.5, 1e-9)
    (False, False)
    """
    bound = _missed(kinds, b, limit, pools, occupancy)
    return bool(bound > 0 and bound >= tail)


def _missed(kinds, b, limit: float, pools: SparePools | None = None,
            occupancy: dict | None = None) -> float:
    """:func:`_threshold_low`'s bound on the time below that two or more refusals at
    once, none crossing ``limit`` alone, keep the cluster below (0 where no refusal
    counts)."""
    types: dict = {}   # (loss, d) -> [(kind, r)]
    for k, (x, bk) in enumerate(zip(kinds, b, strict=True)):
        for r, loss in _outcomes(x, bk, limit):
            types.setdefault((loss, max(x.d_repair, x.d_slow)), []).append((k, r))
    if not types:
        return 0.0
    keys = sorted(types)
    top = MOST_MOMENTS
    if math.comb(len(keys) + top, top) ** 2 > MISSED_PAIRS:
        return math.inf   # estimated before the work: not worked out, flagged
    refused = {}   # (kind) -> P(r refused), r = 0 .. top: the closed form's own
    if occupancy is not None:
        refused = occupancy.get("refused", {})

    def share(k, r):   # P(a failure of k is refused r of its instances), thinned
        x = kinds[k]
        if x.pieces <= 1:
            return float(b[k])
        dist = refused.get(k)
        counts = _refused_counts(x)
        return float(sum(p for p, c in zip(dist, counts, strict=False) if c == r)) \
            if dist is not None else float(b[k])

    gf = {(0,) * len(keys): 1.0}

    def times(f, g):   # the product of two truncated generating functions
        # g's terms of each total at most t (t = 0 .. top), in g's order: the pairs past
        # top are never walked; the kept ones are summed in the same order as walking all
        within = [[(c2, v2) for c2, v2 in g.items() if sum(c2) <= t] for t in range(top + 1)]
        out: dict = {}
        for c1, v1 in f.items():
            room = top - sum(c1)
            if room < 0:
                continue
            for c2, v2 in within[room]:
                c = tuple(i + j for i, j in zip(c1, c2, strict=True))
                out[c] = out.get(c, 0.0) + v1 * v2
        return out

    solved: set = set()
    if pools is not None and occupancy is not None:
        over, joint, sizes = _pool_slots(kinds, pools, occupancy)
        skipped = set()   # slots with a pool whose chain is not read here
        for (slot, cap), n in sizes.items():
            q = occupancy.get((slot, cap))
            if slot in joint or q is None or len(q) != cap + 1:
                skipped.add(slot)
                continue
            here = {k for k, x in enumerate(kinds) if x.group in (-1, slot)}
            lam = [kinds[k].rate * kinds[k].cells / over[k] if k in here else 0.0
                   for k in range(len(kinds))]
            try:
                mo = _held_moments(kinds, lam, cap, [types[key] for key in keys],
                                   [key[1] for key in keys], top)
            except _Unsettled:   # as past its limit
                mo = None
            if mo is None:   # past the holdings chain's limit: the busy count's chain
                rates = []
                for key in keys:
                    arrive = np.zeros((cap + 1, cap + 1))
                    for k, r in types[key]:
                        if k in here:
                            x = kinds[k]
                            for j in range(cap + 1):
                                if x.refused(x.granted(cap - j)) == r:
                                    arrive[j, j + x.take(cap - j)] += lam[k]
                    rates.append((arrive, key[1]))
                mo = _pool_moments(kinds, lam, np.asarray(q, dtype=float), rates, top)
            power, base = {(0,) * len(keys): 1.0}, mo   # mo ** n, by squaring
            while n:
                if n & 1:
                    power = times(power, base)
                base, n = times(base, base), n >> 1
            gf = times(gf, power)
        # a kind whose every pool was read (else all its refusals taken as Poisson; a
        # kind read in some pools and not others is then counted twice: larger, safe)
        solved = {k for k, x in enumerate(kinds)
                  if not (skipped & ({s for s, _ in sizes} if x.group < 0 else {x.group}))}
    # refusals no pool's chain accounts for: Poisson, E[C(Y_t, c)] = R_t^c / c!
    for t, key in enumerate(keys):
        rt = key[1] * sum(kinds[k].rate * kinds[k].cells * share(k, r)
                          for k, r in types[key] if k not in solved)
        if rt > 0:
            one = (0,) * len(keys)
            gf = times(gf, {(*one[:t], m, *one[t + 1:]): rt ** m / math.factorial(m)
                            for m in range(top + 1)})
    losses = [loss for loss, _ in keys]
    bound = 0.0
    longest = 0
    for c, v in gf.items():
        total = sum(n * loss for n, loss in zip(c, losses, strict=True))
        least = total > limit and all(total - loss <= limit
                                      for n, loss in zip(c, losses, strict=True) if n)
        if least:
            bound += v
        if total <= limit:
            longest = max(longest, sum(c))
    if longest >= top:   # least vectors past the moments taken: Y >= top + 1 covers them
        bound += sum(v for c, v in gf.items() if sum(c) == top) / (top + 1)
    return bound


def _crossings(x: Kind, bk: float, limit: float) -> list[tuple[int, float]]:
    """The refusals of kind ``x`` that cross ``limit`` alone: ``(r, d)`` for each number
    ``r`` of its instances a failure can be refused (as :func:`_outcomes` counts them)
    whose loss passes ``limit`` at once, ``d`` how long it stays past it (its down
    instances to their repair, its slowed ones to theirs); none where the kind asks no
    spares or its blocking is within :data:`DECIDED` of 0 or 1."""
    if x.units <= 0 or not DECIDED < bk < 1.0 - DECIDED:
        return []
    counts = sorted(set(_refused_counts(x).tolist()) - {0}) if x.pieces > 1 else [1]
    out = []
    for r in counts:
        share = x.cells * r / max(x.pieces, 1)
        segs = [(x.d_repair, x.down_worth * share), (x.d_slow, x.slow * share)]
        past = [end for end, _ in segs if end > 0
                and sum(v for e, v in segs if e >= end) > limit]
        if past:
            out.append((r, max(past)))
    return out


def _lone(kinds) -> list[bool]:
    """Per kind, whether its failures are of that kind alone: it follows no other kind,
    none follows it (:attr:`Kind.follows`) and it is no ``joint`` share."""
    return [not x.follows and not (k + 1 < len(kinds) and kinds[k + 1].follows)
            and not x.joint for k, x in enumerate(kinds)]


#: Most states of :func:`_crossing_overlap`'s chain of a pool (:func:`_held_moments`,
#: solved by :func:`_solve`; 64 H100 at TP 1 with host and GPU failures: 10 global spares
#: 446 states, 15 2,284, 18 5,417, 20 ~8,600, the two series orders 0.03, 0.08, 0.2,
#: 0.3 s); past it the pool's crossing refusals keep the thinning, which reads the time
#: below high (the overlap's factor is at least about 1: refusals that come together are
#: in progress together), and the result says so
#: (:attr:`~netmodel.study.availability_analytic.Analytic.overlap_thinned`).
MAX_OVERLAP_STATES = 20_000


def _crossing_overlap(kinds, b, limit: float, pools: SparePools,
                      occupancy: dict, thinned: list | None = None,
                      iterations: int = GMRES_ITERATIONS) -> float:
    """The factor on the thinning's chance that no refusal crossing ``limit`` alone is
    in progress (:func:`_crossings`), as each pool's chain of holdings brings them
    together: ``P(Y = 0) / exp(-E[Y])`` over the pool's crossing refusals ``Y``, pools
    apart independent (a product over them). The thinning takes them as Poisson, so the
    time below counts each in full; but a refusal comes while the pool is held, and where
    the failure holding it is itself below (a host granted one of its two instances on
    all the spares, its other down), the refusal's outage overlaps that one's. In the
    chain (:func:`_held_moments`; a failure granted in part carries its refusal while it
    holds its grant, one refused in whole is a timer of its repair) ``P(Y = 0) = sum over
    c of (-1)^|c| E[prod_t C(Y_t, c_t)]`` (inclusion-exclusion over the binomial moments,
    to 2, 4 or :data:`MOST_MOMENTS` at once, the first that settles). The time below is
    then ``1 - (1 - tail) x factor``.

    Some crossing refusals keep the thinning (factor 1), each case said
    (:attr:`~netmodel.study.availability_analytic.Analytic.overlap_thinned`): a pool whose
    chain passes :data:`MAX_OVERLAP_STATES` (``"chain past MAX_OVERLAP_STATES"``), whose
    solve does not settle in ``iterations`` (:func:`_solve`, ``"solve unsettled"``) or
    whose series does not (the last order's terms past a hundredth of ``1 - P(Y = 0)``,
    ``"series unsettled"``) appends why to ``thinned``; the crossing refusals of pools
    asked together with others
    (:func:`~netmodel.study.availability_analytic._coupled_blocking`: one chain over
    several pools) and those of a failure of several kinds (:attr:`Kind.follows`: its
    kinds arrive together, its refusal crossing where their losses add), which the chain
    of one pool's holdings does not hold, are skipped here and said by
    :func:`~netmodel.study.availability_analytic._unread_crossings`. The thinning reads
    high there: on hand-made clusters of both, against the Monte Carlo, by 4-30%
    (tests/netmodel/test_overlap_unread_h517.py).

    The holding failure's outage and the refusal's overlap by half where both last the
    repair: a GPU failure refused at a uniform moment of a host's one-day hold
    outlasts it by half a day on average, as an exponential refusal outlasts an
    exponential hold of the same mean by half its own."""
    types: dict = {}   # d -> [(kind, r)]
    lone = _lone(kinds)
    over, joint, sizes = _pool_slots(kinds, pools, occupancy)
    for k, (x, bk) in enumerate(zip(kinds, b, strict=True)):
        if lone[k]:
            for r, d in _crossings(x, bk, limit):
                types.setdefault(d, []).append((k, r))
    if not types:
        return 1.0
    keys = sorted(types)
    log_factor = 0.0
    for (slot, cap), n in sizes.items():
        if slot in joint or cap <= 0:
            continue
        lam = [x.rate * x.cells / over[k] if x.group in (-1, slot) else 0.0
               for k, x in enumerate(kinds)]
        outs = [[(k, r) for k, r in types[d] if lam[k] > 0] for d in keys]
        if not any(outs):
            continue
        why = "series unsettled"
        for top in (2, 4, MOST_MOMENTS):   # most crossing refusals are rare: few at once
            try:
                mo = _held_moments(kinds, lam, int(cap), outs, keys, top,
                                   MAX_OVERLAP_STATES, iterations)
            except _Unsettled:
                why = "solve unsettled"
                break
            if mo is None:
                why = "chain past MAX_OVERLAP_STATES"
                break
            none = sum((-1) ** sum(c) * v for c, v in mo.items())
            last = sum(v for c, v in mo.items() if sum(c) == top)
            if 0.0 < none <= 1.0 and last <= 0.01 * (1.0 - none):
                mean = sum(v for c, v in mo.items() if sum(c) == 1)
                log_factor += n * (math.log(none) + mean)
                why = ""
                break
        if why and thinned is not None:
            thinned.append(why)
    return math.exp(log_factor)
