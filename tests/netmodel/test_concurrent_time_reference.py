"""The schedule in time (``concurrent_time``) against the same schedule worked out the plain
way (``concurrent_time_brute``: loads in dictionaries, progressive filling one level at a time,
events one by one, in exact fractions where the loads are drawn): durations within a
relative 1e-12 (measured at most 2.8e-14 on 2,000 random loads drawn as below, seeds 0-7),
the same ``shared`` flags; the fold (``_one_link_of_each``) keeps one link of each set that
carries the same entries, as a dictionary of links by their entries finds them, bit for bit;
``_paces`` gives the max-min fair seconds of one level at a time within 1e-12. Costings: the
same concurrent costs with the plain schedule (in floats, a group within 1e-12 of an event
ending with it) as with this one, within 1e-12, the same bits alone."""

from __future__ import annotations

import random
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives import concurrent_loads, concurrent_time
from netmodel.collectives.algorithms import ALGORITHMS
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from tests.netmodel import concurrent_time_brute as brute


def _loads(rng):
    """Random steps' entries ``(group, link, load)``: loads from a few values (exact ties)
    or drawn, some of no time; copies of some links (ECMP's parallel uplinks), one load of
    a copy sometimes one ulp off; entries listed twice; in any order."""
    G, S, L = int(rng.integers(1, 13)), int(rng.integers(1, 5)), int(rng.integers(1, 11))
    few = rng.choice([0.25, 0.5, 1.0, 1.5, 3.0], 5) if rng.random() < 0.5 else None
    copies = np.sort(rng.choice(L, min(int(rng.integers(0, 4)), L), replace=False))
    entries = []
    for _ in range(S):
        m = int(rng.integers(0, 30))
        eg, el = rng.integers(0, G, m), rng.integers(0, L, m)
        eu = rng.choice(few, m) if few is not None else rng.uniform(0.05, 2.0, m)
        eu = np.where(rng.random(m) < 0.1, 0.0, eu)
        on = np.isin(el, copies)
        cu = eu[on].copy()
        if len(cu) and rng.random() < 0.3:
            j = rng.integers(0, len(cu))
            cu[j] = np.nextafter(cu[j], 9.0)
        eg = np.concatenate([eg, eg[on]])
        el = np.concatenate([el, L + np.searchsorted(copies, el[on])])
        eu = np.concatenate([eu, cu])
        if len(eg) and rng.random() < 0.2:
            j = rng.integers(0, len(eg), 3)
            eg, el, eu = np.r_[eg, eg[j]], np.r_[el, el[j]], np.r_[eu, eu[j]]
        p = rng.permutation(len(eg))
        entries.append((eg[p].astype(np.int64), el[p].astype(np.int64), eu[p]))
    return rng.integers(0, 4, (G, S)).astype(float), entries, L + len(copies)


def _flat(entries):
    eg = np.concatenate([e[0] for e in entries])
    el = np.concatenate([e[1] for e in entries])
    eu = np.concatenate([e[2] for e in entries])
    es = np.concatenate([np.full(len(e[0]), i, np.int64) for i, e in enumerate(entries)])
    return eg, el, eu, es


def _fold_by_hand(eg, el, eu, es, L):
    """``_one_link_of_each`` of entries given by group and step: each link's entries in
    that order as ``(group, step, load bits)``; the first link of each distinct list kept,
    numbered by first appearance; the kept entries in the order given."""
    on = defaultdict(list)
    for g, link, u, s in zip(eg.tolist(), el.tolist(), eu, es.tolist(), strict=True):
        on[link].append((g, s, u.tobytes()))
    number: dict = {}
    kept = {}
    for link in range(L):
        if on[link]:
            key = tuple(on[link])
            if key not in number:
                number[key] = len(number)
                kept[link] = number[key]
    rows = [(g, kept[link], u, s) for g, link, u, s in
            zip(eg.tolist(), el.tolist(), eu.tolist(), es.tolist(), strict=True) if link in kept]
    return rows, len(number)


#: The plain way's answers to the random loads of test_random_loads_give_the_plain_schedule,
#: by (seed, draw): the loads a seed draws are the same whatever the chunk, so each chunk's
#: test checks this module against the same answers, worked out once.
_PLAIN: dict = {}


def _plain(key, work, entries, L):
    """``(want, shared, o, rows, n, T)`` of one drawing of loads, the plain way: the exact
    schedule and its shared flags, the order by group and step, the fold by hand and the
    paces in fractions (``o`` and what follows None where no step has an entry)."""
    if key not in _PLAIN:
        want, a = brute.timed(work, entries)
        eg, el, eu, es = _flat(entries)
        if not len(eg):
            _PLAIN[key] = (want, a, None, None, None, None)
            return _PLAIN[key]
        o = np.argsort(eg * len(entries) + es, kind="stable")
        rows, n = _fold_by_hand(eg[o], el[o], eu[o], es[o], L)
        loads = defaultdict(lambda: defaultdict(int))
        for g, link, u in zip(eg.tolist(), el.tolist(), eu.tolist(), strict=True):
            loads[g][link] += Fraction(u)
        T = np.zeros(work.shape[0])
        for g, s in brute.paces(loads).items():
            T[g] = float(s)
        _PLAIN[key] = (want, a, o, rows, n, T)
    return _PLAIN[key]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_random_loads_give_the_plain_schedule(seed, chunk, monkeypatch):
    # 250 random workings each: timed_steps (durations within 1e-12 of the exact schedule,
    # shared flags equal), the fold on entries by group and step (bit for bit) and _paces on
    # entries in any order (within 1e-12); chunks of 3 entries put many chunk bounds inside
    # the fold
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 1 << 60)
    monkeypatch.setattr(concurrent_time, "_CHUNK", chunk)
    rng = np.random.default_rng(seed)
    for i in range(250):
        work, entries, L = _loads(rng)
        b = np.zeros(work.shape, bool)
        want, a, o, rows, n, T = _plain((seed, i), work, entries, L)
        got = concurrent_time.timed_steps(work, entries, L, b)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)  # 5e-324 loads
        assert (a == b).all()
        assert concurrent_time.timed_steps(work, entries, L).tobytes() == got.tobytes()
        eg, el, eu, es = _flat(entries)
        if not len(eg):
            assert o is None
            continue
        got = concurrent_time._one_link_of_each(eg[o], el[o], eu[o], es[o], L)
        assert list(zip(*(x.tolist() for x in got[:4]), strict=True)) == rows
        assert got[4] == n
        np.testing.assert_allclose(concurrent_time._paces(eg, el, eu, work.shape[0], L)[0], T,
                                   rtol=1e-12, atol=1e-300)


