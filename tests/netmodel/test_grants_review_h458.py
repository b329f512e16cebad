"""Review of the grant by capacity (``availability_kinds._grants``): at every count of free
spares the grant restores at least what the fewest-first order restores, enumerated or
past :data:`~netmodel.study.availability_kinds.MAX_GRANTS` ways.

The reference is by definition, apart from the code: fewest first takes the down
instances, fewest spares first, as far as the free spares reach, then the slowed from what
is left; among instances taking as many spares, the worthiest first (fewest first says
nothing there, and an operator brings back the more capacity). What a grant restores is
each instance's worth x the time a grant saves it (``c_down`` down, ``c_slow`` slowed).
Where the ways are few the grant is also the best of every subset that fits (brute force).

Past 16,384 ways the grant keeps the fewest-first order; its shares back counted the
instances taking as many spares cheapest worth first (``sorted`` on ``(spares, worth)``),
so fifteen instances slowed on 1 spare each, losing 1 to 15 tenths of an instance's
worth, with 1 free, counted the 0.1 one's 1/120 of the slowed capacity back, below the
1/15 the count gives (``Kind.per``'s share before c31b35e made such a failure
``Kind.each``) and below the 15/120 an operator's pick of the worthiest brings.
"""

from __future__ import annotations

from itertools import accumulate, combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study import availability_kinds as ak


def _fewest_first(order, worths, n_down, free, c_down, c_slow):
    """What fewest first restores with ``free`` spares (by definition, above)."""
    down = sorted(zip(order[:n_down], worths[:n_down], strict=True), key=lambda p: (p[0], -p[1]))
    slow = sorted(zip(order[n_down:], worths[n_down:], strict=True), key=lambda p: (p[0], -p[1]))
    cd = [0, *accumulate(u for u, _ in down)]
    d = max(i for i, c in enumerate(cd) if c <= free)
    left = free - cd[d]
    cs = [0, *accumulate(u for u, _ in slow)]
    s = max(i for i, c in enumerate(cs) if c <= left)
    return c_down * sum(w for _, w in down[:d]) + c_slow * sum(w for _, w in slow[:s])


def _subsets(order, worths, n_down, c_down, c_slow) -> list:
    """Every subset of the instances: (the spares it takes, what it restores)."""
    n = len(order)
    return [(sum(order[i] for i in pick),
             sum(worths[i] * (c_down if i < n_down else c_slow) for i in pick))
            for r in range(n + 1) for pick in combinations(range(n), r)]


def _best(order, worths, n_down, free, c_down, c_slow, subsets=None):
    """The most any subset that fits restores (brute force; ``subsets``: their
    :func:`_subsets`, where already listed)."""
    best = 0.0
    for spares, restored in subsets or _subsets(order, worths, n_down, c_down, c_slow):
        if spares <= free:
            best = max(best, restored)
    return best


def _restored(order, worths, n_down, free, c_down, c_slow, grants=None):
    """What the grant restores with ``free`` spares, from its step and shares
    (``grants``: ``_grants``' answer, where already made)."""
    steps, shares = grants or ak._grants.__wrapped__(tuple(order), tuple(worths), n_down,
                                                     c_down, c_slow)
    g = max(i for i, (t, _, _) in enumerate(steps) if t <= free)
    kd, ks = shares[g]
    return (kd * c_down * sum(worths[:n_down]) + ks * c_slow * sum(worths[n_down:]),
            steps[g][0])


kinds = st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 5), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.125, 0.25, 0.5, 0.75, 1.0, 1.5]), min_size=n, max_size=n),
    st.integers(0, n), st.sampled_from([1.0, 0.5, 2.0]), st.sampled_from([1.0, 0.25, 3.0])))


@settings(max_examples=300, deadline=None)
@given(kind=kinds, fallback=st.booleans())
def test_never_less_than_fewest_first(kind, fallback):
    order, worths, n_down, c_down, c_slow = kind
    with pytest.MonkeyPatch.context() as mp:
        if fallback:   # every way count past the limit: the knapsack
            mp.setattr(ak, "MAX_GRANTS", 0)
        _check(order, worths, n_down, c_down, c_slow, fallback)


def _check(order, worths, n_down, c_down, c_slow, fallback):
    # the grant (its steps and shares at every count of free spares) and the subsets made
    # once, read at each count
    grants = ak._grants.__wrapped__(tuple(order), tuple(worths), n_down, c_down, c_slow)
    subsets = _subsets(order, worths, n_down, c_down, c_slow)
    for free in range(sum(order) + 1):
        got, taken = _restored(order, worths, n_down, free, c_down, c_slow, grants)
        ff = _fewest_first(order, worths, n_down, free, c_down, c_slow)
        assert taken <= free
        assert got >= ff - 1e-9 * max(ff, 1.0), (free, got, ff)
        # enumerated or past the limit (a knapsack over the spares since the fewest-first
        # order there, tests/netmodel/test_grants_knapsack_h484.py): the best that fits
        best = _best(order, worths, n_down, free, c_down, c_slow, subsets)
        assert got == pytest.approx(best, rel=1e-9, abs=1e-12), (free, got, best, fallback)


def test_past_the_limit_the_worthiest_of_as_many_spares():
    # fifteen slowed on 1 spare each, losing 0.1 .. 1.5 instances' worth: 2**15 ways,
    # past 16,384; 1 free swaps the 1.5 one (15/120 of the slowed capacity back), 3 free
    # the 1.5, 1.4 and 1.3 (42/120): by hand
    worths = tuple(i / 10 for i in range(1, 16))
    order = (1,) * 15
    assert 2 ** 15 > ak.MAX_GRANTS
    steps, shares = ak._grants(order, worths, 0, 1.0, 1.0)
    assert steps[1] == (1, 0, 1) and steps[3] == (3, 0, 3)
    assert shares[1][1] == pytest.approx(15 / 120, rel=1e-12)
    assert shares[3][1] == pytest.approx(42 / 120, rel=1e-12)
    # never below the count's share (what Kind.per counted): g of 15
    assert all(s >= g / 15 - 1e-12 for g, (_, s) in enumerate(shares))


def test_a_grant_that_costs_more_than_it_saves_is_not_preferred():
    # one down instance whose grant loses 2 (c_down -2: the capacity lost on its spares
    # past what waiting loses) beside one slowed whose swap saves 1, 1 spare each: 1 free
    # swaps the slowed (+1), never the down (-2); 2 free still only the slowed (-1 < +1).
    # The values were scaled by their sum (-1 here), which turned the choice round: the
    # down one granted at 1 free, 2 free granting it alone (by hand)
    steps, shares = ak._grants.__wrapped__((1, 1), (1.0, 1.0), 1, -2.0, 1.0)
    assert steps == ((0, 0, 0), (1, 0, 1))
    assert shares == ((0.0, 0.0), (0.0, 1.0))
    for free in (0, 1, 2):
        got, _ = _restored((1, 1), (1.0, 1.0), 1, free, -2.0, 1.0)
        assert got == _best((1, 1), (1.0, 1.0), 1, free, -2.0, 1.0) == min(free, 1)
