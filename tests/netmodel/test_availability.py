"""Availability: the loss-system closed forms against textbook formulas, hand-derived small
clusters (a 2-leaf fabric with one spare, an OCS ring with a spare port, an 8-GPU direct
group), the Monte Carlo against the closed forms within its confidence interval,
invariants (zero rates, more spares, higher rates, longer repairs, unreachable spares,
same seed), the command line and bad input."""

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.availability import availability, parse_spares
from netmodel.study.availability_analytic import ClosedForms, analytic, kaufman_roberts
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_catalog import HOUR, catalog, parse_duration
from netmodel.study.reliability_cluster import YEAR, build_cluster
from netmodel.study.reliability_recovery import recovery
from netmodel.study.reliability_spares import SparePools, spare_pools
from netmodel.study.reliability_summary import SUMMARY_COLUMNS, reliability_summary
from netmodel.study.reliability_timings import recovery_times
from netmodel.study.scenario_catalog import scenario_names
from netmodel.study.scenario_files import load_scenario_text
from tests.netmodel.reliability_g2_helpers import shipped_cluster
from topologies.failure_domains import CLASSES

TEMPLATE = """name = "{name}"
description = "test fabric"
gpu = "H100-SXM"
[fabric]
{fabric}
[collective]
placement = "contiguous"
algorithm = "auto"
links = "as-built"
calibration = "default"
{extra}
[sources]
bandwidth = "test"
latency = "test"
"""

#: Two leaves of 4 H100 with 2:1 oversubscription: 2 free ports per leaf for spares.
TWO_LEAF = load_scenario_text(TEMPLATE.format(
    name="two-leaf", extra="",
    fabric='builder = "leaf-spine"\nleaves = 2\nradix = 8\noversubscription = 2\ngpu = "$gpu"'))
#: An OCS of 8 H100 with 4 ports each on OCS of 9 ports (one spare port each).
OCS9 = load_scenario_text(TEMPLATE.format(
    name="ocs9", extra='circuits = "ring"',
    fabric='builder = "ocs"\ngpus = 8\nports = 4\nocs_ports = 9\ngpu = "$gpu"\n'
           'reconfiguration_time = "2s"'))
OCS8 = load_scenario_text(TEMPLATE.format(
    name="ocs8", extra='circuits = "ring"',
    fabric='builder = "ocs"\ngpus = 8\nports = 4\nocs_ports = 8\ngpu = "$gpu"\n'
           'reconfiguration_time = "2s"'))
MESH8 = load_scenario_text(TEMPLATE.format(
    name="mesh8", extra="", fabric='builder = "full-mesh"\nn = 8\ngpu = "$gpu"'))


def gpus_only(rate_per_hour):
    """The catalog with only GPU failures, at ``rate_per_hour`` per H100."""
    zero = {c: 0.0 for c in CLASSES if c not in ("gpu-die", "gpu-package")}
    return catalog().with_(gpu_rate_per_hour=rate_per_hour, rates=zero)


def erlang_b(c, a):
    terms = [a ** k / math.factorial(k) for k in range(c + 1)]
    return terms[-1] / sum(terms)


# ---------------------------------------------------------------------- closed forms

@settings(max_examples=60, deadline=None)
@given(c=st.integers(0, 40), a=st.floats(1e-3, 60))
def test_kaufman_roberts_one_class_is_erlang_b(c, a):
    q = kaufman_roberts(c, [a], [1])
    assert q[c] == pytest.approx(erlang_b(c, a), rel=1e-9)


def test_kaufman_roberts_two_classes_by_hand():
    a1, a2 = 0.7, 0.3
    q = kaufman_roberts(2, [a1, a2], [1, 2])
    raw = np.array([1.0, a1, (a1 * a1 + 2 * a2) / 2])
    assert q == pytest.approx(raw / raw.sum())


