"""Where the GEMMs run in fp8: a GEMM runs at the GPU's dense fp8 peak where its weights are
stored in fp8, its input is quantized to fp8 too (a w8a8 checkpoint: ``compute_dtype =
"fp8"``) and the GPU has fp8 tensor cores; else at the bf16 peak (vLLM docs, 'FP8 W8A8': W8A8
on Ada Lovelace, Hopper and Blackwell, weight-only W8A16 through FP8 Marlin on Ampere).
Every expected time below is the stage's FLOPs over a published dense peak, by hand:
H100-SXM 989.4 TFLOP/s bf16 and 1978.9 fp8, A100-SXM-80GB 312 bf16 and no fp8. Before this
rule every catalog and HF model ran every GEMM at the bf16 peak."""

import json
from pathlib import Path

import numpy as np
import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.models import ModelSpec, get_model, load_hf_config
from compute.parallel import Parallelism
from compute.profiles import get_profile
from compute.roofline import evaluate_grid, make_workload
from compute.roofline_options import RooflineOptions

DATA = Path(__file__).parent / "data" / "hf_quantized"
H100_BF16, H100_FP8, A100_BF16 = 989.4e12, 1978.9e12, 312e12
LINEAR = ("qkv", "out_proj", "mlp_up", "mlp_down")


def stages(model, gpu, options=None, tp=1, batch=4):
    r = evaluate(model, gpu, tp=tp, batch=batch, phase="prefill", options=options)
    return {s.name: s for s in r.stages}


def test_w8a8_fp8_config_runs_its_linear_layers_at_the_fp8_peak_on_h100():
    m = get_model(str(DATA / "llama-3.1-8b-instruct-fp8-compressed-tensors.json"))
    assert m.compute_dtype == "fp8"
    s = stages(m, "H100-SXM")
    for name in LINEAR:      # every linear layer of the blocks: fp8 x fp8
        assert s[name].compute_time == pytest.approx(s[name].flops / H100_FP8, rel=1e-12)
    # the LM head (kept in bf16: ignore = ['lm_head']) and attention's QK^T / PV stay bf16
    for name in ("lm_head", "attention"):
        assert s[name].compute_time == pytest.approx(s[name].flops / H100_BF16, rel=1e-12)


def test_the_same_config_on_a100_runs_at_the_bf16_peak():
    m = get_model(str(DATA / "llama-3.1-8b-instruct-fp8-compressed-tensors.json"))
    assert m.compute_dtype == "fp8"   # w8a8 on a GPU with fp8 cores; A100 has none
    s = stages(m, "A100-SXM-80GB")
    for name in (*LINEAR, "lm_head", "attention"):
        assert s[name].compute_time == pytest.approx(s[name].flops / A100_BF16, rel=1e-12)


def test_weight_only_formats_stay_bf16():
    w4 = get_model(str(DATA / "llama-3.1-8b-instruct-quantized.w4a16.json"))
    assert w4.compute_dtype == "bf16"
    s = stages(w4, "H100-SXM")
    for name in LINEAR:
        assert s[name].compute_time == pytest.approx(s[name].flops / H100_BF16, rel=1e-12)


def _fp8_config(tmp_path, activations):
    cfg = json.loads((DATA / "llama-3.1-8b-instruct-fp8-compressed-tensors.json").read_text())
    group = next(iter(cfg["quantization_config"]["config_groups"].values()))
    group["input_activations"] = activations
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return path


def test_fp8_weights_with_16_bit_activations_are_weight_only(tmp_path):
    m = load_hf_config(_fp8_config(tmp_path, None))      # W8A16: FP8 Marlin
    assert (m.weight_dtype, m.compute_dtype) == ("fp8", "bf16")
    s = stages(m, "H100-SXM")
    assert s["mlp_up"].compute_time == pytest.approx(s["mlp_up"].flops / H100_BF16, rel=1e-12)
    with pytest.raises(UserError, match="input_activations of type 'float' with '8' bits"):
        load_hf_config(_fp8_config(tmp_path, {"type": "float", "num_bits": "8"}))


def test_llama_405b_mlp_runs_fp8_and_attention_projections_bf16():
    m = get_model("Llama-3.1-405B")
    s = stages(m, "H100-SXM", tp=8, batch=2)
    # Meta's FP8 recipe: the MLPs of layers 1..124 are fp8 (fbgemm rowwise fp8 GEMMs), the
    # first and last layers' MLPs bf16: the stage (per layer, averaged over the 126) spends
    # 124/126 of its FLOPs at the fp8 peak and 2/126 at the bf16 peak
    for name in ("mlp_up", "mlp_down"):
        f = s[name].flops
        assert s[name].compute_time == pytest.approx(
            f * 124 / 126 / H100_FP8 + f * 2 / 126 / H100_BF16, rel=1e-12)
    for name in ("qkv", "out_proj", "lm_head", "attention"):
        assert s[name].compute_time == pytest.approx(s[name].flops / H100_BF16, rel=1e-12)


def test_deepseek_v3_runs_its_linear_layers_in_fp8_with_expert_parallelism():
    m = get_model("DeepSeek-V3")
    par = Parallelism(tp=8, ep=8)
    grid = evaluate_grid(m, "H100-SXM", [par], [16], make_workload("prefill", prompt=512))
    names = list(grid.stages)
    for name in LINEAR:
        k = names.index(name)
        assert grid.compute_time[k, 0, 0] == pytest.approx(grid.flops[k, 0, 0] / H100_FP8,
                                                           rel=1e-12)
    k = names.index("lm_head")   # BF16 output head (Technical Report, Section 3.3.1)
    assert grid.compute_time[k, 0, 0] == pytest.approx(grid.flops[k, 0, 0] / H100_BF16,
                                                       rel=1e-12)


