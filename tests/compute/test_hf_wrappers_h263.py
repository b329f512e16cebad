"""HuggingFace config.json cases h252 left (h263): vision-language wrappers read for their
language model, MiniCPM4's sparse attention, Jais, Grok-1 and Granite-4.0, on copies of the
published configs (``tests/compute/data/hf_families/``, sources in its README). Counts are
derived by hand below and checked against the publishers' figures.

Before: LLaVA-1.5 (text_config naming no layers) and InternVL2 (llm_config) were refused with
"lacks 'num_hidden_layers'"; Qwen2-VL / Qwen2.5-VL read without their Q/K/V biases; MiniCPM4
with its sparse_config read as dense attention; Jais read as a GELU MLP with a 2,048-row
position table (10.23B, published 13B); Grok-1 read with two-matrix experts (212.6B,
published 314B); granite-4.0-micro refused as a Mamba hybrid though every layer is attention.
"""


import pytest
from click.testing import CliRunner

from compute.errors import UserError
from tests.compute.hf_helpers import DATA, fixture, read, write


def kv_bytes(m) -> float:
    return m.layers * m.kv_elements_per_token * m.kv_bytes


def llama_like(layers, hidden, heads, kv_heads, ffn, vocab, *, tied=False, qkv_bias=False):
    """Llama-style layers: Q, K, V, O (head_dim hidden / heads), a SwiGLU MLP, two RMSNorms a
    layer and a final one; biases on Q, K and V where ``qkv_bias``."""
    kv = kv_heads * hidden // heads
    attn = 2 * hidden * hidden + 2 * hidden * kv + (hidden + 2 * kv if qkv_bias else 0)
    layer = attn + 3 * hidden * ffn + 2 * hidden
    return layers * layer + vocab * hidden * (1 if tied else 2) + hidden


# ---- vision-language wrappers: the language model ------------------------------------------
# LLaVA-1.5-7B: text_config gives only vocab_size 32064 and max_position_embeddings; the rest
# is LlamaConfig's defaults (32 layers, hidden 4096, 32 heads, intermediate 11008), Vicuna-7B's
# shape. Llama-2-7B's 6,738,415,616 + 64 more rows in the embedding and the head
LLAVA_LM = llama_like(32, 4096, 32, 32, 11008, 32064)


def test_llava_text_config_takes_llama_defaults():
    assert LLAVA_LM == 6_738_415_616 + 2 * 64 * 4096 == 6_738_939_904
    m = read("llava-1.5-7b-hf")
    assert (m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, m.vocab) == (
        32, 4096, 32, 32, 11008, 32064)
    assert m.parameters == LLAVA_LM and not m.tied_embeddings
    assert m.max_context == 4096
    # published: llava-1.5-7b 7.06B on the hub = this 6.74B + CLIP ViT-L/14-336 (0.3035B)
    # and the two-layer projector (4096 x 1024 + 4096 x 4096 + biases = 21.0M), counted
    # apart as vision_parameters (test_vision_tower_h267.py)
    assert round((m.parameters + 0.3035e9 + 20_979_712) / 1e9, 2) == 7.06
    # fp16: 32 layers x 2 x 32 heads x 128 x 2 bytes
    assert kv_bytes(m) == 524_288
    assert "vision tower (vision_config, CLIP ViT and projector" in m.source
    assert "(text_config)" in m.source


# InternVL2-8B: llm_config is InternLM2.5-7B-chat (InternLM2ForCausalLM: no biases, SwiGLU
# 14336 wide, 8 KV heads, untied, vocab 92553 with InternVL's added tokens)
INTERNVL_LM = llama_like(32, 4096, 32, 8, 14336, 92553)


def test_internvl_llm_config_is_read():
    assert INTERNVL_LM == 7_737_782_272
    m = read("internvl2-8b")
    assert (m.layers, m.kv_heads, m.ffn, m.vocab, m.bias, m.qkv_bias) == (
        32, 8, 14336, 92553, False, False)
    assert m.parameters == INTERNVL_LM
    # published: InternLM2.5-7B 7.74B (the hub's count); InternVL2-8B 8.08B with its
    # InternViT-300M and projector, not counted
    assert round(m.parameters / 1e9, 2) == 7.74
    assert kv_bytes(m) == 32 * 2 * 8 * 128 * 2 == 131_072
    assert "(llm_config)" in m.source


def test_deepseek_vl2_language_config_is_read(tmp_path):
    # DeepSeek-VL2 keeps its DeepSeek-MoE language model in language_config: read as the
    # same config alone (a rule check: no published DeepSeek-VL2 file is kept here)
    inner = fixture("olmoe-1b-7b-0924")
    alone = write(tmp_path, inner)
    wrapped = write(tmp_path, {"model_type": "deepseek_vl_v2", "language_config": inner,
                               "vision_config": {"layers": 27, "width": 1152}})
    assert wrapped.parameters == alone.parameters
    assert wrapped.active_parameters == alone.active_parameters
    assert "(language_config)" in wrapped.source


