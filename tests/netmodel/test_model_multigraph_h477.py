"""A multigraph given to FabricCostModel with validated=True is refused in one line naming
the parameter (it raised KeyError 'bandwidth' from inside the model); validated=False
refuses it through the schema as before, and the simple graphs the model reads still build."""

import networkx as nx
import pytest

import topologies
from compute.errors import UserError
from netmodel.collectives.model import FabricCostModel


@pytest.mark.parametrize("kind", [nx.MultiGraph, nx.MultiDiGraph])
def test_validated_multigraph_is_refused_naming_the_parameter(kind):
    g = kind(topologies.build("flat:n=8"))
    with pytest.raises(UserError) as exc:
        FabricCostModel(g, validated=True)
    said = str(exc.value)
    assert said.startswith("graph must be a simple networkx Graph or DiGraph")
    assert said.endswith(f"got {kind.__name__}") and "\n" not in said


def test_unvalidated_multigraph_still_refused_by_the_schema():
    with pytest.raises(UserError, match="expected an undirected simple networkx Graph, got "
                                        "MultiGraph"):
        FabricCostModel(nx.MultiGraph(topologies.build("flat:n=8")))


def test_simple_graphs_still_taken_with_validated():
    g = topologies.build("flat:n=8")
    # one edge per pair: the same 8-GPU all-reduce costs the same as a Graph or a DiGraph
    # holding both directions of every cable
    a = FabricCostModel(g, validated=True).cost("all-reduce", 1e6, 8).time
    b = FabricCostModel(nx.DiGraph(g), validated=True).cost("all-reduce", 1e6, 8).time
    assert a == b > 0
