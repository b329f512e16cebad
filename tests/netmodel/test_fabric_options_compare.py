"""Two-batch overlap (``--two-batch-overlap``) and data-parallel dense MLPs
(``--dense-mlp-tp 1``) in ``compare`` and ``sweep``: the fabric-aware search there costs
them as ``search --scenario`` does (the same configuration, the same latency to 1e-12).
The old code refused both options in compare and sweep ('options.two_batch_overlap is not
modelled by compare'), and neither command had the flags."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import netmodel
from compute.errors import UserError
from compute.roofline_options import RooflineOptions
from netmodel.cli.main import cli

TBO = ("--two-batch-overlap",)
DENSE = ("--dense-mlp-tp", "1")


def _json(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args], prog_name="netmodel")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("scenario,phase,flags", [
    ("h100-dgx", "prefill", TBO),
    ("lite-flat", "prefill", TBO + DENSE),
    ("h100-dgx", "decode", DENSE),
    ("lite-direct", "decode", TBO + DENSE),
])
def test_compare_row_is_search_on_the_scenario(scenario, phase, flags):
    found = _json("search", "--model", "DeepSeek-V3", "--scenario", scenario, "--phase", phase,
                  "--ep", "all", "--attention-dp", "all", "--max-batch", 256, *flags,
                  "--json")["best"]
    cmp = _json("compare", "--models", "DeepSeek-V3", "--scenarios", scenario, "--phase",
                phase, "--max-batch", 256, *flags, "--json", "-q")
    # the same workload (both commands' default prompt and context)
    assert (found["prompt_tokens"], found["context_tokens"]) == \
        (cmp["settings"]["prompt_tokens"], cmp["settings"]["context_tokens"])
    row = cmp["rows"][0]
    assert (row["tp"], row["ep"], row["attention_dp"], row["batch"]) == \
        (found["tp"], found["ep"], found["attention_dp"], found["batch"])
    assert row["latency_s"] == pytest.approx(found["latency_s"], rel=1e-12)
    assert row["tokens_per_s_per_sm"] == pytest.approx(found["tokens_per_s_per_sm"], rel=1e-12)
    if "--two-batch-overlap" in flags:
        assert cmp["settings"]["options"]["two_batch_overlap"] is True
    if "--dense-mlp-tp" in flags:
        assert cmp["settings"]["options"]["dense_mlp_tp"] == 1 and found["dense_mlp_tp"] == 1


def test_the_options_change_the_answer_and_the_split_still_sums():
    # DeepSeek-V3 prefill on h100-dgx: the overlap is taken (test_two_batch_not_wired), so
    # the row is faster than without it; its network_s is what the overlap leaves exposed
    on = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["prefill"],
                          options=RooflineOptions(two_batch_overlap=True))
    off = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["prefill"])
    r, b = on.rows[0], on.searches[0].best
    assert b.two_batch_hidden > 0 and r.latency_s < off.rows[0].latency_s
    assert r.compute_s + r.memory_s + r.network_s == pytest.approx(r.latency_s, rel=1e-12)
    split = b.time_split()
    assert r.network_s == pytest.approx(split["network"] - b.two_batch_hidden, rel=1e-12)
    assert 0 < r.network_share < split["network"] / b.latency
    assert "two-batch overlap taken: h100-dgx@H100-SXM DeepSeek-V3 prefill (" in on.table()
    assert "two-batch overlap" not in off.table()


@pytest.mark.parametrize("opts", [None, RooflineOptions(two_batch_overlap=True, dense_mlp_tp=1)],
                         ids=["default", "both"])
def test_sweep_point_is_compare_row(opts):
    # a sweep of the servers through h100-dgx's own (4 domains of 8): that point's row is
    # compare's. Without the options too: the sweep re-scored every point through
    # crossovers.AdjustedComm, which has no once-a-server MoE all-to-all, so its DeepSeek-V3
    # prefill took 0.913 s where compare's took 0.760 s
    sw = netmodel.sweep(["h100-dgx"], ["fabric.domains=2,4"], ["DeepSeek-V3"], ["prefill"],
                        options=opts, max_batch=128)
    cmp = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["prefill"], options=opts,
                           max_batch=128)
    row = cmp.rows[0]
    assert sw.settings["options"] == cmp.settings["options"]
    (point,) = [p for p in sw.rows if p.x == 4]
    assert (point.tp, point.ep, point.attention_dp, point.batch) == \
        (row.tp, row.ep, row.attention_dp, row.batch)
    assert point.latency_s == pytest.approx(row.latency_s, rel=1e-12)
    assert point.network_s == pytest.approx(row.network_s, rel=1e-12)


@pytest.mark.parametrize("param,own", [("adjust.hop_latency=0us,1us", 0.0),
                                       ("adjust.bandwidth_scale=1,2", 1.0)])
@pytest.mark.parametrize("model", ["DeepSeek-V3", "Mixtral-8x7B"])
def test_rescored_moe_prefill_point_is_compare_row(param, own, model):
    # hop latency and bandwidth scale re-score the base fabric's costs
    # (crossovers.AdjustedComm); an MoE prefill re-scored must pay the once-a-server
    # all-to-all compare pays (0aeeb8d), at the scenario's own value equal to its row
    sw = netmodel.sweep(["h100-dgx"], [param], [model], ["prefill"], max_batch=128)
    row = netmodel.compare([model], ["h100-dgx"], ["prefill"], max_batch=128).rows[0]
    (point,) = [p for p in sw.rows if p.x == own]
    assert (point.tp, point.ep, point.attention_dp, point.batch) == \
        (row.tp, row.ep, row.attention_dp, row.batch)
    assert point.latency_s == pytest.approx(row.latency_s, rel=1e-12)


@pytest.mark.parametrize("call,says", [
    (lambda o: netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["decode"], options=o,
                                parallelism="all"), "^parallelism 'all' searches pipeline"),
    (lambda o: netmodel.sweep(["h100-dgx"], ["fabric.domains=4,8"], ["DeepSeek-V3"],
                              ["decode"], options=o, parallelism="all"),
     "^parallelism 'all' searches pipeline"),
])
def test_pipelines_refused_before_any_search(call, says):
    with pytest.raises(UserError, match=says):
        call(RooflineOptions(two_batch_overlap=True))


@pytest.mark.parametrize("models,parallelism,says", [
    (["DeepSeek-V3", "Llama-3-8B"], "auto", "^Llama-3-8B has no dense MLP layers among MoE"),
    (["DeepSeek-V3"], "tp", "^dense MLP TP 1 runs beside attention DP, which parallelism "
                            "'tp' does not search"),
])
def test_dense_refusals_said_once_not_as_refused_points(models, parallelism, says):
    dense = RooflineOptions(dense_mlp_tp=1)
    with pytest.raises(UserError, match=says):
        netmodel.compare(models, ["h100-dgx"], ["decode"], options=dense,
                         parallelism=parallelism)
    # the sweep said it as 'no point of the sweep can be built: ...' (each point refused
    # as if its fabric were); now the same line as compare
    with pytest.raises(UserError, match=says):
        netmodel.sweep(["h100-dgx"], ["fabric.domains=4,8"], models, ["decode"],
                       options=dense, parallelism=parallelism)


def test_the_study_still_refuses_them():
    for o in (RooflineOptions(two_batch_overlap=True), RooflineOptions(dense_mlp_tp=1)):
        with pytest.raises(UserError, match="is not modelled by the study; give it to "
                                            "compare, sweep, search"):
            netmodel.run_study(["DeepSeek-V3"], ["H100-SXM"], ["decode"], options=o)