def test_compound_poisson_tail_is_poisson_for_unit_losses():
    k = Kind("gpu-die", "x", rate=1e-4, down=1, slow=0.0, units=-1, restored=0.0,
             d_repair=3600.0, d_swap=60.0, hold=3600.0, d_slow=0.0)
    pools = SparePools("pod", 0, 1, (0,))
    m = 1e-4 * 3600.0 * 10  # ten such streams: mean outages in progress
    a = analytic([k] * 10, pools, 100, threshold=0.98)   # below: more than 2 instances down
    p = sum(math.exp(-m) * m ** n / math.factorial(n) for n in range(3))
    assert a.below_threshold == pytest.approx(1 - p, rel=1e-9)
    assert a.mean == pytest.approx(1 - 10 * 1e-4 * 3600.0 / 100)
    # one instance: ten independent alternating-renewal components (one per kind here)
    assert a.instance_availability == pytest.approx(math.exp(-10 * 1e-4 / 100 * 3600.0))


# ---------------------------------------------------------------------- hand-derived clusters

def test_two_leaf_fabric_with_one_spare_by_hand():
    c = build_cluster(TWO_LEAF, "Llama-3-8B", "decode", catalog_=gpus_only(1e-3))
    assert (c.tp, len(c.instances), c.gpus) == (1, 8, 8)
    die = next(e for e in c.effects() if e.cls == "gpu-die")
    assert recovery(c, die, "pod").units == 1
    a = availability(None, None, cluster=c, spares=1, placement="pod", trials=400,
                     horizon="2y", seed=5)
    assert a.pools.reachable == (1,)
    r = 1e-3 / HOUR                                  # per GPU, die and package together
    det, warm = c.catalog.detection_s, c.catalog.warmup_s
    load = recovery_times(c).shard_bytes / (c.gpu.scaleup_bandwidth * _efficiency(c))   # from a peer
    d_rep = det + 24 * HOUR + load + warm
    d_swap = det + load + warm                       # no circuits to re-set
    hold = det + 24 * HOUR
    b = erlang_b(1, 8 * r * hold)                    # one spare: Erlang's loss formula
    assert a.analytic.blocking[0] == pytest.approx(b)
    assert a.analytic.mean == pytest.approx(1 - r * (b * d_rep + (1 - b) * d_swap), rel=1e-12)
    assert a.no_spares.mean == pytest.approx(1 - r * d_rep, rel=1e-12)
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci
    waits = 8 * r * YEAR * b
    assert a.mc.waits_for_repair_per_year == pytest.approx(waits, rel=0.25)


def test_ocs_ring_with_a_spare_port_by_hand():
    c = build_cluster(OCS9, "Llama-3.1-405B", "decode", catalog_=gpus_only(1e-3))
    assert (c.tp, recovery_times(c).reconfiguration_s) == (8, 2.0)
    die = next(e for e in c.effects() if e.cls == "gpu-die")
    rec = recovery(c, die, "pod")
    det, warm = c.catalog.detection_s, c.catalog.warmup_s
    load = recovery_times(c).shard_bytes / (c.gpu.scaleup_bandwidth * _efficiency(c))   # from a peer
    assert rec.path == "substitute 1 spare (circuits re-set)"
    assert rec.time_s == pytest.approx(det + 2.0 + load + warm)
    assert rec.restored == 0.0                        # the spare's ring is the same ring
    a = availability(None, None, cluster=c, spares=1, placement="pod", trials=400, seed=2)
    r = 1e-3 / HOUR
    hold = det + 24 * HOUR
    b = erlang_b(1, 8 * r * hold)
    lost = 8 * r * (b * (det + 24 * HOUR + load + warm) + (1 - b) * rec.time_s)
    # one instance: the outages in progress (unit losses, Poisson of mean ``lost``) add, but
    # never past it: up while none is in progress, e^-lost (1 - lost to first order)
    assert a.analytic.mean == pytest.approx(math.exp(-lost), rel=1e-12)
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci
    # no spare port: the spare cannot be reached and changes nothing
    full = build_cluster(OCS8, "Llama-3.1-405B", "decode", catalog_=gpus_only(1e-3))
    with_spare = availability(None, None, cluster=full, spares=1, trials=200, seed=2)
    without = availability(None, None, cluster=full, spares=0, trials=200, seed=2)
    assert with_spare.pools.reachable_total == 0
    assert with_spare.mc.to_dict() == without.mc.to_dict()
    assert with_spare.analytic == without.analytic


