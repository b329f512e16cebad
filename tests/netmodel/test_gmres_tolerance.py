"""The overlap's chains settle at GMRES's reachable residual (availability_solve.GMRES_RTOL).

512 H100 (h100-dgx) serving Llama-3-8B at TP 1, the GPU rate 1e-3 an hour, one-day GPU
repairs, 23 global spares (the case of test_compare_threshold_low_h453): the pool's chain of
holdings has 19,092 states. At a residual of 1e-13 GMRES stalled near 1e-12 (rounding), ran
its plain and preconditioned iterations (12.5 s) and gave up, so the pool's crossing
refusals fell back to the Poisson thinning and the reading was flagged overlap_thinned
(8.1216e-4). At 1e-11 it settles, agreeing with a direct solve (SuperLU, 22.7 s) to 5e-11
relative, and the overlap is read: 8.0864e-4, unflagged."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.availability_solve import GMRES_RTOL, _solve
from netmodel.study.reliability_catalog import catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import spare_pools


def test_the_tolerance_is_reachable_and_tight():
    # well above rounding (a residual GMRES reaches on these chains), well below what the
    # readings print (4 significant figures): a 2x2 M-matrix solved to it
    assert 1e-12 <= GMRES_RTOL <= 1e-9
    from scipy.sparse import csc_matrix
    x = _solve(csc_matrix([[3.0, -1.0], [-2.0, 4.0]]), np.array([1.0, 0.0]))
    np.testing.assert_allclose(x, [0.4, 0.2], rtol=1e-9)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_19092_state_chain_settles_and_its_overlap_is_read():
    cat = catalog().with_(gpu_rate_per_hour=1e-3,
                          repair_hours={"gpu-die": 24, "gpu-package": 24})
    c = build_cluster("h100-dgx", "Llama-3-8B", "decode", gpus=512, catalog_=cat)
    run = analytic(event_kinds(c, "global"), spare_pools(c, 23, "global"), 512, 0.99)
    assert run.overlap_thinned is False
    # the overlap read, not the thinning's 8.1216e-4 (the thinning reads high here)
    assert run.below_threshold == pytest.approx(8.0864e-4, rel=1e-4)
    assert run.threshold_low


@pytest.mark.parametrize("n", [50, 3_000])   # SuperLU below DIRECT_STATES, GMRES past it
def test_steady_state_of_a_birth_death_chain_is_its_closed_form(n):
    # an M/M/1/n-1 queue's chain: up at rate lam, down at mu; pi_k = (1 - r) r^k / (1 - r^n)
    from netmodel.study.availability_solve import DIRECT_STATES, _steady_state
    assert (n > DIRECT_STATES) == (n == 3_000)
    lam, mu = 0.9, 1.0
    k = np.arange(n - 1)
    rows = np.r_[k, k + 1]
    cols = np.r_[k + 1, k]
    vals = np.r_[np.full(n - 1, lam), np.full(n - 1, mu)]
    r = lam / mu
    exact = (1 - r) * r ** np.arange(n) / (1 - r ** n)
    pi = _steady_state(n, rows, cols, vals)
    # SuperLU exact to rounding; GMRES to its relative residual (GMRES_RTOL): states of
    # probability 1e-137 read to 1e-11 absolute, every tail sum to 1e-9
    np.testing.assert_allclose(pi, exact, rtol=1e-8, atol=1e-300 if n < 1_000 else 1e-10)
    tail = np.cumsum(pi[::-1])[::-1]
    np.testing.assert_allclose(tail, np.cumsum(exact[::-1])[::-1], rtol=1e-8, atol=1e-9)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
