"""An instance's circuits re-set after a failure start at the most copies the members'
OCS planes can carry, as the instance graph's do.

A triangle's 3 circuits share a GPU two by two, so an OCS plane carries at most one of
them: ``P`` planes carry ``P // 3`` copies, while ``ports / 2`` copies are what the ports
alone allow. Counts between are refused by the colouring, each after a full search; the
circuits found are the same either way (the colouring at the bound).
"""

from __future__ import annotations

from dataclasses import replace

import topologies.optical as optical
from netmodel.study.placed_graph import instance_circuits
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric


def _counted(monkeypatch):
    calls = []
    real = optical.realize

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(optical, "realize", counted)
    return calls


def _fabric(ports):
    s = get_scenario("lite-ocs")
    s = replace(s, fabric={**s.fabric, "ports": ports})
    g = build_fabric(s).copy()   # build_fabric's graph is kept: failures go on a copy
    return s, g, [n for n in g if g.nodes[n]["kind"] == "gpu"]


def test_triangle_colours_once(monkeypatch):
    """12 ports on 12 planes: 12 // 3 = 4 copies, 12 circuits, the first colouring tried
    (from 12 / 2 = 6 copies: 6, 5 and 4, 3 colourings, before)."""
    s, g, gpus = _fabric(12)
    calls = _counted(monkeypatch)
    c = instance_circuits(s, g, gpus[:3])
    assert len(calls) == 1
    assert c.graph["circuits"] == 12
    assert {d["links"] for _, _, d in c.edges(data=True)} == {4}


def test_triangle_after_a_port_fails(monkeypatch):
    """One member loses its port on OCS 0: 11 ports, still 12 planes among the three.
    Its two circuits a copy take 2 r <= 11 ports, r <= 5; the planes 12 // 3 = 4 copies
    (the other two members' circuit can take OCS 0). One colouring (5 and 4 before)."""
    s, g, gpus = _fabric(12)
    ocs0 = next(o for o in g.neighbors(gpus[1]) if g.nodes[o]["kind"] == "ocs")
    g.remove_edge(gpus[1], ocs0)
    calls = _counted(monkeypatch)
    c = instance_circuits(s, g, gpus[:3])
    assert len(calls) == 1
    assert c.graph["circuits"] == 12
    assert ocs0 in c.edges[gpus[0], gpus[2]]["via"].split(",")


def test_triangle_after_an_ocs_fails(monkeypatch):
    """An OCS down: 11 planes, 11 // 3 = 3 copies, 9 circuits, one colouring (5, 4, 3
    before)."""
    s, g, gpus = _fabric(12)
    g.remove_node(next(o for o in g if g.nodes[o]["kind"] == "ocs"))
    calls = _counted(monkeypatch)
    c = instance_circuits(s, g, gpus[:3])
    assert len(calls) == 1
    assert c.graph["circuits"] == 9
