"""Review of the grants' knapsack (past MAX_GRANTS) and of threshold_low's bound.

Part 1: ``availability_kinds._knapsack`` against a brute force written here over every
subset of single instances (not the module's enumeration over alike types), at every
count of free spares: the best grant restores the most (instances' worth x the saved
seconds per worth), on a tie the more down instances.

Part 2: ``availability_threshold._missed`` (threshold_low's bound on the time two or more
refusals at once keep the cluster below) by hand on an Erlang pool of two, and against an
event simulation written here on 64 and 512 H100 at TP 1; where the pool's chain passes
its state limit (from 28 spares of one pool at TP 1) the reading and the flag.
"""

from __future__ import annotations

import heapq
import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study import availability_analytic as aa
from netmodel.study import availability_busy as ab
from netmodel.study import availability_kinds as ak
from netmodel.study import availability_threshold as at
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.reliability_catalog import catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import SparePools


def _value(steps, shares, worths, n_down, c_down, c_slow, free):
    """What the grant a failure finding ``free`` free spares gets restores, and its down
    instances back: the last step that fits (Kind.granted)."""
    g = max(i for i, (t, _, _) in enumerate(steps) if t <= free)
    kd, ks = shares[g]
    return (kd * sum(worths[:n_down]) * c_down + ks * sum(worths[n_down:]) * c_slow,
            steps[g][1])


def _subsets(order, worths, n_down, c_down, c_slow):
    """Every subset of the instances, in itertools.product's order: (spares it takes, its
    key, what it restores, its down instances), and the scale; the same for every free
    count, so worked out once a check."""
    n = len(order)
    gains = [w * (c_down if i < n_down else c_slow) for i, w in enumerate(worths)]
    scale = sum(abs(g) for g in gains) or 1.0
    out = []
    for pick in itertools.product((0, 1), repeat=n):
        size = sum(u for u, p in zip(order, pick, strict=True) if p)
        v = sum(g for g, p in zip(gains, pick, strict=True) if p)
        d = sum(p for i, p in enumerate(pick) if i < n_down)
        out.append((size, (round(v / scale, 9), d), v, d))
    return out, scale


def _brute(subsets, free):
    """The most a subset of the instances fitting ``free`` restores, and among those (to
    1e-9 of what all restore) the most down instances: every subset, one by one
    (``subsets``: :func:`_subsets`)."""
    rows, scale = subsets
    best = None
    for size, key, v, d in rows:
        if size > free:
            continue
        if best is None or key > best[0]:
            best = (key, v, d)
    return best[1], best[2], scale


def _check(order, worths, n_down, c_down, c_slow, limit):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ak, "MAX_GRANTS", limit)
        steps, shares = ak._grants.__wrapped__(tuple(order), tuple(worths), n_down,
                                               c_down, c_slow)
    # steps rise in spares and never restore less
    assert steps[0] == (0, 0, 0)
    assert all(a[0] < b[0] for a, b in zip(steps, steps[1:], strict=False))
    subsets = _subsets(order, worths, n_down, c_down, c_slow)
    for free in range(sum(order) + 2):
        got, got_d = _value(steps, shares, worths, n_down, c_down, c_slow, free)
        want, want_d, scale = _brute(subsets, free)
        assert got == pytest.approx(want, abs=1e-8 * scale), (free, steps)
        assert got_d == want_d, (free, steps)


instances = st.integers(0, 9).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 5), min_size=n, max_size=n),
    # worths on a coarse grid so that ties (equal worths, worth 0) are common
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.5, 1.0, 1.5, 0.1, 0.3]),
             min_size=n, max_size=n),
    st.integers(0, n)))


@settings(max_examples=300, deadline=None)
@given(instances, st.sampled_from([(1.0, 1.0), (1.0, 0.5), (0.5, 2.0), (1.0, 0.0),
                                   (1.0, -0.5)]))
def test_knapsack_is_the_brute_force_best_at_every_free_count(inst, costs):
    order, worths, n_down = inst
    _check(order, worths, n_down, *costs, limit=0)   # the knapsack, whatever the size


@settings(max_examples=100, deadline=None)
@given(instances, st.sampled_from([(1.0, 1.0), (1.0, 0.5), (1.0, -0.5)]))
def test_enumeration_agrees_with_the_brute_force_too(inst, costs):
    order, worths, n_down = inst
    _check(order, worths, n_down, *costs, limit=1 << 14)


