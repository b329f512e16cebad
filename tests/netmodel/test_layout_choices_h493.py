"""circuits = "best": the layout AdjustedComm.layout_comm chooses for (size, scale,
hop latency) is kept by the scenario's costs (layout_choices) and reused by every later
re-scoring at the same links; the kept choice gives what choosing afresh gives, and the
key tells apart the sizes, scales and latencies whose choices differ (h493)."""

import numpy as np
import pytest

from compute.memo import Lru
from netmodel.study import scenario_collectives
from netmodel.study.adjusted_comm import AdjustedComm, hop_latency_slopes
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_fabric import BEST_SIZES

SCENARIO = "lite-ocs@Lite+BW"
# (size, scale, hop) -> the layout chosen: at 1e-4 of the bandwidth the all-reduce is
# bandwidth-bound and the rings (the least bytes per link) win; a microsecond a hop
# tips the 24's 4x6 torus (fewer hops a step) back; full bandwidth keeps both tori
POINTS = {(24, 1.0, 0.0): "torus", (32, 1.0, 0.0): "torus",
          (24, 1e-4, 0.0): "ring", (32, 1e-4, 0.0): "ring",
          (24, 1e-4, 1e-6): "torus", (32, 1e-4, 1e-6): "ring"}


def _comm(c, scale, hop):
    s = c.scenario
    return AdjustedComm(c, scale, hop, hop_latency_slopes(s, c, {}) if hop else None)


def _fresh(monkeypatch):
    """A scenario's costs with no process-wide cache kept from earlier tests."""
    monkeypatch.setattr(scenario_collectives, "_SHARED",
                        Lru(scenario_collectives._SHARED_MAX))
    return ScenarioCollectives(get_scenario(SCENARIO))


@pytest.mark.parametrize("order", [1, -1])
def test_kept_choice_equals_a_fresh_one(monkeypatch, order):
    c = _fresh(monkeypatch)
    points = list(POINTS)[::order]     # either order: a coarse key would keep the first
    for size, scale, hop in points:
        got = _comm(c, scale, hop).layout_comm(size)
        assert got.c.scenario.circuits == POINTS[size, scale, hop], (size, scale, hop)
    assert c.layout_choices == POINTS
    # asked again, each answer is the kept one, costed as a fresh scenario's
    fresh = _fresh(monkeypatch)
    n = np.array(BEST_SIZES)
    for size, scale, hop in points:
        kept = _comm(c, scale, hop).collective_time("all-reduce", n, size)
        new = _comm(fresh, scale, hop).collective_time("all-reduce", n, size)
        assert np.array_equal(kept, new)


def test_the_kept_choice_is_used(monkeypatch):
    c = _fresh(monkeypatch)
    c.layout_choices[(24, 1e-4, 0.0)] = "torus"   # not what choosing gives: read back
    assert _comm(c, 1e-4, 0.0).layout_comm(24).c.scenario.circuits == "torus"
