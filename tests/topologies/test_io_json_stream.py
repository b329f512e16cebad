"""JSON fabric files are written in pieces (topologies.io._json_lines), not by
``json.dump(..., indent=1)`` (json's Python encoder, value by value): the text must be the
one json writes for the document ``_json_document`` gives (the way every file was written
before), for built fabrics and for graphs that reach the corners of json's encoder."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study.scenario_fabric import build_fabric
from topologies import build
from topologies.io import _json_document, _json_lines, read_graph, write_graph


def _json_dump(graph: nx.Graph) -> str:
    return json.dumps(_json_document(graph), indent=1) + "\n"


@pytest.mark.parametrize("spec", [
    "superpod:sus=1", "nvl72:racks=2", "lite-groups:base=[fat-tree:k=8],lites=2",
    "ocs:gpus=6,ports=2,logical=ring", "torus:dims=3x2", "fat-tree:k=8", "ring:n=2"])
def test_built_fabrics_character_for_character(spec):
    g = build(spec)
    assert "".join(_json_lines(g)) == _json_dump(g)


@pytest.mark.parametrize("scenario", ["lite-flat", "h100-dgx"])
def test_scenario_fabrics_character_for_character(scenario):
    g = build_fabric(scenario)   # a derived GPU type: gpu_types, a table, in the graph part
    assert "".join(_json_lines(g)) == _json_dump(g)


def test_the_corners_of_json(tmp_path):
    g = nx.Graph(name='a"b\\ \n é ☃', empty="")
    g.add_node('n"1\\é', kind="gpu", flag=True, no=False, f=np.float64(1.5), one=1,
               big=10**30, none=None, s="\u2603\t\x00")
    g.add_node(7)                                       # an integer id, no data
    g.add_node("zeros", a=0.0, b=-0.0, c=0, d=False, e=float("nan"), f=float("-inf"),
               g=float("inf"))
    g.add_node("zeros too", a=-0.0, b=0.0, c=False, d=0, e=float("nan"))
    g.add_node("table", t={"a": [1, 2.5, {"b": None}]}, u=[], v={})   # json's own way
    g.add_node("named", id="not its id", x=1)           # json keeps 'id' first, this value
    g.add_node("keys", **{"1": 1}, **{'"': 2})
    g.add_node(True)                                    # a boolean id: json's own way
    g.add_edge('n"1\\é', 7, bandwidth=1e-300, source="s", lanes=4)
    g.add_edge(7, "zeros", w=-0.0)
    g.add_edge("zeros", "zeros too", w=0.0)
    g.add_edge("table", "named", w=np.float64(-0.0), i=3)
    assert "".join(_json_lines(g)) == _json_dump(g)
    assert "".join(_json_lines(nx.Graph())) == _json_dump(nx.Graph())   # no nodes, no edges
    h = nx.Graph()
    h.add_node("alone")
    assert "".join(_json_lines(h)) == _json_dump(h)    # nodes, no edges
    bad = nx.Graph()
    bad.add_node("a", x=np.int64(3))   # json cannot write it: the same TypeError
    with pytest.raises(TypeError) as theirs:
        _json_dump(bad)
    with pytest.raises(TypeError) as ours:
        "".join(_json_lines(bad))
    assert str(ours.value) == str(theirs.value)


_SCALARS = (st.text(max_size=4) | st.integers(-3, 3) | st.booleans() | st.none()
            | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd") | st.integers(0, 3),
                          st.dictionaries(st.sampled_from(["x", "y", "id", "source"]),
                                          _SCALARS, max_size=3)), max_size=5),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7),
                          st.dictionaries(st.sampled_from(["w", "x", "target"]), _SCALARS,
                                          max_size=3)), max_size=6))
def test_random_graphs_character_for_character(nodes, edges):
    g = nx.Graph()
    for n, d in nodes:
        g.add_node(n, **d)
    for u, v, d in edges:
        g.add_edge(u, v, **d)
    assert "".join(_json_lines(g)) == _json_dump(g)


def test_a_written_file_reads_back(tmp_path):
    g = build("fat-tree:k=4")
    path = write_graph(g, tmp_path / "f.json")
    back = read_graph(path)
    assert list(back.nodes(data=True)) == list(g.nodes(data=True))
    assert list(back.edges(data=True)) == list(g.edges(data=True))
