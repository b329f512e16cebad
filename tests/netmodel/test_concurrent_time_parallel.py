"""The schedule in time (``concurrent_time.timed_steps``) looks at one link of each set of
parallel links (links that carry the same entries: a leaf's uplinks to every spine, loaded
alike by ECMP), so that a thousand GPUs of mixed groups under ``auto`` follow time within
its budget instead of falling back to the lockstep."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import concurrent_time
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.concurrent_time import (
    LOCKSTEP_BUDGET,
    TIME,
    _one_link_of_each,
    timed_steps,
)
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import random_groups


def _by_group(entries):
    eg = np.concatenate([e[0] for e in entries])
    el = np.concatenate([e[1] for e in entries])
    eu = np.concatenate([e[2] for e in entries])
    es = np.concatenate([np.full(len(e[0]), i) for i, e in enumerate(entries)])
    o = np.argsort(eg * len(entries) + es, kind="stable")
    return eg[o], el[o], eu[o], es[o]


def test_parallel_links_are_kept_once():
    # links 1 and 3 carry the same entries (groups 0 and 1, 0.25 s each): one is kept; link
    # 2 carries group 0's 0.25 and group 1's 0.25 one ulp more: kept; link 0 group 0 alone
    up = np.nextafter(0.25, 1.0)
    e = [(np.array([0, 0, 0, 0, 1, 1, 1]), np.array([0, 1, 2, 3, 1, 2, 3]),
          np.array([1.0, 0.25, 0.25, 0.25, 0.25, up, 0.25]))]
    eg, el, eu, es, L = _one_link_of_each(*_by_group(e), 4)
    assert L == 3
    assert list(zip(eg.tolist(), el.tolist(), eu.tolist(), strict=True)) == [
        (0, 0, 1.0), (0, 1, 0.25), (0, 2, 0.25), (1, 1, 0.25), (1, 2, up)]
    # the schedule is the same, bit for bit, with the parallel link or without it: group 1
    # (0.5 s on link 2 beside group 0) held there, group 0 by its own link 0 at 1 s
    kept = [(np.array([0, 0, 0, 1, 1]), np.array([0, 1, 2, 1, 2]),
             np.array([1.0, 0.25, 0.25, 0.25, up]))]
    work = np.array([[2.0], [1.0]])
    assert timed_steps(work, e, 4).tobytes() == timed_steps(work, kept, 3).tobytes()


def test_links_whose_entries_come_in_another_order_are_both_kept():
    # the same loads on links 0 and 1, but group 0's two entries on link 1 listed the other
    # way round: their sums could differ in the last bit, so both links stay
    e = [(np.array([0, 0, 0, 0]), np.array([0, 0, 1, 1]), np.array([0.1, 0.7, 0.7, 0.1]))]
    assert _one_link_of_each(*_by_group(e), 2)[4] == 2


def test_a_thousand_gpus_under_auto_follow_time_within_the_budget(monkeypatch):
    # 102 random groups of 2-16 GPUs on a 1,024-GPU 2:1 fat tree, 1 MiB all-reduce under
    # auto (five algorithms): the schedule in time looked at more than its budget on two
    # of its seven workings and fell back to the lockstep (0.408 ms, against 0.232 ms in
    # time); each leaf's 8 uplinks (4,096 links) are now looked at once (about 700)
    from topologies import build

    g = build("fat-tree:k=16,oversubscription=2")
    groups = random_groups([x for x, d in g.nodes(data=True) if d.get("kind") == "gpu"])
    assert len(groups) == 102
    got = concurrent_cost(FabricCostModel(g, validated=True), groups, "all-reduce", 2.0 ** 20)
    assert got.schedule == (TIME,)
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    lock = concurrent_cost(FabricCostModel(g, validated=True), groups, "all-reduce", 2.0 ** 20)
    assert lock.schedule == (LOCKSTEP_BUDGET,)
    assert got.makespan[0] < 0.7 * lock.makespan[0]
    # in time the groups of one shape may still be slower than alone, never faster
    assert (got.time >= got.alone).all()


@pytest.mark.parametrize("seed", range(3))
def test_no_parallel_link_changes_the_schedule(seed):
    # random loads, then a copy of some links' entries on new links: the same schedule, bit
    # for bit, as without them
    rng = np.random.default_rng(seed)
    G, L, S = 6, 8, 3
    entries, extra = [], []
    for _ in range(S):
        eg = rng.integers(0, G, 20)
        el = rng.integers(0, L, 20)
        eu = rng.uniform(0.1, 2.0, 20)
        entries.append((eg, el, eu))
    copies = [0, 3, 5]
    for eg, el, eu in entries:
        m = np.isin(el, copies)
        extra.append((np.concatenate([eg, eg[m]]),
                      np.concatenate([el, L + np.searchsorted(copies, el[m])]),
                      np.concatenate([eu, eu[m]])))
    work = rng.integers(1, 4, (G, S)).astype(float)
    a, b = np.zeros((G, S), bool), np.zeros((G, S), bool)
    assert (timed_steps(work, entries, L, a).tobytes()
            == timed_steps(work, extra, L + 3, b).tobytes())
    assert (a == b).all()


@pytest.mark.parametrize("spec, thin", [("fat-tree:k=8,oversubscription=2", False),
                                        ("fat-tree:k=8,oversubscription=2", True),
                                        ("superpod", False)])
def test_the_fold_changes_no_bit_even_where_every_hash_collides(spec, thin, monkeypatch):
    # links are matched by a hash of their entries, then compared entry by entry: with every
    # hash alike (all links of one entry count candidates for each other) and with no fold
    # at all, concurrent_cost is the same bit for bit, on a fat tree as built, with a third
    # of its links thinned to 1/2 or 1/4 of their bandwidth and 0.1 us slower (parallel
    # uplinks then differ), and on superpod (in-network steps among the choices)
    import random

    from topologies import build

    g = build(spec)
    rng = random.Random(1)
    if thin:
        for _, _, d in g.edges(data=True):
            if rng.random() < 0.3:
                d["bandwidth"] *= rng.choice([0.5, 0.25])
                d["latency"] += 1e-7
    gpus = sorted(x for x, d in g.nodes(data=True) if d.get("kind") == "gpu")
    rng.shuffle(gpus)
    groups, i = [], 0
    while len(groups) < 16 and i + 12 <= len(gpus):
        k = rng.randint(2, 12)
        groups.append(tuple(gpus[i:i + k]))
        i += k
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 1 << 40)

    def cost():
        r = concurrent_cost(FabricCostModel(g, validated=True), groups, "all-reduce",
                            [2.0 ** 20 + 1, 3e7])
        return r.time.tobytes(), r.alone.tobytes(), r.schedule

    ref = cost()
    assert ref[2] == (TIME, TIME)
    monkeypatch.setattr(concurrent_time, "_MIX", tuple(np.uint64(0) for _ in range(4)))
    assert cost() == ref
    def no_fold(eg, el, eu, es, L, G, S):   # the entries by group and step, every link
        o = np.argsort(eg * S + es, kind="stable")
        return eg[o], el[o], eu[o], es[o], L

    monkeypatch.setattr(concurrent_time, "_one_link_of_each", no_fold)
    assert cost() == ref
