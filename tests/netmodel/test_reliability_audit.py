"""Audit of the blast-radius and availability answers against hand derivations and
published failure statistics (Llama 3, arXiv 2407.21783 Table 5, via
../shared/reference/failures_llama3.csv and failures_components.csv)."""

from __future__ import annotations

import math

import pytest

from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_catalog import HOUR
from netmodel.study.reliability_cluster import YEAR
from tests.netmodel.scenario_helpers import write_scenario


@pytest.fixture(scope="module")
def dgx_16k():
    """16,384 H100 as 512 copies of h100-dgx (32 GPUs each, 8 to an SU's shared parts),
    Llama-3-70B decode."""
    return blast_radius("h100-dgx", "Llama-3-70B", gpus=16384)


def test_baseboard_nvlinks_have_no_copper_ends(dgx_16k):
    # An H100's 18 NVLinks run to the NVSwitch chips of its own HGX baseboard: traces, not
    # cables, so no copper-end part (they fail with the board: host, nvswitch). The model
    # counted 16,384 GPUs x 18 NVLinks x 2 ends = 589,824 connectors at 6.6e-8 per hour,
    # 341.25 failures a year, more than Llama 3's whole network category (237 a year).
    rows = {r.cls: r for r in dgx_16k.rows}
    assert rows.get("copper-end") is None or rows["copper-end"].count == 0
    network = sum(rows[c].events_per_year for c in ("transceiver", "nvswitch", "leaf", "spine"))
    # 32,768 twin-port modules (65,536 optical ends, two a module: P40) x 6.6e-7 +
    # (2,048 + 512 + 256) switches x 3.33e-6, a year (the cells' shared leaves, spines and
    # uplinks counted once per SU they fill: test_reliability_shared_parts.py)
    assert network == pytest.approx((32768 * 6.6e-7 + 2816 * 3.33e-6) * YEAR / HOUR,
                                    rel=1e-9)
    # was 2,286.6 with copper ends, 1,945.3 with every cell's uplinks counted, 461.4 with
    # a module an end
    assert network == pytest.approx(271.8, abs=0.1)


def test_table_columns_never_run_together_small_token_loss():
    # copper-end of 114 GB300 NVL72 racks (16,416 GPUs), whose NVLinks are cables (the
    # rack's copper spine): 16,416 x 18 x 2 = 590,976 parts at 6.6e-8 per hour
    # (failures.toml, assumption), 590,976 x 6.6e-8 x 8,766 h = 341.9 a year; one thinned
    # NVLink of 18 costs about 4e-5 % of the cluster's tokens/s, a cell of 8 characters
    # that ran into the 'inst' column ('0       00.000169', seen on 16,384 H100 when their
    # board traces were counted as cables)
    from pathlib import Path

    example = str(Path(__file__).resolve().parents[2] / "docs" / "examples" / "gb300-nvl72.toml")
    racks = blast_radius(example, "Llama-3-70B", gpus=114 * 144)
    row = next(r for r in racks.rows if r.cls == "copper-end")
    assert row.count == 114 * 144 * 18 * 2 == 590976
    assert row.events_per_year == pytest.approx(590976 * 6.6e-8 * YEAR / HOUR, rel=1e-9)
    line = next(x for x in racks.table().splitlines() if x.startswith("copper-end"))
    fields = line.split()
    assert fields[6] == "0"                                   # inst
    assert float(fields[7]) == pytest.approx(row.tokens_lost_pct_mean, rel=5e-3)   # tok%
    # recovery: restart (a lost NVLink aborts the communicator), then slowed until repair
    assert fields[8] == "restart"


