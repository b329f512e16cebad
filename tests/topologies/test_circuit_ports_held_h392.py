"""validate refuses circuits that hold an OCS port twice or miscount themselves.

Each GPU of an OCS fabric has one port on each OCS; a circuit through an OCS holds that
port at both its ends, so the circuits through one OCS share no GPU, and a circuit edge's
``via`` names one OCS a circuit (``links`` of them), each once. validate read only that
every name in ``via`` is an OCS, so a fabric (a file, or realize before 0e94cef) could
claim two circuits on one port (``gpu0-gpu1`` via ``ocs0,ocs0``; ``gpu1`` on ``ocs0`` for
``gpu0-gpu1`` and ``gpu1-gpu2``) or 2 circuits through 1 OCS (``links`` 2, ``via`` ``ocs0``):
circuit_count counted ``links`` and drop_circuits the names, so a failed ``ocs0`` left 2
circuits counted on an edge said to ride it alone, or dropped both of a pair.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies.io import read_graph, write_graph
from topologies.optical import ocs, realize
from topologies.schema import validate


@pytest.fixture
def fabric():
    """4 GPUs x 2 ports on ocs0, ocs1: gpu0-gpu1 twice (one circuit on each), gpu2-gpu3."""
    g = realize(ocs(gpus=4, ports=2, ocs_ports=4), [("gpu0", "gpu1")] * 2 + [("gpu2", "gpu3")])
    assert g.edges["gpu0", "gpu1"]["via"] in ("ocs0,ocs1", "ocs1,ocs0")
    return g


def test_realized_circuits_pass(fabric):
    validate(fabric, check_connected=False)


def test_one_ocs_twice_in_a_via_is_refused(fabric):
    fabric.edges["gpu0", "gpu1"]["via"] = "ocs0,ocs0"
    with pytest.raises(UserError, match=r"^invalid fabric graph: circuit 'gpu0'-'gpu1' 'via' "
                                        r"must name .* got 'ocs0,ocs0': 'ocs0' twice \(a GPU "
                                        r"has one port on an OCS\)$"):
        validate(fabric, check_connected=False)


def test_a_via_of_fewer_ocs_than_links_is_refused(fabric):
    fabric.edges["gpu0", "gpu1"]["via"] = "ocs0"   # links stays 2
    with pytest.raises(UserError, match=r"'via' 'ocs0' names 1 OCS for 2 circuits \('links'\): one OCS a circuit$"):
        validate(fabric, check_connected=False)


def test_a_port_held_by_two_circuits_is_refused(fabric):
    lone = fabric.edges["gpu2", "gpu3"]
    o = lone["via"]
    fabric.add_edge("gpu1", "gpu2", **dict(lone))   # gpu1 already has a circuit on o
    fabric.graph["circuits"] += 1
    with pytest.raises(UserError, match=rf"GPU 'gpu[12]' holds 2 circuits through OCS '{o}'"):
        validate(fabric, check_connected=False)


def test_a_fabric_file_claiming_a_port_twice_is_refused(fabric, tmp_path):
    path = tmp_path / "f.json"
    write_graph(fabric, path)
    data = json.loads(path.read_text())
    edge = next(e for e in data["edges"] if {e["source"], e["target"]} == {"gpu0", "gpu1"})
    edge["via"] = "ocs1,ocs1"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="got 'ocs1,ocs1': 'ocs1' twice"):
        read_graph(path)
