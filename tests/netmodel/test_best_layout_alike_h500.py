"""``circuits = "best"`` chosen on the first instance's circuits and the whole cell's circuits
copied from the first instance's (scenario_fabric.first_instance_layout,
circuit_copies.alike_circuits): the
same layouts, graphs and costs as setting every layout on the whole cell.

Pinned against the long way, written out here: each layout's circuits realized on the whole
cell (the first copy count topologies.optical.realize can set), each costed, the faster
kept by scenario_fabric.best_layout.
"""

from __future__ import annotations

import pickle
from dataclasses import replace

import networkx as nx
import numpy as np
import pytest

import topologies.optical as optical
from compute.errors import UserError
from netmodel.collectives.placement import partition
from netmodel.study.circuit_copies import (
    alike_circuits,
    alike_groups,
    ocs_planes,
    ocs_ports,
    worth_copying,
)
from netmodel.study.circuit_planes import circuit_options
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import (
    BEST_SIZES,
    adjusted,
    best_layout,
    build_fabric,
    first_instance_layout,
    instance_graph,
    layout_model,
    scenario_calibration,
    scenario_cost_model,
    set_layout,
)
from netmodel.study.scenarios import Adjust
from topologies.optical import realize
from topologies.schema import gpu_nodes

SIZES = (2, 3, 4, 5, 6, 8, 9, 12, 16, 32, 64, 128)


def _scenario(ports: int, circuits: str = "best", **kw):
    s = get_scenario("lite-ocs")
    return replace(s, circuits=circuits, fabric={**s.fabric, "ports": ports}, **kw)


#: The long way's circuits by (fabric, groups, layout): the same cell's circuits are realized
#: once for both tests and the cases that differ only in their adjustments (applied after,
#: on a copy). The fabric is build_fabric's (frozen; kept here, so its id names it); the
#: circuits are read and costed, never changed (a change would show: the whole cell's dump
#: would then differ from the one instance_graph realizes afresh).
_WHOLE: dict = {}


def _whole_cell(graph, groups, layout):
    """The long way: the first count of circuit_options realize sets on the whole cell."""
    key = (id(graph), tuple(map(tuple, groups)), layout)
    if key not in _WHOLE:
        _WHOLE[key] = (graph, _realized_whole(graph, groups, layout))
    return _WHOLE[key][1]


def _realized_whole(graph, groups, layout):
    first = groups[0]
    ports, planes = ocs_ports(graph, first), ocs_planes(graph, first)
    for pairs in circuit_options(layout, groups, ports, planes):
        try:
            return realize(graph, pairs, validated=True)
        except UserError:
            continue
    return None


def _dump(g):
    """Everything of a graph, in order: nodes, edges (with attributes), adjacency, graph."""
    return (list(g.nodes(data=True)), list(g.edges(data=True)),
            [list(g.adj[n]) for n in g], dict(g.graph))


@pytest.mark.parametrize("ports", [4, 6, 8, 16])
@pytest.mark.parametrize("layout", ["ring", "torus"])
def test_copied_circuits_are_the_whole_cells(ports, layout):
    s = _scenario(ports, layout)
    g = build_fabric(s)
    for size in SIZES:
        groups = partition(g, size, s.placement, gpus=gpu_nodes(g))
        assert alike_groups(g, groups)   # a healthy cell: every instance wired alike
        copied = alike_circuits(g, groups, layout, ocs_ports(g, groups[0]),
                                ocs_planes(g, groups[0]))
        whole = _whole_cell(g, groups, layout)
        assert (copied is None) == (whole is None), size
        if whole is not None:
            assert _dump(copied) == _dump(whole), size


