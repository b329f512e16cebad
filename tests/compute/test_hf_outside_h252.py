"""HuggingFace config.json files of families netmodel had not read before (h252's outside
pass), on trimmed copies of the published configs (``tests/compute/data/hf_families/``,
sources in its README): counts derived by hand, checked against the published totals.

Before: GLM-4-9B-Chat (model_type chatglm) read as 8.41B parameters with 32 KV heads (655.4
kB of KV cache a token, 16x too much) and a plain 2-matrix MLP; StarCoder2 read without its
biases, with RMSNorms, and StarCoder2-3B (no tie_word_embeddings key) with an untied LM
head, 3.18B; Phi-3-small (block-sparse attention) read silently as a 6.46B model with full
attention and a 4 x hidden GELU MLP.
"""


import pytest

from compute.errors import UserError
from tests.compute.hf_helpers import fixture, read, write

# ---- ChatGLM / GLM-4 ------------------------------------------------------------------------
# GLM-4-9B-Chat: 40 layers, hidden 4096, 32 query heads and multi_query_group_num 2 KV heads of
# kv_channels 128, SwiGLU MLP of ffn_hidden_size 13696 (dense_h_to_4h 4096 x 2 x 13696),
# biases on the fused QKV only (add_qkv_bias), RMSNorms, padded_vocab_size 151552, untied
GLM_ATTN = 4096 * (32 * 128 + 2 * 2 * 128) + (32 * 128 + 2 * 2 * 128) + 32 * 128 * 4096
GLM_MLP = 3 * 4096 * 13696
GLM_LAYER = GLM_ATTN + GLM_MLP + 2 * 4096
GLM_TOTAL = 40 * GLM_LAYER + 2 * 151552 * 4096 + 4096


def test_glm4_9b_reads_its_kv_groups_and_swiglu():
    assert GLM_TOTAL == 9_399_951_360
    m = read("glm-4-9b-chat")
    assert (m.kv_heads, m.head_dim, m.ffn, m.vocab) == (2, 128, 13696, 151552)
    assert (m.gated_mlp, m.qkv_bias, m.bias, m.norm, m.tied_embeddings) == (
        True, True, False, "rmsnorm", False)
    assert m.parameters == GLM_TOTAL
    # published: the HuggingFace hub's count of THUDM/glm-4-9b-chat, 9.4B
    assert round(m.parameters / 1e9, 1) == 9.4
    # KV cache: 40 layers x 2 (K, V) x 2 groups x 128 x 2 bytes (bf16) = 40,960 bytes a
    # token (the old reading's 32 KV heads made 655,360)
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 40_960


def test_glm4_hf_native_config_reads_the_same(tmp_path):
    # THUDM/glm-4-9b-chat-hf (model_type glm, HF transformers' own keys)
    m = write(tmp_path, {
        "model_type": "glm", "hidden_act": "silu", "attention_bias": True, "head_dim": 128,
        "hidden_size": 4096, "intermediate_size": 13696, "num_attention_heads": 32,
        "num_hidden_layers": 40, "num_key_value_heads": 2, "tie_word_embeddings": False,
        "vocab_size": 151552, "torch_dtype": "bfloat16"})
    assert m.parameters == GLM_TOTAL


@pytest.mark.parametrize("change, kv_heads", [
    ({"multi_query_attention": False}, 32),     # off: K and V as wide as Q
    ({"multi_query_attention": None}, 32),      # ChatGLMConfig's default: false
    ({"multi_query_group_num": None}, 1),       # on, no count: ChatGLMConfig's default 1
])
def test_chatglm_multi_query_switch(tmp_path, change, kv_heads):
    m = write(tmp_path, {**fixture("glm-4-9b-chat"), **change})
    assert m.kv_heads == kv_heads


def test_chatglm_layernorm_when_rmsnorm_is_false(tmp_path):
    m = write(tmp_path, {**fixture("glm-4-9b-chat"), "rmsnorm": False})
    assert m.norm == "layernorm"
    assert m.parameters == GLM_TOTAL + 81 * 4096   # a shift for each of the 81 norms


def test_chatglm_embedding_is_padded_vocab_size(tmp_path):
    # THUDM's Embedding and output_layer are padded_vocab_size rows, whatever vocab_size says
    m = write(tmp_path, {**fixture("glm-4-9b-chat"), "vocab_size": 151329})
    assert m.vocab == 151552