def test_direct_group_spares_change_nothing():
    c = build_cluster(MESH8, "Llama-3.1-405B", "decode", catalog_=gpus_only(1e-3))
    runs = [availability(None, None, cluster=c, spares=s, placement="pod", trials=100, seed=9)
            for s in (0, 4)]
    assert runs[1].pools.reachable_total == 0
    assert runs[0].mc.to_dict() == runs[1].mc.to_dict()
    assert np.array_equal(runs[0].mc.band, runs[1].mc.band)
    # by hand: every GPU failure takes the one instance down for a repair; it is up while
    # none is in progress (Poisson, mean 8 r d_rep): e^(-8 r d_rep) (first-order 1 - 8 r d_rep)
    r = 1e-3 / HOUR
    d_rep = recovery_times(c).repair_down_s("gpu-die")
    assert runs[0].analytic.mean == pytest.approx(math.exp(-8 * r * d_rep), rel=1e-12)


# ---------------------------------------------------------------------- Monte Carlo vs closed forms

@pytest.mark.parametrize("name", scenario_names())
def test_monte_carlo_agrees_with_the_closed_forms(name):
    c = shipped_cluster(name)
    for spares, placement in ((0, "pod"), (8, "pod"), (c.tp * 2, "global")):
        a = availability(None, None, cluster=c, spares=spares, placement=placement,
                         trials=600, seed=11)
        assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci + 1e-12, (name, placement)
        if spares == 0:  # the closed form of the time below threshold is exact here
            assert abs(a.mc.below_threshold - a.analytic.below_threshold) <= \
                4 * a.mc.below_threshold_ci + 1e-12, name
        assert a.mc.instance_down_events_per_year == pytest.approx(
            a.analytic.instance_down_events_per_year, rel=0.1)


# ---------------------------------------------------------------------- invariants

def test_zero_rates_give_availability_exactly_one():
    zero = catalog().with_(gpu_rate_per_hour=0.0,
                           rates={c: 0.0 for c in CLASSES
                                  if c not in ("gpu-die", "gpu-package")})
    a = availability("lite-flat", "Llama-3-70B", catalog_=zero, spares=3, trials=20)
    assert a.kinds == ()
    assert (a.mc.mean, a.analytic.mean, a.no_spares.mean) == (1.0, 1.0, 1.0)
    assert a.mc.below_threshold == 0.0 and a.mc.p1 == 1.0


def kinds_strategy():
    """Event kinds that each need the same spares per failure (a single-rate pool: one
    spare per lost GPU, or TP per re-created instance)."""
    kind = st.builds(
        lambda rate, down, rep, swap, slow: (rate, down, rep, swap, slow),
        rate=st.floats(1e-9, 1e-5), down=st.integers(1, 3), rep=st.floats(3600, 30 * 86400),
        swap=st.floats(10, 600), slow=st.sampled_from([0.0, 0.1]))
    return st.tuples(st.lists(kind, min_size=1, max_size=4), st.integers(1, 4)).map(
        lambda x: [Kind("gpu-die", "k", rate=r, down=d, slow=sl, units=x[1], restored=0.0,
                        d_repair=rep, d_swap=sw, hold=rep, d_slow=rep)
                   for r, d, rep, sw, sl in x[0]])


@settings(max_examples=60, deadline=None)
@given(kinds=kinds_strategy(), pools=st.integers(1, 4), s=st.integers(0, 10),
       f=st.floats(1.0, 5.0))
