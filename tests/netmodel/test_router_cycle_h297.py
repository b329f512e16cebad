"""A router is freed by reference counting alone (no reference cycle through its cone
routing, :class:`~netmodel.collectives.updown.UpDown`), and routers sharing another's routes
(:func:`~netmodel.collectives.route_sharing.router_for`) keep working once that other one is
gone."""

from __future__ import annotations

import gc
import weakref

import networkx as nx
import pytest

from netmodel.collectives.route_sharing import clear_shared_routes, router_for
from netmodel.collectives.routing import Router


def _leaf_spine(bw: float) -> nx.Graph:
    """2 leaves x 2 spines, 2 GPUs per leaf: every cross-leaf route climbs a cone."""
    g = nx.Graph(name="ls", spec="", gpus=4)
    for s in range(2):
        g.add_node(f"spine{s}", kind="switch", tier=1, radix=2, latency=1e-7,
                   in_network_reduction=False)
    for leaf in range(2):
        g.add_node(f"leaf{leaf}", kind="switch", tier=0, radix=4, latency=1e-7,
                   in_network_reduction=False)
        for s in range(2):
            g.add_edge(f"leaf{leaf}", f"spine{s}", bandwidth=bw, latency=1e-8,
                       medium="copper", lanes=1)
        for i in range(2):
            gpu = f"gpu{2 * leaf + i}"
            g.add_node(gpu, kind="gpu", gpu="H100-SXM")
            g.add_edge(gpu, f"leaf{leaf}", bandwidth=bw, latency=1e-8, medium="copper",
                       lanes=1)
    return g


@pytest.fixture
def no_gc():
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def test_router_freed_without_cyclic_collector(no_gc):
    g = _leaf_spine(1e9)
    r = Router(g)
    route = r.route("gpu0", "gpu3")  # climbs leaf0's cone to the spines, down to leaf1
    # ECMP over both spines: half the traffic on each of gpu0's leaf's two up-links
    up = {r.link_id("leaf0", f"spine{s}") for s in range(2)}
    assert sorted(w for lk, w in zip(route.links.tolist(), route.weights.tolist(), strict=True) if lk in up) == [0.5, 0.5]
    dead = weakref.ref(r)
    del r, route
    assert dead() is None  # failed before h297: Router <-> UpDown cycle kept it alive


def test_shared_router_outlives_its_donor(no_gc):
    clear_shared_routes()
    try:
        a = router_for(_leaf_spine(1e9))
        b = router_for(_leaf_spine(2e9))  # same shape: shares a's routes and cone tables
        assert b._pair_cache is a._pair_cache
        clear_shared_routes()
        dead = weakref.ref(a)
        del a
        assert dead() is None  # the donor goes; b keeps the tables, not the donor
        # b still routes (its cones climbed with its own router), with its own bandwidths
        route = b.route("gpu1", "gpu2")
        up = {b.link_id("leaf0", f"spine{s}") for s in range(2)}
        assert sorted(w for lk, w in zip(route.links.tolist(), route.weights.tolist(), strict=True) if lk in up) == [0.5, 0.5]
        assert set(b.bandwidth.tolist()) == {2e9}
    finally:
        clear_shared_routes()
