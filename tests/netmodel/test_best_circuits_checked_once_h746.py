"""``circuits = "best"`` on a (degraded) cell: each layout's circuit graph is checked once,
by realize that makes it, not again by the cost model that times it (as layout_model sets
the healthy cell's), unless the scenario's adjustments copied it (h746)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.collectives import model as fabric_model
from netmodel.study.placed_graph import instance_circuits
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from netmodel.study.scenarios import Adjust


def _models_checked(scenario, monkeypatch) -> tuple[int, list]:
    seen = []
    original = fabric_model.validate

    def counted(graph, **kwargs):
        seen.append(graph)
        return original(graph, **kwargs)

    monkeypatch.setattr(fabric_model, "validate", counted)
    g = build_fabric(scenario).copy()   # a copy, as the re-costing's (not frozen)
    out = instance_circuits(scenario, g, [f"gpu{i}" for i in range(16)])
    return len(seen), sorted(tuple(sorted(map(str, e))) for e in out.edges())


def test_layouts_checked_by_realize_alone(monkeypatch):
    s = replace(get_scenario("lite-ocs"), circuits="best")
    assert s.adjust.is_identity
    checked, edges = _models_checked(s, monkeypatch)
    assert checked == 0   # ring and torus: realize checked both (two more checks before)
    # the circuits chosen are those the scenario's own word sets
    monkeypatch.undo()
    for lay in ("ring", "torus"):
        got = _models_checked(replace(s, circuits=lay), monkeypatch)[1]
        monkeypatch.undo()
        if got == edges:
            break
    else:
        pytest.fail("best set neither the ring's circuits nor the torus's")


def test_adjusted_copies_still_checked(monkeypatch):
    s = replace(get_scenario("lite-ocs"), circuits="best",
                adjust=Adjust(bandwidth_scale=0.5))
    checked, _ = _models_checked(s, monkeypatch)
    assert checked == 2   # each layout's adjusted copy, made after realize's check
