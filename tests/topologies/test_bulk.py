"""Building in bulk (topologies.common: Nodes, Links, assemble, check_blocks): the builders that fill their graphs in blocks make the
very graphs that adding nodes and edges one by one made (the reference builders below are
the code they replaced), and the block checks refuse exactly what validate refuses, with
validate's message."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.gpu_facts import nvlink_count
from compute.hardware import get_gpu
from compute.units import counted
from topologies import build, validate
from topologies.common import (
    LEAF_SPINE_LENGTH,
    NIC_LENGTH,
    NVSWITCH_LATENCY,
    SCALEUP_LENGTH,
    SPINE_CORE_LENGTH,
    SWITCH_LATENCY,
    Links,
    Nodes,
    assemble,
    cable_latency,
    check_blocks,
    finish,
    link,
    new_graph,
    switch_attrs,
)
from topologies.hierarchical import spine_count
from topologies.registry import bound_arguments
from topologies.schema import edge_count

# ---------------------------------------------------------------- the replaced code


def ref_single_switch(n, gpu, bandwidth, links, radix, latency, in_network_reduction, medium,
                      length):
    spec = get_gpu(gpu)
    if in_network_reduction is None:  # the default that came with GpuSpec.scaleup_reduction
        in_network_reduction = spec.scaleup_reduction
    bw = spec.scaleup_bandwidth if bandwidth is None else bandwidth
    radix = n * links if radix is None else radix
    graph = new_graph(f"{n} {spec.name} on one switch")
    graph.add_node("nvs0", **switch_attrs(0, radix, latency, in_network_reduction))
    cable = link(bw, cable_latency(length, medium), medium, links=links)
    for i in range(n):
        graph.add_node(f"gpu{i}", kind="gpu", gpu=spec.name, group=0)
        graph.add_edge(f"gpu{i}", "nvs0", **cable)
    return finish(graph, n, spec)


def ref_flat(n, planes, radix, gpu, bandwidth, latency, in_network_reduction, medium, length):
    spec = get_gpu(gpu)
    bw = spec.scaleup_bandwidth if bandwidth is None else bandwidth
    graph = new_graph(f"{n} {spec.name} on {planes} flat plane(s)")
    graph.add_nodes_from((f"plane{p}", switch_attrs(1, radix, latency, in_network_reduction))
                         for p in range(planes))
    graph.add_nodes_from((f"gpu{i}", {"kind": "gpu", "gpu": spec.name}) for i in range(n))
    cable = link(bw / planes, cable_latency(length, medium), medium)
    graph.add_edges_from((f"gpu{i}", f"plane{p}", dict(cable))
                         for i in range(n) for p in range(planes))
    return finish(graph, n, spec)


def ref_leaf_spine(leaves, radix, oversubscription, spines, gpu, bandwidth, latency,
                   in_network_reduction, medium):
    up = radix // 2 // oversubscription
    spines = up if spines is None else spines
    parallel = up // spines
    spec = get_gpu(gpu)
    bw = spec.scaleout_bandwidth if bandwidth is None else bandwidth
    h = radix // 2
    graph = new_graph(f"leaf-spine of {counted(leaves, 'leaf', 'leaves')} x {h} {spec.name}")
    sw = switch_attrs(1, radix, latency, in_network_reduction)
    graph.add_nodes_from((f"leaf{i}", dict(sw)) for i in range(leaves))
    graph.add_nodes_from((f"spine{j}", {**sw, "tier": 2}) for j in range(spines))
    nic = link(bw, cable_latency(NIC_LENGTH, medium), medium)
    for i in range(leaves * h):
        graph.add_node(f"gpu{i}", kind="gpu", gpu=spec.name, rack=i // h)
        graph.add_edge(f"gpu{i}", f"leaf{i // h}", **nic)
    trunk = link(bw * parallel, cable_latency(LEAF_SPINE_LENGTH, medium), medium, parallel)
    graph.add_edges_from((f"leaf{i}", f"spine{j}", dict(trunk))
                         for i in range(leaves) for j in range(spines))
    return finish(graph, leaves * h, spec)


def ref_fat_tree(k, oversubscription, pods, gpu, bandwidth, latency, in_network_reduction,
                 medium):
    up = k // 2 // oversubscription
    pods = k if pods is None else pods
    spec = get_gpu(gpu)
    bw = spec.scaleout_bandwidth if bandwidth is None else bandwidth
    h = k // 2
    n = pods * h * h
    graph = new_graph(f"k={k} fat tree of {n} {spec.name}")
    sw = switch_attrs(1, k, latency, in_network_reduction)
    graph.add_nodes_from((f"gpu{i}", {"kind": "gpu", "gpu": spec.name, "pod": i // (h * h),
                                      "rack": i // h}) for i in range(n))
    graph.add_nodes_from((f"leaf{i}", dict(sw)) for i in range(pods * h))
    graph.add_nodes_from((f"spine{i}", {**sw, "tier": 2}) for i in range(pods * up))
    graph.add_nodes_from((f"core{i}", {**sw, "tier": 3}) for i in range(up * h))
    nic = link(bw, cable_latency(NIC_LENGTH, medium), medium)
    graph.add_edges_from((f"gpu{i}", f"leaf{i // h}", dict(nic)) for i in range(n))
    trunk = link(bw, cable_latency(LEAF_SPINE_LENGTH, medium), medium)
    graph.add_edges_from((f"leaf{p * h + e}", f"spine{p * up + a}", dict(trunk))
                         for p in range(pods) for e in range(h) for a in range(up))
    top = link(bw, cable_latency(SPINE_CORE_LENGTH, medium), medium)
    graph.add_edges_from((f"spine{p * up + a}", f"core{a * h + c}", dict(top))
                         for p in range(pods) for a in range(up) for c in range(h))
    graph.graph.update(k=k, oversubscription=int(oversubscription))
    return finish(graph, n, spec)


def ref_rail_optimized(domains, domain_size, gpus_per_server, gpu, servers_per_leaf, leaf_radix,
                       spine_radix, scaleup_bandwidth, nic_bandwidth, nvlinks, nvswitch_radix,
                       in_network_reduction, sharp, servers_per_rack, medium,
                       nics_per_server=None, module_ports=1):
    size, gps, per_leaf, per_rack = domain_size, gpus_per_server, servers_per_leaf, \
        servers_per_rack
    nics = gps if nics_per_server is None else nics_per_server
    stride = gps // nics   # the first GPU of every stride holds a NIC
    uplinks = leaf_radix // 2
    spec = get_gpu(gpu)
    if nvlinks is None:   # the GPU's NVLinks (its catalog entry), the shared rule otherwise
        nvlinks = nvlink_count(spec)
    nvs_radix = size * nvlinks if nvswitch_radix is None else nvswitch_radix
    if in_network_reduction is None:  # the default that came with GpuSpec.scaleup_reduction
        in_network_reduction = spec.scaleup_reduction
    up_bw = spec.scaleup_bandwidth if scaleup_bandwidth is None else scaleup_bandwidth
    nic_bw = spec.scaleout_bandwidth if nic_bandwidth is None else nic_bandwidth
    n = domains * size
    sus = -(-(n // gps) // per_leaf)
    scaleout = domains > 1
    leaves = sus * nics
    spines = spine_count(leaves, uplinks, spine_radix) if scaleout else 0
    graph = new_graph(f"{domains} x {size} {spec.name} (rail-optimized)" if scaleout
                      else f"{size} {spec.name} scale-up domain")
    graph.add_nodes_from((f"nvs{d}", switch_attrs(0, nvs_radix, NVSWITCH_LATENCY,
                                                  in_network_reduction)) for d in range(domains))
    servers_per_domain = size // gps
    nodes = []
    for i in range(n):
        server = i // gps
        rack = server // per_rack if per_rack else server // servers_per_domain
        nodes.append((f"gpu{i}", {"kind": "gpu", "gpu": spec.name, "group": i // size,
                                  "server": server, "rail": i % gps,
                                  "pod": server // per_leaf, "rack": rack}))
    graph.add_nodes_from(nodes)
    # NVLinks inside one server are baseboard traces, across servers copper cables
    scaleup = "board" if size == gps else "copper"
    nvl = link(up_bw, cable_latency(SCALEUP_LENGTH, scaleup), scaleup, links=nvlinks)
    graph.add_edges_from((f"gpu{i}", f"nvs{i // size}", dict(nvl)) for i in range(n))
    if scaleout:
        sw = switch_attrs(1, leaf_radix, SWITCH_LATENCY, sharp)
        graph.add_nodes_from((f"leaf{j}", dict(sw)) for j in range(leaves))
        graph.add_nodes_from((f"spine{j}", {**sw, "tier": 2, "radix": spine_radix})
                             for j in range(spines))
        nic = link(nic_bw, cable_latency(NIC_LENGTH, medium), medium)
        graph.add_edges_from((f"gpu{i}", f"leaf{(i // gps) // per_leaf * nics + i % gps // stride}",
                              dict(nic)) for i in range(n) if i % stride == 0)
        parallel = uplinks // spines
        trunk = link(nic_bw * parallel, cable_latency(LEAF_SPINE_LENGTH, medium), medium,
                     links=parallel)
        graph.add_edges_from((f"leaf{j}", f"spine{s}", dict(trunk))
                             for j in range(leaves) for s in range(spines))
    return finish(graph, n, spec)


def _ref_direct(name, n, neighbours, gpu, bandwidth, medium, length):
    # topologies.direct._direct as of a62200f: GPU i's ports in turn, a neighbour reached
    # by several ports one edge of that many cables
    from collections import Counter

    spec = get_gpu(gpu)
    total = spec.scaleup_bandwidth if bandwidth is None else bandwidth
    latency = cable_latency(length, medium)
    graph = new_graph(name)
    graph.add_nodes_from((f"gpu{i}", {"kind": "gpu", "gpu": spec.name}) for i in range(n))
    for i in range(n):
        ports = neighbours(i)
        per_port = total / len(ports)
        for j, count in Counter(ports).items():
            if j > i:
                graph.add_edge(f"gpu{i}", f"gpu{j}",
                               **link(per_port * count, latency, medium, links=count))
    return finish(graph, n, spec)


def ref_ring(n, gpu, bandwidth, medium, length):
    return _ref_direct(f"ring of {n}", n, lambda i: [(i - 1) % n, (i + 1) % n], gpu,
                       bandwidth, medium, length)


def ref_full_mesh(n, gpu, bandwidth, medium, length):
    return _ref_direct(f"full mesh of {n}", n, lambda i: [j for j in range(n) if j != i], gpu,
                       bandwidth, medium, length)


def ref_torus(dims, gpu, bandwidth, medium, length):
    sides = tuple(int(x) for x in dims.split("x"))
    n = int(np.prod(sides))
    strides = [1] * len(sides)
    for d in range(len(sides) - 2, -1, -1):
        strides[d] = strides[d + 1] * sides[d + 1]

    def neighbours(i):
        out = []
        for d, (side, stride) in enumerate(zip(sides, strides, strict=True)):
            coord = (i // stride) % side
            for step in (-1, 1):
                out.append(i + (((coord + step) % side) - coord) * strides[d])
        return out

    shape = "x".join(map(str, sides))
    graph = _ref_direct(f"{shape} torus", n, neighbours, gpu, bandwidth, medium, length)
    graph.graph["dims"] = shape
    return graph


def ref_ocs(gpus, ports, ocs_ports, gpu, bandwidth, reconfiguration_time, latency, medium,
            length, logical):
    # topologies.optical.ocs's physical cabling as of a62200f (logical=None), a fibre's
    # latency one co-packaged chiplet (the GPU's; the OCS end is mirrors), not two, and
    # each fibre carrying its length (m)
    assert logical is None
    spec = get_gpu(gpu)
    bw = spec.scaleup_bandwidth if bandwidth is None else bandwidth
    graph = new_graph(f"{gpus} {spec.name} x {ports} ports on {ports} OCS")
    graph.add_nodes_from((f"gpu{i}", {"kind": "gpu", "gpu": spec.name}) for i in range(gpus))
    graph.add_nodes_from((f"ocs{q}", {"kind": "ocs", "ports": ocs_ports,
                                      "reconfiguration_time": reconfiguration_time,
                                      "latency": latency}) for q in range(ports))
    fibre = link(bw / ports, cable_latency(length, medium, chiplets=1), medium)
    fibre["length"] = float(length)
    graph.add_edges_from((f"gpu{i}", f"ocs{q}", dict(fibre)) for i in range(gpus)
                         for q in range(ports))
    return finish(graph, gpus, spec)


def ref_lite_groups(base, lites, lite, split, mesh_bandwidth, medium, length):
    # topologies.direct.lite_groups one by one (its blocks turned off): that path is held
    # to hand-derived graphs by test_lite_groups_of_a_hand_made_base_by_hand
    from unittest import mock

    from topologies import direct

    with mock.patch.object(direct, "_lite_blocks", lambda *args: None):
        return direct.lite_groups(base, lites, lite, split, mesh_bandwidth, medium, length)


REFERENCES = {"single-switch": ref_single_switch, "flat": ref_flat,
              "leaf-spine": ref_leaf_spine, "fat-tree": ref_fat_tree,
              "rail-optimized": ref_rail_optimized, "ring": ref_ring,
              "full-mesh": ref_full_mesh, "torus": ref_torus, "ocs": ref_ocs,
              "lite-groups": ref_lite_groups}

# ---------------------------------------------------------------- exact comparison


def typed(d):
    """A dict's items in order, each value with its exact type (1 == 1.0 == True)."""
    return [(k, type(v), v) for k, v in d.items()]


