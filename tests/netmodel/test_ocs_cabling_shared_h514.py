"""One OCS cabling record a fabric: a built (frozen) fabric's ``ocs_cabling`` is read once
and every graph realized from it shares that one object, the members' part of a cell
(``circuit_copies.members_cell``) carries the whole cell's, and the schema checks a
record's columns (tuples) once, not once a graph (h514).

Before, every realize on a members' cell read a new record (lite-ocs at 4,096 ports a Lite:
524,288 fibres) and validate checked it value by value each time (20 times in the
benchmark's instance graphs: CPU 7.8 s at d78a965, 25-26 s since 9431dee).

Hand-derived: lite-ocs at 64 ports a Lite is 128 x 64 = 8,192 fibres of 10 m (its
scenario's ``length``), each one cable; 64 x 128 = ALIKE_PORTS, so its instances' circuits
are set on the first instance's part of the cell and copied.
"""

from __future__ import annotations

import math
from dataclasses import replace

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.study.circuit_copies import members_cell
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric, instance_graph
from topologies import build, schema_circuits, schema_links
from topologies.optical import _fibre_edges, ocs_cabling, realize
from topologies.schema import validate
from topologies.schema_circuits import _fine_column

FIBRES = 128 * 64


@pytest.fixture(scope="module")
def lite_ocs():
    s = get_scenario("lite-ocs")
    s = replace(s, fabric={**s.fabric, "ports": 64})
    return s, build_fabric(s)


def test_a_built_fabric_has_one_record_every_realized_graph_shares(lite_ocs):
    s, g = lite_ocs
    assert nx.is_frozen(g)
    record = ocs_cabling(g)
    assert ocs_cabling(g) is record   # read once
    assert record["cables"] == FIBRES and len(record["fibres"]["gpu"]) == FIBRES
    assert set(record["fibres"]["length"]) == {10.0}
    # the same facts as a copy's, read afresh (a copy is not frozen: not kept)
    fresh = ocs_cabling(g.copy())
    assert fresh is not record and fresh == record
    assert ocs_cabling(g.copy()) is not fresh
    for size in (2, 16, 128):   # copied from the first instance's part; the whole cell
        out = instance_graph(s, g, size)
        assert out.graph["ocs_cabling"]["fibres"] is record["fibres"]


def test_the_members_cell_carries_the_whole_cells_record(lite_ocs):
    _, g = lite_ocs
    members = [f"gpu{i}" for i in range(4)]
    cell = members_cell(g, members)
    assert cell.graph["ocs_cabling"]["fibres"] is ocs_cabling(g)["fibres"]
    assert cell.number_of_edges() == 4 * 64   # the members' fibres only
    pairs = [("gpu0", "gpu1"), ("gpu1", "gpu2"), ("gpu2", "gpu3"), ("gpu3", "gpu0")]
    part, whole = realize(cell, pairs, validated=True), realize(g, pairs, validated=True)
    assert part.graph == whole.graph
    assert list(part.edges(data=True)) == list(whole.edges(data=True))
    # an unfrozen cell's (a degraded copy's) record is read from it: the same facts
    copy = g.copy()
    assert members_cell(copy, members).graph["ocs_cabling"] == ocs_cabling(g)


def test_a_shared_record_is_checked_once_a_changed_one_again(monkeypatch):
    g = build("ocs:gpus=4,ports=2,ocs_ports=16,medium=pluggable-optics")
    r = realize(g, [("gpu0", "gpu1")])
    calls = []
    real = schema_circuits._fine_column
    monkeypatch.setattr(schema_circuits, "_fine_column", lambda *a: calls.append(a) or real(*a))
    fibres = r.graph["ocs_cabling"]["fibres"]
    validate(r, check_connected=False)
    validate(r.copy(), check_connected=False)
    assert calls == []   # realize checked these very columns
    # a new column (a tuple, not the checked one) is checked, and refused
    bad = {**fibres, "bandwidth": (-1.0,) + fibres["bandwidth"][1:]}
    r.graph["ocs_cabling"] = {**r.graph["ocs_cabling"], "fibres": bad}
    with pytest.raises(UserError, match="fibre bandwidth must be > 0, got -1"):
        validate(r, check_connected=False)
    assert len(calls) == 3   # cables and lanes passed, bandwidth told value by value
    # lists (a file's, before its reader makes tuples) are checked each time: changed
    # after a check, refused
    listed = {k: list(v) for k, v in fibres.items()}
    r.graph["ocs_cabling"] = {**r.graph["ocs_cabling"], "fibres": listed}
    validate(r, check_connected=False)
    listed["lanes"][0] = 0
    with pytest.raises(UserError, match="fibre lanes must be whole >= 1, got 0"):
        validate(r, check_connected=False)


def test_a_checked_record_still_needs_its_ends_in_each_graph():
    g = build("ocs:gpus=4,ports=2,ocs_ports=16,medium=pluggable-optics")
    r = realize(g, [("gpu0", "gpu1")])   # circuits via ocs0 only
    validate(r, check_connected=False)
    other = r.copy()
    other.remove_node("ocs1")   # its 16 ports still hold the 8 cables
    with pytest.raises(UserError, match="fibre 'gpu0'-'ocs1'; a fibre joins a GPU"):
        validate(other, check_connected=False)
    twice = r.copy()
    f = dict(twice.graph["ocs_cabling"]["fibres"])
    f.update(gpu=f["gpu"][:1] * 2 + f["gpu"][2:], ocs=f["ocs"][:1] * 2 + f["ocs"][2:])
    twice.graph["ocs_cabling"] = {**twice.graph["ocs_cabling"], "fibres": f}
    with pytest.raises(UserError, match="names a GPU-OCS fibre twice"):
        validate(twice, check_connected=False)


def _value_fine(x: object, whole: bool, positive: bool) -> bool:
    """The schema's rule for one value (its value-by-value check)."""
    if whole:
        return schema_links.whole_from(x, 1)
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) \
        and (x > 0 if positive else x >= 0)


_VALUES = st.one_of(st.integers(-3, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.booleans(), st.sampled_from([0, 0.0, -0.0, 1, 5e-324]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUES, max_size=6), st.booleans(), st.booleans(), st.booleans())
def test_a_whole_column_at_once_agrees_with_each_value(values, whole, positive, as_tuple):
    column = tuple(values) if as_tuple else values
    fine = _fine_column(column, whole, positive)
    each = all(_value_fine(x, whole, positive) for x in column)
    if fine:
        assert each   # never passes a wrong value
    plain = {int} if whole else {int, float}
    if {type(x) for x in column} <= plain:
        assert fine == each   # Python numbers: told at once


_KINDS = st.sampled_from(["gpu", "ocs", "switch"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_KINDS, min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_the_fibres_are_listed_in_edge_order(kinds, links):
    g = nx.Graph()
    g.add_nodes_from((i, {"kind": k}) for i, k in enumerate(kinds))
    g.add_edges_from((u % len(kinds), v % len(kinds), {"n": j}) for j, (u, v) in enumerate(links))
    kind = dict(g.nodes(data="kind"))
    want = [(v, u, d) if kind[u] == "ocs" else (u, v, d) for u, v, d in g.edges(data=True)
            if {kind[u], kind[v]} == {"gpu", "ocs"}]
    assert _fibre_edges(g, kind) == want

