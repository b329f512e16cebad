"""Invariants of collective costs on every registered fabric builder, for every op and
algorithm: busbw within what a GPU can inject, more bandwidth never slower, the three ways
of asking for one cost agree, a fabric's symmetries leave a cost alone, and the torus and
ring algorithms' times are the alpha-beta closed forms derived by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.comm import OPERATIONS
from compute.errors import UserError
from netmodel.collectives.algorithms import SEND_RECV_OPS, algorithms_for
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.results import bus_factor
from tests.netmodel.fabric_helpers import zero_latency
from topologies import build
from topologies.registry import REGISTRY

#: A small fabric of every registered builder (test_every_builder_has_a_fabric keeps the
#: list whole as builders are added).
FABRICS = {
    "single-switch": "single-switch:n=8",
    "flat": "flat:n=12,planes=4",
    "leaf-spine": "leaf-spine:leaves=3,radix=6",
    "fat-tree": "fat-tree:k=4",
    "rail-optimized": "rail-optimized:domains=3,domain_size=4,gpus_per_server=4",
    "superpod": "superpod",
    "nvl72": "nvl72:racks=2",
    "ring": "ring:n=7",
    "full-mesh": "full-mesh:n=5",
    "torus": "torus:dims=3x5",
    "lite-groups": "lite-groups:base=[single-switch:n=4],lites=3",
    "ocs": "ocs:gpus=12,ports=4,logical=torus:3x4",
}
SIZES = np.array([1.0, 7.0, 4096.0, 2.0**20, 2.0**27, 2.0**34])
RUN = settings(max_examples=25, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
_GRAPHS: dict = {}


def _graph(spec: str, factor: float = 1.0):
    key = (spec, factor)
    if key not in _GRAPHS:
        g = build(spec) if factor == 1.0 else _graph(spec).copy()
        if factor != 1.0:
            for _, _, d in g.edges(data=True):
                d["bandwidth"] *= factor
        _GRAPHS[key] = g
    return _GRAPHS[key]


def test_every_builder_has_a_fabric():
    assert set(FABRICS) == set(REGISTRY)


@st.composite
def cases(draw):
    """(spec, placement, group size, op, algorithm)."""
    spec = draw(st.sampled_from(sorted(FABRICS.values())))
    p = draw(st.integers(2, min(12, _graph(spec).graph["gpus"])))
    op = draw(st.sampled_from(OPERATIONS))
    return (spec, draw(st.sampled_from(["contiguous", "spread", "random"])), p, op,
            draw(st.sampled_from(algorithms_for(op))))


def _sweep(spec, placement, p, op, algorithm, factor=1.0):
    """The model and its sweep over SIZES, or None where the algorithm cannot run."""
    m = FabricCostModel(_graph(spec, factor), placement=placement, seed=3, validated=True)
    group = m.group(p)
    try:
        return m, group, m.sweep(op, SIZES, group, algorithm)
    except UserError:
        return None


@RUN
@given(case=cases())
def test_busbw_within_what_a_gpu_injects(case):
    """nccl-tests' bus factors count the bytes each GPU must send (or receive), so without
    reduction in a switch busbw is at most the smallest GPU's own link rate; with it
    (NVLS, SHARP, a hierarchical all-reduce with NVLS inside), each GPU still sends its
    buffer once and receives the result once: algbw at most that rate."""
    spec, placement, p, op, algorithm = case
    got = _sweep(spec, placement, p, op, algorithm)
    if got is None:
        return
    m, group, sw = got
    g = m.graph
    inject = min(sum(d["bandwidth"] for _, _, d in g.edges(x, data=True)) for x in group)
    in_switch = any(s.in_network for s in m.compiled(op, algorithm, group).steps)
    rate = SIZES / sw.time * (1.0 if in_switch else bus_factor(op, p))
    assert np.all(rate <= inject * (1 + 1e-9)), (rate / inject).max()


@RUN
@given(case=cases())
def test_twice_the_bandwidth_is_never_slower(case):
    """Every link's bandwidth doubled, one algorithm: no size slower. NCCL's send/recv ops
    are left out: NCCL picks their protocol by size against a threshold that grows with
    the channels it counts on a faster path (protocol_lines.p2p_size_range), so LL may run where
    Simple was faster (lite-groups, send-recv on 32 GPUs: 1.82x at 64 KiB, 1.95x at 128 KiB)."""
    spec, placement, p, op, algorithm = case
    if op in SEND_RECV_OPS:
        return
    slow, fast = (_sweep(spec, placement, p, op, algorithm, f) for f in (1.0, 2.0))
    if slow is None:
        return
    assert fast is not None
    assert np.all(fast[2].time <= slow[2].time * (1 + 1e-12))


@RUN
@given(case=cases())
def test_cost_sweep_and_collective_time_agree(case):
    """One size costed alone (cost), among others (sweep) and under auto by the placed
    group's size (collective_time): the same seconds and the same choice."""
    spec, placement, p, op, algorithm = case
    got = _sweep(spec, placement, p, op, algorithm)
    if got is None:
        return
    m, group, sw = got
    for i in (0, 3, 5):
        r = m.cost(op, SIZES[i], group, algorithm)
        assert r.time == pytest.approx(sw.time[i], rel=1e-12)
        assert (r.algorithm, r.protocol) == (sw.algorithm[i], sw.protocol[i])
    auto = m.sweep(op, SIZES, group)
    assert np.allclose(m.collective_time(op, SIZES, p), auto.time, rtol=1e-12, atol=0)
    assert np.all(auto.time <= sw.time * (1 + 1e-12))


