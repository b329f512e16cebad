"""Routing policies in groups costed together (netmodel.collectives.concurrent_policies):
a group no other group can load takes its policies, as alone; groups sharing links keep the
hop-shortest lines. The policies' own hand derivations (lite-direct's two-shot under each
policy) are in test_route_policies_balanced.py and test_route_policies.py.
"""

import numpy as np
import pytest

import netmodel.collectives.concurrent_policies as policies_module
import netmodel.collectives.model as model_module
from netmodel.api import build_fabric
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel

GIB = 2 ** 30


@pytest.fixture(scope="module")
def lite_direct():
    return build_fabric("lite-direct")


def test_lite_groups_together_as_alone(lite_direct, monkeypatch):
    """8 contiguous groups of 4 (each one Lite group, its own cables and switch ports):
    no group's links are another's under any routing, so each runs together exactly its
    collective alone (two-shot, balanced, 8.70 ms), not the hop-shortest in-network
    (17.14 ms) that the groups took together before."""
    m = FabricCostModel(lite_direct, placement="contiguous")
    r = concurrent_cost(m, 4, "all-reduce", [2 ** 20, GIB])
    assert len(r.groups) == 32
    for i, group in enumerate(r.groups):
        for s, n in enumerate((2 ** 20, GIB)):
            own = m.cost("all-reduce", n, group)
            assert r.alone[i, s] == pytest.approx(own.time, rel=1e-12)
            assert r.time[i, s] == r.alone[i, s]
            assert (r.algorithms[i, s], r.protocols[i, s]) == (own.algorithm, own.protocol)
    assert round(r.makespan[1] * 1e3, 2) == 8.70
    monkeypatch.setattr(policies_module, "route_policies", lambda router: ())
    monkeypatch.setattr(model_module, "route_policies", lambda router: ())
    before = concurrent_cost(FabricCostModel(lite_direct, placement="contiguous"), 4,
                             "all-reduce", [2 ** 20, GIB])
    assert round(before.makespan[1] * 1e3, 2) == 17.14
    assert (r.time <= before.time).all()


def test_groups_sharing_links_keep_shortest_routes(lite_direct, monkeypatch):
    """Two groups on the same 4 Lites share every link: their times hang on each other's
    routes, so they keep the hop-shortest lines, together and alone (as before, to the
    bit; the concurrent costing's ``alone`` is then not the lone collective's fastest
    policy)."""
    group = tuple(f"gpu{i}" for i in range(4))
    m = FabricCostModel(lite_direct)
    r = concurrent_cost(m, [group, group], "all-reduce", GIB)
    monkeypatch.setattr(policies_module, "route_policies", lambda router: ())
    before = concurrent_cost(FabricCostModel(lite_direct), [group, group], "all-reduce", GIB)
    assert np.array_equal(r.time, before.time)
    assert np.array_equal(r.alone, before.alone)


def test_isolated_group_beside_sharing_ones(lite_direct, monkeypatch):
    """A Lite group beside two groups that share each other's links: it takes its time
    alone (policies), they keep theirs; no group is slower than before."""
    a = tuple(f"gpu{i}" for i in range(4))
    b = tuple(f"gpu{i}" for i in range(4, 8))
    groups = [a, b, b]
    m = FabricCostModel(lite_direct)
    r = concurrent_cost(m, groups, "all-reduce", [1e6, GIB])
    assert r.time[0, 1] == pytest.approx(m.cost("all-reduce", GIB, a).time, rel=1e-12)
    monkeypatch.setattr(policies_module, "route_policies", lambda router: ())
    monkeypatch.setattr(model_module, "route_policies", lambda router: ())
    before = concurrent_cost(FabricCostModel(lite_direct), groups, "all-reduce", [1e6, GIB])
    assert (r.time <= before.time).all()
    assert r.time[0, 1] < before.time[0, 1]
    assert r.time[1:] == pytest.approx(before.time[1:], rel=1e-12)
