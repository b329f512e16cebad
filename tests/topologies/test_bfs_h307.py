"""One breadth-first search (h307): graph_ops.ball (distances, stopping at a target's depth)
is the building block of analysis._bfs (distances and shortest-path counts, for path
diversity), which had its own queue search; graph_ops.path_counts adds the counts. Checked
against networkx's distances and a brute-force count (walks of exactly the distance's
length, from powers of the adjacency matrix: such a walk is a shortest path) on random
graphs with isolated nodes, several parts and self-loops. And summary takes the edge
arrays its caller has (topology compare), another graph's refused in one line.

Since h754 path diversity searches and counts on the edge arrays
(graph_ops.hop_array, graph_ops.path_count): checked against the same two references (and
ball / path_counts) on the same random graphs."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from topologies import build
from topologies.analysis import PathDiversity, path_diversity, summary
from topologies.edge_arrays import edge_arrays
from topologies.graph_ops import ball, hop_array, path_count, path_counts

_EDGES = st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=30)


def _random_graph(n, pairs):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((u % n, v % n) for u, v in pairs)
    return g


def _walks(g, a, dist):
    """Walks of exactly dist[v] hops from a to each v: adjacency matrix powers."""
    nodes = list(g)
    m = nx.to_numpy_array(g, nodelist=nodes, weight=None, dtype=np.int64)
    row = np.zeros(len(nodes), dtype=np.int64)
    row[nodes.index(a)] = 1
    by_hops = [row]
    for _ in range(max(dist.values())):
        by_hops.append(by_hops[-1] @ m)
    return {v: int(by_hops[d][nodes.index(v)]) for v, d in dist.items()}


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 12), pairs=_EDGES, a=st.integers(0, 11), b=st.integers(0, 11))
def test_ball_and_counts_match_networkx_and_brute_force(n, pairs, a, b):
    g = _random_graph(n, pairs)
    a, b = a % n, b % n
    want = nx.single_source_shortest_path_length(g, a)
    whole = ball(g._adj, a)
    assert whole == want
    assert list(whole.values()) == sorted(whole.values())   # in the order reached
    assert path_counts(g._adj, whole) == _walks(g, a, want)
    part = ball(g._adj, a, b)
    if b not in want:
        assert part is None
    else:
        assert part == {v: d for v, d in want.items() if d <= want[b]}
    # the same search and counts on arrays of the links (positions = node order)
    nodes = list(g)
    u = np.array([nodes.index(x) for x, _ in g.edges()], dtype=np.int64)
    v = np.array([nodes.index(y) for _, y in g.edges()], dtype=np.int64)
    hops = hop_array(n, u, v, nodes.index(a))
    assert {nodes[i]: h for i, h in enumerate(hops.tolist()) if h >= 0} == want
    walks = _walks(g, a, want)
    for x in want:
        assert path_count(u, v, hops, nodes.index(a), nodes.index(x)) == walks[x]
    if b not in want:
        with pytest.raises(ValueError, match="not reached"):
            path_count(u, v, hops, nodes.index(a), nodes.index(b))


def test_counts_hand_derived():
    # 4x4 torus: gpu0 (0, 0) to gpu10 (2, 2) is 2 + 2 hops, C(4, 2) = 6 orders of them,
    # each ring's 2 hops either way round (x 2 x 2): 24; to gpu5 (1, 1), 2 orders; a 4-ary
    # fat tree's far pair (k/2)^2 = 4 paths through the cores; a ring of 8 to its antipode, 2
    adj = build("torus:dims=4x4")._adj
    assert path_counts(adj, ball(adj, "gpu0", "gpu10"))["gpu10"] == 24
    assert path_counts(adj, ball(adj, "gpu0", "gpu5"))["gpu5"] == 2
    assert path_diversity(build("fat-tree:k=4")).paths == 4
    assert path_diversity(build("ring:n=8")).paths == 2
    # 4x4x4 torus, gpu0 to its antipode (2, 2, 2): 6!/(2!2!2!) = 90 orders of the six hops,
    # each side's two either way round (x 2^3): 720
    assert path_diversity(build("torus:dims=4x4x4")) == PathDiversity("gpu0", "gpu42", 6, 720)


def test_summary_takes_its_own_edges_and_refuses_another_graphs():
    g = build("leaf-spine:leaves=2,radix=4")
    assert summary(g, edges=edge_arrays(g)) == summary(g)
    with pytest.raises(UserError, match=r"^edges must be edge_arrays\(graph\) of this graph "
                       r"\(8 nodes, 8 links\), got another graph's \(24 nodes, 32 links\)$"):
        summary(g, edges=edge_arrays(build("leaf-spine:leaves=4,radix=8")))
    with pytest.raises(UserError, match=r"^edges must be a topologies.edge_arrays.EdgeArrays"):
        summary(g, edges=[1, 2])
