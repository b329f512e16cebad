"""An OCS fabric is checked against the schema once where it enters, not again by each
circuit set realized on it (h375).

``topologies.optical.realize`` validated its input on every call, though the ``ocs`` builder
had just checked the cabling and a study realizes one circuit set per instance size on the
same built fabric (0.29 s of CPU a call for lite-ocs's 128 Lites at 4,096 ports: 524,288
fibres); the ``ocs`` builder then validated realize's output a second time for
connectivity. ``realize(..., validated=True)`` skips the input's check for a graph known to
pass, and ``check_connected`` is passed on to the one check of the output.
"""

from __future__ import annotations

import networkx as nx
import pytest

import topologies.optical as optical
from compute.errors import UserError
from topologies import build
from topologies.schema import validate


@pytest.fixture
def checks(monkeypatch):
    """Every schema check optical makes, as ``(graph, check_connected)``."""
    seen: list = []

    def counted(graph, *, check_connected=True):
        seen.append((graph, check_connected))
        return validate(graph, check_connected=check_connected)

    monkeypatch.setattr(optical, "validate", counted)
    return seen


def test_the_ocs_builder_checks_its_circuits_once(checks):
    g = build("ocs:gpus=8,ports=2,logical=ring")
    # the cabling was checked in bulk as built; the realized ring once, connectivity too
    assert checks == [(g, True)]
    assert g.graph["circuits"] == 8 * 2 // 2   # a ring of 8 GPUs, one circuit a port


def test_realize_checks_its_input_unless_told(checks):
    cabling = build("ocs:gpus=4,ports=2")
    out = optical.realize(cabling, "ring")
    assert checks == [(cabling, False), (out, False)]   # a graph given: the boundary
    checks.clear()
    again = optical.realize(cabling, "ring", validated=True)
    assert checks == [(again, False)]
    assert nx.utils.edges_equal(again.edges(data=True), out.edges(data=True))
    assert again.graph == out.graph


def test_an_unchecked_bad_graph_is_still_refused():
    cabling = build("ocs:gpus=4,ports=2")
    bad = nx.Graph(cabling)
    bad.graph["gpus"] = 3
    with pytest.raises(UserError, match="graph attribute 'gpus' is 3 but it has 4 GPU nodes"):
        optical.realize(bad, "ring")
    with pytest.raises(UserError, match="validated must be true or false, got 'yes'"):
        optical.realize(cabling, "ring", validated="yes")
    with pytest.raises(UserError, match="check_connected must be true or false"):
        optical.realize(cabling, "ring", check_connected=1)


def test_the_builder_still_refuses_islands():
    # circuit 0-1 alone leaves gpu2 and gpu3 unreached: the one check of the output sees it
    with pytest.raises(UserError, match=r"GPU 'gpu2' cannot reach GPU 'gpu0' \(2 GPU\(s\) "
                                        r"disconnected\)"):
        build("ocs:gpus=4,ports=2,logical=0-1")
