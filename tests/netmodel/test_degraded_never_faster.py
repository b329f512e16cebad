"""A failure never speeds a collective up (helper 86's audit: 0.971x with a failed NIC link).

A GPU cut off from its NIC (its NIC link or its rail leaf failed) reaches the scale-out
network through another GPU over NVLink. NCCL sends each channel through one NIC,
rail-aligned, and a GPU whose NIC is gone uses another NIC; the model spread the detoured
traffic over every NVLink neighbour's NIC at once (all shortest paths through GPUs), so the
degraded route had up to 7 NICs where the healthy one has 1. Now such a route lends one
GPU's port (:meth:`~netmodel.collectives.route_search.SearchedRoutes._one_forwarder`).

Hand derivations (2 x 8 B200-HGX rail-optimized, ideal calibration: time = bytes over the
bottleneck bandwidth + the slowest path's latency): NIC 50 GB/s, cable GPU-leaf 20 m = 100
ns, NVLink 2 m copper = 10 ns, leaf-spine 50 m = 250 ns, NVSwitch 150 ns, leaf and spine
330 ns each (topologies/common.py, compute/data/gpus.toml). A 2-GPU all-reduce is one
exchange of the whole 64 MiB buffer.
"""

import itertools

import pytest

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.degraded import degrade, degraded_cost
from netmodel.collectives.routing import Router
from topologies.registry import build

N = 2 ** 26
NIC = 50e9


@pytest.fixture(scope="module")
def b200():
    return build("rail-optimized:domains=2,gpu=B200-HGX")


def test_failed_nic_link_is_not_faster(b200):
    """gpu0's NIC link fails: gpu0 -> nvs0 -> gpu1 -> leaf1 -> spine -> leaf0 -> gpu8 (one
    NIC, gpu1's, for all the traffic): latency 10 + 150 + 10 + 100 + 330 + 250 + 330 + 250
    + 330 + 100 = 1860 ns; healthy gpu0 -> leaf0 -> gpu8: 100 + 330 + 100 = 530 ns. Before:
    gpu0's traffic over 7 NICs, slowdown 0.9707 (default calibration; 0.97 ideal)."""
    r = degraded_cost(b200, "all-reduce", N, ["gpu0", "gpu8"], links=[("gpu0", "leaf0")],
                      calibration=Calibration.ideal())
    assert r.healthy.time == pytest.approx(N / NIC + 530e-9, rel=1e-12)
    assert r.degraded.time == pytest.approx(N / NIC + 1860e-9, rel=1e-12)
    assert r.slowdown >= 1.0
    default = degraded_cost(b200, "all-reduce", N, ["gpu0", "gpu8"],
                            links=[("gpu0", "leaf0")])
    assert default.slowdown >= 1.0


def test_failed_leaf_uses_one_other_nic(b200):
    """leaf0 fails (gpu0's and gpu8's rail): gpu0 -> nvs0 -> gpu1 -> leaf1 -> gpu9 -> nvs1
    -> gpu8, every link carrying all of it: 10 + 150 + 10 + 100 + 330 + 100 + 10 + 150 + 10
    = 870 ns. Before: 7 rails at once, 2^26 / 350e9 + 870 ns, slowdown 0.157x."""
    broken = degrade(b200, nodes=["leaf0"])
    router = Router(broken)
    route = router.route("gpu0", "gpu8")
    assert [router.link_name(i) for i in route.links] == [
        ("gpu0", "nvs0"), ("nvs0", "gpu1"), ("gpu1", "leaf1"), ("leaf1", "gpu9"),
        ("gpu9", "nvs1"), ("nvs1", "gpu8")]
    assert list(route.weights) == [1.0] * 6
    assert route.latency == pytest.approx(870e-9, rel=1e-12)
    r = degraded_cost(b200, "all-reduce", N, ["gpu0", "gpu8"], nodes=["leaf0"],
                      calibration=Calibration.ideal())
    assert r.degraded.time == pytest.approx(N / NIC + 870e-9, rel=1e-12)
    assert r.slowdown >= 1.0


