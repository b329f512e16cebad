"""NCCL's send/recv picks its protocol by size, not by speed (issue 11).

NVIDIA/nccl src/enqueue.cc, addP2pToPlan: ``thresholdLL = nChannelsMax *
ncclParamP2pLLThreshold()`` (16 KiB per channel, nChannelsMax = p2pnChannelsPerPeer: 32 between
NVLink peers, 2 when a peer is across the network), ``protoLL &= bytes <= thresholdLL``,
``protocol = protoLL ? LL : SIMPLE``: LL while one peer's bytes are at most 512 KiB (64 KiB
across nodes), Simple above, whichever would be faster. The model took the faster of its LL
and Simple lines at every size: Simple for an 8-GPU all-to-all of 4 MiB (512 KiB a peer, LL
in NCCL), LL for a 1 MiB send-recv (Simple in NCCL).

Hand derivations on ``single-switch:n=8,gpu=B200-HGX`` (collective_defaults.toml and the
Blackwell row of collective_generations.toml): a GPU-switch-GPU route is 2 x 10 ns of cable
plus 150 ns in the switch (0.17 us); an NVLink5 port is 900 GB/s a direction at 0.802 (721.8
GB/s), LL moves 0.391 of it (282.2 GB/s); LL pays 6.6 us once and 0.6 us a step, Simple 8.4
and 3.4 us. A direct all-to-all is one step in which each GPU sends ``n/8`` to each of its 7
peers: ``7n/8`` out of its port; under LL at the share of that rate its send warps have (28
channels x 10 send warps over Blackwell's 32 LL ring channels x 16 warps: 154.3 GB/s,
netmodel/collectives/pipeline_fill.py p2p_ll_share); a send-recv at the share of a peer's
channels (test_sendrecv_ll_share_h528.py).
"""

from __future__ import annotations

import math

import pytest

from compute.errors import UserError
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.calibration_files import default_calibration, load_calibration
from netmodel.collectives.cost_table import cost_rows
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.protocol_lines import p2p_size_range
from topologies import build

ROUTE = 2 * 10e-9 + 150e-9
PORT = 900e9 * 0.802
LL_RATE = PORT * 0.391
A2A_LL_RATE = LL_RATE * (28 * 10) / (32 * 16)
KIB, MIB = 2 ** 10, 2 ** 20


def test_all_to_all_at_512_kib_a_peer_runs_ll_by_hand(b200_nccl):
    # 4 MiB among 8: 512 KiB a peer = 32 channels x 16 KiB, so LL (the old model: Simple,
    # 17.05 us, faster by its lines than LL's, then 20.37 us at LL's own rate)
    n = 4 * MIB
    r = b200_nccl.cost("all-to-all", n, 8)
    assert (r.algorithm, r.protocol) == ("direct", "LL")
    want = 6.6e-6 + (0.6e-6 + ROUTE) + n * 7 / 8 / A2A_LL_RATE
    assert r.time == pytest.approx(want, rel=1e-9)
    assert r.time * 1e6 == pytest.approx(31.15, abs=0.01)


def test_all_to_all_just_above_512_kib_a_peer_runs_simple_by_hand(b200_nccl):
    n = 4 * MIB + 8  # one byte more a peer than LL's limit
    r = b200_nccl.cost("all-to-all", n, 8)
    assert (r.algorithm, r.protocol) == ("direct", "Simple")
    # Simple's first chunk a channel is copied twice in turn (h285): below 28 channels x
    # 512 KiB x 8/7 = 16 MiB the bytes' time counts twice (17.05 us without it), on those
    # 28 of the 32 channels, one peer each (22.14 us at the port's whole rate;
    # test_alltoall_simple_channels_h547.py)
    want = 8.4e-6 + (3.4e-6 + ROUTE) + 2 * n * 7 / 8 / (28 / 32 * PORT)
    assert r.time == pytest.approx(want, rel=1e-9)
    assert r.time * 1e6 == pytest.approx(23.59, abs=0.01)


def test_all_to_all_at_64_kib_a_peer_runs_ll_by_hand(b200_nccl):
    # 512 KiB among 8 (64 KiB a peer): LL, as before (and the faster line)
    n = 512 * KIB
    r = b200_nccl.cost("all-to-all", n, 8)
    assert r.protocol == "LL"
    assert r.time == pytest.approx(6.6e-6 + 0.6e-6 + ROUTE + n * 7 / 8 / A2A_LL_RATE, rel=1e-9)


