"""The mark of a degraded fabric is a graph attribute the schema knows (h443).

``mark_degraded`` writes ``degraded`` = True and the cost model refuses a graph carrying
exactly that (``is_degraded``: ``is True``), but the schema did not know the attribute: a
fabric file whose graph said ``"degraded": "true"``, ``1`` or ``"yes"`` (a hand edit, or
a tool that writes every attribute as text), or ``"Degraded": true``, loaded as a healthy
fabric, and the cost model priced it as built without the failed parts. Now
``degraded`` is a graph attribute of type bool (:data:`topologies.schema.DEGRADED`, the one
name both the schema and the failure functions use): any other value is refused in one
line, and a misspelling of it is a near miss. Bools stay refused for the graph's other
attributes (``gpus``: True is not a count).
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import build
from topologies import degrade as degrade_module
from topologies.degrade import degrade, is_degraded
from topologies.failure_domains import components
from topologies.io import read_graph, write_graph
from topologies.schema import DEGRADED, GRAPH_TYPES, validate


@pytest.fixture(scope="module")
def degraded_file(tmp_path_factory):
    g = build("rail-optimized:domains=2")
    link = next(iter(components(g)["transceiver"]))
    path = tmp_path_factory.mktemp("deg") / "d.json"
    write_graph(degrade(g, [link]), path)
    return path


def _edited(src, tmp_path, **graph_attrs):
    doc = json.loads(src.read_text())
    doc["graph"].pop(DEGRADED, None)
    doc["graph"].update(graph_attrs)
    out = tmp_path / "e.json"
    out.write_text(json.dumps(doc))
    return out


def test_one_name_for_the_mark():
    assert degrade_module.DEGRADED is DEGRADED == "degraded"
    assert GRAPH_TYPES[DEGRADED] == (bool,)


@pytest.mark.parametrize("value", ["true", "yes", 1, 1.0, None, [True]])
def test_a_mark_that_is_not_a_bool_is_refused(degraded_file, tmp_path, value):
    # read before: loaded, is_degraded False, priced as built
    with pytest.raises(UserError, match=r"graph attribute 'degraded' must be true or false, got "):
        read_graph(_edited(degraded_file, tmp_path, degraded=value))


def test_a_misspelt_mark_is_a_near_miss(degraded_file, tmp_path):
    with pytest.raises(UserError, match=r"attribute 'Degraded'.*did you mean 'degraded'"):
        read_graph(_edited(degraded_file, tmp_path, Degraded=True))


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_mark_loads_and_is_read(degraded_file, tmp_path, value):
    assert is_degraded(read_graph(_edited(degraded_file, tmp_path, degraded=value))) is value


@pytest.mark.parametrize("ext", ["json", "graphml"])
def test_a_degraded_fabric_saved_reads_back_marked(degraded_file, tmp_path, ext):
    g = read_graph(degraded_file)
    write_graph(g, tmp_path / f"again.{ext}")
    back = read_graph(tmp_path / f"again.{ext}")
    assert back.graph[DEGRADED] is True and is_degraded(back)


def test_bools_stay_refused_for_the_other_attributes():
    g = build("ring:n=4")
    g.graph["gpus"] = True   # True == 1 as an int: not a count
    with pytest.raises(UserError, match=r"graph attribute 'gpus' must be a whole number, got True"):
        validate(g)


def test_cli_one_line(degraded_file, tmp_path):
    r = run_cli(["topology", "show", _edited(degraded_file, tmp_path, degraded="true")])
    one_line_error(r, "graph attribute 'degraded' must be true or false, got 'true'")
