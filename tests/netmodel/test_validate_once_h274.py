"""A fabric validated once (h274): a degraded copy of a validated cell made by removing
failed parts alone is not checked against the schema again (18 s of a 131,072-GPU torus's
69 s blast radius), while one with a link thinned, a spare added, an adjusted scenario or
an OCS in the cell still is; ``topology show`` does not check a built fabric twice."""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import pytest

import netmodel.collectives.model as model_mod
from compute.errors import UserError
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario
from topologies.analysis import summary
from topologies.failure_domains import Component
from topologies.schema import validate
from topologies.specs import build


def _cluster(spec: str, model: str = "Llama-3-70B"):
    return build_cluster(fabric_cluster_scenario(spec), model, "decode")


def _counting(monkeypatch) -> list:
    seen: list = []
    real = model_mod.validate

    def counted(graph, **kw):
        seen.append(graph)
        return real(graph, **kw)

    monkeypatch.setattr(model_mod, "validate", counted)
    return seen


@pytest.mark.parametrize("spec", ["torus:dims=4x4x4", "ring:n=16"])
def test_removal_only_copies_pass_and_are_not_checked_again(spec, monkeypatch):
    c = _cluster(spec)
    assert c._cell_valid
    inst = c.instances[0]
    comps = [x for cls in c.components for x in c.components[cls]]
    removal = [x for x in comps if not x.scaled]
    assert removal
    seen = _counting(monkeypatch)
    costed = 0
    for comp in removal:
        g = c.recost_graph([comp], inst)
        # the invariant the skip rests on: each such copy passes the schema
        assert validate(g, check_connected=False) is g
        if any(m not in g for m in inst):
            continue   # a member lost: the instance is down, not costed
        key = c.costing._problem(g, inst)[2]
        assert c.costing._known_valid(key)
        c.instance_result(g, inst)
        costed += 1
    assert costed
    assert seen == []   # no cost model checked a copy again


def test_thinned_link_and_spare_copies_are_still_checked(monkeypatch):
    c = _cluster("torus:dims=4x4x4")
    inst = c.instances[0]
    a, b = inst[0], next(iter(c.graph.adj[inst[0]]))
    thin = Component("copper-end", "half", scaled=(((a, b), 0.5),))
    seen = _counting(monkeypatch)
    g = c.recost_graph([thin], inst)
    assert not c.costing._known_valid(c.costing._problem(g, inst)[2])
    c.instance_result(g, inst)
    assert seen == [g]   # a thinned link may leave the allowed range: checked
    # a spare's links may take a switch past its radix: checked
    spare = ("spare0", dict(c.graph.nodes[inst[0]]), [])
    gone = c.components["gpu-die"][-1]
    g = c.recost_graph([gone], inst, [spare])
    assert not c.costing._known_valid(c.costing._problem(g, inst)[2])
    # the key of a removal alone is taken as proof; with the cell's proof withdrawn not
    g = c.recost_graph([gone], inst)
    key = c.costing._problem(g, inst)[2]
    assert c.costing._known_valid(key)
    c.__dict__["_cell_valid"] = False   # a cell that does not pass proves nothing
    assert not c.costing._known_valid(key)
    assert not c.costing._known_valid(("Graph",))


def test_cell_with_ocs_is_not_taken_as_proof():
    c = build_cluster("lite-ocs", "Llama-3-70B", "decode")
    assert "ocs" in c._kinds.values()
    assert c._cell_valid is False


def test_adjusted_scenario_copies_are_still_checked():
    c = _cluster("torus:dims=4x4x4")
    inst = c.instances[0]
    g = c.recost_graph([c.components["gpu-die"][-1]], inst)
    key = c.costing._problem(g, inst)[2]
    assert c.costing._known_valid(key)
    s = c.scenario
    c.costing.scenario = replace(s, adjust=replace(s.adjust, bandwidth_scale=0.5))
    assert not c.costing._known_valid(key)


def test_summary_validated_skips_the_check_only_when_told():
    g = build("torus:dims=4x4")
    assert summary(g, validated=True) == summary(g)
    bad = nx.Graph(g)
    bad.graph["gpus"] = 3
    with pytest.raises(UserError, match="'gpus' is 3"):
        summary(bad)
    with pytest.raises(UserError, match="validated must be true or false"):
        summary(g, validated="yes")


def test_a_fabric_graph_cell_is_not_checked_a_second_time(monkeypatch):
    """--fabric: fabric_scenario checked the graph (connectivity too), and the cell is that
    graph (no server labels to add), so _cell_valid passes it without a second check; a
    shipped scenario's built cell is still checked once."""
    import topologies.schema as schema

    seen: list = []
    real = schema.validate

    def counted(graph, **kw):
        seen.append(graph)
        return real(graph, **kw)

    c = _cluster("torus:dims=4x4x4")
    assert c.graph is c.scenario.graph
    monkeypatch.setattr(schema, "validate", counted)
    assert c._cell_valid
    assert seen == []
    shipped = build_cluster("lite-flat", "Llama-3-70B", "decode")
    assert shipped._cell_valid
    assert seen == [shipped.graph]
