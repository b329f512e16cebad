"""Late-2025 HuggingFace configs a user may bring (trimmed copies in
``tests/compute/data/hf_families/``, sources in its README), read into counts and KV sizes
derived by hand and checked against their makers' figures; what netmodel does not model is
refused in one line.

Before: MiniMax-M2 was refused for its ``attn_type_list`` although every entry is 1
(softmax attention); ERNIE-4.5-21B-A3B was refused for lacking ``num_experts_per_tok`` (it
says ``moe_k``); DeepSeek-V3.2-Exp was read silently as DeepSeek-V3 (671.03B, 37.55B active,
its lightning indexer and top-2048 sparse attention dropped); Gemma-3n was refused only
because its ``intermediate_size`` is a list.
"""

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.models import load_hf_config

DATA = Path(__file__).parent / "data" / "hf_families"


def read(name: str):
    return load_hf_config(DATA / f"{name}.json")


def fixture(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def write(tmp_path, cfg: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_hf_config(path, name="m")


def test_minimax_m2_reads_as_a_full_attention_moe():
    # 62 layers, hidden 3072, 48 query and 8 KV heads of 128, 256 SwiGLU experts 1536 wide
    # (intermediate_size; no shared expert), router 3072 x 256, vocabulary 200064, untied;
    # use_qk_norm: q_norm over 48 x 128 and k_norm over 8 x 128 (HF MiniMaxM2Attention;
    # h294, before not counted: 62 x 7,168 = 444,416 low, 228,689,304,576 in all)
    attn = 3072 * (48 * 128 + 2 * 8 * 128) + 48 * 128 * 3072 + (48 + 8) * 128   # 44,047,360
    expert = 3 * 3072 * 1536                                           # 14,155,776
    layer = attn + 256 * expert + 3072 * 256 + 2 * 3072
    total = 62 * layer + 2 * 200064 * 3072 + 3072
    active = total - 62 * (256 - 8) * expert
    assert (total, active) == (228_689_748_992, 11_030_537_216)
    m = read("minimax-m2")
    assert m.qk_norm == 7168
    assert (m.parameters, m.active_parameters) == (total, active)
    assert (m.experts, m.experts_per_token, m.ffn, m.shared_ffn, m.dense_layers) == (
        256, 8, 1536, 0, 0)
    assert m.sliding_layers == 0
    # MiniMax: 230B total (0.6% above: its 3 MTP modules are not counted),
    # 10B active, which leaves out the embedding and LM head (1.23B): 9.80B here
    assert abs(total / 230e9 - 1) < 0.01
    assert round((active - 2 * 200064 * 3072) / 1e9, 2) == 9.80
    # KV per token: 62 layers x 8 KV heads x 128 x (K and V) x 2 bytes
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 62 * 8 * 128 * 2 * 2 == 253_952


def test_minimax_lightning_attention_list_is_still_refused(tmp_path):
    cfg = fixture("minimax-m2")
    cfg["attn_type_list"] = [0, 0, 0, 0, 0, 0, 0, 1] * 7 + [0] * 6
    with pytest.raises(UserError, match="attn_type_list"):
        write(tmp_path, cfg)
    cfg["attn_type_list"] = [True] * 62  # a boolean is not the softmax code 1
    with pytest.raises(UserError, match="attn_type_list"):
        write(tmp_path, cfg)


def test_ernie45_moe_reads_moe_k_shared_experts_and_the_start_index():
    # 28 layers, hidden 2560, 20 heads of 128 (head_dim null: 2560 / 20), 4 KV heads;
    # layer 0 dense (intermediate_size 12288), layers 1-27 MoE (moe_layer_start_index 1,
    # end null: the last): 64 routed experts 1536 wide, 6 per token, 2 shared as wide;
    # vocabulary 103424, tied
    attn = 2560 * (2560 + 2 * 4 * 128) + 2560 * 2560                  # 15,728,640
    expert = 3 * 2560 * 1536                                           # 11,796,480
    moe = attn + (64 + 2) * expert + 2560 * 64 + 2 * 2560
    dense = attn + 3 * 2560 * 12288 + 2 * 2560
    total = 27 * moe + dense + 103424 * 2560 + 2560
    active = total - 27 * (64 - 6) * expert
    assert (total, active) == (21_825_436_160, 3_352_148_480)
    m = read("ernie-4.5-21b-a3b-pt")
    assert (m.parameters, m.active_parameters) == (total, active)
    assert (m.experts, m.experts_per_token, m.shared_ffn, m.dense_layers, m.dense_ffn) == (
        64, 6, 3072, 1, 12288)
    # Baidu: 21B total, 3B active per token (21.8B on the model's HuggingFace page)
    assert round(total / 1e9, 1) == 21.8
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 28 * 4 * 128 * 2 * 2 == 57_344


@pytest.mark.parametrize("start, end, interval, moe_layers", [
    (1, None, 1, 27), (0, -1, 1, 28), (1, 26, 1, 26), (1, None, 2, 14), (None, None, 1, 27)])
def test_ernie45_moe_layers_as_hf_builds_them(tmp_path, start, end, interval, moe_layers):
    # HF Ernie4_5_MoeDecoderLayer: MoE when (i + 1) % interval == 0 and start <= i <= end
    # (Ernie4_5_MoeConfig defaults: start 1, end -1 = the last layer)
    cfg = fixture("ernie-4.5-21b-a3b-pt")
    cfg.update(moe_layer_start_index=start, moe_layer_end_index=end,
               moe_layer_interval=interval)
    assert write(tmp_path, cfg).dense_layers == 28 - moe_layers


def test_deepseek_v32_sparse_attention_is_refused():
    with pytest.raises(UserError) as e:
        read("deepseek-v3.2-exp")
    assert "deepseek_v32" in str(e.value) and "DeepSeek Sparse Attention" in str(e.value)
    assert "\n" not in str(e.value)


def test_index_topk_refused_under_another_model_type(tmp_path):
    cfg = fixture("deepseek-v3.2-exp")
    cfg["model_type"] = "deepseek_v3"
    with pytest.raises(UserError, match="index_topk"):
        write(tmp_path, cfg)
    del cfg["index_topk"]  # without the indexer: DeepSeek-V3's layout, read as before
    assert write(tmp_path, cfg).parameters == 671_026_404_352  # the catalog's DeepSeek-V3


def test_gemma3n_is_refused_by_name():
    with pytest.raises(UserError, match="Gemma-3n"):
        read("gemma-3n-e4b")


def test_mistral_small_32_reads_its_text_config():
    # 40 layers, hidden 5120, 32 query and 8 KV heads of 128 (head_dim 128, not 5120 / 32),
    # SwiGLU 32768 wide, vocabulary 131072, untied; the Pixtral encoder is not counted
    layer = 5120 * (32 * 128 + 2 * 8 * 128) + 32 * 128 * 5120 + 3 * 5120 * 32768 + 2 * 5120
    total = 40 * layer + 2 * 131072 * 5120 + 5120
    m = read("mistral-small-3.2-24b-instruct-2506")
    assert m.parameters == total == 23_572_403_200
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 40 * 8 * 128 * 2 * 2 == 163_840


@pytest.mark.parametrize("name, layers, hidden, heads, ffn, total", [
    ("command-r7b-12-2024", 32, 4096, 32, 14336, 8_028_033_024),
    ("command-a-03-2025", 64, 12288, 96, 36864, 111_057_580_032)])
def test_cohere2_ties_its_embeddings_and_windows_three_layers_of_four(
        name, layers, hidden, heads, ffn, total):
    # HF Cohere2Config: tie_word_embeddings true (the file leaves it out), layer i full
    # attention when (i + 1) % sliding_window_pattern (4) == 0, the others a 4096 window;
    # 8 KV heads of 128, SwiGLU, vocabulary 256000, one weight-only LayerNorm per layer
    # (h283: it was counted as two, 4096 / 12288 a layer high). CohereForAI/aya-expanse-8b,
    # of R7B's shapes, publishes 8,028,033,024 parameters
    layer = hidden * (heads * 128 + 2 * 8 * 128) + heads * 128 * hidden + 3 * hidden * ffn
    assert layers * (layer + hidden) + 256000 * hidden + hidden == total
    m = read(name)
    assert m.parameters == total
    assert m.tied_embeddings
    assert (m.sliding_window, m.sliding_layers) == (4096, layers * 3 // 4)
    # Cohere: 8.03B (the R7B HuggingFace page), 111B (Command A)
    # KV at 100,000 tokens: the full layers hold all of them, the windowed 4096
    per_layer_token = 8 * 128 * 2 * 2
    held = layers * m.kv_tokens_held(100_000) * m.kv_elements_per_token * m.kv_bytes
    assert held == (layers // 4 * 100_000 + layers * 3 // 4 * 4096) * per_layer_token


def test_a_named_window_pattern_is_read_in_any_family(tmp_path):
    # EXAONE-4.0-32B (exaone4) names sliding_window_pattern 4 and no layer_types: 48 of
    # its 64 layers are windowed (HF Exaone4Config), not all 64
    cfg = {"model_type": "exaone4", "hidden_size": 5120, "num_hidden_layers": 64,
           "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
           "intermediate_size": 27392, "vocab_size": 102400, "hidden_act": "silu",
           "sliding_window": 4096, "sliding_window_pattern": 4, "tie_word_embeddings": False}
    assert write(tmp_path, cfg).sliding_layers == 48


@pytest.mark.parametrize("model_type", ["hunyuan_v1_moe", "hunyuan"])
def test_hunyuan_a13b_per_layer_lists(tmp_path, model_type):
    # 32 layers, hidden 4096, 32 query and 8 KV heads of 128 (attention_head_dim), 64 SwiGLU
    # experts 3072 wide (moe_intermediate_size, 32 equal entries), 8 per token (moe_topk),
    # one shared expert as wide (num_shared_expert x moe_intermediate_size, with
    # use_mixed_mlp_moe), router 4096 x 64, vocabulary 128167, tied; use_qk_norm:
    # query_layernorm and key_layernorm over head_dim, 2 x 128 a layer (h294; before, not
    # counted: 8,192 low, 80,393,175,040). Earlier still: refused for lacking
    # num_experts_per_tok
    attn = 4096 * (4096 + 2 * 8 * 128) + 4096 * 4096 + 2 * 128        # 41,943,296
    expert = 3 * 4096 * 3072                                           # 37,748,736
    layer = attn + 65 * expert + 4096 * 64 + 2 * 4096
    total = 32 * layer + 128167 * 4096 + 4096
    active = total - 32 * 56 * expert
    assert (total, active) == (80_393_183_232, 12_747_448_320)
    cfg = fixture("hunyuan-a13b-instruct")
    cfg["model_type"] = model_type
    m = write(tmp_path, cfg)
    assert m.qk_norm == 2 * 128
    assert (m.parameters, m.active_parameters) == (total, active)
    assert (m.experts, m.experts_per_token, m.ffn, m.shared_ffn) == (64, 8, 3072, 3072)
    # Tencent: 80B total, 13B active
    assert round(total / 1e9) == 80 and round(active / 1e9) == 13
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 32 * 8 * 128 * 2 * 2


@pytest.mark.parametrize(("model_type", "qk_norm"), [("hunyuan_v1_moe", 2 * 128),
                                                      ("hunyuan_v1_dense", 2 * 128),
                                                      ("hunyuan", 0)])
def test_hunyuan_qk_norms_without_use_qk_norm(tmp_path, model_type, qk_norm):
    # HF's HunYuanMoEV1Attention / HunYuanDenseV1Attention build query_layernorm and
    # key_layernorm (head_dim each) whatever the config says; Tencent's remote "hunyuan"
    # code only where use_qk_norm. A config without the key: 2 x 128 a layer for HF's
    # types (before: 0, 32 x 256 = 8,192 parameters low), none for the remote one
    cfg = {k: v for k, v in fixture("hunyuan-a13b-instruct").items() if k != "use_qk_norm"}
    cfg["model_type"] = model_type
    assert write(tmp_path, cfg).qk_norm == qk_norm


def test_hunyuan_shared_expert_only_with_mixed_mlp(tmp_path):
    cfg = fixture("hunyuan-a13b-instruct")
    cfg["use_mixed_mlp_moe"] = False
    assert write(tmp_path, cfg).shared_ffn == 0


@pytest.mark.parametrize("change, says", [
    ({"moe_topk": [8] * 31 + [4]}, "moe_topk must be one value"),
    ({"moe_intermediate_size": []}, "moe_intermediate_size must be one value"),
    ({"use_cla": True}, "use_cla"),            # cross-layer KV sharing: not modelled
])
def test_hunyuan_unmodelled_shapes_are_refused(tmp_path, change, says):
    cfg = {**fixture("hunyuan-a13b-instruct"), **change}
    with pytest.raises(UserError, match=says):
        write(tmp_path, cfg)


def test_gemma3_27b_as_published_takes_the_config_class_defaults():
    # google/gemma-3-27b-it's text_config names no vocab_size (Gemma3TextConfig: 262,208)
    # nor max_position_embeddings (131,072); before, it was refused ("lacks 'vocab_size'").
    # 62 layers, hidden 5376, 32 query and 16 KV heads of 128, GeGLU 21504 wide, tied;
    # four RMSNorms a layer and the Q and K norms over head_dim (h283: two and none before,
    # 27,008,663,808)
    layer = (5376 * (32 * 128 + 2 * 16 * 128) + 32 * 128 * 5376 + 3 * 5376 * 21504
             + 4 * 5376 + 2 * 128)
    total = 62 * layer + 262208 * 5376 + 5376
    m = read("gemma-3-27b-it")
    assert m.parameters == total == 27_009_346_304
    assert (m.vocab, m.max_context, m.tied_embeddings) == (262208, 131072, True)
    assert (m.sliding_window, m.sliding_layers) == (1024, 52)   # 62 - 62 // 6
    # Google: 27B (27.4B with the 0.4B SigLIP vision encoder, not counted)
    assert round(total / 1e9) == 27
    assert m.layers * m.kv_elements_per_token * m.kv_bytes == 62 * 16 * 128 * 2 * 2
