"""Cluster.local and Cluster.partition give their last answer again only for the same
component objects: a component equal by value but another object is worked out again (to
the same answer), one of the same name but other parts gets its own answer, and a list of
components that starts with the last one is not taken for it."""
from dataclasses import replace

import networkx as nx

from netmodel.study.reliability_cluster import build_cluster


def _parts(c, comps):
    """The cell's connected parts after ``comps``, by networkx, as sets of nodes."""
    g = c.graph.copy()
    g.remove_edges_from(e for comp in comps for e in comp.edges)
    g.remove_nodes_from({n for comp in comps for n in (*comp.nodes, *comp.disabled)})
    return sorted(map(sorted, nx.connected_components(g)))


def _grouped(part):
    out: dict = {}
    for n, k in part.items():
        out.setdefault(k, []).append(n)
    return sorted(sorted(v) for v in out.values())


def test_the_last_answer_is_given_again_only_for_the_same_objects():
    c = build_cluster("lite-hier", "Llama-3-70B", "decode")
    comps = [e.component for e in c.effects()]
    a = next(x for x in comps if x.nodes)
    b = next(x for x in comps if x.nodes and set(x.nodes) != set(a.nodes))
    first = c.local(a)
    twin = replace(a)                          # equal by value, another object
    assert twin == a and twin is not a
    assert c.local(twin) == first and c.local(twin) is not first
    impostor = replace(a, nodes=b.nodes, disabled=b.disabled, edges=b.edges)   # a's name
    assert c.local(impostor)[1:] == c._local(b)[1:] != first[1:]   # its own lost GPUs
    assert _grouped(c.partition([a])) == _parts(c, [a])
    assert _grouped(c.partition([impostor])) == _parts(c, [b])
    assert _grouped(c.partition([a, b])) == _parts(c, [a, b])   # starts with the last one
    assert _grouped(c.partition([a])) == _parts(c, [a])
    assert _grouped(c.partition(x for x in (b,))) == _parts(c, [b])   # a generator
