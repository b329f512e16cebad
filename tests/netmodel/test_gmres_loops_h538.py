"""availability_solve._gmres (restarted GMRES with its inner products in numpy's own
loops, not threaded BLAS) against direct solves and scipy.sparse.linalg.gmres's answers,
and the chain of holdings' stored diagonal found at once against a search column by
column."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csc_matrix, diags
from scipy.sparse.linalg import gmres, spilu, spsolve

import netmodel.study.availability_solve as solve
import netmodel.study.availability_threshold as at


def _m_matrix(n: int, seed: int, slow: float = 0.1):
    # s I - Q' of a random chain, s a fraction of the mean rate out (test_overlap_unread_h517)
    rng = np.random.default_rng(seed)
    q = rng.random((n, n)) * (rng.random((n, n)) < min(1.0, 8.0 / n))
    np.fill_diagonal(q, 0.0)
    q -= np.diag(q.sum(axis=1))
    return csc_matrix(slow * np.mean(-np.diag(q)) * np.eye(n) - q.T), rng.random(n)


def _birth_death(n: int):
    # s I - Q' of a birth-death chain of n states (birth 1, death 2, s = 0.05): past the
    # 10,000 entries where OpenBLAS threads a dot
    up, down = np.ones(n - 1), 2.0 * np.ones(n - 1)
    out = np.r_[up, 0.0] + np.r_[0.0, down]
    q_t = diags([up, -out, down], [-1, 0, 1], format="csc")   # Q' (columns: from)
    return csc_matrix(0.05 * diags(np.ones(n)) - q_t), np.linspace(1.0, 2.0, n)


def _scipy(a, b, restart, cycles, m=None):
    try:
        x, info = gmres(a, b, rtol=solve.GMRES_RTOL, atol=0.0, restart=restart,
                        maxiter=cycles, M=m)
    except TypeError:   # scipy < 1.12
        x, info = gmres(a, b, tol=solve.GMRES_RTOL, atol=0.0, restart=restart,
                        maxiter=cycles, M=m)
    return x, info == 0


def _settles(a, b, x, settled):
    assert settled
    assert np.linalg.norm(b - a @ x) <= solve.GMRES_RTOL * np.linalg.norm(b)


@pytest.mark.parametrize("n,seed,restart", [(30, 1, 100), (120, 2, 10), (400, 5, 100),
                                            (400, 6, 7), (250, 3, 4)])
def test_the_loops_give_the_solution(n, seed, restart):
    a, b = _m_matrix(n, seed)
    exact = np.linalg.solve(a.toarray(), b)
    x, settled = solve._gmres(a, b, solve.GMRES_RTOL, restart, 200)
    ref, ref_settled = _scipy(a, b, restart, 200)
    _settles(a, b, x, settled)
    assert ref_settled
    np.testing.assert_allclose(x, exact, rtol=1e-9, atol=0.0)
    np.testing.assert_allclose(x, ref, rtol=1e-9, atol=0.0)


def test_unsettled_where_scipy_is():
    # a slow chain (s a thousandth of the rate out): 3 cycles of 5 iterations settle
    # neither; 60 of 100 do both
    a, b = _m_matrix(400, 5, slow=1e-3)
    x, settled = solve._gmres(a, b, solve.GMRES_RTOL, 5, 3)
    assert not settled
    assert np.linalg.norm(b - a @ x) > solve.GMRES_RTOL * np.linalg.norm(b)
    assert not _scipy(a, b, 5, 3)[1]
    x, settled = solve._gmres(a, b, solve.GMRES_RTOL, 100, 60)
    _settles(a, b, x, settled)
    np.testing.assert_allclose(x, np.linalg.solve(a.toarray(), b), rtol=1e-8, atol=0.0)


def test_preconditioned():
    a, b = _m_matrix(400, 7, slow=1e-2)
    ilu = spilu(a, drop_tol=1e-4, fill_factor=solve.ILU_FILL)
    x, settled = solve._gmres(a, b, solve.GMRES_RTOL, 20, 20, ilu.solve)
    _settles(a, b, x, settled)
    np.testing.assert_allclose(x, np.linalg.solve(a.toarray(), b), rtol=1e-9, atol=0.0)


def test_an_exact_preconditioner_takes_one_product():
    # M = a: M^-1 a = I, so the first Arnoldi step's new vector is 0 (a lucky breakdown)
    # and the one-dimensional solve is exact
    from scipy.sparse.linalg import splu

    a, b = _m_matrix(200, 4)
    lu = splu(a)
    counted = _Counted(a)
    x, settled = solve._gmres(counted, b, solve.GMRES_RTOL, 50, 5, lu.solve)
    _settles(a, b, x, settled)
    assert counted.products == 2   # the Arnoldi step and the cycle's true residual


def test_past_ten_thousand_states():
    a, b = _birth_death(12_000)
    x, settled = solve._gmres(a, b, solve.GMRES_RTOL, 100, 20)
    _settles(a, b, x, settled)
    # against the exact answer (a direct sparse solve, 0.02 s), not scipy's gmres: its dots
    # past 10,000 entries are the threaded BLAS ones this module avoids, 5-28 s of the
    # suite on 2 shared cores; measured here within 1.1e-10 of the exact solve
    np.testing.assert_allclose(x, spsolve(a, b), rtol=1e-9, atol=1e-300)
    # _solve, as the chains of holdings call it, settles it too
    np.testing.assert_allclose(solve._solve(a, b), x, rtol=1e-9)


def test_zero_right_hand_side():
    a, _ = _m_matrix(30, 1)
    x, settled = solve._gmres(a, np.zeros(30), solve.GMRES_RTOL, 10, 2)
    assert settled and not x.any()


@pytest.mark.parametrize("classes,cap,n_types", [
    (((1.0, (0, 1, 1, 1), (-1, -1, 0, 0), 1.0),), 3, 1),
    (((1.0, (0, 1, 2, 2, 2, 2), (0, 0, -1, 1, 1, 1), 1.0),
      (0.2, (0, 0, 1, 1, 3, 4), (1, 1, 0, -1, -1, -1), 4.0)), 5, 2),
    (((3.0, (0, 1, 1, 1, 1, 1, 1, 1), (-1,) * 8, 0.5),
      (1.0, (0, 0, 2, 2, 2, 2, 2, 2), (0,) * 8, 1.0),
      (0.2, (0, 1, 2, 3, 4, 5, 6, 7), (-1, 1, 1, 1, 1, 1, 1, 1), 4.0)), 7, 2),
])
def test_the_stored_diagonal_is_the_searchs(classes, cap, n_types):
    chain = at._HeldChain(classes, cap, n_types, 10 ** 6, solve.GMRES_ITERATIONS)
    m = chain.minus
    search = [m.indptr[j] + np.searchsorted(m.indices[m.indptr[j]:m.indptr[j + 1]], j)
              for j in range(chain.n)]
    assert chain.n > 3
    np.testing.assert_array_equal(chain.diagonal, search)
    np.testing.assert_array_equal(m.indices[chain.diagonal], np.arange(chain.n))
    # -Q' columns sum to 0: the diagonal holds each state's rate out
    np.testing.assert_allclose(np.asarray(m.sum(axis=0)).ravel(), 0.0, atol=1e-12)


class _Counted:
    """``a`` whose products are counted (``a @ v`` and scipy's ``matvec``)."""

    def __init__(self, a):
        self.a, self.shape, self.dtype, self.products = a, a.shape, a.dtype, 0

    def __matmul__(self, v):
        self.products += 1
        return self.a @ v

    matvec = __matmul__
