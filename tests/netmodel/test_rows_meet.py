"""Whether two GPUs' switch rows meet (route_types._rows_meet, read by
route_templates._pair_fields) is worked out in memory that follows the rows, not their
width cubed: one GPU wired to 4,000 NVSwitches (gpu0 of /tmp/h236_t0_repro.py's hub) made
a 64-GPU all-to-all compare 4,001 x 4,001 x 4,001 cells (59.6 GiB, a traceback); rows
wider than 4 are now sorted, a chunk at a time. Costs are unchanged (the broadcast and the
sorted forms agree on random rows and on the hub's all-to-all to the bit)."""

import tracemalloc

import networkx as nx
import numpy as np

import netmodel.collectives.route_types as rt
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel


def _hub(n: int) -> nx.Graph:
    """``n`` GPUs, gpu i in server i % 2 on NVSwitch nvs{i} (tier 0), gpu0 on all of them,
    every GPU on leaf0 (tier 1)."""
    g = nx.Graph(name="hub", spec="", gpus=n)
    g.add_node("leaf0", kind="switch", tier=1, radix=2 * n, latency=1e-7,
               in_network_reduction=False)
    for i in range(n):
        g.add_node(f"nvs{i}", kind="switch", tier=0, radix=2, latency=1e-7,
                   in_network_reduction=False)
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM", server=i % 2)
        g.add_edge(f"gpu{i}", "leaf0", bandwidth=50e9, latency=1e-7,
                   medium="pluggable-optics", lanes=4)
        g.add_edge(f"gpu{i}", f"nvs{i}", bandwidth=450e9, latency=1e-7, medium="copper",
                   lanes=18)
        if i:
            g.add_edge("gpu0", f"nvs{i}", bandwidth=450e9, latency=1e-7, medium="copper",
                       lanes=18)
    return g


def test_sorted_rows_meet_as_broadcast_rows(monkeypatch):
    """600 random pairs of rows of 0-12 numbers below 30 (padded with -1, a number at most
    once a row): the sorted form (rows 12 wide) gives the set intersection's emptiness."""
    rng = np.random.default_rng(236)
    rows = [rng.choice(30, size=rng.integers(0, 13), replace=False) for _ in range(60)]
    table = np.full((60, 12), -1)
    for i, r in enumerate(rows):
        table[i, :len(r)] = r
    ia, ib = rng.integers(0, 60, 600), rng.integers(0, 60, 600)
    want = [bool(set(rows[a]) & set(rows[b])) for a, b in zip(ia, ib, strict=True)]
    monkeypatch.setattr(rt, "_MEET_CHUNK", 100)   # several chunks
    assert rt._rows_meet(table, ia, ib).tolist() == want
    monkeypatch.setattr(rt, "_MEET_BROADCAST", 12)
    assert rt._rows_meet(table, ia, ib).tolist() == want


def test_a_gpu_on_600_nvswitches_costs_in_little_memory(monkeypatch):
    """Direct all-to-all of gpu0-gpu7, 1 MiB, on a 600-GPU hub: its peak traced memory was
    50.1 MB (the rows' 3-d comparison), now under 10 MB; the time equals the broadcast
    form's to the bit."""
    group = [f"gpu{i}" for i in range(8)]
    g = _hub(600)
    model = FabricCostModel(g, calibration=Calibration.ideal())
    tracemalloc.start()
    try:
        t = model.cost("all-to-all", 2 ** 20, group, "direct").time
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10e6
    monkeypatch.setattr(rt, "_MEET_BROADCAST", 10 ** 6)
    wide = FabricCostModel(g, calibration=Calibration.ideal())
    assert wide.cost("all-to-all", 2 ** 20, group, "direct").time == t


def test_a_router_past_its_port_cells_is_refused_in_one_line(monkeypatch):
    """The 600-GPU hub's tables are 600 GPUs x 601 switch ports of gpu0 (600 NVSwitches and
    leaf0): 360,600 cells. Under NETMODEL_MAX_PORT_CELLS=360599 the router is refused
    naming the count, the GPU and the setting (20,000 such GPUs asked 9.6 GB); at 360600
    it is built."""
    import pytest

    from compute.errors import UserError
    from netmodel.collectives.routing import MAX_PORT_CELLS, Router

    assert MAX_PORT_CELLS == 100_000_000
    g = _hub(600)
    monkeypatch.setenv("NETMODEL_MAX_PORT_CELLS", "360599")
    with pytest.raises(UserError, match=(
            r"^routing 600 GPUs, 'gpu0' wired to 601 switches \(the most\): about 360,600 "
            r"cells of the per-GPU port tables .*, over the limit of 360,599; wire each GPU "
            r"to fewer switches, or raise NETMODEL_MAX_PORT_CELLS$")):
        Router(g)
    monkeypatch.setenv("NETMODEL_MAX_PORT_CELLS", "360600")
    Router(g)
