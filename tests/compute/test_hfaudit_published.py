"""The HuggingFace config.json reader against published parameter counts of real models.

Each config below holds the architecture fields of the model's published config.json
(huggingface.co/<org>/<model>/blob/main/config.json; bookkeeping keys such as token ids left
out). Published totals are the safetensors parameter totals shown on each model's HF page,
or the model card's rounded figure where noted. KV bytes per token are by hand:
layers x kv_heads x head_dim x 2 (K, V) x 2 bytes (bf16); MLA: layers x (kv_lora_rank +
qk_rope_head_dim) x 2 bytes.
"""

import json

import pytest

from compute.models import load_hf_config

LLAMA = dict(model_type="llama", hidden_act="silu", attention_bias=False, mlp_bias=False,
             max_position_embeddings=131072, vocab_size=128256, torch_dtype="bfloat16")
CONFIGS = {
    "Llama-3.2-1B": dict(LLAMA, hidden_size=2048, intermediate_size=8192,
                         num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                         head_dim=64, tie_word_embeddings=True),
    "Llama-3.2-3B": dict(LLAMA, hidden_size=3072, intermediate_size=8192,
                         num_hidden_layers=28, num_attention_heads=24, num_key_value_heads=8,
                         head_dim=128, tie_word_embeddings=True),
    "Mistral-7B-v0.1": dict(model_type="mistral", hidden_size=4096, intermediate_size=14336,
                            num_hidden_layers=32, num_attention_heads=32,
                            num_key_value_heads=8, vocab_size=32000, sliding_window=4096,
                            max_position_embeddings=32768, tie_word_embeddings=False,
                            hidden_act="silu", torch_dtype="bfloat16"),
    "Qwen2-7B": dict(model_type="qwen2", hidden_size=3584, intermediate_size=18944,
                     num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
                     vocab_size=152064, tie_word_embeddings=False, use_sliding_window=False,
                     max_position_embeddings=131072, hidden_act="silu",
                     torch_dtype="bfloat16"),
    "Qwen2.5-72B": dict(model_type="qwen2", hidden_size=8192, intermediate_size=29568,
                        num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=8,
                        vocab_size=152064, tie_word_embeddings=False, use_sliding_window=False,
                        max_position_embeddings=131072, hidden_act="silu",
                        torch_dtype="bfloat16"),
    # google/gemma-2-9b: no tie_word_embeddings key (Gemma2Config's default is True)
    "gemma-2-9b": dict(model_type="gemma2", attention_bias=False, head_dim=256,
                       hidden_act="gelu_pytorch_tanh", hidden_activation="gelu_pytorch_tanh",
                       hidden_size=3584, intermediate_size=14336, max_position_embeddings=8192,
                       num_attention_heads=16, num_hidden_layers=42, num_key_value_heads=8,
                       query_pre_attn_scalar=256, sliding_window=4096,
                       attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                       cache_implementation="hybrid", torch_dtype="float32",
                       vocab_size=256000),
    "Phi-3-mini-4k-instruct": dict(model_type="phi3", hidden_size=3072,
                                   intermediate_size=8192, num_hidden_layers=32,
                                   num_attention_heads=32, num_key_value_heads=32,
                                   vocab_size=32064, tie_word_embeddings=False,
                                   sliding_window=2047, max_position_embeddings=4096,
                                   hidden_act="silu", torch_dtype="bfloat16"),
    "Mixtral-8x22B-v0.1": dict(model_type="mixtral", hidden_size=6144, intermediate_size=16384,
                               num_hidden_layers=56, num_attention_heads=48,
                               num_key_value_heads=8, num_local_experts=8,
                               num_experts_per_tok=2, vocab_size=32000,
                               tie_word_embeddings=False, max_position_embeddings=65536,
                               sliding_window=None, hidden_act="silu", torch_dtype="bfloat16"),
    "DeepSeek-V2-Lite": dict(model_type="deepseek_v2", hidden_size=2048,
                             intermediate_size=10944, moe_intermediate_size=1408,
                             num_hidden_layers=27, num_attention_heads=16,
                             num_key_value_heads=16, kv_lora_rank=512, q_lora_rank=None,
                             qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                             n_routed_experts=64, n_shared_experts=2, num_experts_per_tok=6,
                             first_k_dense_replace=1, moe_layer_freq=1, vocab_size=102400,
                             tie_word_embeddings=False, max_position_embeddings=163840,
                             hidden_act="silu", torch_dtype="bfloat16"),
    "Qwen1.5-MoE-A2.7B": dict(model_type="qwen2_moe", decoder_sparse_step=1, hidden_size=2048,
                              intermediate_size=5632, moe_intermediate_size=1408,
                              shared_expert_intermediate_size=5632, num_experts=60,
                              num_experts_per_tok=4, num_hidden_layers=24,
                              num_attention_heads=16, num_key_value_heads=16,
                              vocab_size=151936, tie_word_embeddings=False,
                              max_position_embeddings=8192, hidden_act="silu",
                              torch_dtype="bfloat16"),
    # tiiuae/falcon-7b (the config with model_type "falcon"): multi-query, parallel attention
    "falcon-7b": dict(model_type="falcon", hidden_size=4544, num_hidden_layers=32,
                      num_attention_heads=71, multi_query=True, parallel_attn=True,
                      new_decoder_architecture=False, bias=False, alibi=False,
                      vocab_size=65024, torch_dtype="bfloat16"),
}

