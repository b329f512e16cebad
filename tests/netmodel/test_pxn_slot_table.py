"""PXN's relay table (route_pxn._slot_table) grows with the GPUs, not with servers x the
largest device index, and its rows of tier-0 switches (route_pxn._tier0_rows) with the
GPUs' ports, not with GPUs x the most ports of one GPU.

NCCL's PXN sends a transfer to a peer in another server through the sender's server GPU
at the peer's device index (route_pxn.PxnRoutes.pxn_proxies, tests/netmodel/test_pxn.py).
The table of (server, device index) -> GPU was a dense array of servers x (largest index +
1) int64 cells: 1,001 one-GPU servers with one GPU labelled device 1,999,999 (the schema's
bound) asked 14.9 GiB and crashed, one server of 20,000 unlabelled GPUs beside 20,000
one-GPU servers 3.2 GB (helper 233's hostile-input pass). Now it is dense only where that is
at most 16 cells a GPU, else sorted keys: at most 128 bytes a GPU either way. Relays are
the same (hand case from test_pxn: gpu1 -> gpu8 through gpu0, the NIC on gpu8's rail).
"""

import networkx as nx
import numpy as np
import pytest

import netmodel.collectives.route_pxn as rp
from netmodel.collectives.algorithms import generate
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_pxn import _slot_lookup, _slot_table
from netmodel.collectives.routing import Router
from topologies.registry import build

N = 2 ** 26
NIC = 50e9
#: bytes a GPU the relay table may take: 16 cells of 8 bytes (dense), 16 bytes (sparse)
PER_GPU = 128


def _table_bytes(router: Router) -> int:
    table = router._pxn_index()[2]
    parts = (table,) if isinstance(table, np.ndarray) else table[1:]
    return sum(x.nbytes for x in parts)


def _spread_devices(g: nx.Graph, step: int) -> nx.Graph:
    """``g`` with each server's GPUs labelled devices 0, step, 2 step, ... in order."""
    g = nx.Graph(g)
    seen: dict = {}
    for _x, d in g.nodes(data=True):
        if d.get("kind") == "gpu":
            k = seen.get(d["server"], 0)
            d["device"] = k * step
            seen[d["server"]] = k + 1
    return g


def test_high_device_labels_relay_as_positions_in_a_small_table():
    """2 x 8 B200 rail-optimized, each server's GPUs labelled devices 0, 250,000, ...,
    1,750,000 (under the schema's 2,000,000): the dense table was 2 x 1,750,001 cells (28
    MB) for 16 GPUs; now 16 keys. gpu1 -> gpu8 still goes gpu1 -> nvs0 -> gpu0 -> leaf0 ->
    gpu8 (test_pxn's hand case: N / 50 GB/s + 700 ns), the group gpu1, gpu8 alone through
    gpu1's own NIC and the spines (N / 50 GB/s + 1690 ns)."""
    g = _spread_devices(build("rail-optimized:domains=2,gpu=B200-HGX"), 250_000)
    router = Router(g)
    assert router._pxn_index() is not None
    assert _table_bytes(router) <= PER_GPU * 16
    group = ("gpu0", "gpu1", "gpu8", "gpu9")
    (step,) = generate("direct", "send-recv", group, g)
    src, dst, _ = router._node_ids(step.transfers)
    via = router.pxn_proxies(src, dst)
    names = [None if v < 0 else router._nodes[v] for v in via.tolist()]
    pairs = dict(zip(((router._nodes[s], router._nodes[d])
                      for s, d in zip(src.tolist(), dst.tolist(), strict=True)),
                     names, strict=True))
    assert pairs[("gpu1", "gpu8")] == "gpu0" and pairs[("gpu9", "gpu0")] == "gpu8"
    model = FabricCostModel(g, calibration=Calibration.ideal(), validated=True)
    assert model.cost("send-recv", N, group).time == pytest.approx(N / NIC + 700e-9,
                                                                   rel=1e-12)
    assert model.cost("send-recv", N, ["gpu1", "gpu8"]).time == \
        pytest.approx(N / NIC + 1690e-9, rel=1e-12)


def _one_big_server(big: int) -> nx.Graph:
    """``big`` GPUs of server 0 and ``big`` one-GPU servers, all on NVSwitch nvs0 (tier 0)
    and leaf0 (tier 1), no device labels (helper 233's repro, smaller)."""
    g = nx.Graph(name="pxn", spec="", gpus=2 * big)
    g.add_node("nvs0", kind="switch", tier=0, radix=2 * big, latency=1e-7,
               in_network_reduction=False)
    g.add_node("leaf0", kind="switch", tier=1, radix=2 * big, latency=1e-7,
               in_network_reduction=False)
    for i in range(2 * big):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM", server=0 if i < big else i)
        g.add_edge(f"gpu{i}", "nvs0", bandwidth=450e9, latency=1e-7, medium="copper",
                   lanes=18)
        g.add_edge(f"gpu{i}", "leaf0", bandwidth=50e9, latency=1e-7,
                   medium="pluggable-optics", lanes=4)
    return g


