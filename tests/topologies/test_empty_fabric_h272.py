"""Hostile input, helper 272: a fabric file with no GPU nodes.

An empty fabric file (``"nodes": []``) was told "graph attribute 'gpus' is None but it has 0
GPU nodes; set it to 0", and setting it to 0 then gave "it has no GPU nodes": two tries for
one fact, the first asking for a fabric of none. Now the count of GPU nodes is checked before
the ``gpus`` attribute, in one line saying the file holds none, whatever ``gpus`` says.
Fixed in topologies/schema.py (validate).
"""

from __future__ import annotations

import json

import networkx as nx
import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import build, validate
from topologies.io import read_graph, write_graph

NONE = ("invalid fabric graph: it holds no GPU nodes (nodes of kind 'gpu'); a fabric needs "
        "at least one")


@pytest.mark.parametrize("graph", [{}, {"gpus": 0}, {"gpus": 3}])
def test_an_empty_json_file_is_told_it_holds_no_gpus(tmp_path, graph):
    path = tmp_path / "fabric.json"
    path.write_text(json.dumps({"directed": False, "multigraph": False, "graph": graph,
                                "nodes": [], "links": []}))
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value) == f"{path}: {NONE}"
    line = one_line_error(run_cli(["topology", "show", str(path)]))
    assert line == f"error: {path}: {NONE}"


@pytest.mark.parametrize("gpus", [None, 0])
def test_an_empty_graphml_file_too(tmp_path, gpus):
    g = nx.Graph()
    if gpus is not None:
        g.graph["gpus"] = gpus
    path = tmp_path / "fabric.graphml"
    nx.write_graphml(g, path)
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value) == f"{path}: {NONE}"


def test_switches_alone_are_told_the_same(tmp_path):
    """A real fabric's switches and their links, its GPUs taken out (gpus left at 8)."""
    g = build("single-switch")
    g.remove_nodes_from([n for n, k in list(g.nodes(data="kind")) if k == "gpu"])
    assert g.number_of_nodes() > 0
    with pytest.raises(UserError) as err:
        validate(g)
    assert str(err.value) == NONE


def test_a_fabric_with_gpus_still_reads(tmp_path):
    """Guard: a written fabric reads back with its 8 GPUs."""
    path = tmp_path / "fabric.json"
    write_graph(build("single-switch"), path)
    assert read_graph(path).graph["gpus"] == 8
