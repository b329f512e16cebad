"""Footprints and shapes of instances on a cell of GPUs alone (a torus, a ring, a mesh)
are routed on the shortest paths between the two GPUs, not by a search of the whole cell
(h271: the footprints of a 2,048-GPU torus took 23 s of a 32 s blast radius)."""

from __future__ import annotations

import pytest

from netmodel.study.cell_routes import CellRoutes
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario


def _cluster(spec: str, model: str = "Llama-3-70B"):
    return build_cluster(fabric_cluster_scenario(spec), model, "decode")


@pytest.mark.parametrize("spec,model", [
    ("torus:dims=4x4x4", "Llama-3-70B"),     # sides of 4: two shortest ways round
    ("torus:dims=8x8", "Llama-3.1-405B"),    # TP 8 along a row of 8: wraps
    ("torus:dims=6x6", "Llama-3.1-405B"),    # TP 8 over a row and a bit of the next
    ("ring:n=16", "Llama-3-70B"),
    ("full-mesh:n=8", "Llama-3-70B"),
])
def test_local_routes_equal_the_whole_cell_router(spec, model):
    c = _cluster(spec, model)
    assert c._routes.gpus_only
    fast = [(c._footprint(i), c._shape(i)) for i in c.instances]
    assert "router" not in c._routes.__dict__   # no router of the whole cell was built
    c.__dict__["_routes"] = CellRoutes(c.graph)
    c._routes.__dict__["gpus_only"] = False      # the router of the whole cell, as before
    slow = [(c._footprint(i), c._shape(i)) for i in c.instances]
    assert fast == slow


def test_torus_route_is_the_shortest_paths_between():
    # 4x4 torus, gpu0 -> gpu5 (one step in each side): the two 2-hop paths, via gpu1 and
    # via gpu4, each link of them once; gpu0 -> gpu2 (two steps along a side of 4): both
    # ways round, 4 links
    c = _cluster("torus:dims=4x4", "Llama-3-8B")
    links = c._route("gpu0", "gpu5")
    assert sorted(links) == [("gpu0", "gpu1"), ("gpu0", "gpu4"), ("gpu1", "gpu5"),
                             ("gpu4", "gpu5")]
    assert sorted(c._route("gpu0", "gpu2")) == [("gpu0", "gpu1"), ("gpu0", "gpu3"),
                                                ("gpu1", "gpu2"), ("gpu3", "gpu2")]


def test_switched_cell_keeps_the_router():
    c = _cluster("fat-tree:k=4")
    assert not c._routes.gpus_only
    assert c._route("gpu0", "gpu1") is not None
    assert "router" in c._routes.__dict__


def test_translates_are_routed_once():
    # 8x8x8 torus, TP 4 along the last side: 128 instances, their pairs' parts of the
    # torus alike up to a place in the row (0-3 or 4-7: no wrap) -> a handful of routings
    c = _cluster("torus:dims=8x8x8")
    assert c.tp == 4 and len(c.instances) == 128
    _ = c._index
    assert len(c._routes.local_routes) <= 6


def test_direct_cell_problem_named_by_what_made_it():
    # a torus's degraded cell is keyed by the failures and spares it was made from, not
    # by all its nodes and links; the same failure gives the same key, another another,
    # and the cost is the one the whole-graph key gave
    c = _cluster("torus:dims=8x8x8")
    comps = list(c.components["copper-end"][:2])   # a cable's end: the link removed
    assert all(x.edges for x in comps)
    inst = c.instances[0]
    g1 = c.recost_graph([comps[0]], inst)
    k1 = c.costing._problem(g1, inst)[2]
    assert k1[0] == "made"
    r1 = c.instance_result(g1, inst)
    g1b = c.recost_graph([comps[0]], inst)
    assert c.costing._problem(g1b, inst)[2] == k1
    g2 = c.recost_graph([comps[1]], inst)
    assert c.costing._problem(g2, inst)[2] != k1
    # the whole-graph key's costing (a fresh cluster, the short way off)
    d = _cluster("torus:dims=8x8x8")
    g = d.recost_graph([comps[0]], inst)
    d.costing.forget_made()
    assert d.costing._problem(g, inst)[2][0] == "Graph"
    r = d.instance_result(g, inst)
    assert (r.latency, r.tokens_per_s, r.batch) == (r1.latency, r1.tokens_per_s, r1.batch)