# Qwen2-VL-7B / Qwen2.5-VL-7B: Qwen2-7B's language model in a flat config; biases on Q, K, V
QWEN2_VL_LM = llama_like(28, 3584, 28, 4, 18944, 152064, qkv_bias=True)


@pytest.mark.parametrize("name", ["qwen2-vl-7b-instruct", "qwen2.5-vl-7b-instruct"])
def test_qwen2_vl_reads_its_qkv_biases(name):
    assert QWEN2_VL_LM == 7_615_616_512
    m = read(name)
    assert m.qkv_bias and not m.bias
    # the old reading left out 28 x (3584 + 2 x 512) = 129,024 bias parameters
    assert m.parameters == QWEN2_VL_LM
    # published: Qwen2-VL paper, Table 1: LLM 7.6B beside a 675M vision encoder (8.29B on
    # the hub: 7.616B + 0.676B)
    assert round(m.parameters / 1e9, 1) == 7.6
    assert 8.29e9 - m.parameters == pytest.approx(675e6, rel=0.01)
    assert kv_bytes(m) == 28 * 2 * 4 * 128 * 2 == 57_344
    assert not m.sliding_layers     # use_sliding_window false
    assert "vision tower (vision_config, Qwen2" in m.source   # counted: h267's tests


def test_a_text_model_without_vision_has_no_note():
    assert "vision tower" not in read("qwen3-8b").source


# ---- MiniCPM4: InfLLM v2 sparse attention -----------------------------------------------------
def test_minicpm4_sparse_config_is_refused():
    with pytest.raises(UserError, match="sparse_config") as e:
        read("minicpm4-8b-sparse")
    assert "\n" not in str(e.value)


def test_minicpm4_without_sparse_config_is_dense(tmp_path):
    # the published config.json enables InfLLM v2 only when sparse_config is added (the card)
    cfg = {k: v for k, v in fixture("minicpm4-8b-sparse").items() if k != "sparse_config"}
    m = write(tmp_path, cfg)
    assert m.parameters == llama_like(32, 4096, 32, 2, 16384, 73448) == 8_185_253_888
    assert round(m.parameters / 1e9) == 8      # published: MiniCPM4-8B, 8B


# ---- Jais: SwiGLU on a GPT-2-style config, ALiBi -------------------------------------------
# Jais-13B (JAISLMHeadModel): c_attn and c_proj with biases; an MLP of c_fc and c_fc2
# (swiglu: two input projections) and c_proj, with biases; LayerNorms; no position table
# (position_embedding_type alibi); the LM head tied to the embedding
JAIS_ATTN = 5120 * 3 * 5120 + 3 * 5120 + 5120 * 5120 + 5120
JAIS_MLP = 2 * (5120 * 13653 + 13653) + 13653 * 5120 + 5120
JAIS_TOTAL = 40 * (JAIS_ATTN + JAIS_MLP + 4 * 5120) + 84992 * 5120 + 2 * 5120


def test_jais_is_swiglu_without_a_position_table():
    assert JAIS_TOTAL == 13_020_811_920
    m = read("jais-13b")
    assert (m.gated_mlp, m.learned_positions, m.bias, m.norm, m.tied_embeddings) == (
        True, 0, True, "layernorm", True)
    assert (m.ffn, m.max_context) == (13653, 2048)
    assert m.parameters == JAIS_TOTAL
    # published: "a 13 billion parameter pre-trained bilingual large language model" (the
    # core42/jais-13b model card); the old reading: 10.23B
    assert round(m.parameters / 1e9) == 13
    assert kv_bytes(m) == 40 * 2 * 40 * 128 * 2      # float32 served in bf16


@pytest.mark.parametrize("change, gated, positions", [
    ({"activation_function": "gelu_new"}, False, 0),          # ALiBi, GELU
    ({"position_embedding_type": None}, True, 2048),          # GPT-2's table
    ({"position_embedding_type": "learned"}, True, 2048),
])
def test_gpt2_style_keys_decide(tmp_path, change, gated, positions):
    m = write(tmp_path, {**fixture("jais-13b"), **change})
    assert (m.gated_mlp, m.learned_positions) == (gated, positions)


# ---- Grok-1 ------------------------------------------------------------------------------------
# 64 layers, hidden 6144, 48 query heads and 8 KV heads of 128, 8 experts (top 2) each a gated
# MLP of three 6144 x 32768 matrices, router 6144 x 8, tied embeddings of 131072 rows
GROK_ATTN = 2 * 6144 * 6144 + 2 * 6144 * 1024
GROK_EXPERT = 3 * 6144 * 32768
GROK_LAYER = GROK_ATTN + 8 * GROK_EXPERT + 6144 * 8 + 4 * 6144   # four RMSNorms (h283)
GROK_TOTAL = 64 * GROK_LAYER + 131072 * 6144 + 6144


