"""Sliding-window attention: which layers a published config.json windows, and what the
window takes off the KV cache, the decode reads and the attention FLOPs.

Configs are the published config.json files at the URLs given (fields that do not bear on
the shapes left out). Expected values are derived by hand in the comments.
"""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.memory import kv_cache_bytes
from compute.models import ModelSpec, get_model, load_hf_config
from compute.phases import Workload
from compute.sharding import shards
from compute.stages import stage_work
from tests.compute.test_hf_configs import MISTRAL_7B, MIXTRAL, QWEN2_7B, QWEN_MOE

# https://huggingface.co/google/gemma-2-9b/blob/main/config.json
GEMMA2_9B = {
    "architectures": ["Gemma2ForCausalLM"], "attention_bias": False,
    "attn_logit_softcapping": 50.0, "cache_implementation": "hybrid",
    "final_logit_softcapping": 30.0, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584, "intermediate_size": 14336,
    "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 16,
    "num_hidden_layers": 42, "num_key_value_heads": 8, "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096,
    "torch_dtype": "float32", "vocab_size": 256000,
}
# https://huggingface.co/google/gemma-3-1b-pt/blob/main/config.json
GEMMA3_1B = {
    "architectures": ["Gemma3ForCausalLM"], "attention_bias": False, "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "intermediate_size": 6912,
    "max_position_embeddings": 32768, "model_type": "gemma3_text", "num_attention_heads": 4,
    "num_hidden_layers": 26, "num_key_value_heads": 1, "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000, "rope_theta": 1000000,
    "sliding_window": 512, "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
    "vocab_size": 262144,
}
# https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json (the text model sits in
# text_config; vision_config left out)
GEMMA3_27B = {
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "torch_dtype": "bfloat16",
    "text_config": {
        "head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504,
        "model_type": "gemma3_text", "num_attention_heads": 32, "num_hidden_layers": 62,
        "num_key_value_heads": 16, "query_pre_attn_scalar": 168, "sliding_window": 1024,
        "max_position_embeddings": 131072, "vocab_size": 262208,
    },
}


ONE = np.array([[1.0]])   # one sequence, as the grid passes batches


def load(tmp_path, cfg, name="m"):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_hf_config(path, name=name)


# KV bytes per token and layer in bf16: 2 (K, V) x kv_heads x head_dim x 2 bytes
@pytest.mark.parametrize("cfg, window, windowed, per_layer", [
    (GEMMA2_9B, 4096, 21, 2 * 8 * 256 * 2),     # even layers 0, 2, ..., 40: 21 of 42
    (GEMMA3_1B, 512, 22, 2 * 1 * 256 * 2),      # global layers 5, 11, 17, 23: 22 of 26
    (GEMMA3_27B, 1024, 52, 2 * 16 * 128 * 2),   # 62 - 62 // 6 = 52 windowed
    (MISTRAL_7B, 4096, 32, 2 * 8 * 128 * 2),    # every layer
])
def test_published_windows_and_kv_at_32k(tmp_path, cfg, window, windowed, per_layer):
    m = load(tmp_path, cfg)
    assert (m.sliding_window, m.windowed_layers) == (window, windowed)
    # KV held by one 32,768-token sequence: full layers keep 32,768 tokens, windowed ones
    # `window`. Gemma-2-9B: (21 x 32768 + 21 x 4096) x 8192 = 6.34 GB, vs 11.27 GB for
    # full attention everywhere (56%); Mistral-7B-v0.1: 32 x 4096 x 4096 = 0.537 GB.
    t = 32768
    full = m.layers * per_layer * t
    expected = ((m.layers - windowed) * t + windowed * window) * per_layer
    kv = float(kv_cache_bytes(m, shards(m, [1]), ONE, Workload("decode", 1, t))[0, 0])
    assert kv == pytest.approx(expected, rel=1e-12)
    assert kv < full


def test_gemma2_9b_kv_by_hand(tmp_path):
    m = load(tmp_path, GEMMA2_9B)
    kv = float(kv_cache_bytes(m, shards(m, [1]), ONE, Workload("decode", 1, 8192))[0, 0])
    # 2 x 8 KV heads x 256 x 2 bytes = 8192 bytes per token and layer: 21 global layers
    # keep 8192 tokens, 21 windowed ones 4096 (full attention everywhere: 2.82 GB)
    assert kv == 21 * 8192 * 8192 + 21 * 8192 * 4096 == 2_113_929_216


@pytest.mark.parametrize("cfg", [QWEN2_7B, QWEN_MOE, MIXTRAL])
def test_no_window_when_the_config_turns_it_off(tmp_path, cfg):
    # Qwen2: sliding_window 131072 with use_sliding_window false; Mixtral: sliding_window null
    m = load(tmp_path, cfg)
    assert (m.sliding_window, m.windowed_layers) == (0, 0)


def test_qwen2_opt_in_windows_the_layers_after_max_window_layers(tmp_path):
    cfg = {**QWEN2_7B, "use_sliding_window": True, "sliding_window": 4096,
           "max_window_layers": 20}
    m = load(tmp_path, cfg)
    assert (m.sliding_window, m.windowed_layers) == (4096, 8)


