"""Shortest paths towards many destinations on a torus of one bandwidth, translated from one
destination's (``route_dags.DagRoutes._translated_dags``), against the breadth-first search
of every destination (``_searched_dags``) and against a reference written from the
definition with networkx: hops by ``single_source_shortest_path_length``, a node's next
hops its neighbours one hop nearer in its adjacency order, each next hop's share the least
of its bandwidth and what the next node passes on, a node's total their sum in turn."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from topologies import build


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert len(x) == len(y) == 6
        for p, q in zip(x, y, strict=True):
            assert p.dtype == q.dtype and p.shape == q.shape
            assert np.array_equal(p, q)


def _by_definition(r: Router, d: int) -> tuple:
    """The arrays of ``_dag_csrs`` for destination ``d``, from the definition."""
    g, nodes, nid = r.graph, r._nodes, r._nid
    hops = nx.single_source_shortest_path_length(g, nodes[d])
    dist = np.array([hops.get(x, -1) for x in nodes], dtype=np.int64)
    nxt = [[nid[v] for v in r._adj[x] if dist[nid[v]] == dist[u] - 1] if dist[u] >= 1
           else [] for u, x in enumerate(nodes)]
    cap = {d: math.inf}
    share: dict = {}
    for u in sorted(range(len(nodes)), key=lambda u: dist[u]):   # nearest first
        if dist[u] < 1:
            continue
        share[u] = [min(float(r._route_bw[r.link_id(nodes[u], nodes[v])]), cap[v])
                    for v in nxt[u]]
        total = 0.0
        for s in share[u]:
            total += s
        cap[u] = total
    ptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in nxt])
    v = [w for x in nxt for w in x]
    lid = [r.link_id(nodes[u], nodes[w]) for u in range(len(nodes)) for w in nxt[u]]
    bw = [s for u in range(len(nodes)) for s in share.get(u, [])]
    tot = [cap[u] for u in range(len(nodes)) for _ in nxt[u]]
    return (dist, ptr, np.array(v, dtype=np.int64), np.array(lid, dtype=np.int64),
            np.array(bw, dtype=float), np.array(tot, dtype=float))


# 1 to 3 sides of 3 to 6, or all of 2 (one edge of 2 cables: one bandwidth again)
DIMS = st.one_of(st.lists(st.integers(3, 6), min_size=1, max_size=3),
                 st.integers(1, 3).map(lambda k: [2] * k))


@settings(max_examples=40, deadline=None)
@given(sides=DIMS, data=st.data())
def test_translated_equals_searched_and_the_definition(sides, data):
    r = Router(build(f"torus:dims={'x'.join(map(str, sides))}"))
    shifts = r._torus_shifts()
    assert shifts is not None   # the fast path is the one under test
    n = r._n
    dst = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=12,
                                      unique=True)), dtype=np.int64)
    fast = r._translated_dags(dst, shifts)
    _same(fast, r._searched_dags(dst))
    _same(fast[:2], [_by_definition(r, d) for d in dst[:2].tolist()])


@pytest.mark.parametrize("spec", ["torus:dims=2x3x4", "torus:dims=3x2", "fat-tree:k=4",
                                  "ring:n=8"])
def test_other_fabrics_search(spec):
    """Sides of 2 beside longer ones (a 2-cable edge: two bandwidths) and other fabrics
    keep the search."""
    r = Router(build(spec))
    assert r._torus_shifts() is None
    dst = np.arange(min(r._n, 9), dtype=np.int64)
    _same(list(r._build_dags(dst).values()), r._searched_dags(dst))


def test_a_failed_link_or_other_numbering_keeps_the_search():
    g = build("torus:dims=4x4")
    g.remove_edge("gpu0", "gpu1")
    assert Router(g)._torus_shifts() is None
    h = build("torus:dims=4x4")

    def listed(order):   # the same torus, its nodes listed (numbered) in another order
        k = nx.Graph(**h.graph)
        k.add_nodes_from((x, h.nodes[x]) for x in order)
        k.add_edges_from(h.edges(data=True))
        return Router(k)
    shuffled = list(h)
    np.random.default_rng(1).shuffle(shuffled)
    assert listed(shuffled)._torus_shifts() is None
    # listed backwards, node i is at the coordinates of -i: a torus on the numbers again
    back = listed(list(h)[::-1])
    assert back._torus_shifts() is not None
    dst = np.arange(16, dtype=np.int64)
    _same(back._translated_dags(dst, back._torus_shifts()), back._searched_dags(dst))
    r = Router(build("torus:dims=4x4"))
    r._route_bw = r._route_bw.copy()
    r._route_bw[0] *= 2   # one link routed by another bandwidth
    assert r._torus_shifts() is None


def test_whole_torus_costs_equal_with_and_without_translation(monkeypatch):
    """Every algorithm's curve of an all-reduce on all 64 GPUs of a 4x4x4 torus (direct's
    2,016 pairs spread over the shortest paths) is the same to the bit either way."""
    g = build("torus:dims=4x4x4")
    fast = FabricCostModel(g, validated=True).curves("all-reduce", [1e3, 2.0 ** 26], 64)
    monkeypatch.setattr(Router, "_torus_shifts", lambda self: None)
    slow = FabricCostModel(g, validated=True).curves("all-reduce", [1e3, 2.0 ** 26], 64)
    assert "direct" in fast and sorted(fast) == sorted(slow)
    for k in fast:
        assert np.array_equal(fast[k], slow[k]), k