def test_chatglm_bad_flag_is_named(tmp_path):
    with pytest.raises(UserError, match="multi_query_attention"):
        write(tmp_path, {**fixture("glm-4-9b-chat"), "multi_query_attention": "yes"})


# ---- StarCoder2 -------------------------------------------------------------------------------
def starcoder2(layers, hidden, heads, kv_heads, ffn, vocab, tied):
    """HF Starcoder2: q, k, v, o with biases, a GELU MLP c_fc / c_proj with biases, two
    LayerNorms (scale and shift) a layer and a final one."""
    d, kv = hidden // heads, kv_heads * (hidden // heads)
    attn = hidden * (hidden + 2 * kv) + (hidden + 2 * kv) + hidden * hidden + hidden
    mlp = 2 * hidden * ffn + ffn + hidden
    layer = attn + mlp + 2 * 2 * hidden
    assert d == 128
    return layers * layer + vocab * hidden * (1 if tied else 2) + 2 * hidden


def test_starcoder2_3b_ties_its_embeddings_and_keeps_its_biases():
    total = starcoder2(30, 3072, 24, 2, 12288, 49152, tied=True)
    assert total == 3_030_371_328
    m = read("starcoder2-3b")
    assert (m.bias, m.norm, m.gated_mlp, m.tied_embeddings) == (True, "layernorm", False, True)
    assert m.parameters == total
    # published: 3.03B (HuggingFace hub count of bigcode/starcoder2-3b; the old reading
    # gave 3.18B with an untied LM head)
    assert round(m.parameters / 1e9, 2) == 3.03
    # sliding window of 4096 tokens on all 30 layers, KV 30 x 2 x 2 x 128 x 2 bytes
    assert (m.sliding_window, m.sliding_layers) == (4096, 30)
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 30_720


def test_starcoder2_15b():
    total = starcoder2(40, 6144, 48, 4, 24576, 49152, tied=False)
    assert total == 15_957_889_024
    m = read("starcoder2-15b")
    assert (m.bias, m.norm, m.tied_embeddings) == (True, "layernorm", False)
    assert m.parameters == total
    # published: StarCoder2-15B, 15B (bigcode model card; 16B on the hub's count)
    assert 15e9 < m.parameters < 16.5e9


def test_starcoder2_use_bias_false(tmp_path):
    m = write(tmp_path, {**fixture("starcoder2-3b"), "use_bias": False})
    assert not m.bias and not m.qkv_bias


# ---- refused ----------------------------------------------------------------------------------
def test_phi3_small_block_sparse_attention_is_refused():
    with pytest.raises(UserError, match="phi3small.*block-sparse") as e:
        read("phi-3-small-8k-instruct")
    assert "\n" not in str(e.value)


def test_block_sparse_keys_are_refused_in_any_family(tmp_path):
    cfg = {**fixture("phi-3-small-8k-instruct"), "model_type": "phi3",
           "intermediate_size": 14336}
    with pytest.raises(UserError, match="blocksparse_"):
        write(tmp_path, cfg)


# ---- GPT-BigCode (StarCoder, SantaCoder) ------------------------------------------------------
def bigcode(layers, hidden, heads, ffn, vocab, positions):
    """HF GPTBigCode with multi_query: c_attn hidden x (hidden + 2 x head_dim) and c_proj with
    biases, a GELU MLP with biases, two LayerNorms a layer, learned positions, tied head."""
    d = hidden // heads
    attn = hidden * (hidden + 2 * d) + (hidden + 2 * d) + hidden * hidden + hidden
    mlp = 2 * hidden * ffn + ffn + hidden
    return layers * (attn + mlp + 4 * hidden) + (vocab + positions) * hidden + 2 * hidden


@pytest.mark.parametrize("name, shape, total, published, kv", [
    # published: "15.5B parameter models" (bigcode/starcoder model card); KV 40 layers x 2
    # x 1 head x 128 x 2 bytes (the old reading: 48 heads, 983,040 bytes, 18.47B)
    ("starcoder", (40, 6144, 48, 24576, 49152, 8192), 15_517_456_384, 15.5, 20_480),
    # published: "1.1B parameter models" (bigcode/santacoder model card); 24 x 2 x 128 x 2
    ("gpt_bigcode-santacoder", (24, 2048, 16, 8192, 49280, 2048), 1_124_886_528, 1.1, 12_288),
])
def test_gpt_bigcode_is_multi_query(name, shape, total, published, kv):
    assert bigcode(*shape) == total
    m = read(name)
    assert (m.kv_heads, m.learned_positions, m.bias, m.tied_embeddings) == (
        1, shape[-1], True, True)
    assert m.parameters == total and round(m.parameters / 1e9, 1) == published
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == kv


