"""Instance-down events: one per failure and cell it strikes, however many groups (h240).

With ``group`` spares a failure that takes down instances of several groups is a kind per
group (:attr:`Kind.follows`). The closed form and the Monte Carlo counted an instance-down
event (and a wait for repair) per such kind, so the same cluster's failures made more
events with group spares than with pod ones, and a failure whose two groups' instances
both waited counted two waits: "down events waiting for repair" could exceed the failures.
"""

import math
from dataclasses import replace

import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.reliability_spares import SparePools

DAY = 86400.0
R1, R2 = 3.0 / YEAR, 2.0 / YEAR    # failures a year: over two groups, in group 0 alone


def _kinds():
    over = Kind("host", "x", rate=R1, down=1, slow=0.0, units=1, restored=0.0,
                d_repair=5 * DAY, d_swap=600.0, hold=5 * DAY, d_slow=0.0, group=0)
    return [over, replace(over, group=1, follows=True, down=2),
            replace(over, rate=R2, example="y")]


def test_a_failure_over_two_groups_is_one_instance_down_event():
    # no spares: 3 + 2 failures a year take instances down, each waiting for its repair
    none = SparePools("group", 0, 2, (0, 0), 2)
    a = analytic(_kinds(), none, 16)
    assert a.instance_down_events_per_year == pytest.approx(5.0, rel=1e-12)   # old 8
    assert a.waits_for_repair_per_year == pytest.approx(5.0, rel=1e-12)       # old 8
    mc = simulate(_kinds(), none, 16, horizon="2y", trials=2000, seed=1)
    n = 5.0 * 2 * 2000                   # 20,000 failures over 4,000 trial-years
    assert abs(mc.instance_down_events_per_year * 4000 - n) <= 5 * math.sqrt(n)  # old 32,000
    assert mc.waits_for_repair_per_year == mc.instance_down_events_per_year
    assert mc.events_per_year == mc.instance_down_events_per_year


def test_a_failure_waits_if_any_of_its_instances_does():
    # a spare in group 0's pool, none in group 1's: the over-two-groups failures always
    # leave group 1's instances waiting (3 a year); the group-0-alone ones wait as group
    # 0's pool refuses them (Erlang B(1, a), a = (R1 + R2) hold: both kinds ask it)
    pools = SparePools("group", 1, 2, (1, 0), 2)
    a = analytic(_kinds(), pools, 16)
    x = (R1 + R2) * 5 * DAY
    assert a.instance_down_events_per_year == pytest.approx(5.0, rel=1e-12)
    assert a.waits_for_repair_per_year == pytest.approx(3.0 + 2.0 * x / (1 + x), rel=1e-12)
