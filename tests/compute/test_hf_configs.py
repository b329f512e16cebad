"""Real HuggingFace config.json files of each family, read through the one alias table, and
their parameter counts against the published figures (within 2%) and against counts derived
by hand from the architecture (exact).

Each config below is the published config.json at the URL given (fields unrelated to the
shape, e.g. dropout rates and token ids, are kept where short).
"""

import json

import pytest

from compute.errors import UserError
from compute.models import HF_ALIASES, HF_FAMILIES, get_model, load_hf_config

# https://huggingface.co/openai-community/gpt2-xl/blob/main/config.json
GPT2_XL = {
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
    "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 1600,
    "n_head": 25, "n_layer": 48, "n_positions": 1024, "output_past": True, "resid_pdrop": 0.1,
    "vocab_size": 50257,
}
# https://huggingface.co/openai-community/gpt2/blob/main/config.json
GPT2 = {**GPT2_XL, "n_embd": 768, "n_head": 12, "n_layer": 12}
# https://huggingface.co/bigscience/bloom/blob/main/config.json
BLOOM = {
    "apply_residual_connection_post_layernorm": False, "attention_dropout": 0.0,
    "attention_softmax_in_fp32": True, "bias_dropout_fusion": True, "bos_token_id": 1,
    "eos_token_id": 2, "hidden_dropout": 0.0, "hidden_size": 14336, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "masked_softmax_fusion": True, "model_type": "bloom",
    "n_head": 112, "n_inner": None, "n_layer": 70, "offset_alibi": 100, "pad_token_id": 3,
    "pretraining_tp": 4, "skip_bias_add": True, "skip_bias_add_qkv": False,
    "slow_but_exact": False, "unk_token_id": 0, "use_cache": True, "vocab_size": 250880,
}
# https://huggingface.co/tiiuae/falcon-40b/blob/main/config.json
FALCON_40B = {
    "alibi": False, "apply_residual_connection_post_layernorm": False,
    "architectures": ["FalconForCausalLM"], "attention_dropout": 0.0, "bias": False,
    "bos_token_id": 11, "eos_token_id": 11, "hidden_dropout": 0.0, "hidden_size": 8192,
    "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "falcon",
    "new_decoder_architecture": True, "num_attention_heads": 128, "num_hidden_layers": 60,
    "num_kv_heads": 8, "parallel_attn": True, "torch_dtype": "bfloat16", "use_cache": True,
    "vocab_size": 65024,
}
# https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json (multi-query attention)
FALCON_7B = {
    "alibi": False, "architectures": ["FalconForCausalLM"], "bias": False,
    "hidden_size": 4544, "model_type": "falcon", "multi_query": True,
    "new_decoder_architecture": False, "num_attention_heads": 71, "num_hidden_layers": 32,
    "parallel_attn": True, "torch_dtype": "bfloat16", "vocab_size": 65024,
}
# https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json
LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 8192,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None,
    "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "use_cache": True, "vocab_size": 128256,
}
# https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json
MISTRAL_7B = {
    "architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
    "vocab_size": 32000,
}
# https://huggingface.co/Qwen/Qwen2-7B/blob/main/config.json
QWEN2_7B = {
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 3584,
    "initializer_range": 0.02, "intermediate_size": 18944, "max_position_embeddings": 131072,
    "max_window_layers": 28, "model_type": "qwen2", "num_attention_heads": 28,
    "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False,
    "vocab_size": 152064,
}
# https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json
MIXTRAL = {
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1,
    "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mixtral",
    "num_attention_heads": 32, "num_experts_per_tok": 2, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "num_local_experts": 8, "output_router_logits": False,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02,
    "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "use_cache": True, "vocab_size": 32000,
}
# https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json
QWEN_MOE = {
    "architectures": ["Qwen2MoeForCausalLM"], "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 5632, "max_position_embeddings": 8192,
    "max_window_layers": 21, "model_type": "qwen2_moe", "num_attention_heads": 16,
    "num_hidden_layers": 24, "num_key_value_heads": 16, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False,
    "vocab_size": 151936, "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4, "num_experts": 60,
    "norm_topk_prob": False, "output_router_logits": False, "router_aux_loss_coef": 0.001,
}
# https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (rope_scaling omitted)
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "attention_bias": False,
    "attention_dropout": 0.0, "aux_loss_alpha": 0.001, "bos_token_id": 0, "eos_token_id": 1,
    "ep_size": 1, "first_k_dense_replace": 3, "hidden_act": "silu", "hidden_size": 7168,
    "initializer_range": 0.02, "intermediate_size": 18432, "kv_lora_rank": 512,
    "max_position_embeddings": 163840, "model_type": "deepseek_v3",
    "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256,
    "n_shared_experts": 1, "norm_topk_prob": True, "num_attention_heads": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1, "pretraining_tp": 1, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                            "quant_method": "fp8", "weight_block_size": [128, 128]},
    "rms_norm_eps": 1e-06, "rope_theta": 10000, "routed_scaling_factor": 2.5,
    "scoring_func": "sigmoid", "seq_aux": True, "tie_word_embeddings": False, "topk_group": 4,
    "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "use_cache": True,
    "v_head_dim": 128, "vocab_size": 129280,
}

