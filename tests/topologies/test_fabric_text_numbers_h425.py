"""A fabric's number given as text is told so: a GraphML <key> of attr.type 'string' (tools
that export every attribute as text write it so) or a quoted JSON value was refused as
"bandwidth must be finite and > 0 bytes/s, got '225000000000.0'", which reads as a number
refused for being one."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph

NOT_A_NUMBER = ("not a number (a GraphML <key> of attr.type 'string' or a quoted JSON value; "
                "give the number itself)")


def _refusal(path) -> str:
    with pytest.raises(UserError) as err:
        read_graph(path)
    return str(err.value)


@pytest.mark.parametrize(("key", "old", "what", "text"), [
    ("bandwidth", 'attr.name="bandwidth" attr.type="double"', "bandwidth must be finite and > 0 "
     "bytes/s", "225000000000.0"),
    ("latency", 'for="edge" attr.name="latency" attr.type="double"', "latency must be finite "
     "and >= 0 s", "1e-08"),
    ("lanes", 'attr.name="lanes" attr.type="long"', "lanes must be a whole number >= 1", "18"),
])
def test_a_graphml_number_typed_as_text_is_told_so(tmp_path, key, old, what, text):
    path = tmp_path / "ring.graphml"
    write_graph(build("ring:n=4"), path)
    raw = path.read_text()
    assert old in raw
    path.write_text(raw.replace(old, old.rsplit('"', 2)[0] + '"string"', 1))
    assert _refusal(path) == (f"{path}: invalid fabric graph: edge 'gpu0'-'gpu3' {what}, got "
                              f"the text '{text}', {NOT_A_NUMBER}")


def test_a_quoted_json_number_is_told_so(tmp_path):
    path = tmp_path / "ring.json"
    write_graph(build("ring:n=4"), path)
    doc = json.loads(path.read_text())
    doc["edges"][0]["links"] = "2"
    path.write_text(json.dumps(doc))
    assert _refusal(path) == (f"{path}: invalid fabric graph: edge 'gpu0'-'gpu3' links must be "
                              f"finite and > 0 cables, got the text '2', {NOT_A_NUMBER}")


def test_a_number_out_of_range_is_told_as_before(tmp_path):
    path = tmp_path / "ring.json"
    write_graph(build("ring:n=4"), path)
    doc = json.loads(path.read_text())
    doc["edges"][0]["bandwidth"] = -1.0
    path.write_text(json.dumps(doc))
    assert _refusal(path).endswith("bandwidth must be finite and > 0 bytes/s, got -1.0")
