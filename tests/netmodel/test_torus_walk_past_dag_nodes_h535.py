"""Routes on a torus of one bandwidth past ``DAG_NODES`` linked nodes, where the router keeps
no shortest paths per destination and each other fabric's pairs are searched one at a time
(``SearchedRoutes._search``), walked many pairs at once from node 0's shortest paths
(``DagRoutes._spread_rows_torus``): the same links in the same order, shares, latency, hops
and scale-out, to the bit, as the pair-by-pair search, and the same curves (float.hex).
``DAG_NODES`` is made small so the tori stay small."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives import route_dags, routing
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_sharing import clear_shared_routes
from netmodel.collectives.routing import Router
from topologies import build


def _no_search(*args, **kwargs):
    raise AssertionError("a pair searched on its own")


def _table_route(r: Router, a: int, b: int) -> tuple:
    """The entry of ``a -> b`` (node numbers) in ``r``'s table of routes not made from
    templates: (links, weights, latency, hops, scale-out)."""
    i = r._rt_id[a * r._n + b]
    lo, hi = int(r._rt_ptr.a[i]), int(r._rt_ptr.a[i + 1])
    return (r._rt_links.a[lo:hi].tolist(), r._rt_weights.a[lo:hi].tolist(),
            float(r._rt_latency.a[i]), int(r._rt_hops.a[i]), bool(r._rt_scaleout.a[i]))


def _check(dims: str, count: int, seed: int, monkeypatch) -> int:
    """Route ``count`` random pairs of the torus ``dims`` at once past ``DAG_NODES`` and
    assert each equals the pair-by-pair search of a fresh router; returns how many routes
    split over more than one path."""
    graph = build(f"torus:dims={dims}")
    monkeypatch.setattr(routing, "DAG_NODES", graph.number_of_nodes() - 1)
    walked = Router(graph)
    assert not walked._dag_sized and walked._torus_steps() is not None
    rng = np.random.default_rng(seed)
    n = walked._n
    src, dst = rng.integers(0, n, 4 * count), rng.integers(0, n, 4 * count)
    keep = (src != dst) & (walked._lids(src, dst) < 0)
    _, first = np.unique(src[keep] * n + dst[keep], return_index=True)
    first = np.sort(first)[:count]
    src, dst = src[keep][first], dst[keep][first]
    if len(src) < 64:   # fewer are searched one by one, as before
        return 0
    walked._search = _no_search
    ids = walked._route_ids(src, dst)
    assert (ids >= 0).all() and not walked._dag_np and not walked._pair_cache
    searched = Router(graph)
    nodes, split = searched._nodes, 0
    for a, b in zip(src.tolist(), dst.tolist(), strict=True):
        want = searched._resolve(nodes[a], nodes[b])
        got = _table_route(walked, a, b)
        assert got[0] == want.links.tolist()
        assert got[1] == want.weights.tolist()   # floats compared exactly
        assert got[2:] == (want.latency, want.hops, want.scaleout)
        split += len(got[0]) > got[3]
    assert not searched._dags   # the reference searched each pair, kept no paths
    return split


@pytest.mark.parametrize("dims", ["4x4x4", "3x4x5", "6x6", "8x5", "70"])
def test_named_tori(dims, monkeypatch):
    split = _check(dims, 200, 11, monkeypatch)
    assert split > 0 or dims == "70"   # a ring has one shortest path


# 2 or 3 sides of 3 to 7, 16 nodes or more (at least 64 pairs to walk; tori with a side
# of 2 have 8 nodes at most: too few)
DIMS = st.lists(st.integers(3, 7), min_size=2, max_size=3).filter(lambda s: np.prod(s) >= 16)


@settings(max_examples=20, deadline=None)
@given(sides=DIMS, seed=st.integers(0, 2**32 - 1))
def test_chosen_tori(sides, seed):
    with pytest.MonkeyPatch.context() as mp:
        _check("x".join(map(str, sides)), 120, seed, mp)


def test_the_chunks_hold_what_was_counted(monkeypatch):
    """The links a row's walk holds are those counted before it (the chunks' sizes), and
    rows walked in many small chunks give what one chunk gives."""
    r = Router(build("torus:dims=4x6x5"))
    walk = r._torus_steps()
    n = r._n
    src, dst = np.divmod(np.arange(n * n), n)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    counted = route_dags._torus_links(walk, route_dags._moved(walk, src, dst))
    held = r._spread_rows_torus(src, dst, walk)[0]
    assert np.array_equal(counted, held)
    one = r._spread_many(src, dst)
    monkeypatch.setattr(route_dags, "_WALK_LINKS", 100)
    many = Router(build("torus:dims=4x6x5"))._spread_many(src, dst)
    for x, y in zip(one, many, strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)


def test_whole_torus_curves_equal_the_pair_by_pair_search(monkeypatch):
    """Every algorithm's curve of an all-reduce on all 60 GPUs of a 3x4x5 torus past
    ``DAG_NODES``: float.hex the same walked as searched pair by pair (the torus form
    switched off). Each model gets a router of its own (none shared by shape)."""
    monkeypatch.setattr(routing, "DAG_NODES", 59)
    g = build("torus:dims=3x4x5")
    sizes = [1e3, 2.0 ** 20, 2.0 ** 26]
    calls = {"walked": 0, "searched": 0}
    spread, search = Router._spread_rows_torus, Router._search

    def walked(self, *args):
        calls["walked"] += len(args[0])
        return spread(self, *args)

    def searched(self, *args, **kwargs):
        calls["searched"] += 1
        return search(self, *args, **kwargs)

    monkeypatch.setattr(Router, "_spread_rows_torus", walked)
    monkeypatch.setattr(Router, "_search", searched)
    try:
        clear_shared_routes()
        fast = FabricCostModel(g, validated=True).curves("all-reduce", sizes, 60)
        # direct's all-pairs step walked: 60 x 59 - 60 x 6 = 3,180 pairs not neighbours,
        # less those routed for the steps before; a few searched (fewer than 64 at once)
        assert calls["walked"] > 2000 and calls["searched"] < 1000
        calls.update(walked=0, searched=0)
        clear_shared_routes()
        with monkeypatch.context() as mp:
            mp.setattr(Router, "_torus_steps", lambda self: None)
            slow = FabricCostModel(g, validated=True).curves("all-reduce", sizes, 60)
        assert calls["walked"] == 0 and calls["searched"] > 3000
    finally:
        clear_shared_routes()
    assert "direct" in fast and sorted(fast) == sorted(slow)
    for k in fast:
        assert [float(x).hex() for x in fast[k]] == [float(x).hex() for x in slow[k]], k