# name: (config, published total B, published active B, source of the figures)
FAMILIES = {
    "gpt2": (GPT2, 0.124, 0.124, "openai-community/gpt2 model card: 124M parameters"),
    "gpt2-xl": (GPT2_XL, 1.542, 1.542, "Radford et al. 2019, GPT-2 paper, Table 2: 1542M"),
    "bloom": (BLOOM, 176.247271424, 176.247271424,
              "bigscience/bloom model card: 176,247,271,424 parameters"),
    "llama-3-8b": (LLAMA3_8B, 8.03, 8.03, "meta-llama/Meta-Llama-3-8B model card: 8.03B"),
    "mistral-7b": (MISTRAL_7B, 7.24, 7.24, "Mistral-7B-v0.1: 7.24B (HF model card)"),
    "qwen2-7b": (QWEN2_7B, 7.62, 7.62, "Qwen/Qwen2-7B model card: 7.62B (7.07B non-embedding)"),
    "mixtral": (MIXTRAL, 46.7, 12.9, "Jiang et al. 2024, 'Mixtral of Experts': 46.7B / 12.9B"),
    "qwen-moe": (QWEN_MOE, 14.3, 2.7, "Qwen1.5-MoE blog: 14.3B total, 2.7B activated"),
    "deepseek-v3": (DEEPSEEK_V3, 671.0, 37.0, "DeepSeek-V3 report: 671B total, 37B activated"),
}


def load(tmp_path, cfg, name="m"):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_hf_config(path, name=name)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_real_config_within_2_percent_of_published(tmp_path, family):
    cfg, total, active, _ = FAMILIES[family]
    m = load(tmp_path, cfg)
    assert m.parameters / 1e9 == pytest.approx(total, rel=0.02)
    assert m.active_parameters / 1e9 == pytest.approx(active, rel=0.02)


@pytest.mark.parametrize("family, exact", [
    ("gpt2", 124_439_808),        # HF's count of openai-community/gpt2
    ("gpt2-xl", 1_557_611_200),   # HF's count of openai-community/gpt2-xl
    ("bloom", 176_247_271_424),   # the BLOOM model card, to the parameter
    ("llama-3-8b", 8_030_261_248),
    ("mistral-7b", 7_241_732_096),
    ("qwen2-7b", 7_615_616_512),
])
def test_dense_families_counted_exactly(tmp_path, family, exact):
    assert load(tmp_path, FAMILIES[family][0]).parameters == exact


