"""Hostile and absurd input, round 6 (helper 68): quantized HF checkpoints (compressed-tensors,
modelopt and its hf_quant_config.json), the 2025 families of compute/hf_config.py (DBRX, the
refused hybrid/encoder-decoder layouts). Each bad input: one UserError line naming the value
and what is allowed; each valid one: the right model."""
import copy
import json
import os
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.hf_config import load_hf_config

DATA = Path(__file__).parent / "data"
W8A8 = json.loads((DATA / "hf_quantized" / "llama-3.1-8b-instruct-quantized.w8a8.json")
                  .read_text())
PLAIN = {k: v for k, v in W8A8.items() if k != "quantization_config"}
DBRX = json.loads((DATA / "hf_families" / "dbrx-instruct.json").read_text())


def write(tmp_path: Path, cfg) -> Path:
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    return p


def one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


# ---------------------------------------------------------------- modelopt quant_algo

@pytest.mark.parametrize("algo", [["NVFP4"], {"NVFP4": 1}])
def test_modelopt_quant_algo_of_a_list_or_table_is_refused(tmp_path, algo):
    # before: TypeError: unhashable type: 'list' (a traceback through the CLI)
    cfg = {**PLAIN, "quantization_config": {"quant_method": "modelopt", "quant_algo": algo}}
    with pytest.raises(UserError, match="quant_algo .* is not modelled; allowed: 'FP8', "
                                        "'NVFP4'") as e:
        load_hf_config(write(tmp_path, cfg))
    one_line(e)


@pytest.mark.parametrize("where,value", [("modelopt", 16.0), ("ct_group", 16.0),
                                         ("ct_bits", 8.0)])
def test_quant_counts_written_as_floats_are_refused(tmp_path, where, value):
    # before: 16.0 / 8.0 passed as 16 / 8 (every other integer key of a config refuses floats)
    if where == "modelopt":
        q = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": value}
    else:
        q = copy.deepcopy(W8A8["quantization_config"])
        w = q["config_groups"]["group_0"]["weights"]
        w.update(type="float", num_bits=4, strategy="tensor_group", group_size=16)
        w["group_size" if where == "ct_group" else "num_bits"] = value
    with pytest.raises(UserError, match="not modelled") as e:
        load_hf_config(write(tmp_path, {**PLAIN, "quantization_config": q}))
    one_line(e)


@pytest.mark.parametrize("kind,bits", [("bogus", 8), ("int", -8), ("int", 0),
                                       ("float", 10**6), (None, 8)])
def test_input_activations_of_unknown_type_or_absurd_bits_are_refused(tmp_path, kind, bits):
    # before: read as weight-only (bf16 GEMMs), exit 0, for type 'bogus' or -8 bits
    q = copy.deepcopy(W8A8["quantization_config"])
    q["config_groups"]["group_0"]["input_activations"].update(type=kind, num_bits=bits)
    with pytest.raises(UserError, match="input_activations of type .* allowed: type 'int' "
                                        "or 'float' with 1 to 32 bits") as e:
        load_hf_config(write(tmp_path, {**PLAIN, "quantization_config": q}))
    one_line(e)


def test_input_activations_of_sixteen_bits_are_weight_only(tmp_path):
    q = copy.deepcopy(W8A8["quantization_config"])
    q["config_groups"]["group_0"]["input_activations"].update(type="float", num_bits=16)
    m = load_hf_config(write(tmp_path, {**PLAIN, "quantization_config": q}))
    assert (m.weight_dtype, m.compute_dtype) == ("int8", "bf16")
    q["config_groups"]["group_0"]["input_activations"].update(type="int", num_bits=8)
    m = load_hf_config(write(tmp_path, {**PLAIN, "quantization_config": q}))
    assert (m.weight_dtype, m.compute_dtype) == ("int8", "int8")


# ---------------------------------------------------------------- hf_quant_config.json

def _dev_zero(p):
    p.symlink_to("/dev/zero")


def _fifo(p):
    os.mkfifo(p)


def _folder(p):
    p.mkdir()


def _broken(p):
    p.symlink_to(p.parent / "nowhere.json")


@pytest.mark.parametrize("make,needle", [
    (_dev_zero, "is not a regular file"), (_fifo, "is not a regular file"),
    (_folder, "it is a folder, not a file"), (_broken, "does not exist")])