def test_send_recv_above_512_kib_runs_simple_by_hand(b200_nccl):
    # 1 MiB from one GPU to the other: above 512 KiB, so Simple, on min(16, 1 MiB / 64 KiB)
    # = 16 channels of NCCL's 32 ring channels' rate (2 ranks: a peer's 32 halved once),
    # 14.88 us; the old model chose LL's line, 6.6 + 0.77 + 1 MiB / 282.2 GB/s = 11.09 us
    n = MIB
    r = b200_nccl.cost("send-recv", n, 2)
    assert r.protocol == "Simple"
    assert r.time == pytest.approx(8.4e-6 + 3.4e-6 + ROUTE + n / (PORT * 16 / 32), rel=1e-9)
    assert r.time * 1e6 == pytest.approx(14.88, abs=0.01)
    assert b200_nccl.cost("send-recv", 512 * KIB, 2).protocol == "LL"


def test_sweep_curves_time_and_rows_agree(b200_nccl):
    sizes = [2.0 ** k for k in range(10, 31)]
    sw = b200_nccl.sweep("all-to-all", sizes, 8)
    per_peer = [n / 8 for n in sizes]
    assert list(sw.protocol) == ["LL" if b <= 512 * KIB else "Simple" for b in per_peer]
    t = b200_nccl.collective_time("all-to-all", sizes, 8)
    assert t.tolist() == sw.time.tolist()
    assert b200_nccl.curves("all-to-all", sizes, b200_nccl.group(8))["direct"].tolist() == \
        sw.time.tolist()
    rows = cost_rows(b200_nccl, ["all-to-all"], sizes, [8], algorithm="all")
    direct = [r for r in rows if r["algorithm"] == "direct"]
    assert [r["protocol"] for r in direct] == list(sw.protocol)
    assert [r["seconds"] for r in direct] == sw.time.tolist()


#: rail-optimized B200, the route of an all-to-all's transfer between rails as NCCL's PXN
#: sends it (over NVLink to the sender's server's GPU on the peer's rail, out through its
#: NIC, no spine): GPU - NVSwitch - GPU - leaf - GPU, 10 + 150 + 10 + 100 + 330 + 100 ns
#: (docs/collectives.md); before PXN GPU - leaf - spine - leaf - GPU, 1.69 us
ROUTE_PXN = 0.70e-6

#: NCCL_ALLOC_P2P_NET_LL_BUFFERS=1: send/recv connections across the network get LL buffers,
#: so the size rule and its channels by NIC below hold there too (by default they have none
#: and run Simple at every size: test_a_peer_across_the_network_runs_simple_at_every_size)
#: and NCCL 2.28's LL rule (a peer's bytes up to all its channels x 16 KiB), whose limit shows
#: the channels a peer gets; 2.29's own limit is one channel's 16 KiB a peer
#: (p2p_ll_per_channel, test_b200_2node_ag_rs_h522.py)
NET_LL = default_calibration().with_(p2p_net_ll_buffers=True, p2p_ll_per_channel=False)


def test_across_nodes_channels_by_nic():
    # 16 B200 of two servers, one 400G NIC each (50 GB/s). NCCL 2.29+ (src/graph/paths.cc,
    # ncclTopoGetNchannels): max(1 NIC, ceil(50 / 14 GB/s)) = 4 channels a peer, pow2Up 4;
    # 2 nodes: 4 x ceil(16 / 8) = 8 <= 16 p2p channels, no halving. So LL up to 4 x 16 KiB
    # = 64 KiB a peer, 1 MiB among 16 (the old fixed 2 channels: 512 KiB, Simple at 640 KiB).
    # LL by hand: 6.6 us + 2.7 us (an LL scale-out step) + the route + 8/16 of n through a
    # 400G NIC at 0.94 x Blackwell's LL factor 0.391; Simple: 8.4 us + 14 us + the route +
    # 8/16 of n at 47 GB/s. The route is PXN's, 0.70 us (each NIC still carries 8/16 of n:
    # its server's 8 GPUs each send n/16 to the one peer on its rail).
    m = FabricCostModel(build("rail-optimized:domains=2,gpu=B200-HGX"), algorithms="nccl",
                        validated=True, calibration=NET_LL)
    ll = lambda n: 6.6e-6 + 2.7e-6 + ROUTE_PXN + n / 2 / (47e9 * 0.391)  # noqa: E731
    simple = lambda n: 8.4e-6 + 14e-6 + ROUTE_PXN + n / 2 / 47e9  # noqa: E731
    for n in (640 * KIB, MIB):
        r = m.cost("all-to-all", n, 16)
        assert r.protocol == "LL"
        assert r.time == pytest.approx(ll(n), rel=1e-3)
    r = m.cost("all-to-all", MIB + 16, 16)
    assert r.protocol == "Simple"
    assert r.time == pytest.approx(simple(MIB + 16), rel=1e-3)
    # NCCL 2.20-2.28 (net_channel_bandwidth = 0): 2 channels a peer (2 x 16 <= 4 x 16)
    old = FabricCostModel(build("rail-optimized:domains=2,gpu=B200-HGX"), algorithms="nccl",
                          validated=True, calibration=NET_LL.with_(
                              p2p_net_channel_bandwidth=0.0))
    r = old.cost("all-to-all", 640 * KIB, 16)
    assert r.protocol == "Simple"
    assert r.time == pytest.approx(simple(640 * KIB), rel=1e-3)
    assert old.cost("all-to-all", 512 * KIB, 16).protocol == "LL"


