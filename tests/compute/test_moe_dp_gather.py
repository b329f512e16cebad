"""SGLang's DP-attention MoE layer without an all-to-all backend (``--moe-a2a-backend
none``): every group's tokens gathered to the stage's ``tp`` GPUs as for a tensor-parallel
MLP (an all-reduce of the ``n`` rows in SUM_LEN steps, an all-gather of the padded rows in
MAX_LEN ones, in bf16), the experts and the shared experts split over ``tp``, the output
all-reduced or reduce-scattered back (compute.moe_dp_gather); each cell takes it where it
is the cheapest exchange. Values derived by hand from the stage table, the ring alpha-beta
model (450 GB/s x 0.92, 1.9 us a step) and the scale-up lower bound (450 GB/s, 0.6 us a
step, in-switch all-reduce ``alpha + n/B``, all-to-all ``alpha + 7/8 n/B`` among 8)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from compute.comm import RingAlphaBeta, ScaleUpLowerBound
from compute.dp_collectives import op_at
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import get_model
from compute.moe_dp_gather import dp_gather_rows
from compute.parallel import Parallelism, layout
from compute.roofline import _one_exchange, check_options, evaluate_grid, make_workload
from compute.roofline_options import RooflineOptions
from compute.stages import stage_work

B = 450e9 * 0.92      # bytes/s a ring step moves
ALPHA = 1.9e-6        # s a ring step
RING = RingAlphaBeta(bandwidth=450e9)
BOUND = ScaleUpLowerBound(bandwidth=450e9)          # alpha 0.6 us, in-switch all-reduce
assert (RING.step_latency, RING.efficiency) == (ALPHA, 0.92)
assert (BOUND.step_latency, BOUND.efficiency, BOUND.in_switch) == (0.6e-6, 1.0, True)
#: DeepSeek-V3's shared expert (7,168 x 2 x 2,048 up, 2,048 x 7,168 down, fp8): the
#: 7/8 of its bytes a GPU no longer reads at TP 8, a layer
SHARED_SAVED = 7 / 8 * (7168 * 2 * 2048 + 2048 * 7168)
H200_HBM = 4.8e12


def _slots(model, par, batch, phase, flag="ep_dp_gather"):
    m = get_model(model)
    sh = layout(m, [par])
    if flag:
        sh = replace(sh, **{flag: 1.0})
    work = stage_work(m, sh, np.array([[float(batch)]]), make_workload(phase))
    return {x[0]: (op_at(x[4], 0, 0), float(np.asarray(x[5]).ravel()[0])) for x in work
            if x[0] in ("attn_scatter", "moe_dispatch", "moe_combine", "dp_regather")}


def _step(model, gpu, par, batches, phase, flag, comm=RING):
    m = get_model(model)
    sh = layout(m, [par])
    if flag:
        sh = replace(sh, **{flag: 1.0})
    b = np.asarray(batches, dtype=np.int64)
    return _one_exchange(m, get_gpu(gpu), (par,), sh, False, b, b.astype(float).reshape(1, -1),
                         make_workload(phase), comm, check_options(None), 1.0,
                         float("inf")).latency[0]


def test_the_bytes_sglang_gathers():
    """DeepSeek-V3 (hidden 7,168, a bf16 row 14,336 B: nothing quantized before the gather)
    at TP 8 x EP 8 x DP-attention 8: decode batch 1 is SUM_LEN (2 x 1 < 8 x 1): two
    all-reduces of the one row among 8; batch 3 (6 < 8) of 3 rows, 43,008 B; batch 64
    MAX_LEN: an all-gather and a reduce-scatter of 64 rows, 917,504 B; batch 9 (18 >= 16)
    every group padded to 2, 16 rows, 229,376 B; prefill of 9 prompts of 1,500 tokens is
    SUM_LEN: 13,500 rows, 193,536,000 B. At TP 16 x EP 4 x DP-attention 4 (groups of 4),
    decode batch 64 (MAX_LEN, 16 rows a group) reduce-scatters the group's 16 rows among
    4 (229,376 B), all-gathers the 64 among 16, and all-gathers the group's rows after the
    reduce-scatter; batch 1 (SUM_LEN) runs neither group collective."""
    par = Parallelism(8, ep=8, attention_dp=8)
    for batch, phase, ops, size in ((1, "decode", ("all-reduce", "all-reduce"), 14336.0),
                                    (3, "decode", ("all-reduce", "all-reduce"), 43008.0),
                                    (64, "decode", ("all-gather", "reduce-scatter"), 917504.0),
                                    (9, "decode", ("all-gather", "reduce-scatter"), 229376.0),
                                    (9, "prefill", ("all-reduce", "all-reduce"), 193_536_000.0)):
        s = _slots("DeepSeek-V3", par, batch, phase)
        assert (s["moe_dispatch"], s["moe_combine"]) == ((ops[0], size), (ops[1], size)), batch
    wide = Parallelism(16, ep=4, attention_dp=4)
    s = _slots("DeepSeek-V3", wide, 64, "decode")
    assert s == {"attn_scatter": ("reduce-scatter", 229376.0),
                 "moe_dispatch": ("all-gather", 917504.0),
                 "moe_combine": ("reduce-scatter", 917504.0),
                 "dp_regather": ("all-gather", 229376.0)}
    s = _slots("DeepSeek-V3", wide, 1, "decode")
    assert s == {"attn_scatter": ("", 0.0), "moe_dispatch": ("all-reduce", 14336.0),
                 "moe_combine": ("all-reduce", 14336.0), "dp_regather": ("", 0.0)}


@pytest.mark.parametrize("model", ["DeepSeek-V3", "Mixtral-8x7B"])
def test_its_bytes_against_vllms_gather(model):
    """On a ring (bytes a GPU sends: an all-reduce 2 (p-1)/p of its size, an all-gather and
    a reduce-scatter (p-1)/p), TP 8 x EP 8 x DP-attention 8, decode batches 1 to 40: in
    MAX_LEN cells SGLang sends 2 x 7/8 x G rows of bf16 against vLLM's 7/8 x G x (d + 2)
    bytes a row's element (d the dispatch's bytes: 1.03125 for DeepSeek-V3's fp8, 2 for
    Mixtral's bf16), never fewer; in SUM_LEN cells 4 x 7/8 x n rows of bf16, fewer than
    vLLM's padded G rows exactly where 4 n < (d/2 + 1) G."""
    m = get_model(model)
    d, h = (1.03125, 7168) if model == "DeepSeek-V3" else (2.0, 4096)
    par = Parallelism(8, ep=8, attention_dp=8)
    share = {"all-reduce": 2 * 7 / 8, "all-gather": 7 / 8, "reduce-scatter": 7 / 8}
    fewer = []
    for n in range(1, 41):
        g = 8 * -(-n // 8)                         # every group padded to the busiest's
        s, v = (_slots(model, par, n, "decode", f) for f in ("ep_dp_gather", "ep_gather"))
        sg = sum(share[s[k][0]] * s[k][1] for k in ("moe_dispatch", "moe_combine"))
        vl = sum(share[v[k][0]] * v[k][1] for k in ("moe_dispatch", "moe_combine"))
        assert vl == pytest.approx(7 / 8 * g * h * (d + 2), rel=1e-12)
        if s["moe_dispatch"][0] == "all-gather":      # MAX_LEN: 2 n >= G
            assert 2 * n >= g and sg == pytest.approx(7 / 8 * g * h * 4, rel=1e-12)
            assert sg >= vl and (sg == vl) == (d == 2.0)
        else:                                         # SUM_LEN: 2 n < G
            assert 2 * n < g and sg == pytest.approx(4 * 7 / 8 * n * h * 2, rel=1e-12)
            assert (sg < vl) == (4 * n < (d / 2 + 1) * g)
            fewer.append(sg < vl)
    assert m.hidden == h and any(fewer)


def test_deepseek_v3_decode_batch_64_takes_it_and_names_it():
    """DeepSeek-V3 on 8 H200, TP 8 x EP 8 x DP-attention 8, decode batch 64, ring: the
    all-to-alls carry 64 x 8 / 8 = 64 copies, 473,088 B out (fp8 and scales) and 917,504 B
    back; SGLang all-gathers the 64 bf16 rows, 917,504 B, and reduce-scatters as many:
    58 x 7/8 x 444,416 B / 414 GB/s = 54.48 us more, the latency terms equal (7 steps
    each). Each GPU reads 1/8 of the shared expert, not all of it: 58 x 38,535,168 B /
    4.8 TB/s = 465.63 us less (the routed experts' copies, the shared experts' activations
    and the step's other stages the same). The step is the all-to-alls' less 411.15 us,
    the weights 2.235 GB less a GPU, and it equals EP 1's (the experts split by TP, which
    SGLang runs the same way)."""
    par = Parallelism(8, ep=8, attention_dp=8)
    a2a = _step("DeepSeek-V3", "H200-SXM", par, [64], "decode", None)[0]
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 64, ep=8, attention_dp=8, comm=RING)
    assert r.moe_exchange == "sglang-dp-gather"
    st = {s.name: s for s in r.stages}
    assert not {"moe_dispatch", "moe_combine", "allgather_moe_ep"} & set(st)
    ag, rs = st["dp_gather_moe_ep"], st["dp_scatter_moe_ep"]
    assert (ag.collective, ag.count, rs.collective, rs.count) == ("all-gather", 58,
                                                                  "reduce-scatter", 58)
    assert ag.network_time == pytest.approx(7 * ALPHA + 7 / 8 * 917504 / B, rel=1e-12)
    assert rs.network_time == pytest.approx(7 * ALPHA + 7 / 8 * 917504 / B, rel=1e-12)
    hand = 58 * 7 / 8 * (917504 - 473088) / B - 58 * SHARED_SAVED / H200_HBM
    assert hand == pytest.approx(-411.15e-6, abs=0.01e-6)
    assert r.latency - a2a == pytest.approx(hand, rel=1e-9)
    a2a_w = evaluate("DeepSeek-V3", "H200-SXM", 8, 1, "prefill", ep=8, attention_dp=8,
                     comm=RING).memory.weights      # prefill 1 keeps the all-to-alls
    assert a2a_w - r.memory.weights == pytest.approx(58 * SHARED_SAVED, rel=1e-12)
    tp_experts = evaluate("DeepSeek-V3", "H200-SXM", 8, 64, ep=1, attention_dp=8, comm=RING)
    assert r.latency == pytest.approx(tp_experts.latency, rel=1e-12)