def test_gpu_only_forwarding_keeps_every_path():
    """Rings and tori (no switches) keep ECMP over all shortest GPU-forwarded paths."""
    g = build("torus:dims=4x4")
    router = Router(g)
    route = router.route("gpu0", "gpu5")  # two hops, two ways round
    assert len(route.links) == 4
    assert sorted(route.weights) == [0.5] * 4


FABRICS = {
    "rail-b200": ("rail-optimized:domains=2,gpu=B200-HGX",
                  [((), ("leaf0",)), ((("gpu0", "leaf0"),), ()), ((("gpu8", "leaf0"),), ()),
                   ((), ("spine0",)), ((("gpu0", "nvs0"),), ()), ((), ("leaf1",))]),
    "rail-h100": ("rail-optimized:domains=4,servers_per_leaf=2",
                  [((), ("leaf0",)), ((("gpu0", "leaf0"),), ()), ((), ("spine0",)),
                   ((), ("leaf8",))]),
    "nvl72x2": ("nvl72:racks=2", [((), ("leaf0",)), ((("gpu0", "leaf0"),), ())]),
    "lite-rail": ("lite-groups:base=[rail-optimized:domains=2],lites=4",
                  [((), ("leaf0",)), ((("gpu0", "leaf0"),), ()), ((("gpu0", "nvs0"),), ())]),
    "lite-switch": ("lite-groups:base=[single-switch:n=4],lites=4",
                    [((("gpu0", "nvs0"),), ())]),
    "torus": ("torus:dims=4x4", [((), ("gpu5",))]),
}
OPS = ("all-reduce", "all-to-all", "send-recv", "all-gather")

#: A failed direct cable between two neighbours (torus, Lite mesh) spreads over every
#: detour while the healthy pair's own route is its one cable (~0.33x): the healthy side
#: runs the degraded side's plans too where collectives lay their own routes
#: (test_degraded_direct_connect_h585.py). The GPU-forwarded (PXN-like) routes that were shorter than the healthy route
#: through the spines (0.1-0.3% on 8-GPU groups spread over both domains: a GPU that lost
#: its NIC borrowed the NIC on each peer's rail) now go through one stand-in NIC per GPU
#: (route_search.SearchedRoutes._stand_in; test_a_nic_less_gpu_keeps_one_stand_in).


def _cases():
    for name, (_spec, fails) in FABRICS.items():
        for (links, nodes), op, grp in itertools.product(fails, OPS, ("pair", "block",
                                                                      "spread")):
            tag = "+".join([*("/".join(x) for x in links), *nodes])
            yield pytest.param(name, links, nodes, op, grp, id=f"{name}-{tag}-{op}-{grp}")


_BUILT: dict = {}


