"""Builders: hand-derived counts, bandwidths and labels; published shapes (fabrics.md)."""

from __future__ import annotations

import math
import re

import networkx as nx
import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from topologies import (
    build,
    fat_tree,
    flat,
    full_mesh,
    gpu_nodes,
    leaf_spine,
    lite_groups,
    nvl72,
    rail_optimized,
    ring,
    single_switch,
    superpod,
    torus,
    validate,
)

H100 = get_gpu("H100-SXM")


def kinds(g, prefix):
    return sum(1 for n in g if n.startswith(prefix))


def test_single_switch_is_the_8_h100_nvswitch_domain():
    g = single_switch(8)
    assert g.graph["gpus"] == 8 and gpu_nodes(g) == [f"gpu{i}" for i in range(8)]
    sw = g.nodes["nvs0"]
    assert sw["kind"] == "switch" and sw["tier"] == 0 and sw["in_network_reduction"] is True
    for i in range(8):
        e = g.edges[f"gpu{i}", "nvs0"]
        assert e["bandwidth"] == 450e9  # 18 NVLink4 x 25 GB/s per direction (fabrics.md)
        assert e["lanes"] == 36         # 18 links x 2 lanes of 100 Gb/s
    assert g.number_of_edges() == 8


def test_single_switch_radix_and_links():
    g = single_switch(8, links=18, radix=256)
    assert g.edges["gpu0", "nvs0"]["links"] == 18 and g.nodes["nvs0"]["radix"] == 256
    with pytest.raises(UserError, match="radix 100 is too small for 8 GPUs with 18 link"):
        single_switch(8, links=18, radix=100)


def test_ring_splits_gpu_bandwidth_over_two_ports():
    g = ring(5, bandwidth=100e9)
    assert sorted(g.neighbors("gpu0")) == ["gpu1", "gpu4"]
    assert all(d["bandwidth"] == 50e9 for *_, d in g.edges(data=True))
    two = ring(2, bandwidth=100e9)
    assert two.number_of_edges() == 1
    assert two.edges["gpu0", "gpu1"]["links"] == 2 and two.edges["gpu0", "gpu1"]["bandwidth"] == 100e9


@pytest.mark.parametrize("n", [2, 3, 7])
def test_full_mesh_counts_and_per_gpu_total(n):
    g = full_mesh(n, bandwidth=60e9)
    assert g.number_of_edges() == n * (n - 1) // 2
    for node in g:
        total = sum(d["bandwidth"] for *_, d in g.edges(node, data=True))
        assert math.isclose(total, 60e9)


def test_torus_3d_is_6_regular_with_wraparound():
    g = torus("4x4x4")
    assert g.graph["gpus"] == 64 and g.number_of_edges() == 64 * 6 // 2
    assert all(deg == 6 for _, deg in g.degree())
    # gpu0 = (0,0,0): neighbours (3,0,0)=48, (1,0,0)=16, (0,3,0)=12, (0,1,0)=4, (0,0,3)=3, (0,0,1)=1
    assert sorted(int(n[3:]) for n in g.neighbors("gpu0")) == [1, 3, 4, 12, 16, 48]
    assert g.edges["gpu0", "gpu1"]["bandwidth"] == H100.scaleup_bandwidth / 6
    assert g.graph["dims"] == "4x4x4"


def test_torus_side_of_two_merges_the_two_cables():
    g = torus("2x3")
    assert g.edges["gpu0", "gpu3"]["links"] == 2  # -1 and +1 along the side of 2 coincide
    assert g.edges["gpu0", "gpu3"]["bandwidth"] == 2 * H100.scaleup_bandwidth / 4


def test_flat_planes_and_radix():
    g = flat(32, planes=8, radix=32, gpu="Lite", bandwidth=80e9)
    assert kinds(g, "plane") == 8
    assert all(g.degree(f"plane{p}") == 32 for p in range(8))
    assert g.edges["gpu5", "plane7"]["bandwidth"] == 10e9
    with pytest.raises(UserError, match="radix >= 33"):
        flat(33, radix=32)


