"""A failure that leaves instances up but slower first restarts the instances whose
communicator it took a link of (:func:`netmodel.study.reliability_recovery.restarts`).

NCCL has no link failover (NVIDIA/nccl issue #998: "If something fails (a link, NIC, GPU,
CPU, .. anything), NCCL is going to fail"; ``restart_source`` in
``netmodel/data/failures.toml``): the communicator aborts and the serving engine restarts
on the links left, out for detection, the circuits re-set (OCS), the weight reload and
warm-up, the span a spare's swap takes, before it serves degraded to the repair. By hand,
Llama-3-70B decode, TP 16, 8 instances of 16 Lites (the failure catalog's figures):

* the restart: detection 30 s + a Lite's shard of 8.989458432 GB reloaded at 112.5 GB/s x
  20.6 / 25 = 92.7 GB/s (0.09697 s) + warm-up 60 s = 90.09697 s; on lite-ocs + the
  circuits' 0.01 s = 90.10697 s;
* each restarted instance loses, for the restart, what it still serves slowed: 1 - s of
  an instance (s its share lost slowed), on top of s until the repair;
* lite-flat plane (class ``leaf``): 4 planes x 3.33e-6 / h x 8,766 h = 0.11676 failures a
  year, each slowing all 8 instances by s = 0.078216 (tok% 7.82) for 30 s + 24 h =
  86,430 s: 8 x 0.078216 x 86,430 = 54,082 instance-s a failure, 6,315 a year; the
  restarts add 8 x (1 - 0.078216) x 90.097 = 664.4 a failure, 77.6 a year (6,392);
* lite-direct mesh cable (``cpo-engine`` between two Lites): 384 parts x 6.6e-7 / h x
  8,766 h = 2.2217 a year, each slowing one instance by s = 0.0007481 (tok% 0.00935,
  the ring re-laid, only the lm_head all-gather's detour) for 30 s + 4 h = 14,430 s:
  10.80 instance-s a failure, 23.98 a year (3.0 an instance); the restart adds
  (1 - 0.0007481) x 90.097 = 90.03 a failure, 200.0 a year: 224.0 (28.0 an instance);
* lite-ocs OCS: 0.11676 a year, each slowing all 8 by s = 0.34026 (tok% 34.0) for
  86,430 s: 235,269 instance-s a failure; the restarts add 8 x 0.65974 x 90.107 = 475.6;
* lite-hier, Llama-3.1-405B at TP 32 across two leaves: a spine's loss slows the 4
  instances that cross it, but no member's own link goes (the fabric routes around a
  spine, and around a cable between a leaf and a spine, below the transport's retry
  timeout): no restart, the loss as it was.

``tok%`` of the blast-radius table is the rate a failure takes while it lasts and stays as
it was; the restart shows in its recovery column and in every figure over time.
"""

from dataclasses import replace

import pytest

from netmodel.study.availability_kinds import event_kinds
from netmodel.study.availability_loss import _lost_rate, _profile
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_catalog import HOUR
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.reliability_recovery import restarts
from netmodel.study.reliability_timings import recovery_times
from tests.netmodel.reliability_g2_helpers import shipped_cluster

RELOAD_S = 8.989458432e9 / (112.5e9 * 20.6 / 25)     # 0.09697 s
RESTART_S = 30 + RELOAD_S + 60                          # 90.09697 s
OCS_RESTART_S = RESTART_S + 0.01                        # 90.10697 s
PLANE_S, CPO_S = 30 + 24 * HOUR, 30 + 4 * HOUR         # 86,430 s, 14,430 s


def _no_restart(k):
    return replace(k, restart=0.0, restarted=0, d_restart=0.0)


def _one(cluster, cls, example=None):
    ks = [k for k in event_kinds(cluster, "pod") if k.cls == cls
          and (example is None or k.example == example)]
    assert len(ks) == 1
    return ks[0]