@pytest.mark.parametrize("multi_query, kv_heads", [(False, 16), (None, 1)])
def test_gpt_bigcode_multi_query_switch(tmp_path, multi_query, kv_heads):
    m = write(tmp_path, {**fixture("gpt_bigcode-santacoder"), "multi_query": multi_query})
    assert m.kv_heads == kv_heads


def test_gpt_bigcode_bad_multi_query_is_named(tmp_path):
    with pytest.raises(UserError, match="multi_query"):
        write(tmp_path, {**fixture("gpt_bigcode-santacoder"), "multi_query": 2})


# ---- Snowflake Arctic: a dense residual MLP beside the experts ------------------------------
# 35 layers, hidden 7168, 56 heads and 8 KV heads of 128, 128 SwiGLU experts of 4864, top 2,
# with use_residual a SwiGLU residual MLP 7168 wide on every MoE layer, vocabulary 32000
ARCTIC_ATTN = 7168 * (7168 + 2 * 1024) + 7168 * 7168
ARCTIC_EXPERT = 3 * 7168 * 4864                   # x 35 layers = 3.66B, Snowflake's figure
ARCTIC_RESIDUAL = 3 * 7168 * 7168
ARCTIC_LAYER = ARCTIC_ATTN + 128 * ARCTIC_EXPERT + 7168 * 128 + ARCTIC_RESIDUAL + 2 * 7168
ARCTIC_TOKENS = 2 * 32000 * 7168 + 7168


def test_arctic_counts_its_residual_mlp():
    total = 35 * ARCTIC_LAYER + ARCTIC_TOKENS
    active = total - 35 * 126 * ARCTIC_EXPERT
    assert (total, active) == (478_584_357_888, 17_318_396_928)
    assert round(35 * ARCTIC_EXPERT / 1e9, 2) == 3.66
    # the dense part (attention, residual MLP, embeddings): Snowflake's "10B dense"
    assert round((35 * (ARCTIC_ATTN + ARCTIC_RESIDUAL) + ARCTIC_TOKENS) / 1e9) == 10
    m = read("snowflake-arctic-instruct")
    assert (m.experts, m.experts_per_token, m.ffn, m.shared_ffn) == (128, 2, 4864, 7168)
    assert (m.parameters, m.active_parameters) == (total, active)
    # published: 480B total, 17B active (the old reading: 473.19B, 11.92B active)
    assert round(m.parameters / 1e9, -1) == 480 and round(m.active_parameters / 1e9) == 17


def test_arctic_without_residual_and_every_other_layer(tmp_path):
    m = write(tmp_path, {**fixture("snowflake-arctic-instruct"), "use_residual": False})
    assert m.shared_ffn == 0
    # moe_layer_frequency 2: layers 1, 3, ..., 33 are MoE (ArcticDecoderLayer: (i + 1) % 2)
    m = write(tmp_path, {**fixture("snowflake-arctic-instruct"), "moe_layer_frequency": 2})
    assert (m.dense_layers, m.moe_layer_step, m.dense_ffn) == (18, 2, 4864)


# ---- Qwen (v1) ----------------------------------------------------------------------------------
def test_qwen_v1_mlp_is_half_intermediate_size():
    # 32 layers, hidden 4096, 32 heads of 128, SwiGLU 11008 wide (22016 / 2), c_attn bias,
    # vocabulary 151936, untied
    layer = 4 * 4096 * 4096 + 3 * 4096 + 3 * 4096 * 11008 + 2 * 4096
    total = 32 * layer + 2 * 151936 * 4096 + 4096
    assert total == 7_721_324_544
    m = read("qwen-7b")
    assert (m.ffn, m.gated_mlp, m.qkv_bias, m.bias) == (11008, True, True, False)
    # published: 7.72B (hub count of Qwen/Qwen-7B; the old reading: a 2-matrix MLP 22016
    # wide, no biases, 9.16B)
    assert m.parameters == total and round(m.parameters / 1e9, 2) == 7.72


