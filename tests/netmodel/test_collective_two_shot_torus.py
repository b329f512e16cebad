"""All-reduce on direct-connect fabrics against hand-derived closed forms (ideal calibration,
alpha = 1 us, zero route latency, 1 GiB): two-shot on full meshes, torus on tori.

Two-shot (vLLM csrc/custom_all_reduce.cuh, cross_device_reduce_2stage): a direct
reduce-scatter (every GPU sends n/p to each peer at once) then a direct all-gather. On a full
mesh of p GPUs with links of B bytes/s each, every transfer has a cable of its own:
2 alpha + 2 (n/p) / B = 2 alpha + 2 (p-1)/p n / ((p-1) B), the whole injection bandwidth.

Torus (Google ParaGraph's torus-2d reduce-scatter/all-gather: one stage per dimension, every
dimension busy in each on 1/k of the data): k chunks, chunk j reduce-scattering along
dimensions j, j+1, ... in turn, half each way round every ring, then all-gathering back.
Phase t moves chunk j's c (s-1)/s (c = w_j over the sides already reduced) over the two ports
of its dimension; each phase takes R = max(side) - 1 steps. Equal sides: w_j = 1/k; unequal,
the weights for the least sum of phases (the first phase even where no side is 2).
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.collectives.algo_torus import _torus_weights
from netmodel.collectives.algorithms import (
    ALGORITHMS,
    algorithms_for,
)
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.names import NCCL_OPS
from netmodel.collectives.results import bus_factor
from topologies import build

ALPHA = 1e-6
N = 2**30


# ---------------------------------------------------------------- two-shot on full meshes
MESH_B = 450e9 / 7  # full-mesh:n=8 of H100s: 450 GB/s per GPU over 7 cables


def test_two_shot_full_mesh_hand_value(ideal_model):
    # 2 us + 2 * (1 GiB / 8) / 64.29 GB/s = 4.178 ms (auto was bidirectional-ring, 14.63 ms)
    m = ideal_model("full-mesh:n=8")
    hand = 2 * ALPHA + 2 * (N / 8) / MESH_B
    assert hand == pytest.approx(4.1777e-3, rel=1e-4)
    assert m.cost("all-reduce", N, 8, "two-shot").time == pytest.approx(hand, rel=1e-9)
    r = m.cost("all-reduce", N, 8)
    assert (r.algorithm, r.time) == ("two-shot", pytest.approx(hand, rel=1e-9))


def test_one_shot_still_wins_small_messages(ideal_model):
    # one-shot (direct): alpha + n/B; two-shot: 2 alpha + n/(4B): one-shot below
    # n = 4/3 alpha B = 85.7 kB, two-shot above
    m = ideal_model("full-mesh:n=8")
    n = 1024.0
    assert m.cost("all-reduce", n, 8, "direct").time == pytest.approx(ALPHA + n / MESH_B)
    assert m.cost("all-reduce", n, 8, "two-shot").time == pytest.approx(
        2 * ALPHA + 2 * n / 8 / MESH_B)
    assert m.cost("all-reduce", n, 8).algorithm == "direct"
    cross = 4 / 3 * ALPHA * MESH_B
    assert m.cost("all-reduce", cross * 0.9, 8).algorithm == "direct"
    assert m.cost("all-reduce", cross * 1.1, 8).algorithm == "two-shot"


def test_two_shot_on_a_lite_group_mesh(ideal_model):
    # lite-groups: 4 Lites a group, pairwise cabled at 37.5 GB/s: 2 alpha + 2 (n/4) / 37.5 GB/s
    m = ideal_model("lite-groups")
    b = m.graph.edges["gpu0", "gpu1"]["bandwidth"]
    assert b == pytest.approx(37.5e9)
    group = ["gpu0", "gpu1", "gpu2", "gpu3"]
    hand = 2 * ALPHA + 2 * (N / 4) / b  # 14.32 ms (bidirectional-ring: 21.48 ms)
    shortest = min(a + b_ * N for _, _, a, b_, comp in m.candidates("all-reduce", tuple(group),
                                                                     "two-shot")
                   if comp.routing == "shortest")
    assert shortest == pytest.approx(hand, rel=1e-9)
    # each pair split 1 : 3 over its cable and the 112.5 GB/s switch ports
    # (netmodel.collectives.route_policies): a GPU's port carries 3/4 of its 3 transfers of
    # n/4, 9n/16 (a cable n/16 at 37.5 GB/s, less): 2 alpha + 2 (9n/16) / 112.5 GB/s
    split = 2 * ALPHA + 2 * (9 * N / 16) / (3 * b)   # 10.74 ms
    assert min(a + b_ * N for _, _, a, b_, comp in m.candidates("all-reduce", tuple(group),
                                                                "two-shot")
               if comp.routing == "split") == pytest.approx(split, rel=1e-9)
    # balanced: a GPU sending to 3 such partners at once sends S / (S + 3 C) = 1/2 of each
    # over the switch, its port 3n/8 at 112.5 GB/s and each cable n/8 at 37.5 GB/s, the
    # same time: 2 alpha + 2 (n/8) / 37.5 GB/s
    balanced = 2 * ALPHA + 2 * (N / 8) / b   # 7.16 ms
    r = m.cost("all-reduce", N, group, "two-shot")
    assert (r.routing, r.time) == ("balanced", pytest.approx(balanced, rel=1e-9))
    # faster than the base NVSwitch's reduction in the switch (11.93 ms): auto takes it
    assert m.cost("all-reduce", N, group).algorithm == "two-shot"
    m = ideal_model("lite-groups", algorithms=[a for a in ALGORITHMS if a != "in-network"])
    r = m.cost("all-reduce", N, group)
    assert (r.algorithm, r.time) == ("two-shot", pytest.approx(balanced, rel=1e-9))


@pytest.mark.parametrize("spec, group", [
    ("single-switch:n=8", 8),                                  # a switch, no cables between
    ("lite-groups", ["gpu0", "gpu1", "gpu2", "gpu4"]),         # gpu4 is in the next group
    ("torus:dims=4x4", 16),
])
def test_two_shot_only_on_pairwise_linked_groups(ideal_model, spec, group):
    m = ideal_model(spec)
    with pytest.raises(UserError, match="two-shot needs every two GPUs"):
        m.cost("all-reduce", N, group, "two-shot")
    assert m.cost("all-reduce", N, group).algorithm != "two-shot"


def test_two_shot_is_not_nccl(ideal_model):
    assert "two-shot" not in NCCL_OPS["all-reduce"]
    assert "two-shot" in algorithms_for("all-reduce")
    m = ideal_model("full-mesh:n=8", algorithms="nccl")
    assert m.cost("all-reduce", N, 8).algorithm != "two-shot"


def test_cli_algorithm_choices_come_from_the_registry():
    res = CliRunner().invoke(cli, ["collective", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.output.split()).replace("- ", "-")
    for name in ALGORITHMS:
        assert name in text, name
    res = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "full-mesh:n=8",
                                   "--algorithm", "two-shot", "--size", "1GiB", "--json"])
    assert res.exit_code == 0, res.output
    assert '"two-shot"' in res.output


# ---------------------------------------------------------------- torus
def _torus_hand(sides, b, n=N, alpha=ALPHA, side2=None, w=None):
    """Sum over phases of the slowest dimension's time, twice, plus 2 k R alpha."""
    k, rounds = len(sides), max(sides) - 1
    w = [1 / k] * k if w is None else w
    total = 0.0
    for t in range(k):
        worst = 0.0
        for j in range(k):
            a = (j + t) % k
            c = w[j] / np.prod([sides[(j + u) % k] for u in range(t)])
            s = sides[a]
            if s == 2:  # one neighbour, one edge of two cables
                worst = max(worst, c * n / 2 / side2)
            else:
                worst = max(worst, c * n * (s - 1) / s / 2 / b)
        total += worst
    return 2 * total + 2 * k * rounds * alpha