#: (fabric, a group, its image under a symmetry of the fabric), GPUs by number
SYMMETRIC = [
    ("ring:n=8", [0, 2, 5], [3, 5, 0]),                        # rotation
    ("ring:n=7", [0, 1, 2, 3, 4], [2, 3, 4, 5, 6]),
    ("torus:dims=4x4", [0, 5, 10], [3, 4, 9]),                  # translation by (0, 3)
    ("torus:dims=3x5", [0, 1, 2, 5, 6, 7], [8, 9, 5, 13, 14, 10]),  # by (1, 3)
    ("fat-tree:k=4", [0, 1, 2, 3, 4, 5], [8, 9, 10, 11, 12, 13]),  # pod 0 -> pod 2
    ("leaf-spine:leaves=4,radix=8", [0, 1, 2, 3, 4, 5], [8, 9, 10, 11, 12, 13]),
    ("rail-optimized:domains=4", [0, 1, 2, 8, 9, 10], [16, 17, 18, 24, 25, 26]),
    ("nvl72:racks=2", [0, 1, 2, 3, 4, 5, 6, 7], [72, 73, 74, 75, 76, 77, 78, 79]),
    ("lite-groups", [0, 1, 2, 3, 4, 5], [5, 4, 7, 6, 0, 1]),    # Lite groups 0, 1 swapped
    ("ocs:logical=ring", [0, 1, 2, 3, 4], [5, 6, 7, 8, 9]),
    ("superpod", list(range(16)), list(range(32, 48))),
    ("flat:n=16", [0, 1, 2], [13, 14, 15]),
]


@pytest.mark.parametrize(("spec", "a", "b"), SYMMETRIC)
def test_a_symmetry_of_the_fabric_leaves_every_cost_alone(spec, a, b):
    m = FabricCostModel(_graph(spec), validated=True)
    ga, gb = (tuple(f"gpu{i}" for i in x) for x in (a, b))
    ran = 0
    for op in OPERATIONS:
        for algorithm in (*algorithms_for(op), None):
            try:
                ta = m.sweep(op, SIZES, ga, algorithm)
            except UserError:
                with pytest.raises(UserError):
                    m.sweep(op, SIZES, gb, algorithm)
                continue
            tb = m.sweep(op, SIZES, gb, algorithm)
            np.testing.assert_allclose(tb.time, ta.time, rtol=1e-12)
            ran += 1
    assert ran >= len(OPERATIONS) + 1


def _ideal(spec: str, alpha: float = 0.0) -> FabricCostModel:
    return FabricCostModel(zero_latency(build(spec)), calibration=Calibration.ideal(alpha))


