"""Per-hop latency slopes of a scenario that has a per-hop latency of its own are measured
from that latency (h376). hop_latency_slopes compiled the scenario at SLOPE_AT per hop in
place of its own, not at its own plus SLOPE_AT, so each slope came out times
(1 - own / SLOPE_AT): with ``[adjust] hop_latency = 2 us``, lite-flat's all-reduce of 8
got -28 s/s where it is 28, and the crossovers and sweeps re-scored it as if added latency
made it faster."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.study.adjusted_comm import AdjustedComm, hop_latency_slopes
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

CASES = (("all-reduce", 8), ("all-gather", 16), ("send-recv", 2))


@pytest.mark.parametrize("own", [5e-7, 2e-6])
def test_slopes_do_not_depend_on_the_scenarios_own_latency_h376(own):
    """Latency adds to every candidate's ``a`` linearly, so the slope measured on top of a
    scenario's own per-hop latency is the slope measured from none, and never negative."""
    base = get_scenario("lite-flat")
    s = base.with_param("adjust.hop_latency", own)
    slope = hop_latency_slopes(s, ScenarioCollectives(s), {})
    from_none = hop_latency_slopes(base, ScenarioCollectives(base), {})
    for op, size in CASES:
        assert (slope(op, size) >= 0).all()
        np.testing.assert_allclose(slope(op, size), from_none(op, size), rtol=1e-6)


@pytest.mark.parametrize("own", [5e-7, 2e-6])
def test_rescored_latency_adds_to_the_scenarios_own_h376(own):
    """Re-scoring a scenario with ``hop`` more per hop costs what compiling it at its own
    latency plus ``hop`` costs."""
    base = get_scenario("lite-flat")
    s = base.with_param("adjust.hop_latency", own)
    coll = ScenarioCollectives(s)
    hop = 3e-6
    comm = AdjustedComm(coll, 1.0, hop, hop_latency_slopes(s, coll, {}))
    compiled = ScenarioCollectives(base.with_param("adjust.hop_latency", own + hop))
    n = np.array([1e3, 1e5, 1e7])
    for op, size in CASES:
        np.testing.assert_allclose(comm.collective_time(op, n, size),
                                   compiled.collective_time(op, n, size), rtol=1e-9)
