"""The overlap's chains settle at GMRES's reachable residual (availability_threshold.GMRES_RTOL).

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
from netmodel.study.availability_threshold import GMRES_RTOL, _solve
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
