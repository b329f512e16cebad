"""Configs whose global and windowed layers keep KV caches of different shapes are refused in
one line naming the key, whatever their model_type says.

Before, Gemma 4's text config was refused only as an unknown model_type, and the same keys
under a type the reader knows, or under none (read from its keys, Llama-style), were dropped
without a word: a Gemma 4 config typed gemma3_text read as 6.24B with every layer's KV 8 x
256 (its 6 global layers keep 4 x 512, K shared with V), and a MiMo-V2-Flash config without
a model_type read as 212.6B with all 48 layers windowed at 8 KV heads of 192 (its
hybrid_layer_pattern makes some full-attention layers of 4 KV heads; the windowed ones have
8 of their own, swa_num_key_value_heads). netmodel's layers have one KV shape.

The keys: HF transformers' Gemma4TextConfig (num_global_key_value_heads, global_head_dim,
attention_k_eq_v; the 36-layer text config below as public repositories' tests embed it)
and Xiaomi's MiMo-V2-Flash config (swa_num_attention_heads, swa_num_key_value_heads,
swa_head_dim, swa_v_head_dim, hybrid_layer_pattern; the defaults of its
MiMoV2FlashConfig).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from tests.compute.hf_helpers import LLAMA3_8B, write, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

GEMMA4_TEXT = {"model_type": "gemma4_text", "hidden_size": 3072, "num_hidden_layers": 36,
               "intermediate_size": 12288, "num_attention_heads": 16, "num_key_value_heads": 8,
               "head_dim": 256, "global_head_dim": 512, "num_global_key_value_heads": 4,
               "vocab_size": 262144, "sliding_window": 1024, "attention_k_eq_v": True,
               "final_logit_softcapping": 30.0, "sliding_window_pattern": 6}
MIMO_V2 = {"architectures": ["MiMoV2FlashForCausalLM"], "hidden_size": 4096,
           "num_hidden_layers": 48, "num_attention_heads": 64, "num_key_value_heads": 4,
           "head_dim": 192, "v_head_dim": 128, "swa_num_attention_heads": 64,
           "swa_num_key_value_heads": 8, "swa_head_dim": 192, "swa_v_head_dim": 128,
           "intermediate_size": 16384, "moe_intermediate_size": 2048, "n_routed_experts": 256,
           "num_experts_per_tok": 8, "vocab_size": 152576, "sliding_window": 128,
           "hybrid_layer_pattern": [0] + [1] * 47}


def test_gemma4_is_refused_by_its_type_naming_its_global_layers(tmp_path):
    for cfg in (GEMMA4_TEXT, {"model_type": "gemma4", "text_config": GEMMA4_TEXT}):
        with pytest.raises(UserError) as e:
            write(tmp_path, cfg)
        assert "model_type 'gemma4_text' is Gemma 4" in str(e.value)
        assert "num_global_key_value_heads, global_head_dim" in str(e.value)


@pytest.mark.parametrize("model_type, key", [
    ("gemma3_text", "global_head_dim"),   # before: read, 6,241,588,224 parameters
    (None, "global_head_dim"),            # before: read Llama-style, 5,687,700,480
])
def test_gemma4_keys_are_refused_under_another_type(tmp_path, model_type, key):
    cfg = {k: v for k, v in GEMMA4_TEXT.items() if k != "model_type"}
    if model_type:
        cfg["model_type"] = model_type
    with pytest.raises(UserError, match=f"its config has '{key}'"):
        write(tmp_path, cfg)


@pytest.mark.parametrize("model_type", [None, "qwen2", "mimo_v2_flash"])
def test_mimo_v2_windowed_layers_of_their_own_shape_are_refused(tmp_path, model_type):
    # before (no model_type): 212,592,889,856 parameters, 48 layers windowed at 8 x 192;
    # typed qwen2: 315.67B, no window
    cfg = dict(MIMO_V2) if model_type is None else {**MIMO_V2, "model_type": model_type}
    with pytest.raises(UserError, match="its config has 'swa_num_attention_heads'"):
        write(tmp_path, cfg)


def test_the_refusal_is_one_line_and_exit_2(tmp_path):
    path = write_config(tmp_path, {**GEMMA4_TEXT, "model_type": "gemma3_text"})
    one_line_error(run_cli(["infer", "--hf-config", path, "--gpu", "H100-SXM", "--tp", "1",
                            "--batch", "1"]), "its config has 'global_head_dim'")


@pytest.mark.parametrize("key, value", [("num_global_key_value_heads", None),
                                        ("attention_k_eq_v", False), ("swa_head_dim", None),
                                        ("hybrid_layer_pattern", [])])
def test_the_keys_null_false_or_empty_are_absent(tmp_path, key, value):
    # Gemma 4 configs write num_global_key_value_heads null and attention_k_eq_v false
    # where the layers are alike: a Llama-3-8B with them reads as before
    assert write(tmp_path, {**LLAMA3_8B, key: value}).parameters == 8_030_261_248
