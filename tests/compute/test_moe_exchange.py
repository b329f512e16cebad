"""An expert-parallel MoE layer whose GPUs already hold every token (attention
tensor-parallel over the stage, no DP attention) takes the cheaper of its two exchanges,
cell by cell: the dispatch and combine all-to-alls, or one all-reduce of the layer's output
(compute.moe_exchange). Values derived by hand from the stage table and the ring
alpha-beta model (H200: 450 GB/s x 0.92, 1.9 us a step)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from compute.comm import RingAlphaBeta
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import get_model
from compute.moe_exchange import allreduce_rows
from compute.parallel import Parallelism, layout
from compute.roofline import (
    _one_exchange,
    check_options,
    default_comm,
    evaluate_grid,
    make_workload,
)
from compute.stages import mlp_work_by_kind, stage_work


def ring_comm(gpu):
    """NCCL's ring over ``gpu``'s scale-up bandwidth (RingAlphaBeta: 1.9 us a step, 0.92
    link efficiency), passed by name where a figure by hand takes its constants."""
    return RingAlphaBeta(bandwidth=gpu.scaleup_bandwidth)


def _collectives(model, par, batch, flagged):
    sh = layout(model, [par])
    if flagged:
        sh = replace(sh, ep_allreduce=1.0)
    work = stage_work(model, sh, np.array([[float(batch)]]), make_workload("decode"))
    return {x[0]: (x[4], float(np.asarray(x[5]).ravel()[0])) for x in work
            if x[0] in ("attn_scatter", "moe_dispatch", "moe_combine", "dp_regather")}


def test_the_bytes_of_each_schedule_for_mixtral_at_tp4_ep4():
    """Mixtral-8x7B (hidden 4,096, top-2 of 8, bf16), TP 4 x EP 4, decode batch 2 (n = 2):
    all-to-all: a reduce-scatter and an all-gather of n x hidden x 2 B = 16,384 B, a dispatch
    and a combine of n x top-k x hidden / ep x 2 B = 2 x 2 x 4,096 / 4 x 2 = 8,192 B each;
    all-reduce: two all-reduces of 16,384 B, no dispatch or combine."""
    m, par = get_model("Mixtral-8x7B"), Parallelism(4, ep=4)
    assert _collectives(m, par, 2, False) == {
        "attn_scatter": ("reduce-scatter", 16384.0), "moe_dispatch": ("all-to-all", 8192.0),
        "moe_combine": ("all-to-all", 8192.0), "dp_regather": ("all-gather", 16384.0)}
    assert _collectives(m, par, 2, True) == {
        "attn_scatter": ("all-reduce", 16384.0), "moe_dispatch": ("", 0.0),
        "moe_combine": ("", 0.0), "dp_regather": ("all-reduce", 16384.0)}


def test_the_all_reduce_schedule_runs_the_router_on_every_token_and_splits_shared_experts():
    """DeepSeek-V3 (hidden 7,168, 256 experts, one shared expert of 2,048 columns, fp8 MLP
    weights), TP 8 x EP 8, decode batch 8: the all-to-all schedule runs the router on the
    GPU's own token (2 x 1 x 7,168 x 256 FLOPs) and the whole shared expert on it (2 x 2,048
    gated columns, replicated); the all-reduce schedule the router on all 8 tokens and the
    shared expert's 1/8 (2 x 256 columns) on all 8: the same shared FLOPs, 2 x 7 x 7,168 x
    256 = 25,690,112 more router FLOPs, 7,168 x 3,584 = 25,690,112 fewer weight bytes."""
    m, par = get_model("DeepSeek-V3"), Parallelism(8, ep=8)
    assert m.mlp_weight_bytes == 1.0
    sh = layout(m, [par])
    w = make_workload("decode")
    a2a = mlp_work_by_kind(m, sh, np.array([[8.0]]), w)["mlp_up"][0]
    ar = mlp_work_by_kind(m, replace(sh, ep_allreduce=1.0), np.array([[8.0]]), w)["mlp_up"][0]
    assert float(np.ravel(ar[0] - a2a[0])[0]) == 25_690_112.0
    assert float(np.ravel(a2a[1] - ar[1])[0]) == 25_690_112.0


def test_ep_under_tp_attention_is_no_slower_at_batch_1_than_ep_1():
    """DeepSeek-V3 on 8 H200 at TP 8, decode batch 1: each EP MoE layer all-reduces twice,
    as a TP layer does, each all-reduce of 14,336 B among 8 costing 2 x 7 x 1.9 us + 2 x 7/8
    x 14,336 B / (450 GB/s x 0.92) = 26.6606 us; the step at EP 2, 4 and 8 is EP 1's within
    0.1% (each routed token copy's input read by the grouped GEMM), where the four
    collectives of the all-to-all schedule made it 4.94 ms against 4.47 ms. The dispatch and
    combine, which the cell does not run, are not listed. On the ring, passed by name."""
    ring = ring_comm(get_gpu("H200-SXM"))
    one = evaluate("DeepSeek-V3", "H200-SXM", 8, 1, comm=ring).latency
    ar = 2 * 7 * 1.9e-6 + 2 * 7 / 8 * 14336 / (450e9 * 0.92)
    for ep in (2, 4, 8):
        r = evaluate("DeepSeek-V3", "H200-SXM", 8, 1, ep=ep, comm=ring)
        st = {s.name: s for s in r.stages}
        # named as they run: the EP layers' all-reduces, not the slots they fill
        assert st["allreduce_attn_ep"].collective == st["allreduce_mlp_ep"].collective \
            == "all-reduce"
        assert (st["allreduce_attn_ep"].count, st["allreduce_mlp_ep"].count) == (58, 58)
        assert st["allreduce_attn_ep"].network_time == pytest.approx(ar, rel=1e-12)
        assert st["allreduce_mlp_ep"].network_time == pytest.approx(ar, rel=1e-12)
        assert not {"attn_scatter", "dp_regather", "moe_dispatch", "moe_combine"} & set(st)
        assert one <= r.latency < one * 1.001
        assert r.latency < 4.9e-3


def _both(model, gpu, par, batches, phase, comm=default_comm):
    """The all-to-all and the all-reduce schedules' latencies of ``par`` at ``batches``
    (collectives of ``comm(gpu)``, default the default model's)."""
    m = get_model(model)
    from compute.hardware import get_gpu
    g = get_gpu(gpu)
    sh = layout(m, [par])
    b = np.asarray(batches, dtype=np.int64)
    w = make_workload(phase)
    args = (m, g, (par,), None, False, b, b.astype(float).reshape(1, -1), w, comm(g),
            check_options(None), 1.0, float("inf"))
    out = []
    for s in (sh, replace(sh, ep_allreduce=1.0)):
        a = list(args)
        a[3] = s
        out.append(_one_exchange(*a).latency[0])
    return out


@pytest.mark.parametrize("model,gpu,ep", [("Mixtral-8x7B", "H100-SXM", 8),
                                          ("Mixtral-8x7B", "H100-SXM", 2),
                                          ("DeepSeek-V3", "H200-SXM", 8)])
@pytest.mark.parametrize("phase,batches", [("decode", [1, 64, 1024]), ("prefill", [1, 8, 64])])
def test_each_cell_takes_the_cheaper_schedule(model, gpu, ep, phase, batches):
    """The grid's step is the lesser of the two schedules' in every cell. On a ring the
    latency terms tie at a small batch (an all-reduce among 8 is 14 steps, as a
    reduce-scatter and an all-gather, and each all-to-all 7): DeepSeek-V3's batch-1 decode
    gains from the shared expert's weights split over 8 GPUs (5.5 MB a layer in fp8,
    against 44 MB replicated), Mixtral-8x7B (no shared expert) keeps the all-to-alls there
    by the smaller bytes of its top-2 of 8."""
    par = Parallelism(8, ep=ep)
    a2a, ar = _both(model, gpu, par, batches, phase)
    grid = evaluate_grid(model, gpu, [par], batches, phase)
    assert grid.latency[0] == pytest.approx(np.minimum(a2a, ar), rel=1e-12)
    if model == "DeepSeek-V3" and phase == "decode":   # batch 1: the shared expert split
        assert ar[0] < a2a[0]


def test_a_large_mixtral_prefill_at_ep8_keeps_the_all_to_alls():
    """Mixtral-8x7B on 8 H100 at TP 8 x EP 8, prefill of 64 prompts of 1,500 tokens: the
    top-2 of 8 dispatch and combine carry n x 2 / 8 x hidden each, a quarter of the rows an
    all-reduce carries, so on the ring (passed by name: 2 x 7 steps and 2 x 7/8 of the bytes
    an all-reduce) the all-to-all schedule is the cheaper and the grid keeps it."""
    par = Parallelism(8, ep=8)
    a2a, ar = _both("Mixtral-8x7B", "H100-SXM", par, [64], "prefill", comm=ring_comm)
    assert a2a[0] < ar[0]
    r = evaluate("Mixtral-8x7B", "H100-SXM", 8, 64, "prefill", ep=8,
                 comm=ring_comm(get_gpu("H100-SXM")))
    st = {s.name: s.collective for s in r.stages}
    assert (st["attn_scatter"], st["moe_dispatch"]) == ("reduce-scatter", "all-to-all")


def test_dp_attention_keeps_the_all_to_alls():
    """With DP attention each group holds its own sequences: no all-reduce exchange."""
    m = get_model("DeepSeek-V3")
    sh = layout(m, [Parallelism(8, ep=8, attention_dp=8), Parallelism(8, ep=8,
                                                                       attention_dp=2)])
    assert not allreduce_rows(m, sh).any()
    # on a ring (under the lower bound SGLang's DP-attention gather takes batch 1:
    # tests/compute/test_moe_dp_gather.py)
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 1, ep=8, attention_dp=8,
                 comm=ring_comm(get_gpu("H200-SXM")))
    assert {s.name: s.collective for s in r.stages}["moe_dispatch"] == "all-to-all"


def test_a_dense_mlp_tp_beside_rows_without_attention_dp_is_not_refused():
    """--dense-mlp-tp 1 applies to the attention-DP rows; the rows evaluated again under the
    all-reduce exchange have none, and the degree is not asked of them (two-batch overlap's
    halves re-derive the layout from the configurations)."""
    from compute.roofline_options import RooflineOptions
    pars = [Parallelism(16, ep=16, attention_dp=16), Parallelism(16, ep=16)]
    g = evaluate_grid("DeepSeek-V3", "H100-SXM", pars, [4, 64], "prefill",
                      options=RooflineOptions(dense_mlp_tp=1, two_batch_overlap=True))
    assert np.isfinite(g.latency).all()


def test_the_all_reduce_schedule_holds_the_shared_expert_split():
    """DeepSeek-V3 at TP 8 x EP 8: the all-to-all schedule replicates the shared expert
    (3 x 7,168 x 2,048 fp8 bytes = 44,040,192 B a layer), the all-reduce one splits it over
    8 GPUs (256 columns, 5,505,024 B): 58 MoE layers x 38,535,168 B = 2,235,039,744 B less a
    GPU, the weights then those of plain TP 8; infer's batch-1 step takes it."""
    from compute.hardware import get_gpu
    m, g = get_model("DeepSeek-V3"), get_gpu("H200-SXM")
    par = Parallelism(8, ep=8)
    sh = layout(m, [par])
    b = np.array([1], dtype=np.int64)
    out = []
    for s in (sh, replace(sh, ep_allreduce=1.0)):
        out.append(_one_exchange(m, g, (par,), s, False, b, b.astype(float).reshape(1, -1),
                                 make_workload("decode"), default_comm(g), check_options(None),
                                 1.0, float("inf")).weights[0, 0])
    assert out[0] - out[1] == 2_235_039_744.0
    assert evaluate("DeepSeek-V3", "H200-SXM", 8, 1, ep=8).memory.weights == \
        evaluate("DeepSeek-V3", "H200-SXM", 8, 1).memory.weights


def test_infer_names_the_all_reduces_as_they_run_in_its_table_and_json():
    """``infer``'s table and ``--json`` name the EP layers' two all-reduces
    ``allreduce_attn_ep`` and ``allreduce_mlp_ep`` (58 MoE layers each, beside the 3 dense
    layers' ``allreduce_attn`` and ``allreduce_mlp``), the JSON's ``collective`` all-reduce,
    and never the slots' names, reduce-scatter's and all-gather's; the table's name column
    widens to the longest name (17 + 1), each row's count in its column."""
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli
    args = ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--ep", "8",
            "--batch", "1"]
    table = CliRunner().invoke(cli, args)
    js = CliRunner().invoke(cli, [*args, "--json"])
    assert table.exit_code == js.exit_code == 0
    stages = {s["stage"]: s for s in json.loads(js.output)["stages"]}
    for name in ("allreduce_attn_ep", "allreduce_mlp_ep"):
        assert (stages[name]["collective"], stages[name]["count"]) == ("all-reduce", 58)
    assert (stages["allreduce_attn"]["count"], stages["allreduce_mlp"]["count"]) == (3, 3)
    rows = {line.split()[0]: line for line in table.output.splitlines()[6:] if line.strip()}
    assert list(rows) == ["stage", *stages]
    assert rows["stage"].startswith("stage" + " " * 13 + "   x ")   # 18, then 4 for 'x'
    assert rows["allreduce_attn_ep"].startswith("allreduce_attn_ep" + " " + "  58 ")
    assert rows["qkv"].startswith("qkv" + " " * 15 + "  61 ")
    assert "attn_scatter" not in table.output and "dp_regather" not in table.output


