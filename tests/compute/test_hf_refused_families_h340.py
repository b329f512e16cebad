"""Model types 84fb3ef's unknown-type refusal turned away though the reader had read them
right before (helper h340's review): SmolLM3 (smollm3), GLM-4-0414 (glm4), OLMo-3 (olmo3),
Qwen3-VL's language model (qwen3_vl_text) and EXAONE-3.5 (exaone) were read Llama-style
from their keys (SmolLM3 and EXAONE-3.5 exactly; GLM-4-0414 two norms a layer short; OLMo-3 and Qwen3-VL without their
Q/K norms) and after it were refused as 'not a family netmodel reads'. Each now has its
family (compute.hf_families.HF_FAMILIES) and reads as its HF code builds it.

The configs carry the shapes of HuggingFaceTB/SmolLM3-3B, THUDM/GLM-4-32B-0414 and an
OLMo-3-7B-shaped config as their config.json files give them (written from the hub pages,
not copied from a stored file: unverified); every count below is a hand derivation from
the dims in the dict, so it holds whatever the published files say.
"""

from __future__ import annotations

from tests.compute.hf_helpers import write

SMOLLM3_3B = {
    "architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3", "hidden_act": "silu",
    "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
    "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 128256,
    "max_position_embeddings": 65536, "attention_bias": False, "mlp_bias": False,
    "no_rope_layer_interval": 4, "sliding_window": None, "use_sliding_window": False,
    "rms_norm_eps": 1e-6, "rope_theta": 5e6,
}
GLM4_32B_0414 = {
    "architectures": ["Glm4ForCausalLM"], "model_type": "glm4", "hidden_act": "silu",
    "hidden_size": 6144, "intermediate_size": 23040, "num_hidden_layers": 61,
    "num_attention_heads": 48, "num_key_value_heads": 2, "head_dim": 128,
    "vocab_size": 151552, "max_position_embeddings": 32768, "attention_bias": True,
    "partial_rotary_factor": 0.5, "tie_word_embeddings": False, "rms_norm_eps": 1e-5,
}
OLMO3_7B = {
    "architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 100278,
    "max_position_embeddings": 65536, "attention_bias": False, "tie_word_embeddings": False,
    "sliding_window": 4096,
    "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 8,
}


def test_smollm3_reads_as_llama_layers_with_tied_embeddings(tmp_path):
    # Llama's layer: Q and O 2048^2 each, K and V 2048 x (4 x 128) each, SwiGLU 3 x 2048 x
    # 11008, two RMSNorms of 2048; NoPE layers have no weights; SmolLM3Config's
    # tie_word_embeddings default true (the dict leaves it out): one 128256 x 2048 table
    layer = 2 * 2048**2 + 2 * 2048 * 512 + 3 * 2048 * 11008 + 2 * 2048
    assert layer == 78_123_008
    m = write(tmp_path, SMOLLM3_3B)
    assert m.parameters == 36 * layer + 2048 + 128256 * 2048 == 3_075_098_624
    assert m.sliding_window == 0


def test_glm4_0414_has_four_norms_a_layer_and_no_o_bias(tmp_path):
    # Glm4Attention: Q, K, V biased (attention_bias), o_proj not; Glm4MLP gate_up 2 x 23040
    # and down; Glm4DecoderLayer's four RMSNorms of 6144; untied 151552 x 6144 twice
    q, kv = 6144 * 6144 + 6144, 2 * (6144 * 256 + 256)
    layer = q + kv + 6144 * 6144 + 3 * 6144 * 23040 + 4 * 6144
    assert layer == 503_347_712
    m = write(tmp_path, GLM4_32B_0414)
    assert m.parameters == 61 * layer + 6144 + 2 * 151552 * 6144 == 32_566_487_552


def test_olmo3_reads_as_olmo2_with_its_windowed_layers(tmp_path):
    # Olmo2's layer: Q, K, V, O 4096^2 each (32 KV heads), SwiGLU 3 x 4096 x 11008, two
    # post-norms of 4096 and q_norm/k_norm over the whole 4096-wide Q and K
    layer = 4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096 + 2 * 4096
    assert layer == 202_391_552
    m = write(tmp_path, OLMO3_7B)
    assert m.parameters == 32 * layer + 4096 + 2 * 100278 * 4096 == 7_298_011_136
    assert (m.sliding_window, m.sliding_layers) == (4096, 24)   # 3 of every 4 of 32


