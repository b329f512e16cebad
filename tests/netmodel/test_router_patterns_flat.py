"""The first- and last-hop patterns of a router's templates are kept flat, one cell a port
of a pattern (route_types.Ragged, h246), not a table padded to the widest pattern.

On the hub of tests/netmodel/test_rows_meet.py (gpu0 on every NVSwitch), a step of a few
transfers learns the templates of every pair of the signatures known so far
(route_templates._learn_pairs), gpu0's with its own among them: a route spread over all its
NVSwitches, a pattern of 600 ports on the 600-GPU hub. Padded, every later pattern took 600
cells (two tables, positions and shares), and so did every transfer's row in the general
gather of route_bulk: a 64-GPU all-to-all after an 8-GPU one peaked at 161.6 MB traced
(529 MB on the 2,000-GPU hub); 5.7 MB now. Costs are unchanged to the bit.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from tests.netmodel.test_rows_meet import _hub, _hub_all_to_all_time


def test_a_pattern_over_600_nvswitches_pads_no_other():
    """After gpu0-gpu7's all-to-all, the 64-GPU all-to-all stays under 15 MB traced (was
    161.6 MB) and takes the time of a fresh model to the bit (the hand-derived 62/64 MiB / 50 GB/s +
    0.6 us of test_rows_meet); the pattern of gpu0 to a GPU of its own signature holds its 600
    NVSwitch ports (shares 1/600 each: the links are alike), the others one port."""
    model = FabricCostModel(_hub(600), calibration=Calibration.ideal())
    # 1.632864e-05 and 2.0916160000000002e-05 s when written (h363: were pins of both):
    # each the hand-derived time (test_rows_meet._hub_all_to_all_time), and the 64-GPU one
    # a fresh model's to the bit
    assert model.cost("all-to-all", 2 ** 20, [f"gpu{i}" for i in range(8)],
                      "direct").time == pytest.approx(_hub_all_to_all_time(_hub(600), 8),
                                                      rel=1e-12)
    tracemalloc.start()
    try:
        t = model.cost("all-to-all", 2 ** 20, [f"gpu{i}" for i in range(64)], "direct").time
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 15e6
    assert t == pytest.approx(_hub_all_to_all_time(_hub(600), 64), rel=1e-12)
    fresh = FabricCostModel(_hub(600), calibration=Calibration.ideal())
    assert t == fresh.cost("all-to-all", 2 ** 20, [f"gpu{i}" for i in range(64)],
                           "direct").time
    r = model.router
    ptr, pos = r._specs_pos.arrays
    widths = np.diff(ptr)
    assert widths.max() == 600 and (widths[widths != 600] == 1).all() and not r._specs_one
    wide = int(np.argmax(widths))
    shares = r._specs_w.arrays[1][ptr[wide]:ptr[wide + 1]]
    assert np.allclose(shares, 1 / 600) and sorted(pos[ptr[wide]:ptr[wide + 1]]) == \
        list(range(1, 601))   # gpu0's ports but leaf0 (position 0: 'leaf0' < 'nvs0')


def test_patterns_read_as_they_were_added():
    """A router's patterns, added one by one and read between additions, are the lists
    given, positions and shares, in order."""
    r = Router(_hub(4))
    got = [r._add_spec([2, 0], [0.25, 0.75]), r._add_spec([], [])]
    ptr, pos = r._specs_pos.arrays
    got.append(r._add_spec([1], [1.0]))
    ptr, pos = r._specs_pos.arrays
    w = r._specs_w.arrays[1]
    rows = [(pos[ptr[i]:ptr[i + 1]].tolist(), w[ptr[i]:ptr[i + 1]].tolist()) for i in got]
    assert rows == [([2, 0], [0.25, 0.75]), ([], []), ([1], [1.0])]
    assert got == [0, 1, 2] and not r._specs_one


def test_pairs_with_a_gpu_on_every_nvswitch_meet_at_their_nvswitch():
    """On the 40-GPU hub, gpu i and gpu0 share nvs{i} and leaf0; the route keeps to the
    NVSwitch (one NVLink domain), both ways: gpu{i} -> nvs{i} -> gpu0, all the traffic, 100
    ns a link and 100 ns the switch; gpu{i} -> gpu{j} (i, j > 0) share leaf0 only: through
    it. (The switches in common are looked up from the narrower signature since h246.)"""
    r = Router(_hub(40))
    for i in (1, 7, 10, 39):
        for a, b in ((f"gpu{i}", "gpu0"), ("gpu0", f"gpu{i}")):
            got = r.route(a, b)
            assert [r.link_name(x) for x in got.links.tolist()] == [(a, f"nvs{i}"),
                                                                  (f"nvs{i}", b)]
            assert got.weights.tolist() == [1.0, 1.0] and got.hops == 2
            assert got.latency == 1e-7 + 1e-7 + 1e-7
    got = r.route("gpu3", "gpu12")
    assert [r.link_name(x) for x in got.links.tolist()] == [("gpu3", "leaf0"),
                                                          ("leaf0", "gpu12")]
