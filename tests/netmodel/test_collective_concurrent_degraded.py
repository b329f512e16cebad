"""Many groups at once (fair link sharing) and degraded fabrics (reroute, cut groups)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.degraded import degrade, degraded_cost
from netmodel.collectives.model import FabricCostModel
from topologies import fat_tree, leaf_spine

IDEAL = Calibration.ideal(alpha=1e-6)


def test_shared_uplink_halves_each_group():
    # two leaves of 2 GPUs, one 2:1 uplink each; groups (gpu0, gpu2) and (gpu1, gpu3)
    # exchange n bytes (send-recv) across the same uplinks: alone alpha + n/B, together
    # alpha + 2n/B
    g = leaf_spine(leaves=2, radix=4, oversubscription=2)
    B = g.edges["gpu0", "leaf0"]["bandwidth"]
    m = FabricCostModel(g, calibration=IDEAL)
    lat = 1e-6 + m.router.route("gpu0", "gpu2").latency  # alpha + GPU-leaf-spine-leaf-GPU
    n = np.array([1e3, 1e9])
    r = concurrent_cost(m, [("gpu0", "gpu2"), ("gpu1", "gpu3")], "send-recv", n)
    assert r.alone == pytest.approx(np.tile(lat + n / B, (2, 1)))
    assert r.time == pytest.approx(np.tile(lat + 2 * n / B, (2, 1)))
    assert r.slowdown[:, 0] == pytest.approx([(lat + 2e3 / B) / (lat + 1e3 / B)] * 2)
    assert {link for link, _ in r.hotspots} & {("leaf0", "spine0"), ("leaf1", "spine0")}
    assert dict(r.hotspots)[("leaf0", "spine0")] == 2  # groups sharing it


def test_tp_groups_inside_leaves_do_not_interfere():
    g = fat_tree(8)  # 4 GPUs per leaf
    m = FabricCostModel(g)
    r = concurrent_cost(m, 4, "all-reduce", [1e3, 1e6, 1e9])
    assert len(r.groups) == 32
    assert r.slowdown == pytest.approx(np.ones((32, 3)))
    assert r.makespan == pytest.approx(FabricCostModel(g).collective_time(
        "all-reduce", [1e3, 1e6, 1e9], 4))


def test_spread_groups_on_oversubscribed_tree_slow_down():
    # k=8 fat tree at 4:1 (one uplink per leaf of 4 GPUs): 32 groups of 4 spread one GPU
    # per leaf; each ring step sends n/4 off every leaf per group, and the 4 groups with a
    # GPU on a leaf share its uplink: 4x slower at large sizes
    g = fat_tree(8, oversubscription=4)
    m = FabricCostModel(g, placement="spread", algorithm="ring", calibration=IDEAL)
    r = concurrent_cost(m, 4, "all-reduce", [2.0 ** 34])
    assert np.all(r.slowdown >= 1 - 1e-12)
    assert r.slowdown.max() == pytest.approx(4.0, rel=1e-3)


def test_concurrent_bad_input():
    m = FabricCostModel(fat_tree(4))
    with pytest.raises(UserError, match="at least 2"):
        concurrent_cost(m, [("gpu0",)], "all-reduce", 1e6)
    with pytest.raises(UserError, match="message size"):
        concurrent_cost(m, 4, "all-reduce", 0)
    with pytest.raises(UserError, match="in_network_reduction"):
        concurrent_cost(m, 4, "all-reduce", 1e6, algorithm="in-network")


def test_failed_spine_reroutes_and_slows_all_to_all():
    # k=4 fat tree, pod 0: leaves of 2 GPUs with 2 uplinks (to spine0, spine1). Direct
    # all-to-all of gpu0..gpu3: a GPU link carries 3/4 n; each leaf sends 4 x n/4 off-leaf,
    # n/2 per uplink when both spines work, n through the one left when spine0 fails.
    g = fat_tree(4)
    B = g.edges["gpu0", "leaf0"]["bandwidth"]
    # the step lasts as long as its slowest route: GPU-leaf-spine-leaf-GPU
    lat = 1e-6 + 2 * g.edges["gpu0", "leaf0"]["latency"] \
        + 2 * g.edges["leaf0", "spine0"]["latency"] + 3 * g.nodes["leaf0"]["latency"]
    n = 1e9
    r = degraded_cost(g, "all-to-all", n, ["gpu0", "gpu1", "gpu2", "gpu3"], nodes=["spine0"],
                      algorithm="direct", calibration=IDEAL)
    assert r.healthy.time == pytest.approx(lat + 0.75 * n / B, rel=1e-9)
    assert r.degraded.time == pytest.approx(lat + n / B, rel=1e-9)
    assert not r.cut and r.lost == ()
    assert r.slowdown == pytest.approx(r.degraded.time / r.healthy.time)
    assert r.degraded.bottleneck[0] in {("leaf0", "spine1"), ("spine1", "leaf0"),
                                        ("leaf1", "spine1"), ("spine1", "leaf1")}


def test_cut_group_is_reported():
    g = fat_tree(4)
    r = degraded_cost(g, "all-reduce", 1e6, ["gpu0", "gpu2"],
                      links=[("leaf0", "spine0"), ("leaf0", "spine1")])
    assert r.cut and r.degraded.time == np.inf and r.slowdown == np.inf
    assert set(r.degraded.cut) == {"gpu0", "gpu2"}
    broken = degrade(g, links=[("leaf0", "spine0"), ("leaf0", "spine1")])
    t = FabricCostModel(broken).collective_time("all-reduce", [1e3, 1e6], 4)
    assert np.all(np.isinf(t))


def test_failed_gpu_leaves_the_group():
    g = fat_tree(4)
    r = degraded_cost(g, "all-reduce", 1e6, 4, nodes=["gpu1"])
    assert r.lost == ("gpu1",)
    assert r.degraded.group == ("gpu0", "gpu2", "gpu3")
    assert degrade(g, nodes=["gpu1"]).graph["gpus"] == 15


def test_degrade_bad_input():
    g = fat_tree(4)
    with pytest.raises(UserError, match="not a link"):
        degrade(g, links=[("gpu0", "gpu1")])
    with pytest.raises(UserError, match="not a node"):
        degrade(g, nodes=["spine99"])


def _line_ring(p):
    g = nx.Graph(name="ring", spec="", gpus=p)
    for i in range(p):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    for i in range(p):
        g.add_edge(f"gpu{i}", f"gpu{(i + 1) % p}", bandwidth=1e9, latency=0.0,
                   medium="copper", lanes=1)
    return g


def test_ring_re_embedding():
    # a ring fabric of 8 and a group listed out of physical order: following the list every
    # ring step crosses 4 hops, the greedy re-embedding follows the cables (1 hop per step)
    g = _line_ring(8)
    group = [f"gpu{i}" for i in (0, 4, 1, 5, 2, 6, 3, 7)]
    n = 8e9
    given = FabricCostModel(g, algorithm="ring", calibration=IDEAL).cost("all-reduce", n, group)
    greedy = FabricCostModel(g, algorithm="ring", calibration=IDEAL,
                             ring_order="greedy").cost("all-reduce", n, group)
    assert greedy.time == pytest.approx(14e-6 + 2 * 7 / 8 * n / 1e9)
    assert given.time > 2 * greedy.time
