"""Work done for many nodes or switches at once gives what doing it one at a time gives
(issue 12's speed work changes no number): scale-up domain labels, up/down structures, the
most common GPU type."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest

from netmodel.collectives import algorithms
from netmodel.collectives.algorithms import domain_key, domain_labels
from netmodel.collectives.calibration import default_calibration
from topologies import build

SPECS = ["fat-tree:k=8", "rail-optimized:domains=4", "rail-optimized:domains=2,sharp=true",
         "nvl72", "lite-groups:split=gateway", "lite-groups:base=[fat-tree:k=4],lites=2",
         "torus:dims=4x4", "ring:n=8", "single-switch:n=8",
         "leaf-spine:leaves=4,radix=8,oversubscription=2"]


def _gpus(g):
    return [n for n, d in g.nodes(data=True) if d.get("kind") == "gpu"]


def _reference_labels(graph, queries):
    """Domain numbers one GPU at a time: in order of each key's first appearance."""
    numbers: dict = {}
    return [np.array([numbers.setdefault(domain_key(graph, x), len(numbers)) for x in q],
                     dtype=np.int64) for q in queries]


@pytest.mark.parametrize("strip", [(), ("group",), ("group", "server")])
@pytest.mark.parametrize("spec", SPECS)
def test_domain_labels_equal_one_at_a_time(spec, strip):
    """``strip``: attributes taken off every GPU (so that tier-0 switches, servers or the
    GPU itself name the domains)."""
    g = build(spec)
    gpus = _gpus(g)
    for x in gpus:
        for a in strip:
            g.nodes[x].pop(a, None)
    rng = random.Random(3)
    shuffled = rng.sample(gpus, len(gpus))
    # a few GPUs first, then all in a shuffled order with repeats, then all in order
    queries = [shuffled[:3], shuffled + shuffled[:5], gpus]
    got = [domain_labels(g, q) for q in queries]
    for a, b in zip(got, _reference_labels(g, queries), strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()


def test_domain_keys_of_mixed_nodes():
    """Group labels, tier-0 switches (several per GPU, names sorted as strings, two
    switches whose names read alike), servers and bare GPUs, asked together."""
    g = nx.Graph()
    g.add_node("s10", kind="switch", tier=0)
    g.add_node("s9", kind="switch", tier=0)
    g.add_node(7, kind="switch", tier=0)
    g.add_node("7", kind="switch", tier=0)
    g.add_node("up", kind="switch", tier=1)
    edges = {"a": ["s9", "s10", "up"], "b": ["s10", "s9"], "c": [7], "d": ["7"],
             "e": ["up"], "f": [], "h": ["s9"]}
    for gpu, sws in edges.items():
        g.add_node(gpu, kind="gpu")
        for s in sws:
            g.add_edge(gpu, s)
    g.nodes["e"]["server"] = "srv"
    g.nodes["h"]["group"] = 4
    nodes = ["a", "b", "c", "d", "e", "f", "h"]
    keys = [("gpu", x) if k is None else k
            for x, k in zip(nodes, algorithms._domain_keys(g, nodes), strict=True)]
    assert keys == [domain_key(g, x) for x in nodes]
    assert keys[0] == ("switch", ("s10", "s9")) == keys[1]
    assert keys[2] == keys[3] == ("switch", ("7",))
    assert keys[4:] == [("server", "srv"), ("gpu", "f"), ("group", 4)]
    assert domain_labels(g, nodes).tolist() == [0, 0, 1, 1, 2, 3, 4]
    # new GPUs asked with known ones: numbered after them, a known domain keeps its number
    g.add_node("i", kind="gpu", server="srv")
    g.add_node("j", kind="gpu", group=5)
    g.add_node("k", kind="gpu")
    g.add_edge("k", "s9")
    g.add_edge("k", "s10")
    assert domain_labels(g, ["f", "j", "i", "k", "j", "b"]).tolist() == [3, 5, 2, 0, 5, 0]


@pytest.mark.parametrize("types, want", [
    (["A100-SXM-80GB"] * 5 + ["B200-HGX"] * 3, "ampere"),
    (["B200-HGX"] * 4 + ["A100-SXM-80GB"] * 4, "blackwell"),  # a tie: the first seen
    (["B200-HGX", "A100-SXM-80GB"] * 4, "blackwell"),
])
def test_most_common_gpu_type_from_the_gpu_list(types, want):
    """The GPU list given (the router's) and the graph's own nodes name the same type."""
    cal = default_calibration()
    results = []
    for given in (True, False):
        g = build("single-switch:n=8")
        gpus = _gpus(g)
        for x, t in zip(gpus, types, strict=True):
            g.nodes[x]["gpu"] = t
        r = cal.resolve(g, gpus if given else None)
        results.append(r)
        assert r.generation == want
    assert results[0] == results[1]


@pytest.mark.parametrize("spec", ["rail-optimized:domains=4", "nvl72", "fat-tree:k=8"])
def test_domain_labels_with_the_routers_tiers(spec):
    """Tier-0 switches taken from the router's tiers or found in the graph: same labels."""
    from netmodel.collectives.routing import Router

    a, b = build(spec), build(spec)
    gpus = _gpus(a)
    assert domain_labels(a, gpus, Router(a).tier).tolist() == domain_labels(b, gpus).tolist()
    assert algorithms._TIER0.get(a) == algorithms._TIER0.get(b)