def test_grok1_experts_are_gated():
    assert GROK_TOTAL == 315_684_820_992        # 315,684,034,560 with two norms a layer
    m = read("grok-1")
    assert (m.experts, m.experts_per_token, m.ffn, m.gated_mlp, m.tied_embeddings) == (
        8, 2, 32768, True, True)
    assert m.parameters == GROK_TOTAL
    # published: "Parameters: 314B" (xai-org/grok-1 README); the old reading: 212.6B
    assert m.parameters == pytest.approx(314e9, rel=0.006)
    assert m.active_parameters == GROK_TOTAL - 64 * 6 * GROK_EXPERT
    assert kv_bytes(m) == 64 * 2 * 8 * 128 * 2 == 262_144


# ---- Granite-4.0 (granitemoehybrid) ------------------------------------------------------------
# granite-4.0-micro: 40 attention layers, hidden 2560, 40 heads and 8 KV heads of 64, no
# experts: the shared_mlp (shared_intermediate_size 8192, SwiGLU) is its MLP; tied
GRANITE_MICRO = llama_like(40, 2560, 40, 8, 8192, 100352, tied=True)


def test_granite_4_micro_all_attention_is_read():
    assert GRANITE_MICRO == 3_402_836_480
    m = read("granite-4.0-micro")
    assert (m.layers, m.kv_heads, m.head_dim, m.ffn, m.experts, m.tied_embeddings) == (
        40, 8, 64, 8192, 1, True)
    assert m.parameters == GRANITE_MICRO
    # published: "3B total parameters" (IBM's Granite 4.0 documentation), 3.4B on the hub
    assert round(m.parameters / 1e9, 1) == 3.4
    assert kv_bytes(m) == 40 * 2 * 8 * 64 * 2 == 81_920
    assert not m.sliding_layers


def test_granite_shared_mlp_width_is_its_own_key(tmp_path):
    m = write(tmp_path, {**fixture("granite-4.0-micro"), "intermediate_size": 512})
    assert m.ffn == 8192     # intermediate_size is the routed experts' (none here)


def test_granite_4_h_mamba_layers_are_refused():
    with pytest.raises(UserError, match=r"36 Mamba-2 state-space layers of 40 "
                                        r"\(layer_types entries 'mamba'\)") as e:
        read("granite-4.0-h-micro")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name, needle", [
    ("minicpm4-8b-sparse", "sparse_config"),
    ("granite-4.0-h-micro", "layer_types"),
])
def test_cli_refusals_are_one_line_exit_2(name, needle):
    from netmodel.cli.main import cli

    r = CliRunner().invoke(cli, ["models", "--hf-config", str(DATA / f"{name}.json")])
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.output


# ---- Grok-2: residual_moe ----------------------------------------------------------------------
# model_type "git", Grok1ForCausalLM; 64 layers, hidden 8192, 64 heads and 8 KV heads of 128,
# 8 gated experts of moe_intermediate_size 16384 (top 2) and, with residual_moe, a dense gated
# MLP of intermediate_size 32768 on every token; untied embeddings of 131072 rows
GROK2_ATTN = 2 * 8192 * 8192 + 2 * 8192 * 1024
GROK2_EXPERT = 3 * 8192 * 16384
GROK2_DENSE = 3 * 8192 * 32768
GROK2_LAYER = GROK2_ATTN + 8 * GROK2_EXPERT + GROK2_DENSE + 8192 * 8
GROK2_TOKENS = 2 * 131072 * 8192


def test_grok2_residual_moe_is_a_dense_mlp_beside_the_experts():
    m = read("grok-2")
    assert (m.experts, m.experts_per_token, m.ffn, m.shared_ffn, m.gated_mlp) == (
        8, 2, 16384, 32768, True)
    # published: 269,515,497,472 parameters (xai-org/grok-2, the hub's count), exactly these
    # layers with 4 RMSNorms a layer and a final one (257 x 8192); h283: before, 2 a layer
    # were counted, 1,048,576 low
    published = 64 * (GROK2_LAYER + 4 * 8192) + GROK2_TOKENS + 8192
    assert published == 269_515_497_472
    assert m.layer_norms == 4
    assert m.parameters == published
    # xAI: about 115B active (2 of 8 experts, the dense MLP, attention, embedding, head)
    assert round(m.active_parameters / 1e9) == 115
    assert kv_bytes(m) == 64 * 2 * 8 * 128 * 2


def test_residual_moe_false_adds_nothing(tmp_path):
    m = write(tmp_path, {**fixture("grok-2"), "residual_moe": False})
    assert m.shared_ffn == 0


def test_a_nested_config_missing_a_key_is_named(tmp_path):
    # a text_config of a type whose defaults are not kept here (Qwen2's), without its
    # layers: refused, naming the table that lacks the key (llava-v1.6-mistral-7b-hf's,
    # which leaves its shape to MistralConfig's defaults, is read since h321:
    # test_vision_towers_h321.py)
    cfg = {"model_type": "llava_next", "vision_config": {"hidden_size": 1024},
           "text_config": {"model_type": "qwen2", "intermediate_size": 14336,
                           "num_key_value_heads": 8, "vocab_size": 32064}}
    with pytest.raises(UserError, match=r"config.json: text_config: .*lacks "
                                        r"'num_hidden_layers'") as e:
        write(tmp_path, cfg)
    assert "\n" not in str(e.value)
