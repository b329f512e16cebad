"""A GraphML fabric that gives one attribute of a node, an edge or the graph twice is refused,
as a JSON fabric's key given twice is: networkx's reader (and netmodel's, which reads as
it does) kept the last value without a word, so a second ``bandwidth`` of 1 GB/s on a
225 GB/s link was the link's bandwidth."""

from __future__ import annotations

import io

import networkx as nx
import pytest

from compute.errors import UserError
from topologies import build
from topologies.graphml import parse
from topologies.io import read_graph, write_graph

#: The first edge's bandwidth line, as write_graph writes a 4-GPU ring (key d10: bandwidth).
BANDWIDTH = '<data key="d10">225000000000.0</data>'


def _ring(tmp_path, old: str, new: str):
    path = tmp_path / "ring.graphml"
    write_graph(build("ring:n=4"), path)
    text = path.read_text()
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1))
    return path


def _refusal(path) -> str:
    with pytest.raises(UserError) as err:
        read_graph(path)
    said = str(err.value)
    assert "\n" not in said and said.startswith(f"{path}: "), said
    return said[len(f"{path}: "):]


def test_an_edge_with_its_bandwidth_twice_is_refused(tmp_path):
    path = _ring(tmp_path, BANDWIDTH, BANDWIDTH + '<data key="d10">1000000000.0</data>')
    assert _refusal(path) == ("edge 'gpu0'-'gpu3' has two <data> for 'bandwidth' (of one "
                              "<key>, or of two keys of that attr.name); give each attribute "
                              "once")


def test_two_keys_of_one_name_on_one_edge_are_refused(tmp_path):
    """A second <key> of attr.name 'bandwidth' (its own id, so not a key declared twice)."""
    path = _ring(tmp_path, '<key id="d13"',
                 '<key id="d99" for="edge" attr.name="bandwidth" attr.type="double" />'
                 '<key id="d13"')
    path.write_text(path.read_text().replace(
        BANDWIDTH, BANDWIDTH + '<data key="d99">1000000000.0</data>', 1))
    assert _refusal(path).startswith("edge 'gpu0'-'gpu3' has two <data> for 'bandwidth'")


def test_the_last_data_of_an_edge_given_twice_is_refused(tmp_path):
    """The value met just before the edge's end (the reader's other path)."""
    lanes = '<data key="d13">18</data>'
    path = _ring(tmp_path, lanes + "\n    </edge>", lanes + '<data key="d13">4</data></edge>')
    assert _refusal(path).startswith("edge 'gpu0'-'gpu3' has two <data> for 'lanes'")


def test_a_node_with_its_gpu_twice_is_refused(tmp_path):
    gpu = '<data key="d9">H100-SXM</data>'
    path = _ring(tmp_path, gpu, gpu + '<data key="d9">Lite</data>')
    assert _refusal(path).startswith("node 'gpu0' has two <data> for 'gpu'")


def test_a_graph_attribute_twice_is_refused(tmp_path):
    spec = '<data key="d1">ring:n=4</data>'
    path = _ring(tmp_path, spec, spec + '<data key="d1">ring:n=8</data>')
    assert _refusal(path).startswith("the graph has two <data> for 'spec'")


def test_a_fabric_written_reads_back_whole(tmp_path):
    """Every attribute once: read back as written (nodes, edges and their values)."""
    g = build("rail-optimized:domains=2")
    path = tmp_path / "rail.graphml"
    write_graph(g, path)
    back = read_graph(path)
    assert dict(back.nodes(data=True)) == dict(g.nodes(data=True))
    assert {frozenset((u, v)): d for u, v, d in back.edges(data=True)} == \
        {frozenset((u, v)): d for u, v, d in g.edges(data=True)}


def test_parse_alone_still_reads_as_networkx_does(tmp_path):
    """Without ``fabric`` the reader keeps networkx's reading: the last value stands."""
    path = _ring(tmp_path, BANDWIDTH, BANDWIDTH + '<data key="d10">1000000000.0</data>')
    raw = path.read_bytes()
    ours = parse(raw, "x")
    theirs = nx.read_graphml(io.BytesIO(raw))
    assert ours.edges["gpu0", "gpu3"]["bandwidth"] == theirs.edges["gpu0", "gpu3"]["bandwidth"] \
        == 1e9


def test_a_graph_attribute_id_reads_back_from_graphml(tmp_path):
    """networkx's writer puts a graph attribute 'id' on the <graph> element and its reader
    reads it nowhere: written, then read back without it (JSON kept it). A fabric read keeps
    it; parse alone reads as networkx does."""
    g = build("ring:n=4")
    g.graph["id"] = "lab-7"
    path = tmp_path / "ring.graphml"
    write_graph(g, path)
    assert '<graph edgedefault="undirected" id="lab-7">' in path.read_text()
    assert read_graph(path).graph["id"] == "lab-7"
    assert "id" not in parse(path.read_bytes(), "x").graph
    assert "id" not in nx.read_graphml(path).graph
