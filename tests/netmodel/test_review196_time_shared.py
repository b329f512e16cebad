"""Review 196 of the time-shared schedule of concurrent collectives (0cd0018: groups of
different sizes or algorithms share links by time, ``timed_steps`` / ``_paces``) and of the
fabric search's own-choice charge (747ed3e, ff230f7).

Hand cases on small fabrics (ideal calibration: no latency, every link at its rate), and
invariants of the schedule checked on random loads: no link carries more than its rate at
any moment or over the whole schedule, a group is never faster than alone, identical groups
are the lockstep, a group alone is its own busiest link. The private functions are found
wherever the split of concurrent.py puts them (pure moves)."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netmodel.collectives as collectives
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import hand_fabric, random_groups


def _private(name: str):
    """``name`` from concurrent.py or from whichever concurrent_* module holds it now."""
    mods = ["netmodel.collectives.concurrent"] + sorted(
        m.name for m in pkgutil.iter_modules(collectives.__path__, "netmodel.collectives.")
        if m.name.rsplit(".", 1)[-1].startswith("concurrent_"))
    for mod in mods:
        found = getattr(importlib.import_module(mod), name, None)
        if found is not None:
            return found
    raise ImportError(name)


def test_a_group_held_elsewhere_leaves_its_share_of_a_link():
    # leaf0: gpu0, gpu1, gpu2; leaf1: gpu3 (1 GB/s) and gpu4 (0.5 GB/s); one spine, 1 GB/s.
    # Direct all-gather of 1 GB: A = (gpu0, gpu3), 2 GPUs, sends 1/2 GB over leaf0->spine;
    # B = (gpu1, gpu2, gpu4), 3 GPUs, sends 2/3 GB over it (gpu1 and gpu2 to gpu4) and
    # receives 2/3 GB on gpu4's 0.5 GB/s link: B takes 4/3 s whatever else runs, so it
    # uses (2/3)/(4/3) = 1/2 of leaf0->spine and A gets the other half: 1/2 GB at 0.5 GB/s
    # = 1 s (lockstep charged A the link's whole 7/6 GB: 7/6 s)
    g = hand_fabric(["leaf0", "leaf1", "spine"], [("leaf0", "spine"), ("leaf1", "spine")],
               [("leaf0", 1e9)] * 3 + [("leaf1", 1e9), ("leaf1", 5e8)])
    m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
    r = concurrent_cost(m, [("gpu0", "gpu3"), ("gpu1", "gpu2", "gpu4")], "all-gather", 1e9,
                        "direct")
    assert r.time[:, 0] == pytest.approx([1.0, 4 / 3], rel=1e-12)
    assert r.alone[:, 0] == pytest.approx([0.5, 4 / 3], rel=1e-12)


def test_the_fallback_past_the_work_limit_is_the_lockstep(monkeypatch):
    # past _TIMED_WORK the schedule falls back to the lockstep (reported since: the
    # result's schedule, test_concurrent_schedule.py): the case above then charges A the
    # shared link's 7/6 GB (7/6 s), B its own 4/3 s
    timed = _private("timed_steps")
    monkeypatch.setitem(timed.__globals__, "_TIMED_WORK", 0)
    g = hand_fabric(["leaf0", "leaf1", "spine"], [("leaf0", "spine"), ("leaf1", "spine")],
               [("leaf0", 1e9)] * 3 + [("leaf1", 1e9), ("leaf1", 5e8)])
    m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
    r = concurrent_cost(m, [("gpu0", "gpu3"), ("gpu1", "gpu2", "gpu4")], "all-gather", 1e9,
                        "direct")
    assert r.time[:, 0] == pytest.approx([7 / 6, 4 / 3], rel=1e-12)


def test_lockstep_is_no_upper_bound_of_the_schedule_in_time():
    # A: step 0 on link 0 (1 s), step 1 on link 1 (1 s); B: step 0 on link 2 (0.5 s), step
    # 1 on link 0 (1 s). Lockstep pairs A0 with B0 and A1 with B1, which share nothing:
    # 2 s and 1.5 s. In time, B1 starts at 0.5 s beside A0's last half on link 0: both at
    # half rate, A0 done at 1.5 s, A1 alone to 2.5 s; B1's last half alone from 1.5 s, to
    # 2.0 s. So the fallback to lockstep (past _TIMED_WORK) is no upper bound of the
    # schedule it replaces: here it is 0.5 s lower for both
    timed = _private("timed_steps")
    e = [(np.array([0, 1]), np.array([0, 2]), np.array([1.0, 0.5])),
         (np.array([0, 1]), np.array([1, 0]), np.array([1.0, 1.0]))]
    dur = timed(np.ones((2, 2)), e, 3)
    assert dur.sum(axis=1) == pytest.approx([2.5, 2.0], rel=1e-12)


def test_adding_a_group_may_speed_another_up():
    # max-min sharing is not monotone: switches sw0 - sw1 - sw2 in a line, 1 GB/s links.
    # A = (gpu0 on sw0, gpu1 on sw1), B = (gpu2 on sw0, gpu3 on sw2): direct all-gather of
    # 1 GB, each sends 1/2 GB over sw0->sw1: 1 s each. C = (gpu4, gpu5 on sw1, gpu6 on
    # sw2) sends 2/3 GB over sw1->sw2, which B crosses too: B and C held there at
    # 1/2 + 2/3 = 7/6 s, B then using 3/7 of sw0->sw1 and A getting 4/7: 7/8 s. Adding C
    # made A faster (still never faster than alone, 1/2 s); the makespan grew
    g = hand_fabric(["sw0", "sw1", "sw2"], [("sw0", "sw1"), ("sw1", "sw2")],
               [("sw0", 1e9), ("sw1", 1e9), ("sw0", 1e9), ("sw2", 1e9), ("sw1", 1e9),
                ("sw1", 1e9), ("sw2", 1e9)])
    m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
    a, b, c = ("gpu0", "gpu1"), ("gpu2", "gpu3"), ("gpu4", "gpu5", "gpu6")
    two = concurrent_cost(m, [a, b], "all-gather", 1e9, "direct")
    three = concurrent_cost(m, [a, b, c], "all-gather", 1e9, "direct")
    assert two.time[:, 0] == pytest.approx([1.0, 1.0], rel=1e-12)
    assert three.time[:, 0] == pytest.approx([7 / 8, 7 / 6, 7 / 6], rel=1e-12)
    assert (three.time >= three.alone).all()


# random loads: G groups, L links, each group on a few links with seconds per byte in
# [0.1, 10]
@st.composite
def _loads(draw, steps: int = 1):
    G = draw(st.integers(1, 5))
    L = draw(st.integers(1, 5))
    out = []
    for _ in range(steps):
        eg, el, eu = [], [], []
        for g in range(G):
            links = draw(st.lists(st.integers(0, L - 1), min_size=0, max_size=3, unique=True))
            for lk in links:
                eg.append(g)
                el.append(lk)
                eu.append(draw(st.floats(0.1, 10.0)))
        out.append((np.array(eg, np.int64), np.array(el, np.int64), np.array(eu)))
    return G, L, out


@settings(max_examples=300, deadline=None)
@given(_loads())
def test_paces_are_max_min_fair(case):
    # every link's shares (each group's load over its pace) sum to at most 1; no group is
    # faster than its busiest link alone; and each group with a load has a full link on
    # which no other group is faster (the bottleneck of max-min fairness: no other group on
    # it gets a higher rate of repetitions)
    G, L, [(eg, el, eu)] = case
    T, _ = _private("_paces")(eg, el, eu, G, L)
    own = np.zeros(G)
    np.maximum.at(own, eg, np.bincount(eg * L + el, eu, minlength=G * L)[eg * L + el])
    assert (T >= own * (1 - 1e-12)).all()
    share = np.bincount(el, eu / np.where(T[eg] > 0, T[eg], np.inf), minlength=L)
    assert (share <= 1 + 1e-9).all()
    for g in np.unique(eg).tolist():
        mine = np.unique(el[eg == g])
        ok = [abs(share[lk] - 1) < 1e-9 and T[g] <= T[eg[el == lk]].min() * (1 + 1e-9)
              for lk in mine.tolist()]
        assert any(ok), (g, T, share)


@settings(max_examples=200, deadline=None)
@given(_loads(steps=3), st.lists(st.integers(0, 3), min_size=15, max_size=15))
def test_schedule_in_time_conserves_every_link(case, reps):
    # over the whole schedule no link carries more than its rate: a link's seconds of work
    # (every group's load times its repetitions, summed over steps) fit within the
    # makespan; each group takes at least its own time alone (its steps one after another,
    # each at its busiest link)
    G, L, entries = case
    work = np.array(reps[:G * 3], float).reshape(G, 3)
    dur = _private("timed_steps")(work, entries, L)
    assert dur is not None
    makespan = dur.sum(axis=1).max()
    link_work = np.zeros(L)
    alone = np.zeros(G)
    for i, (eg, el, eu) in enumerate(entries):
        link_work += np.bincount(el, eu * work[eg, i], minlength=L)
        per = np.zeros(G)
        np.maximum.at(per, eg, np.bincount(eg * L + el, eu, minlength=G * L)[eg * L + el])
        alone += per * work[:, i]
    assert (link_work <= makespan * (1 + 1e-9) + 1e-12).all()
    assert (dur.sum(axis=1) >= alone * (1 - 1e-9)).all()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4),
       st.lists(st.tuples(st.integers(0, 3), st.floats(0.1, 10.0)), min_size=1, max_size=4),
       st.lists(st.integers(1, 4), min_size=2, max_size=2))
def test_identical_groups_are_the_lockstep(G, L, pattern, reps):
    # G groups with the same loads on the same links, two steps: each step lasts its busiest
    # link's load summed over all groups, times its repetitions (the lockstep of _loads),
    # and every group gets the same answer
    links = sorted({lk % L for lk, _ in pattern})
    u = {lk: w for lk, w in ((lk % L, w) for lk, w in pattern)}
    eg = np.repeat(np.arange(G), len(links))
    el = np.tile(np.array(links, np.int64), G)
    eu = np.tile(np.array([u[lk] for lk in links]), G)
    e = [(eg, el, eu), (eg, el, eu * 2)]
    work = np.tile(np.array(reps, float), (G, 1))
    dur = _private("timed_steps")(work, e, L)
    lock = G * max(u.values()) * np.array([1, 2]) * np.array(reps, float)
    assert dur == pytest.approx(np.tile(lock, (G, 1)), rel=1e-9)


# groups that share no link: A = 3 GPUs under leaf0, B = 6 under leaf1 (rings never leave
# their leaf), each should take its time alone, bit for bit
_TWO_LEAVES_BW = [2092404218.3036358, 1174466784.4096758, 602433809.8404868,
                  541319088.8213227, 2533175598.000681, 2781888943.1943045,
                  2016589439.4179497, 2323741402.459996, 1859062478.6635573]


def test_a_group_alone_on_its_links_equals_alone_bit_for_bit():
    g = hand_fabric(["leaf0", "leaf1", "spine"], [("leaf0", "spine"), ("leaf1", "spine")],
               [("leaf0", b) for b in _TWO_LEAVES_BW[:3]]
               + [("leaf1", b) for b in _TWO_LEAVES_BW[3:]])
    m = FabricCostModel(g, calibration=Calibration.ideal())
    a, b = ("gpu0", "gpu1", "gpu2"), tuple(f"gpu{i}" for i in range(3, 9))
    r = concurrent_cost(m, [a, b], "all-gather", 1e9, "ring")
    assert r.time.tobytes() == r.alone.tobytes()
    assert (r.slowdown == 1.0).all()


def test_a_server_group_on_h100_dgx_equals_alone_bit_for_bit():
    from netmodel import api

    m = FabricCostModel(api.build_fabric("h100-dgx"), placement="contiguous",
                        validated=True)
    r = concurrent_cost(m, 6, "all-gather", 4 * 2 ** 20)
    assert r.groups[0] == tuple(f"gpu{i}" for i in range(6))
    one = concurrent_cost(m, [r.groups[0]], "all-gather", 4 * 2 ** 20)
    assert one.time[0, 0] == one.alone[0, 0]
    assert r.time[0, 0] == r.alone[0, 0]


# review 196 (older than 0cd0018): a group's time alone (its own bytes per link summed in
# another order than the loads together) was 1 ulp over its time together, so one group
# alone reported slowdown 0.9999999999999998; alone is now never over together
def test_one_group_alone_has_slowdown_one():
    # fat-tree k=4 2:1, one group of 9 (spread), direct all-to-all of 1 GB: together, alone
    # and the single-group model's time are one number
    from topologies import build

    m = FabricCostModel(build("fat-tree:k=4,oversubscription=2"), placement="spread",
                        validated=True)
    r = concurrent_cost(m, 9, "all-to-all", 1e9)
    assert len(r.groups) == 1
    sweep = m.sweep("all-to-all", np.array([1e9]), list(r.groups[0])).time[0]
    assert r.time[0, 0] == sweep
    assert r.alone[0, 0] == sweep
    assert r.slowdown[0, 0] == 1.0


# review 196 found _TIMED_WORK (2^27 entries, every progressive-filling round counted) hit
# here after 0.8 s of work, the answer silently the lockstep's (13.38 ms against 7.71 ms in
# time); _paces now drops a held group's entries each round and counts what it looks at:
# about 2^26 entries, 0.6 s
def test_a_thousand_gpus_of_mixed_groups_follow_time(monkeypatch):
    from topologies import build

    g = build("fat-tree:k=16,oversubscription=2")
    groups = random_groups([x for x, d in g.nodes(data=True) if d.get("kind") == "gpu"])
    assert len(groups) == 102
    got = concurrent_cost(FabricCostModel(g, validated=True), groups, "all-reduce",
                          64 * 2 ** 20, "ring")
    monkeypatch.setitem(_private("timed_steps").__globals__, "_TIMED_WORK", 1 << 40)
    timed = concurrent_cost(FabricCostModel(g, validated=True), groups, "all-reduce",
                            64 * 2 ** 20, "ring")
    assert timed.makespan[0] < 0.6 * 13.38e-3   # the schedule in time: 7.71 ms
    assert got.makespan[0] == pytest.approx(timed.makespan[0], rel=1e-12)


def test_shared_steps_the_same_with_a_link_listed_twice():
    # group 0 alone on link 0 (its load listed once, or split in two entries), group 1 and
    # group 2 on link 1 together: only groups 1 and 2 share, whichever way the loads are
    # listed, and the schedule is the same
    timed = _private("timed_steps")
    work = np.array([[1.0], [1.0], [2.0]])
    once = [(np.array([0, 1, 2]), np.array([0, 1, 1]), np.array([1.0, 0.5, 0.5]))]
    split = [(np.array([0, 0, 1, 2]), np.array([0, 0, 1, 1]), np.array([0.5, 0.5, 0.5, 0.5]))]
    out = []
    for entries in (once, split):
        shared = np.zeros((3, 1), dtype=bool)
        out.append((timed(work, entries, 2, shared).tolist(), shared[:, 0].tolist()))
    assert out[0] == out[1]
    assert out[0][1] == [False, True, True]
    # by hand: link 1 carries 0.5 + 0.5 s a repetition together; group 1 is done at 1.0 s,
    # group 2's second repetition runs alone, 0.5 s: 1.5 s; group 0 alone 1.0 s
    assert out[0][0] == [[1.0], [1.0], [1.5]]