def test_two_batch_segments_read_the_all_reduces_by_their_shown_names():
    """Two-batch overlap's chain of a step (compute.two_batch.step_segments) finds the EP
    layers' all-reduces under their shown names: its segments add up to the step (DeepSeek-V3
    on 8 H200, TP 8 x EP 8, decode batch 64, the all-reduce exchange taken); the two
    all-reduces are 58 x 2 of its communication."""
    from compute.two_batch import step_segments
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 64, ep=8)
    st = {s.name: s for s in r.stages}
    assert "allreduce_attn_ep" in st
    seg = step_segments(r)
    assert sum(a + b for a, b in seg) == pytest.approx(r.latency, rel=1e-12)
    comm = sum(b for _, b in seg)
    assert comm == pytest.approx(sum(s.total_time for s in r.stages if s.name.startswith(
        "allreduce_")), rel=1e-12)


def test_overlap_collectives_hides_the_exchange_all_reduces_behind_their_gemms():
    """``overlap_collectives`` hides each all-reduce behind the GEMM producing its input,
    the visible part max(0, network - producer): the all-reduce exchange's two as the dense
    layers' (DeepSeek-V3 on 8 H200, TP 8 x EP 8, decode batch 1). Each all-reduce of
    14,336 B among 8 costs 26.6606 us (above); the attention output's shows 26.6606 us less
    out_proj's time, the experts' outputs' 26.6606 us less mlp_down's, as allreduce_attn
    and allreduce_mlp; the step is the serial one less 61 x (out_proj + mlp_down), which is
    EP 1's overlapped step (4.07 ms; 4.45 ms when the EP layers' all-reduces showed in
    full). On the ring, passed by name."""
    from compute.roofline_options import RooflineOptions
    ar = 2 * 7 * 1.9e-6 + 2 * 7 / 8 * 14336 / (450e9 * 0.92)
    hidden = RooflineOptions(overlap_collectives=True)
    ring = ring_comm(get_gpu("H200-SXM"))
    serial = evaluate("DeepSeek-V3", "H200-SXM", 8, 1, ep=8, comm=ring)
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 1, ep=8, options=hidden, comm=ring)
    st = {s.name: s for s in r.stages}
    out_proj, down = st["out_proj"].time, st["mlp_down"].time
    assert 0 < out_proj < ar and 0 < down < ar
    assert st["allreduce_attn_ep"].network_time == pytest.approx(ar, rel=1e-12)
    assert st["allreduce_attn_ep"].time == pytest.approx(ar - out_proj, rel=1e-12)
    assert st["allreduce_mlp_ep"].time == pytest.approx(ar - down, rel=1e-12)
    assert st["allreduce_attn_ep"].time == st["allreduce_attn"].time
    assert st["allreduce_mlp_ep"].time == st["allreduce_mlp"].time
    assert r.latency == pytest.approx(serial.latency - 61 * (out_proj + down), rel=1e-12)
    assert r.latency == pytest.approx(
        evaluate("DeepSeek-V3", "H200-SXM", 8, 1, options=hidden, comm=ring).latency,
        rel=1e-3)
    assert r.latency < 4.1e-3


def test_overlap_collectives_leaves_the_all_to_all_schedule_unhidden():
    """The all-to-all schedule's reduce-scatter and all-gather are not all-reduces:
    ``overlap_collectives`` leaves them whole (Mixtral-8x7B on 8 H100, TP 8 x EP 8 x
    DP-attention 2, prefill of 64 prompts: the all-to-all schedule alone; without DP
    attention the hidden all-reduces now beat it there)."""
    from compute.roofline_options import RooflineOptions
    r = evaluate("Mixtral-8x7B", "H100-SXM", 8, 64, "prefill", ep=8, attention_dp=2,
                 options=RooflineOptions(overlap_collectives=True))
    st = {s.name: s for s in r.stages}
    assert st["attn_scatter"].collective == "reduce-scatter"
    assert st["attn_scatter"].time == st["attn_scatter"].network_time > 0
    assert st["dp_regather"].time == st["dp_regather"].network_time > 0