def test_leaf_spine_counts_and_oversubscription():
    g = leaf_spine(leaves=6, radix=8)
    assert g.graph["gpus"] == 24 and kinds(g, "spine") == 4
    assert all(g.degree(f"leaf{i}") == 8 for i in range(6))
    over = leaf_spine(leaves=4, radix=8, oversubscription=2)
    assert kinds(over, "spine") == 2 and over.degree("leaf0") == 4 + 2
    fewer = leaf_spine(leaves=4, radix=8, spines=2)  # 4 uplinks over 2 spines: 2 cables each
    assert fewer.edges["leaf0", "spine1"]["links"] == 2
    assert fewer.edges["leaf0", "spine1"]["bandwidth"] == 2 * H100.scaleout_bandwidth
    with pytest.raises(UserError, match="radix 8 is too small"):
        leaf_spine(leaves=9, radix=8)


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts_follow_k(k):
    g = fat_tree(k)
    h = k // 2
    assert g.graph["gpus"] == k**3 // 4
    assert (kinds(g, "leaf"), kinds(g, "spine"), kinds(g, "core")) == (k * h, k * h, h * h)
    # non-blocking: every switch uses exactly its k ports
    assert all(g.degree(n) == k for n, d in g.nodes(data="kind") if d == "switch")


def test_fat_tree_oversubscription_and_partial_pods():
    g = fat_tree(8, oversubscription=2)
    assert g.graph["gpus"] == 128
    assert g.degree("leaf0") == 4 + 2 and kinds(g, "spine") == 8 * 2 and kinds(g, "core") == 8
    part = fat_tree(8, pods=2)
    assert part.graph["gpus"] == 2 * 16 and part.degree("core0") == 2
    assert part.nodes["gpu17"]["pod"] == 1 and part.nodes["gpu17"]["rack"] == 4
    with pytest.raises(UserError, match="oversubscription 3 must divide the 4 GPU ports"):
        fat_tree(8, oversubscription=3)
    with pytest.raises(UserError, match="pods 9 exceeds k=8"):
        fat_tree(8, pods=9)


def _superpod_table(reference_dir):
    text = (reference_dir / "fabrics.md").read_text()
    rows = re.findall(r"^\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|",
                      text, flags=re.M)
    assert len(rows) == 4, "the DGX H100 SuperPOD table in fabrics.md changed shape"
    return [tuple(map(int, r)) for r in rows]


def test_superpod_matches_published_table(reference_dir):
    for sus, nodes, gpus, leaves, spines in _superpod_table(reference_dir):
        g = superpod(sus)
        assert g.graph["gpus"] == gpus
        assert kinds(g, "nvs") == nodes
        assert (kinds(g, "leaf"), kinds(g, "spine")) == (leaves, spines)
        assert all(g.degree(f"spine{j}") <= 64 for j in range(spines))


def test_superpod_is_rail_optimized_with_nvlink_domains():
    g = superpod(2)
    for i in range(0, g.graph["gpus"], 37):
        node = g.nodes[f"gpu{i}"]
        assert node["server"] == i // 8 and node["rail"] == i % 8 and node["group"] == i // 8
        leaf = next(n for n in g.neighbors(f"gpu{i}") if n.startswith("leaf"))
        assert int(leaf[4:]) % 8 == i % 8  # GPU r of every server on rail r's leaf
        assert g.edges[f"gpu{i}", leaf]["bandwidth"] == 400e9 / 8  # 400 Gb/s NIC
        assert g.edges[f"gpu{i}", f"nvs{i // 8}"]["bandwidth"] == 450e9
    assert g.nodes["nvs0"]["in_network_reduction"] and g.nodes["nvs0"]["radix"] == 256
    assert all(d["links"] == 4 for u, v, d in g.edges(data=True) if u.startswith("leaf")
               and v.startswith("spine") or u.startswith("spine"))