def test_a_sidecar_that_is_not_a_file_is_refused(tmp_path, make, needle):
    # before: silently ignored, the checkpoint read as bf16 (16 GB) though the folder says
    # it is quantized
    cfg = write(tmp_path, PLAIN)
    make(tmp_path / "hf_quant_config.json")
    with pytest.raises(UserError, match=needle) as e:
        load_hf_config(cfg)
    assert "hf_quant_config.json" in one_line(e)


def test_a_regular_sidecar_is_read(tmp_path):
    cfg = write(tmp_path, PLAIN)
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"quantization": {"quant_algo": "NVFP4", "group_size": 16,
                          "exclude_modules": ["lm_head"]}}))
    m = load_hf_config(cfg)
    assert (m.weight_dtype, m.compute_dtype) == ("nvfp4", "fp4")


# ---------------------------------------------------------------- refused layouts

@pytest.mark.parametrize("value", ["true", "false", 1, "yes"])
def test_is_encoder_decoder_must_be_a_boolean(tmp_path, value):
    # before: 'true' (a string) and 1 were read as a decoder-only Llama, exit 0
    with pytest.raises(UserError, match="is_encoder_decoder must be true or false, got") as e:
        load_hf_config(write(tmp_path, {**PLAIN, "is_encoder_decoder": value}))
    one_line(e)


@pytest.mark.parametrize("key", ["linear_bias", "ssm_cfg", "mamba_d_state", "attn_config",
                                 "block_types"])
@pytest.mark.parametrize("value", [None, False, [], {}])
def test_an_unmodelled_key_set_to_nothing_is_not_refused(tmp_path, key, value):
    # before: any such key refused the model, even "ssm_cfg": null (HF: the feature absent)
    m = load_hf_config(write(tmp_path, {**PLAIN, key: value}))
    assert m.layers == 32 and m.kv_heads == 8


@pytest.mark.parametrize("key,value", [("linear_num_key_heads", 16), ("ssm_cfg", {"d": 1}),
                                       ("block_types", ["recurrent"])])
def test_an_unmodelled_key_with_a_value_is_still_refused(tmp_path, key, value):
    with pytest.raises(UserError, match=f"its config has '{key}'"):
        load_hf_config(write(tmp_path, {**PLAIN, key: value}))


# ---------------------------------------------------------------- DBRX nested tables

@pytest.mark.parametrize("value", [[], "", 0, False])
def test_dbrx_attn_config_that_is_not_a_table_is_refused(tmp_path, value):
    # before: an empty list (or any falsy value) read as {}: 48 KV heads, 134.11B
    with pytest.raises(UserError, match="attn_config must be a table") as e:
        load_hf_config(write(tmp_path, {**DBRX, "attn_config": value}))
    one_line(e)


def test_dbrx_missing_keys_take_hf_defaults(tmp_path):
    # HF DbrxAttentionConfig kv_n_heads=1; DbrxFFNConfig ffn_hidden_size=3584,
    # moe_num_experts=4, moe_top_k=1. Before: missing kv_n_heads read as 48 (MHA) and a
    # missing ffn_config as a dense model
    cfg = {k: v for k, v in DBRX.items() if k not in ("attn_config", "ffn_config")}
    m = load_hf_config(write(tmp_path, cfg))
    assert (m.kv_heads, m.experts, m.experts_per_token, m.ffn) == (1, 4, 1, 3584)
    # by hand: 40 layers x (attention 6144 x (48 + 2) x 128 + experts 4 x 3 x 6144 x 3584
    # + router 6144 x 4 + 2 norms x 6144) + 2 x 100352 x 6144 + final norm 6144
    attn = 6144 * 50 * 128 + 6144 * 6144
    per_layer = attn + 4 * 3 * 6144 * 3584 + 6144 * 4 + 2 * 6144
    assert m.parameters == pytest.approx(40 * per_layer + 2 * 100352 * 6144 + 6144, rel=1e-6)


# ---------------------------------------------------------------- GPU-file int8 / fp4 rows

GPU = """[gpu.X]
sms = 132
bf16_dense_TFLOPs = 989.4
hbm_capacity_GB = 80
hbm_bandwidth_TBps = 3.35
scaleup_GBps_per_direction = 450
scaleout_Gbps = 400
tdp_W = 700
max_instance = 8
source = "test"
"""