@pytest.mark.parametrize("domains, channels", [(4, 4), (8, 2), (9, 1)])
def test_across_nodes_channels_halved_by_peers(domains, channels):
    # 32 B200: 4 x ceil(32 / 8) = 16, kept (4); 64 B200: 4 x 8 = 32 > 16 -> 2 (2 x 8 =
    # 16, kept); 72 B200: 4 x 9 = 36 > 16 -> 2 x 9 = 18 > 16 -> 1
    # (ncclTopoComputeP2pChannels). LL up to p x channels x 16 KiB.
    m = FabricCostModel(build(f"rail-optimized:domains={domains},gpu=B200-HGX"),
                        algorithms="nccl", validated=True, calibration=NET_LL)
    p = 8 * domains
    direct = m.compiled("all-to-all", "direct", m.group(p))
    assert direct.size_range("LL", m.calibration) == (0.0, p * channels * 16384)


@pytest.mark.parametrize("domains, channels", [(2, 2), (4, 2), (5, 1), (8, 1), (18, 1)])
def test_nccl_2_28_channels_halved_by_ranks(domains, channels):
    # NCCL 2.20-2.28 (net_channel_bandwidth = 0; src/graph/paths.cc, ncclTopoGetNchannels,
    # network branch): nChannelsMax = 2, halved "while (nChannelsMax*comm->nRanks >
    # comm->p2pnChannels*4 && nChannelsMax > 1)", then max(netCountByBw, nChannelsMax):
    # one 400G NIC a B200, 16 p2p channels: 2 x p <= 64 keeps 2 up to 32 GPUs; 40, 64
    # and 144 GPUs get 1. LL up to p x channels x 16 KiB (the old fixed 2: p x 32 KiB).
    cal = NET_LL.with_(p2p_net_channel_bandwidth=0.0)
    m = FabricCostModel(build(f"rail-optimized:domains={domains},gpu=B200-HGX"),
                        algorithms="nccl", validated=True, calibration=cal)
    p = 8 * domains
    direct = m.compiled("all-to-all", "direct", m.group(p))
    assert direct.nic == (50e9, 1)
    assert direct.size_range("LL", m.calibration) == (0.0, p * channels * 16 * KIB)


def test_nccl_2_28_64_gpus_simple_above_1_mib_by_hand():
    # 64 B200 of 8 servers under NCCL 2.20-2.28: 1 channel a peer (2 x 64 > 4 x 16), so LL
    # up to 64 x 16 KiB = 1 MiB and Simple above (the old fixed 2: LL to 2 MiB). A direct
    # all-to-all sends 56/64 of n out of each GPU's 400G NIC (47 GB/s); LL 6.6 + 2.7 us,
    # Simple 8.4 + 14 us, the route PXN's GPU-NVSwitch-GPU-leaf-GPU 0.70 us (was the
    # GPU-leaf-spine-leaf-GPU 1.69 us, 53.37 us). At 1.5 MiB: Simple 8.4 + 14 + 0.70 + 1.5
    # MiB x 7/8 / 47 GB/s = 52.38 us (LL would be 84.89 us).
    cal = NET_LL.with_(p2p_net_channel_bandwidth=0.0)
    m = FabricCostModel(build("rail-optimized:domains=8,gpu=B200-HGX"), algorithms="nccl",
                        validated=True, calibration=cal)
    ll = lambda n: 6.6e-6 + 2.7e-6 + ROUTE_PXN + n * 7 / 8 / (47e9 * 0.391)  # noqa: E731
    simple = lambda n: 8.4e-6 + 14e-6 + ROUTE_PXN + n * 7 / 8 / 47e9  # noqa: E731
    r = m.cost("all-to-all", MIB, 64)
    assert r.protocol == "LL"
    assert r.time == pytest.approx(ll(MIB), rel=1e-3)
    for n in (MIB + 64, 1.5 * MIB):
        r = m.cost("all-to-all", n, 64)
        assert r.protocol == "Simple"
        assert r.time == pytest.approx(simple(n), rel=1e-3)
    assert simple(1.5 * MIB) * 1e6 == pytest.approx(52.38, abs=0.01)


