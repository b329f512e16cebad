"""Hostile fabric files, helper 247 (from h244's pass): a JSON or GraphML fabric's errors
name the file, as every other file a user gives does (``s.toml: ...``), under every command
that reads one; graphs built from specs keep their message."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import ring
from topologies.io import read_graph, write_graph
from topologies.schema import validate


def _json(tmp_path, edit, name="f.json"):
    """ring(4) saved as JSON, its document changed by ``edit``."""
    path = tmp_path / name
    write_graph(ring(4), path)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return path


def _bandwidth_nan(data):
    edge = data["edges"][0]
    assert (edge["source"], edge["target"]) == ("gpu0", "gpu3")
    edge["bandwidth"] = float("nan")


NAN = "invalid fabric graph: edge 'gpu0'-'gpu3' bandwidth must be finite and > 0 bytes/s, got nan"


@pytest.mark.parametrize("args", [
    ["topology", "show", "{f}"],
    ["collective", "all-reduce", "--fabric", "{f}", "--group", "4", "--size", "1M"],
    ["costs", "--fabric", "{f}"],
    ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "4", "--batch", "8",
     "--fabric", "{f}"],
    ["topology", "compare", "ring:n=4", "{f}"],
    ["topology", "export", "{f}", "-o", "{out}"],
])
def test_every_command_names_the_fabric_file(tmp_path, args):
    """Before: 'error: invalid fabric graph: ...' under each of them, no file named."""
    path = _json(tmp_path, _bandwidth_nan)
    out = tmp_path / "out.json"
    r = run_cli([a.format(f=path, out=out) for a in args])
    assert one_line_error(r) == f"error: {path}: {NAN}"
    assert not out.exists()


def test_graphml_names_the_file_too(tmp_path):
    path = tmp_path / "f.graphml"
    write_graph(ring(4), path)
    text = path.read_text()
    one = text.replace(">225000000000.0<", ">NaN<", 1)   # the first edge's bandwidth
    assert one != text
    path.write_text(one)
    with pytest.raises(UserError) as info:
        read_graph(path)
    assert str(info.value) == f"{path}: {NAN}"


def test_a_graph_not_from_a_file_keeps_its_message():
    g = ring(4)
    g.edges["gpu0", "gpu3"]["bandwidth"] = float("nan")
    with pytest.raises(UserError) as info:
        validate(g)
    assert str(info.value) == NAN
