"""The Monte Carlo's loss system (netmodel.study.availability_mc_lanes._loss_system): a lane whose
spares never run out, even were every event granted, is granted whole without the loop
(_never_full); every other lane goes through the loop (_loss_lanes). Both ways must grant
the same events."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.study import availability_mc_lanes as av


def _lanes(rng, lanes, kmax, cap_choices, zero_holds=False, shuffle=False):
    """Padded lanes as _simulate_chunk makes them (sorted by event count, descending)."""
    counts = np.sort(rng.integers(kmax // 2, kmax + 1, size=lanes))[::-1]
    counts[0] = kmax
    t = np.full((lanes, kmax), np.inf)
    u = np.zeros((lanes, kmax), dtype=np.int64)
    h = np.zeros((lanes, kmax))
    for i, c in enumerate(counts):
        times = np.sort(np.round(rng.random(c) * 1000.0, 1))   # ties at 0.1 s
        if shuffle:   # neighbours a hair apart may come out of order (the float sort key)
            swap = np.flatnonzero(rng.random(c - 1) < 0.05)
            times[swap], times[swap + 1] = times[swap + 1].copy(), times[swap].copy()
        t[i, :c] = times
        u[i, :c] = rng.integers(1, 4, size=c)
        h[i, :c] = rng.choice([5.0, 20.0, 60.0, 0.0 if zero_holds else 1.0], size=c)
    cap = rng.choice(cap_choices, size=lanes).astype(np.int64)
    return t, u, h, cap, counts


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("zero_holds,shuffle", [(False, False), (True, False), (False, True)])
def test_the_shortcut_grants_what_the_loop_grants(seed, zero_holds, shuffle):
    rng = np.random.default_rng(seed)
    # few long lanes (the shortcut is tried): caps from always short to never short
    t, u, h, cap, counts = _lanes(rng, 6, 400, [3, 8, 20, 60, 400, 2000], zero_holds,
                                  shuffle)
    short = av._loss_system(t, u, h, cap, counts)
    long = av._loss_lanes(t, u, h, cap, counts)
    assert np.array_equal(short, long)
    whole = [av._never_full(t[i, :c], u[i, :c], h[i, :c], int(cap[i]))
             for i, c in enumerate(counts)]
    for i, c in enumerate(counts):   # a lane said never full is granted whole by the loop
        if whole[i]:
            assert long[i, :c].all()
    # the largest caps hold every event at once (units at most 3): granted without the loop
    if not zero_holds and not shuffle:
        assert all(w for w, k in zip(whole, cap, strict=True) if k >= 3 * 400)


def test_by_hand():
    # one spare, each event holding it 1.5 s: the event at 1 s finds it taken, the one at
    # 2 s finds it back (freed at 1.5 s); with 2 spares every event is granted
    t = np.array([[0.0, 1.0, 2.0] + [np.inf] * 9])
    u = np.array([[1, 1, 1] + [0] * 9])
    h = np.array([[1.5, 1.5, 1.5] + [0.0] * 9])
    counts = np.array([3])
    for cap, expect, whole in ((1, [True, False, True], False), (2, [True] * 3, True)):
        caps = np.array([cap])
        assert av._never_full(t[0, :3], u[0, :3], h[0, :3], cap) is whole
        assert av._loss_system(t, u, h, caps, counts)[0, :3].tolist() == expect
        assert av._loss_lanes(t, u, h, caps, counts)[0, :3].tolist() == expect
        assert not av._loss_system(t, u, h, caps, counts)[0, 3:].any()   # padding
    # a hold ending at the next event's time frees the spare for it
    h1 = np.where(np.isfinite(t), 1.0, 0.0)
    assert av._never_full(t[0, :3], u[0, :3], h1[0, :3], 1)
    assert av._loss_system(t, u, h1, np.array([1]), counts)[0, :3].all()
    # a zero hold among events at one time: not counted by the shortcut, left to the loop
    tz, hz = t.copy(), h.copy()
    tz[0, :3], hz[0, :3] = [1.0, 1.0, 1.0], [0.0, 5.0, 5.0]
    assert not av._never_full(tz[0, :3], u[0, :3], hz[0, :3], 3)
    assert av._loss_system(tz, u, hz, np.array([1]), counts)[0, :3].tolist() == \
        [True, True, False]