def test_layer_types_list_wins(tmp_path):
    types = ["sliding_attention"] * 3 + ["full_attention"] + ["sliding_attention"] * 38
    m = load(tmp_path, {**GEMMA2_9B, "layer_types": types})
    assert m.windowed_layers == 41
    with pytest.raises(UserError, match="layer_types must be a list of 42"):
        load(tmp_path, {**GEMMA2_9B, "layer_types": ["full_attention"]})


def test_gemma3_is_gated_and_tied(tmp_path):
    # Gemma-3 1B: 999,885,952 parameters (keras-hub gemma3_1b preset), with each layer's
    # four norms and its q/k norms over head_dim (h283; before, two norms and no q/k
    # norms: 26 x (2 x 1152 + 2 x 256) = 73,216 low)
    m = load(tmp_path, GEMMA3_1B)
    assert m.gated_mlp and m.tied_embeddings
    assert (m.layer_norms, m.qk_norm) == (4, 2 * 256)
    assert m.parameters == 999_885_952


def test_gemma2_parameters(tmp_path):
    # google/gemma-2-9b: 9,241,705,984 parameters (its safetensors), its four norms a layer
    # counted (h283; before, two: 42 x 2 x 3584 = 301,056 low)
    assert load(tmp_path, GEMMA2_9B).parameters == 9_241_705_984


def test_decode_reads_and_flops_by_hand(tmp_path):
    # Mistral-7B-v0.1 decode at context 32768, TP 1, batch 1: attention reads K and V of
    # min(32768, 4096) = 4096 tokens per layer, 2 x 8 x 128 x 2 bytes each, and attends to
    # 4096 keys: 4 x 32 heads x 128 x 4096 FLOPs
    m = load(tmp_path, MISTRAL_7B)
    w = Workload("decode", 1, 32768)
    att = {x[0]: x for x in stage_work(m, shards(m, [1]), ONE, w)}["attention"]
    assert att[2][0, 0] == 4 * 32 * 128 * 4096
    q, out = 32 * 128 * 2, 32 * 128 * 2                # query read, output written
    assert att[3][0, 0] == q + 4096 * 2 * 8 * 128 * 2 + 2 * 8 * 128 * 2 + out


def test_prefill_pairs_by_hand():
    # 1 windowed and 1 full layer, window 3, prompt 5: windowed 1+2+3+3+3 = 12, full 15
    m = ModelSpec("m", 2, 64, 4, 4, 16, 128, 100, sliding_window=3, sliding_layers=1)
    assert m.prefill_pairs(5) == (12 + 15) / 2
    w = Workload("prefill", 5, 5)
    assert m.attention_span(w) == (13.5, 5)
    assert m.prefill_pairs(3) == 6.0 == Workload("prefill", 3, 3).attention_pairs_per_sequence


def test_unwindowed_models_unchanged():
    m = get_model("Llama-3-70B")
    for w in (Workload("prefill", 1500, 1500), Workload("decode", 1500, 1513)):
        assert m.attention_span(w) == (w.attention_pairs_per_sequence, w.kv_read_tokens)
    assert m.kv_tokens_held(8000) == 8000


def test_evaluate_kv_matches_the_grid(tmp_path):
    # the one-configuration path (a plan's KV per token) agrees with kv_cache_bytes
    m = load(tmp_path, GEMMA2_9B)
    r = evaluate(m, "H100-SXM", 1, 4, phase="decode", context=8192)
    assert r.memory.kv_cache == 4 * 2_113_929_216


@pytest.mark.parametrize("entry, match", [
    (dict(sliding_layers=3), "sliding_layers .* needs sliding_window"),
    (dict(sliding_window=8, sliding_layers=5), "sliding_layers .* exceeds layers"),
    (dict(sliding_window=-1), "sliding_window"),
])
def test_bad_window_fields(entry, match):
    with pytest.raises(UserError, match=match):
        ModelSpec("m", 4, 64, 4, 4, 16, 128, 100, **entry)


@settings(max_examples=200, deadline=None)
@given(layers=st.integers(1, 12), window=st.integers(1, 40), prompt=st.integers(1, 120),
       data=st.data())
def test_window_terms_equal_counting_layer_by_layer(layers, window, prompt, data):
    # the averages equal the per-layer sums counted token by token
    k = data.draw(st.integers(0, layers))
    m = ModelSpec("m", layers, 64, 4, 4, 16, 128, 100, sliding_window=window,
                  sliding_layers=k)
    k = k or layers
    pairs = sum(min(i, window) for i in range(1, prompt + 1)) * k \
        + prompt * (prompt + 1) // 2 * (layers - k)
    assert m.prefill_pairs(prompt) * layers == pytest.approx(pairs, rel=1e-12)
    held = min(prompt, window) * k + prompt * (layers - k)
    assert m.kv_tokens_held(prompt) * layers == pytest.approx(held, rel=1e-12)
    assert min(prompt, window) <= m.kv_tokens_held(prompt) <= prompt
