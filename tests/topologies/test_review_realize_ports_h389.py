"""Every circuit set realize accepts holds each OCS port once.

Each OCS plane joins one port of every GPU; a circuit takes a port of both its ends on one
plane, so the circuits through one OCS must share no GPU (a matching), and a GPU holds at
most its ``ports`` circuits. realize's colouring moves circuits already placed to other
planes when a greedy choice is blocked (Kempe-chain swaps); the planes it returned were
the ones first chosen, so a 2x3 torus (12 circuits, each GPU of degree 4) on 4 ports came
back with ``gpu3`` named twice on ``ocs0`` (``gpu0-gpu3`` via ``ocs0,ocs1`` and
``gpu3-gpu5`` via ``ocs0``), a port used twice, and a failed ``ocs0`` would drop both.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from topologies.optical import circuits_for, drop_circuits, ocs, realize


def _ports_held(out):
    """(OCS, GPU) -> circuits through that OCS at that GPU; GPU -> circuits."""
    at, per_gpu = Counter(), Counter()
    for u, v, d in out.edges(data=True):
        if d.get("medium") != "ocs-circuit":
            continue
        via = d["via"].split(",")
        assert len(via) == d.get("links", 1)
        for o in via:
            at[o, u] += 1
            at[o, v] += 1
        per_gpu[u] += len(via)
        per_gpu[v] += len(via)
    return at, per_gpu


def _check(fabric, out, ports):
    at, per_gpu = _ports_held(out)
    assert max(at.values()) == 1, {k: c for k, c in at.items() if c > 1}
    assert max(per_gpu.values()) <= ports
    return sum(per_gpu.values()) // 2


@pytest.mark.parametrize("ports", [4, 8])
def test_torus_2x3_holds_each_port_once(ports):
    fabric = ocs(gpus=6, ports=ports, ocs_ports=6, gpu="Lite")
    copies = ports // 4
    pairs = circuits_for("torus:2x3", list(fabric)[:6]) * copies
    out = realize(fabric, pairs)
    assert _check(fabric, out, ports) == 12 * copies == out.graph["circuits"]
    # the circuits kept when an OCS fails are those not through it: 12 x copies over
    # ``ports`` planes each used once a GPU, 6 GPUs -> 3 circuits a plane
    for o in (f"ocs{i}" for i in range(ports)):
        kept = out.copy()
        drop_circuits(kept, {o})
        assert kept.graph["circuits"] == 12 * copies - 3


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 7), st.integers(2, 6), st.data())
def test_any_accepted_circuit_list_holds_each_port_once(n, ports, data):
    """Random circuit lists among n GPUs: realize refuses, or every OCS carries a matching."""
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                               .filter(lambda p: p[0] != p[1]), min_size=1, max_size=3 * n))
    fabric = ocs(gpus=n, ports=ports, ocs_ports=n, gpu="Lite")
    names = list(fabric)[:n]
    try:
        out = realize(fabric, [(names[a], names[b]) for a, b in pairs])
    except UserError:
        return
    assert _check(fabric, out, ports) == len(pairs)
    # and each pair has as many circuits as asked
    asked = defaultdict(int)
    for a, b in pairs:
        asked[frozenset((names[a], names[b]))] += 1
    for u, v, d in out.edges(data=True):
        assert d.get("links", 1) == asked[frozenset((u, v))]
