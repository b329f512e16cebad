"""NCCL's send/recv protocol by size in every instance at once and in the crossovers (issue 11:
one cost for every command).

After 8e2be86 and 63c9744 the fabric model and the scenarios' alone costing ran LL or Simple
by size as NCCL does (src/enqueue.cc, addP2pToPlan: LL while a peer's bytes are <= its p2p
channels x 16 KiB), but the costing of every instance at once (``collective --concurrent``,
``instances = "all"``: netmodel.collectives.concurrent) and the crossovers' re-scored
collectives (netmodel.study.crossovers) still took the faster line: an all-to-all of 4 MiB
among 8 B200 cost 17.05 us (Simple) at once and 20.37 us (LL, NCCL's choice) alone.

Hand derivations on ``single-switch:n=8,gpu=B200-HGX`` as in test_p2p_protocol_by_size.py:
a GPU-switch-GPU route is 0.17 us; a port 900 GB/s at 0.802 (721.8 GB/s), LL 0.391 of it;
LL pays 6.6 us once and 0.6 us a step, Simple 8.4 and 3.4 us. On one switch the instances'
all-to-alls and send-recvs use only their own GPUs' ports: they share no link, so each
costs what it costs alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.test_p2p_protocol_by_size import A2A_LL_RATE, KIB, LL_RATE, MIB, PORT, ROUTE
from topologies import build


def test_concurrent_all_to_all_at_512_kib_a_peer_runs_ll_by_hand(b200_nccl):
    # 4 MiB among 8: 512 KiB a peer = 32 channels x 16 KiB: LL, 31.15 us at its send
    # warps' share of LL's rate, though Simple's line (17.05 us, what the concurrent
    # costing took) is lower
    n = 4 * MIB
    r = concurrent_cost(b200_nccl, 8, "all-to-all", n)
    assert (r.algorithm, r.protocol) == (("direct",), ("LL",))
    want = 6.6e-6 + (0.6e-6 + ROUTE) + n * 7 / 8 / A2A_LL_RATE
    assert r.time[0, 0] == pytest.approx(want, rel=1e-9)
    assert r.time[0, 0] * 1e6 == pytest.approx(31.15, abs=0.01)
    assert r.alone[0, 0] == r.time[0, 0] == b200_nccl.cost("all-to-all", n, 8).time


def test_concurrent_send_recv_above_512_kib_runs_simple_by_hand(b200_nccl):
    # four pairs, each on its own two ports: 1 MiB runs Simple (14.88 us: 16 channels of
    # the 32 ring channels' rate, as alone) though LL's line at the ring's LL rate (11.09
    # us, what the concurrent costing took) was lower; 512 KiB
    # runs LL at its send warps' share: a peer's 32 channels halved once for 2 ranks (16 x
    # 2 <= 32 p2p channels), 10 send warps each, of 32 ring channels x 16 LL warps
    r = concurrent_cost(b200_nccl, 2, "send-recv", [MIB, 512 * KIB])
    assert len(r.groups) == 4 and r.protocol == ("Simple", "LL")
    simple = 8.4e-6 + 3.4e-6 + ROUTE + MIB / (PORT * 16 / 32)
    assert simple * 1e6 == pytest.approx(14.88, abs=0.01)
    ll = 6.6e-6 + 0.6e-6 + ROUTE + 512 * KIB / (LL_RATE * 16 * 10 / (32 * 16))
    np.testing.assert_allclose(r.time, [[simple, ll]] * 4, rtol=1e-9)
    assert r.time.tolist() == r.alone.tolist()


def test_concurrent_groups_on_own_links_cost_as_alone(b200_nccl):
    # two all-to-alls of 4 GPUs: LL up to 4 x 512 KiB = 2 MiB, Simple above; each group's
    # time together is its time alone (collective/sweep) at every size
    sizes = np.array([2.0 ** k for k in range(14, 27)] + [2 * MIB + 4])
    r = concurrent_cost(b200_nccl, 4, "all-to-all", sizes)
    assert list(r.protocol) == ["LL" if n <= 2 * MIB else "Simple" for n in sizes]
    alone = b200_nccl.sweep("all-to-all", sizes, 4)
    for g in range(len(r.groups)):
        assert r.time[g].tolist() == pytest.approx(alone.time.tolist(), rel=1e-12)
    assert r.alone.tolist() == r.time.tolist()


def test_groups_with_different_limits_each_run_their_own_protocol():
    # One instance inside a server (NVLink peers: 32 channels, LL to 8 x 512 KiB = 4 MiB),
    # one across two servers (a network peer: one 400G NIC, max(1, ceil(50 / 14 GB/s)) = 4
    # channels under NCCL 2.29+, 2 before: LL to 8 x 64 KiB = 512 KiB). At 1 MiB NCCL runs
    # LL in the first and Simple in the second, under one algorithm; the concurrent
    # costing took one line for both (at 1 MiB Simple's: 13.24 us for the first, not its
    # LL 10.62). Between 512 KiB and 4 MiB no single (algorithm, protocol) runs in both,
    # so the choice is the algorithm. (The network peers run LL with
    # NCCL_ALLOC_P2P_NET_LL_BUFFERS=1; by NCCL's default they have no LL buffer and run
    # Simple at every size, below.)
    # NCCL 2.28's LL rule (a peer's bytes up to all its channels x 16 KiB; 2.29 on, one
    # channel's 16 KiB) with 2.29's channels by NIC across the network
    net_ll = default_calibration().with_(p2p_net_ll_buffers=True, p2p_ll_per_channel=False)
    m = FabricCostModel(build("rail-optimized:domains=3,gpu=B200-HGX"), algorithms="nccl",
                        validated=True, calibration=net_ll)
    inside = [f"gpu{i}" for i in range(8)]
    across = [f"gpu{i}" for i in (8, 9, 10, 11, 16, 17, 18, 19)]
    sizes = [MIB, 512 * KIB, 512 * KIB + 8, 4 * MIB]
    r = concurrent_cost(m, [inside, across], "all-to-all", sizes)
    assert r.algorithm == ("direct",) * 4
    assert r.protocol == ("Simple", "LL", "Simple", "Simple")   # the slowest instance's
    for g, members in enumerate((inside, across)):
        sw = m.sweep("all-to-all", sizes, members)
        assert r.alone[g].tolist() == pytest.approx(sw.time.tolist(), rel=1e-12)
    assert [m.cost("all-to-all", n, inside).protocol for n in sizes] == ["LL"] * 4
    assert [m.cost("all-to-all", n, across).protocol for n in sizes] == \
        ["Simple", "LL", "Simple", "Simple"]
    # they share no link (the first stays on its server's NVSwitch): together = alone
    np.testing.assert_allclose(r.time, r.alone, rtol=1e-12)
    plain = FabricCostModel(build("rail-optimized:domains=3,gpu=B200-HGX"),
                            algorithms="nccl", validated=True,
                            calibration=default_calibration().with_(p2p_ll_per_channel=False))
    r = concurrent_cost(plain, [inside, across], "all-to-all", sizes)
    assert [plain.cost("all-to-all", n, across).protocol for n in sizes] == ["Simple"] * 4
    assert [plain.cost("all-to-all", n, inside).protocol for n in sizes] == ["LL"] * 4
    for g, members in enumerate((inside, across)):
        sw = plain.sweep("all-to-all", sizes, members)
        assert r.alone[g].tolist() == pytest.approx(sw.time.tolist(), rel=1e-12)


@pytest.mark.parametrize("scenario, p", [("h100-dgx", 8), ("lite-direct", 8),
                                         ("lite-direct", 4)])
def test_a_scenario_with_every_instance_at_once_runs_the_protocol_by_size(scenario, p):
    # instances = "all" (compare/search/study --instances all): the instances of 8 H100
    # fill one server each and those of the Lites one package group or NVSwitch domain
    # each, so no link is shared, and every all-to-all costs what one instance costs alone
    # (which the fabric model's choice already follows), at every size; the concurrent
    # costing's plain minimum of lines was below it where NCCL's rule picks the slower line
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_collectives import ScenarioCollectives

    s = get_scenario(scenario)
    alone = ScenarioCollectives(s)
    every = ScenarioCollectives(s.with_instances("all"))
    sizes = np.array([2.0 ** k for k in range(10, 31)])
    t_alone = alone.collective_time("all-to-all", sizes, p)
    assert t_alone.tolist() == alone.model(p).collective_time("all-to-all", sizes, p).tolist()
    assert every.collective_time("all-to-all", sizes, p).tolist() == \
        pytest.approx(t_alone.tolist(), rel=1e-12)


@pytest.mark.parametrize("scenario, p, scale", [("h100-dgx", 8, 1.0), ("lite-direct", 8, 1.0),
                                                ("lite-direct", 8, 2.0),
                                                ("lite-direct", 8, 0.5),
                                                ("lite-direct", 16, 4.0)])
def test_crossover_rescoring_runs_the_protocol_by_size(scenario, p, scale):
    # the crossovers re-score a scenario's collectives at other link bandwidths
    # (AdjustedComm): at every scale they must cost an all-to-all as the fabric model on
    # the fabric rebuilt at that scale does, whose channels follow the links' rate (a
    # Lite's 112.5 GB/s port: 4 NVLinks, 8 channels; x2: 9 NVLinks, 32 channels; x0.5: 2
    # NVLinks, 4 channels), not as the faster line
    from netmodel.study.adjusted_comm import AdjustedComm
    from netmodel.study.scenario_collectives import ScenarioCollectives

    c = ScenarioCollectives(scenario)
    adj = AdjustedComm(c, scale=scale)
    sizes = np.array([2.0 ** k for k in range(10, 31)] + [2.0 ** 20 + 8, 2.0 ** 22 + 8])
    rebuilt = adj._model(p)
    want = rebuilt.collective_time("all-to-all", sizes, p)
    assert adj.collective_time("all-to-all", sizes, p).tolist() == \
        pytest.approx(want.tolist(), rel=1e-12)
    if scale == 1.0:
        assert adj.collective_time("all-to-all", sizes, p).tolist() == \
            pytest.approx(c.collective_time("all-to-all", sizes, p).tolist(), rel=1e-12)


def test_lite_channels_follow_a_scaled_port():
    # the group takes its slowest peer's channels (ncclTopoComputeP2pChannelsPerPeer): a
    # package partner's 37.5 GB/s mesh link, 1 NVLink4 of 25 GB/s, 2 channels (the port's
    # 112.5 GB/s: 8). x 2: mesh 75 GB/s, 3 links, 6, 8 as a power of 2 (port 225 GB/s: 32);
    # x 0.5: mesh 18.75 GB/s, at least 1 link, 2 (port 56.25 GB/s: 4)
    from netmodel.study.scenario_collectives import ScenarioCollectives

    c = ScenarioCollectives("lite-direct")
    m = c.model(8)
    comp = m.compiled("all-to-all", "direct", m.group(8))
    cal = m.calibration.with_(p2p_ll_per_channel=False)   # 2.28's LL rule shows them
    assert comp.size_range("LL", cal) == (0.0, 8 * 2 * 16384)
    assert comp.size_range("LL", cal, 2.0) == (0.0, 8 * 8 * 16384)
    assert comp.size_range("LL", cal, 0.5) == (0.0, 8 * 2 * 16384)
    assert comp.size_range("Simple", cal, 0.5) == (8 * 2 * 16384, np.inf)
