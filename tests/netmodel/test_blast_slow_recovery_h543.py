"""A failure that only slows instances: the blast-radius table's recovery column and the
availability model say the same thing, from one function
(:func:`netmodel.study.reliability_recovery.failure_recovery`).

The operator takes, for each slowed instance, the better of staying slow until the repair
and swapping spares in as for a down instance. The table said "no instance down | no
instance down" for lite-ocs's CPO engine and OCS (tok% 4.25 and 34), read as slow for the
whole repair with nothing to do, while the availability model swapped the CPO engine's
instance onto one spare and charged the failure the ~90 s swap. By hand, on lite-ocs
(Llama-3-70B decode, TP 16, 8 instances; the failure catalog's figures):

* detection 30 s, warm-up 60 s, the OCS's circuits re-set in 0.01 s, a Lite's weight shard
  (8.989458432 GB as the roofline holds it) reloaded at 92.7 GB/s (0.09697 s): a swap
  serves 30 + 0.01 + 0.09697 + 60 = 90.10697 s after the failure;
* a CPO engine is repaired in 4 h, an OCS in 24 h: a slowed instance that stays slow loses
  its share for 30 s + 4 h = 14,430 s (CPO) or 30 s + 24 h = 86,430 s (OCS);
* a CPO engine slows its one instance by s = 0.34026 (the cell's 4.25%, tok% x 8 / 100): staying
  slow costs s x 14,430 = 4,910 instance-s, swapping onto a spare on the OCS (it serves
  as a healthy instance: nothing still lost) s x 90.107 = 30.66 instance-s;
* an OCS slows all 8 alike; a pod spare sits on the OCSes that lost the same circuits, so
  none serves faster: they stay slow; 16 global spares re-create each one on healthy
  fabric.
"""

import pytest

from netmodel.study.availability import availability
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.blast_radius import blast_radius, recovery_words
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_recovery import (
    FailureRecovery,
    Recovery,
    SlowSwap,
    failure_recovery,
)

SWAP_S = 30 + 0.01 + 8.989458432e9 / 92.7e9 + 60     # 90.10697 s
CPO_SLOW_S = 30 + 4 * 3600                            # 14,430 s
OCS_SLOW_S = 30 + 24 * 3600                           # 86,430 s


@pytest.fixture(scope="module")
def ocs_cluster():
    return build_cluster("lite-ocs", "Llama-3-70B", "decode")


def _rows(cluster, placement):
    return {r.cls: r for r in blast_radius(None, None, cluster=cluster,
                                           placement=placement).rows}


def _kind(cluster, placement, cls):
    (k,) = [k for k in event_kinds(cluster, placement) if k.cls == cls]
    return k


def test_a_slowed_instance_loses_less_swapped_than_slow_until_the_repair(ocs_cluster):
    c = ocs_cluster
    e = next(x for x in c.effects() if x.cls == "cpo-engine")
    s = e.slow
    assert e.instances_down == 0 and len(e.slowed) == 1
    assert s == pytest.approx(0.34026, abs=1e-5)
    fr = failure_recovery(c, e, "pod")
    assert fr.swap_s == pytest.approx(SWAP_S, rel=1e-12)
    assert fr.slowed_s == CPO_SLOW_S
    assert fr.units == 1 and fr.slow.swapped == pytest.approx(s, rel=1e-12)
    assert fr.slow.restored == 0.0              # on the spare it serves as healthy
    # the loss of one failure, instance-seconds: the model's own terms against the hand's
    k = _kind(c, "pod", "cpo-engine")
    stay = k.slow * k.d_slow
    swapped = stay - k.saved                   # granted: slow until the swap, then nothing
    assert stay == pytest.approx(s * CPO_SLOW_S, rel=1e-12)          # 4,910 instance-s
    assert swapped == pytest.approx(s * SWAP_S, rel=1e-9)             # 30.66 instance-s
    assert swapped == pytest.approx(30.66, abs=0.01) and stay == pytest.approx(4910, abs=1)


