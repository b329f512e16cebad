"""The Monte Carlo's loss system runs few long lanes one event at a time
(netmodel.study.availability_mc_lanes._loss_lane): it must grant what the rank loop
(_loss_lanes) grants, spares taken in part (a grain table) and one failure's several asks
(a pick table) included, and events a hair out of time order (the float sort key) too.
Before, such lanes went through the rank loop, some 150 us a step whatever the lanes:
lite-flat at 131,072 GPUs, 100 years, 10 trials, 65 global spares ran past 15 minutes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study import availability_mc_lanes as av


def _lanes(rng, lanes, kmax, caps, shuffle):
    counts = np.sort(rng.integers(1, kmax + 1, size=lanes))[::-1]
    counts[0] = kmax
    t = np.full((lanes, kmax), np.inf)
    u = np.zeros((lanes, kmax), dtype=np.int64)
    h = np.zeros((lanes, kmax))
    for i, c in enumerate(counts):
        times = np.sort(np.round(rng.random(c) * 100.0, 0))   # many ties
        if shuffle:   # neighbours out of order, as the float sort key may leave them
            swap = np.flatnonzero(rng.random(c - 1) < 0.2)
            times[swap], times[swap + 1] = times[swap + 1].copy(), times[swap].copy()
        t[i, :c] = times
        u[i, :c] = rng.integers(1, 6, size=c)
        h[i, :c] = rng.choice([0.0, 1.0, 5.0, 20.0, 60.0], size=c)
    return t, u, h, rng.choice(caps, size=lanes).astype(np.int64), counts


def _take_table(rng, rows, width):
    """Per row, the spares taken of f free: at most f, never fewer as f grows."""
    steps = rng.integers(0, 2, size=(rows, width))
    steps[:, 0] = 0
    table = np.minimum(np.cumsum(steps, axis=1) * rng.integers(1, 3, size=(rows, 1)),
                       np.arange(width))
    return np.maximum.accumulate(table, axis=1)


def _by_lane(t, u, h, cap, counts, pick=None, grain=None):
    out = np.zeros(t.shape, dtype=bool if grain is None else np.int64)
    seen = np.zeros(t.shape, dtype=np.int64)
    for i, c in enumerate(counts):
        got = av._loss_lane(t[i, :c], u[i, :c], h[i, :c], int(cap[i]),
                            None if pick is None else (pick[0][i, :c], pick[1]),
                            None if grain is None else (grain[0][i, :c], grain[1]))
        if pick is None:
            out[i, :c] = got
        else:
            out[i, :c], seen[i, :c] = got
    return out, seen


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 60), st.booleans(),
       st.sampled_from(["plain", "grain", "pick", "both"]))
def test_one_event_at_a_time_grants_what_the_rank_loop_grants(seed, lanes, kmax, shuffle,
                                                               how):
    rng = np.random.default_rng(seed)
    t, u, h, cap, counts = _lanes(rng, lanes, kmax, [0, 1, 3, 6, 12], shuffle)
    grain = pick = None
    if how in ("grain", "both"):
        rows = np.where(rng.random(t.shape) < 0.5, rng.integers(0, 2, size=t.shape), -1)
        grain = (rows, _take_table(rng, 2, 8))
    if how in ("pick", "both"):
        pats = np.where(rng.random(t.shape) < 0.4, rng.integers(0, 3, size=t.shape), -1)
        if grain is not None:   # a failure's several asks are each all or nothing
            grain = (np.where(pats >= 0, -1, grain[0]), grain[1])
        pick = (pats, _take_table(rng, 3, int(cap.max()) + 1))
    loop = av._loss_lanes(t, u, h, cap, counts, pick, grain)
    mine, seen = _by_lane(t, u, h, cap, counts, pick, grain)
    if pick is None:
        assert np.array_equal(mine, loop)
    else:
        assert np.array_equal(mine, loop[0])
        several = pick[0] >= 0   # the free spares seen are read at such events only
        assert np.array_equal(seen[several & np.isfinite(t)],
                              loop[1][several & np.isfinite(t)])


def test_a_hold_taken_again_is_forgotten_by_an_event_out_of_order():
    # one spare in two slots: 'a' at 0 holds slot 0 to 10, 'b' at 1 slot 1 to 3 (cap 2);
    # 'c' at 12 takes slot 0 (to 14: 'a' ended); 'd' at 2.5 (out of order) finds 'b'
    # live and 'c' live (14 > 2.5): busy 2, refused; 'a' no longer counts
    t = np.array([0.0, 1.0, 12.0, 2.5])
    u = np.array([1, 1, 1, 1])
    h = np.array([10.0, 2.0, 2.0, 1.0])
    got = av._loss_lane(t, u, h, 2)
    assert got.tolist() == [True, True, True, False]
    loop = av._loss_lanes(t[None], u[None], h[None], np.array([2]), np.array([4]))
    assert loop[0].tolist() == got.tolist()


def test_few_long_lanes_take_the_one_event_path():
    # two lanes of 400 events each, spares short: not granted whole, few lanes
    rng = np.random.default_rng(7)
    t, u, h, cap, counts = _lanes(rng, 2, 400, [3], False)
    assert 2 <= av.SEQUENTIAL_LANES and 2 * 4 <= 400
    assert not any(av._never_full(t[i, :c], u[i, :c], h[i, :c], int(cap[i]))
                   for i, c in enumerate(counts))
    assert np.array_equal(av._loss_system(t, u, h, cap, counts),
                          av._loss_lanes(t, u, h, cap, counts))