@pytest.mark.parametrize(("dims", "busbw"), [
    # sides a x b, each GPU's rate B over 2 ports a side (one doubled cable on a side of 2),
    # the data in two chunks w and 1 - w, each reduce-scattered along one side then the
    # other, both sides at once: per byte of n, in units of n / B, phase 1 takes
    # max(2 w (a-1)/a, 2 (1-w) (b-1)/b), phase 2 max(2 w (b-1)/(a b), 2 (1-w) (a-1)/(a b))
    # (a side of 2: its half-time, the doubled cable); all-gather mirrors it. Least over w:
    ("4x4", 1.0),          # w = 1/2: 3/4 + 3/16 = 15/16 = (p-1)/p: the bound
    ("3x5", 11 / 12),      # w = 6/11: 8/11 + 16/55 = 56/55; (14/15) / (56/55) = 11/12
    ("2x4", 5 / 6),        # w = 3/5: 3/5 + 9/20 = 21/20; (7/8) / (21/20) = 5/6
])
def test_torus_all_reduce_busbw_by_hand(dims, busbw):
    m = _ideal(f"torus:dims={dims}")
    p = m.gpus
    rate = sum(d["bandwidth"] for _, _, d in m.graph.edges("gpu0", data=True))
    n = 2.0**30
    for op in ("all-reduce", "reduce-scatter", "all-gather"):
        r = m.cost(op, n, p, "torus")
        assert r.busbw == pytest.approx(busbw * rate, rel=1e-9), op


@settings(max_examples=20, deadline=None)
@given(p=st.integers(3, 8), n=st.floats(1.0, 2.0**34), alpha=st.floats(0.0, 1e-5))
def test_ring_all_reduce_on_a_full_mesh_is_the_closed_form(p, n, alpha):
    """A full mesh of p GPUs splits a GPU's rate B over p - 1 cables: the ring uses one
    each way, B / (p-1), for 2(p-1) steps of n/p each: 2(p-1)/p n (p-1)/B + 2(p-1) alpha;
    the bidirectional ring halves the bytes on each cable."""
    n = float(round(n))
    m = _ideal(f"full-mesh:n={p}", alpha)
    cable = m.graph.edges["gpu0", "gpu1"]["bandwidth"]
    rate = sum(d["bandwidth"] for _, _, d in m.graph.edges("gpu0", data=True))
    assert cable * (p - 1) == pytest.approx(rate)
    steps = 2 * (p - 1)
    ring = m.cost("all-reduce", n, p, "ring").time
    assert ring == pytest.approx(steps * n / p / cable + steps * alpha, rel=1e-9)
    both = m.cost("all-reduce", n, p, "bidirectional-ring").time
    assert both == pytest.approx(steps * n / p / (2 * cable) + steps * alpha, rel=1e-9)


#: switched fabrics, where every route is a shortest one through switches: removing a part
#: can only take paths away. On fabrics whose collectives lay their own routes (ring,
#: torus, full mesh, OCS circuits, Lites on a tier-0 switch) a failure can force a longer
#: route that shares fewer links (ring:n=8, reduce on gpu5-gpu7 by tree, gpu6-gpu7 failed:
#: 1.46 ms -> 736 us), and the greedy ring order may find a better ring on the failed
#: fabric than on the healthy one (torus 3x5, all-reduce of 4 GiB on 7 GPUs under auto,
#: gpu0-gpu1 failed: 59.6 -> 39.8 ms); the model routes shortest paths only, so the healthy
#: side runs the degraded side's plans there too (degraded.lays_own_routes;
#: test_a_failed_link_never_speeds_a_collective_up).
SWITCHED = ["fat-tree:k=4", "leaf-spine:leaves=3,radix=8,oversubscription=2",
            "rail-optimized:domains=3,domain_size=4,gpus_per_server=4", "flat:n=12,planes=4",
            "lite-groups:base=[leaf-spine:leaves=2,radix=4],lites=2", "nvl72:racks=2"]


def _pxn_relays(g) -> bool:
    """Whether NCCL's PXN may relay on ``g``: GPUs of two servers or more, some wired to
    both a scale-up (tier-0) switch and a switch of tier >= 1."""
    gpus = [x for x, d in g.nodes(data=True) if d["kind"] == "gpu"]
    return len({g.nodes[x].get("server") for x in gpus} - {None}) >= 2 and any(
        {g.nodes[y].get("tier") for y in g[x] if g.nodes[y]["kind"] != "gpu"} >= {0, 1}
        for x in gpus)


