"""The Python API: names or objects, one answer; the documented example runs."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu
from compute.models import get_model
from netmodel.study.scenario_collectives import ScenarioCollectives

ROOT = Path(__file__).resolve().parent.parent


def test_example_script_runs(capsys):
    runpy.run_path(str(ROOT / "scripts" / "example_api.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "lite-flat@Lite-2xHBM" in out and "tokens/s/SM" in out


def test_the_example_on_api_md_runs(tmp_path, monkeypatch):
    """docs/api.md's own code block (not only scripts/example_api.py) runs as printed, and
    what it computes holds together: an all-reduce takes longer the larger it is, the
    search's TP divides Llama-3-70B's 64 heads, and the GPU file it writes is the one compare
    runs."""
    import re

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(), re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)                    # it writes lite_plus.toml where it runs
    scope: dict = {"__name__": "api_md"}
    exec(compile(blocks[0], "docs/api.md", "exec"), scope)
    assert scope["seconds"].shape == (3,) and np.all(np.diff(scope["seconds"]) > 0)
    assert 64 % scope["best"].tp == 0 and scope["own"].rows[0].label == "lite-flat@Lite-2xHBM"


def test_collective_time_keeps_the_shape_of_any_sizes_array():
    """api.md: 'seconds as a numpy array of `sizes`' shape'. A 2-D array on a fabric raised
    TypeError (only integer scalar arrays can be converted to a scalar index) from the cost
    model, where a scenario already answered it. Each cell is the time of that size alone."""
    sizes = np.array([[1e3, 1e6], [1e8, 1e9]])
    for fabric in ("single-switch:n=8", "lite-flat"):
        grid = netmodel.collective_time(fabric, "all-reduce", sizes, 8)
        flat = netmodel.collective_time(fabric, "all-reduce", sizes.ravel(), 8)
        assert grid.shape == (2, 2) and np.array_equal(grid.ravel(), flat)
        assert [float(netmodel.collective_time(fabric, "all-reduce", x, 8))
                for x in sizes.ravel()] == list(flat)
        assert netmodel.collective_time(fabric, "all-reduce", 1e6, 8).shape == ()


def test_a_phase_that_never_reads_prompt_or_context_refuses_it():
    """infer and search refuse --prompt in decode and --context in prefill (compute.md);
    evaluate and search took them and ran at the defaults: a decode 'at prompt 9000' was
    the 1513-token step (context_tokens 1513), a prefill 'at context 9000' the
    1500-token one."""
    runs = [lambda: netmodel.evaluate("Llama-3-8B", "H100-SXM", "decode", tp=1, batch=8,
                                      prompt=9000),
            lambda: netmodel.search("Llama-3-8B", "H100-SXM", "decode", prompt=9000,
                                    max_batch=8),
            lambda: netmodel.search("Llama-3-8B", phase="decode", scenario="h100-dgx",
                                    prompt=9000, max_batch=8)]
    for run in runs:
        with pytest.raises(UserError, match=r"prompt 9000 sets a prefill's prompt; with "
                                            r"phase 'decode' give context"):
            run()
    with pytest.raises(UserError, match=r"context 9000 sets a decode step's context"):
        netmodel.evaluate("Llama-3-8B", "H100-SXM", "prefill", tp=1, batch=1, context=9000)
    # each phase's own input is read: a longer context is a slower decode step
    short = netmodel.evaluate("Llama-3-8B", "H100-SXM", "decode", tp=1, batch=8)
    long = netmodel.evaluate("Llama-3-8B", "H100-SXM", "decode", tp=1, batch=8, context=8000)
    assert long.context_tokens == 8000 and long.latency > short.latency


def test_compare_and_sweep_refuse_a_prompt_or_context_no_phase_reads():
    """compare and sweep took prompt with decode alone and context with prefill alone and
    ran at the defaults, where evaluate and search refuse them (620ba8b) and the command
    line has no such option."""
    sweep = dict(scenarios=["h100-dgx"], params=["fabric.domains=2,4"], models=["Llama-3-8B"],
                 max_batch=8)
    for run in (lambda **kw: netmodel.compare(["Llama-3-8B"], ["h100-dgx"], max_batch=8, **kw),
                lambda **kw: netmodel.sweep(**sweep, **kw)):
        with pytest.raises(UserError, match=r"^prompt 9000 sets a prefill's prompt; with "
                                            r"phases 'decode' give context"):
            run(phases=["decode"], prompt=9000)
        with pytest.raises(UserError, match=r"^context 9000 sets a decode step's context .*"
                                            r"with phases 'prefill' give prompt"):
            run(phases=("prefill",), context=9000)
    # a phase that reads it takes it: the prefill rows run at prompt 3000
    r = netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["prefill", "decode"], prompt=3000,
                         max_batch=8)
    assert {row.phase for row in r.rows} == {"prefill", "decode"}
    assert r.settings["prompt_tokens"] == 3000


def test_build_fabric_takes_dashed_keys_as_a_spec_string_does():
    g = netmodel.build_fabric("single-switch", {"n": 2, "in-network-reduction": False})
    assert g.graph["spec"] == netmodel.build_fabric("single-switch:n=2,in-network-reduction=false"
                                                    ).graph["spec"]
    assert g.nodes["nvs0"]["in_network_reduction"] is False


def test_import_netmodel_is_light():
    code = ("import sys, netmodel; bad = [m for m in ('matplotlib', 'scipy', 'networkx', "
            "'numpy', 'dask') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "[]"


def test_names_and_objects_give_the_same_answer():
    by_name = netmodel.search("Llama-3-8B", "H100-SXM", "decode", max_batch=32)
    by_object = netmodel.search(get_model("Llama-3-8B"), get_gpu("H100-SXM"), "decode",
                                max_batch=32)
    assert by_name.best == by_object.best


def test_plain_function_comm_equals_object_comm():
    ring = netmodel.search("Llama-3-70B", "H100-SXM", "decode", max_batch=64).best
    from compute.roofline import default_comm

    obj = default_comm(get_gpu("H100-SXM"))
    as_function = netmodel.search("Llama-3-70B", "H100-SXM", "decode", max_batch=64,
                                  comm=obj.collective_time).best
    assert as_function == ring


def test_scenario_search_costs_collectives_like_compare():
    # the same configuration gets the same collective time from every entry point
    r = netmodel.search("Llama-3-70B", phase="decode", scenario="lite-flat")
    row = netmodel.compare(["Llama-3-70B"], ["lite-flat"], ["decode"]).rows[0]
    assert (r.best.tp, r.best.batch, r.best.latency) == (row.tp, row.batch, row.latency_s)
    ev = netmodel.evaluate("Llama-3-70B", phase="decode", tp=row.tp, batch=row.batch,
                           scenario="lite-flat")
    assert ev.latency == pytest.approx(row.latency_s, rel=1e-12)


def test_collective_time_on_a_scenario_matches_its_collectives():
    sizes = np.array([1e3, 1e6, 1e9])
    t = netmodel.collective_time("lite-flat", "all-reduce", sizes, 16)
    ref = ScenarioCollectives("lite-flat").collective_time("all-reduce", sizes, 16)
    np.testing.assert_array_equal(t, ref)
    assert t.shape == (3,) and np.all(np.diff(t) > 0)


def test_a_users_gpu_object_runs_on_a_fabric():
    mine = derive_gpu(get_gpu("Lite"), "Mine", hbm_bandwidth_multiplier=2.0)
    row = netmodel.compare(["Llama-3-8B"], ["lite-flat"], ["decode"], gpus=[mine]).rows[0]
    assert row.label == "lite-flat@Mine" and row.feasible


@pytest.mark.parametrize("call, needle", [
    (lambda: netmodel.search("Llama-3-8B", phase="decode"), "give gpu"),
    (lambda: netmodel.search("Llama-3-8B", "H100-SXM", comm=3), "comm must be"),
    (lambda: netmodel.build_fabric(("ring",)), "(builder, parameters)"),
    (lambda: netmodel.collective_time("single-switch:n=8", "all-reduce", -1.0, 8), "> 0"),
])
def test_bad_calls_are_user_errors(call, needle):
    with pytest.raises(UserError, match=None) as err:
        call()
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_api_reaches_beyond_tensor_parallelism():
    # evaluate() takes pp, ep, attention_dp and expert_skew as compute's evaluate does
    from compute.evaluate_one import evaluate as compute_evaluate

    kw = dict(pp=1, ep=8, attention_dp=2, expert_skew=1.5)
    a = netmodel.evaluate("Mixtral-8x7B", "H100-SXM", "decode", tp=8, batch=64, **kw)
    b = compute_evaluate("Mixtral-8x7B", "H100-SXM", 8, 64, "decode", **kw)
    assert (a.ep, a.attention_dp, a.latency) == (8, 2, b.latency)
    # search(): parallelism as compare takes it; on a GPU alone, instances up to its
    # largest one. A mixture of experts gets EP and attention DP under "auto", not "tp"
    auto = netmodel.search("Mixtral-8x7B", "H100-SXM", "decode", max_batch=256)
    plain = netmodel.search("Mixtral-8x7B", "H100-SXM", "decode", max_batch=256,
                            parallelism="tp")
    assert {c["ep"] for c in plain.configurations} == {1}
    assert max(c["ep"] for c in auto.configurations) == 8
    assert auto.best.tokens_per_s_per_sm >= plain.best.tokens_per_s_per_sm
    with pytest.raises(UserError, match="parallelism 'pipes' is unknown"):
        netmodel.search("Mixtral-8x7B", "H100-SXM", "decode", parallelism="pipes")


def test_evaluate_on_a_scenario_refuses_an_instance_larger_than_the_fabric():
    # named as the CLI's infer names it, not by the first collective's group size
    with pytest.raises(UserError, match=r"an instance of 64 GPUs \(TP 64 x PP 1\) does not "
                                        r"fit scenario 'h100-dgx@H100-SXM' \(32 GPUs\)"):
        netmodel.evaluate("Mixtral-8x7B", phase="decode", tp=64, ep=8, attention_dp=8,
                          batch=8, scenario="h100-dgx")
    with pytest.raises(UserError, match=r"48 GPUs \(TP 8 x PP 6\)"):
        netmodel.evaluate("Llama-3-70B", phase="decode", tp=8, pp=6, batch=8,
                          scenario="h100-dgx")
    assert netmodel.evaluate("Llama-3-70B", phase="decode", tp=8, pp=4, batch=8,
                             scenario="h100-dgx").gpus == 32


def test_a_scenarios_fabric_is_the_callers_to_change():
    # build_fabric(scenario) handed out the graph the library keeps per scenario: removing
    # a spine from it (a failure study) changed what the library then costs, e.g.
    # cost_summary("h100-dgx", ...).capex_network 422,976 -> 365,760 USD
    from netmodel.study.scenario_fabric import build_fabric as library_fabric

    scen = netmodel.get_scenario("h100-dgx")
    mine = netmodel.build_fabric(scen)
    assert mine is not library_fabric(scen)
    mine.remove_node("spine3")
    assert "spine3" in library_fabric(scen) and "spine3" in netmodel.build_fabric(scen)
    # and a scenario's name works as in collective_time (it was an unknown builder)
    by_name = netmodel.build_fabric("h100-dgx")
    assert by_name.graph["gpus"] == 32 and set(by_name) == set(library_fabric(scen))


@pytest.mark.parametrize("group", ["gpu0", "8", 8.0])
def test_collective_time_refuses_a_group_that_is_neither_size_nor_nodes(group):
    # a string was split into characters: 'gpu0' gave "group member 'g' is not a node"
    with pytest.raises(UserError, match=r"group must be a size \(int\) or a list of GPU "
                                        r"nodes, got " + repr(group)):
        netmodel.collective_time("single-switch:n=8", "all-reduce", 1e6, group)


def test_collective_time_on_a_scenario_refuses_options_it_would_ignore():
    """On a scenario, algorithm/placement/algorithms were dropped without a word:
    collective_time('h100-dgx', 'all-reduce', 1 GiB, 8, algorithm='ring') returned the NVLS
    time, 3.98 ms, not the ring's (helper 86)."""
    from netmodel.study.scenario_catalog import get_scenario

    size = 2.0 ** 30
    for kw in ({"algorithm": "ring"}, {"placement": "spread"}, {"algorithms": ["ring"]}):
        with pytest.raises(UserError, match="pass its fabric spec"):
            netmodel.collective_time("h100-dgx", "all-reduce", size, 8, **kw)
    # the scenario's own settings (and the defaults) still run
    auto = netmodel.collective_time("h100-dgx", "all-reduce", size, 8, algorithm="auto",
                                    placement="contiguous")
    assert float(auto) < 4.0e-3
    # the refusal's advice: the fabric spec takes them. Ring over one server's NVSwitch:
    # 14 steps of 1 GiB / 8 at 450 GB/s x 0.824, each 3.4 us + 150 ns + 2 x 2 m x 5 ns,
    # plus 8.4 us: 14 x (362.04 + 3.57) us + 8.4 us = 5.127 ms
    spec = get_scenario("h100-dgx").fabric_spec()
    ring = netmodel.collective_time(spec, "all-reduce", size, 8, algorithm="ring")
    step = size / 8 / (450e9 * 0.824) + 3.4e-6 + 150e-9 + 20e-9
    assert float(ring) == pytest.approx(14 * step + 8.4e-6, rel=1e-4)


