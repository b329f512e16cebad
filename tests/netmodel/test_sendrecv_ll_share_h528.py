"""Send-recv's LL rate inside one NVLink domain is its send warps' share on a peer's channels,
as the all-to-all's is (issue 11).

nccl-tests' sendrecv_perf and alltoall_perf are both grouped ncclSend/ncclRecv, run by one
kernel (src/device/sendrecv.h, RunWorkBatch<ncclFuncSendRecv>): a channel's 640 threads
(NCCL_MAX_NTHREADS) split between a work's send and its receive, 10 warps sending, where an
LL ring channel runs 512 (NCCL_LL_MAX_NTHREADS, 16 warps) and the generation's LL factor is
that ring's rate on all its ring channels. What differs is the sending channels: a peer's
bytes go through NCCL's nChannelsMin channels, p2pnChannelsPerPeer (32 on an NVSwitch node)
halved while it times the ranks exceeds the p2p channels (32) (src/enqueue.cc at 01e6dd91,
scheduleP2pTasksToPlan; addP2pToPlan keeps a peer's LL bytes on them: ``nChannels[dir] =
std::min<int>(nChannelsMin, divUp(bytes[dir], minPartSize))``, doubled only past
``maxPartSize``, 32 LL steps of 64 KiB on one node, above every LL size). An all-to-all of 8
sends to 7 peers, 4 channels each: 28 channels; a send-recv sends to one: 4.

Hand derivations on ``single-switch:n=8,gpu=B200-HGX`` (test_p2p_protocol_by_size.py): LL's
rate 0.391 x 721.8 = 282.2 GB/s on Blackwell's 32 ring channels; send-recv's share 4 x 10 /
(32 x 16) = 0.078125: 22.05 GB/s. Measured (Vultr's 8 B200, nccl_ops_published.csv
b200-8-sweep/send-recv; busbw = algbw for send-recv): 15.93 us at 128 KiB, 35.14 us at 512
KiB, LL both (NCCL's limit 32 x 16 KiB = 512 KiB a peer): 384 KiB in 19.21 us, 20.5 GB/s.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.pipeline_fill import p2p_ll_share, p2p_sending_channels
from tests.netmodel.test_p2p_protocol_by_size import KIB, LL_RATE, MIB, ROUTE
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_ops_published.csv"
#: send-recv's LL rate on 8 B200: 4 channels x 10 send warps of 32 ring channels x 16 LL warps
SR_LL_RATE = LL_RATE * 4 * 10 / (32 * 16)


def _measured_times() -> dict[float, float]:
    """Vultr's 8xB200 sendrecv_perf times (s) by size: size / busbw (busbw = algbw)."""
    with open(PUBLISHED) as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {float(r["bytes"]): float(r["bytes"]) / (float(r["busbw_GBps"]) * 1e9)
                for r in rows if r["case"] == "b200-8-sweep" and r["op"] == "send-recv"}


def test_sending_channels_and_shares_by_hand():
    # a peer's channels: 32 halved while c x p > 32: p = 2: 16, 4: 8, 8: 4, 64: 1
    cal = default_calibration().with_(p2p_threads=640, ll_ring_threads=512, ring_channels=32)
    p = np.array([2, 4, 8, 64])
    assert p2p_sending_channels(p, cal, 1).tolist() == [16.0, 8.0, 4.0, 1.0]
    # the all-to-all's (p - 1) peers x c, at most 32: 16, 24, 28, 32
    assert p2p_sending_channels(p, cal).tolist() == [16.0, 24.0, 28.0, 32.0]
    want = np.array([16, 8, 4, 1]) * 10 / (32 * 16)
    np.testing.assert_allclose(p2p_ll_share(p, cal, 1), want, rtol=1e-12)
    # 2 GPUs: one peer either way, the same share for both ops
    assert p2p_ll_share(2, cal, 1) == p2p_ll_share(2, cal)
    # Hopper's 24 ring channels: 4 x 10 / (24 x 16)
    assert float(p2p_ll_share(8, cal.with_(ring_channels=24), 1)) == pytest.approx(40 / 384)


def test_send_recv_at_512_kib_on_8_b200_by_hand(b200_nccl):
    # LL (512 KiB a peer = 32 x 16 KiB), one step: 6.6 us + 0.6 us + the route + n / 22.05 GB/s
    n = 512 * KIB
    r = b200_nccl.cost("send-recv", n, 8)
    assert (r.algorithm, r.protocol) == ("direct", "LL")
    want = 6.6e-6 + 0.6e-6 + ROUTE + n / SR_LL_RATE
    assert r.time == pytest.approx(want, rel=1e-9)
    assert r.time * 1e6 == pytest.approx(31.15, abs=0.01)   # was 9.23 at LL's ring rate
    assert r.time == pytest.approx(_measured_times()[n], rel=0.15)   # measured 35.14 us


