"""Invariants: more bandwidth is never slower; busbw never exceeds what a GPU can inject
(except under in-network reduction); oversubscribed fabrics are never faster."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.comm import OPERATIONS
from netmodel.collectives.model import FabricCostModel
from topologies import fat_tree, leaf_spine, single_switch

SIZES = 2.0 ** np.arange(6, 34, 3)
FABRICS = {
    "single-switch": lambda: single_switch(8),
    "fat-tree": lambda: fat_tree(8),
    "leaf-spine": lambda: leaf_spine(leaves=4, radix=8),
}
_CACHE: dict = {}


def _graph(name):
    if name not in _CACHE:
        _CACHE[name] = FABRICS[name]()
    return _CACHE[name]


def _scaled(graph, factor):
    g = graph.copy()
    for _, _, d in g.edges(data=True):
        d["bandwidth"] *= factor
    return g


@settings(max_examples=12, deadline=None)
@given(fabric=st.sampled_from(sorted(FABRICS)), factor=st.floats(1.0, 8.0),
       p=st.sampled_from([2, 3, 4, 8]), op=st.sampled_from(OPERATIONS),
       placement=st.sampled_from(["contiguous", "spread"]))
def test_more_bandwidth_is_never_slower(fabric, factor, p, op, placement):
    g = _graph(fabric)
    slow = FabricCostModel(g, placement=placement).collective_time(op, SIZES, p)
    fast = FabricCostModel(_scaled(g, factor), placement=placement).collective_time(op, SIZES,
                                                                                     p)
    assert np.all(fast <= slow * (1 + 1e-12))


@settings(max_examples=12, deadline=None)
@given(fabric=st.sampled_from(sorted(FABRICS)), p=st.sampled_from([2, 3, 5, 8]),
       op=st.sampled_from(OPERATIONS))
def test_busbw_never_exceeds_injection_bandwidth(fabric, p, op):
    # nccl-tests' bus factors count the bytes every GPU must send, so without in-network
    # reduction busbw <= the bandwidth a GPU can inject
    g = _graph(fabric)
    m = FabricCostModel(g, placement="spread")
    group = m.group(p)
    inject = min(sum(d["bandwidth"] for _, _, d in g.edges(x, data=True)) for x in group)
    for name, t in m.curves(op, SIZES, group).items():
        if name == "in-network":
            continue
        from netmodel.collectives.results import bus_factor

        busbw = SIZES / t * bus_factor(op, p)
        assert np.all(busbw <= inject * (1 + 1e-12)), name


def test_in_network_busbw_exceeds_link_rate():
    # documented exception: 2(p-1)/(p+1) of the achievable rate, above it for p > 3
    g = single_switch(8)
    r = FabricCostModel(g, algorithm="in-network").cost("all-reduce", 2.0 ** 33, 8)
    assert r.busbw > g.edges["gpu0", "nvs0"]["bandwidth"]


@settings(max_examples=10, deadline=None)
@given(ratio=st.sampled_from([2, 4]), p=st.sampled_from([4, 8, 16, 32]),
       op=st.sampled_from(OPERATIONS), placement=st.sampled_from(["contiguous", "spread"]))
def test_oversubscribed_never_faster(ratio, p, op, placement):
    key = f"fat-tree-over{ratio}"
    if key not in _CACHE:
        _CACHE[key] = fat_tree(8, oversubscription=ratio)
    over = FabricCostModel(_CACHE[key], placement=placement).collective_time(op, SIZES, p)
    full = FabricCostModel(_graph("fat-tree"), placement=placement).collective_time(op, SIZES,
                                                                                      p)
    assert np.all(over >= full * (1 - 1e-12))


def test_oversubscription_bounds_all_to_all_by_leaf_uplinks():
    # all 128 GPUs of a k=8 fat tree, direct all-to-all of n bytes: non-blocking, a GPU
    # link carries 127/128 n; at 4:1 a leaf's single uplink carries its 4 GPUs' traffic to
    # the 124 GPUs off the leaf, 4 * 124/128 n. Large n: time ratio 496/127.
    n = 2.0 ** 34
    over = FabricCostModel(fat_tree(8, oversubscription=4), algorithm="direct")
    full = FabricCostModel(_graph("fat-tree"), algorithm="direct")
    ratio = over.collective_time("all-to-all", n, 128) / full.collective_time("all-to-all", n,
                                                                               128)
    assert abs(ratio / (496 / 127) - 1) < 1e-3
    assert over.cost("all-to-all", n, 128).bottleneck[0][0].startswith("leaf")
