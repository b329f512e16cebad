"""Analysis: closed forms agree with exact max-flow and BFS; hand-derived counts."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build, fat_tree, lite_groups, ocs, realize, ring, superpod, torus
from topologies.analysis import (
    bisection_maxflow,
    diameter,
    injection_bandwidth,
    path_diversity,
    summary,
)
from topologies.closed_forms import closed_form
from topologies.inventory import bill_of_materials

SMALL = [
    "ring:n=2", "ring:n=7", "ring:n=8", "full-mesh:n=5", "full-mesh:n=6",
    "torus:dims=4x3", "torus:dims=2x3x4", "torus:dims=3x8", "torus:dims=6", "torus:dims=5",
    "single-switch:n=7", "flat:n=9,planes=3,radix=16",
    "leaf-spine:leaves=1,radix=8", "leaf-spine:leaves=4,radix=8",
    "leaf-spine:leaves=6,radix=8,oversubscription=2",
    "fat-tree:k=2", "fat-tree:k=4", "fat-tree:k=6", "fat-tree:k=8,oversubscription=2",
    "fat-tree:k=8,pods=1", "fat-tree:k=6,pods=4", "fat-tree:k=8,oversubscription=4,pods=2",
    "rail-optimized:domains=1", "rail-optimized:domains=2", "rail-optimized:domains=3",
    "rail-optimized:domains=5,domain_size=4,gpus_per_server=2,servers_per_leaf=3",
    "rail-optimized:domains=6,domain_size=3,gpus_per_server=1,servers_per_leaf=4",
    "rail-optimized:domains=4,domain_size=2,gpus_per_server=1,servers_per_leaf=32",
    "superpod", "nvl72", "nvl72:racks=2", "ocs:gpus=10,ports=3",
]


def _unstructured(g):
    g = g.copy()
    g.graph["spec"] = ""
    return g


@pytest.mark.parametrize("spec", SMALL)
def test_closed_form_matches_exact_computation(spec):
    g = build(spec)
    form = closed_form(g)
    assert form is not None
    exact_diameter, how = diameter(_unstructured(g))
    assert how == "breadth-first search"
    assert form.diameter == exact_diameter
    if form.bisection is not None:
        assert form.bisection == pytest.approx(bisection_maxflow(g), rel=1e-9)


NO_CLOSED_BISECTION = ["fat-tree:k=6,pods=3", "leaf-spine:leaves=3,radix=8", "torus:dims=3x5",
                       "torus:dims=2x2x3",
                       "rail-optimized:domains=3,domain_size=3,gpus_per_server=1"]


def test_odd_halves_are_left_to_max_flow():
    assert [s for s in SMALL if closed_form(build(s)).bisection is None] == []
    for spec in NO_CLOSED_BISECTION:
        g = build(spec)
        assert closed_form(g).bisection is None
        s = summary(g)
        assert s.bisection_method == "max-flow"
        assert s.bisection_bandwidth == pytest.approx(bisection_maxflow(g))
        assert s.diameter_method == "closed form"


def test_hand_derived_bisections():
    # 16 GPUs, non-blocking: half of them at 50 GB/s
    assert closed_form(fat_tree(4)).bisection == 8 * 50e9
    # oversubscription 2 halves what crosses the leaves
    assert closed_form(fat_tree(8, oversubscription=2)).bisection == 64 * 50e9 / 2
    # a 4x4 torus cut across its first side: 2 * 4 links of 450/4 GB/s
    assert closed_form(torus("4x4")).bisection == pytest.approx(8 * 450e9 / 4)
    # SuperPOD 1 SU: 31 domains (odd); 124 NICs of 50 GB/s + half a domain over NVLink
    assert closed_form(superpod(1)).bisection == pytest.approx(124 * 50e9 + 4 * 450e9)


def test_torus_bisection_is_the_narrowest_half_cut():
    # 4x8 and 8x4 are one fabric. Its narrowest half cut is the plane across the 8-side:
    # 2 x 4 links of 450/4 GB/s = 900 GB/s (a k-ary n-cube cut crosses 2 k^(n-1) links,
    # Dally & Towles 2004, 3.3); the cut across the 4-side (16 links, 1.8 TB/s) is not it
    for dims in ("4x8", "8x4"):
        g = torus(dims)
        assert closed_form(g).bisection == pytest.approx(8 * 450e9 / 4)
        assert summary(_unstructured(g)).bisection_bandwidth == pytest.approx(900e9)
    # 2x8: 2 x 2 links of 112.5 GB/s across the 8-side (not 8 double cables: 1.8 TB/s)
    assert closed_form(torus("2x8")).bisection == pytest.approx(450e9)
    # 4x4x8: 2 x 16 links of 450/6 GB/s = 2.4 TB/s (not 32 links: 4.8 TB/s)
    assert closed_form(torus("4x4x8")).bisection == pytest.approx(32 * 75e9)
    # 3x4: the 4-side halves evenly; 2 x 3 links of 112.5 GB/s
    assert closed_form(torus("3x4")).bisection == pytest.approx(6 * 112.5e9)
    # the same torus made of OCS circuits (4 ports of 112.5 GB/s): 8 circuits cross, not 16
    for dims in ("4x8", "8x4"):
        s = summary(build(f"ocs:gpus=32,ports=4,logical=torus:{dims}"))
        assert s.bisection_bandwidth == pytest.approx(8 * 112.5e9)


def test_removed_link_disables_the_closed_form():
    g = fat_tree(4)
    g.remove_edge("leaf0", "spine0")
    g.remove_edge("leaf1", "spine0")
    assert closed_form(g) is None
    s = summary(g)
    assert s.bisection_method == "max-flow" and s.bisection_bandwidth == pytest.approx(300e9)


def test_path_diversity_counts():
    assert path_diversity(fat_tree(8)).paths == 16          # (k/2)^2 cores
    assert path_diversity(fat_tree(8), "gpu0", "gpu5").paths == 4  # same pod: k/2 spines
    assert path_diversity(torus("3x3"), "gpu0", "gpu4").paths == 2  # one step in x and y
    p = path_diversity(ring(6), "gpu0", "gpu3")
    assert (p.hops, p.paths) == (3, 2)
    with pytest.raises(UserError, match="'leaf0' is not a GPU"):
        path_diversity(fat_tree(4), "leaf0", "gpu1")


def test_bom_counts_optics_by_end():
    b = bill_of_materials(fat_tree(4))
    assert b.cables == {"pluggable-optics": 48} and b.pluggable_transceivers == 96
    assert b.switch_ports_used == 16 + 2 * 32 + 0 and b.switch_ports == 20 * 4
    o = bill_of_materials(ocs(gpus=8, ports=2))  # CPO at the GPU, passive OCS
    assert (o.cpo_ports, o.ocs_ports_used, o.pluggable_transceivers) == (16, 16, 0)
    r = bill_of_materials(realize(ocs(gpus=8, ports=2), "ring"))
    assert (r.circuits, r.cpo_ports, r.ocs_ports_used) == (8, 16, 16)
    lite = bill_of_materials(lite_groups("fat-tree:k=4", lites=4))
    # 16 NICs split 4 ways: 64 Lite-side transceivers, still 16 leaf ports
    assert lite.switch_ports_used == 16 + 2 * 32 and lite.pluggable_transceivers == 64 + 16 + 64


def test_baseboard_nvlinks_are_traces_not_cables():
    # h100-dgx's fabric (rail-optimized's defaults): 4 DGX H100 of 8 GPUs, each GPU's 18
    # NVLinks to the NVSwitch chips of its own HGX baseboard: 32 x 18 = 576 board traces and
    # no copper cable (the bill said 'copper 576'); 32 NIC cables + 8 leaves x 32 uplinks =
    # 288 optical cables
    b = bill_of_materials(build("rail-optimized:domains=4,domain_size=8,gpus_per_server=8"))
    assert b.cables == {"pluggable-optics": 32 + 8 * 32}
    assert b.traces == {"board": 32 * 18}
    assert b.lanes == 32 * 36 + 32 * 4 + 8 * 32 * 4 == 2304      # lanes as before
    assert b.switch_ports_used == 32 * 18 + 32 + 8 * 32 + 8 * 32 == 1120
    # an NVL72 rack: 18 compute trays cabled to 9 NVLink switch trays: 72 x 18 copper cables
    assert bill_of_materials(build("nvl72")).cables == {"copper": 72 * 18}
    # a domain of 2 servers leaves the board: copper
    two = bill_of_materials(build("rail-optimized:domains=2,domain_size=16"))
    assert two.cables["copper"] == 32 * 18 and two.traces == {}
    # the Lites of an H100's package group share its board traces
    lite = bill_of_materials(build("lite-groups:base=[rail-optimized:domains=4],lites=4"))
    assert lite.traces == {"board": 32 * 18} and "copper" not in lite.cables


def test_injection_and_summary_fields():
    low, peers = injection_bandwidth(lite_groups("superpod", lites=4))
    assert low == pytest.approx(450e9 / 4 + 50e9 / 4 + 112.5e9)
    s = summary(build("ocs:gpus=8,ports=2,logical=ring"))
    assert s.reconfiguration_time == 0.01 and s.ocs == 2 and s.diameter == 4
    d = s.to_dict()
    assert d["bom"]["circuits"] == 8
    assert d["path_diversity"] == {"source": "gpu0", "target": "gpu4", "hops": 4, "paths": 2}


def test_islands_have_no_diameter():
    g = realize(ocs(gpus=8, ports=2), "0-1;2-3")
    s = summary(g)
    assert s.diameter is None and s.bisection_bandwidth is None


def test_maxflow_size_limit():
    with pytest.raises(UserError, match="limited to 5000 nodes"):
        bisection_maxflow(fat_tree(28))


def test_realized_ocs_keeps_the_bill_of_its_cabling():
    # 16 GPUs x 4 co-packaged ports, one fibre each to its OCS: 64 fibres, 64 CPO ports,
    # 64 OCS ports taken, 64 x 9 lanes (112.5 GB/s at 12.5 GB/s a lane). Mirrors making a
    # ring (16 circuits on 2 of the 4 ports) take no fibre or optics out of the rack: the
    # old bill said no cables, 32 CPO ports, 32 OCS ports, 144 lanes
    bare = bill_of_materials(ocs(gpus=16, ports=4))
    ring_ = bill_of_materials(realize(ocs(gpus=16, ports=4), "ring"))
    assert (bare.cables, bare.cpo_ports, bare.ocs_ports_used, bare.lanes) == \
        ({"co-packaged-optics": 64}, 64, 64, 576)
    assert (ring_.cables, ring_.cpo_ports, ring_.ocs_ports_used, ring_.lanes,
            ring_.circuits) == ({"co-packaged-optics": 64}, 64, 64, 576, 16)
    plug = bill_of_materials(realize(ocs(gpus=16, ports=4, medium="pluggable-optics"),
                                     "torus:4x4"))
    assert (plug.pluggable_transceivers, plug.cpo_ports, plug.circuits) == (64, 0, 32)


def test_injection_split_adds_up_to_the_smallest_injection():
    """The split by peer was gpu0's while the headline is the smallest GPU's: on
    lite-groups split=gateway Lite 0 (gpu0) carries the big GPU's 450 GB/s NVLink and
    50 GB/s NIC besides its 3 x 37.5 GB/s mesh (612.5 GB/s), the other Lites only the mesh
    (112.5 GB/s), and show printed '112.5 GB/s (gpu: 112.5, switch tier 0: 450, switch
    tier 1: 50)', parts adding to 612.5 (helper 86)."""
    from topologies import build
    from topologies.analysis import injection_bandwidth

    g = build("lite-groups:base=[rail-optimized:domains=4],lites=4,split=gateway")
    low, peers = injection_bandwidth(g)
    assert low == pytest.approx(3 * 37.5e9)
    assert peers == {"gpu": pytest.approx(112.5e9)}
    assert sum(peers.values()) == pytest.approx(low)
    # a uniform fabric keeps gpu0's split: 450 GB/s NVLink + 50 GB/s NIC
    low, peers = injection_bandwidth(build("superpod"))
    assert (low, peers) == (500e9, {"switch tier 0": 450e9, "switch tier 1": 50e9})