def test_nccl_2_29_halves_a_peer_without_nics():
    # NCCL 2.29 gives a peer across the network 2 channels where the GPU has no NIC
    # ("nNetChannels = 2; if (netCount > 0) ..."), and ncclTopoComputeP2pChannels halves
    # whatever it got: 144 GPUs, 2 x ceil(144 / 8) = 36 > 16 -> 1 x 18 > 16, stays 1 (the
    # floor), so LL up to 144 x 16 KiB = 2.25 MiB; 64 GPUs: 2 x 8 = 16, kept, 2 MiB.
    cal = NET_LL.for_gpu("H100-SXM")
    assert p2p_size_range("LL", "all-to-all", 144, True, [], cal) == (0.0, 144 * 16 * KIB)
    assert p2p_size_range("LL", "all-to-all", 64, True, [], cal) == (0.0, 64 * 2 * 16 * KIB)


def test_net_channels_follow_the_ring_channels(tmp_path):
    # NCCL's p2pnChannels is its ring/tree channel count rounded up to a power of 2
    # (src/graph/paths.cc, ncclTopoComputeP2pChannels: "comm->p2pnChannels =
    # std::min(comm->nChannels, ...)", pow2Up): the shipped 16 channels give 16, as the
    # 2 x 8 H100 EFA log prints ("16 p2p channels, 2 p2p channels per peer": NCCL 2.20-2.28
    # gives 16 H100 with one NIC each max(1, 2) = 2 a peer, 2 x 16 <= 4 x 16). A file whose
    # [pipeline] has 24 channels and whose [p2p] names no net_channels gets 32, so 40 GPUs
    # keep 2 a peer under NCCL 2.20-2.28 (2 x 40 <= 4 x 32) where 16 would halve them to 1.
    from netmodel.collectives.calibration import DEFAULTS_PATH
    from netmodel.collectives.protocol_lines import net_peer_channels

    cal = default_calibration()
    assert cal.channels == 16 and cal.p2p_net_channels == 16
    old = cal.for_gpu("H100-SXM").with_(p2p_net_channel_bandwidth=0.0)
    assert net_peer_channels(16, old, (50e9, 1)) == 2
    src = DEFAULTS_PATH.read_text().replace("\nchannels = 16\n", "\nchannels = 24\n")
    path = tmp_path / "cal.toml"
    path.write_text(src)
    wide = load_calibration(path)
    assert wide.channels == 24 and wide.p2p_net_channels == 32
    assert net_peer_channels(40, wide.with_(p2p_net_channel_bandwidth=0.0), (50e9, 1)) == 2
    assert net_peer_channels(40, old, (50e9, 1)) == 1
    path.write_text(src.replace("[p2p]\n", "[p2p]\nnet_channels = 8\n"))
    assert load_calibration(path).p2p_net_channels == 8


def test_fabrics_of_one_shape_keep_their_own_nics():
    # routers of fabrics of one shape share their routes and caches (route_sharing.router_for:
    # one __dict__), so the NICs a peer's channels follow are kept per bandwidth array: the
    # same 16 B200 with every link twice as fast (1.8 TB/s NVLink, 800G NICs: 100 GB/s)
    # shares the first fabric's routes but gets max(1, ceil(100 / 14)) = 8 channels a peer
    # (8 x ceil(16 / 8) = 16 <= 16, kept), LL up to 16 x 8 x 16 KiB = 2 MiB; the 400G
    # fabric keeps its 4 channels, 1 MiB, whichever is costed first.
    slow_spec = "rail-optimized:domains=2,gpu=B200-HGX"
    fast_spec = slow_spec + ",scaleup_bandwidth=1800GB/s,nic_bandwidth=100GB/s"
    for order in ((fast_spec, slow_spec), (slow_spec, fast_spec)):
        models = {s: FabricCostModel(build(s), algorithms="nccl", validated=True,
                                     calibration=NET_LL) for s in order}
        fast, slow = models[fast_spec], models[slow_spec]
        assert fast.router.__dict__ is slow.router.__dict__   # the routes are shared
        for m in (models[s] for s in order):
            direct = m.compiled("all-to-all", "direct", m.group(16))
            want = (100e9, 1) if m is fast else (50e9, 1)
            assert direct.nic == want
            channels = 8 if m is fast else 4
            assert direct.size_range("LL", m.calibration) == (0.0, 16 * channels * 16 * KIB)


