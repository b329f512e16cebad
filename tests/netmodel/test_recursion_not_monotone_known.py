"""A known limit of the analytic availability model, pinned (found at random by
test_fallback_dip_h584's property on the start of stop 62, before the suite's examples
were fixed): with grants in part (a failure re-creating as many of its instances as the
free spares hold), Kaufman-Roberts' recursion (availability_busy._busy_recursion, an
approximation there) is not monotone in the pool's size, where the exact chain is.

Three kinds at 2 Erlangs each, (n, g) = (2, 1), (2, 1), (5, 2): instances refused a second,
sum over kinds of load x n x share refused, by spares 11 -> 12: the exact chain 11.511 ->
11.267 (one spare more, fewer lost), the recursion 11.339 -> 11.364 (+0.025, 0.2%: inside
its measured accuracy of 0.2 a kind's share, but one spare more loses more). The test
asserts what should hold and is a strict xfail until the recursion is made monotone (or
replaced where grants are in part).

It stays one (h720): the recursion keeps a grant in part at the level it lands on, where
the chain holds it as others leave (11 spares: the recursion puts no weight on the odd
levels below the full pool, the chain 0.011-0.110 on each), so its error turns with the
pool's parity; and no monotone form can be right in general, the chain itself losing
more with a spare more elsewhere (tests/netmodel/test_spares_needed_scan_h720.py). The
searches over the pool no longer assume monotonicity (availability._smallest_pool)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from netmodel.study import availability_busy as ab

KINDS = [(2.0, 2, 1), (2.0, 2, 1), (2.0, 5, 2)]


def _take(free, n, g):
    return g * min(n, free // g)


def _lost(p: np.ndarray, cap: int) -> float:
    free = cap - np.arange(cap + 1)
    return sum(lam * float(p @ (n - np.minimum(n, free // g))) for lam, n, g in KINDS)


def _exact(cap: int) -> np.ndarray:
    busy, prob = ab._chain_of((cap,), [(lam, 1.0, partial(_take, n=n, g=g))
                                       for lam, n, g in KINDS])
    return np.bincount(busy[:, 0], weights=prob, minlength=cap + 1)


def _recursion(cap: int) -> np.ndarray:
    return ab._busy_recursion(cap, [(lam, [_take(cap - j, n, g) for j in range(cap + 1)])
                                    for lam, n, g in KINDS])


def test_the_exact_chain_loses_less_with_a_spare_more():
    exact = [_lost(_exact(c), c) for c in (11, 12)]
    assert exact[0] == pytest.approx(11.51118, abs=1e-5)
    assert exact[1] == pytest.approx(11.26723, abs=1e-5)


@pytest.mark.xfail(strict=True, reason="Kaufman-Roberts' recursion with grants in part is "
                   "not monotone in the spares (11.3386 -> 11.3636 lost a second, 11 -> 12)")
def test_the_recursion_loses_no_more_with_a_spare_more():
    lost = [_lost(_recursion(c), c) for c in (11, 12)]
    assert lost[1] <= lost[0] + 1e-12
