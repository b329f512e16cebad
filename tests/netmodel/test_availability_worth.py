"""Availability counts capacity in tokens/s, each instance at its own healthy rate.

4 leaves of 6 H100 (leaf-spine radix 12), Llama-3-70B decode TP 4, contiguous: gpu4-7 and
gpu16-19 straddle two leaves and serve batch 252 healthy where the others serve the
searched 255 (test_reliability_straddle, from an independent costing). A leaf failure
takes down the instance inside the leaf and a straddling one: capacity t0 + t1 of the
cell's 4 t0 + 2 t1, not 2 of 6 instances (instances' worth: (t0 + t1) / mean, mean =
(4 t0 + 2 t1) / 6). Availability counted 2.
"""

import math

import pytest

from netmodel.study.availability import availability
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_catalog import HOUR, catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_timings import recovery_times
from netmodel.study.scenario_fabric import build_fabric
from topologies.failure_domains import CLASSES

from .test_reliability_straddle import SCENARIO, STRADDLE, best_for


@pytest.fixture(scope="module")
def leaves_only():
    zero = {c: 0.0 for c in CLASSES if c not in ("leaf", "gpu-die", "gpu-package")}
    cat = catalog().with_(gpu_rate_per_hour=0.0, rates={**zero, "leaf": 1e-3})
    return build_cluster(SCENARIO, "Llama-3-70B", "decode", catalog_=cat)


def test_a_leaf_failure_loses_its_instances_at_their_own_rates(leaves_only):
    c = leaves_only
    t0 = c.best.tokens_per_s
    t1 = best_for(build_fabric(SCENARIO), STRADDLE, c.batch).tokens_per_s
    assert t1 < t0 * (1 - 0.005)
    mean = (4 * t0 + 2 * t1) / 6
    kinds = event_kinds(c, "pod")
    assert [(k.cls, k.down) for k in kinds] == [("leaf", 2)]
    assert kinds[0].down_worth == pytest.approx((t0 + t1) / mean, rel=1e-12)   # was 2
    assert kinds[0].down_worth < 2 - 1e-3
    # no spares: 4 leaves at r each take t0 + t1 for the repair's outage
    a = availability(None, None, cluster=c, spares=0, trials=300, horizon="2y", seed=2)
    r, d = 1e-3 / HOUR, recovery_times(c).repair_down_s("leaf")
    # leaf outages in progress N ~ Poisson(4 r d), each w = (t0 + t1) / mean instances'
    # worth: the first-order loss, capped at the 6 instances (E[(N w - 6)^+] / 6 added back,
    # about 1e-6 here: 4 leaves out at once; to the closed form's lattice of 6/1024)
    w, m = (t0 + t1) / mean, 4 * r * d
    past = sum(max(0.0, n * w - 6) * math.exp(-m) * m ** n / math.factorial(n)
               for n in range(40))
    assert past > 5e-7
    assert a.analytic.mean == pytest.approx(1 - m * w / 6 + past / 6, abs=1e-9)
    assert a.analytic.mean > 1 - 4 * r * d * 2 / 6 + 1e-6            # the count said this
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci


def test_instances_alike_count_one_each():
    from .test_spare_recovery_classes import TWO_DGX

    c = build_cluster(TWO_DGX, "Llama-3-70B", "decode")
    assert set(c.weights) == {1.0}
    assert all(k.worth == -1.0 and k.down_worth == k.down for k in event_kinds(c, "pod"))