@pytest.mark.parametrize("order, worths, n_down", [
    ((), (), 0),                          # no instance: one step, nothing back
    ((3,), (1.0,), 1),                    # one instance on 3: nothing below 3 free
    ((9,), (1.0,), 1),                    # one needing more than any small pool
    ((1, 1, 1, 1), (0.5,) * 4, 2),        # equal worths
    ((1, 2, 2), (0.0, 0.0, 0.0), 3),      # worth 0 down: taken for the down count
    ((1, 2, 2), (0.0, 0.0, 0.0), 0),      # worth 0 slowed: never worth a spare
    ((2, 1, 1), (1.0, 0.5, 0.5), 1),      # one of 2 against two of 1, equal value
])
def test_knapsack_edges(order, worths, n_down):
    _check(order, worths, n_down, 1.0, 1.0, limit=0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ak, "MAX_GRANTS", 0)
        steps, _ = ak._grants.__wrapped__(order, worths, n_down, 1.0, 1.0)
    if not order:
        assert steps == ((0, 0, 0),)
    if order == (9,):   # 0-8 free: refused whole; 9 or more: granted
        assert steps == ((0, 0, 0), (9, 1, 0))
    if worths == (0.0,) * 3 and n_down == 0:   # nothing to restore: never granted
        assert steps == ((0, 0, 0),)


def test_knapsack_time_at_a_thousand_instances_of_forty_kinds():
    # 1,000 instances: 40 kinds (spares 1-4, worths 0.05-0.44), half of them down
    order = tuple(1 + i % 4 for i in range(1000))
    worths = tuple(0.05 + 0.01 * (i % 40) for i in range(1000))
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        steps, shares = ak._grants.__wrapped__(order, worths, 500, 1.0, 0.5)
        best = min(best, time.perf_counter() - start)
    # measured 0.3-0.5 s on the shared 2 cores; 5 s leaves room for a loaded machine
    assert best < 5.0
    # every spare: all granted at the end; the down first where spares are scarce
    assert steps[-1][1:] == (500, 500)
    assert steps[1][1] == 1 and steps[1][2] == 0


# ---------------------------------------------------------------------------------------
# Part 2: threshold_low's bound (availability_threshold._missed), checked by hand and
# against an event simulation written here, on cases other than 256 and 512 GPUs.

YEAR = 365.25 * 86400.0


def test_second_moment_of_an_erlang_pool_of_two_by_hand():
    # one kind of one spare at rate 1, held 1 (exponential), repair 1, on a pool of 2:
    # Erlang, load 1: q = (1, 1, 1/2) / 2.5 = (0.4, 0.4, 0.2); the chain's deaths as
    # detailed balance keeps q: j -> j-1 at j. Refusals arrive at 1 in state 2 (stay 2).
    # E[Y] = q'A1 / s1 = 0.2 (s1 = 1/d = 1). E[C(Y, 2)] = q'A R(1) A 1 / s2, s2 = 2:
    # I - Q = [[2, -1, 0], [-1, 3, -1], [0, -2, 3]], det 11, its inverse's (2, 2) entry
    # (2 x 3 - 1) / 11 = 5/11, so 0.2 x 5/11 / 2 = 1/22 (Poisson: 0.2^2 / 2 = 1/50).
    k = Kind("gpu", "x", 1.0, down=1, slow=0.0, units=1, restored=0.0, d_repair=1.0,
             d_swap=0.0, hold=1.0, d_slow=0.0)
    refused = np.zeros((3, 3))
    refused[2, 2] = 1.0
    mo = at._pool_moments([k], [1.0], np.array([0.4, 0.4, 0.2]), [(refused, 1.0)], 2)
    assert mo[(1,)] == pytest.approx(0.2)
    assert mo[(2,)] == pytest.approx(1 / 22)


