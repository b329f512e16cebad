"""failure_domains.component_arrays (h289): the components of each class as arrays, for
hardware_radius at cluster scale, are exactly components()' (same order, parts, and what
each removes or thins), and components() (made from them since h289) is exactly the loop
over the links it was before (:func:`_loop`, its rules by bundle spelled out), over every
builder's shapes: breakout bundles (lite-groups split=even, shares of 1/4, 1/3 and 4.5
cables), tier-0 switches that stop GPUs (nvl72, superpod, rail-optimized), OCS, direct
fabrics, and fabrics with links cut."""

from collections import Counter, defaultdict

import numpy as np
import pytest

from topologies.edge_arrays import edge_arrays
from topologies.failure_domains import (
    CLASSES,
    Component,
    _bundle_cables,
    _bundle_components,
    _hosts_and_racks,
    _switch_class,
    _switch_component,
    component_arrays,
    components,
    nic_heirs,
)
from topologies.schema import TRACE_MEDIA, gpu_nodes
from topologies.specs import build


def _loop(graph, gpus_per_host):
    """components() as the loop over every link made them before h289: each link its own
    bundle, a group's fractional shares to one switch one bundle, then the switches."""
    out = {c: [] for c in CLASSES}
    gpus = gpu_nodes(graph)
    heirs = nic_heirs(graph)   # GPUs handing on a shared NIC last (h455)
    for cls in ("gpu-die", "gpu-package"):
        out[cls] += [Component(cls, g, nodes=(g,)) for g in gpus if g not in heirs]
        out[cls] += [Component(cls, g, nodes=(g,), handed=h) for g, h in heirs.items()]
    _hosts_and_racks(graph, gpus, gpus_per_host, CLASSES, out)
    kinds = graph.nodes
    bundles, shared = [], defaultdict(list)
    for u, v, d in graph.edges(data=True):
        if d["medium"] == "ocs-circuit" or d["medium"] in TRACE_MEDIA:
            continue
        c = float(d.get("links", 1))
        ku, kv = kinds[u]["kind"], kinds[v]["kind"]
        if c != int(c) and (ku == "gpu") != (kv == "gpu"):
            gpu, other = (u, v) if ku == "gpu" else (v, u)
            label = kinds[gpu].get("group")
            if label is not None:
                shared[(label, other, d["medium"])].append((u, v))
                continue
        bundles.append(([(u, v)], c))
    bundles += [(edges, _bundle_cables(graph, edges)) for edges in shared.values()]
    for edges, cables in bundles:
        _bundle_components(graph, edges, cables, CLASSES, out)
    for n, d in graph.nodes(data=True):
        cls = _switch_class(d)
        if cls is not None:
            out[cls].append(_switch_component(graph, n, cls))
    return out

SPECS = [
    "leaf-spine:leaves=2,radix=4,gpu=Lite",
    "lite-groups:base=[fat-tree:k=8],lites=4,split=even",
    "lite-groups:base=[leaf-spine:leaves=2,radix=8],lites=3,split=even",
    "lite-groups:base=[nvl72:racks=1],lites=4,split=even",
    "lite-groups:base=[rail-optimized:domains=2],lites=4,split=gateway",
    "lite-groups:base=[fat-tree:k=8],lites=2",
    "nvl72:racks=2",
    "superpod:sus=1,module_ports=1",
    "rail-optimized:domains=4",
    "rail-optimized:domains=2,nics_per_server=4",
    "torus:dims=4x4x4",
    "ocs:gpus=64,ports=4,ocs_ports=64",
    "flat:n=64,planes=4,radix=64",
    "ring:n=16",
    "full-mesh:n=8",
    "single-switch:n=8",
    "fat-tree:k=8",
]