def test_nvl72_rack():
    g = nvl72()
    assert g.graph["gpus"] == 72 and kinds(g, "leaf") == 0
    assert g.edges["gpu0", "nvs0"]["bandwidth"] == 900e9 and g.edges["gpu0", "nvs0"]["links"] == 18
    two = nvl72(racks=2)
    # 36 trays of 4 GPUs, 32 trays per leaf: 2 SUs x 4 rails
    assert two.graph["gpus"] == 144 and kinds(two, "leaf") == 8
    assert two.nodes["gpu75"]["rack"] == 1 and two.nodes["gpu75"]["rail"] == 3


def test_nvl72_xdr_switches():
    """GB300 racks' scale-out is Quantum-X800 (144 x 800G): 72 trays a rail leaf (half its
    ports down), 72 uplinks each. 16 racks = 288 trays: 4 leaves a rail x 4 rails = 16 leaves
    (64-port: 9 a rail = 36); 16 x 72 uplinks over 144-port spines = 8 spines."""
    g = nvl72(racks=16, leaf_radix=144, spine_radix=144)
    assert kinds(g, "leaf") == 16 and kinds(g, "spine") == 8
    assert kinds(nvl72(racks=16), "leaf") == 36
    # 2 racks: one leaf a rail holds both racks' 36 trays
    assert kinds(nvl72(racks=2, leaf_radix=144, spine_radix=144), "leaf") == 4
    with pytest.raises(UserError, match="servers_per_leaf 73 exceeds the 72 down ports"):
        nvl72(racks=2, leaf_radix=144, servers_per_leaf=73)


def test_rail_optimized_refuses_too_many_leaves():
    with pytest.raises(UserError, match="too many for one spine tier"):
        rail_optimized(domains=300, servers_per_leaf=2)


def test_too_many_leaves_names_each_builders_own_parameters():
    # superpod has neither domains nor spine_radix, nvl72 calls its domains racks (both
    # advised 'use fewer domains or a larger spine_radix' at a62200f); 8 SUs of 8 rail
    # leaves fill the 64 ports of a spine
    from tests.netmodel.cli_helpers import one_line_error, run_cli

    assert superpod(8).graph["gpus"] == 255 * 8
    with pytest.raises(UserError, match="^sus must be at most 8, got 9: one tier of 64-port "
                                        "spines joins at most 64 rail leaves, 8 per SU"):
        superpod(9)
    line = one_line_error(run_cli(["topology", "show", "superpod:sus=128"]),
                          "sus must be at most 8, got 128")
    assert "domains" not in line
    line = one_line_error(run_cli(["topology", "show", "nvl72:racks=456"]),
                          "1028 leaves are too many for one spine tier of 64-port switches",
                          "use fewer racks or a larger spine_radix")
    assert "domains" not in line
    with pytest.raises(UserError, match="use fewer domains or a larger spine_radix"):
        rail_optimized(domains=300, servers_per_leaf=2)


def test_lite_groups_even_split():
    g = lite_groups("single-switch:n=2", lites=4, lite="Lite")
    assert g.graph["gpus"] == 8 and g.nodes["gpu6"]["group"] == 1
    assert g.edges["gpu6", "nvs0"]["bandwidth"] == 450e9 / 4
    # each Lite's scale-up bandwidth (a quarter of an H100's) over 3 mesh links
    assert math.isclose(g.edges["gpu4", "gpu7"]["bandwidth"], 450e9 / 4 / 3)
    assert not g.has_edge("gpu3", "gpu4")  # no mesh between groups