def test_deepseek_v3_decode_batch_1_depends_on_the_collectives_latency():
    """Batch 1 is SUM_LEN: two all-reduces of one 14,336 B row among 8, where the
    all-to-alls send the busiest sender's 8 copies (59,136 B and 114,688 B). On a ring
    the all-reduces take 2 x 14 steps against 2 x 7: 58 x (2 x (14 x 1.9 us + 2 x 7/8 x
    14,336 B / 414 GB/s) - (14 x 1.9 us + 7/8 x 173,824 B / 414 GB/s)) = 1,528.5 us more,
    against the shared expert's 465.6 us of weights and 0.09 us of activations (the
    all-to-alls' GPU runs it on its own token, the busiest group's, through 2,048 columns;
    SGLang's on the step's one token through 256: 58 x 2 x 1,792 x 2 B / 4.8 TB/s): the
    cell keeps the all-to-alls. Under the scale-up lower bound (in-switch all-reduce,
    ``alpha + n/B``; all-to-all ``alpha + 7/8 n/B``) the collectives cost 58 x (2 x 14,336
    B - 7/8 x 173,824 B) / 450 GB/s = 15.91 us less and the step 481.63 us less: 4.00 ->
    3.52 ms, SGLang's gather taken."""
    par = Parallelism(8, ep=8, attention_dp=8)
    a2a, sg = (_step("DeepSeek-V3", "H200-SXM", par, [1], "decode", f)[0]
               for f in (None, "ep_dp_gather"))
    ring = 58 * (2 * (14 * ALPHA + 2 * 7 / 8 * 14336 / B) - (14 * ALPHA + 7 / 8 * 173824 / B))
    assert ring == pytest.approx(1528.52e-6, abs=0.01e-6)
    mlp = 58 * (SHARED_SAVED + 2 * 1792 * 2) / H200_HBM
    assert sg - a2a == pytest.approx(ring - mlp, rel=1e-9)
    assert evaluate("DeepSeek-V3", "H200-SXM", 8, 1, ep=8, attention_dp=8,
                    comm=RING).moe_exchange == "all-to-all"
    a2a_b, sg_b = (_step("DeepSeek-V3", "H200-SXM", par, [1], "decode", f, BOUND)[0]
                   for f in (None, "ep_dp_gather"))
    hand = 58 * (2 * 14336 - 7 / 8 * 173824) / 450e9 - mlp
    assert hand == pytest.approx(-481.63e-6, abs=0.01e-6)
    assert sg_b - a2a_b == pytest.approx(hand, rel=1e-9)
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 1, ep=8, attention_dp=8, comm=BOUND)
    assert (r.moe_exchange, r.latency) == ("sglang-dp-gather", sg_b)


