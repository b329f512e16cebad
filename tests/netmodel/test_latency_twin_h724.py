"""A fabric whose links differ from another's in their latencies alone takes that fabric's
routed step loads and routes only its latencies (h724).

The re-scoring's per-hop latency slopes (:func:`~netmodel.study.adjusted_comm.
hop_latency_slopes`, the co-design crossovers' and the latency sweep's) compile every
candidate a second time on the fabric with :data:`~netmodel.study.adjusted_comm.SLOPE_AT`
added to every link: the same hop-shortest routes split by the same bandwidths, so the same
loads, routed and spread again (a joint split's linear programme included).
:meth:`~netmodel.collectives.model.FabricCostModel.share_loads_of` lets that model take the
first one's bottleneck, rates and path rate of each step it has routed and route only the
latencies (:meth:`~netmodel.collectives.route_plans.PlannedRoutes.step_latencies`, under a
routing policy :meth:`~netmodel.collectives.route_policies.RoutePolicy.step_latencies`).
Checked here against the model compiled afresh, bit for bit, on every shipped scenario.
"""

from dataclasses import replace

import numpy as np
import pytest

from netmodel.collectives import route_sharing
from netmodel.collectives.step_cost import LOADS_OF
from netmodel.study.adjusted_comm import SLOPE_AT, _relinked
from netmodel.study.scenario_catalog import get_scenario, scenario_names
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_fabric import adjusted, scenario_cost_model
from netmodel.study.scenarios import Adjust

OPS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")


def _at(scenario):
    return scenario.with_param("adjust.hop_latency", SLOPE_AT)


def _fresh(scenario, base):
    """The model of ``base``'s graph with :data:`SLOPE_AT` per hop, as the re-scoring makes
    it, but routing its loads itself."""
    route_sharing.clear_shared_routes()   # nor routes learned by another router of it
    at = _at(scenario)
    graph = adjusted(base.graph, Adjust(hop_latency=SLOPE_AT))
    return scenario_cost_model(at, graph, ScenarioCollectives(at).calibration, validated=True)


def _compiled(model, op, group):
    """Every candidate's compiled collectives (each routing policy's too) and lines."""
    parts = model.candidate_parts(op, group)
    steps = [c.steps for name in model.algorithm_names(op, "auto")
             for c in _variants(model, op, name, group)]
    return parts, steps


def _variants(model, op, name, group):
    from netmodel.collectives.algorithms import NotApplicable

    try:
        return model.compiled_variants(op, name, group)
    except NotApplicable:
        return []


@pytest.mark.parametrize("name", scenario_names())
def test_shared_loads_cost_as_routing_them_again(name):
    s = get_scenario(name)
    coll = ScenarioCollectives(s)
    sizes = [k for k in (2, 4, 8, 16, 32) if k <= s.gpu_spec.max_instance]
    for k in sizes:
        base = coll.model(k)
        group = base.group(k)
        for op in OPS:
            base.candidate_parts(op, group)   # the base routes first, as a slope does
        fresh = _fresh(s, base)
        want = {op: _compiled(fresh, op, group) for op in OPS}
        route_sharing.clear_shared_routes()
        twin = _relinked(_at(s), base, ScenarioCollectives(_at(s)).calibration, hop=SLOPE_AT)
        shared = LOADS_OF in twin._step_cache
        assert shared, (name, k)
        for op in OPS:
            got_parts, got_steps = _compiled(twin, op, group)
            want_parts, want_steps = want[op]
            assert len(got_parts) == len(want_parts) == 5
            for g, w in zip(got_parts, want_parts, strict=True):
                assert g.shape == w.shape and np.array_equal(g, w), (name, k, op)
            assert got_steps == want_steps, (name, k, op)   # StepCost: every field equal
        if shared:   # no step's loads routed: each was the base's
            assert not twin.router._loads_kept, (name, k)


def test_the_latencies_are_the_fabrics_own():
    # the twin's steps take the base's bottleneck and rates, their latencies its own: one
    # hop of SLOPE_AT more on every link a route crosses
    s = get_scenario("lite-flat")
    base = ScenarioCollectives(s).model(8)
    group = base.group(8)
    c0 = base.compiled("all-reduce", "ring", group)
    twin = _relinked(_at(s), base, ScenarioCollectives(_at(s)).calibration, hop=SLOPE_AT)
    c1 = twin.compiled("all-reduce", "ring", group)
    for a, b in zip(c0.steps, c1.steps, strict=True):
        assert (a.beta, a.bottleneck, a.bottleneck_bandwidth, a.path_bandwidth) \
            == (b.beta, b.bottleneck, b.bottleneck_bandwidth, b.path_bandwidth)
        # a Lite's route to its neighbour on lite-flat: up to a plane and down, two links
        assert b.latency == pytest.approx(a.latency + 2 * SLOPE_AT, rel=1e-12)


def test_not_shared_where_more_than_latencies_differ():
    s = get_scenario("lite-flat")
    base = ScenarioCollectives(s).model(8)
    cal = base.calibration
    # every link twice as fast: other loads over bandwidth
    faster = scenario_cost_model(s, adjusted(base.graph, Adjust(bandwidth_scale=2.0)), cal,
                                 validated=True)
    assert not faster.share_loads_of(base) and LOADS_OF not in faster._step_cache
    # another calibration: other link efficiencies
    other = scenario_cost_model(s, adjusted(base.graph, Adjust(hop_latency=SLOPE_AT)),
                                replace(cal, scaleup_efficiency=cal.scaleup_efficiency / 2),
                                validated=True)
    assert not other.share_loads_of(base)
    # another fabric
    flat = ScenarioCollectives(get_scenario("h100-dgx")).model(8)
    assert not flat.share_loads_of(base)
    # the same fabric with a per-hop latency: shared
    at = scenario_cost_model(s, adjusted(base.graph, Adjust(hop_latency=SLOPE_AT)), cal,
                             validated=True)
    assert at.share_loads_of(base) and at._step_cache[LOADS_OF] is base._step_cache
