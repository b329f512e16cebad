"""A scenario that declares its links scale-up gives send/recv NVLink's channels a peer (issue 11).

NCCL's send/recv runs LL while one peer's bytes are at most 16 KiB (NCCL_P2P_LL_THRESHOLD)
times the channels a peer may use (src/enqueue.cc, addP2pToPlan): between NVLink peers 2 per
NVLink of the path (src/graph/paths.cc, ncclTopoGetNchannels: 2 x (path bw / one NVLink's)),
rounded up to a power of 2 and at most 32; 2 across the network. NCCL's topology joins a
GPU's NVLinks to all its NVSwitch chips into one link to one NVSwitch node (src/graph/topo.cc,
ncclTopoAddNvLinks / ncclTopoConnectNodes: "Aggregate links into higher bw for NVLink"), so
the path is the GPU's NVLinks together, whatever chip a peer's bytes cross.

``lite-flat`` and ``lite-hier`` declare ``links = "scale-up"`` (their CPO switches are the
Lites' scale-up domain); they got the network's 2 channels a peer, and ``lite-flat`` counted
each 28.125 GB/s plane alone. By hand now: a Lite's 112.5 GB/s (4 planes x 28.125 on
``lite-flat``, one 112.5 GB/s cable to its leaf on ``lite-hier``) over the Hopper NVLink4 rate
of 25 GB/s is 4.5, so 4 NVLinks, 2 x 4 = 8 channels (a power of 2 already), LL while a peer's
bytes are <= 8 x 16 KiB = 128 KiB: an 8-GPU all-to-all runs LL up to 8 x 128 KiB = 1 MiB (it
ran LL up to 8 x 2 x 16 KiB = 256 KiB, and Simple at 1 MiB).

Times by hand (collective_defaults.toml, the Hopper row of collective_generations.toml, which
the Lite takes from the H100; the scenario file's latencies): a direct all-to-all is one step
in which each Lite sends n/8 to each of 7 peers, 7n/8 out of its 112.5 GB/s at the scale-up
efficiency 0.824 (the scenario's links are scale-up), LL moving 0.380 of that; the route is
a 110 ns cable (20 m x 5 ns + 2 optical chiplets x 5 ns), the 330 ns switch and a 110 ns
cable, 0.55 us (both Lites sit on one leaf of ``lite-hier``); LL pays 6.6 us once and 0.6 us a
step, Simple 8.4 and 3.4 us.
"""

from __future__ import annotations

import dataclasses

import pytest

from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

KIB, MIB = 2 ** 10, 2 ** 20
LITE = 112.5e9                          # a Lite's scale-up bandwidth a direction
NVLINK4 = 25e9                          # one NVLink4, a direction
CHANNELS = 2 * int(LITE / NVLINK4)      # 8
LL_LIMIT = 8 * CHANNELS * 16 * KIB      # 1 MiB among 8
PORT = LITE * 0.824
ROUTE = 110e-9 + 330e-9 + 110e-9


def _at_228(name):
    """Scenario ``name`` at NCCL 2.28, whose LL rule (a peer's bytes up to its channels x
    16 KiB) shows the channels; from 2.29 LL holds up to one channel's 16 KiB a peer
    (test_b200_2node_ag_rs_h522.py)."""
    return dataclasses.replace(get_scenario(name), nccl_release="2.28")


@pytest.mark.parametrize("scenario", ["lite-flat", "lite-hier"])
def test_all_to_all_of_8_runs_ll_up_to_1_mib_by_hand(scenario):
    assert (CHANNELS, LL_LIMIT) == (8, MIB)
    m = ScenarioCollectives(_at_228(scenario)).model(8)
    r = m.cost("all-to-all", LL_LIMIT, 8)
    # old: Simple, 22.25 us (LL only up to 256 KiB)
    assert (r.algorithm, r.protocol) == ("direct", "LL")
    assert r.time == pytest.approx(6.6e-6 + 0.6e-6 + ROUTE + LL_LIMIT * 7 / 8 / (PORT * 0.380),
                                   rel=1e-9)
    assert r.time * 1e6 == pytest.approx(33.80, abs=0.01)
    n = LL_LIMIT + 8                    # one byte a peer more: Simple (as before)
    r = m.cost("all-to-all", n, 8)
    assert (r.algorithm, r.protocol) == ("direct", "Simple")
    assert r.time == pytest.approx(8.4e-6 + 3.4e-6 + ROUTE + n * 7 / 8 / PORT, rel=1e-9)


@pytest.mark.parametrize("scenario", ["lite-flat", "lite-flat-inr", "lite-hier"])
def test_every_send_recv_candidate_takes_8_channels_a_peer(scenario):
    # the channels follow the path as NCCL sees it, not each plane alone nor the network's 2
    m = ScenarioCollectives(_at_228(scenario)).model(8)
    for alg in ("direct", "pairwise"):
        comp = m.compiled("all-to-all", alg, m.group(8))
        assert comp.size_range("LL", m.calibration) == (0.0, LL_LIMIT)
        assert comp.size_range("Simple", m.calibration) == (LL_LIMIT, float("inf"))
    send = m.compiled("send-recv", "direct", m.group(2))
    assert send.size_range("LL", m.calibration) == (0.0, CHANNELS * 16 * KIB)