def test_send_recv_ll_slope_is_the_measured_one():
    # the model's LL slope on 8 B200 against the measured one between 128 and 512 KiB
    t = _measured_times()
    measured = (512 - 128) * KIB / (t[512 * KIB] - t[128 * KIB])
    assert measured / 1e9 == pytest.approx(20.47, abs=0.01)
    assert SR_LL_RATE / 1e9 == pytest.approx(22.05, abs=0.01)
    assert SR_LL_RATE / measured - 1 == pytest.approx(0.077, abs=0.002)
    # at NCCL 2.28, as the data file infers of the run (its LL to 512 KiB a peer)
    m = FabricCostModel(build("single-switch:n=8,gpu=B200-HGX"), algorithms="nccl",
                        validated=True,
                        calibration=default_calibration().with_(nccl_release="2.28"))
    sw = m.sweep("send-recv", np.array([128 * KIB, 512 * KIB]), 8)
    assert list(sw.protocol) == ["LL", "LL"]
    assert (512 - 128) * KIB / (sw.time[1] - sw.time[0]) == pytest.approx(SR_LL_RATE, rel=1e-9)


def test_send_recv_ll_share_on_8_h100_by_hand():
    # Hopper: 450 GB/s x 0.824 x 0.380 (LL) x 4 x 10 / (24 x 16): 14.68 GB/s between two
    # LL sizes (the start-up and step latency cancel)
    # at NCCL 2.28, whose LL runs to 512 KiB a peer (2.29 on: 16 KiB)
    m = FabricCostModel(build("single-switch:n=8,gpu=H100-SXM"), algorithms="nccl",
                        validated=True,
                        calibration=default_calibration().with_(nccl_release="2.28"))
    sw = m.sweep("send-recv", np.array([128 * KIB, 512 * KIB]), 8)
    assert list(sw.protocol) == ["LL", "LL"]
    rate = 450e9 * 0.824 * 0.380 * 40 / 384
    assert rate / 1e9 == pytest.approx(14.68, abs=0.01)
    assert (384 * KIB) / (sw.time[1] - sw.time[0]) == pytest.approx(rate, rel=1e-9)


def test_send_recv_across_nodes_keeps_lls_factor():
    # the share is for NVLink steps; a send-recv ring across two servers crosses the network
    # (NCCL's network LL path is its proxy's, not these warps): the same time with the share
    # turned off (no thread counts: share 1), where inside one server it differs. LL across
    # the network needs NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (by default Simple there at every
    # size: test_p2p_net_simple_only.py)
    net_ll = default_calibration().with_(p2p_net_ll_buffers=True)
    for fabric, p, same in (("rail-optimized:domains=2", 16, True),
                            ("single-switch:n=8", 8, False)):
        m = FabricCostModel(build(fabric), algorithms="nccl", validated=True,
                            calibration=net_ll)
        off = FabricCostModel(build(fabric), algorithms="nccl", validated=True,
                              calibration=m.calibration.with_(p2p_threads=0))
        n = 16 * KIB   # LL under every release's rule (2.29 on: up to 16 KiB a peer)
        a, b = m.cost("send-recv", n, p), off.cost("send-recv", n, p)
        assert a.protocol == b.protocol == "LL"
        assert (a.time == b.time) is same, (fabric, a.time, b.time)


def test_simple_send_recv_at_64_mib_on_a_peers_four_channels(b200_nccl):
    # NCCL moves a peer's Simple bytes on nChannelsMin (4) channels up to 4 parts of 16 MiB
    # (src/enqueue.cc addP2pToPlan), each at the ring's Simple bus rate over its 32 ring
    # channels (721.8 / 32 = 22.56 GB/s): 11.97 us + 64 MiB / 90.2 GB/s = 755.8 us,
    # measured 793.1 us (the model had 104.9 us at its links' rate, 656% over in busbw)
    n = 64 * MIB
    r = b200_nccl.cost("send-recv", n, 8)
    assert r.time * 1e6 == pytest.approx(755.76, abs=0.01)
    assert r.time == pytest.approx(_measured_times()[n], rel=0.05)
