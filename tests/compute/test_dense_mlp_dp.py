"""Dense MLP layers run data-parallel beside attention DP (RooflineOptions.dense_mlp_tp = 1,
SGLang's --moe-dense-tp-size 1: compute.parallel.dense_data_parallel). DeepSeek-V3 at TP 32
x EP 32 x DP-attention 32 (4 H100 servers), every figure derived by hand from the model's
sizes (hidden 7168, dense intermediate 18432, 3 dense of 61 layers, fp8 MLP weights) and the
ring's constants, passed by name (compute.comm.RingAlphaBeta: 1.9 us a step, 92% of 450 GB/s)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from compute.comm import RingAlphaBeta
from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.models import get_model
from compute.parallel import Parallelism, dense_data_parallel, layout
from compute.phases import Workload
from compute.roofline import evaluate_grid
from compute.roofline_options import RooflineOptions
from compute.stages import layer_counts, mlp_work_by_kind
from netmodel.cli.main import cli

H, DFF, DENSE, LAYERS = 7168, 18432, 3, 61
TP = 32
DP = RooflineOptions(dense_mlp_tp=1)
PREFILL = Workload("prefill", prompt=4096)
#: the ring by name (compute.comm.RingAlphaBeta at 450 GB/s), whose constants the
#: by-hand figures take, whatever the default collectives are
ARGS = dict(ep=32, attention_dp=32, prompt=4096, comm=RingAlphaBeta(bandwidth=450e9))


def _run(options=None, batch=32, phase="prefill"):
    return evaluate("DeepSeek-V3", "H100-SXM", TP, batch, phase, options=options, **ARGS)


def test_dense_weights_replicated_on_every_gpu():
    # each dense layer's gate, up and down matrices, 3 x 7168 x 18432 fp8 bytes, whole on
    # every GPU instead of 1/32 of them: + 3 layers x 396,361,728 x 31/32
    old, new = _run().memory.weights, _run(DP).memory.weights
    assert 3 * H * DFF == 396_361_728
    assert new - old == DENSE * 3 * H * DFF * (1 - 1 / TP) == 1_151_926_272


def test_dense_layer_mlp_work_by_hand():
    # 32 prompts of 4096 tokens: n = 131,072 tokens in the instance, 4,096 a GPU's own
    m = get_model("DeepSeek-V3")
    n, own = 32 * 4096, 4096
    c = [Parallelism(TP, ep=32, attention_dp=32)]
    sh = layout(m, c)
    tp_up, tp_down = (mlp_work_by_kind(m, sh, np.array([[32.0]]), PREFILL)[k][1]
                      for k in ("mlp_up", "mlp_down"))
    dp_sh = dense_data_parallel(m, c, sh, 1)
    dp_up, dp_down = (mlp_work_by_kind(m, dp_sh, np.array([[32.0]]), PREFILL)[k][1]
                      for k in ("mlp_up", "mlp_down"))
    f = lambda x: float(np.ravel(x)[0])  # noqa: E731
    # tensor-parallel: every token through 576 of the 18432 columns (gate and up: 1152)
    assert f(tp_up[0]) == 2 * n * H * 2 * 576
    assert f(tp_up[1]) == H * 2 * 576 * 1 + n * H * 2 + n * 576 * 2
    assert f(tp_down[1]) == 576 * H * 1 + n * 576 * 2 + n * H * 2
    # data-parallel: the GPU's own 4,096 tokens through all 18432 columns: the same FLOPs,
    # the whole weights read, 1/32 of the activations
    assert f(dp_up[0]) == 2 * own * H * 2 * DFF == f(tp_up[0])
    assert f(dp_up[1]) == H * 2 * DFF * 1 + own * H * 2 + own * DFF * 2
    assert f(dp_down[0]) == 2 * own * DFF * H
    assert f(dp_down[1]) == DFF * H * 1 + own * DFF * 2 + own * H * 2


def test_gather_and_scatter_removed_by_hand():
    # before: each dense layer gathers the 131,072 tokens' hidden states among the 32
    # attention groups and returns them after the MLP, in prefill each an all-reduce of the
    # rows (SGLang's SUM_LEN; ring: 2 x 31 steps of 1.9 us, 2 x 31/32 of 131,072 x 7168 x
    # 2 B at 0.92 x 450 GB/s): 8.912 ms each, 3 layers
    old, new = _run(), _run(DP)
    st_old = {s.name: s for s in old.stages}
    st_new = {s.name: s for s in new.stages}
    ring = 2 * 31 * 1.9e-6 + 2 * (31 / 32) * (131072 * H * 2) / (0.92 * 450e9)
    assert ring == pytest.approx(8.9117e-3, rel=1e-4)
    for name in ("dp_gather", "dp_scatter"):
        assert st_old[name].count == DENSE
        assert st_old[name].time == pytest.approx(ring, rel=1e-12)
        assert name not in st_new
    assert "attn_scatter" not in st_new and "dp_regather" not in st_new  # groups of one GPU
    # the MLP stages: prefill is compute-bound and the FLOPs are equal, so the same time;
    # every other stage unchanged, so the step is shorter by exactly the 6 collectives
    for name in ("mlp_up", "mlp_down", "moe_dispatch", "moe_combine", "attention"):
        assert st_new[name].time == pytest.approx(st_old[name].time, rel=1e-12)
    assert old.latency - new.latency == pytest.approx(6 * ring, rel=1e-9)
    # (0.32474 -> 0.29800 s when written; h356: was a pin of both, the gap is derived above)


def test_decode_mlp_reads_the_whole_dense_weights():
    # decode, 1,024 sequences (32 a GPU): a dense layer's MLP is bound by reading its
    # 396.4 MB of fp8 weights (and 3.3 MB of its 32 tokens' activations) at 3.35 TB/s:
    # 119.3 us, against 3.7 us for 1/32 of the weights
    m = get_model("DeepSeek-V3")
    c = [Parallelism(TP, ep=32, attention_dp=32)]
    w = Workload("decode", context=1513)
    dp_sh = dense_data_parallel(m, c, layout(m, c), 1)
    kinds = mlp_work_by_kind(m, dp_sh, np.array([[1024.0]]), w)
    hbm = sum(float(np.ravel(kinds[k][1][1])[0]) for k in ("mlp_up", "mlp_down"))
    assert hbm == 3 * H * DFF + 32 * (H * 2 + DFF * 2) + 32 * (DFF * 2 + H * 2)
    assert hbm / 3.35e12 == pytest.approx(119.3e-6, rel=1e-3)


def test_scatter_within_attention_groups_of_four():
    # TP 32 x DP-attention 8: groups of 4 GPUs. A dense layer then runs as the EP layers
    # do: reduce-scatter among its 4 GPUs, the MLP on each GPU's own tokens, all-gather
    # back; no all-reduce, no gather or scatter across the 8 groups
    m = get_model("DeepSeek-V3")
    c = [Parallelism(TP, ep=32, attention_dp=8)]
    sh = layout(m, c)
    old = layer_counts(m, sh, 61.0, 58.0)
    new = layer_counts(m, dense_data_parallel(m, c, sh, 1), 61.0, 58.0)
    v = lambda d, k: float(np.ravel(d[k])[0])  # noqa: E731
    assert (v(old, "allreduce_attn"), v(old, "dp_gather"), v(old, "dp_scatter")) == (3, 3, 3)
    # after the TP-MLP dense layers' reduce-scatter among 32 the all-gather among the 4
    # (attn_gather, where SGLang takes MAX_LEN); the EP layers' regather on the other 58
    assert (v(old, "attn_scatter"), v(old, "attn_gather"), v(old, "dp_regather")) == (58, 3, 58)
    assert (v(new, "allreduce_attn"), v(new, "dp_gather"), v(new, "dp_scatter")) == (0, 0, 0)
    assert (v(new, "attn_scatter"), v(new, "attn_gather"), v(new, "dp_regather")) == (61, 0, 61)
    assert (v(new, "moe_dispatch"), v(new, "moe_combine")) == (58, 58)


def test_grid_rows_equal_evaluate_each_with_and_without_attention_dp():
    # a grid of rows with and without attention DP: the option applies to the rows with
    # it; the others keep the dense MLPs tensor-parallel (each cell = evaluate)
    configs = [Parallelism(8, ep=8), Parallelism(8, ep=8, attention_dp=8),
               Parallelism(16, ep=16, attention_dp=4), Parallelism(16, ep=8, attention_dp=16)]
    batches = [1, 8, 64]
    g = evaluate_grid("DeepSeek-V3", "H100-SXM", configs, batches, "decode", options=DP)
    for i, c in enumerate(configs):
        for j, b in enumerate(batches):
            opt = DP if c.attention_dp > 1 else None
            r = evaluate("DeepSeek-V3", "H100-SXM", c.tp, b, "decode", ep=c.ep,
                         attention_dp=c.attention_dp, options=opt)
            assert g.latency[i, j] == pytest.approx(r.latency, rel=1e-12)
            assert g.weights[i, j] == pytest.approx(r.memory.weights, rel=1e-12)
            assert g.result(i, j).dense_mlp_tp == (1 if c.attention_dp > 1 else None)


def test_default_unchanged_and_left_out_of_settings():
    assert "dense_mlp_tp" not in RooflineOptions().to_dict()
    assert RooflineOptions(dense_mlp_tp=1).to_dict()["dense_mlp_tp"] == 1
    assert "dense_mlp_tp" not in _run().to_dict()
    assert _run(DP).to_dict()["dense_mlp_tp"] == 1


@pytest.mark.parametrize(("make", "words"), [
    (lambda: RooflineOptions(dense_mlp_tp=2), "must be 1"),
    (lambda: RooflineOptions(dense_mlp_tp=True), "must be 1"),
    (lambda: evaluate("Mixtral-8x7B", "H100-SXM", 8, 8, ep=8, attention_dp=8, options=DP),
     "no dense MLP layers"),
    (lambda: evaluate("Llama-3-70B", "H100-SXM", 8, 8, attention_dp=8, options=DP),
     "no dense MLP layers"),
    (lambda: evaluate("DeepSeek-V3", "H100-SXM", 8, 8, ep=8, options=DP),
     "TP 8 x EP 8 has none"),
])
def test_refusals(make, words):
    with pytest.raises(UserError, match=words):
        make()


@pytest.mark.parametrize(("extra", "words"), [
    (["--dense-mlp-tp", "4"], "must be 1"),
    # the one range '4' gets, not a whole number's (1 to 1,000,000,000) for a text
    (["--dense-mlp-tp", "x"], "(--dense-mlp-tp) must be 1 (SGLang's --moe-dense-tp-size 1) "
                              "or unset (the stage's TP), got 'x'"),
    (["--dense-mlp-tp", "1", "--attention-dp", "1"], "has none"),
])
def test_cli_refusals_one_line_exit_2(extra, words):
    adp = [] if "--attention-dp" in extra else ["--attention-dp", "8"]   # given once
    args = ["infer", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--tp", "8", "--ep", "8",
            *adp, "--batch", "8"]
    r = CliRunner().invoke(cli, args + extra)
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]


def test_cli_infer_json_and_help():
    args = ["infer", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--tp", "32", "--ep", "32",
            "--attention-dp", "32", "--batch", "32", "--phase", "prefill", "--prompt", "4096",
            "--dense-mlp-tp", "1"]
    r = CliRunner().invoke(cli, args + ["--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    default = evaluate("DeepSeek-V3", "H100-SXM", TP, 32, "prefill", options=DP,
                       **{**ARGS, "comm": None})   # infer's collectives, the default
    assert d["dense_mlp_tp"] == 1 and d["latency_s"] == pytest.approx(default.latency)
    text = CliRunner().invoke(cli, args).output
    assert "dense MLP TP 1" in text.splitlines()[0]
    for cmd in ("infer", "search", "serve"):
        h = CliRunner().invoke(cli, [cmd, "--help"]).output
        assert "--dense-mlp-tp" in h and "moe-dense-tp-size" in h.replace("\n", " ").replace(
            "  ", "")


def test_search_takes_the_option():
    from compute.search import search

    kw = dict(tp=[16, 32], ep=[16, 32], attention_dp=[16, 32], max_batch=64)
    old = search("DeepSeek-V3", "H100-SXM", PREFILL, **kw)
    new = search("DeepSeek-V3", "H100-SXM", PREFILL, options=DP, **kw)
    assert new.best.dense_mlp_tp == 1
    assert new.best.tokens_per_s_per_sm > old.best.tokens_per_s_per_sm


def test_with_two_batch_overlap_grid_equals_the_scalar_schedule():
    # the two-batch schedule counts a dense layer's collectives as the grid does: none
    # across groups (TP 32 x DP-attention 32), the in-group scatter and regather (groups
    # of 4); each grid cell equals evaluate_two_batch to the last bit
    from compute.two_batch import evaluate_two_batch, step_segments

    both = RooflineOptions(dense_mlp_tp=1, two_batch_overlap=True)
    configs = [Parallelism(32, ep=32, attention_dp=32), Parallelism(16, ep=16, attention_dp=4),
               Parallelism(8, ep=8)]
    batches = [2, 7, 32]
    for phase in ("prefill", "decode"):
        g = evaluate_grid("DeepSeek-V3", "H100-SXM", configs, batches, phase, options=both)
        for i, c in enumerate(configs):
            for j, b in enumerate(batches):
                if phase == "decode" and b < 2 * c.attention_dp:   # a rank of one: no split
                    assert np.isnan(g.two_batch_latency[i, j])
                    continue
                opt = DP if c.attention_dp > 1 else None
                t = evaluate_two_batch("DeepSeek-V3", "H100-SXM", c.tp, b, phase, ep=c.ep,
                                       attention_dp=c.attention_dp, options=opt)
                assert g.two_batch_latency[i, j] == t.latency
    half = _run(DP, batch=16)
    chain = step_segments(half, "DeepSeek-V3")
    # embedding, 61 layers of two segments, the LM head; a dense layer sends nothing
    assert len(chain) == 1 + 2 * 61 + 1
    assert chain[1][1] == 0.0 and chain[2][1] == 0.0
    st = {s.name: s for s in _run(batch=16).stages}
    assert step_segments(_run(batch=16), "DeepSeek-V3")[1][1] == st["dp_gather"].time


def test_the_study_refuses_it_not_wired():
    # its crossovers, serving and reliability parts are not checked with it: refused, as
    # two-batch overlap is, rather than half applied (compare and sweep take it:
    # tests/netmodel/test_fabric_options_compare.py)
    import netmodel

    with pytest.raises(UserError, match="dense_mlp_tp is not modelled by the study"):
        netmodel.run_study(["DeepSeek-V3"], ["H100-SXM"], ["decode"], options=DP)
