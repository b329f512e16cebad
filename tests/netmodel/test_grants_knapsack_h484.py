"""Past 16,384 ways to grant one failure's instances the grant is the best one still.

``availability_kinds._grants`` enumerates every way to grant a failure's instances (alike
ones counted, not told apart) and keeps, at each count of free spares, the set that fits
and restores the most. Past :data:`~netmodel.study.availability_kinds.MAX_GRANTS` ways it
kept the fewest-first order (the worthiest first among instances taking as many), which
can restore far less: now a bounded knapsack over the spares (``_knapsack``) gives the
same best grant in ``O(spares x instances)``.
"""

from __future__ import annotations

import time

import pytest

from netmodel.study import availability_kinds as ak


def _restored(steps, shares, worths, n_down, free):
    g = max(i for i, (t, _, _) in enumerate(steps) if t <= free)
    kd, ks = shares[g]
    return kd * sum(worths[:n_down]) + ks * sum(worths[n_down:])


def test_a_large_ask_worth_more_than_the_small_ones():
    # fifteen slowed instances: fourteen on 1 spare each losing 0.10 .. 0.23 of an
    # instance's worth, one on 2 spares losing 1.5; every worth apart, 2**15 ways, past
    # 16,384. With 2 free, by hand: the one of 2 (1.5) beats the two worthiest of 1
    # (0.23 + 0.22 = 0.45), which fewest first took; with 3 free, 1.5 + 0.23 = 1.73
    order = (1,) * 14 + (2,)
    worths = tuple(round(0.10 + 0.01 * i, 2) for i in range(14)) + (1.5,)
    assert 2 ** 15 > ak.MAX_GRANTS
    steps, shares = ak._grants.__wrapped__(order, worths, 0, 1.0, 1.0)
    assert _restored(steps, shares, worths, 0, 2) == pytest.approx(1.5)
    assert _restored(steps, shares, worths, 0, 3) == pytest.approx(1.73)
    assert _restored(steps, shares, worths, 0, 1) == pytest.approx(0.23)
    # the same as the enumeration gives, the limit lifted
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ak, "MAX_GRANTS", 1 << 16)
        whole = ak._grants.__wrapped__(order, worths, 0, 1.0, 1.0)
    assert steps == whole[0]
    assert [v for pair in shares for v in pair] == pytest.approx(
        [v for pair in whole[1] for v in pair], rel=1e-12)


def test_a_thousand_instances_fast():
    # a spine of a large cell: 1,000 slowed instances of 40 kinds on 1-4 spares; the
    # enumeration is out of reach (41**40 ways), the knapsack a pass per instance
    order = tuple(1 + i % 4 for i in range(1000))
    worths = tuple(0.05 + 0.01 * (i % 40) for i in range(1000))
    start = time.perf_counter()
    steps, shares = ak._grants.__wrapped__(order, worths, 0, 1.0, 1.0)
    assert time.perf_counter() - start < 5.0
    # every spare count's step restores at least the one before (a frontier), and all
    # granted at the end
    backs = [s for _, s in shares]
    assert all(b2 > b1 for b1, b2 in zip(backs, backs[1:], strict=False))
    assert steps[-1] == (sum(order), 0, 1000) and backs[-1] == pytest.approx(1.0)
