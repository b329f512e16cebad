"""The faster pieces of the hardware blast radius (:mod:`topologies.hardware_radius`, which
``netmodel topology compare`` reports; h237) give what the slower ones gave: articulation
points and bridges from one biconnected pass equal networkx's ``articulation_points`` and
``bridges``; the indexed tier-0 lookup of a host (:mod:`topologies.enclosures`) equals
the scan over every tier-0 switch. (Speed is measured by scripts/bench_topologies.py, not
here; the comparison's own link limit is tests/netmodel/test_topology_compare_link_limit.py.)
Moved from tests/netmodel/test_topology_compare_cut_points.py (h329)."""

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies import build
from topologies.enclosures import _held_index, _holds
from topologies.hardware_radius import _cut_points, hardware_radius


def _reference(g):
    return set(nx.articulation_points(g)), {frozenset(e) for e in nx.bridges(g)}


def test_hand_graphs():
    # a triangle 0-1-2 with a tail 2-3-4: cut nodes 2 and 3, bridges 2-3 and 3-4
    g = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)])
    assert _cut_points(g) == ({2, 3}, {frozenset((2, 3)), frozenset((3, 4))})
    # a cycle has neither; a star's centre is the one cut node and every spoke a bridge
    assert _cut_points(nx.cycle_graph(6)) == (set(), set())
    art, bridges = _cut_points(nx.star_graph(4))
    assert art == {0} and bridges == {frozenset((0, i)) for i in range(1, 5)}
    # two triangles sharing node 2 (a bowtie): 2 cuts, no bridge
    assert _cut_points(nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)])) == ({2}, set())
    # a self-loop takes networkx's path (biconnected components ignore it) and agrees
    g = nx.Graph([(0, 1), (1, 2), (1, 1)])
    assert _cut_points(g) == _reference(g) == ({1}, {frozenset((0, 1)), frozenset((1, 2))})


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 14), extra=st.lists(st.tuples(st.integers(0, 13), st.integers(0, 13)),
                                            max_size=20), seed=st.integers(0, 2**16))
def test_random_connected_graphs_match_networkx(n, extra, seed):
    tree = nx.random_labeled_tree(n, seed=seed) if hasattr(nx, "random_labeled_tree") \
        else nx.random_tree(n, seed=seed)
    g = nx.Graph(tree.edges())
    g.add_edges_from((u % n, v % n) for u, v in extra if u % n != v % n)
    assert _cut_points(g) == _reference(g)


def test_built_fabrics_match_networkx():
    for spec in ("leaf-spine:leaves=2,radix=4", "fat-tree:k=4", "superpod:sus=1",
                 "rail-optimized:domains=4"):
        g = build(spec)
        assert _cut_points(g) == _reference(g), spec


@given(held=st.dictionaries(st.sampled_from([f"sw{i}" for i in range(8)]),
                            st.frozensets(st.integers(0, 11), max_size=5), max_size=8),
       members=st.sets(st.integers(0, 11), max_size=12))
def test_indexed_holds_equals_the_scan(held, members):
    assert _holds(held, members, _held_index(held)) == _holds(held, members)


def test_superpod_hosts_hold_their_nvswitch():
    # superpod:sus=1: 31 DGX H100 of 8 GPUs, each baseboard's NVSwitch (one node, tier 0)
    # wired to its 8 GPUs only, so its host holds it: a host failure removes 8 GPUs and the
    # switch, and the switch alone stops its 8 GPUs. The indexed lookup finds it
    from topologies.failure_domains import components

    g = build("superpod:sus=1")
    hosts = components(g, gpus_per_host=8)["host"]
    assert len(hosts) == 31
    assert hosts[0].nodes == (*(f"gpu{i}" for i in range(8)), "nvs0")
    assert hosts[30].nodes == (*(f"gpu{i}" for i in range(240, 248)), "nvs30")
    r = {b.cls: b for b in hardware_radius(g, gpus_per_host=8)}
    assert r["host"].gpus_max == 8 and r["nvswitch"].gpus_max == 8


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 14), pairs=st.lists(st.tuples(st.integers(0, 13), st.integers(0, 13)),
                                            max_size=20))
def test_random_graphs_of_several_parts_match_networkx(n, pairs):
    # (h293) the graphs above are connected; _low_positions starts a search at every node
    # not yet seen, so parts, isolated nodes and an empty graph are as networkx has them
    # (and a self-loop sends the graph to networkx's own)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((u % n, v % n) for u, v in pairs if n)
    assert _cut_points(g) == _reference(g)
