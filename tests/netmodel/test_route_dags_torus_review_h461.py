"""Review of the translated shortest paths on a torus (``route_dags.DagRoutes._torus_shifts``
and ``_translated_dags``): hand-built tori with random node labels, random neighbour order
(the order of the edges added, which is each node's order of next hops), nodes listed in the
order of a random symmetry of the torus (translation, reflection and exchange of equal
sides: a torus on the numbers again) or shuffled, sides of 1, 2 (one cable or an edge of
two) and 3 to 5, GPUs and switches, one bandwidth or one link off it. Whatever the check
decides, the arrays of ``_build_dags`` equal the breadth-first search's (``_searched_dags``)
to the bit and dtype and a reference from networkx by definition (hops from
``shortest_path_length`` over GPUs and switches; next hops the neighbours that start a shortest path, from
``all_shortest_paths``, in the node's adjacency order; shares the least of the link's
bandwidth and what the next node passes on; totals summed in order). The check takes the
fast path exactly where the graph is, by construction, a torus of one bandwidth numbered
along a symmetry of it with the graph's ``dims``."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from topologies import build


def _reference(r: Router, d: int) -> tuple:
    g, nodes, nid = r.graph, r._nodes, r._nid
    target = nodes[d]
    # paths pass GPUs and switches only (another kind of node is an end at most)
    g = g.subgraph([x for x in nodes if x == target
                    or g.nodes[x].get("kind") in ("gpu", "switch")])
    hops = dict(nx.single_target_shortest_path_length(g, target))
    dist = np.array([hops.get(x, -1) for x in nodes], dtype=np.int64)
    nxt = []
    for u, x in enumerate(nodes):
        if dist[u] < 1:
            nxt.append([])
            continue
        # the second node of a shortest path to the target: a neighbour one hop nearer
        # (what nx.all_shortest_paths' paths start with, without listing every path)
        starts = {v for v in g.adj[x] if hops.get(v) == dist[u] - 1}
        nxt.append([nid[v] for v in r._adj[x] if v in starts])
    cap = {d: math.inf}
    share = {}
    for u in sorted(range(len(nodes)), key=lambda w: dist[w]):
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
    return (dist, ptr,
            np.array([v for x in nxt for v in x], dtype=np.int64),
            np.array([r.link_id(nodes[u], nodes[v]) for u in range(len(nodes))
                      for v in nxt[u]], dtype=np.int64),
            np.array([s for u in range(len(nodes)) for s in share.get(u, [])], dtype=float),
            np.array([cap[u] for u in range(len(nodes)) for _ in nxt[u]], dtype=float))


def _same(a, b) -> None:
    assert len(a) == len(b) == 6
    for p, q in zip(a, b, strict=True):
        assert p.dtype == q.dtype and p.shape == q.shape
        assert np.array_equal(p, q)


def _torus(sides, *, two, kinds, labels, order, edge_order, bw, odd_link, rng):
    """A torus of ``sides`` built by hand: returns (graph, is a torus of one bandwidth on
    its numbers)."""
    coords = list(itertools.product(*(range(s) for s in sides)))
    edges = {}
    for c in coords:
        for k, s in enumerate(sides):
            if s == 1:
                continue
            e = list(c)
            e[k] = (c[k] + 1) % s
            key = frozenset((c, tuple(e)))
            if key in edges:   # a side of 2: the wrap is the same pair
                if two == "double":
                    edges[key] = 2
                continue
            edges[key] = 1
    label = {c: labels(i) for i, c in enumerate(coords)}
    g = nx.Graph(name="hand torus", spec="", gpus=len(coords),
                 dims="x".join(map(str, sides)))
    listed = [coords[i] for i in order]
    for c in listed:
        kind = kinds[coords.index(c)]
        attrs = {"kind": kind}
        if kind == "gpu":
            attrs["gpu"] = "H100-SXM"
        elif kind == "switch":
            attrs.update(tier=0, radix=8, latency=1e-7, in_network_reduction=False)
        g.add_node(label[c], **attrs)
    keys = list(edges)
    rng.shuffle(keys)
    if edge_order == "sorted":
        keys.sort(key=lambda e: sorted(e))
    for i, key in enumerate(keys):
        a, b = sorted(key)
        if rng.random() < 0.5:
            a, b = b, a
        f = 1.5 if (odd_link and i == 0) else 1.0
        g.add_edge(label[a], label[b], bandwidth=bw * edges[key] * f, latency=1e-8,
                   medium="copper", lanes=1, links=edges[key])
    bws = {d["bandwidth"] for _, _, d in g.edges(data=True)}
    return g, bws


def _symmetry(sides, rng):
    """The coordinates' row-major indices listed along a random symmetry of the torus
    (translation, reflection of each side, exchange of equal sides)."""
    coords = list(itertools.product(*(range(s) for s in sides)))
    index = {c: i for i, c in enumerate(coords)}
    shift = [int(rng.integers(s)) for s in sides]
    flip = [bool(rng.integers(2)) for _ in sides]
    perm = list(range(len(sides)))
    for _ in range(3):
        i, j = rng.integers(len(sides), size=2)
        if sides[i] == sides[j]:
            perm[i], perm[j] = perm[j], perm[i]

    def move(c):
        c = [c[p] for p in perm]
        return tuple(((-x if f else x) + t) % s
                     for x, f, t, s in zip(c, flip, shift, sides, strict=True))
    return [index[move(c)] for c in coords]


LABELS = {
    "gpu": lambda i: f"gpu{i}",
    "int": lambda i: 1000 - 7 * i,
    "tuple": lambda i: ("n", i % 3, i),
}


@settings(max_examples=200, deadline=None)
@given(sides=st.one_of(st.lists(st.integers(2, 5), min_size=1, max_size=3),
                       st.lists(st.integers(1, 5), min_size=1, max_size=3)),
       two=st.sampled_from(["one", "double"]),
       numbering=st.sampled_from(["row-major", "symmetry", "symmetry", "shuffled"]),
       kinds=st.sampled_from(["gpu", "gpu", "mixed", "other"]),
       labels=st.sampled_from(sorted(LABELS)),
       edge_order=st.sampled_from(["random", "sorted"]),
       odd_link=st.integers(0, 3).map(lambda x: x == 0),
       seed=st.integers(0, 2 ** 32 - 1), data=st.data())
def test_fast_path_only_on_uniform_tori_and_equal_to_the_definition(
        sides, two, numbering, kinds, labels, edge_order, odd_link, seed, data):
    rng = np.random.default_rng(seed)
    n = math.prod(sides)
    if n < 2:
        return
    if numbering == "row-major":
        order = list(range(n))
    elif numbering == "symmetry":
        order = _symmetry(sides, rng)
    else:
        order = list(rng.permutation(n))
    kind = ["gpu"] * n
    if kinds != "gpu":
        for i in rng.choice(n, size=max(1, n // 4), replace=False).tolist():
            kind[i] = "switch" if kinds == "mixed" else "other"
    g, bws = _torus(sides, two=two, kinds=kind, labels=LABELS[labels], order=order,
                    edge_order=edge_order, bw=float(rng.integers(1, 100)) * 1e9,
                    odd_link=odd_link, rng=rng)
    r = Router(g)
    on_numbers = all(
        {r._nid[v] for v in g.adj[x]} ==
        {int(np.ravel_multi_index(
            tuple((np.array(np.unravel_index(i, sides)) + step * np.eye(len(sides), dtype=int)[k])
                  % np.array(sides)), sides))
         for k, s in enumerate(sides) if s > 1 for step in (-1, 1)}
        for i, x in enumerate(r._nodes))
    torus_of_one_bw = (min(sides) >= 2 and len(bws) == 1 and kinds != "other"
                       and on_numbers)
    if numbering != "shuffled" and min(sides) >= 2:
        assert on_numbers   # a symmetry's listing is a torus on the numbers
    assert (r._torus_shifts() is not None) == torus_of_one_bw
    dst = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6,
                                      unique=True)), dtype=np.int64)
    built = r._build_dags(dst)
    got = [built[d] for d in dst.tolist()]
    _same_all(got, r._searched_dags(dst))
    for d, a in zip(dst[:2].tolist(), got[:2], strict=True):
        _same(a, _reference(r, d))


def _same_all(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        _same(x, y)


def test_dims_that_misname_the_torus_keep_the_search_or_are_tori_too():
    """A 4x4 torus whose ``dims`` says 16, 2x8 or 8x2 (a ring, other tori): the numbers do
    not make the torus those sides say, so the search; '4x4' itself: the fast path."""
    for dims, fast in (("16", False), ("2x8", False), ("8x2", False), ("4x4", True),
                       ("4x4x1", False), ("x", False), ("", False)):
        g = build("torus:dims=4x4")
        g.graph["dims"] = dims
        r = Router(g)
        assert (r._torus_shifts() is not None) == fast, dims
        dst = np.arange(16, dtype=np.int64)
        _same_all([r._build_dags(dst)[d] for d in range(16)], r._searched_dags(dst))


def test_curves_equal_with_shuffled_neighbour_order():
    """Every algorithm's curve of an all-reduce on a 4x4x4 torus rebuilt with its edges
    added in a random order (each GPU's next hops in another order: the spread's order),
    with and without the translation, to the bit."""
    h = build("torus:dims=4x4x4")
    rng = np.random.default_rng(7)
    edges = list(h.edges(data=True))
    rng.shuffle(edges)
    g = nx.Graph(**h.graph)
    g.add_nodes_from(h.nodes(data=True))
    for u, v, d in edges:
        g.add_edge(*((u, v) if rng.random() < 0.5 else (v, u)), **d)
    assert [list(g.adj[x]) for x in g] != [list(h.adj[x]) for x in h]
    assert Router(g)._torus_shifts() is not None
    fast = FabricCostModel(g, validated=True).curves("all-reduce", [1e3, 2.0 ** 26], 64)
    saved = Router._torus_shifts
    try:
        Router._torus_shifts = lambda self: None
        slow = FabricCostModel(g, validated=True).curves("all-reduce", [1e3, 2.0 ** 26], 64)
    finally:
        Router._torus_shifts = saved
    assert "direct" in fast and sorted(fast) == sorted(slow)
    for k in fast:
        assert np.array_equal(fast[k], slow[k]), k