# ---- Ling (bailing_moe): num_shared_experts ---------------------------------------------------
def test_ling_lite_counts_its_shared_experts():
    # 28 layers, hidden 2048, 16 heads and 4 KV heads of 128, 64 SwiGLU experts of 1408 (6 a
    # token) and num_shared_experts 2 of 1408, vocabulary 126464, untied
    expert = 3 * 2048 * 1408
    attn = 2048 * (2048 + 2 * 512) + 2048 * 2048
    layer = attn + 64 * expert + 2 * expert + 2048 * 64 + 2 * 2048
    total = 28 * layer + 2 * 126464 * 2048 + 2048
    active = total - 28 * 58 * expert
    assert (total, active) == (16_801_974_272, 2_753_153_024)
    m = read("ling-lite-1.5")
    assert (m.experts, m.experts_per_token, m.shared_ffn) == (64, 6, 2 * 1408)
    assert (m.parameters, m.active_parameters) == (total, active)
    # published: 16.8B total, 2.75B activated (the old reading, without the shared experts:
    # 16.32B, 2.27B)
    assert round(m.parameters / 1e9, 1) == 16.8 and round(m.active_parameters / 1e9, 2) == 2.75


# ---- Phi-2, StableLM, Nemotron: biases and LayerNorms ----------------------------------------
def test_phi2_biases_and_layernorms():
    # 32 layers, hidden 2560, 32 heads of 80, GELU MLP 10240; biases on Q, K, V, dense, fc1,
    # fc2; LayerNorm (scale and shift); untied
    attn = 4 * 2560 * 2560 + 4 * 2560
    mlp = 2 * 2560 * 10240 + 10240 + 2560
    published = 32 * (attn + mlp + 2 * 2560) + 2 * 51200 * 2560 + 2 * 2560 + 51200
    assert published == 2_779_683_840          # the hub's count of microsoft/phi-2
    m = read("phi-2")
    assert (m.bias, m.norm, m.gated_mlp) == (True, "layernorm", False)
    # one LayerNorm a layer (attention and MLP in parallel; h283: it was counted as two,
    # 163,840 high); the LM head's bias (h321: it was left out, 51,200 low; the old reading,
    # without biases and with RMSNorms: 2,778,892,800)
    assert (m.layer_norms, m.lm_head_bias) == (1, True)
    assert m.parameters == published == 2_779_683_840


def test_stablelm_use_qkv_bias_and_layernorm(tmp_path):
    # HF StableLmConfig: use_qkv_bias puts biases on Q, K and V; nn.LayerNorm everywhere
    # (StableLM-2-1.6B's shape: 24 layers, hidden 2048, 32 heads, SwiGLU 5632, vocab 100352)
    m = write(tmp_path, {"model_type": "stablelm", "hidden_act": "silu", "hidden_size": 2048,
                         "intermediate_size": 5632, "num_attention_heads": 32,
                         "num_hidden_layers": 24, "num_key_value_heads": 32,
                         "use_qkv_bias": True, "tie_word_embeddings": False,
                         "vocab_size": 100352})
    layer = 4 * 2048 * 2048 + 3 * 2048 + 3 * 2048 * 5632 + 2 * 2 * 2048
    assert (m.qkv_bias, m.norm) == (True, "layernorm")
    assert m.parameters == 24 * layer + 2 * 100352 * 2048 + 2 * 2048 == 1_644_515_328


def test_nemotron_is_layernorm_and_ungated(tmp_path):
    # HF Nemotron: LayerNorm1P (scale and shift), a relu2 MLP without gate
    m = write(tmp_path, {"model_type": "nemotron", "hidden_act": "relu2", "head_dim": 128,
                         "hidden_size": 3072, "intermediate_size": 9216,
                         "num_attention_heads": 24, "num_hidden_layers": 32,
                         "num_key_value_heads": 8, "vocab_size": 256000,
                         "tie_word_embeddings": False})
    layer = 3072 * (3072 + 2 * 1024) + 3072 * 3072 + 2 * 3072 * 9216 + 2 * 2 * 3072
    assert (m.gated_mlp, m.norm) == (False, "layernorm")
    # Nemotron-Mini-4B's shape: 4.19B (the hub's count of nvidia/Nemotron-Mini-4B-Instruct)
    assert m.parameters == 32 * layer + 2 * 256000 * 3072 + 2 * 3072 == 4_190_509_056


