"""A scenario's built fabric is shared by every caller (cached once per process) and paths
trust it as checked (:func:`netmodel.study.scenario_fabric.is_built`), so it is frozen:
adding or removing a node or link raises instead of changing every later cost."""

from __future__ import annotations

import networkx as nx
import pytest

from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric, instance_graph


@pytest.mark.parametrize("name", ["lite-flat", "lite-ocs", "h100-dgx"])
def test_the_built_fabric_cannot_be_changed_in_place(name):
    graph = build_fabric(name)
    assert nx.is_frozen(graph)
    u, v = next(iter(graph.edges))
    with pytest.raises(nx.NetworkXError):
        graph.remove_edge(u, v)
    with pytest.raises(nx.NetworkXError):
        graph.add_node("intruder")
    assert build_fabric(name) is graph and graph.has_edge(u, v) and "intruder" not in graph


def test_a_copy_is_free_to_change_and_instances_still_build():
    graph = build_fabric("lite-ocs")
    mine = graph.copy()
    mine.remove_edge(*next(iter(mine.edges)))
    assert mine.number_of_edges() == graph.number_of_edges() - 1
    scenario = get_scenario("lite-ocs")
    sub = instance_graph(scenario, graph, 4)   # realizes circuits on a copy: no raise
    assert sub is not graph and not nx.is_frozen(sub)
    assert graph.number_of_edges() == mine.number_of_edges() + 1