def test_compute_dtype_option_overrides_the_model():
    m = get_model("Llama-3.1-405B")
    bf16 = stages(m, "H100-SXM", RooflineOptions(compute_dtype="bf16"), tp=8, batch=2)
    auto = stages(m, "H100-SXM", tp=8, batch=2)
    for name in ("mlp_up", "mlp_down"):
        assert bf16[name].compute_time == pytest.approx(bf16[name].flops / H100_BF16,
                                                        rel=1e-12)
        assert auto[name].compute_time < 0.51 * bf16[name].compute_time
    fp8 = stages(m, "H100-SXM", RooflineOptions(compute_dtype="fp8"), tp=8, batch=2)
    for name in ("qkv", "attention", "mlp_up", "lm_head"):   # fp8 everywhere
        assert fp8[name].compute_time == pytest.approx(fp8[name].flops / H100_FP8, rel=1e-12)
    with pytest.raises(UserError, match="'A100-SXM-80GB' has no fp8 tensor cores"):
        stages(m, "A100-SXM-80GB", RooflineOptions(compute_dtype="fp8"), tp=8)


def test_flops_efficiency_scales_the_fp8_peak_alike():
    m = get_model("Llama-3.1-405B")
    half = stages(m, "H100-SXM", RooflineOptions(flops_efficiency=0.5), tp=8, batch=2)
    full = stages(m, "H100-SXM", tp=8, batch=2)
    assert half["mlp_up"].compute_time == pytest.approx(2 * full["mlp_up"].compute_time,
                                                        rel=1e-12)


def test_w8a8_compute_dtype_needs_fp8_weights():
    with pytest.raises(UserError, match="compute_dtype 'fp8' .w8a8. needs weights stored "
                                        "in fp8"):
        ModelSpec(name="m", layers=2, hidden=64, heads=4, kv_heads=4, head_dim=16, ffn=128,
                  vocab=100, compute_dtype="fp8")
    m = ModelSpec(name="m", layers=4, hidden=64, heads=4, kv_heads=4, head_dim=16, ffn=128,
                  vocab=100, mlp_weight_dtype="fp8", mlp_dtype_layers=3, compute_dtype="fp8")
    assert (m.fp8_gemm_share("mlp"), m.fp8_gemm_share("attention"),
            m.fp8_gemm_share("embedding")) == (0.75, 0.0, 0.0)
    assert np.isclose(m.mlp_weight_bytes, (3 * 1 + 2) / 4)


def test_an_engine_profile_scales_the_fp8_gemms_alike():
    p = get_profile("vllm-dgx-h100")
    assert not p.gemm_curve      # one gemm_efficiency for every GEMM
    cal = stages("Llama-3.1-405B", "H100-SXM", RooflineOptions(profile=p), tp=8, batch=2)
    f = cal["mlp_up"].flops
    assert cal["mlp_up"].compute_time == pytest.approx(
        (f * 124 / 126 / H100_FP8 + f * 2 / 126 / H100_BF16) / p.gemm_efficiency, rel=1e-12)
    assert cal["qkv"].compute_time == pytest.approx(
        cal["qkv"].flops / H100_BF16 / p.gemm_efficiency, rel=1e-12)


def test_deepseek_v3_prefill_decompresses_its_kv_in_fp8_and_decode_absorbs_in_bf16():
    # MLA prefill applies kv_b_proj, an fp8 block-quantized linear layer of the checkpoint,
    # to the latent (vLLM _forward_prefill, SGLang forward_normal: w8a8 block fp8 GEMM);
    # decode multiplies by W_UK and W_UV copies dequantized to bf16 at load (vLLM
    # process_weights_after_loading, SGLang block_quant_dequant). Per GPU at TP 16 x EP 16 x
    # DP-attention 16, batch 112 of 1,500-token prompts: the busiest group's 7 sequences,
    # 10,500 tokens, all 128 heads; c 512, d - r + v = 128 + 128, d + v = 192 + 128.
    m = get_model("DeepSeek-V3")
    kw = dict(tp=16, batch=112, ep=16, attention_dp=16)
    (pre,) = [s for s in evaluate(m, "H100-SXM", phase="prefill", **kw).stages
              if s.name == "attention"]
    decompress = 2 * 10500 * 128 * 512 * 256          # 352.3 GFLOP
    pairs = 7 * 1500 * 1501 // 2 * 128 * 2 * 320       # QK^T and PV, 645.6 GFLOP
    assert pre.flops == decompress + pairs
    assert pre.compute_time == pytest.approx(decompress / H100_FP8 + pairs / H100_BF16,
                                             rel=1e-12)   # 0.8305 ms, was 1.0086 at bf16
    (dec,) = [s for s in evaluate(m, "H100-SXM", phase="decode", **kw).stages
              if s.name == "attention"]
    assert dec.compute_time == pytest.approx(dec.flops / H100_BF16, rel=1e-12)
    (a100,) = [s for s in evaluate(m, "A100-SXM-80GB", phase="prefill", tp=8, batch=1,
                                   ep=8).stages if s.name == "attention"]
    assert a100.compute_time == pytest.approx(a100.flops / A100_BF16, rel=1e-12)