@pytest.mark.parametrize("dims, p, b, hand, before", [
    # 12 us + 2 (15/16) n / 450 GB/s: half the bidirectional ring (8.978 ms, auto's choice)
    ("4x4", 16, 112.5e9, 4.4859e-3, 8.978e-3),
    # 18 us + 2 (63/64) n / 450 GB/s (bidirectional-ring 14.219 ms)
    ("4x4x4", 64, 75e9, 4.7158e-3, 14.219e-3),
])
def test_torus_hand_values(ideal_model, dims, p, b, hand, before):
    m = ideal_model(f"torus:dims={dims}")
    sides = [int(x) for x in dims.split("x")]
    assert _torus_hand(sides, b, side2=2 * b) == pytest.approx(hand, rel=1e-4)
    assert m.cost("all-reduce", N, p, "torus").time == pytest.approx(
        _torus_hand(sides, b, side2=2 * b), rel=1e-9)
    r = m.cost("all-reduce", N, p)
    assert r.algorithm == "torus"
    assert m.cost("all-reduce", N, p, "bidirectional-ring").time == pytest.approx(before,
                                                                                   rel=1e-3)


# Unequal sides: the chunks weighted (equal chunks: the longest ring set each phase).
# A GPU sends r = 2 b along a dimension (a side of 2: its one edge, of 2 b). Chunk j's time
# in phase t, per byte of n over r: w_j (s_a - 1)/s_a / (sides cut before), a = j + t.
@pytest.mark.parametrize("dims, p, b, w, rs, before, equal", [
    # 4x8 (r = 225 GB/s): the first phase ends on both dimensions at once with w_j
    # proportional to s_j/(s_j - 1) = 4/3, 8/7: w = (7/13, 6/13); phase 1 21/52 n/r, phase 2
    # max(7/13 7/32, 6/13 3/32) = 49/416: 217/416 n/r. All-reduce 28 us + 2 (217/416) n/r
    # = 5.0067 ms (equal chunks 5.2479: 1/2 (7/8) + 1/2 (7/8)/4 = 35/64 n/r)
    ("4x8", 32, 112.5e9, (7 / 13, 6 / 13), 217 / 416, 9.308e-3, 5.2479e-3),
    # 4x4x8 (r = 150 GB/s): w proportional to 4/3, 4/3, 8/7: (7, 7, 6)/20; phases 21/80,
    # 0.35 (7/8)/4 = 49/640, 0.35 (7/8)/16 = 49/2560: 0.358203125 n/r. 42 us + 2 x = 5.1702 ms
    # (equal chunks 5.5226)
    ("4x4x8", 128, 75e9, (0.35, 0.35, 0.30), 0.358203125, 14.4587e-3, 5.5226e-3),
    # 2x3x4 (r = 150 GB/s): c[j, t] = (1/2, 1/3, 1/8), (2/3, 1/4, 1/24), (3/4, 1/8, 1/12).
    # The first phase balanced, (12, 9, 8)/29, gives 0.39655 n/r: the side-2 chunk is only
    # halved and carries 1/3 in phase 2. Least sum: phase 1 balanced on chunks 1, 2
    # (2/3 w1 = 3/4 w2), phase 2 on chunks 0, 1 (1/3 w0 = 1/4 w1): w = (27, 36, 32)/95,
    # phases 24/95, 9/95, 27/760: 291/760 n/r. 18 us + 2 (291/760) n/r = 5.4997 ms
    ("2x3x4", 24, 75e9, (27 / 95, 36 / 95, 32 / 95), 291 / 760, 13.766e-3, 5.7845e-3),
])
def test_torus_weighted_chunks_on_unequal_sides(ideal_model, dims, p, b, w, rs, before, equal):
    sides = [int(x) for x in dims.split("x")]
    k, rounds, r = len(sides), max(sides) - 1, 2 * b
    assert _torus_weights(sides, [r] * k) == pytest.approx(w, rel=1e-9)
    assert _torus_hand(sides, b, side2=r, w=w) == pytest.approx(
        2 * rs * N / r + 2 * k * rounds * ALPHA, rel=1e-12)
    assert _torus_hand(sides, b, side2=r) == pytest.approx(equal, rel=1e-4)
    m = ideal_model(f"torus:dims={dims}")
    hand = 2 * rs * N / r + 2 * k * rounds * ALPHA
    assert hand < equal * (1 - 0.02)
    r_ar = m.cost("all-reduce", N, p)
    assert (r_ar.algorithm, r_ar.time) == ("torus", pytest.approx(hand, rel=1e-9))
    for op in ("reduce-scatter", "all-gather"):
        assert m.cost(op, N, p).time == pytest.approx(rs * N / r + k * rounds * ALPHA,
                                                      rel=1e-9)
    assert m.cost("all-reduce", N, p, "bidirectional-ring").time == pytest.approx(before,
                                                                                   rel=1e-3)