def test_every_instance_at_once_runs_ll_up_to_1_mib():
    # --instances all: 16 instances of 8 Lites on lite-flat, each on its own ports, so each
    # costs what one costs alone: LL at 1 MiB (old: every group crossed the network in the
    # rule's eyes and took 2 channels a peer: Simple, 22.25 us), Simple a byte a peer above
    # (a group's channels read off its links, not NCCL's 32 a peer: LL up to 4 MiB)
    sizes = [LL_LIMIT, LL_LIMIT + 8]
    alone = ScenarioCollectives(_at_228("lite-flat")).collective_time("all-to-all", sizes, 8)
    together = ScenarioCollectives(_at_228("lite-flat"), concurrent=True).collective_time(
        "all-to-all", sizes, 8)
    assert together.tolist() == pytest.approx(alone.tolist(), rel=1e-12)
    assert alone[0] * 1e6 == pytest.approx(33.80, abs=0.01)
    assert alone[1] == pytest.approx(8.4e-6 + 3.4e-6 + ROUTE + sizes[1] * 7 / 8 / PORT,
                                     rel=1e-9)


def test_as_built_cpo_switches_stay_a_network():
    # the declaration decides: the same fabric with links = "as-built" is a network to NCCL:
    # a Lite's 4 plane links are 4 NICs, 112.5 GB/s together, so NCCL 2.29+ gives a peer
    # max(4, ceil(112 / 14)) = 8 channels (8 x ceil(8 / 8) <= 16: kept), LL up to 8 x 8 x
    # 16 KiB = 1 MiB among 8; NCCL 2.20-2.28 max(4 NICs, 2) = 4 channels a peer (2 x 8 <=
    # 4 x 16: not halved), 512 KiB (the model counts every NIC; NCCL stops counting where
    # they cover the GPU's PCIe link, which a Lite's spec does not give)
    s = dataclasses.replace(get_scenario("lite-flat"), links="as-built")
    m = ScenarioCollectives(s).model(8)
    # (those sizes with NCCL_ALLOC_P2P_NET_LL_BUFFERS=1: by NCCL's default a send/recv
    # connection across the network has no LL buffer, so Simple at every size)
    comp = m.compiled("all-to-all", "direct", m.group(8))
    assert comp.nic == (112.5e9, 4)
    assert comp.size_range("LL", m.calibration) == (0.0, 0.0)
    # with NCCL 2.28's LL rule, which shows the channels (2.29 on: 16 KiB a peer)
    net_ll = m.calibration.with_(p2p_net_ll_buffers=True, p2p_ll_per_channel=False)
    assert comp.size_range("LL", net_ll) == (0.0, 8 * 8 * 16 * KIB)
    assert comp.size_range("LL", m.calibration.with_(p2p_net_ll_buffers=True)) == \
        (0.0, 8 * 16 * KIB)
    old = net_ll.with_(p2p_net_channel_bandwidth=0.0)
    assert comp.size_range("LL", old) == (0.0, 8 * 4 * 16 * KIB)


@pytest.mark.parametrize("name, nic", [("lite-flat", (4 * 28.125e9, 4)), ("lite-hier", (LITE, 1))])
def test_scale_up_cpo_links_take_no_nic_rule(name, nic):
    # declared scale-up, the CPO links are NVLink to NCCL: no NIC on the path, so a peer
    # gets NVLink's 2 per NVLink (8, LL to 8 x 8 x 16 KiB = 1 MiB), whatever a NIC rule
    # would give. The same links read as-built are NICs (4 planes on lite-flat, one cable
    # to its leaf on lite-hier, 112.5 GB/s together): with NCCL 2.29's rule at a
    # per-channel bandwidth of 1 GB/s (NCCL_P2P_PER_CHANNEL_NET_BW=1) that is ceil(112 / 1)
    # = 112, pow2Up 128, halved to the 16 p2p channels (16 x ceil(8 / 8) = 16), LL to
    # 8 x 16 x 16 KiB = 2 MiB (with NCCL_ALLOC_P2P_NET_LL_BUFFERS=1: LL buffers across
    # the network); the scale-up reading stays at 1 MiB under that calibration.
    up = ScenarioCollectives(name).model(8)
    built = ScenarioCollectives(dataclasses.replace(get_scenario(name), links="as-built")
                                ).model(8)
    for m, want in ((up, 8 * CHANNELS * 16 * KIB), (built, 8 * 16 * 16 * KIB)):
        comp = m.compiled("all-to-all", "direct", m.group(8))
        assert comp.nic == nic
        cal = m.calibration.with_(p2p_net_channel_bandwidth=1e9, p2p_net_ll_buffers=True,
                                  p2p_ll_per_channel=False)   # 2.28's LL rule shows them
        assert comp.size_range("LL", cal) == (0.0, want)
    comp = up.compiled("all-to-all", "direct", up.group(8))
    assert comp.size_range("LL", up.calibration.with_(p2p_ll_per_channel=False)) == (0.0, MIB)
    assert comp.size_range("LL", up.calibration) == (0.0, 8 * 16 * KIB)   # 2.29 on
