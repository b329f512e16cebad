"""NCCL's PXN on healthy rail-optimized fabrics (route_pxn.PxnRoutes.pxn_proxies).

NCCL (since 2.12, ``NCCL_PXN_DISABLE=0``, ``NCCL_P2P_PXN_LEVEL=2`` by default; NVIDIA/nccl
src/graph/search.cc, ``ncclTopoGetNetDev``) sends a send/recv to a peer in another server
through the NIC of the sender's server GPU on the peer's rail, over NVLink to it first; the
peer receives on its own NIC. Before, the model sent it through the sender's own NIC, up to
the spines and down the peer's rail.

Hand derivations (2 x 8 B200-HGX rail-optimized, ideal calibration: time = bytes over the
bottleneck bandwidth + the slowest path's latency): NIC 50 GB/s, cable GPU-leaf 20 m = 100
ns, NVLink 10 ns, leaf-spine 50 m = 250 ns, NVSwitch 150 ns, leaf and spine 330 ns each
(topologies/common.py, compute/data/gpus.toml), as tests/netmodel/test_degraded_never_faster.py.
Every test here fails on the code before PXN (checked against a worktree of 8af7c04).
PXN is NCCL's rule for send/recv (its all-to-all and send-recv); rings and trees lay their
channels rail by rail themselves (algo_ring), and are routed as before.
"""

import networkx as nx
import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.algorithms import generate
from netmodel.collectives.calibration import DEFAULTS_PATH, Calibration
from netmodel.collectives.calibration_files import load_calibration
from netmodel.collectives.degraded import degrade
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import Pairs
from topologies.registry import build

N = 2 ** 26
NIC = 50e9


@pytest.fixture(scope="module")
def b200():
    return build("rail-optimized:domains=2,gpu=B200-HGX")


@pytest.fixture(scope="module")
def b200_4():
    return build("rail-optimized:domains=4,gpu=B200-HGX")


def _loads(router, transfers):
    links, load, latency, *_ = router.link_loads(transfers)
    return {router.link_name(i): x for i, x in zip(links.tolist(), load.tolist(),
                                                   strict=True)}, latency


def test_cross_rail_send_recv_leaves_on_the_peers_rail(b200):
    """Send-recv of gpu0, gpu1, gpu8, gpu9 (each rank to the next): gpu1 (server 0, rail 1)
    -> gpu8 (server 1, rail 0) goes over NVLink to gpu0, server 0's rank on rail 0, and out
    through its NIC to leaf0, which gpu8 hangs off: gpu1 -> nvs0 -> gpu0 -> leaf0 -> gpu8,
    latency 10 + 150 + 10 + 100 + 330 + 100 = 700 ns, every link all of it, no spine; and
    gpu9 -> nvs1 -> gpu8 -> leaf0 -> gpu0. So the NICs on rail 0 carry it all, n each way,
    and the time is N / 50 GB/s + 700 ns. Before: gpu1 -> leaf1 -> 4 spines -> leaf0 ->
    gpu8, 100 + 330 + 250 + 330 + 250 + 330 + 100 = 1690 ns. A communicator of gpu1 and
    gpu8 alone has no rank on rail 0 in server 0 (NCCL's topology holds only its ranks'
    GPUs), so it goes through gpu1's own NIC and the spines."""
    router = Router(b200)
    group = ("gpu0", "gpu1", "gpu8", "gpu9")
    (step,) = generate("direct", "send-recv", group, b200)
    load, latency = _loads(router, step.transfers)
    assert latency == pytest.approx(700e-9, rel=1e-12)
    assert not [x for x in load if "spine" in str(x)]
    nic = {x: v for x, v in load.items() if "leaf" in str(x)}
    assert nic == {("gpu0", "leaf0"): 1.0, ("leaf0", "gpu8"): 1.0, ("gpu8", "leaf0"): 1.0,
                   ("leaf0", "gpu0"): 1.0}
    assert load[("nvs0", "gpu0")] == 1.0 and load[("gpu1", "nvs0")] == 1.0
    model = FabricCostModel(b200, calibration=Calibration.ideal(), validated=True)
    assert model.cost("send-recv", N, group).time == pytest.approx(N / NIC + 700e-9,
                                                                   rel=1e-12)
    assert model.cost("send-recv", N, ["gpu1", "gpu8"]).time == \
        pytest.approx(N / NIC + 1690e-9, rel=1e-12)