def test_table_says_what_availability_charges_for_a_slowing_class(ocs_cluster):
    c = ocs_cluster
    rows = _rows(c, "pod")
    cpo, ocs = rows["cpo-engine"], rows["ocs"]
    # NCCL has no link failover: a slowed instance whose link went restarts first (the
    # swap's 90.1 s), unless it is swapped (its swap is its restart)
    assert cpo.recovery_without_spares == "restart (90.1 s), then slowed until repair (4.01 h)"
    assert cpo.recovery_without_spares_s == CPO_SLOW_S
    assert cpo.recovery_with_spares == \
        "swap 1 of 1 slowed: substitute 1 spare (circuits re-set) (90.1 s)"
    assert cpo.recovery_with_spares_s == pytest.approx(SWAP_S, rel=1e-12)
    assert ocs.recovery_without_spares == "restart (90.1 s), then slowed until repair (24 h)"
    assert ocs.recovery_with_spares == \
        "restart (90.1 s), then stay slow: no spare serves faster (24 h)"
    assert ocs.recovery_with_spares_s == OCS_SLOW_S
    g = _rows(c, "global")
    assert g["cpo-engine"].recovery_with_spares == \
        "swap 1 of 1 slowed: re-create on 16 spares (90.1 s)"
    assert g["ocs"].recovery_with_spares == \
        "swap 8 of 8 slowed: re-create on 16 spares (90.1 s)"
    assert g["ocs"].recovery_with_spares_s == pytest.approx(SWAP_S, rel=1e-12)


@pytest.mark.parametrize("scenario", ["lite-ocs", "lite-flat"])
@pytest.mark.parametrize("placement", ["pod", "global"])
def test_table_times_tok_share_is_the_event_loss_of_availability(scenario, placement):
    # per failure of a class that only slows: the table's tok% (of the cell's tokens/s,
    # as instances' worth) x its recovery time is the availability model's loss of one
    # such failure, without spares (refused) and with them (granted)
    c = build_cluster(scenario, "Llama-3-70B", "decode")
    rows = _rows(c, placement)
    seen = 0
    for cls, row in rows.items():
        if row.instances_down_mean > 0 or row.tokens_lost_pct_mean == 0:
            continue
        assert row.symmetry_classes == 1
        k = _kind(c, placement, cls)
        worth = row.tokens_lost_pct_mean / 100 * c.instances_total   # instances' worth
        assert worth == pytest.approx(k.slow, rel=1e-9)
        assert worth * row.recovery_without_spares_s == pytest.approx(k.slow * k.d_slow,
                                                                      rel=1e-9)
        granted = k.slow * k.d_slow - k.saved
        assert worth * row.recovery_with_spares_s == pytest.approx(granted, rel=1e-9)
        # on top, each slowed instance restarts first (its link went: NCCL has no
        # failover), losing for the swap's span the rest of its worth, 1 - its share lost:
        # the failure's loss is the column's plus k.restart x k.d_restart either way
        (e,) = [x for x in c.effects() if x.cls == cls]
        assert k.restarted == len(e.slowed) >= 1    # every slowed one's GPU lost the link
        assert k.restart == pytest.approx(k.restarted - worth, rel=1e-9)
        assert k.d_restart == pytest.approx(c.catalog.detection_s + c.catalog.warmup_s
                                            + (0.01 if scenario == "lite-ocs" else 0.0)
                                            + 8.989458432e9 / 92.7e9, rel=1e-9)
        # the same words: the kind's path is the column's, less its time, after the
        # restart where the slowed stay slow (a swapped instance's restart is its swap)
        first = "" if k.slow_swapped else "restart (90.1 s), then "
        assert row.recovery_with_spares.startswith(first + k.path + " (")
        seen += 1
    assert seen == 2       # a CPO engine and a plane's switch (lite-flat leaf, lite-ocs OCS)