def _same(graph, gpus_per_host):
    e = edge_arrays(graph)
    listed = components(graph, gpus_per_host=gpus_per_host)
    assert listed == _loop(graph, gpus_per_host)
    assert [repr(c) for v in listed.values() for c in v] == \
        [repr(c) for v in _loop(graph, gpus_per_host).values() for c in v]
    arrays = component_arrays(graph, gpus_per_host=gpus_per_host, edges=e)
    assert tuple(arrays) == CLASSES
    for cls in CLASSES:
        a, b = listed[cls], arrays[cls]
        assert len(a) == len(b), cls
        block = len(b.parts)
        assert list(b.rest) == a[block:], cls
        for i, c in enumerate(a[:block]):
            assert c.parts == b.parts[i], (cls, c)
            assert not c.disabled, (cls, c)
            if b.node is not None:
                assert (c.nodes, c.edges, c.scaled) == ((e.nodes[b.node[i]],), (), ()), c
                continue
            j = b.edge[i]
            edge = (e.nodes[e.u[j]], e.nodes[e.v[j]])
            assert not c.nodes, c
            if b.removed[i]:
                assert (c.edges, c.scaled) == ((edge,), ()), c
            else:
                assert (c.edges, c.scaled) == ((), ((edge, (e.links[j] - 1) / e.links[j]),)), c
        assert np.array_equal(b.weights, np.array([c.parts for c in a], dtype=float)), cls


@pytest.mark.parametrize("spec", SPECS)
def test_arrays_are_components(spec):
    g = build(spec)
    _same(g, None)
    _same(g, 4)


@pytest.mark.parametrize("spec", ["fat-tree:k=8", "lite-groups:base=[fat-tree:k=8],lites=4,split=even",
                                  "nvl72:racks=2"])
def test_arrays_are_components_with_links_cut(spec):
    g = build(spec)
    g.remove_edges_from(list(g.edges())[::5])
    _same(g, 4)


@pytest.mark.parametrize("classes", [("gpu-die", "gpu-package"), ("host", "nic", "leaf"),
                                     ("transceiver", "cpo-engine", "nvswitch", "rack")])
def test_some_classes(classes):
    for spec in ("lite-groups:base=[rail-optimized:domains=2],lites=4,split=even",
                 "nvl72:racks=2"):
        g = build(spec)
        every = _loop(g, 4)
        assert components(g, gpus_per_host=4, classes=classes) == \
            {c: every[c] if c in classes else [] for c in CLASSES}


def test_by_hand():
    # leaf-spine of 2 leaves x radix 4: 4 GPU cables then 4 leaf-spine cables, each a
    # transceiver at both ends (2 parts) removed whole; a NIC per GPU cable; 2 leaves, 2 spines
    c = component_arrays(build("leaf-spine:leaves=2,radix=4,gpu=Lite"))
    assert c["transceiver"].parts.tolist() == [2.0] * 8
    assert c["transceiver"].removed.all() and len(c["transceiver"].rest) == 0
    assert c["nic"].parts.tolist() == [1.0] * 4
    assert len(c["leaf"]) == len(c["spine"]) == 2 and c["leaf"].node is not None
    # 4 Lites a group share one NIC cable (links 1/4): one bundle of 1 cable (the switch
    # end's part, removing all four shares) and each share's far end (1 part each)
    lite = component_arrays(build("lite-groups:base=[fat-tree:k=8],lites=4,split=even"))
    bundles = [x for x in lite["transceiver"].rest if "bundle" in x.name]
    assert bundles and all(x.parts == 1.0 and len(x.edges) == 4 for x in bundles)
    # the four shares of a bundle share its NIC (topologies.nics.nic_share): 512 Lites,
    # 128 NICs, each one part whose failure takes its four shares' cables
    nics = lite["nic"].rest
    assert len(nics) == 512 // 4 and len(lite["nic"].parts) == 0
    assert all(x.parts == 1.0 and len(x.edges) == 4 for x in nics)


