"""The router's per-GPU port tables are flat, one cell a GPU port (h241).

They were two ``GPUs x the most switch ports of one GPU`` arrays (``_ports_up`` and
``_ports_down``, the second each up link ``^ 1``), so one GPU wired to many switches padded
every GPU's row: the hub of tests/netmodel/test_rows_meet.py with 4,000 GPUs (gpu0 on all
4,000 NVSwitches and leaf0) held 2 x 4,000 x 4,001 x 8 B = 256 MB, and a direct all-to-all of
8 of its GPUs peaked at 279 MB traced (23 MB now); at 2,000 GPUs 75.7 MB (11.7 MB now). Now
``_port_links`` holds each GPU's up links at ``_gport_ptr[g]:_gport_ptr[g + 1]`` and the down
links are read as ``^ 1``; costs are unchanged to the bit.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import Pairs
from tests.netmodel.test_rows_meet import _hub, _hub_all_to_all_time
from topologies import build


def test_a_hub_gpus_ports_are_its_links_by_switch_name():
    """gpu0 of a 40-GPU hub is wired to leaf0 and nvs0..nvs39: after routing from it, its
    row is the link to each, the switches in name order (leaf0, nvs0, nvs1, nvs10, ...),
    and its down row each switch's link back; gpu1's row is leaf0's and nvs1's. The table
    holds one cell a port: 41 + 39 x 2 = 119."""
    g = _hub(40)
    r = Router(g)
    r.route("gpu0", "gpu1")
    r.route("gpu1", "gpu2")
    names = sorted(["leaf0", *(f"nvs{i}" for i in range(40))])
    assert names[:4] == ["leaf0", "nvs0", "nvs1", "nvs10"]
    gi = np.array([r.gpu_list.index("gpu0"), r.gpu_list.index("gpu1")])
    up, down = r._port_rows(gi), r._port_rows(gi, down=True)
    assert up[0] == [r.link_id("gpu0", s) for s in names]
    assert down[0] == [r.link_id(s, "gpu0") for s in names]
    assert up[1] == [r.link_id("gpu1", "leaf0"), r.link_id("gpu1", "nvs1")]
    assert down[1] == [r.link_id("leaf0", "gpu1"), r.link_id("nvs1", "gpu1")]
    assert r._port_links.shape == (119,) and r._port_table() is None


def test_a_uniform_fabric_keeps_a_table_view():
    """fat-tree:k=4: every GPU on one leaf, so the ports are a 16 x 1 view of the flat cells
    (the old layout, read the old way); each GPU's row is its leaf link."""
    g = build("fat-tree:k=4")
    r = Router(g)
    gpus = tuple(r.gpu_list)
    r.loads(Pairs(gpus, np.arange(16), (np.arange(16) + 5) % 16, 1.0))
    t = r._port_table()
    assert t.shape == (16, 1) and np.shares_memory(t, r._port_links)
    for i, x in enumerate(gpus):
        (leaf,) = [s for s in g[x] if g.nodes[s]["kind"] == "switch"]
        assert t[i, 0] == r.link_id(x, leaf)


def test_a_gpu_on_2000_nvswitches_keeps_small_tables():
    """Direct all-to-all of gpu0-gpu7, 1 MiB, on a 2,000-GPU hub: its traced peak was 75.7 MB
    (the two padded tables, 64 MB), now under 20 MB; the time is the one before, to the bit:
    each of gpu1-gpu7 sends 6 of its 8 shares over its 50 GB/s leaf0 cable (to gpu0 through
    its NVSwitch), 786,432 B / 50 GB/s = 15.73 us, plus the longest route's latency, 0.6 us (a PXN relay:
    4 cables and 2 switches of 0.1 us; test_rows_meet._hub_all_to_all_time)."""
    g = _hub(2000)
    tracemalloc.start()
    try:
        model = FabricCostModel(g, calibration=Calibration.ideal())
        t = model.cost("all-to-all", 2 ** 20, [f"gpu{i}" for i in range(8)], "direct").time
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6
    # 1.632864e-05 s when written (h363: was a pin of it): 15.73 us + 0.6 us, by hand
    assert t == pytest.approx(_hub_all_to_all_time(g, 8), rel=1e-12)
    assert t == pytest.approx(6 / 8 * 2 ** 20 / 50e9 + 6e-7, rel=1e-12)
