"""Simple all-to-all inside one NVLink domain on NCCL's channels, where NCCL's source fixes
them (issue 11; netmodel.collectives.pipeline_fill.p2p_simple_channels with ``peers`` 0).

NCCL runs nccl-tests' alltoall_perf as grouped ncclSend/ncclRecv: one round of its p2p
schedule a peer, the GPU itself one of them. Read in NVIDIA/nccl (said here in words):
scheduleP2pTasksToPlan (src/enqueue.cc) starts every peer on ``nChannelsMin`` channels,
p2pnChannelsPerPeer (32 on an NVSwitch node) halved while it times the ranks exceeds the
p2p channels (32): 4 on 8 GPUs, 8 on 4, 16 on 2, 1 on 64; addP2pToPlan doubles a peer's
channels while a part would pass 32 chunks (16 MiB of 512 KiB chunks), as for the
send-recv (tests/netmodel/test_sendrecv_simple_channels_h539.py). A peer's part ``k`` goes
on channel ``(base + k) mod p2pnChannels``, the round's base bit-reversed (channel.h,
ncclP2pChannelBaseForRound, newer sources) or on ``round + reverse(k)`` (device.h,
ncclP2pChannelForPart, older ones): either way, while ``p x nChannelsMin`` fits in the 32
channels no two peers share one, so each channel runs one peer's work with all its warps,
exactly as the send-recv's do, and ``(p - 1) x nChannelsMin`` of them send to another GPU,
each at the per-channel rate the send-recv model already takes (the ring's Simple bus rate
over its ring channels). Past the first doubling a channel runs several peers' works, its
warps split among them (src/device/sendrecv.h), at a rate the source does not give: there
the model keeps the links' rate, the bound.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.pipeline_fill import p2p_sending_channels, p2p_simple_channels
from tests.netmodel.test_p2p_protocol_by_size import KIB, MIB
from tests.netmodel.test_sendrecv_simple_channels_h539 import _nccl_channels
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_ops_published.csv"
GIB = 1024 * MIB


def _reverse(x: int, bits: int) -> int:
    return int(format(x, f"0{bits}b")[::-1], 2)


def _channel_sets(p: int, c: int, total: int = 32, newer: bool = True) -> list[set[int]]:
    """The channels each round's (peer's) ``c`` parts take on one node: NCCL's two mappings
    quoted above."""
    bits = total.bit_length() - 1
    if newer:
        return [{(_reverse(r, bits) + k) % total for k in range(c)} for r in range(p)]
    return [{(r + _reverse(k, bits)) % total for k in range(c)} for r in range(p)]


@pytest.mark.parametrize("newer", [True, False])
@pytest.mark.parametrize("p", [2, 3, 4, 5, 6, 7, 8, 12, 16, 32])
def test_peers_share_no_channel_at_nchannelsmin(b200_nccl, p, newer):
    """At ``nChannelsMin`` the peers' channel sets are disjoint (each channel one work);
    doubled once, some channel carries two peers."""
    cal = b200_nccl.calibration
    c = int(p2p_sending_channels(p, cal, 1))
    sets = _channel_sets(p, c, newer=newer)
    assert sum(len(s) for s in sets) == len(set().union(*sets)) == p * c <= 32
    doubled = _channel_sets(p, 2 * c, newer=newer)
    assert len(set().union(*doubled)) < 2 * p * c


def _shares(p: int, cal) -> list[tuple[float, float, float]]:
    """By hand: the all-to-all's ``(share, lo, hi)`` in the collective's size: a peer on
    ``nChannelsMin`` channels up to the size where addP2pToPlan doubles them (a peer's bytes
    past ``nChannelsMin`` parts of 32 chunks: ``_nccl_channels``), the links' rate above."""
    c_min = int(p2p_sending_channels(p, cal, 1))
    step = int(cal.p2p_chunk)
    last = c_min * step * 32                     # a peer's bytes on nChannelsMin channels
    assert _nccl_channels(last, c_min, 32, step) == c_min
    assert _nccl_channels(last + 1, c_min, 32, step) == 2 * c_min
    return [(min(1.0, (p - 1) * c_min / cal.ring_channels), 0.0, last * p),
            (1.0, last * p, math.inf)]


def test_eight_b200_shares_by_hand(b200_nccl):
    """8 B200 (32 ring channels, 4 channels a peer): 28 channels (0.875 of the links' rate)
    up to 512 MiB (64 MiB a peer), the links' rate above."""
    cal = b200_nccl.calibration
    got = p2p_simple_channels(8, cal, 0)
    assert got == _shares(8, cal)
    assert [(s * 32, lo / MIB, hi / MIB) for s, lo, hi in got] == [
        (28.0, 0.0, 512.0), (32.0, 512.0, math.inf)]