def assert_identical(new: nx.Graph, old: nx.Graph) -> None:
    assert nx.utils.graphs_equal(new, old)
    assert typed(new.graph) == typed(old.graph)
    assert list(new.nodes) == list(old.nodes) and list(new.edges) == list(old.edges)
    assert list(new._adj) == list(new._node) == list(old._adj)
    for node in old:
        assert typed(new.nodes[node]) == typed(old.nodes[node])
        assert list(new._adj[node]) == list(old._adj[node]), node  # neighbour order
    for u, v, data in old.edges(data=True):
        assert typed(new.edges[u, v]) == typed(data)
    # one dict per node and per edge, an edge's shared by its two directions, as networkx
    node_ids = {id(d) for d in new._node.values()}
    edge_ids = {id(d) for _, _, d in new.edges(data=True)}
    assert len(node_ids) == new.number_of_nodes() and len(edge_ids) == new.number_of_edges()
    assert all(new._adj[u][v] is new._adj[v][u] for u, v in new.edges)


SPECS = [
    "single-switch:n=1", "single-switch:n=8", "single-switch:n=72,links=18,radix=2000",
    "single-switch:n=5,gpu=Lite,in_network_reduction=false,medium=pluggable-optics",
    "single-switch:n=8,gpu=A100-SXM-80GB", "single-switch:n=4,gpu=A100-SXM-80GB,"
    "in_network_reduction=true",
    "flat:n=1,planes=1", "flat:n=16,planes=4,radix=16,gpu=Lite", "flat:n=64",
    "flat:n=48,planes=3,radix=48,medium=copper,length=3,latency=100ns",
    "leaf-spine", "leaf-spine:leaves=1,radix=2", "leaf-spine:leaves=4,radix=16,spines=2",
    "leaf-spine:leaves=6,radix=12,oversubscription=3,in_network_reduction=true",
    "fat-tree", "fat-tree:k=2", "fat-tree:k=8,oversubscription=2", "fat-tree:k=16",
    "fat-tree:k=12,pods=5,oversubscription=3,gpu=Lite,medium=co-packaged-optics",
    "fat-tree:k=32,pods=7",
    "rail-optimized", "rail-optimized:domains=2,gpu=A100-SXM-80GB",
    "rail-optimized:domains=3,servers_per_leaf=2,nics_per_server=4",
    "rail-optimized:domains=2,domain_size=16,gpus_per_server=4,nics_per_server=1",
    "rail-optimized:domains=1", "rail-optimized:domains=1,domain_size=72,"
    "gpus_per_server=4", "rail-optimized:domains=9,servers_per_leaf=3,servers_per_rack=2,"
    "sharp=true,in_network_reduction=false,leaf_radix=8,spine_radix=48,gpu=Lite",
    "rail-optimized:domains=5,domain_size=16,gpus_per_server=4,servers_per_leaf=2,nvlinks=2,"
    "nvswitch_radix=40,medium=co-packaged-optics",
    "ring:n=2", "ring:n=3", "ring", "ring:n=257,gpu=Lite,bandwidth=1e11,length=0",
    "full-mesh:n=2", "full-mesh", "full-mesh:n=33,medium=board,length=0.1",
    "torus:dims=2", "torus:dims=7", "torus:dims=2x2", "torus:dims=2x3", "torus:dims=3x2",
    "torus", "torus:dims=2x2x2", "torus:dims=4x2x3", "torus:dims=2x5x2", "torus:dims=3x3x3",
    "torus:dims=16x2x9,bandwidth=1e11,medium=pluggable-optics,length=7",
    "ocs", "ocs:gpus=1,ports=1", "ocs:gpus=136,ports=8",
    "ocs:gpus=5,ports=2,ocs_ports=5,reconfiguration_time=0,length=0,latency=1us",
    "ocs:gpus=30,ports=3,gpu=Lite,medium=fibre,bandwidth=3e11",
    "lite-groups", "lite-groups:lites=1", "lite-groups:lites=2,split=gateway",
    "lite-groups:base=[fat-tree:k=4],lites=4", "lite-groups:base=[superpod],lites=2",
    "lite-groups:base=[fat-tree:k=8],lites=3,split=gateway",
    "lite-groups:base=[nvl72:racks=2],lites=2", "lite-groups:base=[rail-optimized:domains=3]",
    "lite-groups:base=[leaf-spine],lites=3,mesh_bandwidth=1e11,medium=copper,length=0",
    "lite-groups:base=[ring:n=6],lites=3,split=gateway", "lite-groups:base=[torus:dims=4x2]",
    "lite-groups:base=[ocs:gpus=4,ports=2,logical=ring],lites=2",
    "lite-groups:base=[ocs:gpus=4,ports=2],lites=2",
    "lite-groups:base=[single-switch:n=8,links=3],lites=2",
    "lite-groups:base=[lite-groups:base=[ring:n=4],lites=2],lites=2",
]


