"""``circuits = "best"`` where the layouts are set on the whole cell (lite-ocs as shipped, 4
ports: too few circuits to copy the first instance's): :func:`instance_graph` keeps the
chosen layout's circuits :func:`layout_model` realized to cost it, instead of realizing
them on the whole cell again (h742), and hands back a fresh graph equal to them in
every node, link, attribute and adjacency order.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import topologies.optical as optical
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import (
    build_fabric,
    first_instance_layout,
    instance_graph,
    layout_model,
    scenario_calibration,
)


def _dump(g):
    return (list(g.nodes(data=True)), list(g.edges(data=True)),
            [list(g.adj[n]) for n in g], dict(g.graph))


@pytest.fixture
def realized(monkeypatch):
    """Every graph realize returns (realize is imported where it is used: patched at its
    module)."""
    seen: list = []
    real = optical.realize

    def counting(*a, **k):
        out = real(*a, **k)
        seen.append(out)
        return out

    monkeypatch.setattr(optical, "realize", counting)
    return seen


# 2: the ring alone (a torus needs 2D sides); 4: a 2x2 torus and a ring, both costed
@pytest.mark.parametrize("size", [2, 4])
def test_instance_graph_realizes_what_layout_model_does(realized, size):
    s = get_scenario("lite-ocs")
    s = replace(s, circuits="best", fabric={**s.fabric, "ports": 4})
    g, cal = build_fabric(s), scenario_calibration(s)
    assert first_instance_layout(s, g, size, cal) is None   # the whole cell's way
    lay, model = layout_model(s, g, size, cal)
    chosen = model.graph          # no [adjust]: the circuits the model was made on
    assert any(r is chosen for r in realized)
    expected = _dump(chosen)
    by_model = len(realized)
    assert by_model == {2: 1, 4: 2}[size]   # each layout the size takes, once
    realized.clear()
    out = instance_graph(s, g, size)
    assert len(realized) == by_model       # was one more: the chosen layout's again
    if size == 2:
        assert lay == "ring"
    assert _dump(out) == expected
    # a fresh graph, as realize made one: not the one the cost model routed, nor its dicts
    assert all(out is not r for r in realized)
    kept = next(r for r in realized if _dump(r) == expected)
    u, v = next(iter(out.edges))
    assert out.edges[u, v] is not kept.edges[u, v]
    assert out.edges[u, v] is out.adj[v][u]      # one dict a link, read from either end
    assert out.nodes[u] is not kept.nodes[u] and out.graph is not kept.graph
    assert out.graph["ocs_cabling"] is not kept.graph["ocs_cabling"]
