"""topologies.graph_ops: the graph operations the reliability models repeat on a large
fabric, checked against networkx's own (Graph.copy, shortest paths, connected parts)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies.edge_arrays import edge_arrays
from topologies.graph_ops import CellArrays, copy_graph, edge_key, shortest_path_part
from topologies.specs import build


def test_copy_is_graph_copy():
    g = build("torus:dims=4x4x2")
    h, ref = copy_graph(g), g.copy()
    assert type(h) is nx.Graph and h.graph == ref.graph
    assert list(h.nodes(data=True)) == list(ref.nodes(data=True))
    # every node's neighbours in the same order, with the same attributes
    assert [(n, list(h.adj[n].items())) for n in h] == [(n, list(ref.adj[n].items()))
                                                         for n in ref]
    u, v = next(iter(g.edges()))
    h.edges[u, v]["bandwidth"] = 1.0   # its own attribute dicts, one per link
    assert h.edges[v, u]["bandwidth"] == 1.0 and g.edges[u, v]["bandwidth"] != 1.0
    h.nodes[u]["kind"] = "x"
    assert g.nodes[u]["kind"] == "gpu"


def test_shortest_path_part_is_every_node_on_a_shortest_path():
    # 6x6 torus, gpu0 -> gpu14 (row 2, column 2): 4 hops, every node of the 3x3 square
    # between them (C(4, 2) = 6 paths); gpu0 -> gpu3 (half way round a side of 6): both ways,
    # the 7 nodes of row 0 but none of the others
    g = build("torus:dims=6x6")
    assert shortest_path_part(g._adj, "gpu0", "gpu14") == {
        f"gpu{6 * r + c}" for r in range(3) for c in range(3)}
    assert shortest_path_part(g._adj, "gpu0", "gpu3") == {f"gpu{c}" for c in range(6)}
    for a, b in (("gpu0", "gpu14"), ("gpu7", "gpu33"), ("gpu5", "gpu30")):
        want = {v for p in nx.all_shortest_paths(g, a, b) for v in p}
        assert shortest_path_part(g._adj, a, b) == want
    h = nx.Graph([(1, 2)])
    h.add_node(3)
    assert shortest_path_part(h._adj, 1, 3) is None


def test_partition_matches_networkx_components():
    # a ring of 8: one link gone leaves one part, a second one two (the arcs between them);
    # a node gone is left out of the labels
    g = build("ring:n=8")
    arrays = CellArrays(g)
    one = arrays.partition((), [("gpu2", "gpu3")])
    assert len(set(one.values())) == 1 and len(one) == 8
    two = arrays.partition((), [("gpu3", "gpu2"), ("gpu6", "gpu7")])   # either way round
    h = g.copy()
    h.remove_edges_from([("gpu2", "gpu3"), ("gpu6", "gpu7")])
    want = {frozenset(c) for c in nx.connected_components(h)}
    got: dict = {}
    for n, k in two.items():
        got.setdefault(k, set()).add(n)
    assert {frozenset(c) for c in got.values()} == want
    assert want == {frozenset({"gpu3", "gpu4", "gpu5", "gpu6"}),
                    frozenset({"gpu7", "gpu0", "gpu1", "gpu2"})}
    gone = arrays.partition({"gpu0", "gpu4"}, ())
    assert "gpu0" not in gone and len(set(gone.values())) == 2 and len(gone) == 6


@pytest.mark.parametrize("spec", ["ring:n=8", "fat-tree:k=4", "torus:dims=3x4", "ocs:gpus=16",
                                  "lite-groups:base=[leaf-spine:leaves=2,radix=4],lites=4"])
def test_cells_from_edge_arrays_are_the_cells_of_the_graph(spec):
    # (h323) hardware_radius's cutter takes its cells from the edge arrays the comparison
    # read already: the same nodes and links in the same order as read from the graph
    g = build(spec)
    mine, read = CellArrays(edges=edge_arrays(g)), CellArrays(g)
    assert mine.nodes == read.nodes == list(g) and mine.index == read.index
    assert (mine.lo.tolist(), mine.hi.tolist()) == (read.lo.tolist(), read.hi.tolist())
    assert list(zip(map(mine.nodes.__getitem__, mine.lo), map(mine.nodes.__getitem__, mine.hi),
                    strict=True)) == list(g.edges())
    gone, cut = [read.nodes[0]], list(g.edges())[-3:]
    assert mine.partition(gone, cut) == read.partition(gone, cut)
    with pytest.raises(TypeError, match="a graph or its edges"):
        CellArrays(g, edges=edge_arrays(g))


def test_kept_and_labels_by_position():
    # a ring of 8 by position: gpu0 gone and the link gpu4-gpu5 cut leave two arcs,
    # gpu1..gpu4 and gpu5..gpu7, and gpu0 a part of its own: 3 parts
    cells = CellArrays(build("ring:n=8"))
    dead = np.zeros(8, dtype=bool)
    dead[0] = True
    keep = cells.kept(dead, [(5, 4)])          # either way round
    assert int(keep.sum()) == 8 - 2 - 1
    parts, labels = cells.labels(keep)
    assert parts == 3
    assert len({labels[i] for i in (1, 2, 3, 4)}) == 1
    assert len({labels[i] for i in (5, 6, 7)}) == 1
    assert len({labels[0], labels[1], labels[5]}) == 3


def test_edge_key_one_order():
    assert edge_key("gpu1", "gpu0") == edge_key("gpu0", "gpu1") == ("gpu0", "gpu1")
    assert edge_key(10, 9) == (10, 9)   # by text: "10" < "9"


# ------------------------------------------------------------------ properties (h293)
# shortest_path_part searches once from a and walks back from b (a0af63f; it was two
# searches); partition reads arrays. Both against networkx on random graphs: isolated
# nodes, several parts, self-loops (a fabric is never a multigraph: schema refuses one)

_EDGES = st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15)), max_size=30)


def _random_graph(n, pairs):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((u % n, v % n) for u, v in pairs)
    return g


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 16), pairs=_EDGES, a=st.integers(0, 15), b=st.integers(0, 15))
def test_shortest_path_part_matches_networkx_distances(n, pairs, a, b):
    g = _random_graph(n, pairs)
    a, b = a % n, b % n
    got = shortest_path_part(g._adj, a, b)
    if not nx.has_path(g, a, b):
        assert got is None
        return
    da = nx.single_source_shortest_path_length(g, a)
    db = nx.single_source_shortest_path_length(g, b)
    assert got == {v for v in da if v in db and da[v] + db[v] == da[b]}


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 16), pairs=_EDGES, gone=st.sets(st.integers(0, 15), max_size=4),
       cut=st.lists(st.integers(0, 10**6), max_size=5))
def test_partition_matches_networkx_on_random_graphs(n, pairs, gone, cut):
    g = _random_graph(n, pairs)
    gone = {x % n for x in gone}
    edges = list(g.edges())
    cut = [edges[i % len(edges)][::(-1) ** i] for i in cut] if edges else []
    got: dict = {}
    for node, k in CellArrays(g).partition(gone, cut).items():
        got.setdefault(k, set()).add(node)
    h = g.copy()
    h.remove_edges_from(cut)
    h.remove_nodes_from(gone)
    assert sorted(map(sorted, got.values())) == sorted(map(sorted, nx.connected_components(h)))
