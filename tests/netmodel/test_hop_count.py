"""``Router.hop_count`` (netmodel/collectives/route_search.py), what a greedy ring order
(``FabricCostModel._ordered``) asks of every pair of its group: the hops of ``route``'s
route, read from the kept shortest-path search where every node is a GPU, without laying
the route. Every ordered pair of each fabric is compared with the route's own hops."""

from __future__ import annotations

import math

import pytest

from netmodel.collectives.degraded import degrade
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from topologies import build

FABRICS = [("torus:dims=4x4", []), ("torus:dims=4x2x2", [("gpu0", "gpu1")]),
           ("torus:dims=3x5", [("gpu2", "gpu7"), ("gpu0", "gpu1")]), ("ring:n=7", []),
           ("ring:n=6", [("gpu0", "gpu1"), ("gpu3", "gpu4")]),   # cut in two
           ("full-mesh:n=5", [("gpu0", "gpu1")]), ("fat-tree:k=4", []),
           ("ocs:gpus=8,ports=2,logical=ring", [])]


@pytest.mark.parametrize(("spec", "links"), FABRICS)
def test_hop_count_is_the_routes_hops(spec, links):
    g = degrade(build(spec), links=links) if links else build(spec)
    gpus = [x for x, k in g.nodes(data="kind") if k == "gpu"]
    fast, slow = Router(g), Router(g)
    got = [fast.hop_count(a, b) for a in gpus for b in gpus]
    want = [math.inf if (r := slow.route(a, b)) is None else r.hops for a in gpus for b in gpus]
    assert got == want
    if spec == "ring:n=6":
        assert fast.hop_count("gpu1", "gpu4") == math.inf     # the two halves
        assert fast.hop_count("gpu1", "gpu3") == 2


def test_the_greedy_order_of_a_torus():
    # 4x4 torus (GPUs row by row), greedy nearest neighbour from gpu0, the first of the
    # nearest each time: along row 0, down to row 1 at its end (gpu3 -> gpu7, one hop),
    # back along row 1 as far as it goes one hop at a time, and so on
    g = build("torus:dims=4x4")
    order = FabricCostModel(g, ring_order="greedy")._ordered(tuple(f"gpu{i}" for i in range(16)))
    assert [int(x[3:]) for x in order] == [0, 1, 2, 3, 7, 4, 5, 6, 10, 9, 8, 11, 15, 12, 13,
                                           14]
