"""best_grant's pick against every subset, and two edges of h248's grants (h249 review).

An ask that can never fit (more spares than are free, or none that spares can help: -1)
is in no set that fits, so it must not change the pick. The closed form hands
:func:`best_grant` every ask of a failure with ``units > 0``; the Monte Carlo only those
of at most its pool's spares. Where the never-fitting asks took the count past
:data:`MAX_BEST_ASKS`, the closed form granted in the kinds' order and the Monte Carlo
the best set (12 asks that fit and one that does not: below). Now the count is of the
asks that could fit.
"""

from dataclasses import replace
from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study.availability_kinds import MAX_BEST_ASKS, TIE, best_grant
from netmodel.study.availability_mc import simulate

from .test_availability_sequential_asks_h240 import POOLS
from .test_availability_sequential_asks_h240 import _kinds as _span_kinds


def _brute(units, values, free):
    # the first subset (earliest asks granted first) of the most value among those that
    # fit; every ask that can be where all the positive asks fit
    if sum(u for u in units if u > 0) <= free:
        return tuple(u >= 0 for u in units)
    best = None
    for pick in product((True, False), repeat=len(units)):
        if any(p and u < 0 for u, p in zip(units, pick, strict=True)):
            continue
        if sum(u for u, p in zip(units, pick, strict=True) if p) > free:
            continue
        v = sum(x for x, p in zip(values, pick, strict=True) if p)
        if best is None or v > best[0] * (1 + TIE):
            best = (v, pick)
    return best[1]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([-1, 0, 1, 1, 2, 3, 7]),
                          st.sampled_from([0.0, 1.0, 1.5, 2.0, 2.5])),
                min_size=1, max_size=9),
       st.integers(0, 9))
def test_the_pick_is_the_best_subset(asks, free):
    units, values = zip(*asks, strict=True)
    assert best_grant(units, values, free) == _brute(units, values, free)


def test_asks_that_cannot_fit_do_not_change_the_pick():
    # a 2 worth 1.5 and eleven ones worth 1 each, 11 free: the eleven ones (11) beat
    # the 2 and nine ones (10.5), which the kinds' order grants; a 13th ask that cannot
    # fit (13 spares, or -1: spares cannot help) took the old code past MAX_BEST_ASKS
    units = (2,) + (1,) * 11
    values = (1.5,) + (1.0,) * 11
    assert len(units) == MAX_BEST_ASKS
    best = best_grant(units, values, 11)
    assert best == (False,) + (True,) * 11            # 11 ones: 11 > the 2 and nine: 10.5
    for extra in (13, -1):
        assert best_grant(units + (extra,), values + (5.0,), 11) == best + (False,)


def test_no_failure_drawn_with_an_instance_spanning_groups():
    # h248's guard: kinds spanning groups, so rare that no failure falls in the horizon:
    # every trial whole (the code before h248 raised TypeError on a None failure id)
    kinds = [replace(k, rate=1e-12) for k in _span_kinds()]
    mc = simulate(kinds, POOLS, 100, horizon="1h", trials=3, seed=0)
    assert mc.mean == 1.0
    assert mc.waits_for_repair_per_year == 0.0