def test_ranges_only_for_send_recv_with_the_rule(b200_nccl):
    group = b200_nccl.group(8)
    cal = b200_nccl.calibration
    ring = b200_nccl.compiled("all-gather", "ring", group)
    assert ring.size_range("LL", cal) == (0.0, math.inf)
    direct = b200_nccl.compiled("all-to-all", "direct", group)
    assert direct.size_range("LL", cal) == (0.0, 8 * 32 * 16384)
    assert direct.size_range("Simple", cal) == (8 * 32 * 16384, math.inf)
    # without the rule (a calibration file with no [p2p] table, the textbook calibration):
    # every protocol at every size, the faster line taken, as before
    assert direct.size_range("LL", cal.with_(p2p_ll_threshold=0.0)) == (0.0, math.inf)
    ideal = Calibration.ideal(alpha=1e-6)
    assert ideal.p2p_ll_threshold == 0.0
    assert direct.size_range("ideal", ideal) == (0.0, math.inf)


@pytest.mark.parametrize("text, word", [
    ("channels_per_peer = 0", "p2p_channels_per_peer"),
    ("channels_per_net_peer = 2.5", "p2p_channels_per_net_peer"),
    ("ll_threshold = -1", "p2p_ll_threshold"),
    ("ll_threshold = 'big'", "ll_threshold"),
    ("chunk = 3", "chunk"),
    ("ll_per_channel = 1", r"\[p2p\]\.ll_per_channel must be true or false, got 1"),
])
def test_bad_p2p_table_refused(tmp_path, text, word):
    from netmodel.collectives.calibration import DEFAULTS_PATH

    src = DEFAULTS_PATH.read_text()
    start = src.index("[p2p]")
    end = src.index("\n\n", start)
    path = tmp_path / "cal.toml"
    path.write_text(src[:start] + "[p2p]\n" + text + "\n" + src[end:])
    with pytest.raises(UserError, match=word):
        load_calibration(path)


def test_lite_mesh_two_channels_a_nvlink():
    # A Lite's port is 112.5 GB/s, 4.5 NVLink4 links of 25 GB/s: NCCL gives a peer behind it
    # 2 x 4 = 8 channels (src/graph/paths.cc, ncclTopoGetNchannels); a package partner's
    # 37.5 GB/s mesh link, 1.5 NVLink4, 2 x 1 = 2. The group takes the smallest for every
    # peer (ncclTopoComputeP2pChannelsPerPeer; test_p2p_channels_min_over_peers.py), so LL
    # up to 2 x 16 KiB = 32 KiB a peer, 256 KiB among 8 (1 MiB before: the port's 8)
    from netmodel.study.scenario_collectives import ScenarioCollectives

    m = ScenarioCollectives("lite-direct").model(8)
    comp = m.compiled("all-to-all", "direct", m.group(8))
    # NCCL 2.28's rule shows the channels; 2.29 on (the default 2.30) one channel's 16 KiB
    old = m.calibration.with_(p2p_ll_per_channel=False)
    assert comp.size_range("LL", old) == (0.0, 8 * 2 * 16384)
    assert comp.size_range("LL", m.calibration) == (0.0, 8 * 16384)


@pytest.mark.parametrize("scenario, op, p, differs", [("h100-dgx", "all-to-all", 8, True),
                                                      # across its servers 4 channels a
                                                      # peer (one 400G NIC: ceil(50 / 14)),
                                                      # LL to 1 MiB, where Simple is faster
                                                      # (35.25 us, LL 40.35)
                                                      ("h100-dgx", "all-to-all", 16, True),
                                                      # Simple's chunk fill (h285) puts
                                                      # LL's line below it just above the
                                                      # limit, where NCCL runs Simple
                                                      ("lite-direct", "all-to-all", 8, True)])
def test_a_scenario_costs_send_recv_as_the_fabric_model(scenario, op, p, differs):
    # one cost for every command: compare/search/study (a scenario's collectives) and
    # collective/sweep (the fabric model) take the same protocol at each size; the
    # scenario's plain minimum of every line (what it took before) differs at some size
    # where NCCL's rule picks the slower protocol
    from netmodel.study.scenario_collectives import ScenarioCollectives

    c = ScenarioCollectives(scenario)
    sizes = [2.0 ** k for k in range(10, 31)]
    t = c.collective_time(op, sizes, p)
    assert t.tolist() == c.model(p).collective_time(op, sizes, p).tolist()
    a, b = c.linear(op, p)
    plain = (a[:, None] + b[:, None] * sizes).min(0)
    assert (plain < t).any() == differs