def test_torus_weights_equal_sides_unchanged_and_rates():
    # equal sides and rates: 1/k exactly (bit for bit the equal chunks of 503dc51)
    assert _torus_weights([4, 4], [225e9] * 2) == [0.5, 0.5]
    assert _torus_weights([4, 4, 4], [150e9] * 3) == [1 / 3] * 3
    # equal sides, one dimension's ports 3x faster: w proportional to r_j s_j/(s_j-1), 1:3;
    # phases 1/4 (3/4)/r and max(1/4 (3/4)/(4 3r), 3/4 (3/4)/(4 r)) = 9/64 /r: 21/64 n/r
    # against equal chunks' 3/8 + 3/32 = 15/32 n/r
    assert _torus_weights([4, 4], [1.0, 3.0]) == pytest.approx([0.25, 0.75], rel=1e-12)


def test_torus_on_a_plane_of_a_3d_torus(ideal_model):
    # gpu0..gpu15 of a 4x4x4 torus: the plane of first coordinate 0, a 4x4 torus of 75 GB/s
    # ports: 12 us + 2 (15/16) n / 300 GB/s = 6.7229 ms
    m = ideal_model("torus:dims=4x4x4")
    assert m.group(16) == tuple(f"gpu{i}" for i in range(16))
    r = m.cost("all-reduce", N, 16)
    assert r.algorithm == "torus"
    assert r.time == pytest.approx(12 * ALPHA + 2 * 15 / 16 * N / 300e9, rel=1e-9)