def test_pxn_off_sends_through_the_own_nic(b200):
    """A calibration with ``pxn = false`` (NCCL_PXN_DISABLE=1) routes as before PXN: up
    through gpu1's own NIC and the spines, N / 50 GB/s + 1690 ns. Rings, trees and the
    model's own one-shot algorithms are not NCCL's send/recv and route the same either way
    (a ring's hop between servers already leaves through its rail's NIC, algo_ring)."""
    group = ("gpu0", "gpu1", "gpu8", "gpu9")
    off = Calibration.ideal().with_(pxn=False)
    model = FabricCostModel(b200, calibration=off, validated=True)
    assert model.cost("send-recv", N, group).time == \
        pytest.approx(N / NIC + 1690e-9, rel=1e-12)
    on = FabricCostModel(b200, calibration=Calibration.ideal(), validated=True)
    for op, grp, algorithm in (("all-reduce", 16, "ring"), ("all-gather", group, "direct"),
                               ("broadcast", group, "direct"), ("all-reduce", group, "tree")):
        assert on.cost(op, N, grp, algorithm=algorithm).time == \
            model.cost(op, N, grp, algorithm=algorithm).time


def test_pxn_is_a_calibration_switch_said_once(tmp_path):
    """The shipped defaults turn PXN on; a file's ``[p2p] pxn`` must be true or false."""
    assert load_calibration().pxn is True
    text = DEFAULTS_PATH.read_text().replace("pxn = true", "pxn = 1")
    bad = tmp_path / "cal.toml"
    bad.write_text(text)
    with pytest.raises(UserError, match="pxn must be true or false, got 1"):
        load_calibration(bad)


def test_all_to_all_across_two_servers_takes_no_spine(b200):
    """Direct all-to-all of all 16 GPUs: every transfer between servers stays on the
    peer's rail, so no byte reaches a spine, and each NIC still carries n / 2 (its server's
    8 GPUs each send n / 16 to the one peer on its rail) as before, where each GPU's own NIC
    carried its 8 peers' n / 16 and half of it crossed the spines."""
    router = Router(b200)
    steps = generate("direct", "all-to-all", tuple(f"gpu{i}" for i in range(16)), b200)
    links, load, *_ = router.link_loads(steps[0].transfers)
    names = [router.link_name(i) for i in links]
    assert not any("spine" in str(u) + str(v) for u, v in names)
    nic = {(u, v): x for (u, v), x in zip(names, load.tolist(), strict=True)
           if str(u).startswith("gpu") and str(v).startswith("leaf")}
    assert len(nic) == 16 and all(x == pytest.approx(0.5, rel=1e-12) for x in nic.values())


def test_many_transfers_route_as_one_by_one():
    """The vectorised plan of a large step (direct all-to-all of 48 GPUs placed at random
    on two NVL72 racks: 2,256 transfers) sends each transfer as worked out one by one from
    the labels: a transfer between racks to a peer on another rail (rail = position in the
    4-GPU tray) whose tray holds a rank of the group on the peer's rail goes over NVLink to
    it and on from there (:meth:`Router.route` of the two legs), the others as before."""
    g = build("nvl72:racks=2")
    router = Router(g)
    rng = np.random.default_rng(7)
    group = tuple(rng.permutation(router.gpu_list)[:48].tolist())
    (step,) = generate("direct", "all-to-all", group, g)
    links, load, *_ = router.link_loads(step.transfers)
    rank = {(g.nodes[x]["server"], g.nodes[x]["rail"]): x for x in group}
    want = np.zeros(router.n_links)
    relayed = 0
    for a, b, f in step.transfers:
        da, db = g.nodes[a], g.nodes[b]
        via = rank.get((da["server"], db["rail"]))
        if da["group"] != db["group"] and da["rail"] != db["rail"] and via is not None:
            relayed += 1
            legs = [router.route(a, via), router.route(via, b)]
        else:
            legs = [router.route(a, b)]
        for r in legs:
            np.add.at(want, r.links, r.weights * f)
    assert relayed > 100
    got = np.zeros(router.n_links)
    got[links] = load
    assert np.allclose(got, want, rtol=1e-12, atol=0)