def test_pxn_relays_only_where_servers_have_nvlink_and_nics():
    assert [_pxn_relays(_graph(s)) for s in SWITCHED] == [False, False, True, False, False,
                                                           True]


@settings(RUN, max_examples=12, derandomize=True)   # the case it drew once: below, pinned
@given(spec=st.sampled_from(SWITCHED), data=st.data())
def test_a_failure_never_speeds_a_collective_up(spec, data):
    """A failed switch or link (not one that stops or cuts off a member): the survivors,
    all of the group, are never faster than before, for one algorithm or under auto; but
    NCCL's send/recv ops where PXN relays (:func:`_pxn_relays`): a GPU cut off from NVLink
    may unload a relay (rail-optimized 3x4, direct all-to-all of 8 at random, nvs0-gpu1
    failed: 0.877x, test_degraded_direct_connect_h585's strict xfail
    test_a_gpu_off_nvlink_unloads_a_pxn_relay_left), which this test could draw by chance."""
    from netmodel.collectives.degraded import degraded_cost

    g = _graph(spec)
    p = data.draw(st.integers(2, min(12, g.graph["gpus"])))
    op = data.draw(st.sampled_from([o for o in OPERATIONS
                                    if not _pxn_relays(g) or o not in SEND_RECV_OPS]))
    algorithm = data.draw(st.sampled_from([None, *algorithms_for(op)]))
    switches = sorted(x for x, d in g.nodes(data=True) if d["kind"] != "gpu")
    links = sorted(g.edges())
    if data.draw(st.booleans()):
        failed = {"nodes": [data.draw(st.sampled_from(switches))]}
    else:
        failed = {"links": [data.draw(st.sampled_from(links))]}
    n = data.draw(st.sampled_from([1.0, 65536.0, 2.0**26, 2.0**32]))
    try:
        r = degraded_cost(g, op, n, p, algorithm=algorithm, placement="random",
                          seed=data.draw(st.integers(0, 50)), **failed)
    except UserError:   # the algorithm does not run, or every member stopped
        return
    if r.lost or r.cut:
        return
    assert r.degraded.time >= r.healthy.time * (1 - 1e-12)


@pytest.mark.xfail(strict=True, reason="left: the NIC-less GPUs' one stand-in "
                   "(route_search._own_nic, rail 3 -> rail 2) sits on the peer gpu2's rail, "
                   "so the degraded routes skip the spines the healthy ones (NCCL's own "
                   "NICs) cross; the cause of test_degraded_never_faster's "
                   "test_a_stand_in_on_the_peers_rail_left")
def test_a_failed_rail_leaf_speeds_a_small_direct_all_reduce_left():
    """The case test_a_failure_never_speeds_a_collective_up drew at random (before its
    examples were fixed): rail-optimized 3 x 4 (servers of 4), 3 GPUs placed at random
    (seed 3: gpu2 rail 2, gpu7 and gpu11 rail 3), auto (direct), 1 byte, leaf3 failed:
    healthy 10.99 us, degraded 10.17 us (0.925x); ring, tree, halving-doubling alike
    (0.84-0.89x). The one-shot step's longest route, by hand (links 100 ns GPU-leaf, 250
    leaf-spine, 10 GPU-NVSwitch; switches 330 ns, NVSwitch 150): healthy gpu2 -> leaf2 ->
    spine -> leaf3 -> gpu7 1690 ns (gpu7 <-> gpu11 under leaf3 530); degraded, gpu7's and
    gpu11's stand-ins are gpu6 and gpu10, the NICs nearest at or below rail 3 (rail 2,
    gpu2's): gpu2 -> leaf2 -> gpu6 -> nvs1 -> gpu7 700 ns, gpu7 -> gpu6 -> leaf2 -> gpu10
    -> gpu11 870; 1690 - 870 = 820 ns = 10.99 - 10.17 us. With stand-ins on rail 0 or 1
    (NCCL's channel 0, localNets[0]) the degraded route is 1690 + 170 = 1860 ns: 11.16
    us, 1.0155x. The healthy side is NCCL's: a collective's channel uses the NIC of its
    node's own graph (ncclTopoGetNetDev: 'Honor the net device in the graph',
    graph->inter), each node's search over its own ranks (gpu2's NIC2, gpu7's NIC3), and
    PXN relays only through a rank (ncclTopoGetIntermediateRank; gpu3 is none), so the
    rails' mismatch crosses the spines. The fix is the stand-in's
    (test_degraded_never_faster.test_a_stand_in_on_the_peers_rail_left)."""
    from netmodel.collectives.degraded import degraded_cost

    g = _graph("rail-optimized:domains=3,domain_size=4,gpus_per_server=4")
    r = degraded_cost(g, "all-reduce", 1.0, 3, placement="random", seed=3, nodes=["leaf3"])
    assert not r.lost and not r.cut
    assert r.degraded.time >= r.healthy.time * (1 - 1e-12)


