"""Fabric-aware search and `netmodel compare`: ideal-fabric equivalence, hand-derived
collective costs, monotonicity properties, outputs and bad input."""

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.comm import NoCommunication
from compute.hardware import get_gpu
from compute.models import get_model
from compute.output_paths import MANIFEST
from compute.search import search
from compute.sharding import valid_tp_degrees
from netmodel.cli.main import cli
from netmodel.study.compare import COMPARE_COLUMNS, run_compare, write_compare
from netmodel.study.fabric_search import fabric_search
from netmodel.study.scenario_catalog import get_scenario, scenario_names
from netmodel.study.scenario_collectives import ScenarioCollectives


def ideal(name):
    """The scenario with zero latency everywhere, effectively unlimited bandwidth and the
    textbook (alpha = 0) collective model."""
    s = get_scenario(name)
    s = s.with_param("adjust.latency_scale", 0.0).with_param("adjust.bandwidth_scale", 1e12)
    return s.__class__(**{**s.__dict__, "calibration": "ideal"})


@pytest.mark.parametrize("name", scenario_names())
@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_ideal_fabric_equals_no_communication(name, phase):
    s = ideal(name)
    model, gpu = get_model("Llama-3-70B"), get_gpu(s.gpu)
    got = fabric_search(model, s, phase, keep_grid=True)
    want = search(model, gpu, phase, comm=NoCommunication(),
                  tp=valid_tp_degrees(model, gpu.max_instance))
    # the whole grid agrees (the best may then differ only between exact ties)
    assert got.search.tp_degrees == want.tp_degrees
    np.testing.assert_allclose(got.search.grid.latency, want.grid.latency, rtol=1e-9)
    assert np.array_equal(got.search.grid.feasible, want.grid.feasible)
    assert got.best.tokens_per_s_per_sm == pytest.approx(want.best.tokens_per_s_per_sm,
                                                         rel=1e-9)
    assert got.best.time_split()["network"] == pytest.approx(0.0, abs=1e-12)


def test_hand_derived_ring_cost_on_the_flat_fabric():
    # alpha = 0 and zero latency: the cheapest all-reduce among p Lites of 112.5 GB/s is the
    # bandwidth-optimal 2(p-1)/p n / B (ring or Rabenseifner); all-gather (p-1)/p n / B.
    s = get_scenario("lite-flat").with_param("adjust.latency_scale", 0.0)
    s = s.__class__(**{**s.__dict__, "calibration": "ideal"})
    c = ScenarioCollectives(s)
    n = np.array([1e6, 1e8])
    for p in (2, 8, 32):
        assert c.collective_time("all-reduce", n, p) == pytest.approx(2 * (p - 1) / p * n
                                                                      / 112.5e9)
        assert c.collective_time("all-gather", n, p) == pytest.approx((p - 1) / p * n
                                                                      / 112.5e9)


def test_collectives_match_the_fabric_model_and_the_search_uses_them():
    c = ScenarioCollectives("lite-hier")
    n = np.geomspace(1e3, 1e9, 7)
    for p in (2, 16, 32):
        direct = c.model(p).collective_time("all-reduce", n, p)
        assert np.array_equal(c.collective_time("all-reduce", n, p), direct)
    r = fabric_search("Llama-3-70B", "lite-hier", "decode", collectives=c)
    stage = next(s for s in r.best.stages if s.name == "allreduce_mlp")
    assert stage.network_time == pytest.approx(
        float(c.collective_time("all-reduce", stage.collective_bytes, r.best.tp)))
    assert len(r.group) == r.best.tp


def test_tp32_across_leaves_costs_more_than_inside_one_switch():
    flat, hier = ScenarioCollectives("lite-flat"), ScenarioCollectives("lite-hier")
    n = np.array([1e4, 1e6, 1e8])
    # up to 16 Lites an instance sits in one leaf: the same path as on a flat plane
    assert np.allclose(flat.collective_time("all-reduce", n, 16),
                       hier.collective_time("all-reduce", n, 16))
    # 32 Lites span two leaves: the spine adds hops and latency
    assert np.all(hier.collective_time("all-reduce", n, 32)
                  > flat.collective_time("all-reduce", n, 32))


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(scenario_names()),
       model=st.sampled_from(["Llama-3-8B", "Llama-3-70B"]),
       lo=st.floats(0.0, 5e-6), extra=st.floats(1e-8, 2e-5))