def _long_choice(s, g, size, cal):
    """Each layout set on the whole cell and costed, the faster kept (the choice before
    the first instance decided it): ``(layout, model, whole)``, ``whole`` the chosen
    layout's whole-cell graph as :func:`_dump` read it when it was realized, before costing."""
    groups = partition(g, size, s.placement, gpus=gpu_nodes(g))
    whole = {}

    def make(lay):
        out = _whole_cell(g, groups, lay)
        if out is None:
            raise UserError("no count fits")
        # as realized, whatever costing does: a deep copy (nodes, edges and their attribute
        # dicts of numbers and strings), through pickle's C code rather than copy.deepcopy's
        whole[lay] = pickle.loads(pickle.dumps(_dump(out), pickle.HIGHEST_PROTOCOL))
        model = scenario_cost_model(s, adjusted(out, s.adjust), cal)
        set_as = "ring" if lay == "ring" else set_layout(model, model.group(size))
        return (model, model) if set_as == lay else None

    lay, model = best_layout(size, make)
    return lay, model, whole[lay]


@pytest.mark.parametrize("ports,adjust", [(4, None), (72, None), (96, None),
                                          (72, Adjust(hop_latency=1e-6)),
                                          (96, Adjust(bandwidth_scale=0.25))])
def test_first_instance_chooses_as_both_layouts_on_the_whole_cell(ports, adjust):
    s = _scenario(ports) if adjust is None else _scenario(ports, adjust=adjust)
    g, cal = build_fabric(s), scenario_calibration(s)
    for size in SIZES:
        lay, model, whole = _long_choice(s, g, size, cal)
        first = first_instance_layout(s, g, size, cal)
        # 72 ports x 126 GPUs placed (42 triangles) and more: chosen on the first instance
        assert first == (lay if ports >= 72 else None), size
        # and the model the study costs the size with is that layout's, costed alike
        got_lay, got = layout_model(s, g, size, cal)
        assert got_lay == lay
        sizes = np.array(BEST_SIZES)
        assert np.array_equal(got.collective_time("all-reduce", sizes, size),
                              model.collective_time("all-reduce", sizes, size)), size
        # the instance graph is the chosen layout's on the whole cell (realized above)
        assert _dump(instance_graph(s, g, size)) == whole


def test_whole_cell_not_realized_for_many_instances(monkeypatch):
    """The choice and the circuits of instances of 8 (16 of them on lite-ocs's 128 GPUs, 64
    ports each: 8,192 placed) realize circuits on the first instance's part of the cell
    only: the whole cell's 16 instances are never coloured (they were three times: each
    layout, then the chosen)."""
    s = _scenario(64)
    g = build_fabric(s)
    seen = []

    def counting(graph, *a, **k):
        seen.append(graph is g)
        return realize(graph, *a, **k)

    # realize is imported where it is used: patched at its module
    monkeypatch.setattr(optical, "realize", counting)
    out = instance_graph(s, g, 8)
    assert seen and not any(seen)
    assert {len(gr) for gr in nx.connected_components(out) if len(gr) > 1} == {8}


def test_few_circuits_are_set_on_the_whole_cell():
    """lite-ocs as shipped (4 ports: 512 placed at most) sets them the whole cell's way."""
    g = build_fabric(_scenario(4, "ring"))
    groups = partition(g, 8, "contiguous", gpus=gpu_nodes(g))
    assert not worth_copying(4, groups) and worth_copying(64, groups)


def test_groups_wired_otherwise_are_not_alike():
    s = _scenario(4)
    g = build_fabric(s).copy()
    groups = partition(g, 8, s.placement, gpus=gpu_nodes(g))
    assert alike_groups(g, groups)
    u, o = groups[3][2], next(iter(g.adj[groups[3][2]]))
    g.edges[u, o]["bandwidth"] = g.edges[u, o]["bandwidth"] / 2   # one fibre thinned
    assert not alike_groups(g, groups)
    g2 = build_fabric(s).copy()
    g2.remove_edge(groups[1][0], next(iter(g2.adj[groups[1][0]])))   # a fibre gone
    assert not alike_groups(g2, groups)