#: name -> (published total, its source, documented difference of netmodel's count)
PUBLISHED = {
    "Llama-3.2-1B": (1_235_814_400, "HF safetensors total (1.24B)", 0),
    "Llama-3.2-3B": (3_212_749_824, "HF safetensors total (3.21B)", 0),
    "Mistral-7B-v0.1": (7_241_732_096, "HF safetensors total (7.24B)", 0),
    "Qwen2-7B": (7_615_616_512, "HF safetensors total (7.62B)", 0),
    "Qwen2.5-72B": (72_706_203_648, "HF safetensors total (72.7B)", 0),
    # four norms a layer (pre/post attention, pre/post MLP): ModelSpec.layer_norms
    "gemma-2-9b": (9_241_705_984, "HF safetensors total (9.24B)", 0),
    "Phi-3-mini-4k-instruct": (3_821_079_552, "HF safetensors total (3.82B)", 0),
    "DeepSeek-V2-Lite": (15_706_484_224, "HF safetensors total (15.7B)", 0),
    "Qwen1.5-MoE-A2.7B": (14_315_784_192, "HF safetensors total (14.3B)", 0),
    # Falcon-7B's parallel attention has one layernorm per layer (ModelSpec.layer_norms 1)
    "falcon-7b": (6_921_720_704, "HF safetensors total (6.92B)", 0),
}

#: name -> bytes of KV cache per token, by hand (bf16)
KV_BYTES = {
    "Llama-3.2-1B": 16 * 8 * 64 * 2 * 2,
    "Llama-3.2-3B": 28 * 8 * 128 * 2 * 2,
    "Mistral-7B-v0.1": 32 * 8 * 128 * 2 * 2,
    "Qwen2-7B": 28 * 4 * 128 * 2 * 2,
    "Qwen2.5-72B": 80 * 8 * 128 * 2 * 2,
    "gemma-2-9b": 42 * 8 * 256 * 2 * 2,
    "Phi-3-mini-4k-instruct": 32 * 32 * 96 * 2 * 2,
    "Mixtral-8x22B-v0.1": 56 * 8 * 128 * 2 * 2,
    "DeepSeek-V2-Lite": 27 * (512 + 64) * 2,
    "Qwen1.5-MoE-A2.7B": 24 * 16 * 128 * 2 * 2,
    "falcon-7b": 32 * 1 * 64 * 2 * 2,
}


def _load(tmp_path, name):
    path = tmp_path / name / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(CONFIGS[name]))
    return load_hf_config(path, name=name)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameters_match_the_published_total(tmp_path, name):
    total, _source, documented = PUBLISHED[name]
    m = _load(tmp_path, name)
    assert m.parameters == total + documented
    assert abs(m.parameters - total) <= 1e-4 * total


@pytest.mark.parametrize("name", sorted(KV_BYTES))
def test_kv_bytes_per_token_by_hand(tmp_path, name):
    m = _load(tmp_path, name)
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == KV_BYTES[name]


def test_gemma2_ties_its_embeddings_by_default(tmp_path):
    """Before the fix the reader took Gemma-2's LM head as untied: 10,158,908,928 parameters,
    9.9% above the published 9,241,705,984 (256000 x 3584 counted twice)."""
    m = _load(tmp_path, "gemma-2-9b")
    assert m.tied_embeddings and m.head_dim == 256 and m.gated_mlp
    # an explicit false in the file still wins over the family default
    untied = _load_variant(tmp_path, "gemma-2-9b", tie_word_embeddings=False)
    assert untied.parameters - m.parameters == 256000 * 3584


def _load_variant(tmp_path, name, **changes):
    path = tmp_path / f"{name}-variant" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**CONFIGS[name], **changes}))
    return load_hf_config(path, name=name)


def test_mixtral_8x22b_total_and_active(tmp_path):
    """Mistral AI's announcement (mistral.ai/news/mixtral-8x22b): 141B parameters, 39B
    active; hand count 140.62B total, 39.15B active (embeddings and LM head included)."""
    m = _load(tmp_path, "Mixtral-8x22B-v0.1")
    assert m.parameters == 140_620_634_112
    assert abs(m.parameters / 141e9 - 1) < 0.01
    assert abs(m.active_parameters / 39e9 - 1) < 0.01


def test_moe_active_parameters_against_model_cards(tmp_path):
    """Qwen1.5-MoE-A2.7B's card: 2.7B activated (embeddings included: 2.689B). DeepSeek-
    V2-Lite's card: 2.4B activated, which leaves the 102400 x 2048 input embedding out
    (ours counts it: 2.661B; without it 2.451B)."""
    q = _load(tmp_path, "Qwen1.5-MoE-A2.7B")
    assert abs(q.active_parameters / 2.7e9 - 1) < 0.01
    d = _load(tmp_path, "DeepSeek-V2-Lite")
    without_embedding = d.active_parameters - 102400 * 2048
    assert int(without_embedding / 1e8) / 10 == 2.4
    # hand: 27 layers of MLA attention and norms, 1 dense MLP (10944), 26 MoE layers of
    # 8 routed-or-shared 1408-wide experts and a 64-wide router, embedding, head, final norm
    attn = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048
    mlp = 3 * 2048 * 1408
    hand = (27 * (attn + 2 * 2048) + 3 * 2048 * 10944 + 26 * (8 * mlp + 2048 * 64)
            + 2 * 102400 * 2048 + 2048)
    assert d.active_parameters == hand
