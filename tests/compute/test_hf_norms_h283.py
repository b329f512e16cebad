"""Norms counted as each family's code builds them (helper h283): ``ModelSpec.layer_norms``
(norms over the hidden width a layer: Gemma-2 and Gemma-3 four, Falcon-7B one, the rest
two) and ``ModelSpec.qk_norm`` (Qwen3's and Gemma-3's q_norm and k_norm over head_dim).
Before, every model had two norms a layer and no Q/K norms: Gemma-2-9B 301,056 low,
Gemma-3-1B 73,216 low, Falcon-7B 290,816 high, Qwen3-8B 9,216 low (updated tests:
test_sliding_window, test_hfaudit_published, test_hf_families, test_hf_2025_audit).
Here: the published totals to the parameter, and weight memory at TP 1 holding every
parameter once.
"""

from __future__ import annotations

import dataclasses

import pytest

from compute.errors import UserError
from compute.memory import weight_bytes
from compute.models import get_model
from compute.sharding import shards
from tests.compute.hf_helpers import LLAMA3_8B, read, write


def test_llama_31_8b_two_norms_is_exact(tmp_path):
    """Guard (passes before and after): Llama-3.1-8B's 8,030,261,248 (its safetensors, and
    Meta's card's 8.03B): two RMSNorms a layer and a final one are its only norms."""
    m = write(tmp_path, {**LLAMA3_8B, "max_position_embeddings": 131072})
    assert m.layer_norms == 2 and m.qk_norm == 0
    layer = 4096 * (32 + 2 * 8) * 128 + 32 * 128 * 4096 + 3 * 4096 * 14336 + 2 * 4096
    assert m.parameters == 32 * layer + 2 * 128256 * 4096 + 4096 == 8_030_261_248


def test_qwen3_8b_is_its_safetensors_total():
    """Qwen/Qwen3-8B's model.safetensors.index.json: total_size 16,381,470,720 bytes of
    bf16, 8,190,735,360 parameters; before, 8,190,726,144."""
    m = read("qwen3-8b")
    assert m.qk_norm == 256
    assert m.parameters * 2 == 16_381_470_720


def test_gemma3_27b_text_and_tower_make_the_published_total():
    """google/gemma-3-27b-it, 27,432,406,640 parameters on its model page: the language
    model (four norms a layer, Q/K norms) and the SigLIP tower with its projector; before,
    the language model read 27,008,663,808."""
    m = read("gemma-3-27b-it")
    assert m.parameters == 27_009_346_304
    assert m.parameters + 423_060_336 == 27_432_406_640   # the tower: test_vision_towers_h283


@pytest.mark.parametrize("name", ["qwen3-8b", "qwen3-30b-a3b", "gemma-3-27b-it",
                                  "falcon-180b", "llama-3.2-1b"])
def test_weight_memory_at_tp1_holds_every_parameter_once(name):
    m = read(name)
    w = weight_bytes(m, shards(m, [1]))
    assert float(w[0, 0]) == (m.parameters + m.vision_parameters) * m.weight_bytes


def test_cohere_one_norm_a_layer_is_aya_expanse_8b(tmp_path):
    """CohereDecoderLayer holds one weight-only LayerNorm (attention and MLP in parallel):
    CohereForAI/aya-expanse-8b (model_type cohere; 32 layers, hidden 4096, 32 heads, 8 KV
    heads, SwiGLU 14336, vocabulary 256000, tied) publishes 8,028,033,024 parameters;
    before, two norms a layer: 8,028,164,096."""
    m = write(tmp_path, {"model_type": "cohere", "architectures": ["CohereForCausalLM"],
                         "hidden_size": 4096, "intermediate_size": 14336,
                         "num_hidden_layers": 32, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "vocab_size": 256000,
                         "use_qk_norm": False})
    assert (m.layer_norms, m.qk_norm, m.tied_embeddings) == (1, 0, True)
    assert m.parameters == 8_028_033_024


def test_command_r_plus_per_head_qk_norms():
    """use_qk_norm (command-r-plus): CohereAttention's q_norm and k_norm are LayerNorm scales
    of (heads, head_dim) and (kv_heads, head_dim): (96 + 8) x 128 a layer (no published
    figure to the parameter was at hand; HF's card rounds to 104B)."""
    m = read("command-r-plus")
    assert m.qk_norm == (96 + 8) * 128
    assert round(m.parameters / 1e9) == 104


def test_olmoe_qk_norms_over_the_whole_width():
    """OlmoeAttention's q_norm (hidden) and k_norm (kv_heads x head_dim): 2 x 2048 a layer.
    allenai/OLMoE-1B-7B-0924's safetensors: 6,919,161,856 parameters; before, 6,919,096,320."""
    m = read("olmoe-1b-7b-0924")
    assert m.qk_norm == 2 * 2048
    assert m.parameters == 6_919_161_856


