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


# ---------------------------------------------------------------- numbers past a float's range
# json and float() read 1e400 as inf, so the schema said '..., got inf' of a value the user
# never typed; now named as typed, as compute.config_files names it in TOML and JSON files.

BEYOND = "holds the number {}, beyond the range of a float (at most about 1.8e308); give a " \
         "number within it"


def _typed(path, old, new):
    """``path``'s text with the first ``old`` replaced by ``new``."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("typed", ["1e400", "-1E+400", "12e99999"])
def test_json_number_past_a_float_is_named_as_typed(tmp_path, typed):
    path = tmp_path / "f.json"
    write_graph(ring(4), path)
    _typed(path, '"latency": 1e-08', f'"latency": {typed}')
    r = run_cli(["topology", "show", path])
    # with its line and key since h502
    line = path.read_text().split(f'"latency": {typed}')[0].count("\n") + 1
    assert one_line_error(r) == f"error: {path} " + BEYOND.format(
        f'{typed} at line {line} ("edges" > "latency")')


def test_graphml_number_past_a_float_is_named_as_typed(tmp_path):
    path = tmp_path / "f.graphml"
    write_graph(ring(4), path)
    _typed(path, ">1e-08<", ">1e400<")
    with pytest.raises(UserError) as info:
        read_graph(path)
    assert str(info.value) == f"{path}: key 'latency' {BEYOND.format('1e400')}"


def test_graphml_table_attribute_number_past_a_float(tmp_path):
    path = tmp_path / "f.graphml"
    write_graph(ring(4), path)
    _typed(path, '>{"n": 4}<', '>{"n": 4, "x": 1e400}<')
    with pytest.raises(UserError) as info:
        read_graph(path)
    # the line and key of the attribute's JSON text (h502)
    place = '1e400 at line 1 ("x")'
    assert str(info.value) == f"{path}: graph attribute 'args' {BEYOND.format(place)}"


@pytest.mark.parametrize("suffix, typed, shown", [
    (".json", "Infinity", "inf"), (".json", "NaN", "nan"),
    (".graphml", "inf", "inf"), (".graphml", "INF", "inf")])
def test_inf_and_nan_written_as_such_reach_the_schema(tmp_path, suffix, typed, shown):
    """The guard: only overflow is named as typed; inf and nan keep the schema's check."""
    path = tmp_path / f"f{suffix}"
    write_graph(ring(4), path)
    if suffix == ".json":
        _typed(path, '"latency": 1e-08', f'"latency": {typed}')
    else:
        _typed(path, ">1e-08<", f">{typed}<")
    with pytest.raises(UserError) as info:
        read_graph(path)
    assert str(info.value) == (f"{path}: invalid fabric graph: edge 'gpu0'-'gpu3' latency must "
                               f"be finite and >= 0 s, got {shown}")


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_numbers_near_the_limits_are_read(tmp_path, suffix):
    """0e-400 is 0.0 (a latency of 0 s is allowed); 1e-400, which Python reads as 0.0, is
    refused as typed (h380: the command line's rule, compute.validate.below_smallest)."""
    path = tmp_path / f"f{suffix}"
    write_graph(ring(4), path)
    if suffix == ".json":
        _typed(path, '"latency": 1e-08', '"latency": 0e-400')
    else:
        _typed(path, ">1e-08<", ">0e-400<")
    assert read_graph(path).edges["gpu0", "gpu3"]["latency"] == 0.0
    path.write_text(path.read_text().replace("0e-400", "1e-400"))
    with pytest.raises(UserError, match="1e-400.* below the smallest number netmodel reads"):
        read_graph(path)


# ---------------------------------------------------------------- a node or edge listed twice
# The GraphML reader merged a node listed twice, as networkx does ('node 'gpu1' has kind
# None' of h244's file, whose second gpu0 was gpu1 mistyped); JSON refused it without
# saying where. Both formats now refuse either in one line naming the id and where.

EDGE_ONCE = "a fabric is an undirected simple graph: merge parallel cables into one edge with " \
            "'links'"


def test_json_node_listed_twice_says_where(tmp_path):
    def twice(data):
        assert data["nodes"][1]["id"] == "gpu1"
        data["nodes"][1]["id"] = "gpu0"
    path = _json(tmp_path, twice)
    r = run_cli(["topology", "show", path])
    assert one_line_error(r) == (f"error: {path}: node 'gpu0' is listed twice (nodes[0] and "
                                 "nodes[1]); give each node once")


def test_json_edge_listed_twice_either_way_says_where(tmp_path):
    def twice(data):
        first = data["edges"][0]
        data["edges"].append(dict(first, source=first["target"], target=first["source"]))
    path = _json(tmp_path, twice)
    with pytest.raises(UserError) as info:
        read_graph(path)
    assert str(info.value) == (f"{path}: edge 'gpu3'-'gpu0' is listed twice (edges[0] and "
                               f"edges[4]); {EDGE_ONCE}")


def test_graphml_node_listed_twice_is_refused_naming_its_lines(tmp_path):
    path = tmp_path / "f.graphml"
    write_graph(ring(4), path)
    lines = path.read_text().splitlines()
    at = [i + 1 for i, line in enumerate(lines) if '<node id="gpu' in line]
    assert len(at) == 4
    _typed(path, '<node id="gpu1">', '<node id="gpu0">')
    r = run_cli(["collective", "all-reduce", "--fabric", path, "--group", "4", "--size", "1M"])
    assert one_line_error(r) == (f"error: {path}: node 'gpu0' is listed twice (lines {at[0]} "
                                 f"and {at[1]}); give each node once")


def test_graphml_edge_listed_twice_either_way_names_its_lines(tmp_path):
    path = tmp_path / "f.graphml"
    write_graph(ring(4), path)
    text = path.read_text()
    first = text.index("<edge ")
    element = text[first:text.index("</edge>", first) + len("</edge>")]
    assert element.startswith('<edge source="gpu0" target="gpu3">')
    again = element.replace('source="gpu0" target="gpu3"', 'source="gpu3" target="gpu0"')
    path.write_text(text.replace("  </graph>", f"    {again}\n  </graph>"))
    lines = path.read_text().splitlines()
    at = [i + 1 for i, line in enumerate(lines) if "gpu0" in line and "gpu3" in line]
    assert len(at) == 2
    with pytest.raises(UserError) as info:
        read_graph(path)
    assert str(info.value) == (f"{path}: edge 'gpu3'-'gpu0' is listed twice (lines {at[0]} and "
                               f"{at[1]}); {EDGE_ONCE}")