def test_one_big_server_among_many_small_ones_keeps_a_small_table():
    """200 GPUs in server 0 and 200 one-GPU servers: the dense table was 201 x 200 cells
    (100 a GPU, 321,600 bytes); now at most 128 bytes a GPU (51,200). No relay: every pair
    shares nvs0, one NVLink domain (NCCL's P2P, no NIC)."""
    router = Router(_one_big_server(200))
    assert router._pxn_index() is not None
    assert _table_bytes(router) <= PER_GPU * 400
    src = np.array([router._nid_checked("gpu0"), router._nid_checked("gpu250")])
    assert router.pxn_proxies(src, src[::-1]) is None


def test_slot_table_dense_and_sparse_read_alike(monkeypatch):
    """400 random (server, device) cells of 50 x 300, each once: the sorted-keys table (37.5
    cells a GPU, over 16) and the dense one (the limit raised) give each cell's GPU, and -1
    for every cell not given."""
    rng = np.random.default_rng(236)
    servers, width = 50, 300
    cells = rng.choice(servers * width, size=400, replace=False)
    srv, dev = cells // width, cells % width
    gpu = rng.permutation(400)
    want = np.full(servers * width, -1)
    want[cells] = gpu
    s_all, d_all = np.divmod(np.arange(servers * width), width)
    sparse = _slot_table(srv, dev, gpu, servers)
    assert isinstance(sparse, tuple)
    monkeypatch.setattr(rp, "_SLOT_CELLS_PER_GPU", 40)
    dense = _slot_table(srv, dev, gpu, servers)
    assert isinstance(dense, np.ndarray)
    for table in (sparse, dense):
        assert np.array_equal(_slot_lookup(table, s_all, d_all), want)


def _hub(n: int) -> nx.Graph:
    """``n`` GPUs, gpu i in server i % 2 on its own NVSwitch nvs{i} (tier 0), gpu0 also on
    every other NVSwitch, all on leaf0 (tier 1)."""
    g = nx.Graph(name="pxn-hub", spec="", gpus=n)
    g.add_node("leaf0", kind="switch", tier=1, radix=2 * n, latency=1e-7,
               in_network_reduction=False)
    for j in range(n):
        g.add_node(f"nvs{j}", kind="switch", tier=0, radix=2, latency=1e-7,
                   in_network_reduction=False)
    for i in range(n):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM", server=i % 2)
        g.add_edge(f"gpu{i}", "leaf0", bandwidth=50e9, latency=1e-7,
                   medium="pluggable-optics", lanes=4)
        g.add_edge(f"gpu{i}", f"nvs{i}", bandwidth=450e9, latency=1e-7, medium="copper",
                   lanes=18)
    for j in range(1, n):
        g.add_edge("gpu0", f"nvs{j}", bandwidth=450e9, latency=1e-7, medium="copper",
                   lanes=18)
    return g


def test_a_gpu_on_many_nvswitches_keeps_small_rows_and_relays_by_hand():
    """200 GPUs, gpu0 on all 200 NVSwitches: each GPU's tier-0 switches were a dense row as
    wide as gpu0's (200 x 200 x 8 = 320,000 bytes; 4,000 such GPUs and a 64-GPU all-to-all
    compared 2,048 x 4,000 x 4,000 cells: 30.5 GiB, a traceback); now sorted keys, at most
    64 bytes per GPU and tier-0 port (200 + 399 ports: 38,336). By hand, an all-to-all of
    gpu0-gpu7 (servers: even 0, odd 1): gpu0 shares an NVSwitch with every GPU (NVLink, no
    NIC); a sender in server 0 to gpu1 (server 1's first) relays through server 0's first,
    gpu0, which shares its NVSwitch and not gpu1's: gpu2, gpu4, gpu6 -> gpu1 via gpu0.
    Any other lender (gpu4 -> gpu3: server 0's second, gpu2; gpu5 -> gpu2: server 1's
    second, gpu3) shares no NVSwitch with the sender, and a sender reaches gpu0 over
    NVLink: no relay."""
    router = Router(_hub(200))
    t0 = router._pxn_index()[4]
    parts = (t0,) if isinstance(t0, np.ndarray) else [x for x in t0 if isinstance(x, np.ndarray)]
    assert sum(x.nbytes for x in parts) <= 64 * (200 + 399)
    nid = np.array([router._nid_checked(f"gpu{i}") for i in range(8)])
    src, dst = np.repeat(nid, 8), np.tile(nid, 8)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    via = router.pxn_proxies(src, dst)
    name = router._nodes
    assert [(name[s], name[d], name[v]) for s, d, v in
            zip(src.tolist(), dst.tolist(), via.tolist(), strict=True) if v >= 0] == \
        [("gpu2", "gpu1", "gpu0"), ("gpu4", "gpu1", "gpu0"), ("gpu6", "gpu1", "gpu0")]
