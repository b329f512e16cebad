"""HuggingFace config.json files of 2025 model families read into parameter counts, KV
sizes and attention spans derived by hand, on trimmed copies of the published configs
(``tests/compute/data/hf_families/``, sources in its README), checked against the totals
their makers publish; families whose layers netmodel does not model are refused in one line.

Before: Llama-4 Scout read as 101.73B / 11.13B active (its shared expert missing), Maverick
as 778.21B / 11.16B (every layer MoE, no shared expert), both with full attention on every
layer; Qwen3-Next as a 79.04B Llama; DBRX refused for lacking ``num_hidden_layers``;
Phi-3.5-MoE with RMSNorms.
"""

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.model_spec import ModelSpec
from compute.models import load_hf_config
from compute.phases import Workload

DATA = Path(__file__).parent / "data" / "hf_families"


def read(name: str) -> ModelSpec:
    return load_hf_config(DATA / f"{name}.json")


def write(tmp_path, cfg: dict) -> ModelSpec:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_hf_config(path, name="m")


def fixture(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


# ---- Llama-4 ------------------------------------------------------------------------------
# Both: 48 layers, hidden 5120, 40 query heads and 8 KV heads of 128, routed and shared
# experts 8192 wide (SwiGLU), vocabulary 202048, untied LM head.
L4_ATTN = 5120 * (40 * 128 + 2 * 8 * 128) + 40 * 128 * 5120     # 62,914,560
L4_EXPERT = 3 * 5120 * 8192                                       # 125,829,120
L4_NORMS = 2 * 5120
L4_TOKENS = 2 * 202048 * 5120 + 5120                              # embedding, LM head, final norm


def test_llama4_scout_counts_its_shared_expert():
    # every one of the 48 layers is MoE: attention, 16 routed experts, the router
    # (5120 x 16), one shared expert, two norms
    layer = L4_ATTN + 16 * L4_EXPERT + 5120 * 16 + L4_EXPERT + L4_NORMS
    total = 48 * layer + L4_TOKENS
    assert total == 107_769_861_120
    active = total - 48 * 15 * L4_EXPERT                  # one routed expert a token
    assert active == 17_172_894_720
    m = read("llama-4-scout-17b-16e-instruct")
    assert (m.parameters, m.active_parameters) == (total, active)
    assert (m.experts, m.experts_per_token, m.shared_ffn, m.dense_layers) == (16, 1, 8192, 0)
    # Meta: 109B total, 17B active, with the vision encoder (about 0.9B: 34 layers of
    # 1408-wide attention and a 5632-wide GELU MLP with biases, 34 x 23.8M = 0.81B, plus its
    # pixel-shuffle adapter and projector to 5120; 871,932,416, counted apart in
    # vision_parameters since h283, test_vision_towers_h283): the text decoder alone is
    # about 109B - 0.9B = 108B total, 17B active
    assert 107.5e9 < m.parameters < 109e9 and 16.5e9 < m.active_parameters < 17.5e9


def test_llama4_maverick_interleaves_dense_and_moe_layers():
    # interleave_moe_layer_step 2: layers 1, 3, ..., 47 are MoE (24), the other 24 dense
    # with a 16384-wide SwiGLU MLP (intermediate_size_mlp)
    dense = L4_ATTN + 3 * 5120 * 16384 + L4_NORMS                       # 314,583,040
    moe = L4_ATTN + 128 * L4_EXPERT + 5120 * 128 + L4_EXPERT + L4_NORMS  # 16,295,536,640
    total = 24 * dense + 24 * moe + L4_TOKENS
    assert total == 400_711_848_960
    active = total - 24 * 127 * L4_EXPERT
    assert active == 17_184_691_200
    m = read("llama-4-maverick-17b-128e-instruct")
    assert (m.parameters, m.active_parameters) == (total, active)
    assert (m.dense_layers, m.dense_ffn, m.ffn, m.shared_ffn) == (24, 16384, 8192, 8192)
    # Meta: 400B total, 17B active (vision encoder included)
    assert round(m.parameters / 1e9) == 401 and round(m.active_parameters / 1e9) == 17


def test_llama4_derives_moe_layers_from_the_step(tmp_path):
    # without the moe_layers list HF derives range(step - 1, layers, step)
    cfg = fixture("llama-4-maverick-17b-128e-instruct")
    text = {k: v for k, v in cfg["text_config"].items() if k != "moe_layers"}
    m = write(tmp_path, {**cfg, "text_config": text})
    assert (m.parameters, m.dense_layers) == (400_711_848_960, 24)


def test_llama4_chunked_attention_layers():
    m = read("llama-4-scout-17b-16e-instruct")
    # no_rope_layers: 1 (RoPE, chunked) on 36 layers, 0 (NoPE, global) on every 4th: 12
    assert (m.sliding_window, m.sliding_layers, m.window_kind) == (8192, 36, "chunked")
    # KV per token: 48 layers x 2 (K, V) x 8 heads x 128 x 2 bytes = 196,608 bytes while
    # the context fits one chunk
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 196_608
    assert m.kv_tokens_held(8192) == 8192
    # at 100,000 tokens the chunked layers keep at most one chunk, the 12 global ones all
    assert m.kv_tokens_held(100_000) == (12 * 100_000 + 36 * 8192) / 48
    # a long decode reads on average half a chunk, (8192 + 1) / 2, in the chunked layers
    assert m.decode_tokens_read(100_000) == (12 * 100_000 + 36 * 4096.5) / 48
    assert m.attention_span(Workload("decode", context=100_000)) == (
        (12 * 100_000 + 36 * 4096.5) / 48,) * 2
    # prefill of 20,000 tokens: chunks of 8192, 8192 and 3616 tokens, each causal
    full = 20_000 * 20_001 / 2
    chunked = 2 * 8192 * 8193 / 2 + 3616 * 3617 / 2
    pairs, read_ = m.attention_span(Workload("prefill", prompt=20_000))
    assert (pairs, read_) == ((12 * full + 36 * chunked) / 48, 20_000)


@pytest.mark.parametrize("change, chunked", [
    ({"no_rope_layers": []}, 36),                      # empty: every 4th is NoPE (HF default)
    ({"no_rope_layers": None}, 36),
    ({"no_rope_layers": None, "no_rope_layer_interval": 2}, 24),
    ({"layer_types": ["chunked_attention", "full_attention"] * 24}, 24),
    ({"attention_chunk_size": None}, 0),               # null: full attention everywhere
])
def test_llama4_chunked_layers_as_hf_derives_them(tmp_path, change, chunked):
    cfg = fixture("llama-4-scout-17b-16e-instruct")
    text = {**cfg["text_config"], **change}
    m = write(tmp_path, {**cfg, "text_config": text})
    assert m.sliding_layers == chunked
    assert m.window_kind == ("chunked" if chunked else "sliding")


@pytest.mark.parametrize("change, says", [
    ({"no_rope_layers": [1, 0]}, "no_rope_layers must be a list of 48 entries 0 or 1"),
    ({"no_rope_layers": [2] * 48}, "no_rope_layers must be a list of 48 entries 0 or 1"),
    ({"moe_layers": "all"}, "moe_layers must be a list of at most 48 layer indices"),
    ({"moe_layers": [48]}, "moe_layers"),
    ({"moe_layers": []}, "the config names 16 experts but no layer is a mixture of experts"),
    ({"layer_types": ["sliding_attention"] * 48},
     "layer_types entry 'sliding_attention' is not modelled; known: 'chunked_attention', "
     "'full_attention'"),
    ({"attention_chunk_size": -1}, "attention_chunk_size"),
])
def test_llama4_hostile_fields_are_refused(tmp_path, change, says):
    cfg = fixture("llama-4-scout-17b-16e-instruct")
    with pytest.raises(UserError) as e:
        write(tmp_path, {**cfg, "text_config": {**cfg["text_config"], **change}})
    assert says in str(e.value) and "\n" not in str(e.value)


def test_chunked_window_kind_is_checked():
    with pytest.raises(UserError, match="window_kind 'banana'"):
        ModelSpec("m", 2, 64, 4, 4, 16, 128, 100, sliding_window=8, window_kind="banana")
    with pytest.raises(UserError, match="window_kind 'chunked' needs sliding_window"):
        ModelSpec("m", 2, 64, 4, 4, 16, 128, 100, window_kind="chunked")


# ---- Qwen3 --------------------------------------------------------------------------------
# Qwen3's q_norm and k_norm: an RMSNorm over head_dim each, 256 elements a layer (h283;
# before, not counted: 24,064 low in the 235B model, 9,216 in Qwen3-8B).
Q3_TOKENS = 151936
Q3_QK = 2 * 128


def test_qwen3_235b_a22b():
    # 94 layers, hidden 4096, 64 query heads and 4 KV heads of 128 (head_dim given: 64 x 128
    # = 8192, not the hidden size), 128 experts 1536 wide, 8 a token, no shared expert
    attn = 4096 * (64 * 128 + 2 * 4 * 128) + 64 * 128 * 4096 + Q3_QK   # 71,303,424
    expert = 3 * 4096 * 1536
    layer = attn + 128 * expert + 4096 * 128 + 2 * 4096
    total = 94 * layer + 2 * Q3_TOKENS * 4096 + 4096
    assert total == 235_093_634_560
    active = total - 94 * 120 * expert
    assert active == 22_190_763_520                       # Qwen: 235B, 22B activated
    m = read("qwen3-235b-a22b")
    assert (m.parameters, m.active_parameters, m.shared_ffn) == (total, active, 0)
    assert m.kv_elements_per_token == 2 * 4 * 128 and m.sliding_window == 0


def test_qwen3_30b_a3b():
    attn = 2048 * (32 * 128 + 2 * 4 * 128) + 32 * 128 * 2048 + Q3_QK
    expert = 3 * 2048 * 768
    total = 48 * (attn + 128 * expert + 2048 * 128 + 2 * 2048) + 2 * Q3_TOKENS * 2048 + 2048
    active = total - 48 * 120 * expert
    assert (total, active) == (30_532_122_624, 3_353_032_704)  # Qwen: 30.5B, 3.3B activated
    m = read("qwen3-30b-a3b")
    assert (m.parameters, m.active_parameters) == (total, active)


@pytest.mark.parametrize("name, layers, hidden, heads, kv, ffn, tied, published", [
    # Qwen3-8B: 8.2B (6.95B without embeddings), its safetensors index's total_size
    # 16,381,470,720 bytes of bf16 (Qwen/Qwen3-8B model.safetensors.index.json);
    # Qwen3-0.6B: 0.6B (0.44B): its 16 heads of 128 are twice hidden / heads = 64; its
    # safetensors store the tied LM head a second time (the hub's 751,632,384 is this and
    # 151,936 x 1,024 more)
    ("qwen3-8b", 36, 4096, 32, 8, 12288, False, 16_381_470_720 // 2),
    ("qwen3-0.6b", 28, 1024, 16, 8, 3072, True, 596_049_920),
])
def test_qwen3_dense(name, layers, hidden, heads, kv, ffn, tied, published):
    layer = hidden * (heads + 2 * kv) * 128 + heads * 128 * hidden + 3 * hidden * ffn \
        + 2 * hidden + Q3_QK
    total = layers * layer + (1 if tied else 2) * Q3_TOKENS * hidden + hidden
    assert total == published
    m = read(name)
    assert (m.parameters, m.head_dim) == (total, 128)


# ---- GLM-4.5, Kimi-K2 ---------------------------------------------------------------------
def test_glm45():
    # 92 layers, hidden 5120, 96 query heads of 128 (12288) and 8 KV heads; biases on Q, K
    # and V; the first 3 layers dense (12288), then 89 MoE layers of 160 experts 1536 wide,
    # 8 a token, and 1 shared expert as wide; partial rotary changes no count
    attn = 5120 * (12288 + 2 * 1024) + 12288 * 5120 + (12288 + 2 * 1024)
    expert = 3 * 5120 * 1536
    dense = attn + 3 * 5120 * 12288 + 2 * 5120
    moe = attn + 160 * expert + 5120 * 160 + expert + 2 * 5120
    total = 3 * dense + 89 * moe + 2 * 151552 * 5120 + 5120
    active = total - 89 * 152 * expert
    assert (total, active) == (352_797_791_232, 33_632_228_352)
    m = read("glm-4.5")
    assert (m.parameters, m.active_parameters) == (total, active)
    # Z.ai: 355B total (with the multi-token-prediction layer, num_nextn_predict_layers 1,
    # one more MoE layer and its projections, about 4B, not used by plain decoding) and
    # 32B active (without the embedding and LM head, 1.55B)
    assert abs(total + moe - 355e9) < 2.5e9
    assert round((active - 2 * 151552 * 5120) / 1e9) == 32


def test_kimi_k2():
    # DeepSeek-V3 layout: MLA (q_lora_rank 1536, kv_lora_rank 512, 64 heads of 128 + 64
    # rotary, values 128), 61 layers, the first dense (18432), 60 MoE layers of 384
    # experts 2048 wide, 8 a token, one shared expert
    q = 7168 * 1536 + 1536 + 1536 * 64 * 192
    kv = 7168 * (512 + 64) + 512 + 512 * 64 * (128 + 128)
    attn = q + kv + 64 * 128 * 7168
    expert = 3 * 7168 * 2048
    dense = attn + 3 * 7168 * 18432 + 2 * 7168
    moe = attn + 384 * expert + 7168 * 384 + expert + 2 * 7168
    total = dense + 60 * moe + 2 * 163840 * 7168 + 7168
    active = total - 60 * 376 * expert
    assert (total, active) == (1_026_408_209_408, 32_861_477_888)  # Moonshot: 1T, 32B
    m = read("kimi-k2-instruct")
    assert (m.parameters, m.active_parameters) == (total, active)
    assert m.kv_elements_per_token == 512 + 64


# ---- DBRX, Phi-3.5-MoE ---------------------------------------------------------------------
def test_dbrx_nested_config():
    # d_model 6144, 40 layers, 48 heads, attn_config.kv_n_heads 8; ffn_config: 16 GLU
    # experts 10752 wide, 4 a token; LayerNorms without bias (scale only)
    attn = 6144 * (6144 + 2 * 1024) + 6144 * 6144
    expert = 3 * 6144 * 10752
    total = 40 * (attn + 16 * expert + 6144 * 16 + 2 * 6144) + 2 * 100352 * 6144 + 6144
    active = total - 40 * 12 * expert
    assert (total, active) == (131_596_523_520, 36_469_708_800)  # Databricks: 132B, 36B
    m = read("dbrx-instruct")
    assert (m.parameters, m.active_parameters, m.kv_heads, m.max_context) == (
        total, active, 8, 32768)


def test_phi35_moe_layernorm():
    # LayerNorm (scale and shift: 2 x 4096); attention_bias true: HF PhimoeAttention biases
    # Q, K, V and O, and lm_head_bias true a bias on the LM head (h321: O's 32 x 4096 and
    # the head's 32,064 were left out, 41,872,990,208); 16 experts 6400 wide, 2 a token
    attn = 4096 * (4096 + 2 * 1024) + 4096 * 4096 + (4096 + 2 * 1024) + 4096
    expert = 3 * 4096 * 6400
    total = (32 * (attn + 16 * expert + 4096 * 16 + 2 * 8192) + 2 * 32064 * 4096 + 32064
             + 8192)
    active = total - 32 * 14 * expert
    # by hand, above; unverified to the parameter (41.9B / 6.6B rounded: a third-party GGUF
    # card, huface.ru/MikeKuykendall/phi-3.5-moe-cpu-offload-gguf; the shapes as mlx's
    # trimmed config of the checkpoint gives them)
    assert (total, active) == (41_873_153_344, 6_640_999_744)
    m = read("phi-3.5-moe-instruct")
    assert (m.parameters, m.active_parameters, m.norm) == (total, active, "layernorm")


# ---- refused families ---------------------------------------------------------------------
def test_qwen3_next_is_refused():
    with pytest.raises(UserError) as e:
        read("qwen3-next-80b-a3b-instruct")
    text = str(e.value)
    assert "\n" not in text
    assert "model_type 'qwen3_next' is a hybrid of linear attention" in text


LLAMA = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100}


@pytest.mark.parametrize("model_type", [
    "jamba", "mamba", "mamba2", "zamba2", "falcon_h1", "rwkv", "minimax", "minimax_m1", "t5",
    "bart", "mpt", "recurrent_gemma", "nemotron_h",
])
def test_unmodelled_types_are_refused(tmp_path, model_type):
    with pytest.raises(UserError) as e:
        write(tmp_path, {**LLAMA, "model_type": model_type})
    text = str(e.value)
    assert "\n" not in text and f"model_type {model_type!r} is " in text
    assert "netmodel reads decoder-only transformers" in text


@pytest.mark.parametrize("extra, says", [
    ({"ssm_state_size": 16}, "'ssm_state_size'"),
    ({"mamba_d_state": 128}, "'mamba_d_state'"),
    ({"linear_num_key_heads": 16}, "'linear_num_key_heads'"),
    ({"attn_type_list": [0, 1]}, "'attn_type_list'"),
    ({"hybrid_override_pattern": "M-M*"}, "'hybrid_override_pattern'"),
    ({"attn_config": {"kv_n_heads": 1}}, "'attn_config'"),
    ({"is_encoder_decoder": True}, "an encoder-decoder model (is_encoder_decoder)"),
])
def test_unmodelled_keys_are_refused(tmp_path, extra, says):
    # an unknown model_type with these keys was read Llama-style
    with pytest.raises(UserError) as e:
        write(tmp_path, {**LLAMA, "model_type": "newmodel", **extra})
    assert says in str(e.value) and "'newmodel'" in str(e.value)


def test_linear_layer_types_refused_without_a_window(tmp_path):
    # before: layer_types was checked only when sliding_window was set; a hybrid without one
    # read as full attention on every layer
    with pytest.raises(UserError, match="layer_types entry 'linear_attention' is not modelled"):
        write(tmp_path, {**LLAMA, "layer_types": ["linear_attention", "full_attention"]})