def test_mixtral_without_shared_experts_gains_only_by_unpadded_rows():
    """Mixtral-8x7B (hidden 4,096, top-2 of 8, bf16; no shared experts) on 8 H100, TP 8 x
    EP 8 x DP-attention 8. Decode batch 1: the all-to-alls send the busiest sender's
    1 x 2 x 8 / 8 = 2 copies, 16,384 B each way; SGLang (SUM_LEN) all-reduces the one row,
    8,192 B, twice; the MLP work the same (the router's tokens: 1 either way). On a ring
    the bytes tie (2 x 7/8 x 8,192 = 7/8 x 16,384 a collective pair) and the all-reduces'
    2 x 14 steps against 2 x 7 cost 32 x 14 x 1.9 us = 851.2 us more: the all-to-alls
    stay; under the lower bound 32 x 2 x (8,192 - 7/8 x 16,384) B / 450 GB/s = 0.874 us
    less, and SGLang's gather is taken. Decode batch 64 (MAX_LEN): SGLang all-gathers and
    reduce-scatters the 64 rows, 524,288 B each, as vLLM's gather does in bf16: never
    faster than it (the router runs on every row), and both lose to the all-to-alls'
    64 x 2 / 8 = 16 copies."""
    par = Parallelism(8, ep=8, attention_dp=8)
    s = _slots("Mixtral-8x7B", par, 1, "decode")
    a = _slots("Mixtral-8x7B", par, 1, "decode", None)
    assert (s["moe_dispatch"], s["moe_combine"]) == (("all-reduce", 8192.0),) * 2
    assert (a["moe_dispatch"], a["moe_combine"]) == (("all-to-all", 16384.0),) * 2
    a2a, sg = (_step("Mixtral-8x7B", "H100-SXM", par, [1], "decode", f)[0]
               for f in (None, "ep_dp_gather"))
    assert sg - a2a == pytest.approx(32 * 14 * ALPHA, rel=1e-9)
    a2a_b, sg_b = (_step("Mixtral-8x7B", "H100-SXM", par, [1], "decode", f, BOUND)[0]
                   for f in (None, "ep_dp_gather"))
    assert sg_b - a2a_b == pytest.approx(32 * 2 * (8192 - 7 / 8 * 16384) / 450e9, rel=1e-6)
    r = evaluate("Mixtral-8x7B", "H100-SXM", 8, 1, ep=8, attention_dp=8, comm=BOUND)
    assert (r.moe_exchange, r.latency) == ("sglang-dp-gather", sg_b)
    assert {s.name: s.collective for s in r.stages}["dp_gather_moe_ep"] == "all-reduce"
    s64 = _slots("Mixtral-8x7B", par, 64, "decode")
    v64 = _slots("Mixtral-8x7B", par, 64, "decode", "ep_gather")
    assert s64["moe_dispatch"] == v64["moe_dispatch"] == ("all-gather", 524288.0)
    assert s64["moe_combine"] == v64["moe_combine"] == ("reduce-scatter", 524288.0)
    steps = [_step("Mixtral-8x7B", "H100-SXM", par, [64], "decode", f, BOUND)[0]
             for f in (None, "ep_gather", "ep_dp_gather")]
    assert steps[2] >= steps[1] > steps[0]
    assert evaluate("Mixtral-8x7B", "H100-SXM", 8, 64, ep=8, attention_dp=8,
                    comm=BOUND).moe_exchange == "all-to-all"