def test_path_diversity_refuses_one_gpu_twice_and_cuts_a_long_name():
    """``--pair gpu0 gpu0`` printed '1 shortest path(s) of 0 hops from gpu0 to gpu0' (hostile
    round 12), and a 3,000-character name was echoed whole; a list raised TypeError."""
    from topologies import build
    from topologies.analysis import path_diversity

    g = build("single-switch:n=4")
    with pytest.raises(UserError, match="^path diversity joins two different GPUs; got 'gpu0' twice$"):
        path_diversity(g, "gpu0", "gpu0")
    with pytest.raises(UserError) as err:
        path_diversity(g, "gpu0", "x" * 3000)
    assert len(str(err.value)) < 100 and str(err.value).endswith("...' is not a GPU of the fabric")
    with pytest.raises(UserError, match="is not a GPU of the fabric"):
        path_diversity(g, ["gpu0"], "gpu1")
    assert path_diversity(g, "gpu0", "gpu3").hops == 2


# (h293) summary reads connectivity and path diversity off one search from the first GPU
# (687a1ef; it searched twice): with links and switches cut at random, GPUs unreached from
# the first one (the first one cut off alone too) leave path diversity and the diameter
# None, and where all are reached the default pair, hops and path count are networkx's
_CUT_SPECS = ("ring:n=8", "leaf-spine:leaves=3,radix=4", "torus:dims=3x3", "fat-tree:k=4")