RAIL = {"gpus_per_server": 8, "gpu": "H100-SXM", "servers_per_leaf": 32, "leaf_radix": 64,
        "spine_radix": 64, "scaleup_bandwidth": None, "nic_bandwidth": None, "nvlinks": 18,
        "in_network_reduction": True, "sharp": False, "medium": "pluggable-optics"}


@pytest.mark.parametrize("spec, rail", [
    ("superpod", {"domains": 31, "domain_size": 8, "nvswitch_radix": 256, "servers_per_rack": 4}),
    ("superpod:sus=3,sharp=true", {"domains": 95, "domain_size": 8, "nvswitch_radix": 256,
                                   "servers_per_rack": 4, "sharp": True}),
    ("nvl72", {"domains": 1, "domain_size": 72, "gpus_per_server": 4, "gpu": "B200-HGX",
               "nvswitch_radix": 1296, "servers_per_rack": None}),
    ("nvl72:racks=4", {"domains": 4, "domain_size": 72, "gpus_per_server": 4,
                       "gpu": "B200-HGX", "nvswitch_radix": 1296, "servers_per_rack": None}),
])
def test_superpod_and_nvl72_are_the_rail_optimized_graphs_of_before(spec, rail):
    new = build(spec)
    old = ref_rail_optimized(**{**RAIL, **rail})
    for key in ("spec", "builder", "args", "nodes_built", "edges_built"):
        old.graph[key] = new.graph[key]
    # a SuperPOD's optics are twin-port OSFP (P40): a graph attribute, the graph the same
    assert new.graph.get("module_ports", 1) == (2 if spec.startswith("superpod") else 1)
    if "module_ports" in new.graph:
        attrs = {**old.graph, "module_ports": new.graph["module_ports"]}
        old.graph.clear()
        old.graph.update((k, attrs[k]) for k in new.graph)
    assert new.graph["edges_built"] == old.number_of_edges()
    assert_identical(new, old)