def test_prefill_keeps_the_other_exchanges():
    """Prefill is SUM_LEN: two all-reduces of every token (4 x 7/8 of the rows' bytes on a
    ring, in twice the steps) where vLLM's gather sends 7/8 x (1.03125 + 2) B an element:
    DeepSeek-V3 at TP 8 x EP 4 x DP-attention 8, 8 prompts of 1,500 tokens, keeps vLLM's
    gather, SGLang's step the slower."""
    par = Parallelism(8, ep=4, attention_dp=8)
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 8, "prefill", ep=4, attention_dp=8)
    assert r.moe_exchange == "vllm-gather"
    sg = _step("DeepSeek-V3", "H200-SXM", par, [8], "prefill", "ep_dp_gather",
               BOUND)[0]
    assert sg > r.latency


@pytest.mark.parametrize("model,gpu,par", [
    ("DeepSeek-V3", "H200-SXM", Parallelism(8, ep=4, attention_dp=8)),
    ("DeepSeek-V3", "H200-SXM", Parallelism(8, ep=8, attention_dp=2)),
    ("DeepSeek-V3", "H100-SXM", Parallelism(16, ep=2, attention_dp=4)),
    ("DeepSeek-V3", "H200-SXM", Parallelism(8, pp=2, ep=8, attention_dp=8)),
    ("Mixtral-8x7B", "H100-SXM", Parallelism(8, ep=8, attention_dp=8)),
    ("Mixtral-8x7B", "H100-SXM", Parallelism(8, ep=8, attention_dp=4))])
