"""Work the blast radius did per instance or per route and now does once (h281): the
degraded cell of one failure is made once for every instance it touches (each copy of a
131,072-GPU torus took 0.5 s), and each pair of GPUs is routed once for an instance's
footprint and its shape, then forgotten."""

from __future__ import annotations

import copy

from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario


def _cluster(spec: str, model: str = "Llama-3-70B"):
    return build_cluster(fabric_cluster_scenario(spec), model, "decode")


def _snapshot(g):
    return (copy.deepcopy(dict(g.graph)), copy.deepcopy(list(g.nodes(data=True))),
            [(n, copy.deepcopy(list(g.adj[n].items()))) for n in g])


def test_one_failure_one_degraded_cell():
    # 8x8x8 torus, TP 4: a cable's end touches the instances routed over it; each is costed
    # on the same degraded cell, which costing leaves as it was, and costs as on a cell of
    # its own (a fresh cluster, every graph made anew)
    c = _cluster("torus:dims=8x8x8")
    assert c._direct and c.tp == 4
    comp = c.components["copper-end"][0]
    _, _, _, touched = c._local(comp)
    insts = [c.instances[i] for i in sorted(touched)]
    assert len(insts) >= 2
    g = c.recost_graph([comp], insts[0])
    before = _snapshot(g)
    assert len(g) == 512 and g.number_of_edges() == 3 * 512 - 1   # the cable removed
    got = []
    for inst in insts:
        h = c.recost_graph([comp], inst)
        assert h is g                      # made once for the failure
        r = c.rebalanced(h, inst)
        got.append((r.batch, r.tokens_per_s, r.latency))
    assert _snapshot(g) == before          # costing changed nothing of it
    other = c.recost_graph([c.components["copper-end"][1]], insts[0])
    assert other is not g and other.number_of_edges() == 3 * 512 - 1
    d = _cluster("torus:dims=8x8x8")
    want = []
    for inst in insts:
        d.__dict__.pop("_last_direct", None)   # a graph of its own for each instance
        r = d.rebalanced(d.recost_graph([comp], inst), inst)
        want.append((r.batch, r.tokens_per_s, r.latency))
    assert got == want


def test_each_pair_routed_once():
    # the footprints (_index) and the shapes of the 128 instances ask for the same pairs of
    # GPUs: each is routed once (TP 4 along the last side of 8: every member wired to its
    # own GPUs, so all 6 pairs of each instance, 768 in all)
    c = _cluster("torus:dims=8x8x8")
    routes = c._routes
    calls = []
    local = routes.local_route
    routes.local_route = lambda a, b: calls.append((a, b)) or local(a, b)
    _ = c._index
    _ = c.shape_ids
    assert len(c.instances) == 128
    assert len(calls) == len(set(calls)) == 128 * 6
    assert not routes._pairs   # forgotten instance by instance, not kept for the cell
