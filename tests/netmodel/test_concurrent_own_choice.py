"""Groups at once choose their algorithms apart, each as it would alone (NCCL's
communicators tune apart), so ``alone`` is each group's own best and ``slowdown`` its time
together over that (netmodel/collectives/concurrent.py)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.concurrent import concurrent_cost, concurrent_linear
from netmodel.collectives.model import FabricCostModel
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric, scenario_calibration
from tests.netmodel.fabric_helpers import two_leaves


def _scenario_model(name: str) -> FabricCostModel:
    sc = get_scenario(name)
    return FabricCostModel(build_fabric(sc), placement="contiguous",
                           calibration=scenario_calibration(sc))


def test_lite_direct_groups_of_six_take_their_own_best():
    # lite-direct, contiguous groups of 6, all-reduce of 1 GiB: gpu0-gpu5 sit in one
    # scale-up domain (nvs0 reduces in the network), gpu30-gpu35 straddle two. The old
    # shared choice dropped in-network (it cannot run on the straddling groups) and ran
    # ring everywhere: gpu0-gpu5 alone 29.0 ms (1.81x its own best, 16.06 ms) and 57.96 ms
    # together, slowdown 2.0.
    m = _scenario_model("lite-direct")
    n = 2.0 ** 30
    r = concurrent_cost(m, 6, "all-reduce", n)
    assert len(r.groups) == 21
    for i, group in enumerate(r.groups):
        own = m.cost("all-reduce", n, group)   # the group alone, costed by itself
        assert r.alone[i, 0] == pytest.approx(own.time, rel=1e-12)
        assert (r.algorithms[i, 0], r.protocols[i, 0]) == (own.algorithm, own.protocol)
    first = r.groups.index(tuple(f"gpu{i}" for i in range(6)))
    assert r.algorithms[first, 0] == "in-network"
    # in-network inside nvs0 crosses only the group's own GPU-switch links, which no
    # other group's steps cross: together = alone
    assert r.time[first, 0] == r.alone[first, 0]
    assert r.slowdown[first, 0] == 1.0
    straddling = r.groups.index(tuple(f"gpu{i}" for i in range(30, 36)))
    assert r.algorithms[straddling, 0] == "ring"
    # the makespan is the straddling groups' ring, as before: every group on ring (the old
    # shared choice) ends at the same time (76.22 ms when written; h356: was that pin)
    assert r.makespan[0] == pytest.approx(r.time[straddling, 0], rel=0)
    assert r.time[straddling, 0] >= r.alone[straddling, 0]
    shared = concurrent_cost(m, 6, "all-reduce", n, algorithm="ring")
    assert r.makespan[0] == pytest.approx(shared.makespan[0], rel=1e-12)
    assert r.time[first, 0] < shared.time[first, 0]
    assert (r.algorithm[0], r.protocol[0]) == ("ring", "Simple")


def test_groups_of_different_shapes_choose_different_algorithms():
    # h100-dgx, contiguous groups of 6 at 1 MiB and 1 GiB: groups inside one server take
    # direct then in-network (NVLS), groups across two servers ring at both; each one's
    # time alone is its own best (before: the best of the algorithms every group runs,
    # 1.21x slower for gpu0-gpu5 at 1 GiB)
    m = _scenario_model("h100-dgx")
    n = np.array([2.0 ** 20, 2.0 ** 30])
    r = concurrent_cost(m, 6, "all-reduce", n)
    for i, group in enumerate(r.groups):
        for s, size in enumerate(n):
            own = m.cost("all-reduce", float(size), group)
            assert r.alone[i, s] == pytest.approx(own.time, rel=1e-12)
            assert r.algorithms[i, s] == own.algorithm
    assert {tuple(a) for a in r.algorithms.tolist()} == {("direct", "in-network"),
                                                         ("ring", "ring")}
    # a non-blocking fabric, every group on links of its own: no slowdown anywhere
    assert np.allclose(r.slowdown, 1.0, rtol=1e-12, atol=0)


def test_identical_groups_unchanged():
    # two pairs across one spine link each way (the module's example): both run direct,
    # each sends 1 GB over the shared spine link of 1 GB/s in both directions: 2 s
    # together, 1 s alone
    g = two_leaves(4, lambda i: i % 2)
    m = FabricCostModel(g, calibration=Calibration.ideal())
    r = concurrent_cost(m, [("gpu0", "gpu1"), ("gpu2", "gpu3")], "send-recv", 1e9)
    assert r.alone[:, 0].tolist() == [1.0, 1.0]
    assert r.time[:, 0].tolist() == [2.0, 2.0]
    assert r.algorithms[:, 0].tolist() == ["direct", "direct"]
    assert r.algorithm == ("direct",)


def test_groups_on_different_algorithms_share_a_link():
    # two leaves of 4 GPUs under one spine, every link 1 GB/s each way, ideal calibration,
    # candidates direct and ring, all-gather of 1 GB. A = gpu0, gpu4 (one per leaf); B =
    # gpu1, gpu2 | gpu5, gpu6 (two per leaf). Alone: A sends n/2 each way: 0.5 s by direct
    # (ring's one step is the same; direct is named first); B by ring sends n/4 a step
    # over leaf0 -> spine, 3 steps: 0.75 s (direct: gpu1 and gpu2 each send n/4 to gpu5 and
    # gpu6 over that link, n: 1 s). Together each runs its own: A's direct step and B's
    # first ring step load leaf0 -> spine with n/2 + n/4: both end at 0.75 s, A done; B's
    # two other ring steps then cross it alone, n/4 each: 0.75 + 2 x 0.25 = 1.25 s (link
    # sharing follows time; the old lockstep met A's step on every repetition of B's:
    # 3 x 0.75 = 2.25 s). The old shared choice ran direct on both (makespan n/2 + 4 x
    # n/4 = 1.5 s): A 1.5 s, not 0.75.
    g = _two_leaves_of_four()
    m = FabricCostModel(g, algorithms=("direct", "ring"), calibration=Calibration.ideal())
    a, b = ("gpu0", "gpu4"), ("gpu1", "gpu2", "gpu5", "gpu6")
    n = 1e9
    r = concurrent_cost(m, [a, b], "all-gather", n)
    assert r.algorithms[:, 0].tolist() == ["direct", "ring"]
    assert r.alone[:, 0] == pytest.approx([0.5, 0.75], rel=1e-12)
    assert r.time[:, 0] == pytest.approx([(n / 2 + n / 4) / 1e9,
                                          (n / 2 + n / 4 + 2 * n / 4) / 1e9], rel=1e-12)
    assert (r.algorithm[0], r.makespan[0]) == ("ring", pytest.approx(1.25, rel=1e-12))
    # the hottest links are the spine's, each way, crossed by both groups
    assert dict(r.hotspots)[("leaf0", "spine")] == 2


def _two_leaves_of_four() -> nx.Graph:
    return two_leaves(8, lambda i: i // 4)


def test_groups_of_different_sizes_share_a_link_in_time():
    # one algorithm (ring) on groups of 2 and 4, the fabric above: A = gpu0, gpu4 sends n/2
    # each way over the spine in its one step; B = gpu1, gpu2 | gpu5, gpu6, n/4 over it in
    # each of its 3 steps. Together: 0.75 s until A is done (n/2 + n/4 on leaf0 -> spine),
    # then B's two other steps alone, 0.25 s each: A 0.75 s, B 1.25 s (the old lockstep:
    # 3 x 0.75 = 2.25 s for B). concurrent_linear (the fabric search) gives the same lines.
    m = FabricCostModel(_two_leaves_of_four(), algorithm="ring",
                        calibration=Calibration.ideal())
    groups = [("gpu0", "gpu4"), ("gpu1", "gpu2", "gpu5", "gpu6")]
    n = 1e9
    r = concurrent_cost(m, groups, "all-gather", n)
    assert r.alone[:, 0] == pytest.approx([0.5, 0.75], rel=1e-12)
    assert r.time[:, 0] == pytest.approx([0.75, 1.25], rel=1e-12)
    _, a, b = concurrent_linear(m, groups, "all-gather")
    assert (a[0] + b[0] * n) == pytest.approx([0.75, 1.25], rel=1e-12)

