"""More circuit copies can slow the tree all-reduce on a torus of circuits: the cause is
the routing of the tree's edges that are no circuits, not the tree.

The cell: an OCS cell of 12 GPUs whose circuits are a 3x4 torus (``gpu i`` at row
``i // 4``, column ``i % 4``; a row is a ring of 4 GPUs, a column a ring of 3), ``r0``
copies of each column circuit, one of each row circuit, every circuit B = 25 GB/s, ideal
calibration (alpha = 1 us a payment, latencies 0).

The tree (NCCL's double binary tree over the ranks gpu0..gpu11 in order, the group's own
order: nothing in it reads a bandwidth) is the same 44 transfers of n/2 at 1 and 2 copies;
its step costs ``2 tree_depth(12) = 6`` alphas plus ``L n / B``, ``L`` the busiest link's
load in units of n. That link is the row circuit gpu5 -> gpu6 at both copies. What
crosses it:

* gpu5 -> gpu6 twice (tree 1's reduce, gpu5 up to its parent gpu6, and tree 2's
  broadcast, gpu5 down to its child gpu6): 2 x 1/2 = 1;
* gpu5 -> gpu7 and gpu4 -> gpu6 (two row hops, both ways round the row of 4 shortest,
  half each): 2 x 1/2 x 1/2 = 1/2;
* gpu9 -> gpu7 and gpu4 -> gpu2, each a column hop and two row hops (3 first hops, 3 last
  hops). At 1 copy every circuit is 1 B: gpu9's three first hops split a third each
  (each can pass on 2 B to gpu7, the bound of 3 B is met), and gpu5 halves its third
  between gpu6 and gpu4: 1/6 of each crosses gpu5 -> gpu6, 2 x 1/2 x 1/6 = 1/6.
  At 2 copies the router takes each transfer's own maximum flow, 4 B: into gpu7 are
  gpu6 -> gpu7 (1 B), gpu4 -> gpu7 (1 B) and the column gpu11 -> gpu7 (2 B), all full;
  gpu11's 2 B come from gpu10 and gpu8 (1 B each, their only way on), so gpu9's column
  hop gpu9 -> gpu5 (2 B) must leave gpu5 by its two row circuits, 1 B each: 1/4 of the
  transfer on gpu5 -> gpu6. gpu4 -> gpu2 alike (out of gpu4: 1 B to gpu5, 1 B to gpu7,
  2 B down the column to gpu0, whose 2 B take the two row circuits into gpu2 through
  gpu1 and gpu3; gpu5's 1 B can only go on by gpu6): 1/4. 2 x 1/2 x 1/4 = 1/4.

So, each transfer routed on its own, ``L`` = 1 + 1/2 + 1/6 = 5/3 at 1 copy and
1 + 1/2 + 1/4 = 7/4 at 2: 6 us + 5/3 n/B = 10.369 us at 64 KiB (1.12448 ms at 16 MiB) ->
6 us + 7/4 n/B = 10.588 us (1.18041 ms).
Each transfer routed alone as fast as it can be (its maximum flow) moves row hops of
transfers into gpu7 and gpu2 from the column side to the row of gpu5 and gpu6, where the
tree's inner ranks gpu4 and gpu6 sit. A routing that does not read bandwidths (ECMP by
hops, dimension order) would keep 1 copy's loads at 2 copies, and the row circuits'
loads with them: no slower (the extra copies could be left idle). So it is the model's
routing (netmodel/collectives/route_dags.py and route_flows.py, the per-transfer
maximum flow), not NCCL's tree. The same held on the torus builder's static torus
with one cable's bandwidth raised (3x4 and 4x4: tree at 64 KiB, ``auto`` picks it).

The router now spreads a step's transfers together
(netmodel/collectives/route_joint.py: the split over their shortest paths with the least
busy link), and a step is costed with that split. At both copies ``L`` = 1: no split
beats it, gpu5 -> gpu6 carrying the two transfers gpu5 -> gpu6 (n/2 each) whose one
shortest path is that circuit; and a split reaches it (its flows checked below: every
link on a shortest path of its transfers, each transfer's n/2 sent and received, no
circuit busier than n/B). 6 us + n/B = 8.621 us at 64 KiB (0.67709 ms at 16 MiB), at
1 and 2 copies: more copies no longer slow the tree.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netmodel.collectives.algorithms import generate
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_joint import joint_flows
from tests.netmodel.fabric_helpers import zero_latency
from topologies import build
from topologies.optical import ocs, realize

ALPHA = 1e-6
B = 25e9
KIB64 = 2**16
MIB16 = 2**24


def _pairs(a: int, b: int, r0: int, r1: int) -> list[tuple[str, str]]:
    """An a x b torus's circuits over gpu0 ... (row-major): each row circuit ``r1``
    times, each column circuit ``r0`` times."""
    p = a * b
    g = [f"gpu{i}" for i in range(p)]
    rows = [(g[i], g[i // b * b + (i % b + 1) % b]) for i in range(p)]
    cols = [(g[i], g[(i + b) % p]) for i in range(p)]
    return rows * r1 + cols * r0


def _cell(a: int, b: int, r0: int, r1: int, ideal: bool = True) -> FabricCostModel:
    """An OCS cell of a x b GPUs whose circuits are that torus, each circuit B (spare
    ports so that the colouring never refuses a cell, as in test_ocs_torus_collective)."""
    ports = 3 * (r0 + r1) + 1
    graph = realize(ocs(gpus=a * b, ports=ports, bandwidth=ports * B), _pairs(a, b, r0, r1))
    if ideal:
        return FabricCostModel(zero_latency(graph), calibration=Calibration.ideal(ALPHA))
    return FabricCostModel(graph, calibration=default_calibration())


def _load(m: FabricCostModel, link: tuple[str, str]) -> float:
    """The tree step's load (units of n) on a directed link."""
    step = generate("tree", "all-reduce", m.group(12), m.graph)[0]
    total = 0.0
    for s, d, f in step.transfers:
        r = m.router.route(s, d)
        total += sum(f * w for lk, w in zip(r.links, r.weights, strict=True)
                     if m.router.link_name(lk) == link)
    return total


