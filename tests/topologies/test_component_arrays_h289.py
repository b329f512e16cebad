"""failure_domains.component_arrays (h289): the components of each class as arrays, for
hardware_radius at cluster scale, are exactly components()' (same order, parts, and what
each removes or thins), over every builder's shapes: breakout bundles (lite-groups
split=even, shares of 1/4, 1/3 and 4.5 cables), tier-0 switches that stop GPUs (nvl72,
superpod, rail-optimized), OCS, direct fabrics, and fabrics with links cut."""

import numpy as np
import pytest

from topologies.analysis import edge_arrays
from topologies.failure_domains import CLASSES, component_arrays, components
from topologies.specs import build

SPECS = [
    "leaf-spine:leaves=2,radix=4,gpu=Lite",
    "lite-groups:base=[fat-tree:k=8],lites=4,split=even",
    "lite-groups:base=[leaf-spine:leaves=2,radix=8],lites=3,split=even",
    "lite-groups:base=[nvl72:racks=1],lites=4,split=even",
    "lite-groups:base=[rail-optimized:domains=2],lites=4,split=gateway",
    "lite-groups:base=[fat-tree:k=8],lites=2",
    "nvl72:racks=2",
    "superpod:sus=1",
    "rail-optimized:domains=4",
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


def test_by_hand():
    # leaf-spine of 2 leaves x radix 4: 4 GPU cables then 4 leaf-spine cables, each a
    # transceiver at both ends (2 parts) removed whole; a NIC per GPU cable; 2 leaves, 2 spines
    c = component_arrays(build("leaf-spine:leaves=2,radix=4,gpu=Lite"))
    assert c["transceiver"].parts.tolist() == [2.0] * 8
    assert c["transceiver"].removed.all() and len(c["transceiver"].rest) == 0
    assert c["nic"].parts.tolist() == [1.0] * 4
    assert len(c["leaf"]) == len(c["spine"]) == 2 and c["leaf"].node is not None
    # 4 Lites a group share one NIC cable (links 1/4): one bundle of 1 cable (the switch
    # end's part, removing all four shares) and each share's far end and NIC (1 part each)
    lite = component_arrays(build("lite-groups:base=[fat-tree:k=8],lites=4,split=even"))
    bundles = [x for x in lite["transceiver"].rest if "bundle" in x.name]
    assert bundles and all(x.parts == 1.0 and len(x.edges) == 4 for x in bundles)
    assert len(lite["nic"].rest) == 512 and len(lite["nic"].parts) == 0