def test_jetmoe_mixture_of_attention_is_refused(tmp_path):
    with pytest.raises(UserError, match="jetmoe.*mixture of attention experts"):
        write(tmp_path, {"model_type": "jetmoe", "hidden_size": 2048, "kv_channels": 128,
                         "num_key_value_heads": 16, "num_hidden_layers": 24,
                         "num_local_experts": 8, "num_experts_per_tok": 2,
                         "intermediate_size": 5632, "vocab_size": 32000})


# ---- read right before this pass: published totals and KV bytes, as guards ------------------
@pytest.mark.parametrize("name, total, active, kv", [
    # DeepSeek-R1: 671B / 37B activated; MLA latent 512 + rope 64 a layer, bf16: 61 x 576 x 2
    ("deepseek-r1", 671.0, 37.6, 61 * 576 * 2),
    # Mixtral-8x22B: 141B / 39B; 56 layers x 2 x 8 KV heads x 128 x 2 bytes
    ("mixtral-8x22b-instruct-v0.1", 140.6, 39.2, 56 * 2 * 8 * 128 * 2),
    ("llama-3.1-405b-instruct", 405.9, 405.9, 126 * 2 * 8 * 128 * 2),      # 405B
    ("qwen2-57b-a14b-instruct", 57.4, 14.2, 28 * 2 * 4 * 128 * 2),         # 57B / A14B
    ("phi-4", 14.7, 14.7, 40 * 2 * 10 * 128 * 2),                          # 14B (hub 14.7B)
    ("falcon-180b", 178.6, 178.6, 80 * 2 * 8 * 64 * 2),                    # 180B
    ("mistral-large-instruct-2407", 122.6, 122.6, 88 * 2 * 8 * 128 * 2),   # 123B
    ("olmoe-1b-7b-0924", 6.9, 1.3, 16 * 2 * 16 * 128 * 2),                 # 6.9B / 1.3B
    ("granite-3.1-8b-instruct", 8.2, 8.2, 40 * 2 * 8 * 128 * 2),           # 8.17B, tied
    ("granite-3.0-3b-a800m-instruct", 3.3, 0.9, 32 * 2 * 8 * 64 * 2),      # 3.3B / 800M
    ("gpt-neox-20b", 20.6, 20.6, 44 * 2 * 64 * 96 * 2),                    # 20,554,567,680
    ("llama-3.2-1b", 1.2, 1.2, 16 * 2 * 8 * 64 * 2),                       # 1.23B, tied
])
def test_published_totals_read_right(name, total, active, kv):
    m = read(name)
    assert round(m.parameters / 1e9, 1) == total
    assert round(m.active_parameters / 1e9, 1) == active
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == kv


def test_exact_published_counts():
    assert read("gpt-neox-20b").parameters == 20_554_567_680
    # Granite-3.1-8B ties its LM head to the embedding: 8.17B, not 8.37B
    assert read("granite-3.1-8b-instruct").tied_embeddings


def test_deepseek_r1_fp8_weight_bytes():
    # fp8 block quantization: every linear layer 1 byte a weight, the embedding and LM head
    # (2 x 129280 x 7168) in bf16; the 128 x 128 blocks' fp32 scales (4 bytes a 16,384
    # weights, 0.16 GB) not counted
    m = read("deepseek-r1")
    tokens = 2 * 129280 * 7168
    assert m.weight_storage_bytes == (m.parameters - tokens) * 1 + tokens * 2


def test_jamba_is_refused_in_one_line():
    with pytest.raises(UserError, match="'jamba' is a hybrid of Mamba") as e:
        read("jamba-v0.1")
    assert "\n" not in str(e.value)


# ---- refused: cross-attention layers, Baichuan-M1's K/V convolution ---------------------------
def test_llama32_vision_cross_attention_is_refused():
    # before: 40 self-attention layers, 9.78B, 163,840 KV bytes a token; 8 of them are
    # cross-attention layers with a per-image cache
    with pytest.raises(UserError, match="cross-attention layers") as e:
        read("llama-3.2-11b-vision-instruct")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("extra", [{"cross_attention_layers": [3, 8]},
                                   {"sliding_window_layers": [1, 3], "sliding_window": 8192},
                                   {"conv_window": 2}])
def test_layer_kinds_not_modelled_are_refused_in_any_family(tmp_path, extra):
    cfg = {**fixture("llama-3.2-1b"), **extra}
    with pytest.raises(UserError, match=repr(next(iter(extra)))):
        write(tmp_path, cfg)


