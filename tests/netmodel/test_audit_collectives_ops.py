"""Ops other than all-reduce against NCCL's own algorithm choices and published figures
(``tests/netmodel/data/nccl_ops_published.csv``): which algorithms ``algorithms="nccl"``
offers per op (NVIDIA/nccl src/graph/tuning.cc), the ring broadcast and reduce across
scale-up domains on every rail, and the large-message busbw of all-gather, reduce-scatter,
all-to-all, broadcast and reduce on 8 H100 and of all-to-all across DGX H100 nodes. The
file's measured sweeps (8 and 2x8 B200) are read by scripts/accuracy_collectives.py.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from netmodel.collectives.algorithms import generate
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.names import NCCL_OPS
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_ops_published.csv"
NVLINK4 = 450e9 * 0.824   # NCCL's 20.6 of 25 GB/s per NVLink4 link, 18 links
NIC_400G = 50e9 * 0.94    # 47 GB/s per 400G NIC


def _rows():
    with open(PUBLISHED) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def test_nccl_offers_per_op_only_what_nccl_has():
    # tuning.cc: Broadcast and Reduce ring only; ReduceScatter/AllGather ring, NVLS (and
    # CollNetDirect); all-to-all and send-recv are grouped send/recv (direct)
    model = FabricCostModel(build("single-switch:n=8"), algorithms="nccl", validated=True)
    assert model.algorithm_names("broadcast") == ["ring"]
    assert model.algorithm_names("reduce") == ["ring"]
    assert model.algorithm_names("all-gather") == ["ring", "in-network"]
    assert model.algorithm_names("reduce-scatter") == ["ring", "in-network"]
    assert model.algorithm_names("all-to-all") == ["direct"]
    assert model.algorithm_names("send-recv") == ["direct"]
    assert model.algorithm_names("all-reduce") == list(NCCL_OPS["all-reduce"])
    # before, all-to-all and send-recv under "nccl" raised: no algorithm implemented them
    r = model.cost("all-to-all", 2.0 ** 33, 8)
    assert r.algorithm == "direct"
    assert r.busbw == pytest.approx(NVLINK4, rel=0.01)


@pytest.mark.parametrize("domains", [2, 4])
@pytest.mark.parametrize("op", ["broadcast", "reduce"])
def test_ring_broadcast_across_domains_runs_on_every_rail(domains, op):
    # NCCL splits a broadcast over all its ring channels, one per NIC (PXN), so across DGX
    # H100 nodes each GPU link carries the message once and each NIC 1/8 of it: busbw =
    # 1 / max(1 / 370.8 GB/s, (1/8) / 47 GB/s) = 370.8 GB/s at 64 GiB (fill and latency
    # < 1%). The old single chain sent it all through one NIC: 46 GB/s.
    model = FabricCostModel(build(f"rail-optimized:domains={domains}"), algorithm="ring",
                            validated=True)
    r = model.cost(op, 2.0 ** 36, 8 * domains)
    want = 1 / max(1 / NVLINK4, (1 / 8) / NIC_400G)
    assert r.busbw == pytest.approx(want, rel=0.01)
    # tuning.cc gives every ring collective the same busBw (nChannels x speedInter):
    # the ring all-gather's, on the same nodes
    ag = model.cost("all-gather", 2.0 ** 36, 8 * domains)
    assert r.busbw == pytest.approx(ag.busbw, rel=0.02)


def test_ring_broadcast_pays_network_latency_only_between_domains():
    # the chains' p - 1 hops: D - 1 between domains at the network alpha, the rest at the
    # scale-up one (as the ring all-gather counts them), not p - 1 network alphas
    model = FabricCostModel(build("rail-optimized:domains=4"), algorithm="ring",
                            validated=True)
    (step,) = generate("ring", "broadcast", model.group(32), model.graph)
    assert step.latencies == (31 - 3, 3)
    assert step.stages == 31


@pytest.mark.parametrize("row", [r for r in _rows() if r["kind"] != "measured"],
                         ids=lambda r: f"{r['case']}-{r['op']}")
def test_large_message_busbw_matches_published(row):
    # a maintainer's figure or closed form, to 2%; the measured sweeps are compared size by
    # size, against issue 11's targets, by scripts/accuracy_collectives.py
    model = FabricCostModel(build(row["fabric"]), algorithms="nccl", validated=True)
    r = model.cost(row["op"], float(row["bytes"]), int(row["gpus"]))
    assert r.busbw / 1e9 == pytest.approx(float(row["busbw_GBps"]), rel=0.02), row["source"]


def test_measured_sweeps_are_whole_curves():
    # each measured (case, op) is one row per size, powers of two in increasing order with no
    # gap, its first row naming its source (a 'same' chain ends in a named one); the B200
    # sweeps run from 1 KiB to 16 GiB
    sweeps: dict = {}
    first: dict = {}
    for r in _rows():
        if r["kind"] == "measured":
            sweeps.setdefault((r["case"], r["op"]), []).append(int(r["bytes"]))
            first.setdefault((r["case"], r["op"]), r["source"])
    assert set(sweeps) >= {("b200-8-sweep", "all-gather"), ("b200-8-sweep", "all-to-all"),
                           ("b200-2x8-sweep", "reduce-scatter"),
                           ("h100-8-rs-ring", "reduce-scatter"),
                           ("gb300-oci-a2a-1rack", "all-to-all")}
    for (case, _), sizes in sweeps.items():
        lo = sizes[0].bit_length() - 1
        assert sizes == [2 ** k for k in range(lo, lo + len(sizes))]
        if case.startswith("b200-"):
            assert (sizes[0], sizes[-1]) == (2 ** 10, 2 ** 34)
    assert all(s != "same" for s in first.values())


@pytest.mark.parametrize("domains", [2, 4])
@pytest.mark.parametrize("op", ["all-to-all", "send-recv"])
def test_send_recv_runs_ll_or_simple_never_ll128(domains, op):
    # NVIDIA/nccl src/enqueue.cc, addP2pToPlan: every ncclSend/ncclRecv (all-to-all and
    # send-recv) runs LL or SIMPLE, never LL128. The model offered LL128 to them and chose
    # it across DGX H100 nodes from 0.5 to 4 MiB. Across nodes NCCL gives a send/recv
    # network connection no LL buffer by default (NCCL_ALLOC_P2P_NET_LL_BUFFERS=0,
    # test_p2p_net_simple_only.py), so Simple at every size; with them, LL or Simple.
    from netmodel.collectives.calibration_files import default_calibration

    sizes = [2.0 ** k for k in range(10, 31)]
    model = FabricCostModel(build(f"rail-optimized:domains={domains}"), algorithms="nccl",
                            validated=True)
    assert set(model.sweep(op, sizes, 8 * domains).protocol) == {"Simple"}
    net_ll = FabricCostModel(build(f"rail-optimized:domains={domains}"), algorithms="nccl",
                             validated=True, calibration=default_calibration().with_(
                                 p2p_net_ll_buffers=True))
    assert set(net_ll.sweep(op, sizes, 8 * domains).protocol) == {"LL", "Simple"}


def test_send_recv_across_nodes_at_2_mib_by_hand():
    # 16 H100 of 2 DGX, each rank to the next, 2 MiB: the bottleneck is a 400G NIC at 0.94
    # (47 GB/s). Simple: 8.4 us base + 14 us scale-out step + route + 2 MiB / 47 GB/s
    # (44.62 us) = 67.72 us. LL128 would be 14 + 4 + route + 2 MiB / (0.92 x 47 GB/s)
    # (48.50 us) = 67.20 us, what the old model chose; NCCL cannot run it. The route is the
    # slowest transfer's, gpu7 -> gpu8 (rail 7 to rail 0) as NCCL's PXN sends it: over
    # NVLink to gpu0 and out through gpu0's NIC on rail 0's leaf, 10 + 150 + 10 + 100 + 330
    # + 100 = 700 ns (through gpu7's own NIC and the spines 1.69 us, 68.71 us, before PXN).
    model = FabricCostModel(build("rail-optimized:domains=2"), algorithms="nccl",
                            validated=True)
    r = model.cost("send-recv", 2.0 ** 21, 16)
    route = r.steps[0].latency - 14.0e-6
    assert r.protocol == "Simple"
    assert route == pytest.approx(0.70e-6, abs=0.001e-6)
    assert r.time == pytest.approx(8.4e-6 + 14.0e-6 + route + 2.0 ** 21 / NIC_400G, rel=1e-9)
    assert r.time * 1e6 == pytest.approx(67.72, abs=0.01)
