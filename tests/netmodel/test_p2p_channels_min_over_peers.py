"""Send/recv's channels a peer are one number for the group: the slowest peer's (issue 11).

NVIDIA/nccl src/graph/paths.cc (commit 04cdb808), ncclTopoComputeP2pChannelsPerPeer: a loop
over every rank ``r`` of the communicator, ``ncclTopoGetNchannels(comm, g, r, &nChannels)``,
``minChannels = std::min(minChannels, nChannels)``, ``comm->p2pnChannelsPerPeer =
minChannels``; then ncclTopoComputeP2pChannels: ``comm->p2pnChannelsPerPeer =
pow2Up(comm->p2pnChannelsPerPeer)`` and at most ``p2pnChannels``. ncclTopoGetNchannels gives an
NVLink peer ``2*std::max(1, (int)(path->bw / nvlBw))``. src/enqueue.cc (addP2pToPlan) runs LL
while a peer's bytes are <= that one count x 16 KiB (NCCL_P2P_LL_THRESHOLD).

The model took the channels of each step's bottleneck link only. On ``lite-direct`` a Lite of an
8-Lite group reaches its 3 package partners over 37.5 GB/s mesh links (112.5 GB/s over 3) and
the 4 others through its 112.5 GB/s NVSwitch port (450 GB/s over 4 Lites). The direct
all-to-all's one step is bottlenecked by the port (4 peers x n/8 over 112.5 GB/s = n/225 GB/s
against n/8 over 37.5 = n/300), so the model gave every peer the port's 2 x int(112.5/25) = 8
channels: LL up to 8 x 8 x 16 KiB = 1 MiB. By NCCL's rule the mesh peers' paths
(37.5 / 25 = 1.5 NVLink4: 2 x 1 = 2 channels) set the count for all: pow2Up(min(2, 8)) = 2, LL
up to 8 x 2 x 16 KiB = 256 KiB.

The rounding is up, not down: 8 A100 on one NVSwitch (12 NVLink3, 2 x 12 = 24 channels) get
pow2Up(24) = 32, at most p2pnChannels = pow2Up(24 coll channels) = 32 (an HGX A100's NCCL log
prints ``Channel 23/24``: NVIDIA/nccl-tests issue 100), so LL up to 8 x 32 x 16 KiB = 4 MiB, as
before.

That is NCCL 2.28's LL rule, whose limit shows the group's channels: the models below cost
NCCL 2.28 (from 2.29 LL holds up to one channel's 16 KiB a peer, whatever the channels:
test_b200_2node_ag_rs_h522.py).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from topologies import build

KIB, MIB = 2 ** 10, 2 ** 20
NVLINK4 = 25e9                                  # one NVLink4, a direction
MESH = 112.5e9 / 3                              # a Lite's mesh link to one partner
PORT = 450e9 / 4                                # a Lite's share of the H100's NVSwitch links
CHANNELS = min(2 * int(MESH / NVLINK4), 2 * int(PORT / NVLINK4))     # min(2, 8) = 2
LL_LIMIT = 8 * CHANNELS * 16 * KIB              # 256 KiB among 8


#: lite-direct at NCCL 2.28 (module docstring)
LITE_228 = replace(get_scenario("lite-direct"), nccl_release="2.28")


@pytest.fixture(scope="module")
def lite():
    return ScenarioCollectives(LITE_228).model(8)


def test_lite_direct_group_takes_its_mesh_peers_channels(lite):
    assert (CHANNELS, LL_LIMIT) == (2, 256 * KIB)
    for alg in ("direct", "pairwise"):
        comp = lite.compiled("all-to-all", alg, lite.group(8))
        # old (direct): (0, 1 MiB), the port's 8 channels
        assert comp.size_range("LL", lite.calibration) == (0.0, LL_LIMIT)
        assert comp.size_range("Simple", lite.calibration) == (LL_LIMIT, float("inf"))


def test_lite_direct_all_to_all_simple_above_32_kib_a_peer(lite):
    # 64 KiB a peer (512 KiB among 8): Simple (old: LL, the faster there and within 1 MiB)
    assert lite.cost("all-to-all", LL_LIMIT, 8).protocol == "LL"
    assert lite.cost("all-to-all", LL_LIMIT + 8, 8).protocol == "Simple"
    assert lite.cost("all-to-all", 512 * KIB, 8).protocol == "Simple"
    # 48 KiB a peer: NCCL's Simple, slower there than LL (the rule, not the faster line)
    n = 384 * KIB
    times: dict = {}   # a protocol's time: the smallest of its lines (Simple fills, h285)
    for c in lite.candidates("all-to-all", lite.group(8), "direct"):
        # Simple's lines by channel each at its own sizes (protocol_lines.channel_lines)
        lo, hi = c[4].size_range(c[1], lite.calibration, b=c[3]) if c[1] == "Simple" \
            else (0.0, float("inf"))
        if lo < n <= hi:
            times[c[0], c[1]] = min(times.get((c[0], c[1]), float("inf")), c[2] + c[3] * n)
    assert lite.cost("all-to-all", n, 8).time == pytest.approx(times[("direct", "Simple")],
                                                               rel=1e-12)
    assert times[("direct", "LL")] < times[("direct", "Simple")]


def test_every_instance_at_once_agrees_with_alone():
    # --instances all: the 16 groups of 8 Lites each run what one runs alone
    sizes = [LL_LIMIT, LL_LIMIT + 8, 512 * KIB]
    alone = ScenarioCollectives(LITE_228).collective_time("all-to-all", sizes, 8)
    together = ScenarioCollectives(LITE_228, concurrent=True).collective_time(
        "all-to-all", sizes, 8)
    assert together.tolist() == pytest.approx(alone.tolist(), rel=1e-12)
    m = ScenarioCollectives(LITE_228).model(8)
    assert [m.cost("all-to-all", n, 8).protocol for n in sizes] == ["LL", "Simple", "Simple"]


def test_a100_rounds_24_channels_up_to_32():
    # passes on the old code too: pins the rounding (pow2Up, not pow2Down)
    m = FabricCostModel(build("single-switch:n=8,gpu=A100-SXM-80GB"), algorithms="nccl",
                        validated=True,
                        calibration=default_calibration().with_(nccl_release="2.28"))
    comp = m.compiled("all-to-all", "direct", m.group(8))
    assert comp.size_range("LL", m.calibration) == (0.0, 8 * 32 * 16 * KIB)   # 4 MiB
    assert m.cost("all-to-all", 4 * MIB, 8).protocol == "LL"
    assert m.cost("all-to-all", 4 * MIB + 8, 8).protocol == "Simple"