def test_availability_event_loss_holds_one_cpo_swap(ocs_cluster):
    # the Monte Carlo's capacity lost per failure (instance-hours): every lite-ocs CPO
    # engine failure, with 8 pod spares (never all held: a GPU's holds 1 for a day,
    # 7.4 a year), costs its instance the swap whole: s x the swap slowed, and (1 - s)
    # x the restart (NCCL has no failover: the instance restarts, here onto its spare,
    # the restart the swap), not s x the repair
    a = availability(None, None, cluster=ocs_cluster, spares=8, trials=40, seed=1)
    s = next(x for x in ocs_cluster.effects() if x.cls == "cpo-engine").slow
    lost = a.mc.event_lost
    one_swap = (s * SWAP_S + (1 - s) * SWAP_S) / 3600      # 0.02503 instance-hours
    assert (abs(lost - one_swap) < 1e-9).sum() >= 40     # ~2.96 a year x 40 trials
    assert not (abs(lost - s * CPO_SLOW_S / 3600) < 1e-6).any()


def test_stay_slow_where_the_swap_outlasts_the_repair(ocs_cluster):
    # a CPO engine repaired in 36 s: slow for 30 + 36 = 66 s beats a 90.1 s swap; its
    # instance restarts first all the same (the link went), for 90.1 s, the longer
    c = ocs_cluster.with_catalog(ocs_cluster.catalog.with_(
        repair_hours={"cpo-engine": 0.01}))
    row = _rows(c, "pod")["cpo-engine"]
    assert row.recovery_without_spares == "restart (90.1 s), then slowed until repair (66 s)"
    assert row.recovery_with_spares == \
        "restart (90.1 s), then stay slow: the swap outlasts the repair (66 s)"
    assert row.recovery_with_spares_s == pytest.approx(SWAP_S, rel=1e-12)
    k = _kind(c, "pod", "cpo-engine")
    assert k.units == 0 and k.slow_swapped == 0 and k.saved == 0


def test_a_failure_that_takes_down_and_slows_says_both():
    # by hand: one instance down (substituted in 90 s) and one slowed that no spare
    # serves faster; without spares the down wait 24 h + reload, the slowed 24 h
    c = build_cluster("lite-ocs", "Llama-3-70B", "decode")
    fr = FailureRecovery(Recovery("substitute 1 spare", 1, 90.0),
                         SlowSwap("stay slow: no spare serves faster", 0, 0.0, 0.0),
                         instances_down=1, slowed=1, swap_s=90.0, slowed_s=OCS_SLOW_S)
    (a, ta), (b, tb) = recovery_words(c, "ocs", [fr])
    assert a == "repair (24 h); slowed until repair (24 h)"
    assert ta == pytest.approx(OCS_SLOW_S + 8.989458432e9 / 92.7e9 + 60, rel=1e-12)
    assert b == "substitute 1 spare (90 s); stay slow: no spare serves faster (24 h)"
    assert tb == OCS_SLOW_S
    assert fr.path == "substitute 1 spare; stay slow: no spare serves faster"


def test_availability_path_counts_the_slowed_a_small_global_pool_swaps(ocs_cluster):
    # an OCS slows all 8 instances; 16 global spares re-create one of them (floor(16 / 16)),
    # the rest stay slow: the JSON's path said "swap 8 of 8" whatever the pool. The table
    # says the fabric's path (spares assumed enough), as it does for down instances.
    a = availability(None, None, cluster=ocs_cluster, spares=16, placement="global",
                     trials=5, seed=0)
    (ocs,) = [k for k in a.to_dict()["kinds"] if k["cls"] == "ocs"]
    assert ocs["units"] == 128 and ocs["per"] == 16
    assert ocs["path"] == ("swap 1 of 8 slowed on 16 spares (16 an instance, 16 reachable; "
                           "the rest stay slow)")
    (k,) = [k for k in a.kinds if k.cls == "ocs"]
    assert k.grain == 16 and k.pieces == 8      # 16 free: one grant of 8
    assert k.backs(16 // k.grain) == pytest.approx((1 / 8, 1 / 8), rel=1e-12)
    row = _rows(ocs_cluster, "global")["ocs"]
    assert row.recovery_with_spares.startswith(k.path + " (")
