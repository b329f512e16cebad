"""Under DP attention an expert-parallel MoE layer takes the cheaper of the dispatch and
combine all-to-alls and the gather exchange (vLLM's ``allgather_reducescatter``: every
attention group's tokens all-gathered to every GPU of the stage, padded to the busiest
group's in decode, the experts' outputs reduce-scattered back), cell by cell
(compute.moe_exchange). Values derived by hand from the stage table and the ring
alpha-beta model (H100 and H200: 450 GB/s x 0.92, 1.9 us a step). Where the gather must be
the one taken, DeepSeek-V3 runs without its shared expert (:data:`NO_SHARED`): with it,
SGLang's DP-attention gather, which splits the shared expert over TP, takes those decode
cells (tests/compute/test_moe_dp_gather.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from compute.comm import RingAlphaBeta
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.memory import activation_bytes
from compute.models import get_model
from compute.moe_exchange import gather_rows
from compute.parallel import Parallelism, layout
from compute.roofline import (
    _one_exchange,
    check_options,
    evaluate_grid,
    make_workload,
)
from compute.roofline_options import RooflineOptions
from compute.stages import stage_work

B = 450e9 * 0.92      # bytes/s a ring step moves
ALPHA = 1.9e-6        # s a ring step
#: NCCL's ring over H100's and H200's NVLink (450 GB/s a GPU): the costs derived by hand
RING = RingAlphaBeta(bandwidth=450e9)
assert (RING.step_latency, RING.efficiency) == (ALPHA, 0.92)
#: DeepSeek-V3 without its shared expert: the all-to-alls and the gather replicate it alike
#: (the same MLP work), SGLang's gather would split it over TP
NO_SHARED = replace(get_model("DeepSeek-V3"), shared_ffn=0)


def _moe_collectives(model, par, batch, phase, gather):
    m = get_model(model)
    sh = layout(m, [par])
    if gather:
        sh = replace(sh, ep_gather=1.0)
    work = stage_work(m, sh, np.array([[float(batch)]]), make_workload(phase))
    return {x[0]: (x[4], float(np.asarray(x[5]).ravel()[0])) for x in work
            if x[0] in ("attn_scatter", "moe_dispatch", "moe_combine", "dp_regather")}


def test_the_bytes_of_the_gather_and_of_the_all_to_alls():
    """DeepSeek-V3 (hidden 7,168, top-8, fp8 experts: dispatch 1.03125 B an element, combine
    2 B) at TP 8 x EP 4 x DP-attention 8. Decode batch 8 (one sequence a group, n = 8):
    all-to-alls of n x 8 / 4 = 16 copies, 114,688 elements, 118,272 B and 229,376 B; the
    gather's all-gather of 8 rows, 57,344 elements, 59,136 B, and reduce-scatter 114,688 B.
    Batch 9: the busiest group holds 2, every group padded to 2: 16 rows, 118,272 B and
    229,376 B; the all-to-alls the busiest sender's 2 x 8 x 8 / 4 copies, 229,376 elements,
    236,544 B and 458,752 B. Prefill of 9 prompts of 1,500 tokens: no padding, 13,500 rows,
    99,792,000 B and 193,536,000 B. The attention group's own slots (groups of one GPU) are
    the all-to-all schedule's."""
    par = Parallelism(8, ep=4, attention_dp=8)
    g8 = _moe_collectives("DeepSeek-V3", par, 8, "decode", True)
    a8 = _moe_collectives("DeepSeek-V3", par, 8, "decode", False)
    assert (g8["moe_dispatch"], g8["moe_combine"]) == (("all-gather", 59136.0),
                                                       ("reduce-scatter", 114688.0))
    assert (a8["moe_dispatch"], a8["moe_combine"]) == (("all-to-all", 118272.0),
                                                       ("all-to-all", 229376.0))
    assert (g8["attn_scatter"], g8["dp_regather"]) == (a8["attn_scatter"], a8["dp_regather"])
    g9 = _moe_collectives("DeepSeek-V3", par, 9, "decode", True)
    a9 = _moe_collectives("DeepSeek-V3", par, 9, "decode", False)
    assert (g9["moe_dispatch"], g9["moe_combine"]) == (("all-gather", 118272.0),
                                                       ("reduce-scatter", 229376.0))
    assert (a9["moe_dispatch"], a9["moe_combine"]) == (("all-to-all", 236544.0),
                                                       ("all-to-all", 458752.0))
    gp = _moe_collectives("DeepSeek-V3", par, 9, "prefill", True)
    assert (gp["moe_dispatch"], gp["moe_combine"]) == (("all-gather", 99_792_000.0),
                                                       ("reduce-scatter", 193_536_000.0))


