"""Unit slips at the boundary (h333): a bare number is SI, so ``--tbt 50`` was 50 s and
``fabric.bandwidth=100`` 100 B/s; both ran (the second 'nothing feasible', exit 3) and no
table showed the SLO. Now each quantity has a plausible range (compute/data/limits.toml
``[quantity]``) checked where it is read, refused in one line naming the value as read, the
range and, for a bare number, the unit it was likely meant in; compare's and cost's blocks
name the SLO they searched under.
"""

from __future__ import annotations

import re

import pytest

from compute.errors import UserError
from compute.phases import Slo
from compute.validate import limits
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.registry import build

COMPARE = ["compare", "--models", "Llama-3-70B", "--scenarios", "h100-dgx", "-q"]
COST = ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-70B"]
SWEEP = ["sweep", "--scenarios", "lite-flat", "-q", "--no-plot"]

TBT = "outside the 1 us to 10 s allowed for a decode SLO (TBT, time between tokens)"
TTFT = "outside the 1 us to 600 s allowed for a prefill SLO (TTFT, time to first token)"
LATENCY = "outside the 0 to 1 ms allowed for a fabric's switch or link latency"
LINK = "outside the 125 kB/s to 1 PB/s allowed for a fabric's link or per-GPU bandwidth " \
       "(per direction)"


def test_the_ranges_are_the_data_files():
    q = limits("quantity")
    assert (q["ttft"].minimum, q["ttft"].maximum) == (1e-6, 600)
    assert (q["tbt"].minimum, q["tbt"].maximum) == (1e-6, 10)
    assert (q["link_bandwidth"].minimum, q["link_bandwidth"].maximum) == (125e3, 1e15)
    assert (q["link_latency"].minimum, q["link_latency"].maximum) == (0, 1e-3)
    assert all(r.why and r.label and r.hints for r in q.values())


@pytest.mark.parametrize("args, line", [
    (COMPARE + ["--phases", "decode", "--tbt", "50"],
     f"error: --tbt 50 was read as 50 s, {TBT}; write 50ms for milliseconds"),
    (COST + ["--phase", "prefill", "--ttft", "1000"],
     f"error: --ttft 1000 was read as 1000 s, {TTFT}; write 1000ms for milliseconds"),
    (COST + ["--phase", "decode", "--tbt", "50s"],       # a unit typed: no slip to name
     f"error: --tbt 50s is 50 s, {TBT}"),
    (COMPARE + ["--phases", "decode", "--tbt", "0.5us"],
     f"error: --tbt 0.5us is 500 ns, {TBT}"),
    (["search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tbt", "10.5"],
     f"error: --tbt 10.5 was read as 10.5 s, {TBT}; write 10.5ms for milliseconds"),
    # a value of --param or --fabric said with its flag and text too (h502)
    (SWEEP + ["--param", "fabric.bandwidth=100"],
     f"error: --param 'fabric.bandwidth=100': fabric.bandwidth 100 was read as 100 B/s, {LINK}; write 100GB/s for gigabytes "
     f"per second"),
    (SWEEP + ["--param", "fabric.bandwidth=100kB/s:10GB/s"],
     f"error: --param 'fabric.bandwidth=100kB/s:10GB/s': fabric.bandwidth 100kB/s is 100 kB/s, "
     f"{LINK}"),
    (SWEEP + ["--param", "fabric.bandwidth=2000TB/s"],
     f"error: --param 'fabric.bandwidth=2000TB/s': fabric.bandwidth 2000TB/s is 2 PB/s, {LINK}"),
    (["collective", "all-reduce", "--fabric", "single-switch:n=8,bandwidth=100", "--size", "8M"],
     f"error: --fabric 'single-switch:n=8,bandwidth=100': single-switch: bandwidth 100 B/s, "
     f"{LINK}; a number is in B/s: for 100 GB/s give 1e+11"),
    (SWEEP + ["--param", "fabric.latency=330"],
     f"error: --param 'fabric.latency=330': fabric.latency 330 was read as 330 s, {LATENCY}; "
     f"write 330ns for nanoseconds"),
    (["collective", "all-reduce", "--fabric", "flat:n=8,latency=330", "--size", "8M"],
     f"error: --fabric 'flat:n=8,latency=330': flat: latency 330 s, {LATENCY}; a number is in "
     f"s: for 330 ns give 3.3e-07"),
    # 2 ms: no hint ('0.002 ns' is no number anyone meant)
    (["collective", "all-reduce", "--fabric", "flat:n=8,latency=2ms", "--size", "8M"],
     f"error: --fabric 'flat:n=8,latency=2ms': flat: latency 2 ms, {LATENCY}"),
], ids=["compare-tbt", "cost-ttft", "cost-tbt-unit", "compare-tbt-low", "search-tbt",
        "sweep-bare", "sweep-low", "sweep-high", "fabric-spec", "sweep-latency",
        "spec-latency", "spec-latency-unit"])
def test_a_slip_is_refused_in_one_line(args, line):
    assert one_line_error(run_cli(args)) == line