def _sim_below(kinds, spares, instances, threshold, years, seed):
    """Share of time more than ``1 - threshold`` of ``instances`` are down, by events:
    failures at each kind's rate; one global pool; a failure downing ``down`` instances of
    ``per`` spares each gets ``free // per`` of them back on spares (all or nothing where
    ``per`` is 0), held ``hold`` s (fixed), each back after ``d_swap`` s, the rest after
    ``d_repair`` s. Written apart from availability_mc."""
    rng = np.random.default_rng(seed)
    span = years * YEAR
    warm = max(k.hold + k.d_repair for k in kinds)
    rates = np.array([k.rate * k.cells for k in kinds])
    n = rng.poisson(rates.sum() * (span + warm))
    times = np.sort(rng.uniform(-warm, span, n))
    which = rng.choice(len(kinds), n, p=rates / rates.sum())
    down = np.array([x.down for x in kinds])[which]
    swap = times + np.array([x.d_swap for x in kinds])[which]
    repair = times + np.array([x.d_repair for x in kinds])[which]
    free, held = spares, []
    backs = np.zeros(n, dtype=np.int64)
    # the one sequential step: how many of each failure's instances come back on spares
    for i, (t, k) in enumerate(zip(times.tolist(), which.tolist(), strict=True)):
        while held and held[0][0] <= t:
            free += heapq.heappop(held)[1]
        x = kinds[k]
        back = min(x.down, free // x.per) if x.per else (x.down if free >= x.units else 0)
        got = back * x.per if x.per else (x.units if back else 0)
        if got:
            free -= got
            heapq.heappush(held, (t + x.hold, got))
        backs[i] = back
    # per failure, in its order: its instances' downs, then those back at the swap and
    # the rest at the repair
    starts = np.repeat(times, down)
    ends = np.repeat(np.column_stack([swap, repair]).ravel(),
                     np.column_stack([backs, down - backs]).ravel())
    at = np.concatenate([starts, ends])
    step = np.concatenate([np.ones(len(starts)), -np.ones(len(ends))])
    order = np.argsort(at, kind="stable")
    at, level = np.clip(at[order], 0.0, span), np.cumsum(step[order])
    return float(np.diff(at)[level[:-1] > (1 - threshold) * instances + 1e-9].sum() / span)


@pytest.fixture(scope="module")
def tp1_64():
    # 64 H100 (8 DGX) at TP 1, GPU failures 1e-3 an hour, one-day repairs; at 95% it
    # takes 4 instances down (3.2 allowed), so one GPU refused never crosses alone
    cat = catalog().with_(gpu_rate_per_hour=1e-3,
                          repair_hours={"gpu-die": 24, "gpu-package": 24})
    c = build_cluster("h100-dgx", "Llama-3-8B", "decode", gpus=64, catalog_=cat)
    kinds = event_kinds(c, "global")
    assert c.instances_total == 64
    assert {(k.down, k.per, k.slow, k.worth) for k in kinds} == {(1, 0, 0.0, -1.0),
                                                                 (8, 1, 0.0, -1.0)}
    return kinds


def _closed(kinds, spares, instances, threshold):
    pools = SparePools(placement="global", spares=spares, pools=1, reachable=(spares,),
                       groups=1)
    a = aa.analytic(kinds, pools, instances, threshold)
    bound = at._missed(kinds, a.blocking, (1 - threshold) * instances, pools,
                       aa._blocking(kinds, pools)[1])
    return a, bound


# It was no bound here (a strict xfail: bound 3.1e-4, reading + bound 2.13e-3 < events
# 2.59e-3): the moments ran on the chain of the busy count, whose releases are the
# average over who holds the spares, and took a host's refused instances as a timer apart
# from its hold. A DGX host refused 2 of its 8 instances takes every free spare and keeps
# them for its repair; the GPU failures of that day are refused. The chain of holdings
# (availability_threshold._held_moments) reads 1.17e-3 (tests/netmodel/
# test_held_moments_h501.py checks it against this case's refusals in progress).
def test_unflagged_time_below_is_within_reading_plus_bound_64_gpus(tp1_64):
    a, bound = _closed(tp1_64, 6, 64, 0.95)
    assert a.fallback == () and not a.threshold_low
    assert a.below_threshold == pytest.approx(1.82e-3, rel=0.02)
    sim = np.mean([_sim_below(tp1_64, 6, 64, 0.95, 300, seed) for seed in (0, 1, 2)])
    assert sim <= a.below_threshold + bound


def _states(cap: int, takes) -> int:
    """Multisets of holds (each of ``takes`` spares) within ``cap`` spares: the states of
    one pool's chain where every hold lasts as long (availability_busy._chain_of)."""
    ways = [1] + [0] * cap
    for t in takes:
        for s in range(t, cap + 1):
            ways[s] += ways[s - t]
    return sum(ways)


def test_where_the_chain_limit_falls_for_instances_smaller_than_a_host():
    # a TP-1 host failure is granted 1..8 spares, a GPU's 1: the chain's states are the
    # partitions of at most cap into parts of at most 8; past MAX_SEQUENTIAL_STATES
    # (30,000) from 35 spares in one pool. TP 2 (parts 2, 4, 6, 8): from 120; TP 4: 1,380;
    # TP 8 (a host one instance, all or nothing) takes no chain
    limit = ab.MAX_SEQUENTIAL_STATES
    first = {tp: next(c for c in range(1, 2000)
                      if _states(c, range(tp, 9, tp)) > limit) for tp in (1, 2, 4)}
    assert first == {1: 35, 2: 120, 4: 1380}
    # so at 1% - 5% global spares, TP 1 falls back from 1,024 GPUs at 4% (40), 2,048
    # at 2%, and at every share from 4,096 GPUs (1% = 40)
    share = {g: min(p for p in (1, 2, 3, 4, 5) if g * p // 100 >= first[1]) for g in
             (1024, 2048, 4096, 8192, 16384)}
    assert share == {1024: 4, 2048: 2, 4096: 1, 8192: 1, 16384: 1}


@pytest.fixture(scope="module")
def tp1_512():
    cat = catalog().with_(gpu_rate_per_hour=1e-3,
                          repair_hours={"gpu-die": 24, "gpu-package": 24})
    c = build_cluster("h100-dgx", "Llama-3-8B", "decode", gpus=512, catalog_=cat)
    return event_kinds(c, "global")


def _fallback(kinds, spares):
    pools = SparePools(placement="global", spares=spares, pools=1, reachable=(spares,),
                       groups=1)
    return aa._blocking(kinds, pools)[1]["fallback"]


def test_the_fallback_starts_at_35_spares(tp1_512, monkeypatch):
    # as counted above: 35 spares of one global pool take the fallback, 34 the chain, of
    # _states(34, 1..8) = 29,647 states: built, its steady state left out (GMRES stalls
    # at 1.04e-11 of the 1e-11 asked there, then BiCGSTAB settles it: 0.54 s CPU where
    # SuperLU took minutes; tests/netmodel/test_one_pool_bicgstab.py)
    built = []
    monkeypatch.setattr(ab, "_steady_state", lambda n, *a, **kw: built.append(n)
                        or np.full(n, 1.0 / n))
    assert _fallback(tp1_512, 34) == ()
    assert built == [_states(34, range(1, 9))] == [29_647]
    for spares in (35, 37):
        assert _fallback(tp1_512, spares) == (ab.FALLBACK_INDEPENDENT,)
    assert built == [29_647]   # past the limit: no chain of one repair time either
    # the same rule solved, at a limit set where the chain of 20 spares ends (2,099 states)
    monkeypatch.undo()
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", _states(20, range(1, 9)))
    assert _fallback(tp1_512, 20) == ()
    for spares in (21, 23):
        assert _fallback(tp1_512, spares) == (ab.FALLBACK_INDEPENDENT,)


# Past the chain's limit the closed form read the time below far low: 512 H100 at TP 1
# (1e-3/h, one-day repairs), 28 global spares, 99%, past a limit of 10,000 states: a
# fallback of independent one-spare asks read 5.0e-5; events here 2.9e-4 (120 y, 5.8x),
# availability_mc 4.2e-4 +- 1.3e-4 (8x), waits 0.51/y against 3.27/y; at 27 spares (chain
# solved) it reads 1.7e-4 flagged (mc 6.1e-4). It was unflagged (a strict xfail here); a
# run that took the fallback is now flagged. The fallback keeping each failure's grant
# whole reads 1.16e-4 and 3.17 waits a year (the chain, now under its limit: 1.18e-4, 2.83).
def test_fallback_reading_is_flagged_or_within_twice(tp1_512, monkeypatch):
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 10_000)
    pools = SparePools(placement="global", spares=28, pools=1, reachable=(28,), groups=1)
    a = aa.analytic(tp1_512, pools, 512, 0.99)
    assert a.fallback == (ab.FALLBACK_INDEPENDENT,)
    sim = np.mean([_sim_below(tp1_512, 28, 512, 0.99, 60, seed) for seed in (0, 1)])
    assert sim > 0
    assert a.threshold_low or sim < 2 * a.below_threshold