def test_more_hop_latency_never_gives_more_decode_throughput(name, model, lo, extra):
    s = get_scenario(name)
    a = fabric_search(model, s.with_param("adjust.hop_latency", lo), "decode").best
    b = fabric_search(model, s.with_param("adjust.hop_latency", lo + extra), "decode").best
    if a is None:
        assert b is None
    elif b is not None:
        assert b.tokens_per_s_per_sm <= a.tokens_per_s_per_sm * (1 + 1e-12)


@settings(max_examples=8, deadline=None)
@given(name=st.sampled_from(scenario_names()), scale=st.floats(1.01, 8.0))
def test_more_bandwidth_never_gives_less_decode_throughput(name, scale):
    s = get_scenario(name)
    a = fabric_search("Llama-3-70B", s, "decode").best
    b = fabric_search("Llama-3-70B", s.with_param("adjust.bandwidth_scale", scale),
                      "decode").best
    assert b.tokens_per_s_per_sm >= a.tokens_per_s_per_sm * (1 - 1e-12)


@pytest.fixture(scope="module")
def small():
    return run_compare(["Llama-3-70B"], ["h100-dgx", "lite-flat", "lite-flat-inr", "lite-ocs"],
                       ["prefill", "decode"])


def test_rows_and_relations(small):
    assert len(small.rows) == 1 * 4 * 2
    assert small.baseline == "h100-dgx@H100-SXM"
    for r in small.rows:
        assert r.feasible
        assert r.compute_s + r.memory_s + r.network_s == pytest.approx(r.latency_s)
        assert 0 <= r.network_share <= 1
        assert r.vs_ideal <= 1 + 1e-12  # a fabric never beats free collectives
        assert r.latency_s <= r.latency_limit_s
        base = small.row(r.model, small.baseline, r.phase)
        assert r.vs_baseline == pytest.approx(r.tokens_per_s_per_sm / base.tokens_per_s_per_sm)
    for phase in ("prefill", "decode"):
        # in-network reduction only adds a choice to the same fabric: never slower
        inr = small.row("Llama-3-70B", "lite-flat-inr@Lite", phase)
        flat = small.row("Llama-3-70B", "lite-flat@Lite", phase)
        assert inr.tokens_per_s_per_sm >= flat.tokens_per_s_per_sm * (1 - 1e-12)
        assert small.row("Llama-3-70B", "lite-ocs@Lite", phase).reconfiguration_s == 0.010
        assert flat.reconfiguration_s == 0.0


def test_write_compare(tmp_path, small):
    written = write_compare(small, tmp_path / "o")
    names = sorted(p.name for p in written)
    assert names == ["compare.csv", "compare.json", "compare_time_split.png",
                     "compare_tokens_per_sm.png"]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == sorted([*names, MANIFEST])
    rows = list(csv.DictReader((tmp_path / "o" / "compare.csv").open()))
    assert tuple(rows[0]) == COMPARE_COLUMNS and len(rows) == 8
    d = json.loads((tmp_path / "o" / "compare.json").read_text())
    assert d["baseline"] == "h100-dgx@H100-SXM" and len(d["scenarios"]) == 4
    assert d["scenarios"][1]["fabric"].startswith("flat:n=128")


def test_cli_compare_end_to_end(tmp_path):
    out = tmp_path / "cmp"
    r = CliRunner().invoke(cli, ["compare", "--models", "Llama-3-8B", "--scenarios",
                                 "h100-dgx,lite-flat@Lite+BW,lite-hier", "--phase", "decode",
                                 "--out", str(out), "--no-plot"])
    assert r.exit_code == 0, r.output
    assert "lite-flat@Lite+BW" in r.output and "vs h100-dgx" in r.output
    assert sorted(p.name for p in out.iterdir()) == ["compare.csv", "compare.json", MANIFEST]
    d = json.loads((out / "compare.json").read_text())
    assert [row["label"] for row in d["rows"]] == ["h100-dgx@H100-SXM", "lite-flat@Lite+BW",
                                                   "lite-hier@Lite"]
    assert all(row["phase"] == "decode" for row in d["rows"])
    base = d["rows"][0]["tokens_per_s_per_sm"]
    for row in d["rows"]:
        assert row["vs_baseline"] == pytest.approx(row["tokens_per_s_per_sm"] / base)


