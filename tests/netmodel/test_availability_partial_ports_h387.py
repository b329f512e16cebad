"""Free ports, like free spares, bring back as many whole instances as they hold.

lite-flat's pod pool has 144 - 128 = 16 free ports (a spare takes a port on every plane),
and a host of 32 Lites holds two TP-16 instances: re-creating both takes 32 sites. The
recovery said 'only 16 free port(s) for 32 spares' and brought back neither, though one
instance of 16 fits. Now one is re-created on the 16 spares and the other waits for the
repair, as a failure short of free spares is granted in part (``Recovery.per``,
``Kind.per``), in the closed form and the Monte Carlo alike.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_recovery import recovery
from netmodel.study.reliability_spares import capacity, spare_pools


@pytest.fixture(scope="module")
def flat():
    return build_cluster("lite-flat", "Llama-3-70B", "decode")


def _host(cluster):
    return next(e for e in cluster.effects() if e.cls == "host")


def test_a_host_brings_back_the_one_instance_its_16_free_ports_hold(flat):
    assert capacity(flat, "pod") == 144 - 128 and flat.instance_gpus == 16
    e = _host(flat)
    assert e.instances_down == 2
    rec = recovery(flat, e, "pod")
    # 32 spares asked in grains of 16: floor(16 / 16) = 1 of the 2 instances comes back
    assert (rec.units, rec.per) == (32, 16)
    assert rec.path.startswith("re-create 1 of 2 on 16 spares")
    # back after the swap (90 s), not the repair (a day)
    assert rec.time_s < 3600
    (k,) = event_kinds(flat, "pod", classes=["host"])
    assert (k.units, k.per, k.grain, k.pieces) == (32, 16, 16, 2)


def test_a_host_failure_costs_one_swap_and_one_repair_not_two_repairs(flat):
    # the host alone on a pool of 16: each failure (rate r over the 4 hosts) loses one
    # instance for the swap and one for the repair, (d_swap + d_repair) r / 8 of the
    # capacity; all or nothing it lost 2 d_repair r / 8. The pool is busy (a host
    # holding its 16 until the repair) 0.17% of the time, the tolerance.
    (k,) = event_kinds(flat, "pod", classes=["host"])
    n = flat.instances_total
    assert n == 8 and k.restored == 0.0
    hand = k.rate * (k.d_swap + k.d_repair) / n
    a = analytic([k], spare_pools(flat, 16, "pod"), n)
    assert 1 - a.mean == pytest.approx(hand, rel=3e-3)
    # one of its instances waits at every failure
    assert a.waits_for_repair_per_year == pytest.approx(k.rate * 365.25 * 86400, rel=3e-3)
    # fewer than 16 spares bought: none comes back, both wait
    short = analytic([k], spare_pools(flat, 15, "pod"), n)
    assert 1 - short.mean == pytest.approx(k.rate * 2 * k.d_repair / n, rel=1e-9)


def test_closed_form_and_monte_carlo_agree_on_lite_flat_pod_spares(flat):
    kinds = event_kinds(flat, "pod")
    pools = spare_pools(flat, 16, "pod")
    a = analytic(kinds, pools, flat.instances_total)
    mc = simulate(kinds, pools, flat.instances_total, horizon="1y", trials=1500, seed=0)
    assert abs(mc.mean - a.mean) <= 2 * mc.mean_ci
    assert abs(mc.below_threshold - a.below_threshold) <= 2 * mc.below_threshold_ci