@pytest.mark.parametrize("phase,batches", [("decode", [1, 3, 9, 64, 256]), ("prefill", [1, 8])])
@pytest.mark.parametrize("comm", [RING, BOUND])
def test_each_cell_takes_the_least_of_the_three(model, gpu, par, phase, batches, comm):
    """The grid's step is the least of the all-to-alls', vLLM's gather's and SGLang's
    gather's, in every cell, and names the one taken."""
    steps = np.stack([_step(model, gpu, par, batches, phase, f, comm)
                      for f in (None, "ep_gather", "ep_dp_gather")])
    grid = evaluate_grid(model, gpu, [par], batches, phase, comm=comm)
    assert grid.latency[0] == pytest.approx(steps.min(axis=0), rel=1e-12)
    for j in range(len(batches)):
        ex = grid.result(0, j).moe_exchange
        assert steps[("all-to-all", "vllm-gather", "sglang-dp-gather").index(ex), j] \
            == pytest.approx(steps[:, j].min(), rel=1e-12)


def test_two_batch_overlap_is_not_taken_with_it():
    """SGLang refuses two-batch overlap without an all-to-all backend (server_args.py:
    "moe_a2a_backend cannot be 'none'"): a cell taking SGLang's gather runs
    its serial step, and keeps the all-to-alls' overlapped step only where that is faster
    still (DeepSeek-V3, TP 8 x EP 8 x DP-attention 8, decode batches 64 and 256)."""
    par = Parallelism(8, ep=8, attention_dp=8)
    opts = RooflineOptions(two_batch_overlap=True)
    grid = evaluate_grid("DeepSeek-V3", "H200-SXM", [par], [64, 256], "decode", comm=RING,
                         options=opts)
    sg = _step("DeepSeek-V3", "H200-SXM", par, [64, 256], "decode", "ep_dp_gather")
    assert (grid.latency[0] <= sg * (1 + 1e-12)).all()
    for j in range(2):
        r = grid.result(0, j)
        if r.moe_exchange == "sglang-dp-gather" and r.latency == pytest.approx(sg[j]):
            assert r.two_batch_hidden == 0


def test_the_rows_that_may_take_it():
    """Expert-parallel rows with DP attention and tensor-parallel dense MLPs only."""
    m = get_model("DeepSeek-V3")
    sh = layout(m, [Parallelism(8, ep=8, attention_dp=8), Parallelism(8, ep=8),
                    Parallelism(8, attention_dp=8)])
    assert dp_gather_rows(m, sh).tolist() == [True, False, False]
    assert dp_gather_rows(m, replace(sh, dense_dp=1.0)).tolist() == [False] * 3
    assert not dp_gather_rows(m, replace(sh, ep_gather=1.0)).any()


def test_infer_json_names_the_exchange():
    """``infer --json`` says which exchange the MoE layers take and lists SGLang's two
    collectives under their names (DeepSeek-V3 on 8 H200, TP 8 x EP 8 x DP-attention 8,
    batch 64); a row without expert parallelism says none."""
    from click.testing import CliRunner

    from netmodel.cli.main import cli

    def run(*extra):
        res = CliRunner().invoke(cli, ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM",
                                       "--tp", "8", "--attention-dp", "8", "--batch", "64",
                                       "--json", *extra])
        assert res.exit_code == 0, res.output
        return json.loads(res.output)

    out = run("--ep", "8")
    assert out["moe_exchange"] == "sglang-dp-gather"
    stages = {s["stage"]: s for s in out["stages"]}
    assert (stages["dp_gather_moe_ep"]["collective"], stages["dp_gather_moe_ep"]["count"]) \
        == ("all-gather", 58)
    assert stages["dp_scatter_moe_ep"]["collective"] == "reduce-scatter"
    assert "moe_exchange" not in run()