@pytest.fixture(scope="module")
def _cut_bases():
    return {s: build(s) for s in _CUT_SPECS}


def test_summary_connectivity_and_paths_match_networkx_with_parts_cut(_cut_bases):
    import networkx as nx
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from topologies.schema import gpu_nodes

    @settings(max_examples=150, deadline=None)
    @given(spec=st.sampled_from(_CUT_SPECS), cut=st.lists(st.integers(0, 10**6), max_size=8),
           drop=st.lists(st.integers(0, 10**6), max_size=3))
    def check(spec, cut, drop):
        g = _cut_bases[spec].copy()
        edges = list(g.edges())
        g.remove_edges_from({edges[i % len(edges)] for i in cut})
        switches = [n for n, k in g.nodes(data="kind") if k != "gpu"]
        if switches:
            g.remove_nodes_from({switches[i % len(switches)] for i in drop})
        s = summary(g, validated=True)
        gpus = gpu_nodes(g)
        reach = nx.single_source_shortest_path_length(g, gpus[0])
        connected = all(x in reach for x in gpus)
        assert (s.diameter is None) == (s.path_diversity is None) == (not connected)
        if connected:
            far = max(reach[x] for x in gpus)
            target = [x for x in gpus if reach[x] == far][-1]
            p = s.path_diversity
            assert (p.source, p.target, p.hops) == (gpus[0], target, far)
            assert p.paths == sum(1 for _ in nx.all_shortest_paths(g, gpus[0], target))

    check()