def test_closed_form_monotone_in_spares_rates_and_repairs(kinds, pools, s, f):
    inst = 64

    def mean(ks, spares):
        # analytic()'s mean, the same float, without the figures this test reads not
        return ClosedForms(ks, SparePools("pod", spares * pools, pools, (spares,) * pools),
                           inst).mean

    base = mean(kinds, s)
    eps = 1e-12 * max(1.0, abs(base))                               # rounding only
    assert mean(kinds, s + 1) >= base - eps                         # more spares
    faster = [Kind(**{**k.__dict__, "rate": k.rate * f}) for k in kinds]
    assert mean(faster, s) <= base + eps                            # higher rates
    longer = [Kind(**{**k.__dict__, "d_repair": k.d_repair * f, "hold": k.hold * f,
                      "d_slow": k.d_slow * f}) for k in kinds]
    assert mean(longer, s) <= base + eps                            # longer repairs


def test_mixed_pools_can_lose_by_a_spare_and_the_shipped_ones_do_not():
    # all-or-nothing admission: a spare more admits a failure that holds 3 spares and so
    # turns away a later one that needed 1 but took 3 instances down (a known property of
    # multi-rate loss systems; by ~1e-11 here). 640 instances: the outages in progress (57
    # instances on average) stay far below the cluster, which caps nothing (at 64 the cap
    # at the whole cluster, worth 6e-4, hid the loss)
    big = Kind("gpu-die", "a", rate=2.343016577200696e-05, down=1, slow=0.0, units=3,
               restored=0.0, d_repair=2551508.0, d_swap=600.0, hold=2551508.0,
               d_slow=2551508.0)
    small = Kind("host", "b", rate=1e-06, down=3, slow=0.0, units=1, restored=0.0,
                 d_repair=361538.0, d_swap=10.0, hold=361538.0, d_slow=361538.0)
    means = [analytic([big, small], SparePools("pod", s, 1, (s,)), 640).mean for s in (8, 9)]
    assert means[1] < means[0] < means[1] + 1e-8
    # the shipped scenarios' pools never lose by a spare
    from netmodel.study.availability_kinds import event_kinds
    for name in scenario_names():
        c = shipped_cluster(name)
        for placement in ("pod", "global"):
            kinds = event_kinds(c, placement)
            # analytic()'s mean, the same float, without its time below the threshold
            m = [ClosedForms(kinds, spare_pools(c, n, placement), c.instances_total).mean
                 for n in range(0, 65)]
            assert all(np.diff(m) >= -1e-15), (name, placement)


@settings(max_examples=8, deadline=None)
@given(s=st.integers(0, 6), extra=st.integers(1, 6), seed=st.integers(0, 1000))
def test_monte_carlo_more_spares_never_lower_availability(s, extra, seed):
    c = _flat_fast()
    lo = availability(None, None, cluster=c, spares=s, trials=40, seed=seed)
    hi = availability(None, None, cluster=c, spares=s + extra, trials=40, seed=seed)
    # same failures (same seed); a larger pool denies no failure the smaller one grants
    assert hi.mc.mean >= lo.mc.mean - 1e-12
    assert hi.mc.waits_for_repair_per_year <= lo.mc.waits_for_repair_per_year + 1e-12


_FAST = {}


def _flat_fast():
    if "c" not in _FAST:
        _FAST["c"] = build_cluster("lite-flat", "Llama-3-70B", "decode",
                                   catalog_=catalog().with_(gpu_rate_per_hour=5e-4))
    return _FAST["c"]


