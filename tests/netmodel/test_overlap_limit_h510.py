"""The crossing overlap's chain of holdings past its former limit of 300 states.

64 H100 at TP 1 (host failures 0.3 and GPU failures 0.1 in progress a day, 99%): the
10-spare pool's chain is 419 states; at a limit of 300 it fell back to the thinning and
read 7.063e-2 against 9 spares' 6.797e-2, where the Monte Carlo reads 6.603e-2 -> 6.375e-2
(tests/netmodel/test_review_held_moments_h507.py). The chain is now solved by GMRES
(:func:`availability_solve._solve`) and the limit raised; a pool past it says so
(``Analytic.overlap_thinned``) rather than switching silently.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from netmodel.study import availability_solve as solve
from netmodel.study import availability_threshold as at
from netmodel.study.availability_analytic import analytic
from netmodel.study.reliability_spares import SparePools

sys.path.insert(0, str(Path(__file__).parent))
from test_review_held_moments_h507 import _dgx  # noqa: E402


def _run(spares, threshold=0.99):
    return analytic(_dgx(0.3, 0.1), SparePools("global", spares, 1, (spares,)), 64,
                    threshold)


def test_more_spares_never_read_worse_to_sixteen():
    # each spare more can only shorten the time below (the Monte Carlo falls 9 -> 10)
    below = [_run(s).below_threshold for s in range(6, 17)]
    assert all(b <= a * (1 + 1e-9) for a, b in zip(below, below[1:], strict=False))
    assert not any(_run(s).overlap_thinned for s in (9, 10, 16))


def test_past_the_limit_the_result_says_the_thinning(monkeypatch):
    monkeypatch.setattr(at, "MAX_OVERLAP_STATES", 300)   # 10 spares: 419 states
    thinned = _run(10)
    assert thinned.overlap_thinned
    assert not _run(9).overlap_thinned
    monkeypatch.undo()
    chain = _run(10)
    # the thinning counts each crossing refusal's outage whole: it reads higher
    assert thinned.below_threshold > chain.below_threshold
    assert chain.to_dict()["overlap_thinned"] is False


def test_solve_equals_a_dense_solve_on_a_random_m_matrix():
    # s I - Q' of a random chain of 400 states, s a tenth of the mean rate out
    from scipy.sparse import csc_matrix
    rng = np.random.default_rng(5)
    n = 400
    q = rng.random((n, n)) * (rng.random((n, n)) < 0.02)
    np.fill_diagonal(q, 0.0)
    q -= np.diag(q.sum(axis=1))
    a = 0.1 * np.mean(-np.diag(q)) * np.eye(n) - q.T
    rhs = rng.random(n)
    assert solve._solve(csc_matrix(a), rhs) == pytest.approx(np.linalg.solve(a, rhs),
                                                             rel=1e-9, abs=1e-12)
    assert not solve._solve(csc_matrix(a), np.zeros(n)).any()


def test_a_tail_past_double_precision_reads_zero_and_one_within_it_reads_by_hand():
    # 16,384 Lites of lite-flat with 2% global spares read a time below 99% of exactly 0:
    # 26 streams of refused and swapped losses, 0.0064 in progress on average, none over
    # 2 instances, so crossing 10.24 takes 6 at once: P(N >= 6) of a Poisson 0.0064,
    # 9.5e-17, below the 1.1e-16 that 1 - P(not past) can tell from 0. Here 6 streams of
    # 0.00106 in progress, each 2 instances: the thinning's tail is that Poisson's
    # P(N >= 6) (reads 0), and past a limit of 1.5 its P(N >= 1) by hand
    from netmodel.study.availability_loss import _panjer
    streams = [(0.0064 / 6, 2.0)] * 6
    step = 10.24 / 256
    p = _panjer(streams, step, 256)
    mean = 0.0064
    six = sum(math.exp(-mean) * mean ** k / math.factorial(k) for k in range(6, 40))
    assert 9e-17 < six < 1e-16 and 1.0 - float(np.sum(p)) <= 2.3e-16
    p = _panjer(streams, 1.5 / 256, 256)
    assert 1.0 - float(np.sum(p)) == pytest.approx(-math.expm1(-mean), rel=1e-9)