def test_a_scenario_file_bandwidth_is_refused_naming_the_builder(tmp_path):
    f = tmp_path / "slow.toml"   # lite-flat with its bandwidth a bare TOML number
    shown = run_cli(["compare", "--show", "lite-flat"]).output
    assert shown.count('bandwidth = "$scaleup"') == 1
    f.write_text(shown.replace('bandwidth = "$scaleup"', "bandwidth = 100"))
    line = one_line_error(run_cli(["compare", "--models", "Llama-3-8B", "--scenarios", f, "-q"]))
    assert line.endswith(f"flat: bandwidth 100 B/s, {LINK}; a number is in B/s: for 100 GB/s "
                         f"give 1e+11"), line


def test_nothing_is_written_when_refused(tmp_path):
    out = tmp_path / "out"
    one_line_error(run_cli(COMPARE + ["--phases", "decode", "--tbt", "50", "--out", out]))
    assert not out.exists()


def test_the_library_names_the_parameter_and_the_si_value():
    with pytest.raises(UserError) as e:
        Slo(tbt=50)
    assert str(e.value) == f"tbt SLO 50 s, {TBT}; a number is in s: for 50 ms give 0.05"
    with pytest.raises(UserError, match="^ttft SLO 100 ns, " + re.escape(TTFT) + "$"):
        Slo(ttft=1e-7)
    with pytest.raises(UserError) as e:   # 2 PB/s: above, so no unit to name
        build("single-switch", {"n": 4, "bandwidth": 2e15})
    assert str(e.value) == f"single-switch: bandwidth 2 PB/s, {LINK}"


def test_the_bounds_themselves_are_taken():
    q = limits("quantity")   # the data file's bounds, inclusive
    assert Slo(ttft=q["ttft"].minimum, tbt=q["tbt"].minimum).limit("decode") == 1e-6
    assert Slo(ttft=q["ttft"].maximum, tbt=q["tbt"].maximum).limit("prefill") == 600.0
    for bw in (q["link_bandwidth"].minimum, q["link_bandwidth"].maximum):
        g = build("single-switch", {"n": 4, "bandwidth": bw})
        assert g.edges["nvs0", "gpu0"]["bandwidth"] == bw
    for lat in (q["link_latency"].minimum, q["link_latency"].maximum):
        assert build("flat", {"n": 4, "latency": lat}).nodes["plane0"]["latency"] == lat
    r = run_cli(COMPARE + ["--phases", "decode", "--tbt", "10s"])
    assert r.exit_code == 0, r.output
    r = run_cli(COMPARE + ["--phases", "decode", "--tbt", "1us"])   # nothing meets it
    assert r.exit_code == 3, r.output
    r = run_cli(SWEEP + ["--param", "fabric.bandwidth=8Gb/s,100TB/s"])
    assert r.exit_code == 0, r.output


def test_compare_and_cost_name_the_slo_they_searched_under():
    r = run_cli(COMPARE + ["--phases", "both", "--ttft", "2s", "--tbt", "40ms"])
    assert r.exit_code == 0, r.output
    heads = [ln for ln in r.output.splitlines() if ln.endswith("Llama-3-70B")
             or "Llama-3-70B (" in ln and not ln.startswith(" ")]
    assert heads == ["prefill Llama-3-70B (TTFT <= 2 s)", "decode Llama-3-70B (TBT <= 40 ms)"]
    r = run_cli(COST + ["--phase", "decode", "--tbt", "40ms"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].startswith(
        "h100-dgx@H100-SXM, Llama-3-70B, decode (TBT <= 40 ms) 32 x H100-SXM; TP "), r.output
    r = run_cli(COST + ["--phase", "prefill", "--ttft", "1us"])
    assert r.exit_code == 3, r.output
    assert r.output.splitlines()[0] == ("h100-dgx@H100-SXM, Llama-3-70B, prefill (TTFT <= 1 us) "
                                        "32 x H100-SXM; nothing feasible under TTFT <= 1 us")


def test_a_fabric_on_any_gpu_a_file_may_describe_builds(tmp_path):
    # the link range spans what a GPU file may give (limits.toml [gpu]): its NIC floor of
    # 1 Mb/s and its scale-up ceiling of 1 PB/s; a GPU derived at 1/64
    # of an H100 (NIC 50 GB/s / 64 = 781.25 MB/s) was refused on a fabric whose bandwidths
    # the user never typed: 'rail-optimized: nic_bandwidth 781.2 MB/s, outside the 1 GB/s ...'
    from compute.hardware import get_gpu
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_fabric import build_fabric

    g, q = limits("gpu"), limits("quantity")["link_bandwidth"]
    assert q.minimum == g["scaleout_Gbps"].minimum * 1e9 / 8
    assert q.maximum == g["scaleup_GBps_per_direction"].maximum * 1e9
    path = tmp_path / "tiny.toml"
    path.write_text('[gpu."Tiny64"]\nderive_from = "H100-SXM"\nfraction = 0.015625\n'
                    'max_instance = 8\nsource = "test: 1/64 of an H100"\n')
    graph = build_fabric(get_scenario(f"h100-dgx@{path}"))
    nic = get_gpu("H100-SXM").scaleout_bandwidth / 64
    assert nic == 781.25e6
    assert min(d["bandwidth"] for *_, d in graph.edges(data=True)) == nic