def test_one_name_where_several_are_taken_is_one_item():
    # a string was iterated: compare("Llama-3-8B", ...) said "unknown model 'L'", phases
    # "decode" "unknown phase 'd'"
    one = netmodel.compare("Llama-3-8B", "h100-dgx", "decode", max_batch=8)
    listed = netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["decode"], max_batch=8)
    assert one.rows == listed.rows and len(one.rows) == 1
    swept = netmodel.sweep("lite-flat", "adjust.hop_latency=100ns:2us", "Llama-3-8B",
                           "decode", points=2)
    assert len(swept.to_dicts()) == 2


def test_evaluate_on_a_scenario_names_a_numpy_instance_as_an_int_one():
    # np.int64(64) skipped the check: "group size 64 is larger than the fabric's 32 GPUs"
    with pytest.raises(UserError, match=r"an instance of 64 GPUs \(TP 64 x PP 1\) does not "
                                        r"fit scenario 'h100-dgx@H100-SXM' \(32 GPUs\)"):
        netmodel.evaluate("Mixtral-8x7B", phase="decode", tp=np.int64(64), ep=8,
                          attention_dp=8, batch=8, scenario="h100-dgx")


def test_evaluate_on_a_scenario_takes_a_changed_gpu_of_the_scenarios_name():
    # a GpuSpec named like the scenario's GPU was swapped in only when its name differed:
    # H100-SXM at twice the HBM bandwidth on h100-dgx gave the catalog H100's 16.208 ms
    # (TP 4, batch 64) while search and compare used it
    import dataclasses

    h100 = get_gpu("H100-SXM")
    mine = dataclasses.replace(h100, hbm_bandwidth=2 * h100.hbm_bandwidth)
    kw = dict(phase="decode", tp=4, batch=64, scenario="h100-dgx")
    base = netmodel.evaluate("Llama-3-70B", h100, **kw)
    faster = netmodel.evaluate("Llama-3-70B", mine, **kw)
    assert faster.latency < base.latency
    best = netmodel.search("Llama-3-70B", mine, "decode", scenario="h100-dgx").best
    again = netmodel.evaluate("Llama-3-70B", mine, phase="decode", tp=best.tp,
                              batch=best.batch, scenario="h100-dgx")
    assert again.latency == pytest.approx(best.latency, rel=1e-12)