@pytest.mark.parametrize("r0, load", [(1, 5 / 3), (2, 7 / 4)])
def test_tree_on_3x4_cell_by_hand(r0, load):
    """The derivation above, each transfer on its own route (Router.route): gpu5 ->
    gpu6's load, the busiest link's."""
    m = _cell(3, 4, r0, 1)
    assert _load(m, ("gpu5", "gpu6")) == pytest.approx(load, rel=1e-12)
    step = generate("tree", "all-reduce", m.group(12), m.graph)[0]
    per_byte: dict[tuple, float] = {}
    for s, d, f in step.transfers:
        r = m.router.route(s, d)
        for lk, w in zip(r.links, r.weights, strict=True):
            per_byte[lk] = per_byte.get(lk, 0.0) + f * w / m.router.bandwidth[lk]
    assert max(per_byte.values()) * B == pytest.approx(load, rel=1e-12)


@pytest.mark.parametrize("r0", [1, 2])
def test_tree_on_3x4_cell_together(r0):
    """The step spread together: ``L`` = 1 (the bound gpu5 -> gpu6's two neighbour
    transfers set, met by the flows checked), the tree's time 6 alpha + n/B at 64 KiB and
    16 MiB, at 1 and 2 copies alike."""
    from tests.netmodel.test_joint_routing_h478 import _check_flows

    m = _cell(3, 4, r0, 1)
    step = generate("tree", "all-reduce", m.group(12), m.graph)[0]
    transfers = list(step.transfers)
    forced = sum(f for s, d, f in transfers if (s, d) == ("gpu5", "gpu6"))
    assert forced == pytest.approx(1.0, rel=1e-12)  # the lower bound, n on a circuit of B
    flows = joint_flows(m.router, transfers)
    assert flows is not None
    _check_flows(m.router, transfers, flows, 1 / B)
    compiled = m.compiled("all-reduce", "tree", m.group(12)).steps[0]
    assert compiled.beta * B == pytest.approx(1.0, rel=1e-9)
    for n in (KIB64, MIB16):
        assert m.cost("all-reduce", n, 12, "tree").time == pytest.approx(
            6 * ALPHA + n / B, rel=1e-9)


