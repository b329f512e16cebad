"""route_policies learns the switch routes of its cabled pairs together
(Router.learn_routes, one pass over their signatures) before reading each pair's rate: the
same policies, to the bit, as routing the pairs one by one (each a pass of its own), on
lite-direct healthy and with the parts failed that the blast radius re-costs it without
(a leaf, a GPU's leaf link, a mesh cable, a NIC's bundle), and on a lite group over one
switch."""

import numpy as np
import pytest

import netmodel.collectives.route_policies as policies_module
import netmodel.collectives.route_sharing as sharing
from netmodel.api import build_fabric
from netmodel.collectives.routing import Router
from topologies import build


@pytest.fixture(scope="module")
def lite_direct():
    return build_fabric("lite-direct")


def _without(graph, nodes=(), edges=()):
    g = graph.copy()
    g.remove_edges_from(edges)
    g.remove_nodes_from(nodes)
    return g


def _policies(graph):
    """The policies of ``graph`` on a fresh router (no routes shared from another)."""
    sharing._SHARED.clear()
    return policies_module._find(Router(graph))


CASES = {
    "healthy": {},
    "leaf": {"nodes": ["leaf0"]},
    "leaf link": {"edges": [("gpu0", "leaf0")]},
    "mesh cable": {"edges": [("gpu0", "gpu1")]},
    "bundle": {"edges": [(f"gpu{i}", "leaf0") for i in range(4)]},
    "nvswitch": {"nodes": ["nvs0"]},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_learned_together_as_one_by_one(lite_direct, case, monkeypatch):
    g = _without(lite_direct, **CASES[case])
    calls = []
    learn = Router._learn_pairs

    def counted(self, keys):
        calls.append(len(keys))
        return learn(self, keys)

    monkeypatch.setattr(Router, "_learn_pairs", counted)
    together = _policies(g)
    n_together = len(calls)
    monkeypatch.setattr(Router, "learn_routes", lambda self, src, dst: None)
    calls.clear()
    alone = _policies(g)
    n_alone = len(calls)
    assert [p.name for p in together] == [p.name for p in alone]
    assert {p.name for p in together} == {"widest", "split", "balanced"}
    for a, b in zip(together, alone, strict=True):
        assert np.array_equal(a.keys, b.keys)
        assert np.array_equal(a.share, b.share)   # to the bit
        assert np.array_equal(a.to_main, b.to_main)
        nodes = a.wide._nodes
        n = len(nodes)
        for k in a.keys[:: max(1, len(a.keys) // 16)].tolist():
            u, v = nodes[k // n], nodes[k % n]
            ra, rb = a.wide.route(u, v), b.wide.route(u, v)
            assert np.array_equal(ra.links, rb.links)
            assert np.array_equal(ra.weights, rb.weights)
            assert (ra.latency, ra.hops, ra.scaleout) == (rb.latency, rb.hops, rb.scaleout)
    # the pairs were learned in fewer passes (one where their signatures are few), not
    # routed one by one: 32 groups of 4 Lites, a pass for each distinct pair of port sets
    assert n_together < n_alone
    assert n_alone >= 16


def test_lite_group_over_one_switch(monkeypatch):
    g = build("lite-groups:base=[single-switch:n=2]")
    together = _policies(g)
    monkeypatch.setattr(Router, "learn_routes", lambda self, src, dst: None)
    alone = _policies(g)
    assert [p.name for p in together] == [p.name for p in alone] \
        == ["widest", "split", "balanced"]
    for a, b in zip(together, alone, strict=True):
        assert np.array_equal(a.keys, b.keys) and np.array_equal(a.share, b.share)