def test_qwen3_vl_reads_its_qwen3_language_model(tmp_path):
    # Qwen3-VL-8B's text_config (model_type qwen3_vl_text) has Qwen3-8B's shape: Q and O
    # 4096^2, K and V 4096 x (8 x 128), SwiGLU 3 x 4096 x 12288, two RMSNorms of 4096 and
    # Qwen3's q_norm/k_norm of head_dim 128; untied 151936 x 4096 twice. Before 84fb3ef it
    # read without the Q/K norms (8,190,726,144); after it, refused
    text = {"model_type": "qwen3_vl_text", "hidden_act": "silu", "hidden_size": 4096,
            "intermediate_size": 12288, "num_hidden_layers": 36, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
            "max_position_embeddings": 262144, "tie_word_embeddings": False}
    layer = 2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 12288 + 2 * 4096 + 2 * 128
    assert layer == 192_946_432
    m = write(tmp_path, {"model_type": "qwen3_vl", "text_config": text,
                         "architectures": ["Qwen3VLForConditionalGeneration"]})
    assert m.parameters == 36 * layer + 4096 + 2 * 151936 * 4096 == 8_190_735_360


def test_exaone_3_5_reads_as_llama_layers_under_gpt2_names(tmp_path):
    # EXAONE-3.5-7.8B's shape: num_layers 32, activation_function silu (SwiGLU c_fc_0/c_fc_1
    # and c_proj), 32 heads and 8 KV heads of 128, no biases, two RMSNorms, untied 102400 x
    # 4096 twice. Before 84fb3ef it read so from its keys; after it, refused
    cfg = {"architectures": ["ExaoneForCausalLM"], "model_type": "exaone",
           "activation_function": "silu", "hidden_size": 4096, "intermediate_size": 14336,
           "num_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "head_dim": 128, "vocab_size": 102400, "max_position_embeddings": 32768,
           "tie_word_embeddings": False}
    layer = 2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert layer == 218_112_000
    m = write(tmp_path, cfg)
    assert m.parameters == 32 * layer + 4096 + 2 * 102400 * 4096 == 7_818_448_896


def test_qwen2_5_vl_nested_as_newer_transformers_save_it_reads_as_the_flat_file(tmp_path):
    # transformers' Qwen2_5_VLConfig saves the language model in text_config, typed
    # qwen2_5_vl_text; the published flat config.json holds it at the top. One model, two
    # layouts: one count (before: the nested one refused as 'not a family netmodel reads')
    from tests.compute.hf_helpers import fixture

    flat = fixture("qwen2.5-vl-7b-instruct")
    text = {k: v for k, v in flat.items() if k not in ("vision_config", "architectures")}
    nested = {"model_type": "qwen2_5_vl", "architectures": flat["architectures"],
              "vision_config": flat["vision_config"],
              "text_config": {**text, "model_type": "qwen2_5_vl_text"}}
    a, b = write(tmp_path, flat), write(tmp_path, nested)
    assert (b.parameters, b.vision_parameters) == (a.parameters, a.vision_parameters)
    # Qwen2-7B's layers with Q/K/V biases, 28 x (2 x 3584^2 + 2 x 3584 x 512 + 4608
    # + 3 x 3584 x 18944 + 2 x 3584) + 3584 + 2 x 152064 x 3584
    layer = 2 * 3584**2 + 2 * 3584 * 512 + (3584 + 2 * 512) + 3 * 3584 * 18944 + 2 * 3584
    assert b.parameters == 28 * layer + 3584 + 2 * 152064 * 3584 == 7_615_616_512


def test_glm4v_text_has_glm4s_layers_with_qkv_biases_always(tmp_path):
    # GLM-4.1V-9B's shape: 40 layers of 4096, 32 heads and 2 KV heads of 128, SwiGLU 13696;
    # Glm4vTextAttention's Q, K and V carry biases (bias=True, not config.attention_bias),
    # O none; four RMSNorms a layer; untied 151552 x 4096 twice. Before 84fb3ef: read
    # Llama-style (no biases, two norms); after it, refused
    text = {"model_type": "glm4v_text", "hidden_act": "silu", "hidden_size": 4096,
            "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32,
            "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 151552,
            "max_position_embeddings": 65536, "tie_word_embeddings": False}
    layer = (4096 * 4096 + 4096) + 2 * (4096 * 256 + 256) + 4096 * 4096 \
        + 3 * 4096 * 13696 + 4 * 4096
    assert layer == 203_969_024
    for bias in ({}, {"attention_bias": True}):   # the key changes nothing
        m = write(tmp_path, {"model_type": "glm4v", "architectures": [
            "Glm4vForConditionalGeneration"], "text_config": {**text, **bias}})
        assert m.parameters == 40 * layer + 4096 + 2 * 151552 * 4096 == 9_400_279_040
