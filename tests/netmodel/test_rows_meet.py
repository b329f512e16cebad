"""Whether two GPUs' switch rows meet (route_types.rows_meet, read by
route_templates._pair_fields) is worked out in memory and time that follow the shorter
rows: one GPU wired to 4,000 NVSwitches (gpu0 of /tmp/h236_t0_repro.py's hub) made a
64-GPU all-to-all compare 4,001 x 4,001 x 4,001 cells (59.6 GiB, a traceback; h236), then
sort each pair's padded rows (h236: 2.5 s of a 256-GPU all-to-all on a 4,000-GPU hub). The
rows are now sparse (route_types.SetRows) and the shorter row's numbers looked up in the
longer's (h246). Costs are unchanged to the bit."""

import tracemalloc
from itertools import pairwise

import networkx as nx
import numpy as np
import pytest

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


def _hub_all_to_all_time(g: nx.Graph, k: int, nbytes: float = 2 ** 20) -> float:
    """The ideal calibration's time of a direct all-to-all of gpu0..gpu{k-1} (k even) on
    :func:`_hub` ``g``, by hand: one step, so one latency payment, and the bandwidth term
    of the most loaded link.

    Bandwidth: an odd GPU (server 1) sends its share to gpu0 over its NVSwitch (gpu0 is on
    it), and over its leaf0 cable the shares of the other k - 2: its own server's GPUs (no
    tier-0 switch in common, same server: no PXN) and server 0's but gpu0 (PXN's proxy, its
    server's GPU at the peer's position, is itself or a GPU it shares no switch with, so
    its own NIC): ``(k - 2) / k x nbytes`` over 50 GB/s at efficiency and factor 1.
    Latency: the ideal protocol's base latency and scale-out step alpha (both 0) plus the
    longest route, a PXN relay such as gpu2 -> nvs2 -> gpu0 -> leaf0 -> gpu1 (gpu2 hands
    gpu1's share to gpu0, server 0's GPU at gpu1's position, which shares nvs2 with it):
    4 cables and 2 switch traversals of 1e-7 s each, 0.6 us."""
    cal = Calibration.ideal()
    p = cal.protocols[0]
    rate = g.edges["gpu1", "leaf0"]["bandwidth"] * cal.scaleout_efficiency \
        * p.bandwidth_factor
    bandwidth = (k - 2) / k * nbytes / rate
    hops = ["gpu2", "nvs2", "gpu0", "leaf0", "gpu1"]
    route = sum(g.edges[u, v]["latency"] for u, v in pairwise(hops)) \
        + sum(g.nodes[s]["latency"] for s in hops[1:-1] if g.nodes[s]["kind"] == "switch")
    assert route == pytest.approx(6e-7, rel=1e-12)
    return p.base_latency + p.step_latency_scaleout + route + bandwidth


def test_rows_meet_as_sets_meet(monkeypatch):
    """600 random pairs of rows of 0-40 distinct numbers below 50 (a third empty or of one
    number, some rows paired with themselves): a number in common exactly where Python's
    sets intersect, in one chunk and in chunks of 7 numbers (rows split between chunks)."""
    rng = np.random.default_rng(246)
    rows = [rng.choice(50, size=int(rng.choice([0, 1, rng.integers(2, 41)])), replace=False)
            for _ in range(60)]
    table = rt.SetRows(50)
    for r in rows:
        table.add(r.tolist())
    ia, ib = rng.integers(0, 60, 600), rng.integers(0, 60, 600)
    ib[:20] = ia[:20]
    want = [bool(set(rows[a]) & set(rows[b])) for a, b in zip(ia, ib, strict=True)]
    assert 30 < sum(want) < 570
    assert rt.rows_meet(table, ia, ib).tolist() == want
    monkeypatch.setattr(rt, "MEET_CHUNK", 7)
    assert rt.rows_meet(table, ia, ib).tolist() == want


def test_set_rows_added_after_a_read_stay_sorted():
    """Rows added after the arrays were read extend them: keys row * base + number, sorted
    within each row, in row order."""
    table = rt.SetRows(100)
    table.add([30, 4])
    assert [a.tolist() for a in table.arrays] == [[0, 2], [4, 30]]
    table.add([])
    table.add([99, 0, 50])
    ptr, keys = table.arrays
    assert ptr.tolist() == [0, 2, 2, 5] and keys.tolist() == [4, 30, 200, 250, 299]
    assert rt.rows_meet(table, np.array([0, 2, 1]), np.array([2, 0, 1])).tolist() == \
        [False, False, False]


def test_a_gpu_on_600_nvswitches_costs_in_little_memory():
    """Direct all-to-all of gpu0-gpu7 and of gpu0-gpu63, 1 MiB, on a 600-GPU hub: the 64-GPU
    one's traced peak was 37.0 MB (the padded rows sorted pair by pair, 600-wide; 50.1 MB
    compared by broadcasting), now under 15 MB; both times are the ones before to the bit.
    With 64 GPUs each of gpu1-gpu63 sends 62 of its 64 shares over its 50 GB/s leaf0 cable
    (to gpu0 through its NVSwitch), 1,015,808 B / 50 GB/s = 20.32 us, plus the latency."""
    g = _hub(600)
    model = FabricCostModel(g, calibration=Calibration.ideal())
    tracemalloc.start()
    try:
        t = model.cost("all-to-all", 2 ** 20, [f"gpu{i}" for i in range(64)], "direct").time
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 15e6
    # 2.0916160000000002e-05 s and 1.632864e-05 s when written (h363: were pins of both)
    assert t == pytest.approx(_hub_all_to_all_time(g, 64), rel=1e-12)
    assert t == pytest.approx(62 / 64 * 2 ** 20 / 50e9 + 6e-7, rel=1e-12)
    model = FabricCostModel(_hub(600), calibration=Calibration.ideal())
    assert model.cost("all-to-all", 2 ** 20, [f"gpu{i}" for i in range(8)],
                      "direct").time == pytest.approx(_hub_all_to_all_time(g, 8), rel=1e-12)


def test_a_router_past_its_port_cells_is_refused_in_one_line(monkeypatch):
    """The 600-GPU hub's port tables hold one cell a GPU's switch port: 600 leaf0 cables,
    600 of each GPU's NVSwitch, and gpu0's 599 to the others' NVSwitches, 1,799 (they were
    600 GPUs x 601 ports of gpu0, padded: 360,600). Under NETMODEL_MAX_PORT_CELLS=1798 the
    router is refused naming the count, the GPU and the setting; at 1799 it is built."""
    from compute.errors import UserError
    from netmodel.collectives.routing import MAX_PORT_CELLS, Router

    assert MAX_PORT_CELLS == 100_000_000
    g = _hub(600)
    monkeypatch.setenv("NETMODEL_MAX_PORT_CELLS", "1798")
    with pytest.raises(UserError, match=(
            r"^routing 600 GPUs, 'gpu0' wired to 601 switches \(the most\): about 1,799 "
            r"cells of the per-GPU port tables \(one a GPU's switch port, about 24 bytes "
            r"each\), over the limit of 1,798; wire the GPUs to fewer switches, or raise "
            r"NETMODEL_MAX_PORT_CELLS$")):
        Router(g)
    monkeypatch.setenv("NETMODEL_MAX_PORT_CELLS", "1799")
    Router(g)