@pytest.mark.parametrize(("scenario", "cls", "parts", "rate_h", "n", "s", "slow_s",
                          "restart_s", "year_before", "year_added"), [
    ("lite-flat", "leaf", 4, 3.33e-6, 8, 0.078216, PLANE_S, RESTART_S, 6315, 77.6),
    ("lite-direct", "cpo-engine", 384, 6.6e-7, 1, 0.0007481, CPO_S, RESTART_S, 23.98, 200.0),
    ("lite-ocs", "ocs", 4, 3.33e-6, 8, 0.34026, PLANE_S, OCS_RESTART_S, 27470, 55.5),
])
def test_a_slowing_failure_charges_one_restart_first(scenario, cls, parts, rate_h, n, s,
                                                      slow_s, restart_s, year_before,
                                                      year_added):
    c = shipped_cluster(scenario)
    assert recovery_times(c).restart_s() == pytest.approx(restart_s, rel=1e-9)
    e = next(x for x in c.effects() if x.cls == cls and x.slowed)
    assert e.instances_down == 0 and len(e.slowed) == n
    assert all(share == pytest.approx(s, abs=5e-6) for _, share in e.slowed)
    assert len(restarts(c, e)) == n            # every slowed one lost a link of its own
    k = _one(c, cls, e.example)
    ev_year = parts * rate_h * YEAR / HOUR
    assert k.rate * YEAR == pytest.approx(ev_year, rel=1e-9)
    assert (k.restarted, k.d_restart) == (n, pytest.approx(restart_s, rel=1e-9))
    assert k.restart == pytest.approx(n * (1 - s), rel=1e-4)
    # instance-seconds lost a year without spares: slow to the repair, then + the restart
    before = _lost_rate([_no_restart(k)], [1.0])[0] * YEAR
    after = _lost_rate([k], [1.0])[0] * YEAR
    assert before == pytest.approx(ev_year * n * s * slow_s, rel=1e-4)
    assert before == pytest.approx(year_before, rel=2e-3)
    assert after - before == pytest.approx(ev_year * n * (1 - s) * restart_s, rel=1e-4)
    assert after - before == pytest.approx(year_added, rel=2e-3)
    # the blast-radius table: tok% (the rate lost while the failure lasts) as it was; its
    # recovery column says the restart first
    row = next(r for r in blast_radius(None, None, cluster=c).rows if r.cls == cls)
    if row.symmetry_classes == 1:
        assert row.tokens_lost_pct_mean == pytest.approx(100 * n * s / 8, rel=1e-4)
    assert row.recovery_without_spares.startswith(
        f"restart ({RESTART_S:.3g} s), then slowed until repair")


def test_the_profile_and_the_mean_agree_on_the_restart():
    # the tail's streams (one failure's loss over its age) hold the restart as the mean
    # does: lite-flat's plane refused spares, 8 x s to the repair, + 8 (1 - s) to 90.1 s
    c = shipped_cluster("lite-flat")
    k = _one(c, "leaf")
    segs = _profile(k, granted=False)
    total = sum((z - a) * v for a, z, v in segs)
    assert total == pytest.approx(k.slow * k.d_slow + k.restart * k.d_restart, rel=1e-12)
    assert (0.0, k.d_restart, k.restart) in segs


def test_a_spine_the_fabric_routes_around_costs_no_restart():
    # lite-hier, TP 32 over two leaves of 16: a spine's loss thins the paths between
    # leaves only; no GPU's own link goes, so no communicator aborts
    c = shipped_cluster("lite-hier", "Llama-3.1-405B")
    hit = [e for e in c.effects() if e.slowed]
    assert {e.cls for e in hit} == {"spine", "cpo-engine"}
    for e in hit:
        assert restarts(c, e) == ()
        k = _one(c, e.cls, e.example)
        assert (k.restart, k.restarted, k.d_restart) == (0.0, 0, 0.0)
        assert _lost_rate([k], [1.0])[0] == pytest.approx(k.rate * k.slow * k.d_slow,
                                                          rel=1e-12)
    spine = next(r for r in blast_radius(None, None, cluster=c).rows if r.cls == "spine")
    assert spine.recovery_without_spares.startswith("slowed until repair")


@pytest.mark.parametrize("scenario", ["lite-flat", "lite-direct", "lite-ocs"])
@pytest.mark.parametrize("placement", ["pod", "global"])
def test_no_failure_loses_less_than_before(scenario, placement):
    # the invariant: a failure's loss, refused or granted spares, is never below what it
    # was without the restart
    c = shipped_cluster(scenario)
    for k in event_kinds(c, placement):
        for b in (0.0, 1.0):
            assert _lost_rate([k], [b])[0] >= _lost_rate([_no_restart(k)], [b])[0]
        assert k.restart <= k.restarted + 1e-12 and k.restart >= 0