@pytest.mark.parametrize("dims, p, b, before", [
    # k (s-1) alpha + (p-1)/p n / (2 k b): 6 us + (15/16) n / 450 GB/s = 2.2430 ms
    # (auto was bidirectional-ring, 4.489 ms)
    ("4x4", 16, 112.5e9, 4.4889e-3),
    # 9 us + (63/64) n / 450 GB/s = 2.3578 ms (bidirectional-ring 7.109 ms)
    ("4x4x4", 64, 75e9, 7.1094e-3),
])
@pytest.mark.parametrize("op", ["reduce-scatter", "all-gather"])
def test_torus_reduce_scatter_all_gather_hand_values(ideal_model, dims, p, b, before, op):
    m = ideal_model(f"torus:dims={dims}")
    sides = [int(x) for x in dims.split("x")]
    k, s = len(sides), sides[0]
    hand = k * (s - 1) * ALPHA + (p - 1) / p * N / (2 * k * b)
    assert hand == pytest.approx({16: 2.2430e-3, 64: 2.3578e-3}[p], rel=1e-4)
    assert m.cost(op, N, p, "torus").time == pytest.approx(hand, rel=1e-9)
    r = m.cost(op, N, p)
    assert (r.algorithm, r.time) == ("torus", pytest.approx(hand, rel=1e-9))
    assert m.cost(op, N, p, "bidirectional-ring").time == pytest.approx(before, rel=1e-3)
    # the all-reduce is the two halves
    assert m.cost(op, N, p, "torus").time * 2 == pytest.approx(
        m.cost("all-reduce", N, p, "torus").time, rel=1e-12)


