"""A degraded OCS fabric reads each circuit's ``via`` as the schema does (h352).

``degrade`` split ``via`` itself: a non-string (a list, as a hand-made graph may hold) was
skipped, so the circuit rode no OCS and a failed switch left it whole; an empty name
(``"ocs0,,ocs1"``) counted as a third plane, so failing ocs0 left 2/3 of the edge where one
circuit of two is left; a padded name (``" ocs0"``) never matched the failed switch. The
schema refuses each of these graphs; ``degrade`` now reads ``via`` with
:func:`topologies.schema.circuit_via` and refuses them in the same words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.collectives.degraded import degrade
from topologies import ocs, realize
from topologies.schema import validate

OCS = ("ocs0", "ocs1", "ocs2")


def _pair(via):
    """gpu0-gpu1 joined by two circuits (on ocs0 and ocs1 of three planes), ``via`` set."""
    g = realize(ocs(gpus=2, ports=3, ocs_ports=4), [("gpu0", "gpu1")] * 2)
    assert g.edges["gpu0", "gpu1"]["via"] == "ocs0,ocs1"
    g.edges["gpu0", "gpu1"]["via"] = via
    return g


@pytest.mark.parametrize("via", [["ocs0", "ocs1"], ("ocs0", "ocs1"), "ocs0,,ocs1", " ocs0,ocs1",
                                 "", "ocs0,gpu1"])
def test_degrade_refuses_the_via_the_schema_refuses(via):
    g = _pair(via)
    with pytest.raises(UserError) as schema:
        validate(g)
    for failed in ({"nodes": ["ocs0"]}, {"links": [("gpu0", "ocs1")]}):
        with pytest.raises(UserError) as degraded:
            degrade(g, **failed)
        assert str(degraded.value) == str(schema.value)


#: the names a via is written from: OCS of the graph, and what is not one
PIECES = st.sampled_from([*OCS, "", " ocs0", "ocs9", "gpu1"])


@given(st.lists(PIECES, min_size=1, max_size=3), st.sampled_from(OCS))
def test_degrade_accepts_a_via_as_the_schema_does_and_keeps_the_other_planes(pieces, failed):
    """A valid via's circuits are one port's bandwidth each (the realized pair's two circuits
    share its bandwidth equally); failing an OCS keeps the circuits on the others."""
    via = ",".join(pieces)
    g = _pair(via)
    port = g.edges["gpu0", "gpu1"]["bandwidth"] / 2
    g.edges["gpu0", "gpu1"].update(bandwidth=port * len(pieces), links=len(pieces))
    valid = all(p in OCS for p in pieces) and len(set(pieces)) == len(pieces)   # each once
    try:
        validate(g, check_connected=False)
    except UserError:
        assert not valid
        with pytest.raises(UserError, match="'via' must name the OCS node"):
            degrade(g, nodes=[failed])
        return
    assert valid
    kept = [p for p in pieces if p != failed]
    out = degrade(g, nodes=[failed])
    if not kept:
        assert not out.has_edge("gpu0", "gpu1")
        return
    d = out.edges["gpu0", "gpu1"]
    assert (d["via"], d.get("links", 1)) == (",".join(kept), len(kept))
    assert d["bandwidth"] == pytest.approx(port * len(kept), rel=1e-12)