def test_bloom_by_hand(tmp_path):
    # n_inner null -> 4 x hidden; biases on every linear layer; layernorms; an embedding
    # layernorm; tied LM head; ALiBi (no position table).
    h, v, L = 14336, 250880, 70
    layer = (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 4 * h
    assert v * h + 2 * h + L * layer + 2 * h == 176_247_271_424
    m = load(tmp_path, BLOOM)
    assert (m.ffn, m.bias, m.tied_embeddings, m.embedding_norm, m.norm, m.gated_mlp,
            m.learned_positions) == (4 * h, True, True, True, "layernorm", False, 0)


def test_qwen2_reads_its_qkv_bias(tmp_path):
    # Qwen2's attention has biases on q, k and v (not o): 3584 + 2 x 512 per layer.
    m = load(tmp_path, QWEN2_7B)
    assert m.qkv_bias and not m.bias
    no_bias = load(tmp_path, {**QWEN2_7B, "model_type": "llama"})
    assert m.parameters - no_bias.parameters == 28 * (3584 + 2 * 512)


def test_falcon_kv_heads_from_new_architecture_or_multi_query(tmp_path):
    f40 = load(tmp_path, FALCON_40B)
    assert (f40.heads, f40.kv_heads, f40.ffn, f40.tied_embeddings, f40.bias) == \
        (128, 8, 4 * 8192, True, False)
    # 65024 x 8192 tied embedding; per layer QKV 8192 x (8192 + 2 x 8 x 64), dense 8192^2,
    # MLP 2 x 8192 x 32768, two layernorms (ln_attn, ln_mlp); final layernorm.
    layer = 8192 * (8192 + 1024) + 8192**2 + 2 * 8192 * 32768 + 4 * 8192
    assert f40.parameters == 65024 * 8192 + 60 * layer + 2 * 8192 == 41_303_293_952
    # The model card's "40B" is a rounded name: the exact count is 3.3% above it.
    assert f40.parameters / 40e9 == pytest.approx(1.033, abs=0.001)
    f7 = load(tmp_path, FALCON_7B)
    assert (f7.heads, f7.kv_heads, f7.head_dim) == (71, 1, 64)   # multi-query
    # Falcon-7B: 7B (model card); one shared layernorm per layer (parallel_attn)
    assert f7.layer_norms == 1
    assert f7.parameters / 1e9 == pytest.approx(6.92, rel=0.01)


def test_moe_families(tmp_path):
    mix = load(tmp_path, MIXTRAL)
    assert (mix.experts, mix.experts_per_token, mix.ffn, mix.dense_layers, mix.shared_ffn) == \
        (8, 2, 14336, 0, 0)
    assert mix.parameters == get_model("Mixtral-8x7B").parameters == 46_702_792_704
    # Qwen-MoE's num_experts (was refused: "experts_per_token (8) exceeds experts (1)")
    q = load(tmp_path, QWEN_MOE)
    assert (q.experts, q.experts_per_token, q.ffn, q.shared_ffn, q.shared_expert_gate,
            q.qkv_bias) == (60, 4, 1408, 5632, True, True)
    assert q.parameters == get_model("Qwen1.5-MoE-A2.7B").parameters
    # by hand: embeddings 2 x 151936 x 2048; per layer attention 4 x 2048^2 + q,k,v biases,
    # 60 experts and a shared expert of 3 x 2048 x width, router 60 x 2048, shared gate 2048,
    # two RMSNorms; final norm.
    h = 2048
    layer = 4 * h * h + 3 * h + 60 * 3 * h * 1408 + 3 * h * 5632 + 60 * h + h + 2 * h
    assert q.parameters == 2 * 151936 * h + 24 * layer + h
    assert q.active_parameters == q.parameters - 24 * 56 * 3 * h * 1408


def test_qwen_moe_sparse_step_and_dense_only_layers(tmp_path):
    # decoder_sparse_step 2: layers 1, 3, 5, ... are MoE; mlp_only_layers keeps 1 dense too.
    q = load(tmp_path, {**QWEN_MOE, "decoder_sparse_step": 2, "mlp_only_layers": [1]})
    assert (q.dense_layers, q.dense_ffn) == (13, 5632)
    with pytest.raises(UserError, match="mlp_only_layers must be a whole number from 0 to 23"):
        load(tmp_path, {**QWEN_MOE, "mlp_only_layers": [24]})


def test_deepseek_v3_mla_and_moe(tmp_path):
    m = load(tmp_path, DEEPSEEK_V3)
    ref = get_model("DeepSeek-V3")
    for key in ("layers", "hidden", "heads", "kv_heads", "head_dim", "v_head_dim", "ffn",
                "dense_ffn", "dense_layers", "shared_ffn", "experts", "experts_per_token",
                "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "weight_dtype"):
        assert getattr(m, key) == getattr(ref, key), key
    assert m.parameters == ref.parameters
    # by hand: MLA per layer (q down 7168x1536, its norm, q up 1536 x 128 x 192; kv down
    # 7168 x 576, its norm, kv up 512 x 128 x 256; out 128 x 128 x 7168)
    h = 7168
    mla = h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h
    assert m.attention_parameters == mla == 187_107_328
    dense = mla + 3 * h * 18432 + 2 * h
    moe = mla + 256 * 3 * h * 2048 + 256 * h + 3 * h * 2048 + 2 * h
    assert m.parameters == 3 * dense + 58 * moe + 2 * 129280 * h + h
    # the KV cache holds the latent and the shared rotary key: 512 + 64 per token and layer
    assert m.kv_elements_per_token == 576


def test_aliases_each_spelling_reads_the_same(tmp_path):
    base = load(tmp_path, LLAMA3_8B)
    renamed = {k: v for k, v in LLAMA3_8B.items()
               if k not in ("num_hidden_layers", "hidden_size", "num_attention_heads",
                            "num_key_value_heads")}
    for layers, hidden, heads, kv in (("n_layer", "n_embd", "n_head", "num_kv_heads"),
                                      ("num_layers", "d_model", "n_head", "n_head_kv"),
                                      ("n_layer", "n_embed", "num_attention_heads",
                                       "num_key_value_heads")):
        cfg = {**renamed, layers: 32, hidden: 4096, heads: 32, kv: 8}
        assert load(tmp_path, cfg).parameters == base.parameters, (layers, hidden, heads, kv)
    # every alias is unique to its field (no key read for two different things)
    keys = [k for field, ks in HF_ALIASES.items() if field != "learned_positions" for k in ks]
    assert len(keys) == len(set(keys))
    assert {"gpt2", "bloom", "falcon", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe",
            "deepseek_v3"} <= set(HF_FAMILIES)


def test_null_keys_fall_back_and_tied_embeddings_are_read(tmp_path):
    gpt2 = load(tmp_path, {**GPT2, "n_inner": None})
    assert gpt2.ffn == 4 * 768 and gpt2.tied_embeddings
    untied = load(tmp_path, {**GPT2, "tie_word_embeddings": False})
    assert untied.parameters - gpt2.parameters == 50257 * 768
    tied = load(tmp_path, {**LLAMA3_8B, "tie_word_embeddings": True})
    assert load(tmp_path, LLAMA3_8B).parameters - tied.parameters == 128256 * 4096


@pytest.mark.parametrize("cfg, match", [
    ({**MIXTRAL, "num_experts_per_tok": 9}, "experts_per_token \\(9\\) exceeds experts \\(8\\)"),
    ({**DEEPSEEK_V3, "qk_rope_head_dim": "64"}, "qk_rope_head_dim must be a whole number"),
    ({**DEEPSEEK_V3, "first_k_dense_replace": 61}, "no layer is a mixture of experts"),
    ({**QWEN_MOE, "mlp_only_layers": {"a": 1}}, "mlp_only_layers must be a list"),
    ({**FALCON_7B, "multi_query": "yes"}, "multi_query must be true or false"),
    ({**LLAMA3_8B, "_name_or_path": "a\nb"}, r"_name_or_path .a\\nb. holds a control character"),
    ({**LLAMA3_8B, "torch_dtype": "int4"}, "torch_dtype 'int4' is unknown; known: 'bfloat16'"),
])
def test_bad_family_keys_are_user_errors(tmp_path, cfg, match):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    with pytest.raises(UserError, match=match):
        load_hf_config(path)


@pytest.mark.parametrize("torch_dtype, weights", [
    ("bfloat16", "bf16"), ("torch.float16", "fp16"), ("half", "fp16"),
    ("float32", "bf16"), ("float64", "bf16"),  # served in 16 bits
    ("float8_e4m3fn", "fp8"), ("float8_e5m2", "fp8"),
])
def test_torch_dtype_spellings(tmp_path, torch_dtype, weights):
    m = load(tmp_path, {**LLAMA3_8B, "torch_dtype": torch_dtype})
    assert m.weight_dtype == weights
    # 16-bit activations and KV cache under fp8 weights, as the fp8 quantization config
    assert m.kv_dtype == ("bf16" if weights == "fp8" else weights)


# https://huggingface.co/EleutherAI/pythia-12b/blob/main/config.json and pythia-160m
PYTHIA = {
    "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0,
    "hidden_act": "gelu", "initializer_range": 0.02, "layer_norm_eps": 1e-05,
    "max_position_embeddings": 2048, "model_type": "gpt_neox", "rotary_emb_base": 10000,
    "rotary_pct": 0.25, "tie_word_embeddings": False, "torch_dtype": "float16",
    "use_cache": True, "use_parallel_residual": True,
}


@pytest.mark.parametrize("shape, total, non_embedding", [
    # Biderman et al. 2023, 'Pythia', Table 1 (total and non-embedding parameters)
    (dict(hidden_size=5120, intermediate_size=20480, num_attention_heads=40,
          num_hidden_layers=36, vocab_size=50688), 11_846_072_320, 11_327_027_200),
    (dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12,
          num_hidden_layers=12, vocab_size=50304), 162_322_944, 85_056_000),
])
def test_gpt_neox_counted_exactly(tmp_path, shape, total, non_embedding):
    # biases on every linear layer and layernorms (scale and shift), rotary, untied head:
    # read Llama-style before, 2,032,640 low for Pythia-12B
    m = load(tmp_path, {**PYTHIA, **shape})
    assert (m.bias, m.norm, m.learned_positions) == (True, "layernorm", 0)
    assert m.parameters == total
    assert m.parameters - m.embedding_parameters == non_embedding


# https://huggingface.co/EleutherAI/gpt-j-6b/blob/main/config.json
GPTJ_6B = {
    "activation_function": "gelu_new", "architectures": ["GPTJForCausalLM"],
    "model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_inner": None, "n_layer": 28,
    "n_positions": 2048, "rotary": True, "rotary_dim": 64, "tie_word_embeddings": False,
    "vocab_size": 50400,
}


def test_gptj_has_no_position_table(tmp_path):
    # GPT-J is rotary: its n_positions is the context, not a learned table (the GPT-2
    # defaults it was read with added 2048 x 4096 = 8.4M parameters). HF's GPTJForCausalLM
    # (modeling_gptj: Q, K, V, O without bias, fc_in and fc_out with, one LayerNorm ln_1 a
    # layer, ln_f, an LM head with bias) holds 6,050,882,784 parameters (the model card's
    # 6,053,381,344 is 2,498,560 more). One norm a layer (h294; before, two: 28 x 2 x 4096
    # = 229,376 more); biases on the MLP and the LM head only (h321; before, read on Q, K, V
    # and O too, 28 x 4 x 4096 more, and none on the LM head, 50,400 less: 6,051,291,136)
    m = load(tmp_path, GPTJ_6B)
    assert (m.learned_positions, m.tied_embeddings, m.max_context) == (0, False, 2048)
    layer = 4 * 4096 * 4096 + (4096 * 16384 + 16384) + (16384 * 4096 + 4096) + 2 * 4096
    hf = 28 * layer + 2 * 50400 * 4096 + 50400 + 2 * 4096
    assert hf == 6_050_882_784
    assert m.layer_norms == 1
    assert (m.bias, m.mlp_bias, m.lm_head_bias) == (False, True, True)
    assert m.parameters == hf
    assert m.parameters == pytest.approx(6_053_381_344, rel=5e-4)   # the card, 0.04% over
