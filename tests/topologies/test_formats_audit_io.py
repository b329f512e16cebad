"""Fabric files as other tools read them: networkx's own readers, called as
docs/output-formats.md tells a user to call them, give back every attribute with its type,
and ``netmodel topology show`` of an exported file prints what it prints for the spec."""

from __future__ import annotations

import json
import re
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from topologies import build
from topologies.io import write_graph

DOC = Path(__file__).resolve().parents[2] / "docs" / "output-formats.md"
SPECS = ["superpod", "lite-groups:base=[torus:dims=2x3],lites=2", "ocs:gpus=8,ports=2",
         "rail-optimized:sharp=true"]


def documented_call(function: str) -> str:
    """The first ``nx.FUNCTION(...)`` call of the 'Fabric files' section, as written."""
    section = DOC.read_text().split("## Fabric files", 1)[1]
    text = " ".join(section.split())  # a call may wrap over lines
    m = re.search(rf"`(nx\.{function}\(.*?\))`", text)
    assert m, f"docs/output-formats.md does not say how to call nx.{function} on the files"
    return m.group(1)


def same_typed(built: nx.Graph, read: nx.Graph) -> list:
    """Attributes read back with another value or type (a float where an int was...)."""
    bad = [(n, k) for n, d in built.nodes(data=True) for k, v in d.items()
           if type(read.nodes[n].get(k)) is not type(v) or read.nodes[n][k] != v]
    bad += [(u, v, k) for u, v, d in built.edges(data=True) for k, x in d.items()
            if type(read.edges[u, v].get(k)) is not type(x) or read.edges[u, v][k] != x]
    return bad + ([] if set(read.edges) == set(built.edges) else ["edges differ"])


@pytest.mark.parametrize("spec", SPECS)
def test_networkx_reads_the_files_as_documented(spec, tmp_path, monkeypatch):
    g = build(spec)
    monkeypatch.chdir(tmp_path)
    write_graph(g, "f.json")
    write_graph(g, "f.graphml")
    major_minor = tuple(int(x) for x in nx.__version__.split(".")[:2])
    json_call = documented_call("node_link_graph")
    if major_minor < (3, 4):  # the keyword networkx 3.2 and 3.3 take, also documented
        json_call = json_call.replace('edges="edges"', 'link="edges"')
    for call in (json_call, documented_call("read_graphml")):
        read = eval(call, {"nx": nx, "json": json, "open": open})  # noqa: S307
        assert not read.is_directed() and not read.is_multigraph()
        assert same_typed(g, read) == [], call
        assert read.graph["gpus"] == g.graph["gpus"] and type(read.graph["gpus"]) is int


@pytest.mark.parametrize("spec", SPECS)
def test_show_of_an_exported_file_equals_show_of_the_spec(spec, tmp_path):
    runner = CliRunner()
    original = runner.invoke(cli, ["topology", "show", spec, "--json"])
    assert original.exit_code == 0, original.output
    for suffix in (".json", ".graphml"):
        path = str(tmp_path / f"f{suffix}")
        assert runner.invoke(cli, ["topology", "export", spec, "-o", path]).exit_code == 0
        again = runner.invoke(cli, ["topology", "show", path, "--json"])
        assert again.exit_code == 0, again.output
        assert json.loads(again.output) == json.loads(original.output), suffix