#: every link of a fabric with at most this many is failed in turn; of a larger one, a few
EVERY_LINK = 48


@settings(RUN, max_examples=10)
@given(spec=st.sampled_from(sorted(FABRICS.values())), data=st.data())
def test_a_failed_link_never_speeds_a_collective_up(spec, data):
    """Every builder's small fabric, each of its links failed in turn (a few drawn where it
    has more than EVERY_LINK): the group, all of it left, is never faster than before, for
    one algorithm or under auto. The healthy side runs the degraded side's ring order, and
    on the fabrics whose collectives lay their own routes its routes too; elsewhere routes
    are the switches', and removing a link takes paths away, but for NCCL's send/recv
    ops, whose PXN relays a GPU cut off from NVLink may unload
    (test_degraded_direct_connect_h585.test_a_gpu_off_nvlink_unloads_a_pxn_relay_left)."""
    from netmodel.collectives.degraded import degraded_cost, lays_own_routes

    g = _graph(spec)
    own = lays_own_routes(g)
    p = data.draw(st.integers(2, min(12, g.graph["gpus"])))
    op = data.draw(st.sampled_from([o for o in OPERATIONS if own or o not in SEND_RECV_OPS]))
    algorithm = data.draw(st.sampled_from([None, *algorithms_for(op)]))
    placement = data.draw(st.sampled_from(["contiguous", "random"]))
    n = data.draw(st.sampled_from([1.0, 65536.0, 2.0**26, 2.0**32]))
    try:
        FabricCostModel(g, placement=placement, seed=3).cost(op, n, p, algorithm)
    except UserError:   # the algorithm does not run on this group
        return
    links = sorted(g.edges())
    if len(links) > EVERY_LINK:
        links = data.draw(st.lists(st.sampled_from(links), min_size=1, max_size=4,
                                   unique=True))
    for link in links:
        try:
            r = degraded_cost(g, op, n, p, algorithm=algorithm, placement=placement, seed=3,
                              links=[link])
        except UserError:   # the algorithm does not run on the degraded fabric
            continue
        if r.lost or r.cut:
            continue
        assert r.degraded.time >= r.healthy.time * (1 - 1e-12), (link, r.slowdown)
        assert r.healthy_routes == "own" or own


@settings(RUN, max_examples=8)
@given(case=cases(), size=st.sampled_from(["1", "3000", "1MiB", "256MiB"]))
def test_costs_and_collective_give_one_cost(case, size):
    """netmodel costs' row and netmodel collective's answer for one op, group size,
    algorithm and size on a builder's fabric: the same seconds, algorithm and protocol."""
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli

    spec, placement, p, op, algorithm = case
    common = ["--fabric", spec, "--placement", placement, "--seed", "3"] \
        if placement == "random" else ["--fabric", spec, "--placement", placement]
    run = CliRunner().invoke
    row = run(cli, ["costs", "--ops", op, "--groups", str(p), "--sizes", size,
                    "--algorithm", algorithm, "--format", "json", *common])
    one = run(cli, ["collective", op, "--group", str(p), "--size", size,
                    "--algorithm", algorithm, "--json", *common])
    assert (row.exit_code == 0) == (one.exit_code == 0), (row.output, one.output)
    if row.exit_code:
        assert row.exit_code == one.exit_code == 2
        return
    got, want = json.loads(row.output)["rows"], json.loads(one.output)
    assert len(got) == 1
    assert got[0]["seconds"] == pytest.approx(want["time"], rel=1e-12)
    assert (got[0]["algorithm"], got[0]["protocol"]) == (want["algorithm"], want["protocol"])
