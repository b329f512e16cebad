"""Simple send-recv on 8 B200 follows NCCL's channel count by a peer's bytes (issue 11):
the rule and its constants checked against Vultr's sendrecv_perf curve, and the model's
send-recv held to it (netmodel.collectives.pipeline_fill.p2p_simple_channels: a Simple line
per channel count, each at its own sizes).

The rule, read in NVIDIA/nccl src/enqueue.cc, addP2pToPlan (the same at commit 01e6dd91
and at ebd1e929, makefiles/version.mk 2.29.2; 2.29 only moves the LL pick after it), said
here in words: with the step ``comm->p2pChunkSize`` (NCCL_P2P_NVL_CHUNKSIZE, 512 KiB, inside
one NVLink domain), a part is at least an eighth of a step and at most 32 steps on one node
(half a step to one step across nodes); a peer's bytes start on as many channels as parts
of the least size fill, at most nChannelsMin, and the channels double, up to nChannelsMax,
while a part would be larger than the most.

scheduleP2pTasksToPlan: ``nChannelsMax = comm->p2pnChannelsPerPeer`` (32 on an NVSwitch
node), ``nChannelsMin`` that halved while it times the ranks exceeds ``p2pnChannels`` (32):
4 on 8 GPUs. So one node: 64 KiB to 16 MiB a part; 4 channels up to 64 MiB a peer, 8 to
128 MiB, 16 to 256 MiB, 32 above. Each channel at NCCL's tuner's per-channel rate (busBw =
nChannels x bwIntra, so the ring's Simple bus rate over its ring channels: 721.8 / 32 =
22.56 GB/s on Blackwell's 8 B200) gives the measured curve within 5-18% from 1 MiB to
16 GiB, where every peer's bytes at the links' rate were 2-7.6x over below 512 MiB.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.pipeline_fill import p2p_sending_channels, p2p_simple_channels
from tests.netmodel.test_p2p_protocol_by_size import KIB, MIB

PUBLISHED = Path(__file__).parent / "data" / "nccl_ops_published.csv"


def _nccl_channels(nbytes: int, c_min: int, c_max: int, step: int, nodes: int = 1) -> int:
    """addP2pToPlan's channel count for one peer's ``nbytes`` (the lines quoted above)."""
    lo, hi = (step // 2, step) if nodes > 1 else (step // 8, step * 32)
    c = min(c_min, -(-nbytes // lo))
    part = max(lo, -(-nbytes // c))
    while part > hi and c <= c_max // 2:
        c *= 2
        part = -(-nbytes // c)
    return c


def _measured() -> dict[int, float]:
    """Vultr's 8xB200 sendrecv_perf busbw (= algbw, GB/s) by size."""
    with open(PUBLISHED) as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {int(r["bytes"]): float(r["busbw_GBps"]) for r in rows
                if r["case"] == "b200-8-sweep" and r["op"] == "send-recv"}


@pytest.fixture(scope="module")
def rule(b200_nccl):
    cal = b200_nccl.calibration
    c_min = int(p2p_sending_channels(8, cal, 1))       # a peer's nChannelsMin on 8 GPUs
    return c_min, int(cal.p2p_channels_per_peer), int(cal.p2p_chunk)


def test_rule_constants_and_counts_by_hand(rule):
    assert rule == (4, 32, 512 * KIB)
    got = [_nccl_channels(n, *rule) for n in
           (100 * KIB, MIB, 64 * MIB, 64 * MIB + 1, 128 * MIB, 256 * MIB, 512 * MIB, 1024 * MIB)]
    # 100 KiB: divUp(100, 64) = 2 parts; 64 MiB: 4 parts of 16 MiB (not over); one byte more:
    # 8; 1 GiB: 32 parts of 32 MiB (no doubling past nChannelsMax)
    assert got == [2, 4, 4, 8, 8, 16, 32, 32]
    # across nodes: parts of 256 KiB to 512 KiB: 4 MiB on 4 channels doubles to 8
    assert _nccl_channels(4 * MIB, *rule, nodes=2) == 8


def test_model_ranges_are_the_rules_counts(rule, b200_nccl):
    # the model's ranges (share = channels / 32 ring channels) give the transcribed rule's
    # count at each range's ends and one byte past them, for 2, 4 and 8 GPUs (a peer's
    # nChannelsMin 16, 8, 4)
    cal = b200_nccl.calibration
    assert [int(p2p_sending_channels(p, cal, 1)) for p in (2, 4, 8)] == [16, 8, 4]
    for p in (2, 4, 8):
        c_min = int(p2p_sending_channels(p, cal, 1))
        rows = p2p_simple_channels(p, cal)
        assert rows[-1][2] == float("inf") and rows[0][1] == 0.0
        for share, lo, hi in rows:
            ends = [int(lo) + 1] + ([int(hi)] if hi < float("inf") else [2**34])
            for n in ends:
                assert share * 32 == _nccl_channels(n, c_min, *rule[1:]), (p, n)
    assert [(s * 32, lo / MIB, hi / MIB) for s, lo, hi in p2p_simple_channels(8, cal)][3:] \
        == [(4, 0.1875, 64), (8, 64, 128), (16, 128, 256), (32, 256, float("inf"))]