@pytest.mark.parametrize("points", [0, -3, 2.5, True, "7"])
def test_sweep_refuses_points_that_are_not_a_whole_number_of_values(points):
    # Before, sweep(..., points=0) and points=-3 ran one point (LO alone), points=2.5 a
    # numpy TypeError; the command line refused --points 0 in one line.
    with pytest.raises(UserError, match=r"^points must be a whole number >= 1") as err:
        netmodel.sweep(["lite-flat"], ["adjust.hop_latency=1e-7:1e-6"], points=points)
    assert "--" not in str(err.value)


@pytest.mark.parametrize("call", [
    lambda: netmodel.search("Llama-3-8B", "H100-SXM", "decode", slo=0.05),
    lambda: netmodel.compare(["Llama-3-8B"], ["lite-flat"], ["decode"], slo=0.05),
    lambda: netmodel.sweep(["lite-flat"], ["adjust.hop_latency=1e-7:1e-6"], slo=0.05),
    lambda: netmodel.run_study(slo=0.05),
])
def test_an_slo_that_is_not_an_slo_is_one_line_naming_slo(call):
    # Before: AttributeError: 'float' object has no attribute 'limit'
    with pytest.raises(UserError, match=r"^slo must be a compute\.phases\.Slo .* got 0\.05$"):
        call()


