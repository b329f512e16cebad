"""bill_of_materials and port_use from one pass of arrays (h270): the same counts, types and
dict order as the per-edge loops they replaced (kept here as the reference), on every
builder, breakout shares, OCS fabrics bare and realized, and a hand-made graph; the
arrays built once can be passed to each (``edges=``), and to injection_bandwidth."""

from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import pytest

from topologies import build
from topologies.analysis import injection_bandwidth
from topologies.edge_arrays import edge_arrays
from topologies.inventory import (
    OPTICAL_MEDIA,
    BillOfMaterials,
    bill_of_materials,
    port_fill,
    port_use,
)
from topologies.schema import TRACE_MEDIA


def _end_parts(kind, links):
    if kind == "ocs":
        return 0
    if kind == "gpu":
        return math.ceil(links - 1e-9)
    return links


def reference_port_use(graph):
    """The replaced loop (a62200f's topologies.inventory.port_use)."""
    kind = dict(graph.nodes(data="kind"))
    gpu_ports, net_ports, port_rate = {}, {}, {}
    for u, v, d in graph.edges(data=True):
        if d["medium"] == "ocs-circuit":
            continue
        links = d.get("links", 1)
        for a, b in ((u, v), (v, u)):
            if kind[a] == "gpu":
                continue
            target = gpu_ports if kind[b] == "gpu" else net_ports
            target[a] = target.get(a, 0.0) + links
            port_rate[a] = max(port_rate.get(a, 0.0), d["bandwidth"] / links)
    return gpu_ports, net_ports, port_rate


def reference_bom(graph):
    """The replaced loop (a62200f's topologies.analysis.bill_of_materials)."""
    kinds = dict(graph.nodes(data="kind"))
    cables, traces = Counter(), Counter()
    lanes = 0
    plug = cpo = switch_used = ocs_used = circuits = 0.0
    cabling = graph.graph.get("ocs_cabling")
    if cabling is not None:
        cables[cabling["medium"]] += cabling["cables"]
        lanes += cabling["lanes"]
        ocs_used += cabling["cables"]
        if cabling["medium"] in OPTICAL_MEDIA:
            plug += cabling["cables"]
        elif cabling["medium"] == "co-packaged-optics":
            cpo += cabling["cables"]
    for u, v, d in graph.edges(data=True):
        links = d.get("links", 1)
        medium = d["medium"]
        if medium == "ocs-circuit" and cabling is not None:
            circuits += links
            continue
        lanes += d["lanes"]
        if medium == "ocs-circuit":
            circuits += links
            ocs_used += 2 * links
            optics = d.get("optics", "co-packaged-optics")
            if optics == "co-packaged-optics":
                cpo += 2 * links
            elif optics in OPTICAL_MEDIA:
                plug += 2 * links
            continue
        (traces if medium in TRACE_MEDIA else cables)[medium] += links
        for end in (u, v):
            kind = kinds[end]
            if kind == "ocs":
                ocs_used += links
                continue
            if kind == "switch":
                switch_used += links
            share = _end_parts(kind, links)
            if medium in OPTICAL_MEDIA:
                plug += share
            elif medium == "co-packaged-optics":
                cpo += share
    ports = sum(d["radix"] for _, d in graph.nodes(data=True) if d["kind"] == "switch")
    ocs_ports = sum(d["ports"] for _, d in graph.nodes(data=True) if d["kind"] == "ocs")

    def whole(counts):
        return {m: (round(c) if abs(c - round(c)) < 1e-6 else c)
                for m, c in sorted(counts.items())}

    return BillOfMaterials(
        cables=whole(cables), lanes=int(lanes), pluggable_transceivers=round(plug),
        cpo_ports=round(cpo), switch_ports_used=round(switch_used), switch_ports=ports,
        ocs_ports_used=round(ocs_used), ocs_ports=ocs_ports, circuits=round(circuits),
        traces=whole(traces), nics=reference_nics(graph), nic_worth=reference_nic_worth(graph),
        pluggable_ends=round(plug), module_ports=graph.graph.get("module_ports", 1))


def reference_nics(graph):
    """GPUs holding a scale-out NIC, edge by edge (h452): a link of pluggable optics, fibre
    or copper to a switch of tier >= 1 or an OCS, or an OCS circuit of such optics."""
    nic_media = ("pluggable-optics", "fibre", "copper")
    holds = set()
    for u, v, d in graph.edges(data=True):
        for g, far in ((u, v), (v, u)):
            if graph.nodes[g]["kind"] != "gpu":
                continue
            f = graph.nodes[far]
            network = f["kind"] == "ocs" or (f["kind"] == "switch" and f["tier"] >= 1)
            if (network and d["medium"] in nic_media) or (
                    d["medium"] == "ocs-circuit"
                    and d.get("optics", "co-packaged-optics") in nic_media):
                holds.add(g)
    return len(holds)


