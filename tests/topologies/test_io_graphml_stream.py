"""GraphML is written line by line (topologies.io._graphml_lines), not as a tree of
ElementTree elements: the bytes must be those networkx's GraphMLWriter and ElementTree
write (topologies.io._write_graphml_tree, the way every file was written before), for
built fabrics and for graphs that reach the corners of both writers."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.scenario_fabric import build_fabric
from topologies import build
from topologies.io import _write_graphml, _write_graphml_tree, read_graph, write_graph


def _both(tmp_path: Path, graph: nx.Graph) -> tuple[bytes, bytes]:
    streamed, tree = tmp_path / "streamed.graphml", tmp_path / "tree.graphml"
    _write_graphml(graph, str(streamed), streamed)
    _write_graphml_tree(graph, str(tree), tree)
    return streamed.read_bytes(), tree.read_bytes()


@pytest.mark.parametrize("spec", [
    "superpod:sus=1", "nvl72:racks=2", "lite-groups:base=[fat-tree:k=8],lites=2",
    "ocs:gpus=6,ports=2,logical=ring", "torus:dims=3x2", "fat-tree:k=8", "ring:n=2"])
def test_built_fabrics_byte_for_byte(tmp_path, spec):
    streamed, tree = _both(tmp_path, build(spec))
    assert streamed == tree


@pytest.mark.parametrize("scenario", ["lite-flat", "lite-ocs", "lite-direct", "h100-dgx"])
def test_scenario_fabrics_byte_for_byte(tmp_path, scenario):
    # Lite fabrics carry their derived GPU type as gpu_types (JSON text in the file)
    streamed, tree = _both(tmp_path, build_fabric(scenario))
    assert streamed == tree


def test_the_corners_of_both_writers(tmp_path):
    g = nx.Graph(name='a&b <"x">\n\tz', note="é ☃", empty="")
    g.add_node('n&1"<>', kind="gpu", flag=True, no=False, f=np.float64(1.5),
               i=np.int64(3), f32=np.float32(0.1), i8=np.int8(-2))
    g.add_node(7)                                   # no data: an empty element
    g.add_node((1, 2), kind='x\ny\r\tz&<>"', blank="")
    g.add_node("zeros", a=0.0, b=-0.0, c=0, d=np.float32(-0.0), e=float("nan"),
               f=float("-inf"))
    g.add_node("zeros too", a=-0.0, b=0.0, c=False, d=np.float32(0.0), e=float("nan"))
    g.add_node("mixed", i=1.0, f="1", c=True)       # one name, other types: other keys
    g.add_edge('n&1"<>', 7, w=1e-300, b=False, s="", **{'k"&<': 2})
    g.add_edge(7, (1, 2))
    g.add_edge("zeros", "zeros too", w=-0.0)
    g.add_edge("mixed", 7, w=0.0)
    streamed, tree = _both(tmp_path, g)
    assert streamed == tree
    assert b'<data key="d' in streamed and b" />" in streamed   # empty elements written
    # an empty graph; a graph id (the <graph> element's id in networkx) goes the tree's way
    assert _both(tmp_path, nx.Graph())[0] == _both(tmp_path, nx.Graph())[1]
    h = nx.Graph(id="mine")
    h.add_node("a", x=1)
    streamed, tree = _both(tmp_path, h)
    assert streamed == tree and b'<graph edgedefault="undirected" id="mine">' in streamed


@pytest.mark.parametrize("value", [[1], None, np.bool_(True), {"a": 1}])
def test_values_graphml_cannot_hold_are_refused_alike(tmp_path, value):
    g = nx.Graph()
    g.add_node("a", x=1)
    g.add_edge("a", "b", y=value)
    messages = []
    for write in (_write_graphml, _write_graphml_tree):
        with pytest.raises(UserError, match="GraphML holds only text") as err:
            write(g, str(tmp_path / "f.graphml"), tmp_path / "f.graphml")
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "does not support" in messages[0] and type(value).__name__ in messages[0]


def test_a_written_file_reads_back(tmp_path):
    g = build("superpod:sus=1")
    path = tmp_path / "f.graphml"
    write_graph(g, path)
    assert nx.utils.graphs_equal(read_graph(path), g)
