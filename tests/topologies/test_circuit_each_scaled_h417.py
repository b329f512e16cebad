"""A fabric whose links are scaled as a whole keeps each circuit's share with them.

realize writes ``via_bandwidth`` (each circuit's rate) where a pair's circuits differ, and
validate holds it to summing to the edge's ``bandwidth``; a scenario's ``bandwidth_scale``
(netmodel.study.scenario_fabric.adjusted) scaled the edge alone, so the adjusted fabric
was refused by validate ('... must give each of its 3 circuits' bandwidth ...') when
costed, and a failed OCS took an unscaled share.
"""

from __future__ import annotations

import math

import pytest

from topologies.optical import drop_circuits, ocs, realize
from topologies.schema import circuit_each, validate

PORT, SLOW = 37.5e9, 9.375e9   # a Lite's port; one of gpu0's a quarter of it


@pytest.fixture
def unequal():
    """gpu0-gpu1 on 3 circuits through ocs0..ocs2, gpu0's port on ocs1 a quarter rate."""
    g = ocs(gpus=2, ports=3, ocs_ports=4, gpu="Lite")
    g.edges["gpu0", "ocs1"]["bandwidth"] = SLOW
    g.edges["gpu0", "ocs1"]["lanes"] = 1
    return realize(g, [("gpu0", "gpu1")] * 3)


def test_a_scaled_fabric_stays_valid_and_drops_scaled_shares(unequal):
    from netmodel.study.scenario_fabric import adjusted
    from netmodel.study.scenarios import Adjust

    half = adjusted(unequal, Adjust(bandwidth_scale=0.5))
    validate(half, check_connected=False)   # before: refused, the shares summing to 2x
    d = half.edges["gpu0", "gpu1"]
    assert circuit_each("gpu0", "gpu1", d)[0] == [PORT / 2, SLOW / 2, PORT / 2]
    drop_circuits(half, {"ocs1"})   # the slow circuit gone: two halved ports left
    assert math.isclose(half.edges["gpu0", "gpu1"]["bandwidth"], PORT)
    assert unequal.edges["gpu0", "gpu1"]["bandwidth"] == 2 * PORT + SLOW   # not changed


def test_numpy_rates_are_written_as_numbers():
    """A port rate or a scale given as a numpy float (a library caller's array element) is
    written as its number: repr wrote 'np.float64(9375000000.0)', which validate refuses."""
    import numpy as np

    from netmodel.study.scenario_fabric import adjusted
    from netmodel.study.scenarios import Adjust

    g = ocs(gpus=2, ports=3, ocs_ports=4, gpu="Lite")
    g.edges["gpu0", "ocs1"]["bandwidth"] = np.float64(SLOW)
    r = realize(g, [("gpu0", "gpu1")] * 3)   # before: refused, its own via_bandwidth unread
    assert r.edges["gpu0", "gpu1"]["via_bandwidth"] == f"{PORT!r},{SLOW!r},{PORT!r}"
    half = adjusted(r, Adjust(bandwidth_scale=np.float64(0.5)))
    assert circuit_each("gpu0", "gpu1", half.edges["gpu0", "gpu1"])[0] == [PORT / 2, SLOW / 2,
                                                                          PORT / 2]