def reference_nic_worth(graph):
    """NICs' worth, edge by edge: each link of pluggable optics, fibre or copper from a GPU
    to a switch of tier >= 1 or an OCS, and each GPU end of an OCS circuit of such optics,
    holds its ``links`` (a breakout share its share)."""
    nic_media = ("pluggable-optics", "fibre", "copper")
    worth = 0.0
    for u, v, d in graph.edges(data=True):
        for g, far in ((u, v), (v, u)):
            f = graph.nodes[far]
            network = f["kind"] == "ocs" or (f["kind"] == "switch" and f["tier"] >= 1)
            if graph.nodes[g]["kind"] == "gpu" and (
                    (network and d["medium"] in nic_media) or (
                        d["medium"] == "ocs-circuit"
                        and d.get("optics", "co-packaged-optics") in nic_media)):
                worth += d.get("links", 1)
    return float(round(worth)) if abs(worth - round(worth)) < 1e-9 else worth


def _realized():
    from topologies.optical import realize

    return realize(build("ocs:gpus=16,ports=2,ocs_ports=16"), "ring")


def _hand_made():
    g = nx.Graph(name="hand")
    for i in range(3):
        g.add_node(f"g{i}", kind="gpu", gpu="H100-SXM")
    g.add_node("sw", kind="switch", tier=1, radix=8)
    g.add_node("o", kind="ocs", ports=8, reconfiguration_time=0.01)
    g.add_edge("g0", "sw", bandwidth=50e9, latency=1e-6, medium="pluggable-optics", lanes=4,
               links=0.25)
    g.add_edge("g1", "sw", bandwidth=100e9, latency=1e-6, medium="co-packaged-optics",
               lanes=2, links=2.5)
    g.add_edge("g2", "o", bandwidth=50e9, latency=1e-6, medium="fibre", lanes=1)
    g.add_edge("sw", "o", bandwidth=50e9, latency=1e-6, medium="copper", lanes=1, links=3)
    g.add_edge("g0", "g1", bandwidth=50e9, latency=1e-6, medium="ocs-circuit", lanes=1,
               optics="pluggable-optics")
    g.add_edge("g1", "g2", bandwidth=50e9, latency=1e-6, medium="board", lanes=1)
    return g


SPECS = ["fat-tree:k=8", "torus:dims=4x4x2", "rail-optimized:domains=4", "superpod:sus=1,module_ports=1",
         "nvl72:racks=2", "ring:n=16", "full-mesh:n=8", "leaf-spine:leaves=4,radix=8",
         "flat:n=128,planes=4,radix=144", "ocs:gpus=64,ports=4,ocs_ports=64",
         "lite-groups:base=[fat-tree:k=8],lites=4", "lite-groups:base=[superpod:sus=1,module_ports=1],lites=2",
         "single-switch:n=8"]


@pytest.mark.parametrize("make", [*(lambda s=s: build(s) for s in SPECS), _realized,
                                  _hand_made],
                         ids=[*SPECS, "ocs realized", "hand-made"])
def test_arrays_give_the_per_edge_counts(make):
    g = make()
    want_bom, want_use = reference_bom(g), reference_port_use(g)
    edges = edge_arrays(g)
    for bom in (bill_of_materials(g), bill_of_materials(g, edges)):
        assert repr(bom) == repr(want_bom)   # same values and types (int vs float)
    for use in (port_use(g), port_use(g, edges)):
        assert [list(d.items()) for d in use] == [list(d.items()) for d in want_use]
    assert port_fill(g, edges) == port_fill(g)
    if any(k == "gpu" for _, k in g.nodes(data="kind")):
        # the per-GPU sums added in graph.degree's order: the same floats, the same GPU
        assert injection_bandwidth(g, edges) == injection_bandwidth(g)


def test_hand_made_counts_by_hand():
    # g0-sw: a quarter share, optics: 1 transceiver at the GPU + 0.25 at the switch;
    # g1-sw: 2.5 CPO cables: 3 engines at the GPU + 2.5 at the switch; g2-o fibre: 1 at
    # the GPU, none at the OCS; the pluggable circuit g0-g1: 2 ends; traces need none
    b = bill_of_materials(_hand_made())
    assert b.cables == {"co-packaged-optics": 2.5, "copper": 3, "fibre": 1,
                        "pluggable-optics": 0.25}
    assert b.traces == {"board": 1}
    assert b.pluggable_transceivers == round(1 + 0.25 + 1 + 2)
    assert b.cpo_ports == round(3 + 2.5)
    assert b.switch_ports_used == round(0.25 + 2.5 + 3)
    assert b.ocs_ports_used == 1 + 3 + 2 and b.circuits == 1 and b.lanes == 10
    gpu, net, rate = port_use(_hand_made())
    assert gpu == {"sw": 2.75, "o": 1.0} and net == {"sw": 3.0, "o": 3.0}
    assert rate == {"sw": 200e9, "o": 50e9}


@pytest.mark.parametrize("spec", ["torus:dims=4x4x2", "fat-tree:k=4", "superpod:sus=1"])
def test_injection_sums_in_the_same_order_with_inexact_bandwidths(spec):
    import random

    rng = random.Random(270)
    for _ in range(20):
        g = build(spec)
        for _, _, d in g.edges(data=True):
            d["bandwidth"] = rng.uniform(0.1, 3) * 1e9 / 3   # sums that round by order
        assert injection_bandwidth(g, edge_arrays(g)) == injection_bandwidth(g)