def test_summary_with_no_gpu_failures_is_finite():
    # With the GPU rate at 0 the rate-weighted radius was 0/0: nan SMs per GPU failure
    # and a RuntimeWarning. lite-flat, Llama-3-70B: TP 16 of Lites (33 SMs), 8 instances.
    # Hand: the radius of a GPU failure, were one to happen, is 33 SMs of hardware and
    # 16 x 33 = 528 in software. Capacity lost per second without spares (no GPU term):
    # host 4 x 1.73e-5/h x 2 instances x 86,490.08 s (30 s detection + 24 h repair +
    # 0.08 s reload + 60 s warm-up) = 3.3251e-3, plus the slowed: CPO engines 1,024 x
    # 6.6e-7/h x 0.078216 instance x 14,430 s = 2.1188e-4 and planes 4 x 3.33e-6/h x
    # 0.62573 x 86,430 s = 2.0010e-4; and each slowed instance first restarts (its link
    # went, NCCL has no failover), losing the rest of its worth for the swap's 90.097 s:
    # CPO engines 1,024 x 6.6e-7/h x (1 - 0.078216) x 90.097 s = 1.5591e-5, planes 4 x
    # 3.33e-6/h x (8 - 0.62573) x 90.097 s = 2.4584e-6; (3.3251e-3 + 2.1188e-4 +
    # 2.0010e-4 + 1.5591e-5 + 2.4584e-6) / 8 = 4.6939e-4 (4.671e-4 without the restarts).
    import warnings

    from netmodel.study.reliability_catalog import catalog
    from netmodel.study.reliability_summary import reliability_summary

    cat = catalog().with_(gpu_rate_per_hour=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = reliability_summary("lite-flat", "Llama-3-70B", catalog_=cat, method="analytic")
    assert s.sms_down_per_gpu_failure_hw == 33.0
    assert s.sms_down_per_gpu_failure_sw == 16 * 33.0
    assert s.gpu_failures_per_year == 0.0
    assert s.availability == pytest.approx(1 - 4.6939e-4, abs=2e-8)


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
def test_an_override_of_a_class_the_fabric_lacks_is_named(command):
    # lite-flat has planes (leaf), CPO engines, hosts and GPUs, no OCS and no rack label:
    # '--rate ocs=1e-5' and '--repair-time rack=2d' were taken without a word and changed
    # nothing, which reads as 'the OCS rate does not matter here'. Now a note says so; the
    # table is the default one, line for line.
    from click.testing import CliRunner

    from netmodel.cli.main import cli

    base = ["--scenario", "lite-flat", "--model", "Llama-3-70B"]
    if command == "availability":
        base += ["--trials", "20", "-q"]
    plain = CliRunner().invoke(cli, [command, *base])
    over = CliRunner().invoke(cli, [command, *base, "--rate", "ocs=1e-5",
                                    "--repair-time", "rack=2d", "--rate", "host=1.73e-5"])
    assert plain.exit_code == over.exit_code == 0, over.output
    lines = over.output.splitlines()
    assert lines[-2:] == [
        "note: --rate ocs: lite-flat@Lite has no part of class ocs; the value changes nothing",
        "note: --repair-time rack: lite-flat@Lite has no part of class rack; the value "
        "changes nothing"]
    assert lines[:-2] == plain.output.splitlines()   # host=1.73e-5 is the default: no note
    js = CliRunner().invoke(cli, [command, *base, "--rate", "ocs=1e-5", "--json"])
    assert js.exit_code == 0 and "note:" not in js.output


def test_16k_h100_failures_a_year_match_llama3_table5(dgx_16k):
    # Llama 3 405B pre-training, 16,384 H100 for 54 days (arXiv 2407.21783 Table 5,
    # ../shared/reference/failures_llama3.csv): GPU category 268 interruptions, host 46
    # (maintenance 32, SSD 3, PSU 3, chassis 2, IO board 2, CPU 2, DRAM 2), NIC 7. A year
    # of the same cluster: x 365.25 / 54. The model's 16,384 H100 (512 cells of h100-dgx)
    # must fail as often per year in those classes (1.26e-5/GPU-h is 268/21,233,664
    # rounded to 3 digits: 0.17% low). The network (461 a year against 237, 4 optics per
    # GPU against the ~2.5 the transceiver rate is spread over) is in
    # test_reliability_shared_parts.py and docs/reliability.md.
    per_year = 365.25 / 54
    rows = {r.cls: r for r in dgx_16k.rows}
    gpu = rows["gpu-die"].events_per_year + rows["gpu-package"].events_per_year
    assert gpu == pytest.approx(268 * per_year, rel=2e-3)          # 1,812.7 a year
    assert rows["host"].count == 16384 / 8
    assert rows["host"].events_per_year == pytest.approx(46 * per_year, rel=2e-3)   # 311.1
    assert rows["nic"].events_per_year == pytest.approx(7 * per_year, rel=2e-3)     # 47.3
    # one GPU failure takes one GPU and its TP-4 instance: 1 of 4,096 (0.0244%)
    assert rows["gpu-die"].gpus_max == 1 and rows["gpu-die"].instances_down_max == 1
    assert rows["gpu-die"].tokens_lost_pct_max == pytest.approx(100 / 4096)
    # a host of 8 H100 holds two TP-4 instances
    assert rows["host"].instances_down_max == 2


def test_a_threshold_of_99_9_percent_is_not_printed_as_100():
    # '--threshold 99.9%' headed its row 'time below 100% capacity' (format '.0%'), a
    # threshold the cluster is below whenever anything at all is lost. lite-flat,
    # Llama-3-70B: 0.1% of 8 instances is 0.008, so every event counts, CPO engines
    # (0.078 instance each) too. Hand: outages in progress = GPU 7.1456e-8 + 1.62176e-7
    # and host 1.9222e-8 per s x 86,490 s, planes 3.7e-9 x 86,430 s, CPO engines
    # 1.87733e-7 x 14,430 s = 0.024898; P(any) = 1 - exp(-0.024898) = 0.02459.
    from click.testing import CliRunner

    from netmodel.cli.main import cli

    r = CliRunner().invoke(cli, ["availability", "--scenario", "lite-flat", "--model",
                                 "Llama-3-70B", "--trials", "20", "-q", "--threshold",
                                 "99.9%"])
    assert r.exit_code == 0, r.output
    row = next(x for x in r.output.splitlines() if x.startswith("time below"))
    assert row.startswith("time below 99.9% capacity ")
    assert float(row.split()[-1]) == pytest.approx(0.02459, rel=2e-3)


@pytest.mark.parametrize(("horizon", "shown"), [("1h", "x 1 h,"), ("90min", "x 1.5 h,"),
                                               ("30d", "x 30 d,"), ("1y", "x 1 y,")])
def test_the_horizon_is_shown_in_a_readable_unit(horizon, shown):
    # '--horizon 1s' was shown as '20 trials x 3.17e-08 y' (1 s / 31,557,600 s); the floor is
    # now an hour (h272: shorter is refused), its unit h
    from click.testing import CliRunner

    from netmodel.cli.main import cli

    r = CliRunner().invoke(cli, ["availability", "--scenario", "lite-flat", "--model",
                                 "Llama-3-70B", "--trials", "20", "-q", "--horizon", horizon])
    assert r.exit_code == 0, r.output
    assert f"20 trials {shown} seed 0" in r.output.splitlines()[0]


def test_a_one_gpu_fabric_by_hand(tmp_path):
    # One H100 serving Llama-3-8B (TP 1): its instance is down when the GPU (1.26e-5/h,
    # F04), its host (1.73e-5/h, F08; here a host of one GPU) or its NVSwitch (3.33e-6/h,
    # F54: a GPU wired to a failed NVSwitch runs nothing, NVIDIA Fabric Manager) fails, for
    # 30 s detection + 24 h repair + 60 s warm-up + the 16.06 GB shard at 450 GB/s
    # (0.036 s) = 24.02501 h. Independent components in series, each up
    # MTBF/(MTBF + MTTR) = 1/(1 + rate x MTTR) of the time: die 1.26e-5 x 0.638 =
    # 8.0388e-6/h, package 1.26e-5 x 0.362 = 4.5612e-6/h, host 1.73e-5/h, switch 3.33e-6/h:
    # 1/((1 + 8.0388e-6 d)(1 + 4.5612e-6 d)(1 + 1.73e-5 d)(1 + 3.33e-6 d)) = 0.9992021
    # (0.9992820 before the switch stopped its GPU); the mean capacity is the share of time
    # no outage is in progress (Poisson, mean 3.323e-5 d: the additive losses capped at the
    # one instance) e^(-3.323e-5 d) = 0.9992020 (first-order 1 - 3.323e-5 d = 0.9992016).
    # The table said '1 GPUs'.
    from click.testing import CliRunner

    from netmodel.cli.main import cli
    from netmodel.study.availability import availability

    path = write_scenario(tmp_path, "one-gpu", "H100-SXM",
                          {"builder": "single-switch", "n": 1, "gpu": "$gpu"},
                          file="one.toml", description="one H100 on one switch")
    a = availability(str(path), "Llama-3-8B", trials=20)
    assert a.cluster.gpus == 1 and a.cluster.instances_total == 1
    d = 24.02501
    assert a.no_spares.instance_availability == pytest.approx(
        1 / ((1 + 8.0388e-6 * d) * (1 + 4.5612e-6 * d) * (1 + 1.73e-5 * d)
             * (1 + 3.33e-6 * d)), abs=2e-9)
    assert a.no_spares.instance_availability == pytest.approx(0.9992021, abs=1e-7)
    assert a.no_spares.mean == pytest.approx(math.exp(-3.323e-5 * d), abs=2e-9)
    for command in ("blast-radius", "availability"):
        r = CliRunner().invoke(cli, [command, "--scenario", str(path), "--model",
                                     "Llama-3-8B", "--no-plot", *(["-q", "--trials", "10"]
                                     if command == "availability" else [])])
        assert r.exit_code == 0, r.output
        assert ": 1 GPU " in r.output.splitlines()[0] or ": 1 GPU," in r.output.splitlines()[0]


def test_nvl72_rack_and_switch_tray_by_hand():
    # docs/examples/gb300-nvl72.toml: 2 racks of 72 GB300 (18 compute trays of 4, 9 NVLink
    # switch trays), Llama-3.1-405B decode at TP 4: 36 instances, one per compute tray.
    # A rack (72 GPUs) takes 18 instances (50%); a compute tray (host) one; a switch tray
    # is one of 9 parts of the rack's NVLink domain (TIER0_BOXES), 18 in all. With the
    # rack rate at the top of its range (2.3e-6/h, the rule of three over Llama 3's 0
    # events in 1,024 racks x 1,296 h), the capacity lost is 2 x 2.3e-6 x 18 x d / 36,
    # d = 24.02504 h (30 s + 24 h + 60 s + the 405B shard's reload): 5.5258e-5.
    from pathlib import Path

    from netmodel.study.availability import availability
    from netmodel.study.reliability_catalog import catalog

    example = str(Path(__file__).resolve().parents[2] / "docs" / "examples" / "gb300-nvl72.toml")
    b = blast_radius(example, "Llama-3.1-405B")
    rows = {r.cls: r for r in b.rows}
    assert b.cluster.instances_total == 36 and b.cluster.instance_gpus == 4
    assert (rows["rack"].count, rows["rack"].gpus_max, rows["rack"].instances_down_max) \
        == (2, 72, 18)
    assert rows["rack"].tokens_lost_pct_max == pytest.approx(50.0)
    assert (rows["host"].count, rows["host"].gpus_max, rows["host"].instances_down_max) \
        == (36, 4, 1)
    assert rows["nvswitch"].count == 18
    # the cluster the table was worked out on (the default catalog), and it under the
    # rack rate raised (with_catalog, as test_tier0_switch_failure does): its effects
    # worked out once, not by two more builds
    base = availability(example, "Llama-3.1-405B", trials=10, cluster=b.cluster)
    racked = availability(example, "Llama-3.1-405B", trials=10, cluster=b.cluster.with_catalog(
        catalog().with_(rates={"rack": 2.3e-6})))
    rack = next(k for k in racked.kinds if k.cls == "rack")
    assert rack.d_repair / HOUR == pytest.approx(24.02504, abs=1e-5)
    assert base.no_spares.mean - racked.no_spares.mean == pytest.approx(
        2 * 2.3e-6 * 18 * 24.02504 / 36, rel=1e-5)


def test_pod_spares_cannot_re_create_more_gpus_than_the_pod_has_ports():
    # lite-flat: 4 planes of 144 ports hold 128 Lites, so a pod spare (a port on every
    # plane) has 144 - 128 = 16 sites. A host of 32 Lites holds two TP-16 instances; to
    # re-create both takes 32 spares at once. The blast-radius table said 're-create on
    # 32 spares (90.1 s)' (it checked room for one instance, 16), while the availability
    # model, whose pool holds at most 16, recovered both or neither. Its 16 free ports
    # hold one of the two: that one is re-created, the other waits for its repair, so
    # every host failure still waits, 4 x 1.73e-5/h x 8,766 h = 0.6066 a year.
    from netmodel.study.availability import availability
    from netmodel.study.reliability_spares import capacity

    b = blast_radius("lite-flat", "Llama-3-70B")
    assert capacity(b.cluster, "pod") == 144 - 128
    host = next(r for r in b.rows if r.cls == "host")
    assert host.instances_down_max == 2 and b.cluster.instance_gpus == 16
    assert host.recovery_with_spares.startswith(
        "re-create 1 of 2 on 16 spares (16 free port(s); the rest repair)")
    gpu = next(r for r in b.rows if r.cls == "gpu-die")
    assert gpu.recovery_with_spares.startswith("substitute 1 spare")
    a = availability("lite-flat", "Llama-3-70B", spares=16, trials=10, cluster=b.cluster)
    # and now a Lite's die or package failure (2.25 + 5.12 a year) waits too while a host
    # holds the 16 (a day of each 0.6066 a year: 1.66e-3 of the time)
    hosts = 4 * 1.73e-5 * YEAR / HOUR
    held = hosts * 86400 / YEAR
    assert a.analytic.waits_for_repair_per_year == pytest.approx(
        hosts + (2.25 + 5.12) * held, rel=2e-3)
    # global spares need no port: two instances are re-created on 32 of them
    g = blast_radius("lite-flat", "Llama-3-70B", placement="global", cluster=b.cluster)
    assert next(r for r in g.rows if r.cls == "host").recovery_with_spares.startswith(
        "re-create on 32 spares")