def test_the_fold_gives_entries_by_group_and_step_in_any_order_they_come():
    # the fold sorts by link, then group, step, as listed, in one sort, so timed_steps hands it
    # the entries as the steps list them (the old fold took them sorted by group and step,
    # and gave them back in the order it got them)
    e = [(np.array([1, 0, 1, 0]), np.array([2, 0, 1, 1]), np.array([0.5, 1.0, 0.25, 0.25])),
         (np.array([0, 1]), np.array([2, 0]), np.array([2.0, 3.0]))]
    eg, el, eu, es = _flat(e)
    g, link, load, step, L = concurrent_time._one_link_of_each(eg, el, eu, es, 3)
    assert L == 3   # no two links carry the same entries
    assert list(zip(g.tolist(), step.tolist(), link.tolist(), load.tolist(), strict=True)) == [
        (0, 0, 0, 1.0), (0, 0, 1, 0.25), (0, 1, 2, 2.0),
        (1, 0, 2, 0.5), (1, 0, 1, 0.25), (1, 1, 0, 3.0)]


_SPECS = ["fat-tree:k=4,oversubscription=2", "fat-tree:k=8,oversubscription=2",
          "leaf-spine:leaves=8,radix=16,oversubscription=2", "rail-optimized:domains=4",
          "rail-optimized:domains=8,domain_size=4,gpus_per_server=4", "superpod",
          "torus:dims=4x4", "torus:dims=3x3x3", "nvl72:racks=2"]


def _plain_timed(work, entries, L, shared=None):
    """concurrent_time.timed_steps's contract met by the plain schedule in floats."""
    dur, mixed = brute.timed(work, entries, exact=False)
    if shared is not None:
        shared |= mixed
    return dur


@pytest.mark.parametrize("seed", range(2))
def test_random_costings_are_the_plain_schedules(seed, monkeypatch):
    # random groups, sizes, ops and algorithms on random fabrics (some links thinned to
    # 1/2 or 1/4 and 0.1 us slower, or a few switch links failed): concurrent_cost with the
    # plain schedule and with this one, the same schedules, times within 1e-12, the same
    # bits alone
    from topologies import build

    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 1 << 40)
    rng = random.Random(seed)
    done = timed = 0
    while done < 15:
        g = build(rng.choice(_SPECS)).copy()
        r = rng.random()
        if r < 0.3:
            for _, _, d in g.edges(data=True):
                if rng.random() < 0.3:
                    d["bandwidth"] *= rng.choice([0.5, 0.25])
                    d["latency"] += 1e-7
        elif r < 0.5:
            kind = {x: d.get("kind") for x, d in g.nodes(data=True)}
            sw = [(u, v) for u, v in g.edges() if kind[u] != "gpu" and kind[v] != "gpu"]
            g.remove_edges_from(rng.sample(sw, min(len(sw), rng.randint(1, 3))))
        gpus = sorted(x for x, d in g.nodes(data=True) if d.get("kind") == "gpu")
        rng.shuffle(gpus)
        groups, i, big = [], 0, rng.choice([4, 8, 16])
        while i + 2 <= len(gpus) and len(groups) < 20:
            k = rng.randint(2, big)
            groups.append(tuple(gpus[i:i + k]))
            i += k
        groups = [x for x in groups if len(x) >= 2]
        op = rng.choice(["all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                         "broadcast"])
        algorithm = None if rng.random() < 0.6 else rng.choice(
            [a for a in ALGORITHMS if op in ALGORITHMS[a]])
        sizes = [rng.choice([1e3, 2.0 ** 20 + 1, 3e7, 2.0 ** 28]) for _ in range(2)]
        got = []
        try:
            for timed_fn in (_plain_timed, concurrent_time.timed_steps):
                monkeypatch.setattr(concurrent_loads, "timed_steps", timed_fn)
                c = concurrent_cost(FabricCostModel(g, validated=True), groups, op, sizes,
                                    algorithm)
                got.append((c.time, c.alone.tobytes(), c.schedule))
        except UserError:   # a group cut apart by the failed links, or no algorithm
            continue
        assert got[0][1:] == got[1][1:]
        np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-12, atol=0)
        done += 1
        timed += concurrent_time.TIME in got[1][2]
    assert timed >= 12   # mostly costings that follow time
