"""The closed-form tail takes one failure's losses together (h238).

A failure that takes instances down and slows others (or, split by group, takes one
group's down and slows another's: ``follows``) starts all its losses at one moment. The
tail (``below_threshold``) summed them as independent streams, so a failure of loss 2
(1 down + 1 slowed) read as two Poisson counts of 1: with 4 instances, a threshold of
60% (at most 1.6 lost) and 0.1 failures in progress on average, 1 - e^-0.2 (1.2) = 0.0175
where the model's value, which the Monte Carlo gives, is 1 - e^-0.1 = 0.0952.
"""

import math
from dataclasses import replace

import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_spares import SparePools

DAY = 86400.0
NONE = SparePools("pod", 0, 1, (0,), 1)


def _kind(r, down, slow, d_rep, d_slow, **kw):
    return Kind("leaf", "x", rate=r, down=down, slow=slow, units=1, restored=0.0,
                d_repair=d_rep, d_swap=600.0, hold=d_rep, d_slow=d_slow, **kw)


def test_a_failure_down_and_slow_at_once_is_one_loss():
    # each failure loses 2 for 10 days; over 1.6 whenever one is in progress
    d = 10 * DAY
    r = 0.1 / d
    a = analytic([_kind(r, 1, 1.0, d, d)], NONE, 4, 0.6)
    assert a.below_threshold == pytest.approx(-math.expm1(-r * d), rel=1e-12)  # old 0.0175


def test_its_loss_steps_down_when_the_slow_down_ends():
    # down 1 for 10 days, slowed 1 for the first 4: a failure younger than 4 days loses 2,
    # one older 1 (independent Poisson counts of rates r 4d and r 6d); over 1.5 lost when
    # a young one is in progress or two old ones: 1 - e^-(r 10d) (1 + r 6d)
    d1, d2 = 10 * DAY, 4 * DAY
    r = 0.05 / DAY
    k = _kind(r, 1, 1.0, d1, d2)
    hand = 1 - math.exp(-r * d1) * (1 + r * (d1 - d2))
    a = analytic([k], NONE, 4, 0.625)
    assert a.below_threshold == pytest.approx(hand, rel=1e-12)
    mc = simulate([k], NONE, 4, horizon="4y", trials=300, seed=3, threshold=0.625)
    assert abs(mc.below_threshold - hand) <= 4 * mc.below_threshold_ci


def test_a_failure_over_two_groups_down_in_one_slow_in_the_other():
    # the group-0 kind takes one instance down, the group-1 kind (follows: the same
    # failures) slows one by a whole instance: 2 lost at once, as one failure
    d = 10 * DAY
    r = 0.1 / d
    lead = _kind(r, 1, 0.0, d, d, group=0)
    kinds = [lead, replace(lead, group=1, follows=True, down=0, units=0, slow=1.0)]
    pools = SparePools("group", 0, 2, (0, 0), 2)
    hand = -math.expm1(-r * d)
    a = analytic(kinds, pools, 4, 0.6)
    assert a.below_threshold == pytest.approx(hand, rel=1e-12)
    mc = simulate(kinds, pools, 4, horizon="4y", trials=300, seed=4, threshold=0.6)
    assert abs(mc.below_threshold - hand) <= 4 * mc.below_threshold_ci
