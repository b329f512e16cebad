"""Hostile input round 9: ``sweep --param cost.NAME=VALUE`` with units (3e14300), cost's
--max-batch/--ttft/--tbt/--parallelism/--clock, blast-radius and availability's new options,
``collective --all-groups --max-transfers``. Bad input: one line naming the value and what is
allowed, exit status 2, no traceback; valid input (however absurd) never crashes and never
writes a non-finite number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

SWEEP = ["sweep", "--scenario", "h100-dgx", "--models", "Llama-3-8B", "--param"]


@pytest.mark.parametrize("value, needle", [
    ("cost.electricity_price=1e400USD/kWh", "range a sweep takes, from 0 to 82600USD/kWh"),
    ("cost.lifetime=-5y", "range a sweep takes, above 0 up to 5e+06year"),
    ("cost.utilization=nan%", "range a sweep takes, from 0 to 1"),
    ("cost.electricity_price=700W", "allowed units"),
    ("cost.electricity_price=0.1USD/kWhUSD/kWh", "allowed units"),
    ("cost.utilization=5%%", "allowed units"),
    ("cost.lifetime=5kW", "allowed units"),
    ("cost.switch_energy=1USD/(Gb/s)", "allowed units"),
    ("cost.switch_price=6.9pJ/bit", "allowed units"),
    ("cost.host_power_per_h100=5y", "allowed units"),
    ("cost.electricity_price=$0.1/kWh", "allowed units"),
    ("cost.electricity_price=", "PATH=LO:HI"),
    ("cost.electricity_price=1USD/kWh:0.1USD/kWh", "HI is below LO"),
    ("cost.utilization=150%", "'150%' is outside the range a sweep takes, from 0 to 1"),
    ("cost.lifetime=0y", "'0y' is outside the range a sweep takes, above 0 up to 5e+06year"),
    ("cost.pue=0.5", "'0.5' is outside the range a sweep takes, from 1 to 1.1e+06"),
    ("cost.wafer_diameter=2000mm", "range a sweep takes, above 0 up to 1000mm"),
    ("cost.host_power_per_h100=1e308kW", "range a sweep takes, from 0 to 5.35e+08W"),
])
def test_cost_value_refused_in_one_line(value, needle):
    one_line_error(run_cli([*SWEEP, value]), needle)


@pytest.mark.parametrize("value", ["cost.switch_energy=1e300pJ/bit,1pJ/bit",
                                   "cost.maintenance_fraction=1e306%/y",
                                   "cost.electricity_price=1e306USD/J",
                                   "cost.switch_price=1e300USD/(Gb/s),1.5USD/(Gb/s)"])
def test_absurd_cost_is_refused_not_written(value, tmp_path):
    # before e0694da: exit 0, the table read 'inf' and sweep.json held the bare token Infinity
    # (not JSON), or a 297-digit cell and a figure whose axes overflowed; now a value over a
    # million times the shipped default is one line, nothing written
    out = tmp_path / "o"
    line = one_line_error(run_cli([*SWEEP, value, "--out", out]),
                           "(at most 1,000,000 times its shipped default",
                           value.split("=")[0])
    assert "is outside the range a sweep takes, from 0 to " in line
    assert not out.exists()


def test_cost_that_overflows_is_refused_by_the_library():
    """Values a sweep no longer takes still reach cost_summary from Python: a total that
    overflows is one line (1e288 J/bit x the fabric's bits/s x PUE x a year's seconds)."""
    from compute.errors import UserError
    from netmodel.study.cost import cost_summary

    with pytest.raises(UserError, match="switch_energy=1e.288 .SI. make the energy cost per "
                                        "year of h100-dgx@H100-SXM overflow to infinity"):
        cost_summary("h100-dgx", "Llama-3-8B", "decode", switch_energy=1e288)


def test_cost_example_reads_back_as_its_default():
    # the example in a wrong-unit error wrote a 1/year default as '0.051/year' (0.051 a year)
    line = one_line_error(run_cli([*SWEEP, "cost.maintenance_fraction=5W"]), "0.05/year,")
    assert "0.051/year" not in line


@pytest.mark.parametrize("spelling", ["5y", "5 y", "5year", "5years", "157788000"])
def test_lifetime_spellings_agree(spelling):
    # a space is read; Arabic-Indic and full-width digits no longer are (the next test)
    r = run_cli([*SWEEP, f"cost.lifetime={spelling}"])
    assert r.exit_code == 0, r.output
    # every spelling is 5 years, the default: the library's figure at the default, to the
    # table's 3 decimals (0.026 before the colocation rent, 0.028 with the $47k NVSwitch board)
    from netmodel.study.cost import cost_summary
    expected = f"{cost_summary('h100-dgx', 'Llama-3-8B', 'decode').usd_per_mtoken:.3f}"
    assert r.output.splitlines()[-1].split()[-1] == expected == "0.033", r.output



@pytest.mark.parametrize("spelling, digit", [("\u0665y", "\u0665"), ("\uff15y", "\uff15")])
def test_lifetime_of_other_scripts_digits_refused(spelling, digit):
    # read as 5 years by Python's float before; numbers take the ASCII digits 0-9 (h351)
    one_line_error(run_cli([*SWEEP, f"cost.lifetime={spelling}"]),
                   f"cost.lifetime '{spelling}' has the digit '{digit}'", "ASCII digits 0-9")

COST = ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--phase", "decode"]


@pytest.mark.parametrize("opt, value, needle", [
    ("--max-batch", "0", "whole number from 1 to"), ("--max-batch", "2x", "whole number from 1 to"),
    ("--max-batch", "1e9", "over the limit"), ("--ttft", "nan", "a time from 1 us to 600 s"),
    ("--ttft", "1e9", "outside the 1 us to 600 s"), ("--tbt", "-1", "a time from 1 us to 10 s"),
    ("--tbt", "2x", "unknown unit 'x'"), ("--clock", "0", "modelled range [0.05, 1.5]"),
    ("--clock", "1e9", "modelled range"), ("--clock", "2x", "plain number"),
    ("--parallelism", "tp,all", "'auto', 'tp', 'all'"),
])
def test_cost_options_refused(opt, value, needle):
    one_line_error(run_cli([*COST, opt, value]), needle)


@pytest.mark.parametrize("cmd", ["blast-radius", "availability"])
@pytest.mark.parametrize("opt, value, needle", [
    ("--max-batch", "-1", "whole number from 1 to"), ("--max-batch", "nan", "whole number from 1 to"),
    ("--ttft", "0", "a time from 1 us to 600 s"),
])
def test_reliability_options_refused(cmd, opt, value, needle):
    one_line_error(run_cli([cmd, "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--phase",
                          "decode", opt, value]), needle)


@pytest.mark.parametrize("value, needle", [("0", ">= 1"), ("-1", ">= 1"),
                                           ("nan", "not a whole number"),
                                           ("1e30.5", "not a whole number"),
                                           ("1_0", "groups its digits with '_'"),
                                           ("1.5", "'1.5' is not a whole number")])
def test_all_groups_max_transfers_refused(value, needle):
    one_line_error(run_cli(["collective", "all-reduce", "--fabric", "fat-tree:k=8", "--group",
                          "16", "--all-groups", "--size", "1M", "--max-transfers", value]),
                    "--max-transfers", needle)


def test_all_groups_huge_max_transfers_runs():
    r = run_cli(["collective", "all-reduce", "--fabric", "fat-tree:k=8", "--group", "16",
              "--all-groups", "--size", "1M", "--max-transfers", "9" * 23])
    assert r.exit_code == 0, r.output
    assert "all 8 groups of 16 at once" in r.output


HF = Path(__file__).resolve().parents[1] / "compute" / "data" / "hf_families"


@pytest.mark.parametrize("key, value", [("moe_topk", [8] * 3), ("moe_topk", [8] * 33),
                                        ("num_shared_expert", [1])])
def test_hf_per_layer_list_of_the_wrong_length_is_refused(key, value, tmp_path):
    # before: Hunyuan-A13B with moe_topk [8, 8, 8] on its 32 layers read as 80.39B, exit 0
    cfg = json.loads((HF / "hunyuan-a13b-instruct.json").read_text())
    cfg = {k: v for k, v in cfg.items() if not k.startswith("_")}
    cfg[key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    one_line_error(run_cli(["models", "--hf-config", path]), key,
                    f"lists {len(value)} values for 32 layers")


# ------------------------------------------------------------------ serve --profile, --rate

SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B"]
_SHIPPED_PROFILE = (Path(__file__).resolve().parents[2] / "compute" / "data" / "profiles"
                    / "vllm-dgx-h100.toml")


def _profile_file(tmp_path, name, old=None, new=None, raw=None):
    """The shipped profile named vllm-copy, with ``old`` replaced by ``new`` (or ``raw``
    bytes), at tmp_path/name."""
    p = tmp_path / name
    if raw is not None:
        p.write_bytes(raw)
    else:
        # renamed: a file of the shipped profile's name and other values is refused
        text = _SHIPPED_PROFILE.read_text().replace('name = "vllm-dgx-h100"',
                                                    'name = "vllm-copy"', 1)
        if old is not None:
            assert old in text, old
            text = text.replace(old, new, 1)
        p.write_text(text)
    return p


_LAYER = "value = 0.0002675556089174325"
_GEMM = "value = 0.8009100101112235"


@pytest.mark.parametrize("case, needle", [
    ("no-such-engine", "unknown profile 'no-such-engine'; known: 'vllm-dgx-h100', 'vllm-h100-2024'"),
    ("", "unknown profile ''"),
    ("missing.toml", "does not exist"),
    ("empty.toml", "missing key(s) profile, parameters"),
    ("binary.toml", "not a UTF-8 text file"),
    ("bad.toml", "malformed TOML"),
    ("folder.toml", "it is a folder"),
    ("unknown.toml", "unknown key(s) bogus"),
    ("negative.toml", "layer_overhead_s]: value must be a number from 0 to 1 s, got -0.001"),
    ("nan.toml", "layer_overhead_s]: value must be a number from 0 to 1 s, got nan"),
    ("eff15.toml", "gemm_efficiency]: value must be a number from 0.0001 to 1, got 1.5"),
    ("eff0.toml", "gemm_efficiency]: value must be a number from 0.0001 to 1, got 0"),
    ("huge.toml", "larger than the 16,777,216-byte limit"),
])
def test_serve_profile_refused_in_one_line(tmp_path, case, needle):
    files = {
        "empty.toml": dict(raw=b""),
        "binary.toml": dict(raw=bytes(range(256)) * 8),
        "bad.toml": dict(raw=b"not [toml\n"),
        "unknown.toml": dict(old="[profile]\n", new="[profile]\nbogus = 1\n"),
        "negative.toml": dict(old=_LAYER, new="value = -0.001"),
        "nan.toml": dict(old=_LAYER, new="value = nan"),
        "eff15.toml": dict(old=_GEMM, new="value = 1.5"),
        "eff0.toml": dict(old=_GEMM, new="value = 0"),
        "huge.toml": dict(raw=b"# " + b"x" * (17 * 2**20) + b"\n"),
    }
    ref = case
    if case in files:
        ref = _profile_file(tmp_path, case, **files[case])
    elif case == "folder.toml":
        ref = tmp_path / case
        ref.mkdir()
    elif case.endswith(".toml"):
        ref = tmp_path / case
    one_line_error(run_cli([*SERVE, "--profile", ref]), needle)


def test_serve_profile_fitted_on_another_gpu_runs(tmp_path):
    """A profile's gpu is what it was fitted on, not a check: on H100 a copy that says
    B200-HGX gives the shipped profile's pools exactly. Its label and its measurement rows
    both say B200-HGX: a label naming other GPUs than its rows is refused (fdddeca8)."""
    other = _profile_file(tmp_path, "other.toml")
    other.write_text(other.read_text().replace('gpu = "H100-SXM"', 'gpu = "B200-HGX"'))
    a = run_cli([*SERVE, "--profile", other, "--json"])
    b = run_cli([*SERVE, "--profile", "vllm-dgx-h100", "--json"])
    assert a.exit_code == b.exit_code == 0, (a.output, b.output)
    ja, jb = json.loads(a.output), json.loads(b.output)
    ja["settings"]["options"].pop("profile"), jb["settings"]["options"].pop("profile")
    assert ja == jb


def test_serve_profile_with_tp_only():
    r = run_cli([*SERVE, "--profile", "vllm-dgx-h100", "--tp-only", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    for pool in ("prefill", "decode"):
        assert d[pool]["pp"] == 1 and d[pool]["ep"] == 1, d[pool]


@pytest.mark.parametrize("rate, needle", [
    ("0", "got 0.0"), ("-1", "got -1.0"), ("nan", "got nan"), ("inf", "got inf"),
    ("1e300", "got 1e+300"), ("", "got ''"), ("0x10", "got '0x10'"),
    # below the workload's floor (1e-9 requests/s): the old --rate check took any rate > 0
    # and the workload refused it naming 'workload coding', not --rate
    ("1e-300", "got 1e-300"),
])
def test_serve_rate_refused_in_one_line(rate, needle):
    # the range is the workload's (checked once, by ServingWorkload), said with the flag
    # and the text as typed in front (it restated the range in the CLI)
    one_line_error(run_cli([*SERVE, "--rate", rate]),
                    f"--rate {rate!r}: workload 'coding': rate must be a number from 1e-09 to "
                    f"1,000,000,000 requests/s, {needle}")


def test_serve_rate_below_the_smallest_float_refused_in_one_line():
    # 5e-324 is a subnormal float: not the value typed, refused as such
    one_line_error(run_cli([*SERVE, "--rate", "5e-324"]),
                   "--rate '5e-324' is below the smallest number netmodel reads")


@pytest.mark.parametrize("rate, got", [
    ("0", "got 0"), ("nan", "got nan"), ("1e300", "got 1e+300"), ("-1.0", "got -1"),
    ('"10"', "got '10'"), ("true", "got True"),
])
def test_serve_workload_file_rate_refused(tmp_path, rate, got):
    f = tmp_path / "wl.toml"
    f.write_text(f"prompt = 1500\noutput = 13\nrate = {rate}\n")
    one_line_error(run_cli([*SERVE, "--workload", f]),
                    "rate must be a number from 1e-09 to 1,000,000,000 requests/s", got)


def test_serve_rate_bounds_accepted():
    # prefill TP 1 at 45.928 requests/s, decode TP 1 at 1,108.52 (TP 1 x PP 2's 2,233.39
    # on 2 GPUs won with balanced stages; its last stage's LM head now makes it 2,203.85,
    # 1,101.92 a GPU): 1 + 1 GPUs, and ceil(1e9 / 45.928) + ceil(1e9 / 1108.52) =
    # 21,773,212 + 902,105 (was 3 and 22,668,712)
    for rate, gpus in (("1e-9", 2), ("1e9", 22675317)):
        r = run_cli([*SERVE, "--rate", rate, "--json"])
        assert r.exit_code == (0 if gpus <= 32 else 3), r.output
        d = json.loads(r.output.split("\nnothing feasible")[0])
        assert d["gpus_used"] == gpus, d.get("gpus_used")


def test_serve_slow_profile_is_exit_3_with_tables(tmp_path):
    """A valid profile that no configuration meets the SLO with (10 s per step) is exit 3,
    the table and the calibrated-mode line printed."""
    slow = _profile_file(tmp_path, "slow.toml",
                         'value = 0.0\nsource = "not fitted: with one model (one layer',
                         'value = 10.0\nsource = "not fitted: with one model (one layer')
    r = run_cli([*SERVE, "--profile", slow, "--rate", "1e9"])
    assert r.exit_code == 3, r.output
    assert "Traceback" not in r.output
    assert "no configuration that fits in memory meets TBT <= 50 ms" in r.output
    assert "calibrated mode: engine profile vllm-copy" in r.output
    assert "nothing feasible: no configuration meets the SLO (exit status 3)" in r.output


@pytest.mark.parametrize("value, read, meant", [
    # 0.1 USD/J x 3.6e6 J/kWh; 100 USD/(W s) x 1,000 W/kW x 2,629,800 s a (Julian) month;
    # 6.9 J/bit x 1e12 pJ/J
    ("cost.electricity_price=0.1", "value '0.1' (a bare number is SI, USD/J: 360000USD/kWh)",
     "; for 0.1USD/kWh write cost.electricity_price=0.1USD/kWh"),
    ("cost.colocation_rent=100",
     "value '100' (a bare number is SI, USD/(W s): 2.6298e+11USD/kW/month)",
     "; for 100USD/kW/month write cost.colocation_rent=100USD/kW/month"),
    ("cost.switch_energy=6.9", "value '6.9' (a bare number is SI, J/bit: 6.9e+12pJ/bit)",
     "; for 6.9pJ/bit write cost.switch_energy=6.9pJ/bit"),
])
def test_bare_cost_over_the_bound_says_it_was_read_in_si(value, read, meant):
    """h320: 'cost.electricity_price value '0.1' is over 1,000,000 times its shipped default
    0.0826USD/kWh' read as false to whoever meant USD/kWh (0.1 is not a million times
    0.0826): a bare number is SI, and the line now says so, its value in the row's unit, and
    how to type the one meant."""
    line = one_line_error(run_cli([*SWEEP, value]), read, "at most 1,000,000 times its shipped")
    assert line.endswith(meant), line


def test_bare_cost_under_the_bound_is_taken_in_si():
    """The clause is only for a refused bare number: a unit-suffixed absurd value keeps the
    plain line (nothing to explain), and a bare SI value in range is swept, not refused."""
    line = one_line_error(run_cli([*SWEEP, "cost.electricity_price=1e300USD/kWh"]),
                          "at most 1,000,000 times")
    assert "bare number" not in line and "; for " not in line
    r = run_cli([*SWEEP, "cost.colocation_rent=0"])
    assert r.exit_code == 0, r.output


def test_fabric_file_graph_reconfiguration_time_bounded(tmp_path):
    """h320: a saved OCS fabric whose graph attribute reconfiguration_time is 1e300 s was
    read (its OCS nodes' own are bounded at 1e7 s) and shown as 'reconfigure: 1e+303 ms'."""
    path = tmp_path / "ocs.json"
    assert run_cli(["topology", "export", "ocs:logical=ring", "-o", path]).exit_code == 0
    data = json.loads(path.read_text())
    data["graph"]["reconfiguration_time"] = 1e300
    path.write_text(json.dumps(data))
    for args in (["topology", "show", path], ["collective", "all-reduce", "--fabric", path]):
        one_line_error(run_cli(args), "graph attribute reconfiguration_time must be at most "
                       "1e+07 s", "got 1e+300")


def test_failed_ocs_takes_its_circuits_with_it():
    """h320: ``collective --scenario lite-ocs --fail ocs0`` (and ``--fabric
    ocs:logical=ring --fail ocs0``) was refused, 'invalid fabric graph: circuit
    'gpu0'-'gpu1' 'via' must name the OCS node(s) it passes ...: 'ocs0' is not an OCS of the
    graph': degrade removed the switch and kept the circuits through it. Now each edge
    keeps the circuits of the other switches, one port's bandwidth each."""
    from netmodel.collectives.degraded import degrade
    from topologies import ocs, realize
    from topologies.schema import validate

    ring = [(f"gpu{i}", f"gpu{(i + 1) % 4}") for i in range(4) for _ in range(2)]
    g = realize(ocs(gpus=4, ports=4, ocs_ports=4), ring)
    out = degrade(g, nodes=["ocs0"])
    hit = 0
    for u, v, d in g.edges(data=True):
        planes = d["via"].split(",")
        if "ocs0" not in planes:
            assert out.edges[u, v] == d
            continue
        hit += 1
        e = out.edges[u, v]
        assert e["via"] == ",".join(p for p in planes if p != "ocs0")
        assert e.get("links", 1) == 1 and e["bandwidth"] == d["bandwidth"] / 2
    assert hit == 2   # greedy planes: gpu0-gpu1 and gpu2-gpu3 on ocs0 and ocs1
    validate(out, check_connected=False)
    assert degrade(g, nodes=["ocs0", "ocs1"]).number_of_edges() == 2   # those two pairs cut


def test_failed_ocs_on_the_command_line():
    healthy = run_cli(["collective", "all-reduce", "--scenario", "lite-ocs", "--json"])
    failed = run_cli(["collective", "all-reduce", "--scenario", "lite-ocs", "--fail", "ocs0",
                      "--json"])
    assert healthy.exit_code == 0 and failed.exit_code == 0, failed.output
    h, f = json.loads(healthy.output), json.loads(failed.output)
    assert f["connected"] and f["time"] > h["time"]
