"""A pipelined (PP > 1) prefill instance is rated at its steady state: serving a stream of
batches, it takes a new batch every ``batch x period`` (GPipe: the next batch's first
prompt enters the first stage one period after this one's last), while the TTFT SLO is
checked on the batch's latency (fill and drain included). Every path (evaluate, the grid,
evaluate_many, search, the CLI) gives the same number."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from compute.evaluate_many import evaluate_many
from compute.evaluate_one import evaluate
from compute.parallel import Parallelism
from compute.phases import Slo
from compute.profiles import get_profile
from compute.roofline import evaluate_grid, make_workload
from compute.roofline_options import RooflineOptions
from compute.search import search
from netmodel.cli.main import cli

# By hand: Llama-3-70B (80 layers, hidden 8192, 64 query and 8 KV heads of 128, FFN 28672,
# vocabulary 128256, BF16) on an H100-SXM (989.4 TFLOP/s dense BF16, 3.35 TB/s HBM; the
# roofline at efficiency 1), one prompt of 1500 tokens per micro-batch. A pass through the
# 80 layers is compute-bound: per layer QKV 2 n h (h + 2 x 1024), out-projection 2 n h h,
# gated MLP 2 n h (3 x 28672) and causal attention 4 h n (n + 1) / 2 FLOP; the embedding
# (a row read and written per token) and the LM head (its weights) are HBM-bound.
N, H = 1500, 8192
LAYER_FLOP = 2 * N * H * (H + 2 * 1024 + H + 3 * 28672) + 4 * H * N * (N + 1) / 2
EMBED_S, HEAD_S = 2 * N * H * 2 / 3.35e12, 128256 * H * 2 / 3.35e12   # 14.7 us, 627 us
PASS_S = 80 * LAYER_FLOP / 989.4e12 + EMBED_S + HEAD_S  # 0.21118 s
PP = 4
# the slowest of the 4 stages of 20 layers is the last, which also runs the LM head (the
# first runs the embedding): 52.634 + 0.627 = 53.261 ms (balanced stages would say
# PASS_S / 4 = 52.794 ms); the 24.6 MB send (61 us) hides behind it
PERIOD_S = 20 * LAYER_FLOP / 989.4e12 + HEAD_S


def test_pp4_prefill_tokens_per_s_is_the_hand_steady_state_rate():
    """TP 1 x PP 4, batch 4: a batch every 4 periods, 6000 tokens / 0.2130 s = 28,163
    tokens/s (balanced stages said 28,412; the old tokens/TTFT: 6000 / (3 periods + a pass
    + 3 sends) = 16,166, low by about b / (b + p - 1) = 4/7)."""
    r = evaluate("Llama-3-70B", "H100-SXM", 1, 4, "prefill", pp=PP)
    assert PASS_S == pytest.approx(0.21118, rel=1e-4)
    assert PERIOD_S == pytest.approx(0.053261, rel=1e-4)
    assert r.tokens_per_s == pytest.approx(4 * N / (4 * PERIOD_S), rel=1e-5)   # 28,163
    assert r.tokens_per_s == pytest.approx(28163.1, rel=1e-5)
    assert r.tokens_per_s_per_sm == pytest.approx(28163.1 / (4 * 132), rel=1e-5)
    assert r.interval == pytest.approx(4 * PERIOD_S, rel=1e-5)
    # the latency (the TTFT the SLO checks) keeps fill and drain: the last prompt enters
    # 3 periods after the first and takes a pass (and 3 sends, 0.18 ms)
    assert r.latency == pytest.approx(3 * PERIOD_S + PASS_S, rel=1e-3)
    assert r.tokens_per_step / r.latency == pytest.approx(16166.2, rel=1e-4)


def test_the_ttft_slo_is_still_checked_on_the_latency():
    """A 300 ms TTFT: batch 4's latency (0.370 s) misses it though a batch leaves every
    0.211 s; batch 1 (0.211 s + 3 sends) meets it."""
    slo = Slo(ttft=0.3)
    four = evaluate("Llama-3-70B", "H100-SXM", 1, 4, "prefill", pp=PP, slo=slo)
    one = evaluate("Llama-3-70B", "H100-SXM", 1, 1, "prefill", pp=PP, slo=slo)
    assert four.interval < 0.3 < four.latency and not four.feasible
    assert one.feasible and one.tokens_per_s == pytest.approx(four.tokens_per_s, rel=1e-12)
    r = search("Llama-3-70B", "H100-SXM", "prefill", tp=1, pp=PP, slo=slo)
    assert r.best.latency <= 0.3
    assert all(p.latency <= 0.3 for p in r.front + r.by_config)


def test_every_path_gives_the_same_rate():
    """evaluate, the grid, evaluate_many and search agree to the last bit at each batch."""
    batches = [1, 2, 4, 7]
    par = Parallelism(1, PP)
    w = make_workload("prefill")
    g = evaluate_grid("Llama-3-70B", "H100-SXM", [Parallelism(1, 2), par], batches, w)
    e = evaluate_many("Llama-3-70B", "H100-SXM", [par] * len(batches), batches, "prefill")
    s = search("Llama-3-70B", "H100-SXM", "prefill", tp=1, pp=PP, max_batch=8)
    for j, b in enumerate(batches):
        r = evaluate("Llama-3-70B", "H100-SXM", 1, b, "prefill", pp=PP)
        assert g.tokens_per_s[1, j] == r.tokens_per_s == e.tokens_per_s[j]
        assert g.tokens_per_s_per_sm[1, j] == r.tokens_per_s_per_sm == e.tokens_per_s_per_sm[j]
        assert g.interval[1, j] == r.interval == e.interval[j]
        assert g.result(1, j).tokens_per_s == r.tokens_per_s
        k = list(s.grid.batches).index(b)
        assert s.grid.tokens_per_s[0, k] == r.tokens_per_s
    # the rate is one prompt a period at every batch: the search takes the fastest batch
    assert s.best.batch == 1 and s.best.tokens_per_s == pytest.approx(N / PERIOD_S, rel=1e-5)
    assert s.best.tokens_per_s == evaluate("Llama-3-70B", "H100-SXM", 1, 1, "prefill",
                                           pp=PP).tokens_per_s


def test_infer_and_search_commands_agree():
    """``netmodel infer --pp 4`` reports the rate ``netmodel search`` ranks it by."""
    run = CliRunner()
    common = ["--model", "Llama-3-70B", "--gpu", "H100-SXM", "--phase", "prefill", "--json"]
    found = run.invoke(cli, ["search", *common, "--tp", "1", "--pp", str(PP)])
    assert found.exit_code == 0, found.output
    best = json.loads(found.output)["best"]
    assert (best["tp"], best["pp"]) == (1, PP)
    for batch in (best["batch"], 4):
        one = run.invoke(cli, ["infer", *common, "--tp", "1", "--pp", str(PP),
                               "--batch", str(batch)])
        assert one.exit_code == 0, one.output
        got = json.loads(one.output)
        assert got["tokens_per_s"] == pytest.approx(28163.1, rel=1e-5)
        assert got["tokens_per_s"] == pytest.approx(best["tokens_per_s"], rel=1e-12)
        assert got["tokens_per_s_per_sm"] == pytest.approx(best["tokens_per_s_per_sm"],
                                                           rel=1e-12)
        if batch == best["batch"]:
            assert got["tokens_per_s"] == best["tokens_per_s"]


def test_a_profile_overhead_is_paid_once_per_batch():
    """With an engine profile, a batch's interval is b periods plus the fixed overhead."""
    o = RooflineOptions(profile=get_profile("vllm-dgx-h100"))
    for b in (1, 5):
        r = evaluate("Llama-3-70B", "H100-SXM", 1, b, "prefill", pp=PP, options=o)
        split = {s.name: s for s in r.stages}
        pass_s = r.latency - r.overhead - split["pipeline_wait"].time - \
            (PP - 1) * split["pp_send"].time
        # the slowest stage: the last, a quarter of the layers and the LM head
        layers = pass_s - split["embedding"].time - split["lm_head"].time
        period = max(layers / PP + split["lm_head"].time, split["pp_send"].time)
        assert r.overhead > 0
        assert r.interval == pytest.approx(b * period + r.overhead, rel=1e-12)
        assert r.tokens_per_s == pytest.approx(b * N / (b * period + r.overhead), rel=1e-12)


@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_without_a_pipeline_the_rate_is_tokens_per_latency(phase):
    """PP = 1 (and decode, whose TBT is already a steady state) keep tokens / latency bit
    for bit, also as rows of a grid with pipelined ones."""
    g = evaluate_grid("Llama-3-70B", "H100-SXM", [Parallelism(2), Parallelism(2, 2)],
                      [1, 3, 16], make_workload(phase))
    plain = evaluate_grid("Llama-3-70B", "H100-SXM", [2], [1, 3, 16], make_workload(phase))
    assert plain.interval is None
    assert np.array_equal(g.tokens_per_s[0], plain.tokens_per_s[0])
    assert np.array_equal(plain.tokens_per_s, plain.tokens_per_step / plain.latency)
    r = evaluate("Llama-3-70B", "H100-SXM", 2, 3, phase)
    assert r.interval == 0.0 and r.tokens_per_s == r.tokens_per_step / r.latency
    if phase == "decode":
        assert g.interval is None
        assert np.array_equal(g.tokens_per_s, g.tokens_per_step / g.latency)
