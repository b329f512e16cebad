"""All-gather and reduce-scatter across 2 HGX B200 nodes (Vultr, 8 x 400G NDR a node;
case b200-2x8-sweep of tests/netmodel/data/nccl_ops_published.csv, NCCL release not stated),
and NCCL's send/recv LL rule by release (8 B200 of one node): what the model gets right, by
hand, and the misses left, each a strict xfail naming its cause.

nccl-tests' busbw of all-gather and reduce-scatter is algbw x (n-1)/n, so a size's time on
16 GPUs is ``bytes x 15/16 / busbw``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_ops_published.csv"
TWO_NODES = "rail-optimized:domains=2,gpu=B200-HGX,nic_bandwidth=43.87e9"
ONE_NODE = "single-switch:n=8,gpu=B200-HGX"
KIB, MIB, GIB = 2.0 ** 10, 2.0 ** 20, 2.0 ** 30


def _measured(op: str) -> dict[float, float]:
    """busbw (bytes/s) of b200-2x8-sweep's ``op``, by size."""
    with open(PUBLISHED) as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {float(r["bytes"]): float(r["busbw_GBps"]) * 1e9 for r in rows
                if r["case"] == "b200-2x8-sweep" and r["op"] == op}


def _time(busbw: dict[float, float], n: float) -> float:
    return n * 15 / 16 / busbw[n]


def _two_nodes(**cal) -> FabricCostModel:
    return FabricCostModel(build(TWO_NODES), validated=True, algorithms="nccl",
                           calibration=default_calibration().with_(**cal))


@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter"])
def test_measured_times_step_and_plateau_not_a_line(op):
    # hand-derived from the CSV: time = size x 15/16 / busbw. The times jump where NCCL's
    # protocols switch and stay flat between: 128 -> 256 KiB adds 33-38 us for 128 KiB,
    # 256 KiB -> 1 MiB adds under 3 us for 768 KiB, 1 -> 2 MiB adds 47-51 us; 32 -> 64 MiB
    # doubles the time (busbw flat at 128 GB/s), 64 -> 128 MiB adds 128-131 us for 64 MiB
    # (480-490 GB/s, far above the 8 NICs' 330 GB/s): no cost a + b n gives that shape
    m = _measured(op)
    t = {k: _time(m, k) for k in m}
    assert t[256 * KIB] - t[128 * KIB] == pytest.approx(35.5e-6, abs=2.5e-6)
    assert t[MIB] - t[256 * KIB] < 3e-6
    assert t[2 * MIB] - t[MIB] == pytest.approx(49e-6, abs=2.5e-6)
    assert t[64 * MIB] / t[32 * MIB] == pytest.approx(1.98, abs=0.015)
    assert 64 * MIB * 15 / 16 / (t[128 * MIB] - t[64 * MIB]) > 450e9


def test_ring_asymptote_is_eight_nics_as_built():
    # NCCL's ring across 2 nodes, one channel a NIC rail: each node's 8 NICs carry the ring,
    # at 43.87e9 B/s (the slowest HCA's ib_write_bw over the healthy ones', x 50e9: the CSV's
    # note) x scaleout_efficiency 0.94 = 41.238 GB/s each: busbw 8 x 41.238 = 329.90 GB/s
    # between 8 and 16 GiB (by hand; measured there 307.5-308.0: +7.1-7.3%)
    model = _two_nodes()
    lo, hi = (model.cost("all-gather", n, 16) for n in (8 * GIB, 16 * GIB))
    rate = 8 * GIB * 15 / 16 / (hi.time - lo.time)
    assert rate == pytest.approx(8 * 43.87e9 * 0.94, rel=1e-9)
    assert (lo.algorithm, lo.protocol) == ("ring", "Simple")


@pytest.mark.xfail(strict=True, reason=(
    "measured 128.1 GB/s at 64 MiB, the model's ring/LL128 246.9 (+93%; 491 us against 255): "
    "NCCL's own LL128 estimate there is 44.6 us + n / 324 GB/s algbw (tuning.cc, Intel row; "
    "46 us on AMD hosts), the model's alike, and the run's times are not a line: 32 MiB "
    "costs 247 us at the same busbw, 128 MiB only 131 us more. No NCCL constant or "
    "structure (per-step latency, chunk fill, channels, PAT, NVLS, LL128 off) gives 491 us; "
    "the same report's intra-node sendrecv stalls at 790-860 us from 64 to 512 MiB"))
@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter"])
def test_64_mib_within_target(op):
    m = _measured(op)
    r = _two_nodes().cost(op, 64 * MIB, 16)
    assert r.busbw == pytest.approx(m[64 * MIB], rel=0.25)


