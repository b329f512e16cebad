"""What every row of a comparison asks of its scenario is worked out once (h718).

A comparison's row names its fabric (:meth:`~netmodel.study.scenarios.Scenario.fabric_spec`,
also the key :func:`~netmodel.study.scenario_fabric.build_fabric` keeps the fabric under)
and prices it (:func:`~netmodel.study.cost.cost_summary`: the GPU's idle draw and the
shipped network prices, the same for every row). They are kept: the spec by the scenario's
table (frozen: unchanged) and GPU, the idle draw by GPU and keywords, the default prices
once; and how far an OCS scenario's circuits let an instance span
(:func:`~netmodel.study.fabric_search.instance_cap`, asked by every search) on its
collectives. Each is checked here against the value worked out afresh.
"""

from dataclasses import replace

import pytest

from compute.hardware import get_gpu
from compute.power import gpu_power
from netmodel.study import cost
from netmodel.study.fabric_table import table_spec
from netmodel.study.network_bill import NetworkPrices
from netmodel.study.scenario_catalog import get_scenario, scenario_names


@pytest.mark.parametrize("name", scenario_names())
def test_fabric_spec_kept_is_the_table_resolved_afresh(name):
    s = get_scenario(name)
    assert s.fabric_spec() == table_spec(s.fabric, s.gpu_spec)
    assert s.fabric_spec() is s.fabric_spec()          # kept: worked out once
    # a scenario made from another's fields (a copy of its table): its own, equal
    twin = s.__class__(**{**s.__dict__, "fabric": {**s.fabric}})
    assert twin.fabric_spec() == s.fabric_spec()
    for gpu in ("Lite", "Lite+NetBW", "H100-SXM"):     # each variant its own
        v = s.with_gpu(gpu)
        assert v.fabric_spec() == table_spec(v.fabric, v.gpu_spec)


def test_a_changed_scenario_resolves_its_own_spec():
    s = get_scenario("lite-flat")
    before = s.fabric_spec()
    wider = s.with_param("fabric.planes", 8)
    assert wider.fabric_spec() == table_spec(wider.fabric, wider.gpu_spec) != before
    other = replace(s, fabric={**s.fabric})             # equal table: equal spec
    assert other.fabric_spec() == before and other == s


@pytest.mark.parametrize("gpu", ["H100-SXM", "Lite", "Lite+MemBW"])
def test_idle_power_kept_is_the_draw_afresh(gpu):
    spec = get_gpu(gpu)
    for kw in ({"clock": 1.0}, {"clock": 0.8}, {"clock": 1.0, "idle_fraction": 0.3}):
        assert cost._idle_power(spec, kw) == gpu_power(spec, "idle", **kw)
        assert cost._idle_power(spec, kw) == gpu_power(spec, "idle", **kw)   # kept
    # another idle share: another draw, not the one kept for the default
    assert cost._idle_power(spec, {"clock": 1.0, "idle_fraction": 0.1}) != \
        cost._idle_power(spec, {"clock": 1.0, "idle_fraction": 0.3})


def test_default_prices_are_the_shipped_ones():
    assert cost._default_net() == NetworkPrices()


def test_cost_summary_same_with_and_without_the_kept_values():
    from netmodel.study.fabric_search import fabric_search

    s = get_scenario("lite-flat")
    best = fabric_search("Llama-3-70B", s, "decode").best
    kept = cost.cost_summary(s, "Llama-3-70B", "decode", best)
    cost._IDLE.clear()
    cost._default_net.cache_clear()
    fresh = cost.cost_summary(replace(s), "Llama-3-70B", "decode", best)
    assert kept.to_dict() == fresh.to_dict()
    # a parameter given: priced at it, not at the kept defaults
    dear = cost.cost_summary(s, "Llama-3-70B", "decode", best, idle_fraction=0.5)
    assert dear.power_gpu != kept.power_gpu


def test_instance_cap_kept_is_the_ports_counted_afresh():
    # every search of an OCS scenario asks how far its circuits let an instance span: kept
    # on the scenario's collectives (their graph is frozen), as counted from the ports
    from netmodel.study.circuit_copies import ocs_ports
    from netmodel.study.fabric_search import instance_cap
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from topologies.schema import gpu_nodes

    s = get_scenario("lite-ocs")
    for scen in (s, replace(s, fabric={**s.fabric, "ports": 1})):
        coll = ScenarioCollectives(scen)
        fresh = 2 if ocs_ports(coll.graph, gpu_nodes(coll.graph)) < 2 else None
        assert instance_cap(coll) == fresh and instance_cap(coll) == fresh
        assert coll.__dict__["_instance_cap"] == (fresh,)
    assert instance_cap(ScenarioCollectives("lite-flat")) is None   # no circuits: no cap
