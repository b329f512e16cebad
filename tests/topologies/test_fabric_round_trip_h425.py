"""A fabric written to .json or .graphml reads back the same graph (hypothesis): every node,
edge and graph attribute with its value and type, including attributes of a file's own of
any text, number or boolean, whatever validate accepts."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph
from topologies.schema import GRAPH_TYPES, READ_ATTRIBUTES, validate
from topologies.schema_text import near_miss

SPECS = ["ring:n=3", "single-switch:n=4", "ocs:gpus=4", "torus:dims=2x2",
         "rail-optimized:domains=2,gpus_per_server=2,domain_size=2", "lite-groups"]
TEXT = st.text(st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters="$"),
               max_size=12)
#: A value of a file's own attribute: what GraphML types hold (text, whole numbers within a
#: long, floats, booleans); a whole float stays a float.
VALUE = st.one_of(TEXT, st.booleans(), st.integers(-2**63, 2**63 - 1),
                  st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False))
NAME = st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True).filter(
    lambda n: n not in READ_ATTRIBUTES and near_miss(n, READ_ATTRIBUTES) is None
    and n not in GRAPH_TYPES and near_miss(n, GRAPH_TYPES) is None
    and n not in ("id", "source", "target", "units"))


def _same(a, b) -> None:
    assert list(a.nodes) == list(b.nodes)
    for n, d in a.nodes(data=True):
        _same_dict(d, b.nodes[n])
    assert {frozenset(e) for e in a.edges} == {frozenset(e) for e in b.edges}
    for u, v, d in a.edges(data=True):
        _same_dict(d, b.edges[u, v])
    _same_dict({k: v for k, v in a.graph.items() if k != "gpu_file_facts"},
               {k: v for k, v in b.graph.items() if k != "gpu_file_facts"})


def _same_dict(x: dict, y: dict) -> None:
    assert x.keys() == y.keys(), (x, y)
    for k, v in x.items():
        w = y[k]
        assert type(v) is type(w), (k, v, w)
        assert v == w or (isinstance(v, float) and math.isnan(v) and math.isnan(w)), (k, v, w)
        if isinstance(v, float):
            assert math.copysign(1, v) == math.copysign(1, w), (k, v, w)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SPECS), st.sampled_from([".json", ".graphml"]), st.data())
def test_a_fabric_reads_back_as_written(tmp_path, spec, suffix, data):
    g = build(spec)
    nodes, edges = list(g.nodes), list(g.edges)
    for _ in range(data.draw(st.integers(0, 4))):
        where = data.draw(st.sampled_from(["node", "edge", "graph"]))
        name, value = data.draw(NAME), data.draw(VALUE)
        if where == "node":
            g.nodes[data.draw(st.sampled_from(nodes))][name] = value
        elif where == "edge":
            g.edges[data.draw(st.sampled_from(edges))][name] = value
        else:   # 'id' too: networkx writes it on the <graph> element (read back since c1840a8)
            g.graph["id" if data.draw(st.booleans()) else name] = value
    try:
        validate(g)
    except UserError:   # a text the schema refuses: not written either
        event("refused by validate")
        return
    event("written and read back")
    path = tmp_path / f"f{suffix}"
    path.unlink(missing_ok=True)   # tmp_path is one for every example
    if suffix == ".graphml" and not isinstance(g.graph.get("id", ""), str):
        with pytest.raises(UserError, match="graph attribute 'id' must be text"):
            write_graph(g, path)   # the <graph> element's id: text only
        assert not path.exists()
        return
    write_graph(g, path)
    _same(g, read_graph(path))


@pytest.mark.parametrize("value", [False, 5, 1.5])
def test_a_graph_id_that_is_not_text_is_refused_for_graphml(tmp_path, value):
    """Before: ElementTree's 'TypeError: cannot serialize False (type bool)', a traceback."""
    g = build("ring:n=3")
    g.graph["id"] = value
    path = tmp_path / "r.graphml"
    with pytest.raises(UserError) as err:
        write_graph(g, path)
    assert str(err.value) == (f"cannot write {path} as GraphML: graph attribute 'id' must be "
                              f"text (GraphML writes it as the <graph> element's id), got "
                              f"{value!r}; write .json instead")
    assert not path.exists()
    assert read_graph(write_graph(g, tmp_path / "r.json")).graph["id"] == value