@pytest.mark.parametrize("row,needle", [
    # before: "int8_dense_TOPs must be a table of keys, got 5000" (not what is allowed)
    ("int8_dense_TOPs = 5000", "int8_dense_TOPs must be a table (a row {value, unit = "
                               "'TOPS', source, confidence}), got 5000"),
    # before: "... must be a row {...}, got a table of 3 keys" (not the unit given)
    ('fp4_dense_TFLOPs = {value = 5, unit = "PFLOPS", source = "s"}',
     "fp4_dense_TFLOPs must be a row {value, unit = 'TFLOPS', source, confidence}, got unit "
     "'PFLOPS' (allowed: 'TFLOPS')"),
    ('int8_dense_TOPs = {value = 5, unit = "TOPS", source = "s", sparse = true}',
     "got unknown key(s) sparse"),
    ('int8_dense_TOPs = {value = 5, unit = "TOPS", source = 3}',
     "source (where the number comes from) is text, got source 3"),
])
def test_gpu_file_peak_rows_say_what_is_wrong(tmp_path, row, needle):
    from compute.hardware import load_gpu_file
    p = tmp_path / "g.toml"
    p.write_text(GPU + row + "\n")
    with pytest.raises(UserError) as e:
        load_gpu_file(p)
    assert needle in one_line(e)


def test_gpu_file_peak_rows_are_read(tmp_path):
    from compute.hardware import load_gpu_file
    p = tmp_path / "g.toml"
    p.write_text(GPU + 'int8_dense_TOPs = {value = 1979, unit = "TOPS", source = "s"}\n'
                 'fp4_dense_TFLOPs = {value = 0, unit = "TFLOPS", source = "none"}\n')
    g = load_gpu_file(p)["X"]
    assert (g.flops_int8, g.flops_fp4, g.flops_fp8) == (1979e12, 0.0, 0.0)


@pytest.mark.parametrize("field", ["flops_int8", "flops_fp4", "flops_fp8"])
def test_saved_gpu_type_of_negative_peak_says_zero_is_allowed(field):
    # before: "must be a finite number > 0", though 0 (no such tensor cores) is accepted
    from compute.hardware import get_gpu
    from topologies.schema_gpu import gpu_spec_from_dict
    data = {**get_gpu("H100-SXM").to_dict(), "name": "Mine", field: -1}
    with pytest.raises(UserError, match=f"{field} must be a finite number >= 0 "
                                        r"\(SI units\), got -1"):
        gpu_spec_from_dict("Mine", data)
    assert gpu_spec_from_dict("Mine", {**data, field: 0}).peak_flops("bf16") == 989.4e12


# ---------------------------------------------------------------- one checkpoint, one answer

def test_a_model_path_reads_the_modelopt_sidecar_as_hf_config_does(tmp_path):
    # before: get_model('.../config.json') (the --model/--models of compare, cost, serve,
    # sweep) skipped hf_quant_config.json: an NVFP4 checkpoint read as bf16 (16 GB, prefill
    # at the bf16 peak: 1,058.8 tok/s/SM on B200 in compare) where --hf-config read it as
    # NVFP4 (6.03 GB, fp4 peak: 3,909.7)
    from compute.models import get_model
    cfg = write(tmp_path, PLAIN)
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"quantization": {"quant_algo": "NVFP4", "group_size": 16,
                          "exclude_modules": ["lm_head"]}}))
    by_path, by_folder = get_model(str(cfg)), load_hf_config(tmp_path)
    assert by_path == by_folder
    assert (by_path.weight_dtype, by_path.compute_dtype) == ("nvfp4", "fp4")
    # 4.5 bits a linear weight (e2m1 + an fp8 scale per 16), the 16-bit embedding and head
    linear = by_path.parameters - 2 * 128256 * 4096 - (2 * 32 + 1) * 4096
    assert by_path.weight_storage_bytes == pytest.approx(
        linear * 4.5 / 8 + 2 * 128256 * 4096 * 2 + (2 * 32 + 1) * 4096 * 2, rel=1e-3)
    (tmp_path / "hf_quant_config.json").unlink()
    (tmp_path / "hf_quant_config.json").mkdir()
    with pytest.raises(UserError, match="it is a folder, not a file"):
        get_model(str(cfg))