@pytest.mark.parametrize(("name", "links", "nodes", "op", "grp"), list(_cases()))
def test_failure_never_lowers_time(name, links, nodes, op, grp):
    spec = FABRICS[name][0]
    g = _BUILT.get(spec) or _BUILT.setdefault(spec, build(spec))
    gpus = [n for n, k in g.nodes(data="kind") if k == "gpu"]
    group = {"pair": [gpus[0], gpus[len(gpus) // 2]],
             "block": gpus[:8] if len(gpus) > 8 else gpus[:4],
             "spread": gpus[::max(1, len(gpus) // 8)][:8]}[grp]
    group = [x for x in group if x not in nodes]
    if op == "send-recv":
        group = group[:2]
    r = degraded_cost(g, op, N, group, links=links, nodes=nodes,
                      calibration=Calibration.ideal())
    assert r.degraded.time >= r.healthy.time, (r.healthy.time, r.degraded.time)


def test_a_nic_less_gpu_keeps_one_stand_in():
    """A GPU that lost its NIC sends and receives through one other GPU's NIC, the nearest
    over NVLink (one of its own server first), whatever the peer: NCCL started again gives
    it the NICs nearest it (ncclTopoGetLocalNet: by its own device index and channel, not
    by the peer; a non-rank's NIC through the host, never relayed by that GPU). The search
    picked the lender on each peer's shortest path: the GPU of its tray on the peer's rail,
    not a rank of the group, over NVLink, below the healthy route through the spines.

    2 x NVL72 (trays of 4, rail = place in the tray), leaf0 failed (rail 0 of both racks);
    NVLink 10 ns, NVSwitch 150 ns, GPU-leaf cable 100 ns, leaf and spine 330 ns, leaf-spine
    250 ns. gpu0 -> gpu90 (rack 1, rail 2): healthy gpu0 -> leaf0 -> spine -> leaf2 ->
    gpu90, 100 + 330 + 250 + 330 + 250 + 330 + 100 = 1690 ns; before, gpu0 -> nvs0 -> gpu2
    -> leaf2 -> gpu90, 10 + 150 + 10 + 100 + 330 + 100 = 700 ns; now through gpu0's stand-in
    gpu1 (its tray's first GPU with a NIC), 170 + 1690 = 1860 ns. gpu18 -> gpu72 receives
    through gpu73's NIC: 1690 + 170 = 1860 ns (before, gpu74's on gpu18's rail: 700). gpu0
    -> gpu72, both stand-ins on rail 1: 170 + 100 + 330 + 100 + 170 = 870 ns (healthy 530).
    The direct all-to-all of the 8 GPUs spread over the racks (one a tray) then has the
    latency 1860 ns, not 870, where the healthy has 1690 (0.9988x before)."""
    g = _BUILT.get("nvl72:racks=2") or _BUILT.setdefault("nvl72:racks=2",
                                                          build("nvl72:racks=2"))
    router = Router(degrade(g, nodes=["leaf0"]))
    for a, b, lat, via in (("gpu0", "gpu90", 1860e-9, ("nvs0", "gpu1")),
                           ("gpu18", "gpu72", 1860e-9, ("gpu73", "nvs1")),
                           ("gpu0", "gpu72", 870e-9, ("leaf1", "gpu73"))):
        route = router.route(a, b)
        names = [router.link_name(i) for i in route.links]
        assert route.latency == pytest.approx(lat, rel=1e-12), (a, b)
        assert via in names, (a, b, names)
        assert not [x for x in names if "gpu2" in x or "gpu74" in x]
    group = [f"gpu{i}" for i in range(0, 144, 18)]
    r = degraded_cost(g, "all-to-all", N, group, nodes=["leaf0"], algorithm="direct",
                      calibration=Calibration.ideal())
    assert r.degraded.time - r.healthy.time == pytest.approx(170e-9, rel=1e-6)


def test_a_lite_without_its_cable_uses_its_neighbours():
    """Lites (4 a big GPU, meshed by 15 ns co-packaged links, each its own 100 ns cable to
    its rail's leaf): gpu0's cable failed, its stand-in is gpu1, a mesh neighbour on the
    same rail's leaf, whatever the peer: gpu0 -> gpu1 -> leaf0 -> gpu32 = 15 + 530 = 545
    ns, and to gpu56 (rail 6) 15 + 1690 = 1705 ns; before, gpu56 through gpu24's NIC on
    rail 6 over NVLink, 700 ns, below the healthy 1690. The spread 8-Lite ring all-reduce
    (14 steps, each hop's latency up by 15 ns at most): degraded = healthy + 14 x 15 ns."""
    spec = FABRICS["lite-rail"][0]
    g = _BUILT.get(spec) or _BUILT.setdefault(spec, build(spec))
    router = Router(degrade(g, links=[("gpu0", "leaf0")]))
    assert router.route("gpu0", "gpu32").latency == pytest.approx(545e-9, rel=1e-12)
    assert router.route("gpu56", "gpu0").latency == pytest.approx(1705e-9, rel=1e-12)
    group = [f"gpu{i}" for i in range(0, 64, 8)]
    r = degraded_cost(g, "all-reduce", N, group, links=[("gpu0", "leaf0")],
                      calibration=Calibration.ideal())
    assert r.degraded.time - r.healthy.time == pytest.approx(14 * 15e-9, rel=1e-6)


@pytest.mark.parametrize("spec", ["torus:dims=4x4", "lite-groups:base=[single-switch:n=4],lites=4"])
def test_failed_neighbour_cable(spec):
    """A neighbour pair whose cable failed, with the fabric's latencies: the detours,
    three times its cable's rate, are paths of the healthy fabric too, which the healthy
    pair runs: the same time (a strict expected failure before, ~0.33x)."""
    g = build(spec)
    r = degraded_cost(g, "send-recv", N, ["gpu0", "gpu1"], links=[("gpu0", "gpu1")],
                      calibration=Calibration.ideal())
    assert r.degraded.time == r.healthy.time and r.healthy_routes == "degraded"


def test_rings_replan_over_surviving_rails(b200):
    """16 B200 over both domains, leaf0 failed (rail 0 of both): the rings are laid over the
    7 rails left, each on 1/7 of the data (NCCL started again on the degraded fabric), not
    rail 0's ring through a borrowed NIC at twice its load (1.57x with default calibration
    after b8fa301). Ideal calibration: 30 steps, each bound by a NIC carrying n / (16 x 8)
    healthy and n / (16 x 7) degraded at 50 GB/s, the same 5.82 us of latency."""
    group = [f"gpu{i}" for i in range(16)]
    r = degraded_cost(b200, "all-reduce", N, group, nodes=["leaf0"], algorithm="ring",
                      calibration=Calibration.ideal())
    assert r.healthy.time == pytest.approx(30 * N / (128 * NIC) + 5.82e-6, rel=1e-12)
    assert r.degraded.time == pytest.approx(30 * N / (112 * NIC) + 5.82e-6, rel=1e-12)
    assert r.slowdown == pytest.approx(1.1403, abs=1e-4)


def test_an_unused_failed_cable_leaves_the_ring_alone():
    """Both sides embed the ring the same way (helper 206): the degraded side took the
    faster of the group's order and a greedy nearest-neighbour order, the healthy side the
    group's order only, so a failure nowhere near the group 'sped up' a ring listed out of
    physical order (torus 3x4, 6 GPUs placed at random, gpu10-gpu11 failed: 0.519x).

    8-GPU ring fabric, per-link bandwidth B = 1 GB/s, no latency, ideal calibration; group
    listed gpu0, gpu2, gpu1, gpu3; gpu5-gpu6 fails, which no shortest path between the four
    uses. A ring all-reduce is 2(p - 1) = 6 steps of a chunk c = n / 4 on every ring hop.
    In the listed order (0->2 via 1, 2->1, 1->3 via 2, 3->0 via 2 and 1) links 1->2 and
    2->1 carry 2 chunks a step: 6 x 2c / B = 3 n / B. Nearest-neighbour order 0, 1, 2, 3
    (3->0 back via 2 and 1): every link 1 chunk, 6 c / B = 1.5 n / B, before the failure
    as after it."""
    g = _line_ring(8)
    n = 8e9
    r = degraded_cost(g, "all-reduce", n, ["gpu0", "gpu2", "gpu1", "gpu3"],
                      links=[("gpu5", "gpu6")], algorithm="ring",
                      calibration=Calibration.ideal())
    assert r.degraded.time == pytest.approx(1.5 * n / 1e9, rel=1e-12)
    assert r.healthy.time == pytest.approx(1.5 * n / 1e9, rel=1e-12)
    assert r.slowdown == pytest.approx(1.0, rel=1e-12)


def test_random_groups_on_a_torus_are_not_sped_up_by_a_far_failure():
    """The driver's case: torus 3x4, groups of 4-6 placed at random, one cable failed."""
    g = build("torus:dims=3x4")
    for size, seed in ((4, 1), (5, 0), (6, 0)):
        r = degraded_cost(g, "all-reduce", N, size, links=[("gpu10", "gpu11")],
                          placement="random", seed=seed)
        assert r.slowdown >= 1.0, (size, seed, r.slowdown)


def _line_ring(n):
    """A ring of ``n`` GPUs, each cable 1 GB/s each way, no latency."""
    import networkx as nx
    g = nx.Graph(name=f"ring of {n}", spec="", gpus=n)
    for i in range(n):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    for i in range(n):
        g.add_edge(f"gpu{i}", f"gpu{(i + 1) % n}", bandwidth=1e9, latency=0.0,
                   medium="copper", lanes=1)
    return g


def test_a_cut_off_leaf_borrows_one_nic_not_two():
    """rail-optimized 3 x 4 H100 (4 GPUs a server), leaf1's two spine links failed; gpu1
    (rail 1, server 0) to gpu4 (rail 0, server 1). The route split over two lending GPUs on
    different branches, gpu0's NIC (via nvs0) and gpu5's (via leaf1 and nvs1): two NICs
    where the healthy route has one, slowdown 0.50x (helper 206). One forwarder, as NCCL's
    PXN sends a channel through one NIC: gpu1 -> nvs0 -> gpu0 -> leaf0 -> gpu4, latency 10 +
    150 + 10 + 100 + 330 + 100 = 700 ns (healthy through the spines: 100 + 330 + 250 + 330
    + 250 + 330 + 100 = 1690 ns, the documented PXN-latency exception, 0.9993x: a
    communicator of gpu1 and gpu4 has no rank on rail 0 in server 0 for NCCL's PXN)."""
    g = build("rail-optimized:domains=3,domain_size=4,gpus_per_server=4")
    r = degraded_cost(g, "all-reduce", N, ["gpu1", "gpu4"],
                      links=[("leaf1", "spine0"), ("leaf1", "spine1")],
                      calibration=Calibration.ideal())
    assert r.healthy.time == pytest.approx(N / NIC + 1690e-9, rel=1e-12)
    assert r.degraded.time == pytest.approx(N / NIC + 700e-9, rel=1e-12)


def test_a_nic_less_gpu_to_another_server_is_not_searched(b200):
    """A route between a GPU without a NIC and a GPU of another scale-up network (no path
    but through the scale-out network) is its stand-ins' legs, made without the search whose
    answer they replaced (a failed leaf under a direct all-to-all of 2,048 GPUs on
    rail-optimized:domains=512,spine_radix=256 searched 16,320 such pairs: 21.5 -> 10.3 s
    CPU in bench_collectives, the same time). gpu0's cable failed: gpu0 <-> gpu8 through gpu1's NIC (1860 ns, as in
    test_failed_nic_link_is_not_faster), both ways; gpu0 -> gpu5 (one server) over nvs0,
    150 + 2 x 10 ns. (The templates' search of switched routes, ``gpu_transit=False``, is
    not the one replaced.)"""
    router = Router(degrade(b200, links=[("gpu0", "leaf0")]))
    searched = []

    def spy(real):
        def call(*a, **k):
            if k.get("gpu_transit", True):
                searched.append(a)
            return real(*a, **k)
        return call

    router._search, router._from_dag = spy(router._search), spy(router._from_dag)
    for a, b in (("gpu0", "gpu8"), ("gpu8", "gpu0")):
        route = router.route(a, b)
        assert route.latency == pytest.approx(1860e-9, rel=1e-12)
        assert {("gpu1", "leaf1"), ("leaf1", "gpu1")} & {router.link_name(i)
                                                         for i in route.links}
    assert searched == []
    assert router.route("gpu0", "gpu5").latency == pytest.approx(170e-9, rel=1e-12)


@pytest.mark.xfail(strict=True, reason="left: a NIC-less GPU's one stand-in sits on its peers' "
                   "rail; NCCL spreads its channels over every NIC nearest it")
def test_a_stand_in_on_the_peers_rail_left():
    """test_a_nic_less_gpu_keeps_one_stand_in's fabric with leaf2 failed (rail 2 of both
    racks) instead of leaf0, on a group of rails 1 and 2 (gpu1, gpu18, gpu37, gpu54, ...):
    a NIC-less GPU's stand-in is its tray's GPU with a NIC nearest at or below its rail
    (route_search._own_nic), rail 1 (gpu90's gpu89, gpu18's gpu17), where gpu1, gpu37,
    gpu73 and gpu109 sit. gpu1 -> leaf1 -> gpu89 -> nvs1 -> gpu90: 700 ns, where the
    healthy route climbs to the spines (1690 ns): 671.959 us against 672.779 (0.998781x).
    (The stand-in was the tray's first GPU with a NIC, rail 0, and the group of rails 0 and
    2 showed the same.) Any one stand-in lands on some group's peer rail. NCCL spreads a
    NIC-less GPU's channels over all the NICs nearest it (src/graph/search.cc,
    ncclTopoGetLocalNet: ``localNets[(dev % localGpuCount, bits mirrored where
    localNetCount is a power of two, + channelId % netsPerGpu) % localNetCount]``,
    netsPerGpu = ceil(localNetCount / localGpuCount) by default; 2.2x:
    ``dev`` mirrored + ``channelId % ceil(...)``), so some channel crosses the spines (1860
    ns).

    No single NIC from NCCL's rule fixes it (helper 231). The tray-mates are no ranks, so
    gpu90 reaches its tray's NICs through the host, not PXN (paths.cc adds a PXN step only
    through a GPU of the communicator's topology), and gpu90 is its NICs' one local GPU
    (localGpuCount 1). With the three equally near, today's channel 0 takes
    ``localNets[dev % 1]`` = ``localNets[0]``, gpu88's. 2.2x's ``localNets[dev % 3]`` =
    gpu91's (rail 3) passes the group of rails 0 and 2, but the group on rails 3 and 2
    (gpu3, gpu18, gpu39, gpu54, ...) then gives the same 0.998781x (measured at e5b65a7).
    Which NICs are nearest depends
    on the host (PCIe, Grace C2C), which the graph does not hold; NCCL's per-channel spread
    (ncclTopoGetNchannels: at least one channel per NIC) would cross the spines here but,
    without the GPU's host link, lets a NIC-less aggregator's bytes leave through several
    NICs, faster than through its one healthy NIC.

    A pair shows it as well: gpu18 <-> gpu73 all-reduce (rails 2 and 1, the racks apart),
    gpu18 -> nvs0 -> gpu17 -> leaf1 -> gpu73, 170 + 530 = 700 ns against 1690: 1343.867 ->
    1342.877 us (0.99926x); and test_collective_every_builder's rail-optimized leaf3 case
    has the same cause. Where both ends lost their NIC (test_failed_leaf_uses_one_other_nic)
    a spread over the 7 NICs an HGX server's NVSwitch puts equally near gives 7 NICs' rate
    (0.157x), where NCCL's nearest NIC is the one on the GPU's PCIe switch or host (NCCL's
    topology holds only ranks' GPUs, so a non-rank's NIC is reached through the host,
    which the graph holds neither as a link nor as a latency)."""
    g = _BUILT.get("nvl72:racks=2") or _BUILT.setdefault("nvl72:racks=2",
                                                          build("nvl72:racks=2"))
    group = [f"gpu{18 * j + (j % 2 == 0)}" for j in range(8)]
    r = degraded_cost(g, "all-to-all", N, group, nodes=["leaf2"], algorithm="direct",
                      calibration=Calibration.ideal())
    assert r.degraded.time >= r.healthy.time


def test_a_failed_gpu_outside_the_group(b200):
    """gpu0 fails, outside the group gpu1, gpu2, gpu6 (server 0) and gpu8, gpu10, gpu12,
    gpu13, gpu15 (server 1); direct all-to-all, 64 MiB, ideal. PXN relays to the rank of the
    sender's server at the peer's device index (ncclTopoGetNetDev: ``peerInfo.nvmlDev``,
    ncclTopoDevToRank), which a failed GPU does not change. Healthy, only gpu1/gpu6 -> gpu10
    and server 1 -> gpu2 are relayed (by gpu2 and gpu10); gpu0 is no rank, so it lends its
    NIC to no one, and none of the group's routes crosses its links: the degraded fabric
    routes every transfer as the healthy one, the same time to the last bit. Counting a
    GPU's position among the GPUs left in its server instead (before keep_devices), gpu1
    took position 0 and gpu6 position 5: gpu2 -> gpu8 was relayed by gpu1 onto rail 1,
    gpu1 -> gpu13 by gpu6, 1176.10 -> 1008.49 us (0.857x). Found by the random
    degraded-vs-healthy search (as old as PXN, 6ff745c)."""
    group = ["gpu1", "gpu2", "gpu6", "gpu8", "gpu10", "gpu12", "gpu13", "gpu15"]
    r = degraded_cost(b200, "all-to-all", N, group, nodes=["gpu0"], algorithm="direct",
                      calibration=Calibration.ideal())
    assert r.degraded.time == r.healthy.time
    g = degrade(b200, nodes=["gpu0"])
    assert [g.nodes[f"gpu{i}"]["device"] for i in (1, 6, 8, 15)] == [1, 6, 0, 7]
    assert "device" not in b200.nodes["gpu1"]   # the healthy fabric is left as it was
