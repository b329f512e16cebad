"""Which schedule charged the groups of a concurrent costing is part of its result.

Groups of different sizes or algorithms share links by time (``concurrent_time.timed_steps``),
but past ``_TIMED_WORK`` the schedule fell back to the lockstep silently: the result, and
``collective --all-groups`` (text and JSON), did not say that the charge was the lockstep's,
which is no bound of the schedule in time either way (test_review196_time_shared.py). Now
``ConcurrentResult.schedule`` names it per size, worked out with the numbers it goes with:
each case is asked twice of one model (its steps' loads are then reused from the first
call) and the flag must not come from the call before.
"""

from __future__ import annotations

import json

import pytest

import netmodel.collectives.concurrent_time as concurrent_time
from netmodel import api
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import hand_fabric, two_leaves

from .cli_helpers import run_cli

TIME = "time"
LOCKSTEP = "lockstep"
PIPELINE = "lockstep (a pipeline)"
BUDGET = "lockstep (past the schedule's budget)"


def _held_elsewhere():
    # test_review196_time_shared's hand case: leaf0 holds gpu0-2, leaf1 gpu3 (1 GB/s) and
    # gpu4 (0.5 GB/s), one spine at 1 GB/s. Direct all-gather of 1 GB: A = (gpu0, gpu3)
    # sends 1/2 GB over leaf0->spine, B = (gpu1, gpu2, gpu4) 2/3 GB, and B is held by
    # gpu4's link (2/3 GB at 0.5 GB/s = 4/3 s), so in time A gets half of leaf0->spine:
    # 1 s; in lockstep A is charged the link's whole 7/6 GB: 7/6 s
    g = hand_fabric(["leaf0", "leaf1", "spine"], [("leaf0", "spine"), ("leaf1", "spine")],
                    [("leaf0", 1e9)] * 3 + [("leaf1", 1e9), ("leaf1", 5e8)])
    return FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())


_GROUPS = [("gpu0", "gpu3"), ("gpu1", "gpu2", "gpu4")]


def _cost(m):
    return concurrent_cost(m, _GROUPS, "all-gather", 1e9, "direct")


def test_the_schedule_in_time_is_named_time():
    m = _held_elsewhere()
    for _ in range(2):   # the second call reuses the first's loads of the steps
        r = _cost(m)
        assert r.time[:, 0] == pytest.approx([1.0, 4 / 3], rel=1e-12)
        assert r.schedule == (TIME,)


def test_past_the_budget_the_lockstep_is_named(monkeypatch):
    m = _held_elsewhere()
    first = _cost(m)   # in time, then the same model past the budget, then in time again
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    for _ in range(2):
        r = _cost(m)
        assert r.time[:, 0] == pytest.approx([7 / 6, 4 / 3], rel=1e-12)
        assert r.schedule == (BUDGET,)
    monkeypatch.undo()
    again = _cost(m)
    assert first.schedule == again.schedule == (TIME,)
    assert again.time.tobytes() == first.time.tobytes()


def test_groups_alike_are_named_lockstep():
    # two leaves of two GPUs, one spine, 1 GB/s: gpu0 -> gpu1 and gpu2 -> gpu3 both cross
    # leaf0 -> spine -> leaf1, 2 GB at 1 GB/s: 2 s each, one step of one algorithm
    g = two_leaves(4, lambda i: i % 2)
    m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
    for _ in range(2):
        r = concurrent_cost(m, [("gpu0", "gpu1"), ("gpu2", "gpu3")], "send-recv", 1e9)
        assert r.time[:, 0].tolist() == [2.0, 2.0]
        assert r.schedule == (LOCKSTEP,)


def test_a_pipeline_is_named():
    # in-network all-reduce (NVLS) inside one h100-dgx server, groups of 4 and 3: the
    # switch's phases overlap in time, so the groups stay in lockstep though they differ
    m = FabricCostModel(api.build_fabric("h100-dgx"), validated=True)
    groups = [tuple(f"gpu{i}" for i in range(4)), tuple(f"gpu{i}" for i in range(4, 7))]
    for _ in range(2):
        r = concurrent_cost(m, groups, "all-reduce", 2 ** 28, "in-network")
        assert set(r.algorithms[:, 0].tolist()) == {"in-network"}
        assert r.schedule == (PIPELINE,)


def test_schedule_per_size_follows_the_choices(monkeypatch):
    # h100-dgx (8 GPUs a server), contiguous groups of 6: at 1 KiB every group runs direct
    # (one size, one algorithm: lockstep); at 4 MiB some run ring, some direct (their
    # steps routed together: in time, or past the budget the lockstep)
    m = FabricCostModel(api.build_fabric("h100-dgx"), placement="contiguous", validated=True)
    sizes = [2.0 ** 10, 4 * 2.0 ** 20]
    for _ in range(2):
        r = concurrent_cost(m, 6, "all-gather", sizes)
        mixed = [len(set(r.algorithms[:, s].tolist())) > 1 for s in range(2)]
        assert mixed == [False, True]
        assert r.schedule == (LOCKSTEP, TIME)
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    for _ in range(2):
        assert concurrent_cost(m, 6, "all-gather", sizes).schedule == (LOCKSTEP, BUDGET)


def test_collective_all_groups_says_which_schedule(monkeypatch):
    args = ["collective", "all-gather", "--fabric", "h100-dgx", "--group", "6", "--size",
            "4MiB", "--placement", "contiguous", "--all-groups"]
    text = run_cli(args)
    assert text.exit_code == 0, text.output
    assert "schedule sharing the links: time\n" in text.output
    doc = json.loads(run_cli(args + ["--json"]).output)
    assert doc["all_groups"]["schedule"] == TIME
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    text = run_cli(args)
    assert text.exit_code == 0, text.output
    line = [x for x in text.output.splitlines() if x.startswith("schedule sharing")]
    assert line == [f"schedule sharing the links: {BUDGET}, a charge that is no bound of the "
                    f"schedule in time either way"]
    doc = json.loads(run_cli(args + ["--json"]).output)
    assert doc["all_groups"]["schedule"] == BUDGET
