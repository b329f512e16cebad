"""Substitution short of spare sites brings back the instances the sites hold.

lite-flat with instances placed ``spread`` (Llama-3-70B, TP 16: 8 instances, each a Lite
of every 8th) puts 4 members of every instance on each host of 32 Lites: a host failure
takes 4 members from each of the 8 instances, 32 spares to substitute, and the cell has
144 - 128 = 16 free ports. Substitution was all or nothing (32 > 16), so the recovery fell
to re-creating whole instances: floor(16 / 16) = 1 of 8 back. Now the instances whose
members the sites hold are substituted, floor(16 / 4) = 4 of 8, and the other 4 wait for
the repair (``Recovery.per`` = 4, ``Kind.per``), in the closed form and the Monte Carlo
alike, as re-creation and free spares are granted in part.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_recovery import recovery
from netmodel.study.reliability_spares import capacity, spare_pools
from netmodel.study.scenario_catalog import get_scenario


def _spread(name):
    return build_cluster(replace(get_scenario(name), placement="spread"), "Llama-3-70B",
                         "decode")


@pytest.fixture(scope="module")
def flat():
    return _spread("lite-flat")


def _host(cluster):
    return next(e for e in cluster.effects() if e.cls == "host")


def test_a_host_substitutes_the_four_instances_its_16_free_ports_hold(flat):
    assert (capacity(flat, "pod"), flat.instance_gpus, flat.instances_total) == (16, 16, 8)
    e = _host(flat)
    assert e.instances_down == 8
    rec = recovery(flat, e, "pod")
    # 8 instances x 4 members = 32 spares, each instance's 4 a grain: 16 // 4 = 4 back
    # (re-creating took 16 a whole instance: 16 // 16 = 1)
    assert (rec.units, rec.per) == (32, 4)
    assert rec.path.startswith("substitute 16 of 32 spares (4 of 8 instances")
    assert rec.time_s < 3600 and rec.restored == 0.0
    (k,) = event_kinds(flat, "pod", classes=["host"])
    assert (k.units, k.per, k.grain, k.pieces) == (32, 4, 4, 8)


def test_an_ocs_host_substitutes_two_where_no_instance_could_be_recreated():
    # lite-ocs's cell has 8 free ports: 8 // 4 = 2 of 8 instances substituted; no
    # instance of 16 fits on 8, so before the recovery was 'only 8 free port(s)' (None)
    ocs = _spread("lite-ocs")
    assert capacity(ocs, "pod") == 8
    rec = recovery(ocs, _host(ocs), "pod")
    assert (rec.units, rec.per) == (32, 4)
    assert rec.path.startswith("substitute 8 of 32 spares (2 of 8 instances")


@pytest.mark.parametrize(("spares", "back"), [(16, 4), (15, 3), (4, 1), (3, 0)])
def test_host_loss_by_hand(flat, spares, back):
    # the host alone: a failure finding s free brings floor(s / 4) instances back after
    # the swap, the other 8 - floor(s / 4) after the repair. The pool is held whole by
    # a host until its repair (hold), so a host finds it busy with Erlang B(1, a) =
    # a / (1 + a), a = rate x hold (~0.0017), and then all 8 wait. Lost instance-seconds
    # a failure: (1 - B) (back d_swap + (8 - back) d_repair) + B 8 d_repair, over the 8
    # instances (the first-order loss, before the cap at the whole cluster). Where
    # back = 0 the pool is never taken: 8 d_repair.
    (k,) = event_kinds(flat, "pod", classes=["host"])
    a = k.rate * k.hold
    busy = a / (1 + a) if back else 0.0
    hand = k.rate * ((1 - busy) * (back * k.d_swap + (8 - back) * k.d_repair)
                     + busy * 8 * k.d_repair) / 8
    got = analytic([k], spare_pools(flat, spares, "pod"), flat.instances_total)
    assert got.overlap == pytest.approx(hand, rel=1e-12)


@pytest.mark.parametrize("spares", [8, 16])
def test_closed_form_and_monte_carlo_agree(flat, spares):
    kinds = event_kinds(flat, "pod")
    pools = spare_pools(flat, spares, "pod")
    a = analytic(kinds, pools, flat.instances_total)
    mc = simulate(kinds, pools, flat.instances_total, horizon="1y", trials=1500, seed=1)
    assert abs(mc.mean - a.mean) <= 2 * mc.mean_ci
    assert abs(mc.below_threshold - a.below_threshold) <= 2 * mc.below_threshold_ci