def test_a_shared_rail_leaf_does_not_stop_pxn():
    """NCCL relays to the sender's server GPU at the peer's device index whatever the
    fabric beyond the NIC (it knows nothing of leaves): where a rail's leaf holds several
    GPUs of a server (Lites: lite-groups on 2 x 8 B200, 2 Lites a big GPU, so positions
    2r and 2r + 1 share rail r's leaf and a 25 GB/s NIC each), a transfer to a peer on the
    sender's own leaf is relayed too. Pairwise all-to-all of the 32 Lites, shift 17: Lite
    i -> i + 17 (server 0 to server 1, position i + 1), so NCCL sends it through Lite
    i + 1's NIC, i = 0..14, and every NIC carries one transfer, n / 32 (Lite 15 -> 0 stays
    in its server). The rule 'no switch in common' kept the even i (same leaf) on their own
    NIC, so Lite 2's NIC carried its own and Lite 1's: 2 n / 32, the step twice as long;
    and PXN made the contiguous pairwise all-to-all slower than without it (ideal, 64 Lites
    of lite-groups on rail-optimized: 5832 us on, 5390 off; now 5329)."""
    g = build("lite-groups:base=[rail-optimized:domains=2,gpu=B200-HGX],lites=2")
    router = Router(g)
    steps = generate("pairwise", "all-to-all", tuple(f"gpu{i}" for i in range(32)), g)
    assert steps[16].name == "shift 17"
    load, _ = _loads(router, steps[16].transfers)
    nic = {u: x for (u, v), x in load.items() if str(v).startswith("leaf")}
    want = {f"gpu{i}": 1 / 32 for i in [*range(1, 16), *range(17, 32)]}
    assert nic == pytest.approx(want, rel=1e-12)


def test_gpus_wired_to_several_nvswitches():
    """A GPU wired to more than two switches (here both of two NVSwitch chips of its
    server, as a DGX's GPUs reach every chip; a file can say so) crashed PXN
    (``_share_a_switch`` was never written: AttributeError). 2 x 8 B200 with a second
    NVSwitch a server: direct all-to-all of the 16 GPUs as on one NVSwitch, n / 2 on each
    NIC, no spine, N / 2 / 50 GB/s + 700 ns (10 + 150 + 10 + 100 + 330 + 100)."""
    g = nx.Graph(build("rail-optimized:domains=2,gpu=B200-HGX"))
    for s in (0, 1):
        g.add_node(f"nvsB{s}", **g.nodes[f"nvs{s}"])
    for x, d in list(g.nodes(data=True)):
        if d.get("kind") == "gpu":
            g.add_edge(x, f"nvsB{d['server']}", **g.edges[x, f"nvs{d['server']}"])
    group = tuple(f"gpu{i}" for i in range(16))
    router = Router(g)
    (step,) = generate("direct", "all-to-all", group, g)
    load, _ = _loads(router, step.transfers)
    assert not [x for x in load if "spine" in str(x)]
    model = FabricCostModel(g, calibration=Calibration.ideal(), validated=True)
    assert model.cost("all-to-all", N, group, algorithm="direct").time == \
        pytest.approx(N / 2 / NIC + 700e-9, rel=1e-12)


def test_a_failed_lenders_nic_does_not_speed_the_step_up(b200_4):
    """Direct all-to-all of gpu0..gpu3 (server 0) with gpu8, gpu16, gpu24 (position 0 of
    servers 1-3), n = 7 x 2^24 B, ideal: every transfer from server 0 to a position-0 peer
    leaves through gpu0's NIC (PXN aggregates: gpu0's own 3 and gpu1-gpu3's 9, 12/7 n),
    the receivers take 6/7 n each: healthy 12/7 n / 50 GB/s + 1.69 us = 4028.22 us.

    With gpu0's cable to leaf0 failed, the model sent gpu1-gpu3 through their own NICs (3/7
    n each) and gpu0 through one other (6/7 n): 2015.13 us, 0.50x the healthy time. NCCL
    (``ncclTopoGetNetDev``) still relays to the NIC nearest the rank at the peer's device
    index (gpu0), now one reached over NVLink (``PATH_PXN``), handing the data to that NIC's
    GPU: the one NIC gpu0's own degraded route leaves through, gpu1's (gpu0 -> nvs0 -> gpu1
    -> leaf1, the first of the equally short ones). So gpu2 and gpu3 relay over NVLink to
    gpu1, gpu1 sends its own, gpu0 goes through gpu1 too: gpu1's NIC carries the 12/7 n.
    Latency, gpu2 -> nvs0 -> gpu1 -> leaf1 -> spine -> leaf0 -> gpu8: 10 + 150 + 10 + 100
    + 330 + 250 + 330 + 250 + 330 + 100 = 1860 ns; nothing else near the NIC's load (leaf
    uplinks 400 GB/s, NVLink 900 GB/s, receivers 6/7 n at most). Degraded 12/7 n / 50 GB/s
    + 1.86 us = 4028.39 us, slowdown 1 + 0.17 / 4028.22."""
    from netmodel.collectives.degraded import degraded_cost

    group = ("gpu0", "gpu1", "gpu2", "gpu3", "gpu8", "gpu16", "gpu24")
    n = 7 * 2 ** 24
    d = degraded_cost(b200_4, "all-to-all", n, group, links=[("gpu0", "leaf0")],
                      algorithm="direct", calibration=Calibration.ideal())
    assert d.healthy.time == pytest.approx(12 / 7 * n / NIC + 1690e-9, rel=1e-12)
    assert d.degraded.time == pytest.approx(12 / 7 * n / NIC + 1860e-9, rel=1e-12)
    assert d.degraded.time >= d.healthy.time
    router = Router(degrade(b200_4, links=[("gpu0", "leaf0")]))
    (step,) = generate("direct", "all-to-all", group, router.graph)
    load, latency = _loads(router, step.transfers)
    assert latency == pytest.approx(1860e-9, rel=1e-12)
    up = {u: x for (u, v), x in load.items()   # server 0's NICs, up: gpu1's alone
          if u in {f"gpu{i}" for i in range(8)} and str(v).startswith("leaf")}
    assert up == pytest.approx({"gpu1": 12 / 7}, rel=1e-12)