@pytest.mark.parametrize("spec", SPECS)
def test_bulk_builders_make_the_graphs_the_one_by_one_code_made(spec):
    new = build(spec)
    args = bound_arguments(new.graph["builder"], new.graph["args"])
    old = REFERENCES[new.graph["builder"]](**args)
    for key in ("spec", "builder", "args"):  # what the registry adds, as it adds it
        old.graph[key] = new.graph[key]
    old.graph["nodes_built"] = old.number_of_nodes()
    old.graph["edges_built"] = old.number_of_edges()
    assert_identical(new, old)


def _hand_made_base(names, labels):
    """A two-leaf fabric of four GPUs whose switches are ``names`` and whose GPUs carry
    ``labels`` (a list of dicts), as a user's file may give it."""
    g = nx.Graph(name="hand", spec="", gpus=4)
    for i, extra in enumerate(labels):
        g.add_node(f"g{i}", kind="gpu", gpu="H100-SXM", **extra)
    sw = switch_attrs(1, 8, 1e-7, False)
    for name in names:
        g.add_node(name, **sw)
    for i in range(4):
        g.add_edge(f"g{i}", names[i // 2], **link(50e9, 1e-7, "pluggable-optics"))
    g.add_edge(names[0], names[1], **link(100e9, 2e-7, "pluggable-optics", links=2))
    return g


def _lite_pairs_by_hand(names, labels, split):
    """``lite_groups(_hand_made_base(names, labels), lites=2, split=split)`` written out:
    base GPU ``g{i}`` becomes Lites ``gpu{2i}``, ``gpu{2i+1}`` (group ``i``, its labels),
    joined by one co-packaged-optics cable of 1 m at a Lite's scale-up 112.5 GB/s (450/4:
    one pair, so all of it) and 15 ns (the 1 m cable_latency); g{i}'s 50 GB/s NIC cable to
    its leaf ``names[i // 2]`` split in halves of 25 GB/s, half a cable each (``even``),
    or whole on the first Lite (``gateway``); the leaves and their trunk as they were."""
    nodes = {f"gpu{2 * i + j}": {"kind": "gpu", "gpu": "Lite", "group": i, **labels[i]}
             for i in range(4) for j in range(2)}
    sw = switch_attrs(1, 8, 1e-7, False)
    nodes |= {name: sw for name in names}
    fibre = cable_latency(1.0, "co-packaged-optics")
    assert fibre == pytest.approx(15e-9, rel=1e-12)
    mesh = link(112.5e9, fibre, "co-packaged-optics")
    edges = {frozenset((f"gpu{2 * i}", f"gpu{2 * i + 1}")): mesh for i in range(4)}
    edges[frozenset(names)] = link(100e9, 2e-7, "pluggable-optics", links=2)
    for i in range(4):
        if split == "even":
            edges |= {frozenset((f"gpu{2 * i + j}", names[i // 2])):
                      link(25e9, 1e-7, "pluggable-optics", links=0.5) for j in range(2)}
        else:
            edges[frozenset((f"gpu{2 * i}", names[i // 2]))] = \
                link(50e9, 1e-7, "pluggable-optics", links=1)
    return nodes, edges


@pytest.mark.parametrize("names, labels, blocks", [
    (["leaf0", "leaf1"], [{"rack": i // 2} for i in range(4)], True),
    (["sw", "leaf1"], [{}] * 4, False),                   # a name with no number
    (["leaf01", "leaf02"], [{}] * 4, False),              # numbers with leading zeros
    (["leaf0", "leaf1"], [{"rack": 0}, {}, {}, {}], False),  # labels on some GPUs only
    (["leaf0", "leaf1"], [{"pod": 1, "rack": 2}] * 4, True),   # keys in another order
    ([3, "leaf1"], [{}] * 4, False),                      # a switch named by a number
])
@pytest.mark.parametrize("split", ["even", "gateway"])
def test_lite_groups_of_a_hand_made_base_by_hand(names, labels, blocks, split):
    # the blocks where the base is runs of numbered nodes with the same labels on every
    # GPU, else the one-by-one code: the graph written out by hand either way
    from compute.hardware import get_gpu as gpu
    from topologies.direct import _lite_blocks, lite_groups

    base = _hand_made_base(names, labels)
    g = lite_groups(base, lites=2, split=split)
    nodes, edges = _lite_pairs_by_hand(names, labels, split)
    assert dict(g.nodes(data=True)) == nodes
    assert {frozenset((u, v)): d for u, v, d in g.edges(data=True)} == edges
    assert (g.graph["gpus"], g.graph["lites_per_group"]) == (8, 2)
    made = _lite_blocks(base, 2, 2 if split == "even" else 1, gpu("Lite"),
                        link(1e9, 0.0, "copper"))
    assert (made is not None) == blocks


@pytest.mark.parametrize("names, labels, message", [
    # a switch named like a Lite: the Lite gpu7 becomes that switch
    (["gpu7", "leaf1"], [{}] * 4, "graph attribute 'gpus' is 8 but it has 7 GPU nodes"),
    # a label that is a bool
    (["leaf0", "leaf1"], [{"rack": True}] * 4,
     "gpu node 'g0' label 'rack' must be a whole number >= 0, got True"),
])
@pytest.mark.parametrize("split", ["even", "gateway"])
def test_lite_groups_of_a_hand_made_base_refused(names, labels, message, split):
    from topologies.direct import lite_groups

    with pytest.raises(UserError, match=re.escape(message)):
        lite_groups(_hand_made_base(names, labels), lites=2, split=split)


def test_a_mid_fat_tree_is_identical_too():
    new = build("fat-tree:k=32")  # 8,192 GPUs, 24,576 edges
    old = ref_fat_tree(32, 1, None, "H100-SXM", None, 330e-9, False, "pluggable-optics")
    for key in ("spec", "builder", "args", "nodes_built", "edges_built"):
        old.graph[key] = new.graph[key]
    assert new.graph["edges_built"] == old.number_of_edges() == 3 * 8192
    assert_identical(new, old)


# ---------------------------------------------------------------- assemble itself


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40),
    st.lists(st.integers(0, 2), min_size=n, max_size=n))))
def test_assemble_orders_neighbours_as_add_edges_from(case):
    n, pairs, racks = case
    seen, edges = set(), []
    for a, b in pairs:  # simple edges only, as assemble requires
        if a != b and frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            edges.append((a, b))
    cut = len(edges) // 2
    cable = {"bandwidth": 1e9, "latency": 1e-8, "medium": "copper", "lanes": 1}
    other = {**cable, "lanes": 2, "links": 2}
    gpu = {"kind": "gpu", "gpu": "Lite"}
    new = assemble(nx.Graph(gpus=n), [Nodes("gpu", n, gpu, {"rack": racks})],
                   [Links([a for a, _ in edges[:cut]], [b for _, b in edges[:cut]], cable),
                    Links([a for a, _ in edges[cut:]], [b for _, b in edges[cut:]], other)],
                   check=False)
    old = nx.Graph(gpus=n)
    old.add_nodes_from((f"gpu{i}", {**gpu, "rack": r}) for i, r in enumerate(racks))
    old.add_edges_from((f"gpu{a}", f"gpu{b}", dict(cable)) for a, b in edges[:cut])
    old.add_edges_from((f"gpu{a}", f"gpu{b}", dict(other)) for a, b in edges[cut:])
    assert_identical(new, old)
    assert edge_count(new) == old.number_of_edges() == len(edges)
    connected = n == 1 or nx.is_connected(old)
    assert check_blocks(new, [Nodes("gpu", n, gpu, {"rack": racks})],
                        [Links([a for a, _ in edges], [b for _, b in edges], cable)]) \
        == connected


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40),
    st.lists(st.integers(0, 2), max_size=40), st.randoms(use_true_random=False))))
def test_assemble_adds_edges_in_the_order_given(case):
    # blocks of different attributes interleaved (a direct fabric's single and double
    # cables): order= adds the edges as add_edge one by one in that order would
    n, pairs, kinds, rng = case
    seen, edges = set(), []
    for a, b in pairs:
        if a != b and frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            edges.append((a, b))
    cables = [{"bandwidth": 1e9 * (k + 1), "latency": 1e-8, "medium": "copper",
               "lanes": k + 1, **({"links": k + 1} if k else {})} for k in range(3)]
    kind = [kinds[e] if e < len(kinds) else e % 3 for e in range(len(edges))]
    rng.shuffle(edges)
    # blocks by kind, each in the edges' order: block entry i (counted over the blocks one
    # after the other) is addition pos[i], so addition k is entry order[k]
    pos = [e for k in range(3) for e in range(len(edges)) if kind[e] == k]
    order = np.argsort(np.array(pos, dtype=np.int64))
    blocks = [Links([edges[e][0] for e in pos if kind[e] == k],
                    [edges[e][1] for e in pos if kind[e] == k], cables[k]) for k in range(3)]
    gpu = {"kind": "gpu", "gpu": "Lite"}
    new = assemble(nx.Graph(gpus=n), [Nodes("gpu", n, gpu)], blocks, check=False,
                   order=order)
    old = nx.Graph(gpus=n)
    old.add_nodes_from((f"gpu{i}", dict(gpu)) for i in range(n))
    for e, (a, b) in enumerate(edges):
        old.add_edge(f"gpu{a}", f"gpu{b}", **cables[kind[e]])
    assert_identical(new, old)


def test_assemble_refuses_an_order_that_is_not_a_permutation():
    nodes = [Nodes("gpu", 3, {"kind": "gpu", "gpu": "Lite"})]
    cable = link(1e9, 0.0, "copper")
    with pytest.raises(ValueError, match="permutation"):
        assemble(nx.Graph(gpus=3), nodes, [Links([0, 1], [1, 2], cable)], order=[0, 0])


def _pair(cable=None, gpu="H100-SXM", radix=4, gpus=2, **labels):
    """Two GPUs on one switch, in blocks; the plain graph and the blocks' verdict."""
    cable = cable or {"bandwidth": 1e9, "latency": 1e-8, "medium": "copper", "lanes": 1}
    nodes = [Nodes("gpu", 2, {"kind": "gpu", "gpu": gpu}, labels),
             Nodes("nvs", 1, switch_attrs(0, radix, 1e-7, True))]
    return nx.Graph(name="pair", spec="", gpus=gpus), nodes, [Links([0, 1], [2, 2], cable)]


@pytest.mark.parametrize("change", [
    {"cable": {"bandwidth": float("nan"), "latency": 0.0, "medium": "copper", "lanes": 1}},
    {"cable": {"bandwidth": 1e9, "latency": -1.0, "medium": "copper", "lanes": 1}},
    {"cable": {"bandwidth": 1e9, "latency": 0.0, "medium": "string", "lanes": 1}},
    {"cable": {"bandwidth": 1e9, "latency": 0.0, "medium": "copper", "lanes": True}},
    {"cable": {"bandwidth": 1e9, "latency": 0.0, "medium": "copper"}},
    {"cable": {"bandwidth": 1e9, "latency": 0.0, "medium": "copper", "lanes": 1, "links": 3}},
    {"gpu": "NoSuchGPU"}, {"radix": 1}, {"gpus": 3}, {"rack": [0, -1]}, {"pod": [True, False]},
])
def test_block_checks_refuse_what_validate_refuses_with_its_message(change):
    graph, nodes, links = _pair(**change)
    plain = graph.copy()
    assemble(plain, nodes, links, check=False)
    with pytest.raises(UserError) as expected:
        validate(plain)
    with pytest.raises(UserError) as got:
        assemble(graph, nodes, links)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("share, radix, fits", [(0.5, 1, True), (0.75, 1, False),
                                                 (1.0, 2, True), (1.5, 2, False)])
def test_block_checks_count_fractional_cables_as_validate_does(share, radix, fits):
    cable = {"bandwidth": 1e9, "latency": 0.0, "medium": "copper", "lanes": 1, "links": share}
    graph, nodes, links = _pair(cable, radix=radix, rack=np.array([0, 3]))
    assert check_blocks(assemble(graph, nodes, links, check=False), nodes, links) == fits
    if fits:
        assert validate(graph) is graph
        assert assemble(_pair(cable, radix=radix)[0], nodes, links).nodes["gpu1"] == \
            {"kind": "gpu", "gpu": "H100-SXM", "rack": 3}
    else:
        with pytest.raises(UserError, match=f"switch 'nvs0' uses {2 * share} ports but its "
                                            f"radix is {radix}"):
            assemble(_pair(cable, radix=radix)[0], nodes, links)


def test_a_disconnected_fabric_is_refused_with_validates_message():
    cable = link(1e9, cable_latency(SCALEUP_LENGTH, "copper"), "copper")
    nodes = [Nodes("gpu", 4, {"kind": "gpu", "gpu": "Lite"})]
    with pytest.raises(UserError, match=r"GPU 'gpu2' cannot reach GPU 'gpu0' \(2 GPU"):
        assemble(nx.Graph(name="x", spec="", gpus=4), nodes, [Links([0, 2], [1, 3], cable)])


@pytest.mark.parametrize("u, v, message", [
    ([0], [0], "itself"), ([0, 1], [1, 0], "twice"), ([0], [5], "outside")])
def test_builder_mistakes_are_value_errors(u, v, message):
    nodes = [Nodes("gpu", 2, {"kind": "gpu", "gpu": "Lite"})]
    cable = link(1e9, 0.0, "copper")
    with pytest.raises(ValueError, match=message):
        assemble(nx.Graph(gpus=2), nodes, [Links(u, v, cable)])


# ---------------------------------------------------------------- validate's walk


class _Sub(nx.Graph):
    """A Graph subclass: validate reads it through the networkx views."""


BAD = [("bandwidth", -1.0, "bandwidth must be finite and > 0"), ("lanes", None, "lacks"),
       ("medium", "smoke", "medium 'smoke' is not one of"), ("links", 0, "links must be"),
       ("latency", float("inf"), "latency must be finite")]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 47), st.integers(0, 47), st.sampled_from(BAD), st.sampled_from(BAD),
       st.booleans())
def test_validate_names_the_first_bad_edge_in_edge_order(i, j, bad_i, bad_j, subclass):
    assume(i != j)
    g = build("fat-tree:k=4")  # 48 edges
    if subclass:
        g = _Sub(g)
    edges = list(g.edges)
    for index, (key, value, _) in ((i, bad_i), (j, bad_j)):
        data = g.edges[edges[index]]
        if value is None:
            del data[key]
        else:
            data[key] = value
    first = min(i, j)
    u, v = edges[first]
    expected = (bad_i if first == i else bad_j)[2]
    with pytest.raises(UserError, match=f"edge '{u}'-'{v}' .*{expected}"):
        validate(g)


def test_validate_counts_cables_where_an_edge_stands_for_several():
    g = build("leaf-spine:leaves=2,radix=4,spines=1")  # each leaf: 2 GPUs + 2 cables up
    assert g.edges["leaf0", "spine0"]["links"] == 2 and validate(g) is g
    g.nodes["spine0"]["radix"] = 3  # 2 leaves x 2 cables > 3 ports; 2 edges would fit
    with pytest.raises(UserError, match="switch 'spine0' uses 4 ports but its radix is 3"):
        validate(g)
    g.edges["leaf0", "spine0"]["links"] = 0.5  # a breakout share: 2.5 cables fit 3 ports
    assert validate(g) is g
    g.nodes["spine0"]["radix"] = 2
    with pytest.raises(UserError, match="switch 'spine0' uses 2.5 ports but its radix is 2"):
        validate(_Sub(g))


def test_validate_takes_the_first_gpu_for_connectivity():
    g = build("ring:n=4")
    g.remove_edges_from([("gpu1", "gpu2"), ("gpu3", "gpu0")])
    with pytest.raises(UserError, match=r"GPU 'gpu2' cannot reach GPU 'gpu0' \(2 GPU"):
        validate(g)
    assert validate(g, check_connected=False) is g


def test_assemble_fills_only_an_empty_plain_graph():
    nodes = [Nodes("gpu", 2, {"kind": "gpu", "gpu": "Lite"})]
    cable = link(1e9, 0.0, "copper")
    with pytest.raises(ValueError, match="empty networkx.Graph"):
        assemble(_Sub(gpus=2), nodes, [Links([0], [1], cable)])
    g = nx.Graph(gpus=2)
    g.add_node("gpu7", kind="gpu", gpu="Lite")
    with pytest.raises(ValueError, match="empty networkx.Graph"):
        assemble(g, nodes, [Links([0], [1], cable)])