def test_same_seed_same_bytes(tmp_path):
    args = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--spares",
            "4", "--trials", "50", "--seed", "7", "--no-plot"]
    outs = []
    for k in range(2):
        out = tmp_path / f"a{k}"
        r = CliRunner().invoke(cli, [*args, "--out", str(out), "--json"])
        assert r.exit_code == 0, r.output
        outs.append(out)
    for name in ("availability.json", "availability.csv"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
    other = CliRunner().invoke(cli, [*args[:-3], "--seed", "8", "--json"])
    assert json.loads(other.output)["monte_carlo"] != json.loads(
        (outs[0] / "availability.json").read_text())["monte_carlo"]


def test_horizon_and_trial_split_do_not_bias():
    c = _flat_fast()
    a = availability(None, None, cluster=c, spares=0, trials=300, horizon="30d", seed=1)
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci    # steady state from t=0


# ---------------------------------------------------------------------- summary and goodput

def test_goodput_counts_every_sm_bought():
    c = shipped_cluster("lite-flat")
    a = availability(None, None, cluster=c, spares=16, trials=50)
    assert a.goodput_per_sm == pytest.approx(
        a.mc.mean * c.tokens_per_s * len(c.instances) / ((128 + 16) * 33))


def test_reliability_summary_fields():
    s = reliability_summary("lite-flat", "Llama-3-70B", "decode", trials=60)
    c = shipped_cluster("lite-flat")
    assert s.sms_down_per_gpu_failure_hw == 33
    assert s.sms_down_per_gpu_failure_sw == c.tp * 33
    assert s.spares == 2 and s.spare_placement in ("pod", "global")    # 1% of 128, rounded up
    assert s.availability_with_spares >= s.availability
    assert s.spares_needed is not None
    rates = c.rates
    assert s.gpu_failures_per_year == pytest.approx(
        128 * (rates["gpu-die"] + rates["gpu-package"]) * YEAR)
    d = s.to_dict()
    assert d["scenario"] == "lite-flat@Lite" and list(d) == list(SUMMARY_COLUMNS)
    fast = reliability_summary("lite-flat", "Llama-3-70B", "decode", method="analytic",
                               cluster=c)
    assert (fast.sms_down_per_gpu_failure_hw, fast.sms_down_per_gpu_failure_sw,
            fast.spares) == (33, c.tp * 33, 2)
    assert fast.availability == pytest.approx(s.availability, rel=2e-3)
    assert fast.availability_with_spares == pytest.approx(s.availability_with_spares, rel=2e-3)
    with pytest.raises(UserError, match="method"):
        reliability_summary("lite-flat", "Llama-3-70B", method="exact", cluster=c)
    h = reliability_summary("h100-dgx", "Llama-3-70B", "decode", spares=8, trials=60)
    assert h.sms_down_per_gpu_failure_hw == 132
    assert h.spare_placement == "global"          # no free port in a DGX: re-create instances
    assert h.availability_with_spares > h.availability


# ---------------------------------------------------------------------- parsing and bad input

def test_parsers():
    assert parse_spares("2%", 16384) == 328 and parse_spares("0", 8) == 0
    assert parse_duration("1y") == 8766 * HOUR and parse_duration("2w") == 14 * 86400
    with pytest.raises(UserError, match="exceed the cluster"):
        parse_spares("129", 128)
    with pytest.raises(UserError, match="percentage"):
        parse_spares("two", 128)
    with pytest.raises(UserError, match="> 0"):
        parse_duration("0y")
    with pytest.raises(UserError, match="not a duration"):
        parse_duration("3 fortnights")
    with pytest.raises(UserError, match="trials"):
        simulate((), SparePools("pod", 0, 1, (0,)), 1, trials=0)


@pytest.mark.parametrize("args, message", [
    (["--spares", "200"], "exceed the cluster"),
    (["--spares", "-3"], "is below 0; allowed: 0 to"),
    (["--spares", "lots"], "percentage"),
    (["--horizon", "0"], "a duration from 1 h to 100 y"),
    (["--horizon", "-1y"], "a duration from 1 h to 100 y"),
    (["--horizon", "nan"], "a duration from 1 h to 100 y"),
    (["--horizon", "1000y"], "longer than"),
    (["--trials", "0"], "whole number from 1 to 100,000"),
    (["--trials", "1e9"], "trials must be"),
    (["--threshold", "150%"], "threshold"),
    (["--threshold", "0"], "threshold"),
    (["--seed", "-1"], "seed"),
    (["--rate", "host=inf"], "finite number >= 0"),
    (["--rate", "gpux=1e-6"], "unknown component class 'gpux'"),   # gpu=R is the GPU rate (h256)
    (["--spare-placement", "group"], "group"),
    (["--load-bandwidth", "-5GB/s"], "bandwidth"),
])
def test_cli_bad_input_one_line_exit_2_nothing_written(tmp_path, args, message):
    out = tmp_path / "never"
    trials = [] if "--trials" in args else ["--trials", "10"]   # an option is given once
    r = CliRunner().invoke(cli, ["availability", "--scenario", "lite-flat", "--model",
                                 "Llama-3-70B", *trials, "--out", str(out), *args])
    assert r.exit_code == 2, r.output
    assert message in r.output and r.output.count("\n") == 1
    assert not out.exists()


def test_cli_files(tmp_path):
    out = tmp_path / "av"
    r = CliRunner().invoke(cli, ["availability", "--scenario", "lite-ocs", "--model",
                                 "Llama-3-70B", "--spares", "4", "--trials", "30",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "Monte Carlo" in r.output and "wrote" in r.output
    assert sorted(p.name for p in out.iterdir()) == [
        "availability.csv", "availability.json", "availability_capacity.png",
        "availability_event_loss.png", "availability_spares.png", "netmodel-manifest.json"]
    d = json.loads((out / "availability.json").read_text())
    assert d["spares"]["reachable"] == 4 and d["monte_carlo"]["trials"] == 30
    assert (out / "availability.csv").read_text().startswith("time_h,capacity_p1")
    # too much work is refused before anything runs
    r = CliRunner().invoke(cli, ["availability", "--scenario", "lite-flat", "--model",
                                 "Llama-3-70B", "--gpus", "131072", "--trials", "100000",
                                 "--horizon", "100y"])
    assert r.exit_code == 2 and "failure events" in r.output


def test_spare_pools_split():
    c = build_cluster("lite-flat", "Llama-3-70B", "decode", gpus=128 * 4)
    p = spare_pools(c, 10, "pod")
    assert p.pools == 4 and p.reachable == (3, 3, 2, 2)
    p = spare_pools(c, 100, "pod")                     # 16 free ports per copy
    assert p.reachable == (16,) * 4 and p.spares == 100
    assert spare_pools(c, 100, "global").reachable == (100,)


def test_sensitivity_moves_with_the_area_share():
    from netmodel.study.reliability_summary import sensitivity

    lite = sensitivity(shipped_cluster("lite-flat"))
    h100 = sensitivity(shipped_cluster("h100-dgx"))
    area = [r for r in lite if r["parameter"] == "area_share"]
    assert [r["value"] for r in area] == sorted(r["value"] for r in area)
    # a larger silicon share shrinks a Lite's rate: fewer failures, more availability
    assert area[0]["gpu_failures_per_year"] > area[1]["gpu_failures_per_year"] > \
        area[2]["gpu_failures_per_year"]
    assert area[0]["availability"] < area[1]["availability"] < area[2]["availability"]
    c = catalog()
    for r, a in zip(area, (c.area_share_range[0], c.area_share, c.area_share_range[1]),
                    strict=True):
        assert r["gpu_failures_per_year"] == pytest.approx(
            128 * 1.26e-5 * (1 - a + a / 4) * 8766)
    # the H100 is the reference: its rate does not depend on the split
    assert len({round(r["gpu_failures_per_year"], 9) for r in h100
                if r["parameter"] == "area_share"}) == 1
    vendor = next(r for r in lite if r["parameter"] == "repair")
    assert vendor["availability"] < area[1]["availability"]


def test_event_kinds_are_kept_per_cluster_and_follow_its_catalog():
    """The kinds of a cluster are built once per placement; a cluster under another
    catalog (the GPU's failure rate doubled) has its own: GPU kinds twice as frequent,
    the others unchanged."""
    c = shipped_cluster("lite-flat")
    pod = event_kinds(c, "pod")
    assert event_kinds(c, "pod") is pod
    assert event_kinds(c, "global") is not pod
    cat = c.catalog
    doubled = c.with_catalog(cat.with_(gpu_rate_per_hour=2 * cat.gpu_rate_per_hour))
    again = event_kinds(doubled, "pod")
    assert {k.cls for k in pod} >= {"gpu-die", "gpu-package", "leaf"}
    for a, b in zip(pod, again, strict=True):
        factor = 2 if a.cls in ("gpu-die", "gpu-package") else 1
        assert b.rate == pytest.approx(factor * a.rate, rel=1e-12)


# ---------------------------------------------------------------------- slowed instances on spares

def test_lite_ocs_cpo_engine_slowdown_swapped_for_a_spare_by_hand():
    from netmodel.study.availability_analytic import _lost_rate
    from netmodel.study.reliability_recovery import slow_recovery

    c = shipped_cluster("lite-ocs")
    e = next(x for x in c.effects() if x.cls == "cpo-engine")
    # one instance re-balanced (slow share s), none down
    assert e.instances_down == 0 and e.rebalanced == 1 and len(e.slowed) == 1
    s = e.slow
    assert 0 < s < 1 and e.slowed[0][1] == s
    # by hand: swap = detection 30 s + circuits 0.01 s + 8.989 GB / (112.5 GB/s x 20.6/25,
    # NVLink4's payload share as the collective model reads it) + warm-up 60 s; without a
    # spare the instance is slow for detection + the 4 h repair
    d_swap = 30.0 + 0.01 + 8989458432 / (112.5e9 * 20.6 / 25) + 60.0
    d_slow = 30.0 + 4 * HOUR
    assert recovery_times(c).swap_s() == pytest.approx(d_swap, rel=1e-12)
    sw = slow_recovery(c, e, "pod")
    assert (sw.units, sw.swapped, sw.restored) == (1, s, 0.0)   # one spare on the OCS
    k = next(x for x in event_kinds(c, "pod") if x.cls == "cpo-engine")
    assert (k.units, k.slow_swapped, k.slow_restored) == (1, s, 0.0)
    assert k.d_slow == pytest.approx(d_slow) and k.hold == pytest.approx(d_slow)
    # capacity lost per failure (instance-seconds): s x 14,430 s slowed, or s x 90.09 s
    # until the spare serves and nothing after; either way the instance first restarts
    # (its fibre went: NCCL has no link failover), losing the rest of it, 1 - s, for the
    # restart, the swap's span (swapped, its restart is its swap: out 90.1 s whole)
    rate = 512 * c.rates["cpo-engine"]
    assert (k.restarted, k.restart, k.d_restart) == (1, pytest.approx(1 - s, rel=1e-12),
                                                     pytest.approx(d_swap, rel=1e-12))
    restart = (1 - s) * d_swap
    assert _lost_rate([k], [1.0])[0] == pytest.approx(rate * (s * d_slow + restart),
                                                      rel=1e-12)
    assert _lost_rate([k], [0.0])[0] == pytest.approx(rate * d_swap, rel=1e-12)
    # the cluster: a pool that never blocks (16 spares against ~0.4 spares busy at most)
    # leaves the CPO engines' share of the loss at d_swap per failure; without spares
    # at s x d_slow + the restart, less the second-order cap on losses in progress that
    # overlap (analytic's share of the saturation, which scales every class alike): an
    # OCS's failure restarts all 8 instances at once for 90.1 s (0.117 a year: 3.3e-7 of
    # the time), so whatever else is lost then (0.025 of an instance on average) runs
    # past the cluster, about 1e-9 of its capacity, 3.3e-7 of the 3.1e-3 lost
    a = availability(None, None, cluster=c, spares=8, trials=300, seed=3)
    z = a.no_spares.lost_per_year["cpo-engine"]
    w = a.analytic.lost_per_year["cpo-engine"]
    assert z == pytest.approx(rate * YEAR * (s * d_slow + restart) / 8, rel=1e-6)
    assert w == pytest.approx(rate * YEAR * d_swap / 8, rel=1e-6)
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci + 1e-12
    # global spares: the instance re-created on TP spares, the same swap time
    g = next(x for x in event_kinds(c, "global") if x.cls == "cpo-engine")
    assert (g.units, g.slow_swapped, g.slow_restored) == (c.tp, s, 0.0)


def test_slowed_instances_swap_only_when_it_loses_less():
    from netmodel.study.reliability_recovery import slow_recovery

    for name in ("lite-ocs", "lite-flat", "h100-dgx"):
        c = shipped_cluster(name)
        for e in c.effects():
            assert sum(x for _, x in e.slowed) == pytest.approx(e.slow, abs=1e-12)
            for p in ("pod", "global"):
                sw = slow_recovery(c, e, p)
                assert 0.0 <= sw.swapped <= e.slow + 1e-12, (name, e.cls, p)
                if sw.units:
                    assert sw.restored < sw.swapped and recovery_times(c).swap_s() < recovery_times(c).hold_s(e.cls)
                else:
                    assert sw.swapped == sw.restored == 0.0


def slow_kinds_strategy():
    """Kinds whose slowed instances can be swapped (single-rate pool of ``units``)."""
    kind = st.tuples(st.floats(1e-9, 1e-5), st.integers(0, 2), st.floats(3600, 30 * 86400),
                     st.floats(10, 600), st.floats(0.01, 2.0), st.floats(0.0, 1.0),
                     st.floats(0.0, 0.99))
    return st.tuples(st.lists(kind, min_size=1, max_size=4), st.integers(1, 4)).map(
        lambda x: [Kind("cpo-engine", "k", rate=r, down=d, slow=sl, units=x[1],
                        restored=0.0, d_repair=rep + sw, d_swap=sw, hold=rep, d_slow=rep,
                        slow_swapped=sl * f, slow_restored=sl * f * g)
                   for r, d, rep, sw, sl, f, g in x[0]])


@settings(max_examples=40, deadline=None)
@given(kinds=slow_kinds_strategy(), pools=st.integers(1, 3), s=st.integers(0, 6),
       seed=st.integers(0, 100))
def test_a_spare_never_lowers_availability_with_slowed_instances(kinds, pools, s, seed):
    inst = 64

    def run(spares):
        p = SparePools("pod", spares * pools, pools, (spares,) * pools)
        # analytic()'s mean (the same float) without the figures this test reads not
        return ClosedForms(kinds, p, inst), simulate(kinds, p, inst, horizon="1y", trials=20,
                                                    seed=seed)

    (a0, m0), (a1, m1), (a2, m2) = run(0), run(s), run(s + 1)
    eps = 1e-12
    assert a1.mean >= a0.mean - eps and a2.mean >= a1.mean - eps
    assert m1.mean >= m0.mean - eps and m2.mean >= m1.mean - eps     # same failures


def test_monte_carlo_agrees_with_the_closed_forms_on_slowed_swaps():
    # a busy pool (blocking ~ 0.3) so that both the swapped and the waiting branch count
    k = Kind("cpo-engine", "k", rate=2e-4, down=0, slow=0.5, units=2, restored=0.0,
             d_repair=4 * HOUR, d_swap=90.0, hold=4 * HOUR, d_slow=4 * HOUR,
             slow_swapped=0.4, slow_restored=0.05)
    pools = SparePools("pod", 4, 1, (4,))
    an = analytic([k], pools, 16)
    assert 0.1 < an.blocking[0] < 0.9
    mc = simulate([k], pools, 16, horizon="1y", trials=400, seed=5)
    assert abs(mc.mean - an.mean) <= 4 * mc.mean_ci
    # by hand: rate [0.1 x 4 h + b 0.4 x 4 h + (1 - b)(0.4 x 90 s + 0.05 x (4 h - 90 s))] / 16
    b = an.blocking[0]
    lost = 2e-4 * (0.1 * 4 * HOUR + b * 0.4 * 4 * HOUR
                   + (1 - b) * (0.4 * 90 + 0.05 * (4 * HOUR - 90)))
    assert an.mean == pytest.approx(1 - lost / 16, rel=1e-12)


def _efficiency(cluster) -> float:
    """The scale-up payload share the collective model reads for the cluster's GPU
    (netmodel/data/collective_defaults.toml: 0.824 on NVLink4), at which a spare loads its
    shard from a peer."""
    from netmodel.collectives.calibration_files import default_calibration

    return default_calibration().for_gpu(cluster.gpu.name).scaleup_efficiency