def test_where_top_k_exceeds_ep_the_gather_is_taken_and_named():
    """DeepSeek-V3 on 8 H200, TP 8 x EP 4 x DP-attention 8, decode batch 8: per MoE layer
    the gather moves half the all-to-alls' bytes (above), each collective among 8 costing
    7 x 1.9 us + 7/8 x bytes / 414 GB/s: the all-gather 13.425 us, the reduce-scatter
    13.542 us; the step is the all-to-all schedule's less 58 x 7/8 x (59,136 + 114,688) B /
    414 GB/s = 21.31 us, the same MLP work (the router on the GPU's own token; DeepSeek-V3
    without its shared expert, :data:`NO_SHARED`). The breakdown names the two
    ``allgather_moe_ep`` and ``reducescatter_moe_ep``, 58 each."""
    m, g = NO_SHARED, get_gpu("H200-SXM")
    par = Parallelism(8, ep=4, attention_dp=8)
    sh = layout(m, [par])
    b = np.array([8], dtype=np.int64)
    a2a = _one_exchange(m, g, (par,), sh, False, b, b.astype(float).reshape(1, -1),
                        make_workload("decode"), RING, check_options(None), 1.0,
                        float("inf")).latency[0, 0]
    r = evaluate(m, "H200-SXM", 8, 8, ep=4, attention_dp=8, comm=RING)
    assert r.moe_exchange == "vllm-gather"
    st = {s.name: s for s in r.stages}
    assert not {"moe_dispatch", "moe_combine"} & set(st)
    ag, rs = st["allgather_moe_ep"], st["reducescatter_moe_ep"]
    assert (ag.collective, ag.count, rs.collective, rs.count) == ("all-gather", 58,
                                                                  "reduce-scatter", 58)
    assert ag.network_time == pytest.approx(7 * ALPHA + 7 / 8 * 59136 / B, rel=1e-12)
    assert rs.network_time == pytest.approx(7 * ALPHA + 7 / 8 * 114688 / B, rel=1e-12)
    assert a2a - r.latency == pytest.approx(58 * 7 / 8 * (59136 + 114688) / B, rel=1e-9)


def test_below_top_k_the_all_to_alls_stay():
    """Mixtral-8x7B (hidden 4,096, top-2 of 8, bf16) on 8 H100, TP 8 x EP 8 x DP-attention
    8, decode batch 64: the all-to-alls carry 64 x 2 / 8 = 16 copies, 131,072 B each way,
    the gather all 64 rows, 524,288 B each way: the gather's step is the all-to-alls' plus
    32 layers x 2 x 7/8 x 393,216 B / 414 GB/s = 53.19 us, and the cell keeps the
    all-to-alls."""
    m, g = get_model("Mixtral-8x7B"), get_gpu("H100-SXM")
    par = Parallelism(8, ep=8, attention_dp=8)
    sh = layout(m, [par])
    b = np.array([64], dtype=np.int64)
    steps = [_one_exchange(m, g, (par,), s, False, b, b.astype(float).reshape(1, -1),
                           make_workload("decode"), RING, check_options(None), 1.0,
                           float("inf")).latency[0, 0]
             for s in (sh, replace(sh, ep_gather=1.0))]
    assert steps[1] - steps[0] == pytest.approx(32 * 2 * 7 / 8 * 393216 / B, rel=1e-9)
    r = evaluate("Mixtral-8x7B", "H100-SXM", 8, 64, ep=8, attention_dp=8, comm=RING)
    assert r.latency == steps[0]
    assert {s.name: s.collective for s in r.stages}["moe_dispatch"] == "all-to-all"


def test_at_top_k_equal_to_ep_they_tie_and_the_all_to_alls_stay():
    """DeepSeek-V3's top-8 at EP 8 (TP 8 x DP-attention 8): n x 8 / 8 copies are the n rows
    the gather moves, in the same bytes: the steps are equal, and the cell keeps the
    all-to-alls (taken only where strictly faster); with an expert skew of 1.5 the busiest
    GPU receives 1.5 n copies and the gather is taken at batch 64 (without the shared
    expert, :data:`NO_SHARED`)."""
    r = evaluate(NO_SHARED, "H200-SXM", 8, 64, ep=8, attention_dp=8, comm=RING)
    assert {s.name: s.collective for s in r.stages}["moe_dispatch"] == "all-to-all"
    sk = evaluate(NO_SHARED, "H200-SXM", 8, 64, ep=8, attention_dp=8, expert_skew=1.5,
                  comm=RING)
    assert "allgather_moe_ep" in {s.name for s in sk.stages}


def _steps(model, gpu, par, batches, phase, options=None):
    m, g = get_model(model), get_gpu(gpu)
    sh = layout(m, [par])
    b = np.asarray(batches, dtype=np.int64)
    out = []
    serial = None if options is None else replace(options, two_batch_overlap=False)
    for s, opts in ((sh, options), (replace(sh, ep_gather=1.0), serial),
                    (replace(sh, ep_dp_gather=1.0), serial)):
        out.append(_one_exchange(m, g, (par,), s, False, b, b.astype(float).reshape(1, -1),
                                 make_workload(phase), RING, check_options(opts),
                                 1.0, float("inf")).latency[0])
    return out


