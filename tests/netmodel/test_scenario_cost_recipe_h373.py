"""One recipe of a scenario's cost model (netmodel.study.scenario_fabric.scenario_cost_model)
and one rule of a stage boundary (netmodel.study.placed_cost.stage_boundary)."""

import ast
from pathlib import Path

import pytest

from netmodel.study.placed_cost import stage_boundary
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_fabric import build_fabric, scenario_calibration, scenario_cost_model

STUDY = Path(__file__).resolve().parents[2] / "netmodel" / "study"


@pytest.mark.parametrize("module", ["crossovers", "instance_cost", "fabric_search",
                                    "scenario_collectives",
                                    "reliability_cluster", "adjusted_comm", "placed_cost",
                                    "placed_graph"])
def test_no_own_cost_model_recipe_h373(module):
    """These modules make a scenario's cost model through scenario_cost_model (or
    scenario_model), not by calling FabricCostModel with the settings spelled out again."""
    tree = ast.parse((STUDY / f"{module}.py").read_text())
    calls = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, "id", getattr(n.func, "attr", None)) == "FabricCostModel"]
    assert calls == []


def test_scenario_cost_model_settings_h373():
    """The scenario's placement, algorithm, tuner and scope "collectives" with the given
    calibration; a routing keyword given replaces the scenario's."""
    s = get_scenario("h100-dgx")
    g = build_fabric(s)
    cal = scenario_calibration(s)
    m = scenario_cost_model(s, g, cal, validated=True)
    assert (m.placement, m.algorithm, m.scope) == (s.placement, s.algorithm, "collectives")
    assert m.graph is g
    other = "random" if s.placement != "random" else "contiguous"
    m2 = scenario_cost_model(s, g, cal, validated=True, placement=other, scope="every-op")
    assert (m2.placement, m2.algorithm, m2.scope) == (other, s.algorithm, "every-op")


def test_stage_boundary_rule_h373():
    """A send-recv of 2 with more than one stage, nothing else; the healthy costing's
    placed instance asks the same rule."""
    assert stage_boundary("send-recv", 2, 4, 8)
    assert not stage_boundary("send-recv", 2, 8, 8)      # one stage: no boundary
    assert not stage_boundary("send-recv", 4, 4, 8)
    assert not stage_boundary("all-reduce", 2, 4, 8)
    assert not stage_boundary("send-recv", 2, None, 8)
    coll = ScenarioCollectives("h100-dgx")
    for stage in (1, 2, 4, 8):
        placed = coll.for_instance(8, stage)
        for op in ("send-recv", "all-reduce", "all-gather"):
            for p in (1, 2, 4, 8):
                assert placed.boundary(op, p) == (op == "send-recv" and p == 2 and stage < 8)
