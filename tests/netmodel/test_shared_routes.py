"""Routers of fabrics of one shape share their routes (``router_for``): the step costs are
those of routers made afresh, to the last bit, and a graph that differs in anything routes
read (a link removed, one link's bandwidth changed) never reuses another's routes."""

from __future__ import annotations

import copy
import gc
import weakref

import networkx as nx
import pytest

from netmodel.collectives import route_sharing, routing
from netmodel.collectives.algorithms import ALGORITHMS, NotApplicable
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_sharing import clear_shared_routes, router_for
from netmodel.collectives.routing import Router
from topologies import build

OPS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast")


def _ring(n: int, bws: list[float], chords: tuple = ()) -> nx.Graph:
    """A ring of GPUs with the given link bandwidths (GPUs forward: unequal splits)."""
    g = nx.Graph(name="ring", spec="", gpus=n)
    for i in range(n):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    for i in range(n):
        g.add_edge(f"gpu{i}", f"gpu{(i + 1) % n}", bandwidth=bws[i], latency=1e-8 * (i + 1),
                   medium="copper", lanes=1)
    for a, b in chords:
        g.add_edge(f"gpu{a}", f"gpu{b}", bandwidth=3e9, latency=2e-8, medium="copper",
                   lanes=1)
    return g


def _scaled(g: nx.Graph, factor: float) -> nx.Graph:
    """``g`` with every link ``factor`` times as fast (a deep copy: the same adjacency
    order, which routes read; ``Graph.copy`` may list a node's neighbours in another)."""
    h = copy.deepcopy(g)
    for _, _, d in h.edges(data=True):
        d["bandwidth"] *= factor
    return h


def _costs(model: FabricCostModel, sizes: tuple[int, ...]) -> list[str]:
    """Every step cost of every algorithm and op on groups of ``sizes``, as repr (floats
    written to the last bit)."""
    out = []
    for size in sizes:
        group = model.group(size)
        for op in OPS:
            for alg, ops in ALGORITHMS.items():
                if op not in ops:
                    continue
                try:
                    out.append(repr(model.compiled(op, alg, group).steps))
                except NotApplicable as exc:
                    out.append(repr(exc))
    return out


def _fresh(g: nx.Graph, sizes: tuple[int, ...]) -> list[str]:
    clear_shared_routes()
    return _costs(FabricCostModel(g), sizes)


CASES = {
    "uneven ring": (_ring(6, [1e9, 3e9, 2e9, 5e9, 1e9, 7e9], chords=((0, 3),)), (6, 4)),
    "leaf-spine": (build("leaf-spine:leaves=4,radix=8,gpu=Lite,bandwidth=112.5GB/s"), (16, 8)),
    "rail-optimized": (build("rail-optimized:scaleup_bandwidth=450GB/s,nic_bandwidth=50GB/s"),
                       (32, 16)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_power_of_two_variants_share_routes_and_cost_the_same(name):
    g, sizes = CASES[name]
    fast = _scaled(g, 2.0)  # every link twice as fast: the same routes to the last bit
    want_slow, want_fast = _fresh(g, sizes), _fresh(fast, sizes)
    assert want_slow != want_fast  # the bandwidths do change the costs
    clear_shared_routes()
    slow_m = FabricCostModel(g)
    fast_m = FabricCostModel(fast)
    assert fast_m.router.__dict__ is slow_m.router.__dict__  # one set of routes
    assert fast_m.router.graph is fast and slow_m.router.graph is g
    assert (fast_m.router.bandwidth == 2 * slow_m.router.bandwidth).all()
    # each learns half the routes, the other reads them
    half = len(sizes) // 2
    got_fast_first = _costs(fast_m, sizes[:half])
    got_slow = _costs(slow_m, sizes)
    got_fast = got_fast_first + _costs(fast_m, sizes[half:])
    assert got_slow == want_slow
    assert got_fast == want_fast


def test_other_factors_and_edits_do_not_share():
    g, sizes = CASES["uneven ring"]
    clear_shared_routes()
    base = router_for(g)
    tripled = _scaled(g, 3.0)  # ratios the same, but not their bits: not shared
    assert router_for(tripled).__dict__ is not base.__dict__
    one_link = _scaled(g, 1.0)  # one link twice as fast: the splits change
    one_link.edges["gpu0", "gpu1"]["bandwidth"] *= 2
    assert router_for(one_link).__dict__ is not base.__dict__
    cut = _scaled(g, 1.0)
    cut.remove_edge("gpu0", "gpu3")
    assert router_for(cut).__dict__ is not base.__dict__
    slower = _scaled(g, 1.0)  # a link latency changed: route latencies change
    slower.edges["gpu2", "gpu3"]["latency"] *= 2
    assert router_for(slower).__dict__ is not base.__dict__
    # and the costs are those of fresh routers
    for h in (tripled, one_link, cut, slower):
        want = _fresh(h, sizes)
        clear_shared_routes()
        FabricCostModel(g)
        model = FabricCostModel(h)
        assert _costs(model, sizes) == want


def test_graph_edited_after_a_router_was_made_gets_its_own():
    g, sizes = CASES["uneven ring"]
    clear_shared_routes()
    first = FabricCostModel(g)
    _costs(first, sizes)
    edited = _scaled(g, 2.0)
    edited.edges["gpu3", "gpu4"]["bandwidth"] = 9e9  # edited after it was built
    model = FabricCostModel(edited)
    assert model.router.__dict__ is not first.router.__dict__
    assert _costs(model, sizes) == _fresh(edited, sizes)


def test_the_cache_is_bounded_and_frees_graphs():
    clear_shared_routes()
    first = _ring(3, [1e9] * 3)
    ref = weakref.ref(first)
    router_for(first)
    for n in range(4, 4 + route_sharing._SHAPES):
        router_for(_ring(n, [1e9] * n))
    assert len(route_sharing._SHARED) == route_sharing._SHAPES  # the first shape dropped
    del first
    gc.collect()
    assert ref() is None
    big = _ring(8, [1e9] * 8)
    ref = weakref.ref(big)
    router_for(big)
    clear_shared_routes()
    del big
    gc.collect()
    assert ref() is None


def test_large_fabrics_are_not_kept(monkeypatch):
    monkeypatch.setattr(routing, "_SHAPE_NODES", 4)
    clear_shared_routes()
    r = router_for(_ring(5, [1e9] * 5))
    assert type(r) is Router and not route_sharing._SHARED and r._shape is None


def test_server_and_device_labels_are_part_of_the_shape():
    """Routes read the GPUs' ``server`` labels (PXN's lenders, and the stand-in of a GPU
    without a NIC, one of its own server first, PXN on or off) and their ``device`` labels
    (PXN's device index, kept by topologies.degrade.keep_devices): a fabric differing only in
    them has a router of its own. A plain copy shares."""
    clear_shared_routes()
    a = build("rail-optimized:domains=2,gpu=B200-HGX")
    same, dev, srv = copy.deepcopy(a), copy.deepcopy(a), copy.deepcopy(a)
    for i in range(16):
        dev.nodes[f"gpu{i}"]["device"] = i % 8
    dev.nodes["gpu1"]["device"], dev.nodes["gpu2"]["device"] = 2, 1
    srv.nodes["gpu0"]["server"], srv.nodes["gpu8"]["server"] = 1, 0
    for pxn, other in ((True, dev), (False, srv)):
        clear_shared_routes()
        r = router_for(a, pxn=pxn)
        assert router_for(same, pxn=pxn)._pair_cache is r._pair_cache
        assert router_for(other, pxn=pxn)._pair_cache is not r._pair_cache