def test_baichuan_m1_is_refused(tmp_path):
    with pytest.raises(UserError, match="baichuan_m1.*conv_window"):
        write(tmp_path, {"model_type": "baichuan_m1", "hidden_size": 4096,
                         "intermediate_size": 11008, "num_hidden_layers": 32,
                         "num_attention_heads": 32, "vocab_size": 133120})


# ---- refused: StepFun Step3's factorized attention ---------------------------------------------
# stepfun-ai/step3 config.json (text_config of step3_vl): 61 layers, hidden 7168, 64 query
# heads, num_attention_groups 1 KV head of head_dim 256, share_q_dim 2048, 48 experts top 3
# on the layers moe_layers_enum lists, share_expert_dim 5120. Before: read as multi-head
# attention with 64 KV heads (3,997,696 KV bytes a token, 64 x too many) and every layer MoE,
# 245.44B where StepFun publishes 321B
STEP3 = {"model_type": "step3_vl", "architectures": ["Step3VLForConditionalGeneration"],
         "text_config": {"model_type": "step3_text", "hidden_size": 7168,
                         "intermediate_size": 18432, "num_attention_heads": 64,
                         "num_attention_groups": 1, "num_hidden_layers": 61, "head_dim": 256,
                         "share_q_dim": 2048, "moe_num_experts": 48, "moe_top_k": 3,
                         "moe_intermediate_size": 5120, "share_expert_dim": 5120,
                         "moe_layers_enum": "4,5,6", "vocab_size": 128815},
         "vision_config": {"hidden_size": 1792}}


def test_step3_is_refused(tmp_path):
    with pytest.raises(UserError, match="step3_text.*share_q_dim") as e:
        write(tmp_path, STEP3)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("key", ["share_q_dim", "moe_layers_enum"])
def test_step3_keys_are_refused_in_any_family(tmp_path, key):
    cfg = {**STEP3["text_config"], "model_type": "llama"}
    cfg = {k: v for k, v in cfg.items() if k in (key, "model_type", "hidden_size",
                                                  "intermediate_size", "num_attention_heads",
                                                  "num_hidden_layers", "vocab_size")}
    with pytest.raises(UserError, match=repr(key)):
        write(tmp_path, cfg)


# ---- refused: DeciLM / Llama-Nemotron Super and Ultra's per-layer blocks ----------------------
# nvidia/Llama-3_3-Nemotron-Super-49B-v1 (model_type nemotron-nas): num_key_value_heads null
# ("varies per layer") and block_configs of per-layer attention (n_heads_in_group, no_op) and
# MLP (ffn_mult). Before: with intermediate_size null, "lacks intermediate_size"; with one
# given, read silently as 80 uniform MHA layers (64 KV heads, 2,621,440 KV bytes a token)
NAS_BLOCKS = [{"attention": {"n_heads_in_group": 8, "no_op": False},
               "ffn": {"ffn_mult": 2.625, "no_op": False}},
              {"attention": {"n_heads_in_group": None, "no_op": True},
               "ffn": {"ffn_mult": 1.0, "no_op": False}}] * 40
NAS = {"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas",
       "hidden_act": "silu", "hidden_size": 8192, "num_attention_heads": 64,
       "num_hidden_layers": 80, "num_key_value_heads": None, "intermediate_size": None,
       "vocab_size": 128256, "tie_word_embeddings": False, "block_configs": NAS_BLOCKS}


@pytest.mark.parametrize("change", [{}, {"intermediate_size": 28672},
                                    {"model_type": "llama", "intermediate_size": 28672}])
def test_nemotron_nas_block_configs_are_refused(tmp_path, change):
    with pytest.raises(UserError, match="block_configs") as e:
        write(tmp_path, {**NAS, **change})
    assert "\n" not in str(e.value)


# ---- refused: LongCat-Flash ---------------------------------------------------------------------
# meituan-longcat/LongCat-Flash-Chat (longcat_flash): num_layers 28, each with two MLA blocks
# and two dense MLPs (ffn_hidden_size 12288) beside one MoE of 512 experts of
# expert_ffn_hidden_size 2048 (top 12) and zero_expert_num 256 identity experts. Before:
# read as 28 plain layers with 512 experts 12288 wide, 2168.90B where Meituan publishes 560B
LONGCAT = {"architectures": ["LongcatFlashForCausalLM"], "model_type": "longcat_flash",
           "num_layers": 28, "hidden_size": 6144, "ffn_hidden_size": 12288,
           "expert_ffn_hidden_size": 2048, "n_routed_experts": 512, "zero_expert_num": 256,
           "zero_expert_type": "identity", "moe_topk": 12, "kv_lora_rank": 512,
           "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
           "v_head_dim": 128, "num_attention_heads": 64, "vocab_size": 131072}


