"""Every text a fabric carries is checked once, by the schema (``topologies.schema.validate``,
which every read and built graph passes): graph attributes (``builder``, ``dims``,
``logical``, any other), the string entries of ``args``, node ids, and the string attributes
of a node or an edge the schema does not otherwise type. Each must print as one line without
a formula: before, only a file's node ids, name and spec were checked (in ``topologies.io``),
so a newline in ``builder``, ``dims`` or ``logical`` of a fabric file was read (``dims``
'2x2x2\\n' even costed as a torus) and kept for whatever printed it next."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from topologies.io import read_graph, write_graph
from topologies.schema import validate
from topologies.schema_text import text_problem
from topologies.specs import build

BAD = ["torus\nerror: forged", "a\tb", "\x1b[2J", "ring\u202e", "ring\u200b", "$\\undefinedmacro$"]


def _torus_file(tmp_path, edit, suffix=".json"):
    path = tmp_path / f"t{suffix}"
    write_graph(build("torus:dims=2x2x2"), path)
    if edit is not None:
        doc = json.loads(path.read_text())
        edit(doc)
        path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("key", ["builder", "dims", "logical", "mine"])
def test_a_graph_text_attribute_must_print_as_one_line(tmp_path, key, bad):
    path = _torus_file(tmp_path, lambda d: d["graph"].__setitem__(key, bad))
    with pytest.raises(UserError) as err:
        read_graph(path)
    text = str(err.value)
    assert text.startswith(f"{path}: invalid fabric graph: graph attribute {key!r} {bad!r} holds ")
    assert ("holds '$'" if "$" in bad else "holds a control character") in text
    assert "\n" not in text


def test_dims_with_a_trailing_newline_was_read_as_the_torus(tmp_path):
    # int('2\n') is 2: the old schema took '2x2x2\n' for the 2x2x2 torus it labels
    path = _torus_file(tmp_path, lambda d: d["graph"].__setitem__("dims", "2x2x2\n"))
    with pytest.raises(UserError, match=r"graph attribute 'dims' '2x2x2\\n' holds a control"):
        read_graph(path)


def test_a_string_entry_of_args_is_checked(tmp_path):
    path = _torus_file(tmp_path, lambda d: d["graph"]["args"].__setitem__("dims", "2x2\n"))
    with pytest.raises(UserError, match=r"graph attribute 'args' entry 'dims' '2x2\\n' holds"):
        read_graph(path)


def test_a_nodes_and_an_edges_own_string_attribute_is_checked(tmp_path):
    def node(d):
        d["nodes"][3]["note"] = "rack 1\nerror: forged"
    with pytest.raises(UserError, match=r"node 'gpu3' attribute 'note' 'rack 1\\nerror: forged' "
                                        r"holds a control character"):
        read_graph(_torus_file(tmp_path, node))

    def edge(d):
        d["edges"][0]["label"] = "$x$"
    e = json.loads(_torus_file(tmp_path, None).read_text())["edges"][0]
    with pytest.raises(UserError, match=rf"edge '{e['source']}'-'{e['target']}' attribute "
                                        r"'label' '\$x\$' holds '\$'"):
        read_graph(_torus_file(tmp_path, edge))


def test_a_graphml_file_is_checked_alike(tmp_path):
    path = tmp_path / "t.graphml"
    write_graph(build("torus:dims=2x2x2"), path)
    path.write_text(path.read_text().replace(">torus<", ">torus&#10;forged<", 1))
    with pytest.raises(UserError, match=r"graph attribute 'builder' 'torus\\nforged' holds"):
        read_graph(path)


def test_a_built_graph_is_checked_by_validate():
    g = build("single-switch:n=2")
    validate(g)
    g.graph["builder"] = "single-switch\r"
    with pytest.raises(UserError, match=r"^invalid fabric graph: graph attribute 'builder'"):
        validate(g)
    g = build("single-switch:n=2")
    g.nodes["gpu0"]["note"] = "\u2066x"
    with pytest.raises(UserError, match=r"^invalid fabric graph: node 'gpu0' attribute 'note'"):
        validate(g)


@pytest.mark.parametrize("spec", ["torus:dims=2x2x2", "ocs:gpus=8,gpu=Lite,logical=ring",
                                  "fat-tree:k=4", "single-switch:n=4"])
def test_builders_texts_and_a_files_plain_ones_still_read(tmp_path, spec):
    g = build(spec)   # 'via' of the OCS circuits, labels, kinds, media: all pass
    path = tmp_path / "f.json"
    write_graph(g, path)
    doc = json.loads(path.read_text())
    doc["graph"]["mine"] = "rack 1/row 2 (ünïcode, 50%)"
    doc["nodes"][0]["note"] = "a plain note"
    path.write_text(json.dumps(doc))
    back = read_graph(path)
    assert back.graph["mine"] == "rack 1/row 2 (ünïcode, 50%)"
    assert back.graph["builder"] == g.graph["builder"]


def test_text_problem_names_the_two_rules():
    assert text_problem("fat-tree:k=8,gpu=Lite") is None
    assert text_problem("") is None   # an empty spec is text; an empty node id is refused apart
    assert text_problem("a\u2028b").startswith("holds a control character")
    assert text_problem("a$b") == "holds '$' (a figure reads the text between two as a formula)"


@pytest.mark.parametrize("command", [["topology", "show"], ["collective", "all-reduce", "--size",
                                                            "1MB", "--fabric"],
                                     ["topology", "plot", "-o", "x.png"]])
def test_the_cli_refuses_it_in_one_line_with_status_2(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    path = _torus_file(tmp_path, lambda d: d["graph"].__setitem__("builder",
                                                                  "torus\nerror: forged"))
    r = CliRunner().invoke(cli, [*command, str(path)])
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and "graph attribute 'builder'" in r.output
    assert not (tmp_path / "x.png").exists()

