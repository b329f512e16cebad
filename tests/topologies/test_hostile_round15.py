"""Hostile round 15 (topologies): a saved fabric's edge counts and graph text had no upper
bound. Each test fails on the code before its fix: 1e308 lanes (or cables) on one edge
were read and printed as a bill of materials of 309 digits, and a graph name of 20 MB was
read and printed whole by topology show."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies.io import read_graph, write_graph
from topologies.registry import build
from topologies.schema import validate


def _saved(tmp_path, edit, suffix=".json"):
    path = tmp_path / f"f{suffix}"
    write_graph(build("ring:n=4"), path)
    if suffix == ".json":
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data))
    else:
        path.write_text(edit(path.read_text()))
    return path


def _first_edge(key, value):
    def edit(d):
        d["links" if "links" in d else "edges"][0][key] = value
    return edit


@pytest.mark.parametrize(("key", "value", "needle"), [
    ("lanes", 1e308, "lanes must be at most 1e+06 lanes (two 144-port switches share at most "
                     "144 cables of 8 lanes), got 1e+308"),
    ("lanes", 10**30, "lanes must be at most 1e+06 lanes"),
    ("lanes", 1_000_001, "got 1000001"),
    ("links", 1e308, "links must be at most 1e+06 cables (a breakout cable gives a port at "
                     "least an eighth of it; two 144-port switches share at most 144 cables), "
                     "got 1e+308"),
    ("links", 10**30, "cables), got an integer of 31 digits"),
])
def test_edge_counts_past_a_million_refused(tmp_path, key, value, needle):
    with pytest.raises(UserError) as e:
        read_graph(_saved(tmp_path, _first_edge(key, value)))
    assert needle in str(e.value)


@pytest.mark.parametrize("value", [1, 8, 1_000_000])
def test_edge_counts_in_range_read(tmp_path, value):
    g = read_graph(_saved(tmp_path, _first_edge("lanes", value)))
    assert value in [d["lanes"] for *_, d in g.edges(data=True)]


def test_built_fabrics_stay_within_the_edge_bounds():
    """The largest shipped shapes (an 8,192-GPU fat tree, a 128-Lite flat fabric, 4 NVL72
    racks) hold far fewer than a million lanes on any edge; validate passes them."""
    for spec in ("fat-tree:k=32", "flat:n=128,planes=4,radix=144", "nvl72:racks=4"):
        g = validate(build(spec))
        assert max(d["lanes"] for *_, d in g.edges(data=True)) < 10_000


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_graph_text_past_ten_thousand_characters_refused(tmp_path, suffix):
    name = "x" * 20_000
    if suffix == ".json":
        edit = lambda d: d["graph"].__setitem__("name", name)   # noqa: E731
    else:
        edit = lambda t: t.replace(">ring of 4<", f">{name}<")   # noqa: E731
    with pytest.raises(UserError) as e:
        read_graph(_saved(tmp_path, edit, suffix))
    assert "graph attribute 'name' must be text of at most 10,000 characters, got 'xxx" \
        in str(e.value)


@pytest.mark.parametrize("title", ["$$", "$\\undefinedmacro$", "a $x$ b"])
def test_plot_title_is_text_not_a_formula(title):
    """topology plot --title '$$' (or a saved fabric named so) raised matplotlib's
    ValueError from its math parser; the title is now drawn as the text given."""
    import matplotlib

    matplotlib.use("Agg")
    from topologies.draw import figure

    fig = figure(build("ring:n=4"), title=title)
    fig.canvas.draw()
    assert fig.axes[0].get_title().split("\n")[0] == title