@pytest.mark.parametrize("model_type", ["longcat_flash", "deepseek_v3"])
def test_longcat_flash_is_refused(tmp_path, model_type):
    with pytest.raises(UserError, match="zero_expert_num"):
        write(tmp_path, {**LONGCAT, "model_type": model_type})


# ---- OPT ------------------------------------------------------------------------------------------
def test_opt_13b_biases_positions_and_tied_head():
    # 40 layers, hidden 5120, 40 heads, ReLU MLP 20480, biases everywhere (enable_bias),
    # LayerNorms, a learned position table of 2048 + 2 rows, the LM head tied to the
    # 50272-row embedding (HF OPT)
    layer = (4 * 5120 * 5120 + 4 * 5120) + (2 * 5120 * 20480 + 20480 + 5120) + 2 * 2 * 5120
    total = 40 * layer + (50272 + 2050) * 5120 + 2 * 5120
    assert total == 12_853_473_280
    m = read("opt-13b")
    assert (m.bias, m.norm, m.tied_embeddings, m.learned_positions, m.gated_mlp) == (
        True, "layernorm", True, 2050, False)
    # published: 13B (OPT paper), 12.9B (the hub); the old reading: untied, no biases, no
    # position table, RMSNorms, 13,098,112,000
    assert m.parameters == total and round(m.parameters / 1e9, 1) == 12.9


def test_opt_projected_embedding_is_refused(tmp_path):
    # OPT-350m: hidden 1024, word_embed_proj_dim 512 (project_in / project_out)
    with pytest.raises(UserError, match="word_embed_proj_dim 512 differs from hidden_size"):
        write(tmp_path, {**fixture("opt-13b"), "hidden_size": 1024, "num_attention_heads": 16,
                         "ffn_dim": 4096, "word_embed_proj_dim": 512})


# ---- GPT-Neo: local attention on every other layer ---------------------------------------------
def test_gpt_neo_27b_local_layers_and_positions():
    # HF GPTNeo: 32 layers, hidden 2560, 20 heads, GELU MLP 4 x 2560; Q, K, V without bias,
    # out_proj, c_fc, c_proj with; two LayerNorms; 2048 learned positions; tied LM head
    layer = 3 * 2560 * 2560 + (2560 * 2560 + 2560) + (2 * 2560 * 10240 + 10240 + 2560) \
        + 2 * 2 * 2560
    hf_total = 32 * layer + (50257 + 2048) * 2560 + 2 * 2560
    assert hf_total == 2_651_307_520                  # published: 2.7B (model card)
    m = read("gpt-neo-2.7b")
    # netmodel puts a bias on every linear layer of a biased model: Q, K, V's 3 x 2560 a
    # layer more than GPT-Neo has
    assert m.parameters == hf_total + 32 * 3 * 2560 == 2_651_553_280
    assert (m.heads, m.learned_positions, m.tied_embeddings, m.norm) == (
        20, 2048, True, "layernorm")
    # 'local' layers (1, 3, ..., 31) keep the last window_size 256 tokens
    assert (m.sliding_window, m.sliding_layers) == (256, 16)
    assert m.kv_tokens_held(2048) == (16 * 2048 + 16 * 256) / 32


def test_gpt_neo_attention_types_expand_as_hf(tmp_path):
    cfg = {k: v for k, v in fixture("gpt-neo-2.7b").items() if k != "attention_layers"}
    m = write(tmp_path, cfg)                         # from attention_types alone
    assert (m.sliding_window, m.sliding_layers) == (256, 16)
    m = write(tmp_path, {**cfg, "attention_types": [[["global"], 32]]})
    assert m.sliding_layers == 0


@pytest.mark.parametrize("change, says", [
    ({"attention_layers": ["global", "dilated"] * 16}, "attention_layers must list"),
    ({"attention_layers": None, "attention_types": [["global", 32]]}, "attention_types"),
])
def test_gpt_neo_bad_layer_kinds_are_named(tmp_path, change, says):
    with pytest.raises(UserError, match=says):
        write(tmp_path, {**fixture("gpt-neo-2.7b"), **change})