@pytest.mark.parametrize("call", [
    lambda: netmodel.evaluate("Llama-3-8B", "H100-SXM", "decode", tp=1, batch=1,
                              options={"mode": "overlap"}),
    lambda: netmodel.search("Llama-3-8B", "H100-SXM", "decode", options={"mode": "overlap"}),
])
def test_options_that_are_not_roofline_options_are_one_line_naming_options(call):
    # Before: AttributeError: 'dict' object has no attribute 'profile' / 'compute_dtype'
    with pytest.raises(UserError, match=r"^options must be a compute\.roofline_options\.RooflineOptions"):
        call()


def test_an_slo_object_is_taken_as_before():
    from compute.phases import Slo

    r = netmodel.search("Llama-3-8B", "H100-SXM", "decode", slo=Slo(tbt=0.02), max_batch=64)
    assert r.best is not None and r.best.latency <= 0.02


@pytest.mark.parametrize("kw, message", [
    ({"parallelism": "x"}, "parallelism 'x' is unknown; known: 'all', 'auto', 'tp'"),
    ({"max_batch": 0}, "max_batch must be a whole number >= 1, got 0"),
])
def test_sweep_names_a_bad_setting_not_every_point_refused(kw, message):
    # Before: 'no point of the sweep can be built: parallelism 'x' is unknown ...', as if
    # the fabric had refused every point
    with pytest.raises(UserError) as err:
        netmodel.sweep(["lite-flat"], ["adjust.hop_latency=1e-7:1e-6"], points=2, **kw)
    assert str(err.value) == message