def test_hand_figures():
    """The closed forms, as the defect report's numbers (us, ms)."""
    assert 6 * ALPHA + 5 / 3 * KIB64 / B == pytest.approx(10.369e-6, rel=1e-4)
    assert 6 * ALPHA + 7 / 4 * KIB64 / B == pytest.approx(10.588e-6, rel=1e-4)
    assert 6 * ALPHA + 5 / 3 * MIB16 / B == pytest.approx(1.12448e-3, rel=1e-5)
    assert 6 * ALPHA + 7 / 4 * MIB16 / B == pytest.approx(1.18041e-3, rel=1e-5)
    assert 6 * ALPHA + KIB64 / B == pytest.approx(8.621e-6, rel=1e-4)
    assert 6 * ALPHA + MIB16 / B == pytest.approx(0.67709e-3, rel=1e-5)


def test_tree_is_built_from_ranks():
    """The tree's transfers are the same at 1 and 2 copies (nothing in it reads a
    bandwidth): the slowdown is the routing's."""
    one, two = _cell(3, 4, 1, 1), _cell(3, 4, 2, 1)
    t1 = generate("tree", "all-reduce", one.group(12), one.graph)[0].transfers
    t2 = generate("tree", "all-reduce", two.group(12), two.graph)[0].transfers
    assert list(t1) == list(t2)


def test_routes_blind_to_copies_keep_the_time():
    """The claim that the routing is the cause: route the 2-copy cell's tree as the
    1-copy cell routes it (no route reading the copies) and every row circuit keeps its
    load, every column circuit halves its per-byte time: the bottleneck stays gpu5 ->
    gpu6 at 5/3 n / B, the 1-copy time, not 7/4."""
    one, two = _cell(3, 4, 1, 1), _cell(3, 4, 2, 1)
    step = generate("tree", "all-reduce", one.group(12), one.graph)[0]
    load: dict[tuple, float] = {}
    for s, d, f in step.transfers:
        r = one.router.route(s, d)
        for lk, w in zip(r.links, r.weights, strict=True):
            name = one.router.link_name(lk)
            load[name] = load.get(name, 0.0) + f * w
    per_byte = {k: v / two.graph.edges[k]["bandwidth"] for k, v in load.items()}
    worst = max(per_byte, key=per_byte.get)
    assert per_byte[worst] == pytest.approx(5 / 3 / B, rel=1e-12)
    assert per_byte[("gpu5", "gpu6")] == pytest.approx(5 / 3 / B, rel=1e-12)


_SIDES = st.sampled_from([(2, 3), (2, 4), (3, 3), (3, 4), (4, 4)])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(sides=(3, 4), r0=1, r1=1, more=1, nbytes=KIB64, ideal=True)
@given(sides=_SIDES, r0=st.integers(1, 2), r1=st.integers(1, 2), more=st.sampled_from([0, 1]),
       nbytes=st.sampled_from([KIB64, MIB16, 2**30]), ideal=st.booleans())
def test_more_copies_never_slow_auto(sides, r0, r1, more, nbytes, ideal):
    """One more copy along a dimension of a torus of circuits never makes ``auto``'s
    all-reduce slower (the new copy could be left idle)."""
    a, b = sides
    base = _cell(a, b, r0, r1, ideal)
    bigger = _cell(a, b, r0 + more, r1 + 1 - more, ideal)
    t = base.cost("all-reduce", nbytes, a * b).time
    assert bigger.cost("all-reduce", nbytes, a * b).time <= t * (1 + 1e-12)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(dims="3x4", index=None, nbytes=KIB64)