@pytest.mark.parametrize("op", ["reduce-scatter", "all-gather"])
def test_torus_reduce_scatter_all_gather_groups_and_nccl(ideal_model, op):
    assert "torus" not in NCCL_OPS[op] and "torus" in algorithms_for(op)
    m = ideal_model("torus:dims=4x4x4")
    with pytest.raises(UserError, match="at least two whole"):
        m.cost(op, N, 4, "torus")
    with pytest.raises(UserError, match="torus fabric"):
        ideal_model("full-mesh:n=8").cost(op, N, 8, "torus")
    # a plane of the 4x4x4 torus: 6 us + (15/16) n / 300 GB/s
    assert m.cost(op, N, 16).time == pytest.approx(6 * ALPHA + 15 / 16 * N / 300e9, rel=1e-9)
    assert ideal_model("torus:dims=4x4", algorithms="nccl").cost(op, N, 16).algorithm == "ring"


@pytest.mark.parametrize("spec, group, match", [
    ("torus:dims=4x4x4", 4, "at least two whole"),                     # one ring
    ("torus:dims=4x4x4", ["gpu0", "gpu1", "gpu4", "gpu5"], "wholly"),  # a 2x2 patch
    ("full-mesh:n=8", 8, "torus fabric"),
    ("single-switch:n=8", 8, "torus fabric"),
    ("lite-groups:base=torus:dims=4x4", 16, "torus fabric"),           # Lites, not the torus
])
def test_torus_refusals(ideal_model, spec, group, match):
    m = ideal_model(spec)
    with pytest.raises(UserError, match=match):
        m.cost("all-reduce", N, group, "torus")


def test_torus_is_not_nccl(ideal_model):
    assert "torus" not in NCCL_OPS["all-reduce"]
    m = ideal_model("torus:dims=4x4", algorithms="nccl")
    assert m.cost("all-reduce", N, 16).algorithm != "torus"
    res = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "torus:dims=4x4",
                                   "--group", "16", "--algorithm", "torus", "--size", "1GiB"])
    assert res.exit_code == 0, res.output
    assert "algorithm: torus" in res.output


# ---------------------------------------------------------------- invariants
SIZES = 2.0 ** np.arange(6, 36, 1)


@pytest.mark.parametrize("spec, p", [("full-mesh:n=8", 8), ("full-mesh:n=5", 5),
                                     ("lite-groups", 4), ("torus:dims=4x4", 16),
                                     ("torus:dims=2x3x4", 24), ("torus:dims=4x4x4", 64)])
def test_auto_no_slower_than_any_candidate_and_monotone(spec, p):
    m = FabricCostModel(build(spec))  # shipped calibration
    auto = m.collective_time("all-reduce", SIZES, p)
    curves = m.curves("all-reduce", SIZES, p)
    for name, t in curves.items():
        assert np.all(auto <= t * (1 + 1e-12)), name
    assert np.all(np.diff(auto) >= 0)
    group = m.group(p)
    inject = min(sum(d["bandwidth"] for _, _, d in m.graph.edges(x, data=True)) for x in group)
    for name, t in curves.items():
        assert np.all(SIZES / t * bus_factor("all-reduce", p) <= inject * (1 + 1e-12)), name


