"""Groups running different algorithms at once cost their send/recv on their own channels.

A concurrent costing whose groups choose different algorithms routes every group's steps
together and reads each group's lines off those loads (concurrent_choice.mixed_lines). Those
lines must be the ones the group has alone or beside groups on one algorithm: NCCL's LL
send/recv on each group's own path (cost.combine's ``path``: the channels NCCL gives a peer on
a path slower than the flagship's) and Simple's lines by channel, each at its own sizes
(protocol_lines.channel_lines). Where the groups share no link, each group's time together is
then its time alone.

On ``lite-direct`` an all-to-all of 2 GPUs and one of 4 take different algorithms (pairwise
and direct: the mixed costing); the 4 Lites' direct all-to-all under LL ran on NCCL's
flagship channels shrunk with the 37.5 GB/s mesh link (4 KiB: 7.354 us together, 7.302
alone). On ``h100-dgx`` a 2-GPU direct all-to-all under Simple runs 2/3 of its rate up to 512
MiB (its channels); the mixed lines took the whole rate (16 MiB: 57.22 us, alone 79.84).
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.concurrent_choice import mixed_classes, mixed_lines
from netmodel.collectives.concurrent_groups import prepared_groups
from netmodel.collectives.concurrent_loads import evaluate_loads

KIB = 2 ** 10
MIB = 2 ** 20


@pytest.fixture(scope="module")
def lite():
    from netmodel.study.scenario_collectives import ScenarioCollectives

    return ScenarioCollectives("lite-direct").model(2)


@pytest.fixture(scope="module")
def dgx():
    from netmodel.study.scenario_collectives import ScenarioCollectives

    return ScenarioCollectives("h100-dgx").model(2)


# LL sizes (the 4 Lites' direct all-to-all runs LL to 128 KiB) and Simple sizes
SIZES = [4 * KIB, 16 * KIB, 64 * KIB, 128 * KIB, 256 * KIB, MIB, 16 * MIB]


def test_lite_mixed_groups_as_alone(lite):
    pair, quad = ("gpu0", "gpu1"), ("gpu4", "gpu5", "gpu6", "gpu7")
    r = concurrent_cost(lite, [pair, quad], "all-to-all", SIZES)
    # the mixed costing: the groups run different algorithms at every size
    assert set(r.algorithms[0].tolist()) == {"pairwise"}
    assert set(r.algorithms[1].tolist()) == {"direct"}
    assert set(r.protocols[1].tolist()) == {"LL", "Simple"}
    for g, group in enumerate((pair, quad)):
        alone = [lite.cost("all-to-all", n, group) for n in SIZES]
        assert r.protocols[g].tolist() == [a.protocol for a in alone]
        assert r.time[g].tolist() == pytest.approx([a.time for a in alone], rel=1e-12)
    # the 4 Lites' LL, by its figures: 7.354 us together before
    assert r.time[1, 0] * 1e6 == pytest.approx(7.302, abs=0.001)


def _mixed_time(model, groups, assignment, row, name, proto, n):
    """Group ``row``'s time at ``n`` from the mixed costing's lines (before the costing
    takes the larger of it and the group's time alone)."""
    groups = model.groups(groups)
    prepared = prepared_groups(model, groups, True)
    col = np.array(assignment)
    ev = evaluate_loads(model, "all-to-all", None, prepared, True,
                        mixed_classes(prepared, "all-to-all", col))
    a, b, lo, hi = mixed_lines(model, "all-to-all", groups, ev, np.array([row]), name, proto)
    return float(np.where((n > lo) & (n <= hi), a + b * n, np.inf).min(axis=0)[0])


@pytest.mark.parametrize("n", [16 * MIB, 256 * MIB])
def test_flagship_mixed_simple_lines_by_channel(dgx, n):
    # 2 H100s run direct, 4 others pairwise: the pair's Simple lines by channel (2/3 of
    # the rate below 512 MiB) as alone and as beside the others on direct
    pair, quad = ("gpu0", "gpu1"), ("gpu4", "gpu5", "gpu6", "gpu7")
    alone = dgx.cost("all-to-all", n, pair, algorithm="direct")
    assert alone.protocol == "Simple"
    t = _mixed_time(dgx, [pair, quad], ["direct", "pairwise"], 0, "direct", "Simple", n)
    assert t == pytest.approx(alone.time, rel=1e-12)
    same = concurrent_cost(dgx, [pair, quad], "all-to-all", n, algorithm="direct")
    assert t == pytest.approx(float(same.time[0, 0]), rel=1e-12)


def test_lite_mixed_ll_lines_on_the_path(lite):
    # the 4 Lites' LL lines themselves, before the costing's floor at the time alone
    pair, quad = ("gpu0", "gpu1"), ("gpu4", "gpu5", "gpu6", "gpu7")
    for n in (4 * KIB, 64 * KIB):
        t = _mixed_time(lite, [pair, quad], ["pairwise", "direct"], 1, "direct", "LL", n)
        assert t == pytest.approx(lite.cost("all-to-all", n, quad).time, rel=1e-12)
