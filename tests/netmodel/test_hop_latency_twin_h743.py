"""Scenarios that differ in their per-hop latency alone route their step loads once (h743).

``scenario.with_param("adjust.hop_latency", x)`` (``compare`` and a sweep's points over
it, the hop-latency property test of ``test_compare``) adds ``x`` to every link's latency:
the same hop-shortest routes split by the same bandwidths, so the same loads.
:class:`~netmodel.study.scenario_collectives.ScenarioCollectives` gives each model of such a
scenario the loads of its twin without the per-hop latency
(:meth:`~netmodel.collectives.model.FabricCostModel.share_loads_of`): a step neither has
routed is routed on the twin's fabric and kept there, so every latency's model takes it.
Checked here against the models routing their own loads (sharing off), bit for bit, on
every shipped scenario at two latencies and two operations.
"""

import numpy as np
import pytest

from netmodel.collectives import route_sharing
from netmodel.collectives.algorithms import NotApplicable
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_plans import PlannedRoutes
from netmodel.collectives.step_cost import LOADS_OF
from netmodel.study import scenario_collectives
from netmodel.study.scenario_catalog import get_scenario, scenario_names
from netmodel.study.scenario_collectives import ScenarioCollectives

SIZE = 8
HOPS = (1e-7, 2.5e-6)
OPS = ("all-reduce", "all-to-all")
NBYTES = np.array([1e3, 1e5, 1e7, 1e9])


def _fresh() -> None:
    """No costs, models or routes kept from before."""
    scenario_collectives._SHARED.clear()
    route_sharing.clear_shared_routes()


def _costs(coll: ScenarioCollectives, op: str):
    """What an instance of :data:`SIZE` GPUs is costed with: its layout, the candidates'
    parts, the op's times and every candidate's compiled steps (each routing policy's)."""
    m = coll.model(SIZE)
    group = m.group(SIZE)
    steps = []
    for name in m.algorithm_names(op, "auto"):
        try:
            steps += [c.steps for c in m.compiled_variants(op, name, group)]
        except NotApplicable:
            pass
    return (coll.layout(SIZE), coll.parts(op, SIZE), coll.collective_time(op, NBYTES, SIZE),
            steps, LOADS_OF in m._step_cache)


def _all(name: str) -> list:
    _fresh()
    s = get_scenario(name)
    return [_costs(ScenarioCollectives(s.with_param("adjust.hop_latency", hop)), op)
            for hop in HOPS for op in OPS]


@pytest.mark.parametrize("name", scenario_names())
def test_shared_loads_cost_as_own(name, monkeypatch):
    new = _all(name)
    with monkeypatch.context() as m:   # each model routes its own loads
        m.setattr(FabricCostModel, "share_loads_of", lambda self, base: False)
        old = _all(name)
    _fresh()
    assert len(new) == len(old) == len(HOPS) * len(OPS)
    for (lay, parts, times, steps, shared), (lay0, parts0, times0, steps0, own) in \
            zip(new, old, strict=True):
        assert shared and not own   # every shipped scenario's twin's loads taken
        assert lay == lay0
        assert len(parts) == len(parts0)
        assert all(np.array_equal(a, b) for a, b in zip(parts, parts0, strict=True))
        assert np.array_equal(times, times0)
        assert steps == steps0 and steps
    # the latency counts: more per hop costs more at the smallest size
    assert new[len(OPS)][2][0] > new[0][2][0]


def test_loads_routed_once(monkeypatch):
    calls = []
    own = PlannedRoutes.link_loads

    def counted(self, transfers):
        calls.append(self)
        return own(self, transfers)

    monkeypatch.setattr(PlannedRoutes, "link_loads", counted)
    s = get_scenario("lite-hier")

    def routed(hop: float) -> int:
        before = len(calls)
        ScenarioCollectives(s.with_param("adjust.hop_latency", hop)).parts("all-reduce", SIZE)
        return len(calls) - before

    _fresh()
    with monkeypatch.context() as m:
        m.setattr(FabricCostModel, "share_loads_of", lambda self, base: False)
        alone = routed(1e-6)
    _fresh()
    first, second, third = routed(1e-6), routed(3e-6), routed(0.5e-6)
    # each routed on the twin without a per-hop latency (kept by the shared caches)
    twin = ScenarioCollectives(s.with_param("adjust.hop_latency", 0.0)).model(SIZE).router
    on = {id(r) for r in calls[-first:]}
    _fresh()
    assert alone > 0
    # routed once, as many as a model routing its own, for every latency after it
    assert (first, second, third) == (alone, 0, 0)
    assert on == {id(twin)}
