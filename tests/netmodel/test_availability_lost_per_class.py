"""The per-class capacity lost a year (``Analytic.lost_per_year``) adds up to the capped
total. Since 789b653 the mean caps the losses in progress at the whole cluster, but each
class still gave its first-order loss: with one instance down on average twice over
(mean capacity e^-2), two classes each said a whole year lost a year, 2 years in all
where the total is 1 - e^-2 of one. Now, where the cap cuts the total, each class has the
capped total's share its first-order loss has of the first-order total; elsewhere (every
shipped scenario) the first-order figures as before, to the bit.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.reliability_spares import SparePools

NONE = SparePools("pod", 0, 1, (0,))


def _kind(cls, rate, down_s, down=1):
    return Kind(cls, "x", rate=rate, down=down, slow=0.0, units=-1, restored=0.0,
                d_repair=down_s, d_swap=60.0, hold=down_s, d_slow=0.0)


def test_two_classes_share_the_capped_loss_by_hand():
    # one instance; gpu-die outages 3 in progress on average, host ones 1: X ~ Poisson(4)
    # outages in progress, the instance up while X = 0: mean e^-4, lost 1 - e^-4 of the
    # year, shared 3 : 1 (the old figures: 3 and 1 years a year)
    r = 1e-5
    a = analytic([_kind("gpu-die", r, 3 / r), _kind("host", r, 1 / r)], NONE, 1)
    lost = 1 - math.exp(-4)
    assert a.mean == pytest.approx(math.exp(-4), rel=1e-9)
    assert a.lost_per_year["gpu-die"] == pytest.approx(0.75 * lost * YEAR, rel=1e-9)
    assert a.lost_per_year["host"] == pytest.approx(0.25 * lost * YEAR, rel=1e-9)


def test_uncapped_figures_are_the_first_order_ones_to_the_bit():
    # 100 instances, 10 kinds of 1e-4/s down an hour: 0.36 instances down on average, far
    # from the 100 (the cap cuts nothing): each class's loss is rate x down x d / I
    k = _kind("gpu-die", 1e-4, 3600.0)
    a = analytic([k] * 10 + [_kind("host", 2e-4, 3600.0)], NONE, 100)
    assert a.lost_per_year["host"] == 2e-4 * 3600.0 * YEAR / 100
    assert a.lost_per_year["gpu-die"] == pytest.approx(10 * 1e-4 * 3600.0 * YEAR / 100,
                                                       rel=1e-15)


def _check(a):
    total = (1 - a.mean) * YEAR
    assert sum(a.lost_per_year.values()) == pytest.approx(total, rel=1e-9, abs=1e-6)
    assert all(0 <= v <= total * (1 + 1e-12) + 1e-6 for v in a.lost_per_year.values())
    assert all(v <= YEAR * (1 + 1e-12) for v in a.lost_per_year.values())


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.tuples(st.sampled_from(["gpu-die", "host", "leaf", "nic"]),
                                st.floats(1e-9, 1e-3), st.floats(60.0, 99 * YEAR),
                                st.integers(1, 4)), min_size=1, max_size=6),
       instances=st.integers(1, 16))
def test_classes_add_up_to_the_total_and_none_exceeds_it(kinds, instances):
    ks = [_kind(c, r, d, min(n, instances)) for c, r, d, n in kinds]
    _check(analytic(ks, NONE, instances))


def test_a_century_of_repairs_on_lite_flat():
    # the hostile case of 789b653: repairs of 99 years for hosts, GPU dies and packages;
    # the losses in progress add up to some 106 times the cluster: the old per-class
    # figures added up to about 106 years a year
    from netmodel.study.availability_kinds import event_kinds
    from netmodel.study.reliability_catalog import catalog
    from netmodel.study.reliability_cluster import build_cluster

    hours = 99 * YEAR / 3600
    cat = catalog().with_(repair_hours={"host": hours, "gpu-die": hours,
                                        "gpu-package": hours})
    c = build_cluster("lite-flat", "Llama-3-70B", "decode", catalog_=cat)
    a = analytic(event_kinds(c, "pod"), SparePools("pod", 0, c.cells, (0,) * c.cells),
                 c.instances_total)
    assert a.overlap > 50
    assert 0 <= a.mean < 1e-6
    _check(a)
    assert sum(a.lost_per_year.values()) <= YEAR * (1 + 1e-12)
