"""One reading of an OCS circuit's ``via`` (h352): :func:`topologies.schema.circuit_via`.

``via`` names the OCS node(s) a circuit passes, comma-separated when several, and is
optional (docs/fabrics.md, "Graph schema"). It was split in five places: the schema's check
(refused an empty name, a name that is no OCS and a non-string), the degraded fabric's
failed switches and its failed fibres (skipped a non-string, as if the circuit rode no OCS,
and counted an empty name as a plane), and the picture's curves and OCS labels (took
``str()`` of anything and dropped empty names). The schema's rule is the one kept."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import ocs, realize
from topologies.schema import circuit_via, validate

CIRCUIT = {"medium": "ocs-circuit"}
NODES = {"ocs0": {"kind": "ocs"}, "ocs1": {"kind": "ocs"}, "gpu2": {"kind": "gpu"},
         "a b": {"kind": "ocs"}}


@pytest.mark.parametrize(("via", "planes"), [
    ("ocs0", ("ocs0",)),
    ("ocs1,ocs0", ("ocs1", "ocs0")),   # in the order written
    ("a b", ("a b",)),                 # a name is taken as written, its space too
])
def test_a_via_names_its_planes_in_order(via, planes):
    assert circuit_via("gpu0", "gpu1", {**CIRCUIT, "via": via}) == planes
    assert circuit_via("gpu0", "gpu1", {**CIRCUIT, "via": via}, NODES) == planes


@pytest.mark.parametrize("data", [
    CIRCUIT,                                       # absent: a costing drops it
    {**CIRCUIT, "via": None},
    {"medium": "copper", "via": "ocs0"},           # not a circuit: via means nothing there
    {"medium": "fibre", "via": ["not", "read"]},
])
def test_no_planes_without_a_via_or_off_a_circuit(data):
    assert circuit_via("gpu0", "gpu1", data, NODES) == ()


@pytest.mark.parametrize(("via", "why"), [
    ("", ": an empty name"),
    ("ocs0,", ": an empty name"),
    (",ocs0", ": an empty name"),
    ("ocs0,,ocs1", ": an empty name"),
    (["ocs0", "ocs1"], ""),            # old degrade: skipped (no plane), old draw: str() of it
    (("ocs0",), ""),
    (0, ""),
    (b"ocs0", ""),
])
def test_a_malformed_via_is_refused_whatever_the_graph(via, why):
    for nodes in (None, NODES):
        with pytest.raises(UserError) as err:
            circuit_via("gpu0", "gpu1", {**CIRCUIT, "via": via}, nodes)
        assert str(err.value) == (
            f"invalid fabric graph: circuit 'gpu0'-'gpu1' 'via' must name the OCS node(s) "
            f"it passes (comma-separated), got {via!r}{why}")


@pytest.mark.parametrize(("via", "bad"), [
    ("ocs0,ocs9", "ocs9"),     # no such node
    ("ocs0,gpu2", "gpu2"),     # a node, not an OCS
    (" ocs0", " ocs0"),        # not stripped: a padded name is another name
    ("ocs0 ,ocs1", "ocs0 "),
])
def test_a_name_that_is_no_ocs_is_refused_given_the_graph(via, bad):
    assert circuit_via("gpu0", "gpu1", {**CIRCUIT, "via": via}) == tuple(via.split(","))
    with pytest.raises(UserError, match=f"got {via!r}: {bad!r} is not an OCS of the graph$"):
        circuit_via("gpu0", "gpu1", {**CIRCUIT, "via": via}, NODES)


def _pair(via):
    g = realize(ocs(gpus=2, ports=2, ocs_ports=4), [("gpu0", "gpu1")] * 2)
    assert g.edges["gpu0", "gpu1"]["via"] == "ocs0,ocs1"
    g.edges["gpu0", "gpu1"]["via"] = via
    return g


@pytest.mark.parametrize("via", ["ocs0,ocs1", "ocs1", "ocs1,ocs0"])
def test_the_schema_accepts_what_the_reader_reads(via):
    g = _pair(via)
    if "," not in via:   # one OCS named: one circuit ('links' 1; validate counts one a name)
        del g.edges["gpu0", "gpu1"]["links"]
        g.graph["circuits"] = 1
    validate(g)


@pytest.mark.parametrize("via", ["", "ocs0,", "ocs0,,ocs1", ["ocs0", "ocs1"], 1, " ocs0",
                                 "ocs0,gpu1"])
def test_the_schema_refuses_what_the_reader_refuses(via):
    with pytest.raises(UserError) as schema:
        validate(_pair(via))
    with pytest.raises(UserError) as reader:
        circuit_via("gpu0", "gpu1", {**CIRCUIT, "via": via}, _pair("ocs0").nodes)
    assert str(schema.value) == str(reader.value)