def test_lite_groups_gateway_and_graph_base():
    base = ring(3, bandwidth=90e9)
    g = lite_groups(base, lites=2, split="gateway", mesh_bandwidth=10e9)
    # an unchanged built base is spelled by its spec and recorded by its builder table
    assert g.graph["spec"] == ("lite-groups:base=[ring:n=3,bandwidth=90GB/s],lites=2,"
                               "split=gateway,mesh_bandwidth=10GB/s")
    assert g.graph["args"]["base"] == {"builder": "ring", "n": 3, "bandwidth": 90e9}
    edited = base.copy()
    edited.graph["name"] = "edited"
    edited.add_edge("gpu0", "gpu1", **base.edges["gpu0", "gpu1"])  # same edge: counts kept
    edited.remove_edge("gpu0", "gpu2")
    edited.add_edge("gpu0", "gpu2", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    e = lite_groups(edited, lites=2, split="gateway", mesh_bandwidth=10e9)
    assert e.graph["spec"].startswith("lite-groups:base=[ring")  # counts unchanged: trusted
    edited.add_node("sw", kind="switch", tier=1, radix=4, latency=0.0,
                    in_network_reduction=False)
    edited.add_edge("sw", "gpu1", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    g = lite_groups(edited, lites=2, split="gateway", mesh_bandwidth=10e9)
    assert g.graph["gpus"] == 6 and g.graph["spec"] == ""
    assert g.graph["args"]["base"] == {"builder": None, "name": "edited"}
    assert g.has_edge("gpu0", "gpu2") and not g.has_edge("gpu1", "gpu3")
    assert g.edges["gpu0", "gpu2"]["bandwidth"] == 45e9
    assert g.edges["gpu0", "gpu1"]["bandwidth"] == 10e9


def test_lite_groups_keep_placement_labels():
    g = lite_groups("superpod", lites=4)
    assert g.graph["gpus"] == 248 * 4
    assert g.nodes["gpu37"]["rail"] == 1 and g.nodes["gpu37"]["server"] == 1
    assert g.nodes["gpu37"]["group"] == 9


@pytest.mark.parametrize("spec", [
    "ring:n=5", "torus:dims=2x3x2,gpu=Lite", "fat-tree:k=6,pods=3",
    "leaf-spine:leaves=3,radix=8,oversubscription=2", "superpod:sus=2", "nvl72:racks=2",
    "flat:n=16,planes=2,radix=16", "ocs:gpus=8,ports=2,logical=ring",
    "lite-groups:base=[fat-tree:k=4,gpu=H200-SXM],lites=2", "single-switch:bandwidth=100GB/s",
])
def test_spec_attribute_rebuilds_the_same_graph(spec):
    g = build(spec)
    again = build(g.graph["spec"])
    assert nx.utils.graphs_equal(g, again)
    assert validate(again) is again


def test_unknown_gpu_lists_known():
    with pytest.raises(UserError, match="unknown GPU 'H900'; known: .*'H100-SXM'"):
        fat_tree(4, gpu="H900")


@pytest.mark.parametrize("call, message", [
    (lambda: fat_tree(5), "k must be even"),
    (lambda: fat_tree(4, bandwidth=float("nan")), "bandwidth must be a finite number > 0, got nan"),
    (lambda: ring(4, bandwidth=-1.0), "bandwidth must be a finite number > 0, got -1.0"),
    (lambda: ring(1), "n must be an integer >= 2, got 1"),
    (lambda: torus("4x0"), "each torus side in dims must be an integer >= 2"),
    (lambda: torus("4x4x4x4"), "1 to 3 sides"),
    (lambda: lite_groups(split="half"), "split 'half' is not allowed; allowed: 'even', 'gateway'"),
    (lambda: single_switch(medium="string"), "medium 'string' is not a known medium"),
])
def test_bad_parameters(call, message):
    with pytest.raises(UserError, match=re.escape(message)):
        call()


def test_rail_optimized_huge_servers_per_rack_is_one_rack():
    """servers_per_rack = 2**63 (found by the builder fuzz test) overflowed numpy's int64 in
    the rack labels; more servers a rack than the fabric has is one rack."""
    g = rail_optimized(domains=2, servers_per_rack=2**63)
    assert {g.nodes[f"gpu{i}"]["rack"] for i in range(16)} == {0}
    # 1 server a rack: gpu8 is on server 1, rack 1
    assert rail_optimized(domains=2, servers_per_rack=1).nodes["gpu8"]["rack"] == 1
