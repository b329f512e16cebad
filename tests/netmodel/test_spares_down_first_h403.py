"""A failure granted in part gives its spares to the instances it took down first.

A failure that downs some instances and slows others (where spares serve the slowed
faster, ``Kind.slow_swapped``) asks spares for both, every instance the same ``per``. Short
of free spares, the grant was spread evenly: half the pieces granted brought back half the
down instances and swapped half the slowed. An operator brings the down ones back first
(a slowed instance still serves), then swaps the slowed with what is left
(``Kind.backs``), in the closed form and the Monte Carlo alike.

The hand kind: 2 instances down and 2 slowed by half each (``slow`` = ``slow_swapped`` =
1 instance's worth), 8 spares an instance (32 in all, 4 pieces), 1-day repairs, slow-downs
and holds, 600 s swaps, 0.05 failures a day, one pool of ``s`` spares, 50 instances.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_spares import SparePools

DAY, SWAP, N = 86400.0, 600.0, 50
YEAR = 365.25 * DAY


def _kind():
    return Kind("host", "x", rate=0.05 / DAY, down=2, slow=1.0, units=32, restored=0.0,
                d_repair=DAY, d_swap=SWAP, hold=DAY, d_slow=DAY, slow_swapped=1.0, per=8)


def _pool(s):
    return SparePools("global", s, 1, (s,))


def test_the_pieces_go_to_the_down_instances_first():
    k = _kind()
    assert (k.pieces, k.grain, k.down_pieces) == (4, 8, 2)
    assert [k.backs(g) for g in range(5)] == [(0.0, 0.0), (0.5, 0.0), (1.0, 0.0),
                                               (1.0, 0.5), (1.0, 1.0)]


@pytest.mark.parametrize(("spares", "per_failure_days"), [
    # lost instance-days a failure finding the pool free (each failure holds what it
    # takes for a day, so the pool is busy, and every instance refused, a share
    # B = a / (1 + a), a = 0.05 x 1 day, of the failures: 3 instance-days each). Spread
    # evenly (the old grant) the three read 2.29, 1.58 and 0.87 instance-days a failure
    # with the busy share; down first:
    # 8 spares: 1 down back (a swap), 1 down for the repair, both slowed for the day
    (8, SWAP / DAY + 1 + 1),
    # 16: both down back, both slowed for the day
    (16, 2 * SWAP / DAY + 1),
    # 24: both down back, 1 slowed swapped (slow until the swap), the other for the day
    (24, 2.5 * SWAP / DAY + 0.5),
])
def test_loss_by_hand(spares, per_failure_days):
    k = _kind()
    a = k.rate * k.hold
    busy = a / (1 + a)
    hand = k.rate * ((1 - busy) * per_failure_days + busy * 3) * DAY / N
    got = analytic([k], _pool(spares), N)
    assert got.overlap == pytest.approx(hand, rel=1e-12)
    # a down instance waits only where the pool is busy (16 and 24: both down back
    # whenever it is free); with 8 one always waits
    waits = k.rate * YEAR * (busy if spares >= 16 else 1.0)
    assert got.waits_for_repair_per_year == pytest.approx(waits, rel=1e-12)


@pytest.mark.parametrize("spares", [8, 16, 24])
def test_closed_form_and_monte_carlo_agree(spares):
    k = _kind()
    a = analytic([k], _pool(spares), N)
    mc = simulate([k], _pool(spares), N, horizon="1y", trials=2000, seed=spares)
    assert abs(mc.mean - a.mean) <= 2 * mc.mean_ci
    # waits: a Poisson count over 2,000 trials (about 1,700 at 16 spares: +- 3 sigma)
    sigma = (max(a.waits_for_repair_per_year, 1.0) / 2000) ** 0.5
    assert abs(mc.waits_for_repair_per_year - a.waits_for_repair_per_year) <= 4 * sigma
