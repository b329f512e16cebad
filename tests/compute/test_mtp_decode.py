"""Decode with multi-token prediction (compute.mtp; RooflineOptions mtp_tokens and
mtp_acceptance; --mtp-tokens and --mtp-acceptance on infer, search and serve).

Hand derivations on a small dense model with one MTP module, invariants (off is bit for bit
the model without the option; TPOT falls as acceptance rises; the step lengthens with
drafts), and the refusals."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.model_spec import ModelSpec
from compute.models import get_model, load_hf_config
from compute.mtp import expected_tokens, mtp_module
from compute.phases import Workload
from compute.roofline import evaluate_grid
from compute.roofline_options import DEFAULT_ACCEPTANCE, RooflineOptions
from netmodel.cli.main import cli

# a small dense model with one MTP module: h 1024, 8 heads of 128 (MHA), SwiGLU 4096,
# 2 layers, vocabulary 32,000, bf16 throughout
H, A, D, F, V, L = 1024, 8, 128, 4096, 32000, 2
TINY = ModelSpec(name="tiny-mtp", layers=L, hidden=H, heads=A, kv_heads=A, head_dim=D, ffn=F,
                 vocab=V, mtp_modules=1)
B, CTX = 4, 1000
MTP1 = RooflineOptions(mtp_tokens=1, mtp_acceptance=0.8)


def _total_flops(r) -> float:
    return sum(s.count * s.flops for s in r.stages)


def test_hand_case_one_draft_at_80_percent():
    r = evaluate(TINY, "H100-SXM", 1, B, Workload("decode", context=CTX), options=MTP1)
    # expected tokens a sequence a step: 1 + 0.8 = 1.8; tokens a step 4 x 1.8 = 7.2
    assert r.mtp_expected == pytest.approx(1.8, rel=1e-15)
    assert r.tokens_per_step == pytest.approx(7.2, rel=1e-15)
    # the verification pass: n = 4 x 2 = 8 tokens through every GEMM, logits for all 8;
    # attention 4 a d FLOPs a (query, key) pair, 2 x 1000 + 1 pairs a sequence and head
    n = B * 2
    linear = H * (A + 2 * A) * D + A * D * H + 3 * H * F      # qkv, out, gate/up/down
    pairs = 2 * CTX + 1
    hand = L * (2 * n * linear + 4 * A * D * B * pairs) + 2 * n * H * V
    assert _total_flops(r) == pytest.approx(hand, rel=1e-12)
    # the draft pass: the module (one layer, the shared embedding and head) on 4 tokens,
    # plus its 2h x h projection: memory-bound, (2 h h x 2 B + 3 x 4 x h x 2 B) / HBM
    g = get_gpu("H100-SXM")
    module = evaluate(mtp_module(TINY), "H100-SXM", 1, B, Workload("decode", context=CTX))
    # one layer on the 4 sequences' one token each, attending to 1000 keys, and the shared
    # head's logits for those 4 tokens
    assert _total_flops(module) == pytest.approx(
        2 * B * linear + 4 * A * D * B * CTX + 2 * B * H * V, rel=1e-12)
    # its memory-bound pass reads at least the layer's and the head's weights (bf16)
    assert module.latency >= (linear + H * V) * 2 / g.hbm_bandwidth
    proj = max(2 * B * 2 * H * H / g.peak_flops("bf16"),
               (2 * H * H * 2 + 3 * B * H * 2) / g.hbm_bandwidth)
    assert proj == (2 * H * H * 2 + 3 * B * H * 2) / g.hbm_bandwidth   # memory-bound
    assert r.mtp_time == pytest.approx(module.latency + proj, rel=1e-12)
    verify = evaluate(TINY, "H100-SXM", 1, B, Workload("decode", context=CTX, draft=1))
    assert r.latency == pytest.approx(verify.latency + r.mtp_time, rel=1e-12)
    assert r.tpot == pytest.approx(r.latency / 1.8, rel=1e-15)
    assert r.tokens_per_s == pytest.approx(7.2 / r.latency, rel=1e-12)
    # memory: the module's layer (its linear weights and 2 norms) and projection, bf16
    off = evaluate(TINY, "H100-SXM", 1, B, Workload("decode", context=CTX))
    assert r.memory.weights - off.memory.weights == pytest.approx(
        (linear + 2 * H) * 2 + 2 * H * H * 2, rel=1e-12)
    # and a third layer's KV cache, 4 sequences x (1000 + 1) tokens x 2 x 1024 x 2 B
    per_layer = B * (CTX + 1) * 2 * A * D * 2
    assert r.memory.kv_cache == pytest.approx(3 * per_layer, rel=1e-12)
    assert off.memory.kv_cache == 2 * B * CTX * 2 * A * D * 2


def test_expected_tokens_closed_form():
    for k in range(0, 6):
        for a in (0.0, 0.3, 0.85, 0.9, 1.0):
            closed = k + 1 if a == 1 else (1 - a ** (k + 1)) / (1 - a)
            assert expected_tokens(k, a) == pytest.approx(closed, rel=1e-12)
    assert DEFAULT_ACCEPTANCE == 0.9   # compute/data/mtp.toml: the report's 85%-90%, top


def _ds(options, batch=64, context=1513, tp=8, gpu="H200-SXM"):
    return evaluate("DeepSeek-V3", gpu, tp, batch, Workload("decode", context=context),
                    options=options)


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 512), context=st.integers(1, 60000),
       a=st.floats(0, 1), tp=st.sampled_from([4, 8]))
def test_off_is_bit_identical(batch, context, a, tp):
    plain = _ds(RooflineOptions(), batch, context, tp)
    off = _ds(RooflineOptions(mtp_tokens=0, mtp_acceptance=a), batch, context, tp)
    assert off.latency == plain.latency and off.tokens_per_s == plain.tokens_per_s
    assert off.memory == plain.memory and off.to_dict() == plain.to_dict()
    g0 = evaluate_grid("DeepSeek-V3", "H200-SXM", [tp], [batch], Workload("decode", context=context))
    g1 = evaluate_grid("DeepSeek-V3", "H200-SXM", [tp], [batch], Workload("decode", context=context),
                       options=RooflineOptions(mtp_tokens=0, mtp_acceptance=a))
    assert (g0.latency == g1.latency).all() and (g0.tokens_per_s == g1.tokens_per_s).all()


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 256), k=st.integers(1, 4), a=st.floats(0, 1), b=st.floats(0, 1))
def test_tpot_non_increasing_in_acceptance(batch, k, a, b):
    lo, hi = sorted((a, b))
    r_lo = _ds(RooflineOptions(mtp_tokens=k, mtp_acceptance=lo), batch)
    r_hi = _ds(RooflineOptions(mtp_tokens=k, mtp_acceptance=hi), batch)
    assert r_hi.latency == r_lo.latency            # the step does not depend on acceptance
    assert r_hi.tpot <= r_lo.tpot
    assert r_hi.tokens_per_s >= r_lo.tokens_per_s
    # never more tokens than the step can emit: at most k + 1 a sequence
    assert r_hi.tokens_per_step <= batch * (k + 1) * (1 + 1e-12)


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 256), context=st.integers(1, 30000))
def test_step_non_decreasing_in_drafts(batch, context):
    steps = [_ds(RooflineOptions(mtp_tokens=k), batch, context).latency for k in range(4)]
    assert all(x <= y for x, y in zip(steps, steps[1:], strict=False))


def test_deepseek_v3_decode_example():
    # DeepSeek-V3 on 8 H200 at batch 64, context 1513: one draft at the published 0.90
    off, on = _ds(RooflineOptions()), _ds(RooflineOptions(mtp_tokens=1))
    assert on.mtp_expected == pytest.approx(1.9, rel=1e-15)
    assert on.latency > off.latency              # a wider verification pass and a draft pass
    assert on.tpot < off.latency                 # but fewer seconds a token
    # the module's weights: one MoE layer (its 256 experts) over 8 GPUs, its projection
    # (2 x 7168 x 7168 fp8) on each
    extra = on.memory.weights - off.memory.weights
    ds = get_model("DeepSeek-V3")
    assert 11e9 / 8 < extra - 2 * 7168 * 7168 < 12e9 / 8
    assert ds.parameters == pytest.approx(671.0e9, rel=1e-3)   # the module not in the count


def test_prefill_is_as_without_mtp():
    w = Workload("prefill", prompt=2000)
    a = evaluate("DeepSeek-V3", "H200-SXM", 8, 2, w)
    b = evaluate("DeepSeek-V3", "H200-SXM", 8, 2, w, options=RooflineOptions(mtp_tokens=2))
    assert a.latency == b.latency and a.tokens_per_step == b.tokens_per_step


def test_tpot_is_what_the_slo_checks():
    r = _ds(RooflineOptions(mtp_tokens=1), batch=256)
    limit = (r.tpot + r.latency) / 2           # between the TPOT and the step
    from compute.phases import Slo
    r2 = evaluate("DeepSeek-V3", "H200-SXM", 8, 256, "decode", slo=Slo(tbt=limit),
                  options=RooflineOptions(mtp_tokens=1))
    assert r2.meets_slo
    g = evaluate_grid("DeepSeek-V3", "H200-SXM", [8], [256], "decode", latency_limit=limit,
                      options=RooflineOptions(mtp_tokens=1))
    assert bool(g.meets_slo[0, 0]) and g.tokens_per_step[0, 0] == pytest.approx(256 * 1.9)


@pytest.mark.parametrize("kw, match", [
    (dict(mtp_tokens=-1), "whole number from 0"), (dict(mtp_tokens=math.nan), "got nan"),
    (dict(mtp_tokens=10**400), "whole number from 0"), (dict(mtp_tokens=1.5), "got 1.5"),
    (dict(mtp_tokens=True), "whole number from 0"), (dict(mtp_tokens="1"), "whole number"),
    (dict(mtp_tokens=1, mtp_acceptance=1.01), "probability from 0 to 1"),
    (dict(mtp_tokens=1, mtp_acceptance=-0.1), "probability"),
    (dict(mtp_tokens=1, mtp_acceptance=math.nan), "got nan"),
    (dict(mtp_tokens=1, two_batch_overlap=True), "two-batch overlap is not modelled"),
])
def test_options_refuse(kw, match):
    with pytest.raises(UserError, match=match):
        RooflineOptions(**kw)


def test_unmodelled_cases_refused():
    with pytest.raises(UserError, match="no multi-token-prediction module"):
        evaluate("Llama-3-70B", "H100-SXM", 8, 8, options=RooflineOptions(mtp_tokens=1))
    with pytest.raises(UserError, match="one pipeline stage"):
        evaluate("DeepSeek-V3", "H200-SXM", 8, 8, pp=2, options=RooflineOptions(mtp_tokens=1))
    from compute.evaluate_many import evaluate_many
    from compute.parallel import Parallelism
    with pytest.raises(UserError, match="not modelled by evaluate_many"):
        evaluate_many("DeepSeek-V3", "H200-SXM", [Parallelism(8)], [8], "decode",
                      options=RooflineOptions(mtp_tokens=1))
    with pytest.raises(UserError, match="verified in decode"):
        Workload("prefill", draft=1)
    from compute.two_batch import evaluate_two_batch
    with pytest.raises(UserError, match="two-batch overlap is not modelled"):
        evaluate_two_batch("DeepSeek-V3", "H200-SXM", 8, 64, "decode",
                           options=RooflineOptions(mtp_tokens=1))


def test_hf_config_reads_num_nextn_predict_layers(tmp_path):
    from tests.compute.test_hf_configs import DEEPSEEK_V3  # the published config.json

    p = tmp_path / "config.json"
    p.write_text(json.dumps(DEEPSEEK_V3))
    assert load_hf_config(p).mtp_modules == 1
    p.write_text(json.dumps({k: v for k, v in DEEPSEEK_V3.items()
                             if k != "num_nextn_predict_layers"}))
    assert load_hf_config(p).mtp_modules == 0


BASE = ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--batch", "32"]


@pytest.mark.parametrize("extra, words", [
    (["--mtp-tokens", "-1"], "got -1"), (["--mtp-tokens", "nan"], "got nan"),
    (["--mtp-tokens", "1e400"], "whole number from 0"), (["--mtp-tokens", "17"], "got 17"),
    (["--mtp-tokens", "1", "--mtp-acceptance", "1.5"], "got 1.5"),
    (["--mtp-tokens", "1", "--mtp-acceptance", "nan"], "got nan"),
    (["--mtp-acceptance", "0.5"], "needs --mtp-tokens"),
    (["--mtp-tokens", "1", "--two-batch-overlap"], "two-batch overlap is not modelled"),
])
def test_cli_refuses_in_one_line(extra, words):
    r = CliRunner().invoke(cli, BASE + extra)
    assert r.exit_code == 2, r.output
    assert words in r.output and len(r.output.strip().splitlines()) == 1


def test_cli_refuses_model_without_module():
    args = ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "8",
            "--mtp-tokens", "1"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "no multi-token-prediction module" in r.output


def test_cli_infer_and_search_carry_it():
    r = CliRunner().invoke(cli, BASE + ["--mtp-tokens", "1", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["mtp"]["expected_tokens"] == pytest.approx(1.9)
    assert d["tokens_per_s"] == pytest.approx(32 * 1.9 / d["latency_s"])
    text = CliRunner().invoke(cli, BASE + ["--mtp-tokens", "1"]).output
    assert "TPOT" in text and "MTP: 1 draft token(s)" in text
    s = CliRunner().invoke(cli, ["search", "--model", "DeepSeek-V3", "--gpu", "H200-SXM",
                                 "--tp", "8", "--max-batch", "64", "--mtp-tokens", "1",
                                 "--json"])
    assert s.exit_code in (0, 3), s.output


def test_to_dict_unchanged_without_it():
    assert "mtp_tokens" not in RooflineOptions().to_dict()
    d = RooflineOptions(mtp_tokens=2, mtp_acceptance=0.5).to_dict()
    assert d["mtp_tokens"] == 2 and d["mtp_acceptance"] == 0.5
    assert replace(RooflineOptions(), mtp_tokens=0) == RooflineOptions()


def test_serve_counts_expected_tokens():
    from netmodel.study.serving import serve

    off = serve("DeepSeek-V3", "h100-dgx", "coding", max_batch=256)
    on = serve("DeepSeek-V3", "h100-dgx", "coding", max_batch=256,
               options=RooflineOptions(mtp_tokens=1))
    d = on.decode
    assert d.pp == 1 and d.mtp_tokens == 1 and on.settings["options"]["mtp_tokens"] == 1
    # the 12 tokens decode makes of the 13 (the first comes out of the prefill), a step 1
    # token (p 0.1) or 2 but no more than are left: S(n) = 1 + 0.1 S(n-1) + 0.9 S(n-2),
    # S(0) = 0, S(1) = 1 solves to n / 1.9 + c (1 - (-0.9)^n), c = 0.9 / 1.9^2
    steps = 12 / 1.9 + 0.9 / 1.9 ** 2 * (1 - 0.9 ** 12)                # 6.49 (12 / 1.9 = 6.32)
    assert d.mtp_expected == pytest.approx(12 / steps, rel=1e-12)
    assert on.tbt_s == pytest.approx(d.latency * steps / 12, rel=1e-12)      # TPOT
    # requests a second of one decode instance: a batch every step, a request's steps
    assert on.decode_rate == pytest.approx(d.batch / d.latency / steps, rel=1e-12)
    assert off.decode_rate == pytest.approx(off.decode.batch / off.decode.latency / 12,
                                            rel=1e-12)
    assert "mtp_tokens" not in off.settings


def test_deepseek_day6_decode_costed_through_the_option():
    """The multi-server accuracy row whose source may run the MTP module (emitted 2):
    scripts/accuracy_inference.py takes the higher of one token a step and MTP 1 at the
    published 0.90, which stays above the measured 14,800 tokens/s a node and below the
    bare bound (2 tokens a step, the module free)."""
    import csv

    from tests.compute.report_helpers import inference_reports

    # its multi-server report, scripts/inference_reports/multinode.py
    acc, pub = inference_reports("multinode", "published")
    with open(acc.MULTINODE) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    row = next(r for r in rows if r["id"] == "deepseek-day6-decode")
    assert row["emitted"] == "2" and acc.mtp_costed(row) and not acc.mtp_costed(row, True)
    got = acc.multinode_prediction(row)
    from netmodel.cli.resolve import resolve_collectives

    n, b = int(row["gpus"]), int(row["batch"])
    kw = dict(ep=n, attention_dp=n, context=int(row["context"]),
              comm=resolve_collectives(None, row["fabric"], None, None)[1])
    one = evaluate(pub.published_model(row), row["gpu"], n, b, "decode", **kw)
    mtp = evaluate(pub.published_model(row), row["gpu"], n, b, "decode",
                   options=RooflineOptions(mtp_tokens=1), **kw)
    nodes = n / 8
    assert got == max(b / one.latency, b * 1.9 / mtp.latency) / nodes
    assert got == b * 1.9 / mtp.latency / nodes          # MTP at 0.90 is the higher here
    assert float(row["measured"]) < got < 2 * b / one.latency / nodes
    # no other used row is costed through it
    assert [r["id"] for r in rows if r["status"] == "used" and acc.mtp_costed(r)] == [row["id"]]
