"""A node without a ``kind`` is said to have none, and a GraphML ``<key>`` named ``id`` (the
name of a node's own id) holding the kind is said as that: a GraphML fabric whose node key
was ``attr.name="id"`` was told "node 'gpu0' has kind None; allowed: ..." (Python's None,
no word of the key). Each line names the node, what it lacks and the kinds allowed."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import ring
from topologies.io import read_graph, write_graph
from topologies.schema import NODE_KINDS, validate

ALLOWED = "allowed: " + ", ".join(map(repr, sorted(NODE_KINDS)))


def _graphml(tmp_path, old: str, new: str):
    path = tmp_path / "f.graphml"
    write_graph(ring(4), path)
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    return path


def test_graphml_kind_key_named_id(tmp_path):
    path = _graphml(tmp_path, 'attr.name="kind"', 'attr.name="id"')
    with pytest.raises(UserError) as err:
        read_graph(path)
    msg = str(err.value)
    assert "kind None" not in msg
    assert "node 'gpu0' has no attribute 'kind' but one named 'id' ('gpu')" in msg, msg
    assert "GraphML's node id" in msg and "name the key 'kind'" in msg and ALLOWED in msg


def test_graphml_kind_key_named_id_cli(tmp_path):
    path = _graphml(tmp_path, 'attr.name="kind"', 'attr.name="id"')
    r = run_cli(["topology", "show", str(path)])
    assert r.exit_code == 2
    line = one_line_error(r)
    assert line.startswith(f"error: {path}: ") and "node 'gpu0' has no attribute 'kind'" in line


def test_json_node_without_kind(tmp_path):
    path = tmp_path / "f.json"
    write_graph(ring(4), path)
    doc = json.loads(path.read_text())
    node = next(n for n in doc["nodes"] if n["id"] == "gpu2")
    del node["kind"]
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as err:
        read_graph(path)
    msg = str(err.value)
    assert f"node 'gpu2' has no attribute 'kind'; every node names its kind ({ALLOWED})" in msg


def test_kind_of_another_value_still_named():
    g = ring(4)
    g.nodes["gpu1"]["kind"] = "router"
    with pytest.raises(UserError, match=f"node 'gpu1' has kind 'router'; {ALLOWED}"):
        validate(g)