@given(dims=st.sampled_from(["3x4", "4x4", "3x3", "3x5"]), index=st.integers(0, 10**6),
       nbytes=st.sampled_from([KIB64, MIB16]))
def test_faster_cable_never_slows_auto_static(dims, index, nbytes):
    """A static torus with one cable's bandwidth doubled (``index`` picks it; None:
    gpu6-gpu7, the 3x4's row cable that the tree's bottleneck gpu5 -> gpu6 meets) is never
    slower under ``auto``."""
    g0 = zero_latency(build(f"torus:dims={dims},bandwidth=100e9"))
    edges = sorted(g0.edges())
    edge = ("gpu6", "gpu7") if index is None else edges[index % len(edges)]
    g1 = g0.copy()
    g1.edges[edge]["bandwidth"] *= 2
    p = sum(1 for _, d in g0.nodes(data=True) if d.get("kind") == "gpu")
    cal = Calibration.ideal(ALPHA)
    t0 = FabricCostModel(g0, calibration=cal).cost("all-reduce", nbytes, p).time
    t1 = FabricCostModel(g1, calibration=cal).cost("all-reduce", nbytes, p).time
    assert t1 <= t0 * (1 + 1e-12)


def test_faster_cable_never_slows_torus():
    """The torus algorithm on the torus builder's 2x4 (100 GB/s a GPU: the side of 2 one
    doubled cable of 50 GB/s, the side of 4 cables of 25 GB/s) with gpu0-gpu4's cable
    doubled. Rates r = 50 GB/s along both (twice a port, the side of 2 its one edge),
    weights w proportional to r s/(s - 1) = 100, 200/3: (0.6, 0.4); per byte of n,
    phase 1 max(0.6 (1/2)/50, 0.4 (3/4)/50) = 6e-3 /GB/s, phase 2 (the chunks cut by the
    other side) max(0.6 (3/4)/2/50, 0.4 (1/2)/4/50) = 4.5e-3: all-reduce 12 alpha +
    2 (10.5e-3) n / 1 GB/s = 0.364 ms at 16 MiB (ideal).

    The doubled cable is one of the side-of-2 dimension's four rings; the other three
    (gpu1-gpu5 ...) still move 50 GB/s and every GPU's chunk waits on them, so the rate
    stays 50 and the time 0.364 ms (the faster cable's extra is left idle). Taking the
    fastest member's rate (100) weighted every GPU's chunks (0.75, 0.25): phases
    0.75/2/50 = 7.5e-3 and 0.75 (3/8)/50 = 5.625e-3, 12 alpha + 2 (13.125e-3) n =
    0.452 ms, slower. ``auto`` picks the torus at both."""
    g0 = zero_latency(build("torus:dims=2x4,bandwidth=100e9"))
    g1 = g0.copy()
    g1.edges["gpu0", "gpu4"]["bandwidth"] *= 2
    cal = Calibration.ideal(ALPHA)
    hand = 12 * ALPHA + 2 * (6e-3 + 4.5e-3) * MIB16 / 1e9
    assert hand == pytest.approx(0.364e-3, rel=1e-3)
    assert 12 * ALPHA + 2 * (7.5e-3 + 5.625e-3) * MIB16 / 1e9 == pytest.approx(0.452e-3,
                                                                               rel=1e-3)
    t0 = FabricCostModel(g0, calibration=cal).cost("all-reduce", MIB16, 8)
    t1 = FabricCostModel(g1, calibration=cal).cost("all-reduce", MIB16, 8)
    assert (t0.algorithm, t0.time) == ("torus", pytest.approx(hand, rel=1e-12))
    assert (t1.algorithm, t1.time) == ("torus", pytest.approx(hand, rel=1e-12))
    assert t1.time <= t0.time * (1 + 1e-12)