def test_olmo2_7b(tmp_path):
    """allenai/OLMo-2-1124-7B (32 layers, hidden 4096, 32 heads and KV heads, SwiGLU 11008,
    vocabulary 100352, untied): its safetensors total 7,298,617,344, with Olmo2Attention's
    q_norm and k_norm over 4096 each; before, 7,298,355,200."""
    m = write(tmp_path, {"model_type": "olmo2", "architectures": ["Olmo2ForCausalLM"],
                         "hidden_size": 4096, "intermediate_size": 11008,
                         "num_hidden_layers": 32, "num_attention_heads": 32,
                         "num_key_value_heads": 32, "vocab_size": 100352,
                         "tie_word_embeddings": False, "hidden_act": "silu",
                         "max_position_embeddings": 4096})
    assert (m.qk_norm, m.layer_norms, m.gated_mlp) == (2 * 4096, 2, True)
    assert m.parameters == 7_298_617_344


#: tiiuae/falcon-40b's config.json as first published for its remote RefinedWeb code
#: (model_type RefinedWeb, n_head / n_head_kv / n_layer); the same model as
#: test_hf_configs.FALCON_40B's "falcon" spelling
FALCON_40B_RW = {"alibi": False, "apply_residual_connection_post_layernorm": False,
                 "architectures": ["RWForCausalLM"], "bias": False, "hidden_size": 8192,
                 "layer_norm_epsilon": 1e-05, "model_type": "RefinedWeb", "n_head": 128,
                 "n_head_kv": 8, "n_layer": 60, "parallel_attn": True,
                 "torch_dtype": "bfloat16", "vocab_size": 65024}


def test_falcon_40b_rw_spelling_reads_as_the_falcon_one(tmp_path):
    """RW's n_head_kv is the new decoder architecture for the KV heads and the norms alike
    (one fact, compute.hf_layouts.new_decoder): ln_attn and ln_mlp, LayerNorms of scale and
    shift over 8192. Before (h294's review), the KV heads read 8 but the norms one a layer:
    41,302,310,912, 60 x 2 x 8192 = 983,040 below the falcon spelling's 41,303,293,952."""
    m = write(tmp_path, FALCON_40B_RW)
    assert (m.kv_heads, m.layer_norms) == (8, 2)
    layer = 8192 * (8192 + 2 * 8 * 64) + 8192 ** 2 + 2 * 8192 * 32768 + 2 * 2 * 8192
    assert m.parameters == 65024 * 8192 + 60 * layer + 2 * 8192 == 41_303_293_952


@pytest.mark.parametrize("keys, norms", [
    ({}, 1),                                                        # Falcon-7B
    ({"parallel_attn": False}, 2),                                  # input + post-attention
    ({"num_ln_in_parallel_attn": 2}, 2),          # HF: ln_attn, ln_mlp whatever the architecture
    ({"new_decoder_architecture": True}, 2),                        # None -> 2
    ({"new_decoder_architecture": True, "num_ln_in_parallel_attn": 1}, 1),   # Falcon2-11B
    ({"new_decoder_architecture": True, "parallel_attn": False,
      "num_ln_in_parallel_attn": 1}, 2),
])
def test_falcon_norms_follow_hf_falcon_decoder_layer(tmp_path, keys, norms):
    """HF FalconDecoderLayer: two norms unless parallel_attn; with it, num_ln_in_parallel_attn
    (None: 2 under new_decoder_architecture, else 1). Before, num_ln_in_parallel_attn 2
    without new_decoder_architecture read one norm."""
    cfg = {"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71,
           "num_hidden_layers": 32, "vocab_size": 65024, **keys}
    assert write(tmp_path, cfg).layer_norms == norms


def test_falcon_num_ln_out_of_range_is_refused(tmp_path):
    cfg = {"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71,
           "num_hidden_layers": 32, "vocab_size": 65024, "num_ln_in_parallel_attn": 3}
    with pytest.raises(UserError) as e:
        write(tmp_path, cfg)
    assert "num_ln_in_parallel_attn" in str(e.value) and "\n" not in str(e.value)


def test_qk_norm_with_mla_is_refused():
    """An MLA model counts its latents' norms from kv_lora_rank and q_lora_rank; a qk_norm
    beside them was taken and counted nowhere (DeepSeek-V3 with qk_norm 256: 0 parameters
    more, in ModelSpec.parameters and weight memory alike). Now one line naming it."""
    m = get_model("DeepSeek-V3")
    with pytest.raises(UserError) as e:
        dataclasses.replace(m, qk_norm=256)
    msg = str(e.value)
    assert "qk_norm (256) with multi-head latent attention" in msg and "\n" not in msg
    assert dataclasses.replace(m, qk_norm=0).parameters == m.parameters