def test_measured_busbw_per_rule_channel_is_the_tuners_channel_rate(rule, b200_nccl):
    # busbw over the rule's channels, 64 MiB to 16 GiB: 19.5-21.2 GB/s, within 14% below
    # the ring's Simple bus rate a ring channel (721.8 / 32), where busbw itself spans 7.8x
    m = _measured()
    cal = b200_nccl.calibration
    g = 2**30
    t8, t16 = (b200_nccl.cost("send-recv", k * g, 8).time for k in (8, 16))
    slope = 8 * g / (t16 - t8) / 1e9
    assert slope == pytest.approx(721.8, rel=1e-3)        # the model's Simple bus rate
    per_channel = slope / cal.ring_channels
    assert per_channel == pytest.approx(22.56, abs=0.01)
    sizes = [n for n in sorted(m) if n >= 64 * MIB]
    assert len(sizes) == 9
    per = np.array([m[n] / _nccl_channels(n, *rule) for n in sizes])
    assert per.min() == pytest.approx(19.53, abs=0.01) and per.max() == pytest.approx(21.15,
                                                                                      abs=0.01)
    assert np.all((per < per_channel) & (per > 0.86 * per_channel))
    assert max(m[n] for n in sizes) / min(m[n] for n in sizes) > 7.8


def test_model_send_recv_is_the_rule_at_the_channel_rate(rule, b200_nccl):
    # time = Simple's start-up + n / (channels x 22.56 GB/s), by hand: 1 MiB on 4 channels
    # 11.97 us + 11.62 us = 23.59 us (measured 27.92); 64 MiB 755.8 us (793.1); one byte
    # more on 8 channels: 383.9 us; 128 MiB on 8: 755.8 us again (798.2); 512 MiB on 32:
    # 755.8 us (859.0); the busbw within +5..+18% of the measured from 1 MiB to 16 GiB
    m = _measured()
    rate = 721.8e9 / 32
    start = 11.97e-6
    assert (start + MIB / (4 * rate)) * 1e6 == pytest.approx(23.59, abs=0.01)
    assert (start + 64 * MIB / (4 * rate)) * 1e6 == pytest.approx(755.8, abs=0.1)
    assert (start + (64 * MIB + 1) / (8 * rate)) * 1e6 == pytest.approx(383.9, abs=0.1)
    sizes = [n for n in sorted(m) if n >= MIB] + [64 * MIB + 1]
    got = b200_nccl.collective_time("send-recv", np.array(sizes, dtype=float), 8)
    want = [start + n / (_nccl_channels(n, *rule) * rate) for n in sizes]
    np.testing.assert_allclose(got, want, rtol=1e-3)
    assert [b200_nccl.cost("send-recv", n, 8).protocol for n in (MIB, 16 * 2**30)] \
        == ["Simple", "Simple"]
    err = {n: n / t / 1e9 / m[n] - 1 for n, t in zip(sizes, got, strict=True) if n in m}
    assert len(err) == 15 and all(0.04 < e < 0.19 for e in err.values()), err


def test_all_to_all_peer_parts_by_the_same_rule(rule):
    # alltoall_perf's grouped sends go through the same addP2pToPlan, a peer's part n / 8:
    # 4 channels a peer to 512 MiB (28 of the 32 p2p channels carry NVLink traffic), 8 at
    # 1 GiB, 16 at 2 GiB, 32 from 4 GiB
    assert [_nccl_channels(n // 8, *rule) for n in
            (256 * MIB, 512 * MIB, 2**30, 2 * 2**30, 4 * 2**30)] == [4, 4, 8, 16, 32]
    # 28 channels at 22.56 GB/s, busbw 7/8 n / (11.97 us + 7/8 n / 631.6 GB/s), no fill:
    # 611.9 GB/s at 256 MiB, 621.6 at 512 MiB against 535.3 and 559.0 measured (+14%, +11%)
    rate = 28 * 721.8e9 / 32
    got = [7 / 8 * n / (11.97e-6 + 7 / 8 * n / rate) / 1e9 for n in (256 * MIB, 512 * MIB)]
    assert got == pytest.approx([611.88, 621.57], abs=0.01)
    with open(PUBLISHED) as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        m = {int(r["bytes"]): float(r["busbw_GBps"]) for r in rows
             if r["case"] == "b200-8-sweep" and r["op"] == "all-to-all"}
    assert [m[256 * MIB], m[512 * MIB]] == [535.3, 559.03]