@pytest.mark.parametrize("model,gpu,par", [
    ("DeepSeek-V3", "H200-SXM", Parallelism(8, ep=4, attention_dp=8)),
    ("DeepSeek-V3", "H200-SXM", Parallelism(8, ep=8, attention_dp=2)),
    ("DeepSeek-V3", "H100-SXM", Parallelism(16, ep=2, attention_dp=4)),
    ("Mixtral-8x7B", "H100-SXM", Parallelism(8, ep=2, attention_dp=8)),
    ("Mixtral-8x7B", "H100-SXM", Parallelism(8, ep=8, attention_dp=4))])
@pytest.mark.parametrize("phase,batches", [("decode", [1, 9, 64, 256]), ("prefill", [1, 8])])
@pytest.mark.parametrize("tbo", [False, True])
def test_each_cell_takes_the_cheaper_and_never_exceeds_either(model, gpu, par, phase,
                                                              batches, tbo):
    """The grid's step is the least of the all-to-alls' (with two-batch overlap where it
    is on and faster), the gather's and SGLang's DP-attention gather's (serial: no
    two-batch overlap), in every cell; where a gather is taken, two-batch overlap is not."""
    options = RooflineOptions(two_batch_overlap=True) if tbo else None
    a2a, gather, sglang = _steps(model, gpu, par, batches, phase, options)
    grid = evaluate_grid(model, gpu, [par], batches, phase, comm=RING, options=options)
    least = np.minimum(np.minimum(a2a, gather), sglang)
    assert grid.latency[0] == pytest.approx(least, rel=1e-12)
    assert (grid.latency[0] <= a2a).all() and (grid.latency[0] <= gather).all()
    if tbo:
        taken = np.minimum(gather, sglang) < a2a
        assert (grid.two_batch_hidden[0][taken] == 0).all()


def test_the_rows_that_may_gather():
    """Only expert-parallel rows with DP attention (the all-reduce exchange takes those
    without); dense-MLP data parallelism does not change it."""
    m = get_model("DeepSeek-V3")
    sh = layout(m, [Parallelism(8, ep=8, attention_dp=8), Parallelism(8, ep=8),
                    Parallelism(8, attention_dp=8), Parallelism(8)])
    assert gather_rows(m, sh).tolist() == [True, False, False, False]
    assert not gather_rows(get_model("Llama-3-70B"), layout(get_model("Llama-3-70B"), [
        Parallelism(8, attention_dp=8)])).any()


def test_decode_padding_is_extra_activation_memory():
    """Batch 9 over 8 attention groups pads every group to 2 sequences: the gather holds
    16 rows where the step has 9, 7 x 7,168 x (1.03125 + 2) B = 152,096 B more a GPU; none
    at batch 8 (no padding) nor in prefill (unpadded); the weights are the all-to-alls'
    (the shared expert replicated in both)."""
    m = get_model("DeepSeek-V3")
    sh = layout(m, [Parallelism(8, ep=4, attention_dp=8)])
    gs = replace(sh, ep_gather=1.0)
    dec, pre = make_workload("decode"), make_workload("prefill")
    for b, w, extra in ((9.0, dec, 152096.0), (8.0, dec, 0.0), (9.0, pre, 0.0)):
        x = np.array([[b]])
        assert float((activation_bytes(m, gs, x, w) - activation_bytes(m, sh, x, w))[0, 0]) \
            == extra
    one = evaluate(NO_SHARED, "H200-SXM", 8, 8, ep=4, attention_dp=8, comm=RING)
    assert "allgather_moe_ep" in {s.name for s in one.stages}
    g = evaluate_grid(NO_SHARED, "H200-SXM", [Parallelism(8, ep=4, attention_dp=8)], [8],
                      "decode", comm=RING)
    assert one.memory.weights == float(g.weights[0, 0])


def test_infer_json_names_the_gather():
    """``infer --json`` lists the gather's two collectives under their shown names, never
    the slots', and names the exchange (DeepSeek-V3 on 8 H200, TP 8 x EP 4 x
    DP-attention 8, a prefill of 8 prompts: SGLang's gather, all-reducing every token
    twice, loses there)."""
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli
    res = CliRunner().invoke(cli, ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM",
                                   "--tp", "8", "--ep", "4", "--attention-dp", "8", "--batch",
                                   "8", "--phase", "prefill", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["moe_exchange"] == "vllm-gather"
    stages = {s["stage"]: s for s in json.loads(res.output)["stages"]}
    assert (stages["allgather_moe_ep"]["collective"], stages["allgather_moe_ep"]["count"]) \
        == ("all-gather", 58)
    assert stages["reducescatter_moe_ep"]["collective"] == "reduce-scatter"
    assert "moe_dispatch" not in stages and "moe_combine" not in stages


def test_the_pipeline_stages_it_leaves_out_are_the_stage_tables():
    """compute.moe_exchange cannot import compute.stages (which imports it): its copy of
    the pipeline's stages is the stage table's."""
    from compute import moe_exchange, stages
    assert moe_exchange._PIPELINE_STAGES == stages.PIPELINE_STAGES