@pytest.mark.xfail(strict=True, reason=(
    "measured 202-203 GB/s at 128 MiB, the model's ring/Simple 277.0 (+37%; 622 us against "
    "454): 100-120 us above the measured line through 512 MiB-16 GiB (98 us + n x 15/16 / "
    "308.6 GB/s) at 128 and 256 MiB and none from 512 MiB, where a ring Simple loop "
    "(16 channels x 16 ranks x 2 MiB chunks = 512 MiB) fills; NCCL charges a ring "
    "15 steps of which 1 crosses the network (3.4 and 14 us), not a cost that vanishes "
    "with a full loop"))
@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter"])
def test_128_mib_within_target(op):
    m = _measured(op)
    r = _two_nodes().cost(op, 128 * MIB, 16)
    assert r.busbw == pytest.approx(m[128 * MIB], rel=0.25)


def _one_node(release: str) -> FabricCostModel:
    return FabricCostModel(build(ONE_NODE), validated=True, algorithms="nccl",
                           calibration=default_calibration().with_(nccl_release=release))


def test_send_recv_ll_limit_through_2_28():
    # NCCL 2.28 and older (NVIDIA/nccl src/enqueue.cc, commit 01e6dd91, addP2pToPlan):
    # LL while a peer's bytes <= nChannelsMax x NCCL_P2P_LL_THRESHOLD, nChannelsMax = 32
    # on 18 NVLinks (2 a link, pow2Up, at most p2p channels per peer 32): 8 peers x 32 x
    # 16 KiB = 4 MiB of all-to-all, by hand
    model = _one_node("2.28")
    assert model.cost("all-to-all", 4 * MIB, 8).protocol == "LL"
    assert model.cost("all-to-all", 8 * MIB, 8).protocol == "Simple"


@pytest.mark.parametrize("release", ["2.29", "2.30"])
def test_send_recv_ll_limit_from_2_29(release):
    # NCCL 2.29 and later pick send/recv's LL from a peer's bytes per channel: NVIDIA/nccl
    # src/enqueue.cc at ebd1e929 (makefiles/version.mk 2.29.2), addP2pToPlan, 'Select
    # protocol (LL vs SIMPLE) used based on payload per channel': bytes <= nChannels x
    # 16 KiB, nChannels from Simple's parts (one for up to p2pChunkSize / 8 = 64 KiB on one
    # node), so LL only up to 16 KiB a peer: 8 x 16 KiB = 128 KiB of all-to-all on 8 GPUs,
    # by hand (meta-pytorch/torchcomms comms/ncclx/v2_29/src/enqueue.cc alike, against
    # v2_28's 'thresholdLL = nChannelsMax*...')
    model = _one_node(release)
    assert model.cost("all-to-all", 128 * KIB, 8).protocol == "LL"
    assert model.cost("all-to-all", 128 * KIB + 8, 8).protocol == "Simple"
    assert model.cost("send-recv", 16 * KIB, 8).protocol == "LL"
    assert model.cost("send-recv", 16 * KIB + 1, 8).protocol == "Simple"


def test_vultr_8xb200_costed_as_2_28():
    # Vultr's 8xB200 sweep prints no release; its all-to-all steps at 4 -> 8 MiB (94.49 ->
    # 212.00 GB/s measured) and its send-recv's times go 35.14 us at 512 KiB (LL) to 27.92
    # at 1 MiB (Simple): the <= 2.28 rule's 512 KiB a peer (2.29's is 16 KiB). The data
    # files say '<=2.28', and the accuracy script costs them with 2.28, whose rule it is
    import importlib.util

    path = Path(__file__).parents[2] / "scripts" / "accuracy_collectives.py"
    spec = importlib.util.spec_from_file_location("accuracy_collectives_h522", path)
    ac = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ac)
    with open(PUBLISHED) as fh:
        rows = [r for r in csv.DictReader(line for line in fh if not line.startswith("#"))
                if r["case"] == "b200-8-sweep"]
    assert {r["op"] for r in rows} == {"all-gather", "reduce-scatter", "all-to-all",
                                       "send-recv"}
    assert {r["nccl"] for r in rows} == {"<=2.28"}
    assert ac.emulated("<=2.28")[0] == "2.28"
    model = _one_node(ac.emulated("<=2.28")[0])
    assert model.cost("all-to-all", 4 * MIB, 8).protocol == "LL"
    assert model.cost("all-to-all", 8 * MIB, 8).protocol == "Simple"
    assert model.cost("send-recv", 512 * KIB, 8).protocol == "LL"
    assert model.cost("send-recv", 1 * MIB, 8).protocol == "Simple"