@pytest.mark.parametrize("spec, extra, healthy, after", [
    # two-shot needs every cable (vLLM's custom all-reduce needs full NVLink): falls back
    ("full-mesh:n=8", [], "healthy: two-shot 5.083 ms, slowdown 3.5x",
     "algorithm: bidirectional-ring"),
    # torus routes the lost hop around
    ("torus:dims=4x4", ["--group", "16"], "healthy: torus 5.479 ms, slowdown 1.33x",
     "algorithm: torus"),
])
def test_a_lost_cable(spec, extra, healthy, after):
    res = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", spec, *extra,
                                   "--size", "1GiB", "--fail", "gpu0/gpu1"])
    assert res.exit_code == 0, res.output
    assert healthy in res.output and after in res.output


@pytest.mark.parametrize("spec, p", [("torus:dims=4x4", 16), ("torus:dims=4x8", 32),
                                     ("torus:dims=2x3x4", 24), ("torus:dims=4x4x8", 128)])
@pytest.mark.parametrize("op", ["all-reduce", "reduce-scatter", "all-gather"])
@pytest.mark.parametrize("fail", [(), (("gpu0", "gpu1"),)])
def test_torus_invariants_every_op(spec, p, op, fail):
    # auto no slower than any candidate, every curve monotone in size, busbw no more than
    # what a GPU injects (its links' sum), healthy and with a cable lost
    g = build(spec)
    for u, v in fail:
        g.remove_edge(u, v)
    m = FabricCostModel(g)  # shipped calibration
    auto = m.collective_time(op, SIZES, p)
    curves = m.curves(op, SIZES, p)
    assert "torus" in curves
    for name, t in curves.items():
        assert np.all(auto <= t * (1 + 1e-12)), name
        assert np.all(np.diff(t) >= 0), name
    group = m.group(p)
    inject = min(sum(d["bandwidth"] for _, _, d in m.graph.edges(x, data=True)) for x in group)
    for name, t in curves.items():
        assert np.all(SIZES / t * bus_factor(op, p) <= inject * (1 + 1e-12)), name


@pytest.mark.parametrize("op, spec, p, healthy, after", [
    # the weighted chunks keep their design weights and route the lost hop around
    # (equal chunks: healthy 6.438 ms, with the cable lost 9.606 ms)
    ("all-reduce", "torus:dims=4x8", 32, "healthy: torus 6.146 ms, slowdown 1.49x",
     "time 9.168 ms"),
    ("reduce-scatter", "torus:dims=4x4", 16, "healthy: torus 2.744 ms, slowdown 1.33x",
     "time 3.649 ms"),
])
def test_a_lost_cable_torus_every_op(op, spec, p, healthy, after):
    res = CliRunner().invoke(cli, ["collective", op, "--fabric", spec, "--group", str(p),
                                   "--size", "1GiB", "--fail", "gpu0/gpu1"])
    assert res.exit_code == 0, res.output
    assert healthy in res.output and after in res.output
    assert "algorithm: torus" in res.output


def test_torus_weights_read_the_fabric_rates(ideal_model):
    # a 4x4 torus whose second dimension's cables carry twice as much: r = 225, 450 GB/s;
    # w proportional to r_j s_j/(s_j-1) = 300, 600: (1/3, 2/3). Phase 1 (1/3)(3/4)/225 =
    # (2/3)(3/4)/450 = 1/900, phase 2 max((1/3)(3/16)/450, (2/3)(3/16)/225) = 1/1800 per GB/s:
    # reduce-scatter 6 us + n / 600 GB/s = 1.7956 ms (equal chunks: 6 us + n / 480 GB/s)
    g = ideal_model("torus:dims=4x4").graph
    for u, v, d in g.edges(data=True):
        if int(u[3:]) // 4 == int(v[3:]) // 4:
            d["bandwidth"] *= 2
    m = FabricCostModel(g, calibration=Calibration.ideal(ALPHA))
    hand = 6 * ALPHA + N / 600e9
    assert hand == pytest.approx(1.7956e-3, rel=1e-4)
    assert m.cost("reduce-scatter", N, 16, "torus").time == pytest.approx(hand, rel=1e-9)