def test_other_group_sizes(b200_nccl):
    """4 GPUs: 8 channels a peer, 24 sending (0.75) up to 4 x 8 x 16 MiB = 512 MiB; 2 GPUs:
    16, one peer on half the channels up to 512 MiB; 64 GPUs: 64 x 1 > 32 channels, shared
    from the first byte: no lines (the links' rate)."""
    cal = b200_nccl.calibration
    assert p2p_simple_channels(4, cal, 0) == _shares(4, cal) \
        == [(0.75, 0.0, 512 * MIB), (1.0, 512 * MIB, math.inf)]
    assert p2p_simple_channels(2, cal, 0) == _shares(2, cal) \
        == [(0.5, 0.0, 512 * MIB), (1.0, 512 * MIB, math.inf)]
    assert p2p_simple_channels(64, cal, 0) == []


def test_hopper_keeps_its_links_rate():
    """H100 (24 ring channels): 28 sending channels exceed them, so the all-to-all keeps its
    links' rate at every size: no lines by channel."""
    m = FabricCostModel(build("single-switch:n=8,gpu=H100-SXM"), algorithms="nccl",
                        validated=True)
    assert p2p_simple_channels(8, m.calibration, 0) == []


def _measured(case: str) -> dict[int, float]:
    with open(PUBLISHED) as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {int(r["bytes"]): float(r["busbw_GBps"]) for r in rows
                if r["case"] == case and r["op"] == "all-to-all"}


def _busbw(m: FabricCostModel, n: float, p: int = 8) -> float:
    return (p - 1) / p * n / float(m.collective_time("all-to-all", n, p)) / 1e9


def test_eight_b200_busbw_by_hand(b200_nccl):
    """The time on 28 channels, by hand: ``a + b (S + n)`` past the fill's slice ``S = 28 x
    512 KiB x 8/7 = 16 MiB``, ``b`` the links' seconds per byte (the line above 512 MiB,
    unchanged) x 32/28, ``a`` the start-up of the links' line less its fill. Against
    Vultr's measurement: +8% at 256 and 512 MiB (+23% at the links' rate)."""
    m = b200_nccl
    comp = m.compiled("all-to-all", "direct", m.group(8))
    simple = m.calibration.protocol("Simple")
    lines = comp.lines(simple, m.calibration)
    a1, b1 = lines[-1]                       # the links' rate: 721.8 GB/s of busbw
    assert 7 / 8 / b1 / 1e9 == pytest.approx(721.8, abs=0.1)
    slice_ = 28 * 512 * KIB * 8 / 7
    a0 = a1 - b1 * slice_                    # start-up, the fill taken out
    b = b1 * 32 / 28
    measured = _measured("b200-8-sweep")
    for n, figure in ((256 * MIB, 576.9), (512 * MIB, 603.0)):
        hand = 7 / 8 * n / (a0 + b * (slice_ + n)) / 1e9
        assert _busbw(m, n) == pytest.approx(hand, rel=1e-9)
        assert hand == pytest.approx(figure, abs=0.1)
        assert 0.0 < hand / measured[n] - 1 < 0.10
    # 8 MiB, below the slice: a + 2 b n (each channel's first chunk copied twice in turn)
    n = 8 * MIB
    assert _busbw(m, n) == pytest.approx(7 / 8 * n / (a0 + 2 * b * n) / 1e9, rel=1e-9)
    assert _busbw(m, n) == pytest.approx(208.4, abs=0.1)   # measured 212.0
    # past 512 MiB a channel carries two peers: the links' rate, and the time drops there
    assert _busbw(m, GIB) == pytest.approx(7 / 8 * GIB / (a1 + b1 * GIB) / 1e9, rel=1e-9)
    assert m.collective_time("all-to-all", 512 * MIB + 8, 8) \
        < m.collective_time("all-to-all", 512 * MIB, 8)


def test_gb300_trays_against_oci():
    """4 GPUs of one GB300 tray (24 sending channels, 0.75) and 8 of two trays over MNNVL
    (28, 0.875): within 2% and 3% of OCI's 256 and 512 MiB (+33/34% and +17% before)."""
    m = FabricCostModel(build("nvl72:gpu=GB300-NVL72"), algorithms="nccl", validated=True)
    for p, case, bound in ((4, "gb300-oci-a2a-1tray", 0.02), (8, "gb300-oci-a2a-2trays", 0.03)):
        group = m.group(p)
        measured = _measured(case)
        for n in (256 * MIB, 512 * MIB):
            t = float(m.cost("all-to-all", n, group).time)
            assert abs((p - 1) / p * n / t / 1e9 / measured[n] - 1) < bound


def test_all_groups_at_once_cost_one_alone():
    """Two 8-GPU all-to-alls on one 16-B200 switch share no link: each costs what one costs
    alone, on the same channel lines (concurrent_options.option_ranges: each share's lines
    at its own sizes)."""
    m = FabricCostModel(build("single-switch:n=16,gpu=B200-HGX"), algorithms="nccl",
                        validated=True)
    sizes = [8 * MIB, 256 * MIB, 512 * MIB, GIB]
    res = concurrent_cost(m, 8, "all-to-all", sizes, algorithm="direct")
    alone = [float(m.cost("all-to-all", n, res.groups[0], algorithm="direct").time)
             for n in sizes]
    assert res.time.max(axis=0).tolist() == pytest.approx(alone, rel=1e-9)
    assert res.time.min(axis=0).tolist() == pytest.approx(alone, rel=1e-9)