def test_cli_compare_gpu_override_and_user_scenario_file(tmp_path):
    shown = CliRunner().invoke(cli, ["compare", "--show", "lite-flat"])
    assert shown.exit_code == 0
    mine = tmp_path / "mine.toml"
    mine.write_text(shown.output.replace('name = "lite-flat"', 'name = "my-flat"')
                    .replace('latency = "330ns"', 'latency = "5us"'))
    out = tmp_path / "o"
    r = CliRunner().invoke(cli, ["compare", "--models", "Llama-3-70B", "--scenarios",
                                 f"lite-flat,{mine}", "--gpus", "Lite,Lite+NetBW",
                                 "--phase", "decode", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    rows = {row["label"]: row for row in json.loads(r.output)["rows"]}
    assert set(rows) == {"lite-flat@Lite", "lite-flat@Lite+NetBW", "my-flat@Lite",
                         "my-flat@Lite+NetBW"}
    for gpu in ("Lite", "Lite+NetBW"):  # slower switches never help
        assert rows[f"my-flat@{gpu}"]["tokens_per_s_per_sm"] \
            <= rows[f"lite-flat@{gpu}"]["tokens_per_s_per_sm"]
    listed = CliRunner().invoke(cli, ["compare", "--list"])
    assert listed.exit_code == 0 and len(listed.output.splitlines()) == 6


@pytest.mark.parametrize("args, needle", [
    (["--scenarios", "lite-fast"], "unknown scenario 'lite-fast'; known: 'h100-dgx'"),
    (["--models", "Llama-9"], "unknown model 'Llama-9'"),
    (["--scenarios", "lite-flat@H900"], "unknown GPU 'H900'"),
    (["--phase", "training"], "unknown phase 'training'"),
    (["--tbt", "-1ms"], "--tbt"),
    (["--scenarios", "BADFILE"], "unknown key(s) colour"),
    (["--scenarios", "MISSINGFILE"], "missing key(s) links"),
])
def test_cli_compare_bad_input(tmp_path, args, needle):
    bad = tmp_path / "bad.toml"
    text = get_scenario("lite-flat").to_toml()
    bad.write_text(text.replace('gpu = "Lite"', 'gpu = "Lite"\ncolour = "red"', 1))
    missing = tmp_path / "missing.toml"
    missing.write_text(text.replace('links = "scale-up"\n', ''))
    args = [str(bad) if a == "BADFILE" else str(missing) if a == "MISSINGFILE" else a
            for a in args]
    out = tmp_path / "o"
    phase = [] if "--phase" in args else ["--phase", "decode"]   # an option is given once
    r = CliRunner().invoke(cli, ["compare", "--out", str(out), *phase,
                                 "--models", "Llama-3-8B", *args] if "--models" not in args
                           else ["compare", "--out", str(out), *args])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]
    assert not out.exists()


def test_two_different_models_of_one_name_are_refused_not_compared_to_each_other():
    # Two HuggingFace config files in one folder both took the folder's name: the rows of
    # Qwen3-8B were divided by Qwen3-30B-A3B's baseline row (decode '0.89x', prefill
    # '0.42x' on h100-dgx, the only scenario). The same model twice is kept once.
    from dataclasses import replace

    from compute.errors import UserError
    from compute.models import get_model
    from netmodel.study.compare import run_compare

    small, big = (replace(get_model(n), name="hf_families") for n in ("Llama-3-8B",
                                                                      "Llama-3-70B"))
    with pytest.raises(UserError, match="two different models are named 'hf_families'"):
        run_compare([small, big], ["h100-dgx"], ["decode"])


def test_sweep_refuses_two_different_models_of_one_name_too():
    # sweep keys its rows by model name as compare does (found by the docs walkthrough: two
    # models named 'a' ran and gave rows that could not be told apart)
    from dataclasses import replace

    from compute.errors import UserError
    from compute.models import get_model
    from netmodel.study.sweep import parse_param, run_sweep

    a, b = (replace(get_model(n), name="a") for n in ("Llama-3-8B", "Llama-3-70B"))
    with pytest.raises(UserError, match="two different models are named 'a'"):
        run_sweep(["h100-dgx"], [parse_param("adjust.hop_latency=0.1us,1us", ["h100-dgx"])],
                  [a, b],
                  ["decode"])


def test_compare_table_names_configurations_beyond_tp():
    # the tp column alone read a TP 16 x PP 2 x DP-attention 2 row (32 GPUs) as 16 GPUs;
    # each block now names its configurations beyond plain TP, and a plain-TP block adds
    # nothing
    from netmodel.study.compare import run_compare

    t = run_compare(["Llama-3-70B"], ["lite-flat"], ["decode"], parallelism="all").table()
    assert "beyond TP: lite-flat@Lite TP 16 x PP 2 x DP-attention 2 (32 GPUs)" in t, t
    assert "beyond TP" not in run_compare(["Llama-3-70B"], ["lite-flat"], ["decode"]).table()
