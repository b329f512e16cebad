"""The chain of pools asked together is solved by BiCGSTAB, exact to 100,000 states.

Pools one failure asks together (a spanning instance's shares) are one Markov chain of the
failures in progress and the spares each holds; its steady state was solved by GMRES and
stopped at 10,000 states (then the chain with one repair time). BiCGSTAB solves it in a
fraction of the time (26,663 states: 0.13 s built and solved, 20 MB, where GMRES took
0.64 s, 41 MB, and a sparse LU's fill-in ran to 89 million entries), so its limit went
to one pool's, 30,000, then its own, 100,000 (93,993 states: 0.50 s, 69 MB).
"""

from dataclasses import replace

import numpy as np
import pytest

from netmodel.study import availability_busy as ab
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.reliability_spares import SparePools

H = 30 * 86400.0


def _kind(x, units, group=0, hold=H, **kw):
    """A kind offering ``x`` Erlangs (failures in progress) of ``units`` spares."""
    return Kind("host", "x", rate=x / hold, down=1, slow=0.0, units=units, restored=0.0,
                d_repair=hold, d_swap=600.0, hold=hold, d_slow=0.0, group=group, **kw)


# an instance spanning groups 0 and 1 (9 Erlangs of failures asking 1 spare of each pool),
# each group's own failures of other repair times (0.3 Erlangs each): 2,892 states with 7
# spares a pool, 7,942 with 9, 26,663 with 12, 37,688 with 13, 93,993 with 16, 123,234
# with 17
KINDS = [_kind(9.0, 1), replace(_kind(9.0, 1, group=1, follows=True, joint=True), down=0),
         _kind(0.3, 1, hold=2 * H), _kind(0.3, 1, group=1, hold=3 * H)]


def _pools(n):
    return SparePools("group", 2 * n, 2, (n, n), 2)


def test_the_coupled_solve_is_superlus(monkeypatch):
    # 7 spares a pool, 2,892 states (past the direct solve's 1,000): BiCGSTAB's steady
    # state against SuperLU's
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    seen = []
    solve = ab._steady_state

    def keep(n, rows, cols, vals, **kw):
        seen.append((n, rows, cols, vals, kw))
        return solve(n, rows, cols, vals, **kw)

    monkeypatch.setattr(ab, "_steady_state", keep)
    got = analytic(KINDS, _pools(7), 100)
    assert got.fallback == ()
    (n, rows, cols, vals, kw), = seen
    assert n == 2_892 and kw == {"coupled": True}
    pi = solve(n, rows, cols, vals, coupled=True)
    # by hand: Q' pi = 0 with pi_0 = 1, normalized
    out = np.bincount(rows, weights=vals, minlength=n)
    qt = (coo_matrix((vals, (cols, rows)), shape=(n, n))
          - coo_matrix((out, (range(n), range(n))), shape=(n, n))).tocsc()
    lu = np.r_[1.0, spsolve(qt[1:, 1:].tocsc(), -qt[1:, 0].toarray().ravel())]
    lu /= lu.sum()
    assert np.abs(pi - lu).max() < 1e-10 * lu.max()
    assert np.abs(qt @ pi).max() < 1e-12 * vals.max()   # balanced: Q' pi = 0


#: The Monte Carlo against which the whole chain is read, past a former limit (simulate(KINDS,
#: _pools(spares), 100), 5 seeds x 4,000 trials of a year): spares a pool, the limit it
#: passed, the Monte Carlo's mean (the 5 seeds' 95% band below), waits for repair a year,
#: the closed form's mean and waits now, one seed's band, how far under the one repair
#: time's mean reads at least, and how far over the waits may read.
#: - 12 spares, 26,663 states: past the former 10,000, where the chain with one repair time
#:   stood in. Mean 0.989990 (each seed's 0.989947-0.990050, +- 1.5e-4 each; the band
#:   +- 5.6e-5), waits 11.756 +- 0.051, below 99% 0.2516 +- 0.0010. The whole chain within
#:   one seed's band (the rest is the closed form's first-order mean: 9 spares, exact
#:   before, read 3.8e-4 under a seed's 0.975400); one repair time 3.6e-4 under; waits 0.9%
#:   over (9 spares: 1.3%), one repair time 3.8%.
#: - 13 spares, 37,688 states: past one pool's 30,000, which capped this chain's until it
#:   had its own. Mean 0.993187 (each seed's 0.993152-0.993227, +- 1.3e-4 each; the band
#:   +- 4.1e-5), waits 7.995 +- 0.047, below 99% 0.1739 +- 0.0008. The whole chain 3.8e-5
#:   under; one repair time 2.2e-4 under; waits 0.7% over, one repair time 3.4%; the time
#:   below 99% the threshold bound's (0.151 against 0.174).
PAST_A_LIMIT = [
    # spares, former limit, MC mean, MC waits, mean now, waits now, seed band, one repair
    # time at least this far under, waits over
    (12, 10_000, 0.989990, 11.756, 0.989909, 11.864, 1.5e-4, 3e-4, 0.015),
    (13, 30_000, 0.993187, 7.995, 0.993149, 8.049, 1.3e-4, 2e-4, 0.01),
]


@pytest.mark.parametrize("spares, former, mc_mean, mc_waits, mean, waits, band, under, over",
                         PAST_A_LIMIT)
def test_past_a_former_limit_exact_and_nearer_the_monte_carlo(
        monkeypatch, spares, former, mc_mean, mc_waits, mean, waits, band, under, over):
    now = analytic(KINDS, _pools(spares), 100)
    assert now.fallback == ()
    assert now.mean == pytest.approx(mean, abs=1e-6)
    assert now.waits_for_repair_per_year == pytest.approx(waits, abs=1e-3)
    monkeypatch.setattr(ab, "MAX_COUPLED_STATES", former)
    was = analytic(KINDS, _pools(spares), 100)
    assert was.fallback == (ab.FALLBACK_ONE_HOLD_TOGETHER,)
    # the whole chain within one seed's band; one repair time further under
    assert abs(now.mean - mc_mean) < band < under < mc_mean - was.mean
    assert now.waits_for_repair_per_year / mc_waits - 1 < over
    assert was.waits_for_repair_per_year / mc_waits - 1 > 0.03
    # the time below 99% is the threshold bound's, flagged, either way
    assert now.threshold_low and was.threshold_low
    assert now.below_threshold < was.below_threshold


def test_past_the_limit_still_the_chain_with_one_repair_time():
    # 17 spares a pool, 123,234 states: past 100,000; the fallback's words name that limit
    a = analytic(KINDS, _pools(17), 100)
    assert a.fallback == (ab.FALLBACK_ONE_HOLD_TOGETHER,)
    assert ab.MAX_COUPLED_STATES == 100_000 > ab.MAX_SEQUENTIAL_STATES == 30_000
    assert "(100,000 states of pools asked together)" in ab.fallback_words(a.fallback)