def _twin_modules(graph):
    """The twin-port modules (module_ports 2) as a loop over the graph's links: at a node
    (a server's GPUs together, in GPU order) its optical ends of whole cables, a switch's
    down ends (to GPUs and lower tiers) and up ends apart, in link order, two a module; a
    module cuts a link whose every cable it holds, else keeps ``(C - k) / C`` of it."""
    from topologies.inventory import shared_part

    order = {n: i for i, n in enumerate(graph)}
    node = graph.nodes
    ends = defaultdict(list)
    links = list(graph.edges(data=True))
    for i, (u, v, d) in enumerate(links):
        c = d.get("links", 1)
        if d["medium"] not in ("pluggable-optics", "fibre") or c != int(c):
            continue
        for n, far in ((u, v), (v, u)):
            if node[n]["kind"] == "ocs":
                continue
            down = node[far]["kind"] == "gpu" or (
                node[far]["kind"] == "switch" and node[far]["tier"] < node[n].get("tier", -1))
            key = ("server", node[n]["server"]) if node[n]["kind"] == "gpu" and \
                "server" in node[n] else (n, down)
            ends[key] += [(order[n], i)] * int(c)
    out, count = [], defaultdict(int)
    for held in ends.values():
        held.sort()
        where = list(graph)[held[0][0]]
        for at in range(0, len(held), 2):
            taken = Counter(i for _, i in held[at:at + 2])
            cut, thin = [], []
            for i, k in taken.items():
                u, v, d = links[i]
                c = d.get("links", 1)
                (cut.append((u, v)) if k == c else thin.append(((u, v), (c - k) / c)))
            out.append(Component("transceiver", f"{where} module {count[where]}",
                                 edges=tuple(cut), scaled=tuple(thin), shared=all(
                                     shared_part(graph, u, v)
                                     for u, v in (*cut, *(x for x, _ in thin)))))
            count[where] += 1
    return out, {links[i][:2] for held in ends.values() for _, i in held}


def _twin(spec):
    g = build(spec)
    g.graph["module_ports"] = 2   # as a file may say; superpod's own default
    return g


@pytest.mark.parametrize("spec", [
    "superpod:sus=1",
    "rail-optimized:domains=4,module_ports=2",
    "rail-optimized:domains=2,nics_per_server=4,module_ports=2",   # 2 GPUs a NIC
    "fat-tree:k=6",                         # odd counts; a middle tier's down and up ends
    "leaf-spine:leaves=2,radix=4",          # no server labels: a GPU's end alone
    "flat:n=16,planes=4,radix=16,medium=pluggable-optics",   # a GPU of 4 ends: 2 modules
    "lite-groups:base=[fat-tree:k=4],lites=4,split=even",   # breakout shares stay single
    "ocs:gpus=16,ports=2,ocs_ports=16,medium=pluggable-optics",   # a GPU's 2 fibres: 1
])
def test_arrays_are_the_loop_with_twin_port_modules(spec):
    # module_ports 2: the transceiver class is the loop's single-port components of the
    # links no module of two holds, then one component a module (one part), as the loop
    # over the graph's links pairs them; every other class as single-port
    g = _twin(spec)
    single = _loop(g, 4)
    modules, paired = _twin_modules(g)
    want = {**single, "transceiver": [
        c for c in single["transceiver"]
        if not ({*c.edges, *(x for x, _ in c.scaled)} & paired)] + modules}
    assert modules and all(c.parts == 1.0 for c in modules)
    got = components(g, gpus_per_host=4)
    assert {c: v for c, v in got.items() if c != "transceiver"} == \
        {c: v for c, v in want.items() if c != "transceiver"}
    # the same components (the modules before a breakout's bundles, which the loop lists
    # first: the order is not the loop's)
    assert sorted(map(repr, got["transceiver"])) == sorted(map(repr, want["transceiver"]))
    assert [c for c in got["transceiver"] if " module " in c.name] == modules
    arrays = component_arrays(g, gpus_per_host=4)
    assert sorted(arrays["transceiver"].weights.tolist()) == sorted(
        c.parts for c in want["transceiver"])
