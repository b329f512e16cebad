"""A failure short of spares brings back as many whole instances as the free spares hold.

Spares were granted all or nothing per failure: a failure taking down (or slowing) ``k``
instances of ``g`` GPUs each, on a pool of ``s < k x g`` free spares, got none, and every
instance waited for the repair. So the reliability spares curve of lite-flat and lite-ocs
(a plane leaf or an OCS slows all 8 instances: 8 x 16 = 128 spares) stayed flat from 50%
to 99% of the cluster's GPUs in spares and dropped at 100%. Now ``floor(s / g)``
instances come back on spares and ``k - floor(s / g)`` wait for the repair, in the closed
form and in the Monte Carlo alike.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.availability_mc_lanes import _loss_lanes, _loss_system
from netmodel.study.reliability_cluster import YEAR, build_cluster
from netmodel.study.reliability_spares import SparePools, spare_pools

HOUR = 3600.0
K, G = 4, 8                 # a failure takes down 4 instances of 8 GPUs
S = 20                      # free spares: floor(20 / 8) = 2 instances come back
REPAIR, SWAP = 86400.0, 600.0
INSTANCES = 16


def _host(rate):
    return Kind("host", "x", rate=rate, down=K, slow=0.0, units=K * G, restored=0.0,
                d_repair=REPAIR, d_swap=SWAP, hold=REPAIR, d_slow=0.0, per=G)


def _pool(s):
    return SparePools("global", s, 1, (s,))


def test_the_loss_system_grants_whole_instances_by_hand():
    # one lane of 20 spares: an ask of 32 in grains of 8 gets 16 (2 instances), the next
    # (8 in one grain) finds 4 free and gets none, the next (8 in grains of 1) gets the 4
    t = np.array([[0.0, 1.0, 2.0, np.inf]])
    u = np.array([[32, 8, 8, 0]])
    h = np.array([[100.0, 100.0, 100.0, 0.0]])
    # what each takes of the free spares (Kind.take): 32 in grains of 8, 8 in grains
    # of 1; the 8 in one grain all or nothing (row -1)
    kinds = [replace(_host(1.0), units=32, per=8), replace(_host(1.0), units=8, per=1)]
    table = np.array([[k.take(f) for f in range(33)] for k in kinds])
    grain = (np.array([[0, -1, 1, -1]]), table)
    cap, counts = np.array([20]), np.array([3])
    for run in (_loss_lanes, _loss_system):
        assert run(t, u, h, cap, counts, grain=grain)[0, :3].tolist() == [16, 0, 4]
    # all or nothing (no grain): the 32 is refused, then 8 and 8 fit (16 of 20)
    assert _loss_lanes(t, u, h, cap, counts)[0, :3].tolist() == [False, True, True]


def test_one_failure_loses_k_minus_floor_s_over_g_instances_until_repair():
    # one failure at a time (rare failures): 2 instances come back on spares after the
    # swap, 2 wait for the repair, so the failure costs (2 x 86400 + 2 x 600) / 3600 =
    # 48.33 instance-hours; all or nothing it cost 4 x 86400 / 3600 = 96
    hand = ((K - S // G) * REPAIR + (S // G) * SWAP) / HOUR
    assert hand == pytest.approx(48.3333333, rel=1e-9)
    rate = 0.2 / YEAR
    mc = simulate([_host(rate)], _pool(S), INSTANCES, horizon="1y", trials=300, seed=1)
    assert len(mc.event_lost) >= 20
    assert np.median(mc.event_lost) == pytest.approx(hand, rel=1e-12)
    # the closed form: the same loss at the failures' rate (the pool is free at almost
    # every failure: 0.2 a year held a day, 5e-4 busy)
    a = analytic([_host(rate)], _pool(S), INSTANCES)
    lost = rate * hand * HOUR / INSTANCES
    assert 1 - a.mean == pytest.approx(lost, rel=1e-3)
    # a wait for repair at every failure (2 of its instances wait)
    assert a.waits_for_repair_per_year == pytest.approx(0.2, rel=1e-3)
    # all or nothing (per 0): every failure waits whole
    whole = analytic([replace(_host(rate), per=0)], _pool(S), INSTANCES)
    assert 1 - whole.mean == pytest.approx(rate * K * REPAIR / INSTANCES, rel=1e-3)


@pytest.fixture(scope="module")
def flat():
    return build_cluster("lite-flat", "Llama-3-70B", "decode")


def test_a_plane_leaf_brings_back_floor_s_over_16_of_its_8_slowed_instances(flat):
    # a plane leaf slows all 8 instances of 16 Lites; global spares re-create each on 16:
    # with 50 spares, 3 of the 8 come back (floor(50 / 16)), 5 stay slow to the repair
    (k,) = event_kinds(flat, "global", classes=["leaf"])
    assert (k.down, k.units) == (0, 128)
    b = 1 - 3 / 8   # the share of the slowed instances left slow
    held = k.hold - k.d_swap
    hand = k.rate * ((k.slow - k.slow_swapped) * k.d_slow + b * k.slow_swapped * k.d_slow
                     + (1 - b) * (k.slow_swapped * k.d_swap + k.slow_restored * held)
                     # each of the 8 restarts first (its plane link went, no NCCL
                     # failover), losing what it serves slowed for the swap's span
                     + (8 - k.slow) * k.d_swap)
    assert (k.restarted, k.d_restart) == (8, k.d_swap)
    assert k.restart == pytest.approx(8 - k.slow, rel=1e-12)
    a = analytic([k], spare_pools(flat, 50, "global"), flat.instances_total)
    assert 1 - a.mean == pytest.approx(hand / flat.instances_total, rel=2e-3)
    assert a.blocking[0] == pytest.approx(b, rel=2e-3)
    assert (k.per, k.pieces) == (16, 8)


def test_the_spares_curve_steps_at_every_instance_not_at_the_whole_cluster(flat):
    # the leaf alone: flat between multiples of 16 spares, down at each (8 steps), where
    # all or nothing it was flat from 0 to 127 and dropped at 128
    (k,) = event_kinds(flat, "global", classes=["leaf"])
    counts = [16 * m + d for m in range(9) for d in (0, 15)][:-1]
    kinds = [k]
    u = {n: 1 - analytic(kinds, spare_pools(flat, n, "global"), flat.instances_total).mean
         for n in counts}
    for m in range(8):
        assert u[16 * m] == pytest.approx(u[16 * m + 15], rel=1e-9)
        assert u[16 * m + 15] > u[16 * (m + 1)]
    # each step saves about an eighth of what the whole 128 saves (the leaf's swap)
    steps = [u[16 * m] - u[16 * (m + 1)] for m in range(8)]
    assert max(steps) / min(steps) == pytest.approx(1.0, abs=0.01)


def test_closed_form_and_monte_carlo_agree_where_partial_grants_matter(flat):
    # every kind with 48 global spares: the leaf (128), the host (2 x 16) and the
    # cpo-engine, die and package (16) asks are granted in part or whole
    kinds = event_kinds(flat, "global")
    assert any(x.pieces > 1 and x.units > 48 for x in kinds)
    pools = spare_pools(flat, 48, "global")
    mc = simulate(kinds, pools, flat.instances_total, horizon="1y", trials=400, seed=0)
    a = analytic(kinds, pools, flat.instances_total)
    assert abs(mc.mean - a.mean) <= mc.mean_ci
    # all or nothing the closed form read 1.43x the loss (2.91e-5 against 2.04e-5)
    whole = analytic([replace(x, per=0) for x in kinds], pools, flat.instances_total)
    assert 1 - whole.mean > 1.3 * (1 - a.mean)


def test_one_slowed_instance_left_keeps_the_cluster_above_99_percent(flat):
    # a plane leaf slows each of the 8 instances by 0.626 / 8 = 0.078 of an instance;
    # with 112 global spares 7 come back and one stays slow: 0.078 of 8 instances is
    # 0.98% of the capacity, above 99%, where with 64 (4 left slow) it is 3.9%, below.
    # So the time below 99% falls by an order from 64 to 112 spares (the closed form
    # counts how many instances find no spares, not only whether one does)
    kinds = event_kinds(flat, "global")
    (leaf,) = [k for k in kinds if k.cls == "leaf"]
    assert leaf.slow / 8 < 0.01 * flat.instances_total < 4 * leaf.slow / 8
    below = {n: analytic(kinds, spare_pools(flat, n, "global"), flat.instances_total)
             .below_threshold for n in (64, 112)}
    assert below[112] < 0.2 * below[64]
    mc = simulate(kinds, spare_pools(flat, 112, "global"), flat.instances_total,
                  horizon="1y", trials=1000, seed=0)
    assert abs(mc.below_threshold - below[112]) <= 2 * mc.below_threshold_ci
