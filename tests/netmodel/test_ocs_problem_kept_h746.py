"""An instance's costing problem on an OCS fabric where GPUs forward no traffic is kept by
what its circuits are set from, the graph and the members
(:func:`~netmodel.study.placed_graph.problem_key`): a graph of the same nodes, links and
attributes is not set again, and the problem (and the instance's cost) is the one a fresh
costing works out (h746)."""

from __future__ import annotations

from netmodel.study.placed_graph import problem_key
from netmodel.study.reliability_cluster import build_cluster

MODEL = "Llama-3-70B"


def _port_failure(c, inst):
    # a CPO engine of the instance's first GPU: one OCS port lost, the circuits re-set
    return next(x for x in c.components["cpo-engine"] if inst[0] in x.edges[0])


def test_equal_graphs_one_problem():
    c = build_cluster("lite-ocs", MODEL, "decode")
    assert c.scenario.is_ocs and not c.direct
    inst = c.instances[1]
    comp = _port_failure(c, inst)
    first, again = c.recost_graph([comp], inst), c.recost_graph([comp], inst)
    assert first is not again and problem_key(first, inst) == problem_key(again, inst)
    kept = c.costing._new_problem(first, inst)
    assert c.costing._new_problem(again, inst) is kept   # not set again
    fresh = build_cluster("lite-ocs", MODEL, "decode")
    want = fresh.costing._set_problem(fresh.recost_graph([comp], inst), inst)
    assert (kept[1], kept[2]) == (want[1], want[2])
    assert problem_key(kept[0], kept[1]) == problem_key(want[0], want[1])
    got = c.rebalanced(again, inst)
    alone = fresh.rebalanced(fresh.recost_graph([comp], inst), inst)
    assert (got.batch, got.tokens_per_s, got.latency) == \
        (alone.batch, alone.tokens_per_s, alone.latency)
    assert got.tokens_per_s < c.healthy[1].tokens_per_s   # a port lost: slower


def test_other_graphs_other_problems():
    c = build_cluster("lite-ocs", MODEL, "decode")
    a, b = c.instances[0], c.instances[1]
    one = c.costing._new_problem(c.recost_graph([_port_failure(c, a)], a), a)
    other = c.costing._new_problem(c.recost_graph([_port_failure(c, b)], b), b)
    healthy = c.costing._new_problem(c.recost_graph([], a), a)
    assert other is not one and healthy is not one
    assert healthy[2] != one[2]   # a port lost: other circuits
