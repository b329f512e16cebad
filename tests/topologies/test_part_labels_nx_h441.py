"""CellArrays.part_labels, labels_to_parts and largest_part against networkx over random
graphs: the parts are networkx's connected components of the graph without the nodes and
links gone, -1 exactly for a node gone, the dict the one the old node-by-node walk made,
and the largest part of the marked nodes (GPUs) the first of the largest in the graph's node
order, as Cluster.main_part's walk over a partition dict picks it."""

from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies.graph_ops import CellArrays, labels_to_parts, largest_part


@st.composite
def cells(draw):
    n = draw(st.integers(1, 14))
    order = draw(st.permutations(range(n)))          # node order not sorted by name
    g = nx.Graph()
    g.add_nodes_from(f"n{i}" for i in order)
    pairs = [(f"n{a}", f"n{b}") for a in range(n) for b in range(a + 1, n)]
    g.add_edges_from(draw(st.lists(st.sampled_from(pairs), max_size=2 * n)) if pairs else ())
    nodes = list(g)
    gone = set(draw(st.lists(st.sampled_from(nodes), max_size=n // 2)))
    edges = list(g.edges)
    cut = draw(st.lists(st.sampled_from(edges), max_size=len(edges))) if edges else []
    cut = [(v, u) if draw(st.booleans()) else (u, v) for u, v in cut]   # either way round
    marked = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    return g, gone, cut, marked


@settings(max_examples=300, deadline=None)
@given(cells())
def test_part_labels_are_networkx_components(cell):
    g, gone, cut, marked = cell
    arrays = CellArrays(g)
    nodes = arrays.nodes
    labels = arrays.part_labels(gone, cut)
    assert [n for n, k in zip(nodes, labels, strict=True) if k == -1] == \
        [n for n in nodes if n in gone]
    h = g.copy()
    h.remove_edges_from(cut)
    h.remove_nodes_from(gone)
    comp = {n: i for i, c in enumerate(nx.connected_components(h)) for n in c}
    pos = {n: i for i, n in enumerate(nodes)}
    for a in h:
        for b in h:
            assert (labels[pos[a]] == labels[pos[b]]) == (comp[a] == comp[b])
    parts = labels_to_parts(nodes, labels)
    assert parts == {nodes[i]: int(labels[i]) for i in range(len(nodes)) if nodes[i] not in gone}
    assert list(parts) == [n for n in nodes if n not in gone]
    assert arrays.partition(gone, cut) == parts

    # the largest part of the marked nodes, the first in node order on a tie
    main, off = largest_part(labels, marked)
    sizes: dict = {}
    for n in nodes:   # Cluster.main_part's walk over the partition dict
        if n in parts and marked[pos[n]]:
            sizes[parts[n]] = sizes.get(parts[n], 0) + 1
    walk = max(sizes, key=lambda k: sizes[k]) if sizes else None
    assert main == walk
    alive = [n for n in h if marked[pos[n]]]
    if not alive:
        assert (main, off) == (None, 0)
        return
    count = {c: sum(1 for n in alive if comp[n] == c) for c in set(comp.values())}
    best = max(count.values())
    first = min((n for n in alive if count[comp[n]] == best), key=pos.__getitem__)
    assert labels[pos[first]] == main
    assert off == len(alive) - best
