"""Routes and link loads: ECMP splits, transit rules, the valley-free fast path."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from netmodel.collectives.routing import NoPath, Router
from topologies import fat_tree, leaf_spine, rail_optimized, ring


def _dense(router, route):
    v = np.zeros(router.n_links)
    np.add.at(v, route.links, route.weights)
    return v


def _load(router, route, u, v):
    return float(_dense(router, route)[router.link_id(u, v)])


def _graph(edges, switches=(), gpus=(), tiers=None):
    g = nx.Graph(name="t", spec="", gpus=len(gpus))
    for s in switches:
        g.add_node(s, kind="switch", tier=(tiers or {}).get(s, 1), radix=64, latency=1e-7,
                   in_network_reduction=False)
    for x in gpus:
        g.add_node(x, kind="gpu", gpu="H100-SXM")
    for u, v, bw in edges:
        g.add_edge(u, v, bandwidth=bw, latency=1e-8, medium="copper", lanes=1)
    return g


def test_ecmp_splits_by_bandwidth_over_parallel_planes():
    # two planes of 3:1 bandwidth: traffic splits 3/4 and 1/4 (weighted ECMP / striping)
    g = _graph([("a", "p0", 300.0), ("a", "p1", 100.0), ("b", "p0", 300.0), ("b", "p1", 100.0)],
               switches=("p0", "p1"), gpus=("a", "b"))
    r = Router(g)
    route = r.route("a", "b")
    assert route.hops == 2
    assert _load(r, route, "a", "p0") == pytest.approx(0.75)
    assert _load(r, route, "p1", "b") == pytest.approx(0.25)
    assert route.latency == pytest.approx(2e-8 + 1e-7)  # two cables, one switch


def test_leaf_spine_spreads_over_every_spine():
    g = leaf_spine(leaves=2, radix=8)  # 4 GPUs per leaf, 4 spines
    r = Router(g)
    route = r.route("gpu0", "gpu4")
    assert route.hops == 4 and route.scaleout
    for s in range(4):
        assert _load(r, route, "leaf0", f"spine{s}") == pytest.approx(0.25)
        assert _load(r, route, f"spine{s}", "leaf1") == pytest.approx(0.25)
    assert _dense(r, route).sum() == pytest.approx(4.0)  # one unit over each of 4 hops


def test_direct_connect_fabric_forwards_through_gpus():
    g = ring(4, bandwidth=100e9)
    r = Router(g)
    route = r.route("gpu0", "gpu2")  # two equal 2-hop paths around the ring
    assert route.hops == 2
    assert _load(r, route, "gpu0", "gpu1") == pytest.approx(0.5)
    assert _load(r, route, "gpu0", "gpu3") == pytest.approx(0.5)


def test_switched_path_preferred_over_gpu_transit():
    # a and b share no switch but c is wired to both their switches: the route climbs to
    # the spine rather than crossing GPU c
    g = _graph([("a", "l0", 1.0), ("c", "l0", 1.0), ("c", "l1", 1.0), ("b", "l1", 1.0),
                ("l0", "top", 1.0), ("l1", "top", 1.0)], switches=("l0", "l1", "top"),
               gpus=("a", "b", "c"), tiers={"top": 2})
    r = Router(g)
    route = r.route("a", "b")
    assert route.hops == 4
    assert _load(r, route, "l0", "top") == pytest.approx(1.0)
    assert _load(r, route, "l0", "c") == 0


def test_no_path_between_components():
    g = _graph([("a", "s", 1.0)], switches=("s",), gpus=("a", "b"))
    r = Router(g)
    assert r.route("a", "b") is None
    with pytest.raises(NoPath):
        r.loads([("a", "b", 1.0)])


@pytest.mark.parametrize("graph", [fat_tree(4), fat_tree(8, oversubscription=2),
                                   leaf_spine(leaves=4, radix=8, oversubscription=2, spines=2),
                                   rail_optimized(domains=4)],
                         ids=["fat-tree-4", "fat-tree-8-over2", "leaf-spine-over2", "rail"])
def test_fast_path_equals_general_search(graph):
    fast, slow = Router(graph), Router(graph)
    slow.tiered = False  # forces the general bidirectional search
    gpus = fast.gpu_list[:24] + fast.gpu_list[-8:]
    for a, b in itertools.combinations(gpus, 2):
        rf, rs = fast.route(a, b), slow.route(a, b)
        assert rf.hops == rs.hops
        assert rf.latency == pytest.approx(rs.latency, abs=1e-15)
        assert np.allclose(_dense(fast, rf), _dense(slow, rs))


def test_fat_tree_inter_pod_route_uses_every_core():
    g = fat_tree(4)  # 4 pods, 2 leaves and 2 spines per pod, 4 cores
    r = Router(g)
    route = r.route("gpu0", "gpu15")
    v = _dense(r, route)
    assert route.hops == 6
    out_of_cores = [sum(v[r.link_id(c, s)] for s in g[c]) for c in
                    ("core0", "core1", "core2", "core3")]
    assert out_of_cores == pytest.approx([0.25] * 4)
    # latency: each cable type crossed twice, five switches traversed
    lat = (2 * g.edges["gpu0", "leaf0"]["latency"] + 2 * g.edges["leaf0", "spine0"]["latency"]
           + 2 * g.edges["spine0", "core0"]["latency"] + 5 * g.nodes["leaf0"]["latency"])
    assert route.latency == pytest.approx(lat)


def test_loads_share_templates():
    g = leaf_spine(leaves=2, radix=8)
    r = Router(g)
    links, coef, latency, scaleout = r.loads([("gpu0", "gpu4", 0.5), ("gpu1", "gpu5", 0.5)])
    total = np.bincount(links, coef, minlength=r.n_links)
    assert total[r.link_id("leaf0", "spine0")] == pytest.approx(0.25)  # (0.5 + 0.5) / 4
    assert total[r.link_id("gpu0", "leaf0")] == pytest.approx(0.5)
    assert scaleout and latency > 0


def test_circuit_latency_counts_its_ocs_once():
    # A circuit edge's latency already includes the OCS insertion delay (topologies.optical):
    # fibre to and from the OCS (2 x 10 m x 5 ns/m = 100 ns), 2 optical chiplets of 5 ns
    # (one a fibre, the GPUs': the OCS end is mirrors; it charged 2 a fibre, 20 ns), and
    # the OCS's own 1 us; routing must not add the OCS node's latency a second time.
    from topologies import build

    g = build("ocs:gpus=4,ports=2,logical=ring,latency=1us")
    assert g.nodes["ocs0"]["latency"] == pytest.approx(1e-6)
    edge = g.edges["gpu0", "gpu1"]["latency"]
    assert edge == pytest.approx(1e-6 + 100e-9 + 5e-9 + 5e-9, rel=1e-6)
    assert Router(g).route("gpu0", "gpu1").latency == pytest.approx(edge)
