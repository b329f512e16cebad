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
