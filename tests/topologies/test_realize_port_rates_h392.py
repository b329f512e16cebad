"""A circuit runs at the slower of its two ports, whichever end a circuit list names first.

An OCS circuit joins a port of each GPU through one mirror; the light path carries what
both ends' optics carry, the lesser of the two ports. realize summed the bandwidth and
lanes of the first-named GPU's fibres only, so on a cabled fabric whose GPUs' ports differ
(a fabric file may give each fibre its own bandwidth) circuit ``gpu0-gpu1`` and circuit
``gpu1-gpu0`` came out at different bandwidths: 450 GB/s and 112.5 GB/s for ports of
450 GB/s at gpu0 and 112.5 GB/s at gpu1.
"""

from __future__ import annotations

import pytest

from topologies.common import lanes_for
from topologies.optical import ocs, realize


@pytest.fixture
def uneven():
    """2 GPUs x 2 ports on 2 OCS; gpu1's ports carry a quarter of gpu0's."""
    g = ocs(gpus=2, ports=2, ocs_ports=2)
    for o in ("ocs0", "ocs1"):
        d = g.edges["gpu1", o]
        d["bandwidth"] /= 4
        d["lanes"] = lanes_for(d["bandwidth"])
    return g


@pytest.mark.parametrize("pairs", [[("gpu0", "gpu1")], [("gpu1", "gpu0")],
                                   [("gpu0", "gpu1"), ("gpu1", "gpu0")]])
def test_a_circuit_runs_at_its_slower_port(uneven, pairs):
    slow, fast = uneven.edges["gpu1", "ocs0"], uneven.edges["gpu0", "ocs0"]
    assert slow["bandwidth"] == fast["bandwidth"] / 4
    d = realize(uneven, pairs).edges["gpu0", "gpu1"]
    n = len(pairs)   # each circuit on its own plane: n x the slower port
    assert d["bandwidth"] == n * slow["bandwidth"]
    assert d["lanes"] == n * slow["lanes"] < n * fast["lanes"]


def test_even_ports_are_unchanged():
    g = ocs(gpus=4, ports=2, ocs_ports=4)
    port = g.edges["gpu0", "ocs0"]
    d = realize(g, "ring").edges["gpu0", "gpu1"]
    assert (d["bandwidth"], d["lanes"]) == (port["bandwidth"], port["lanes"])
