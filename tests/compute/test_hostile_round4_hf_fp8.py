"""Hostile fp8 HuggingFace configs (round 4): modules_to_not_convert of odd shapes and
quant_method of the wrong type are refused in one line; none raises anything else."""
import json

import pytest

from compute.errors import UserError
from compute.models import load_hf_config

BASE = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 1024,
        "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 4096,
        "vocab_size": 32000, "torch_dtype": "bfloat16"}


def _write(tmp_path, quant):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**BASE, "quantization_config": quant}))
    return p


@pytest.mark.parametrize("skip, match", [
    (False, "got False"),                      # was read as [] (every module fp8)
    (0, "got 0"),
    (["model.layers.0.self_attn", "model.layers." + "9" * 5000 + ".mlp"],
     "layers are 0 to 3"),                     # was a ValueError traceback (int of 5000 digits)
    (["model.layers.0.self_attn", "model.layers.4.mlp"], "'model.layers.4.mlp'"),
    (["model.layers.0.self_attn", "model.layers.999.mlp"], "layers are 0 to 3"),
])
def test_bad_modules_to_not_convert_refused(tmp_path, skip, match):
    p = _write(tmp_path, {"quant_method": "fbgemm_fp8", "modules_to_not_convert": skip})
    with pytest.raises(UserError, match=match) as e:
        load_hf_config(p)
    assert "\n" not in str(e.value)


def test_non_string_quant_method_refused(tmp_path):
    p = _write(tmp_path, {"quant_method": ["fp8"]})  # was silently read as bf16
    with pytest.raises(UserError, match="quant_method must be text"):
        load_hf_config(p)


def test_layer_indices_read_as_ascii_decimal(tmp_path):
    # "00" is layer 0 again, "1.mlp.gate_proj" keeps layer 1, a superscript or non-ASCII
    # digit names no decoder layer (int('²') would raise): 4 - |{0, 1}| = 2 fp8 MLPs
    skip = ["model.layers.0.self_attn", "model.layers.00.mlp", "model.layers.0.mlp",
            "model.layers.1.mlp.gate_proj", "model.layers.\u0663.mlp", "model.layers.\u00b2.mlp"]
    m = load_hf_config(_write(tmp_path, {"quant_method": "fp8", "modules_to_not_convert": skip}))
    assert (m.weight_dtype, m.mlp_weight_dtype, m.mlp_dtype_layers) == ("bf16", "fp8", 2)


def test_null_modules_to_not_convert_is_all_fp8(tmp_path):
    m = load_hf_config(_write(tmp_path, {"quant_method": "fp8", "modules_to_not_convert": None}))
    assert (m.weight_dtype, m.mlp_weight_dtype) == ("fp8", "")


def test_kept_mlps_without_attention_stay_in_bf16(tmp_path):
    # every linear layer fp8 but layer 0's MLP (it was read as all fp8, the list ignored):
    # 132,654,080 parameters at 1 B, plus layer 0's MLP (3 x 1024 x 4096) at 1 B more, plus
    # the embedding and LM head (2 x 32000 x 1024), kept in bf16 by fp8 releases, 1 B more
    m = load_hf_config(_write(tmp_path, {"quant_method": "fp8",
                                         "modules_to_not_convert": ["model.layers.0.mlp"]}))
    assert (m.weight_dtype, m.mlp_weight_dtype, m.mlp_dtype_layers) == ("fp8", "bf16", 1)
    assert m.weight_storage_bytes == 132_654_080 + 3 * 1024 * 4096 + 2 * 32000 * 1024


def test_layer_beyond_the_model_refused_without_attention_too(tmp_path):
    p = _write(tmp_path, {"quant_method": "fp8", "modules_to_not_convert": ["model.layers.9.mlp"]})
    with pytest.raises(UserError, match="layers are 0 to 3"):
        load_hf_config(p)