def test_repeated_legs_are_described_once_and_load_as_each(monkeypatch):
    """A direct all-to-all of 160 GPUs (20 x 8 H100, rail-optimized) relays 21,280 of its
    25,440 transfers (all but the 1,120 inside a server and the 3,040 between GPUs of one
    position): 46,720 legs, of which only 4,160 are distinct: a sender's legs to its 7
    server neighbours (the first legs land on them too) and the 19 from each GPU to its
    position in the other servers (every relayed second leg is one of them), 160 x (7 + 19).
    route_pxn.PxnRoutes._plan_legs describes those 4,160 once; the plan is still every leg's, so
    each NIC carries the 8 x 19 transfers of n / 160 its server sends to its position,
    19 / 20 each way (by hand; counting a repeated leg once: 19 / 160), each NVLink port the
    56 of its GPU's 63 that do not leave through its own NIC, 7 / 8; and the loads are
    bit-identical to those of the legs described one by one (any regrouping of the sums,
    as one leg of their summed bytes, moves the last bits)."""
    import netmodel.collectives.route_bulk as rb
    import netmodel.collectives.route_pxn as rp
    g = build("rail-optimized:domains=20")
    group = tuple(f"gpu{i}" for i in range(160))
    (step,) = generate("direct", "all-to-all", group, g)
    seen = []
    describe = rb.BulkRoutes._describe
    monkeypatch.setattr(rb.BulkRoutes, "_describe",
                        lambda self, s, d: seen.append(len(s)) or describe(self, s, d))
    links, load, *rest = Router(g).link_loads(step.transfers)
    assert seen == [4160]
    names = [Router(g).link_name(i) for i in links]
    by = dict(zip(names, load.tolist(), strict=True))
    for i in range(160):
        (leaf,) = [v for v in g[f"gpu{i}"] if str(v).startswith("leaf")]
        assert by[(f"gpu{i}", leaf)] == pytest.approx(19 / 20, rel=1e-12)
        assert by[(leaf, f"gpu{i}")] == pytest.approx(19 / 20, rel=1e-12)
        (nvs,) = [v for v in g[f"gpu{i}"] if str(v).startswith("nvs")]
        assert by[(f"gpu{i}", nvs)] == pytest.approx(7 / 8, rel=1e-12)
    assert not any("spine" in str(u) + str(v) for u, v in names)
    t = step.transfers   # the same pairs, bytes drawn at random: sums that regroup differ
    uneven = Pairs(t.nodes, t.src, t.dst, np.random.default_rng(0).random(len(t.src)),
                   p2p=True)
    got = Router(g).link_loads(uneven)
    seen.clear()
    monkeypatch.setattr(rp, "_LEGS_ONCE", 10 ** 9)   # every leg described
    for pairs, (lk, ld, *other) in ((step.transfers, (links, load, *rest)), (uneven, got)):
        links1, load1, *rest1 = Router(g).link_loads(pairs)
        assert np.array_equal(links1, lk) and load1.tobytes() == ld.tobytes()
        assert rest1 == other
    assert seen == [46720, 46720]
