"""Vision towers of Gemma-3 (SigLIP), InternVL (InternViT) and Mistral-3 (Pixtral) counted in
weight memory (``vision_parameters``), each by hand from its HF / remote code's modules and
checked with the language model against the published total to the parameter (helper
h283). Before: each stayed uncounted ("an architecture the reader does not count"), 0.42B,
0.34B and 0.44B of weights missing from the memory of gemma-3-27b-it, InternVL2-8B and
Mistral-Small-3.2-24B.
"""

from __future__ import annotations

import pytest

from tests.compute.hf_helpers import fixture, read, write, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli


def siglip(c=1152, f=4304, layers=27, image=896, patch=14, head=False):
    """SiglipVisionModel: patch Conv2d with bias, positions, layers (two LayerNorms, Q, K, V,
    O with biases, fc1 and fc2 with biases), post LayerNorm, the pooling head if any."""
    layer = 4 * (c * c + c) + 4 * c + (c * f + f) + (f * c + c)
    n = 3 * patch * patch * c + c + (image // patch) ** 2 * c + layers * layer + 2 * c
    if head:   # probe, MultiheadAttention (in_proj and out_proj with biases), LayerNorm, MLP
        n += c + (3 * c * c + 3 * c) + (c * c + c) + 2 * c + (c * f + f) + (f * c + c)
    return n


def gemma3_tower(text_hidden, **kw):
    """SigLIP and Gemma3MultiModalProjector: an RMSNorm over 1152 and 1152 x hidden."""
    return siglip(**kw) + 1152 + 1152 * text_hidden


def gemma3_text(layers, hidden, heads, kv, head_dim, ffn, vocab=262208):
    """Gemma-3's language model: four RMSNorms a layer, Q/K norms over head_dim, GeGLU, tied."""
    attn = hidden * (heads + 2 * kv) * head_dim + heads * head_dim * hidden + 2 * head_dim
    return layers * (attn + 3 * hidden * ffn + 4 * hidden) + vocab * hidden + hidden


def test_gemma3_27b_tower_and_total():
    tower = gemma3_tower(5376)
    assert tower == 423_060_336
    m = read("gemma-3-27b-it")
    assert m.vision_parameters == tower
    assert m.parameters == gemma3_text(62, 5376, 32, 16, 128, 21504)
    # google/gemma-3-27b-it: 27,432,406,640 parameters (its safetensors, as in keras-hub's
    # gemma3 presets)
    assert m.parameters + m.vision_parameters == 27_432_406_640
    assert "SigLIP ViT and projector: 423,060,336 parameters" in m.source


def test_gemma3_4b_as_published_takes_the_config_class_defaults(tmp_path):
    """google/gemma-3-4b-it's text_config names only hidden_size, intermediate_size,
    num_hidden_layers, rope_scaling and sliding_window (as copied in public ports of the
    file); Gemma3TextConfig's defaults give 8 heads and 4 KV heads of 256. Before: refused
    ("lacks 'num_attention_heads'"). Published: 4,300,079,472 parameters."""
    cfg = fixture("gemma-3-27b-it")
    cfg["text_config"] = {"hidden_size": 2560, "intermediate_size": 10240,
                          "model_type": "gemma3_text", "num_hidden_layers": 34,
                          "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                          "sliding_window": 1024}
    m = write(tmp_path, cfg)
    assert (m.heads, m.kv_heads, m.head_dim, m.vocab) == (8, 4, 256, 262208)
    assert (m.sliding_window, m.sliding_layers) == (1024, 34 - 34 // 6)
    assert m.parameters == gemma3_text(34, 2560, 8, 4, 256, 10240)
    assert m.parameters + m.vision_parameters == 4_300_079_472


@pytest.mark.parametrize("layers, hidden, heads, kv, head_dim, ffn, published", [
    (34, 2560, 8, 4, 256, 10240, 4_300_079_472),      # google/gemma-3-4b-it
    (48, 3840, 16, 8, 256, 15360, 12_187_325_040),    # google/gemma-3-12b-it
])
def test_gemma3_4b_and_12b_totals(tmp_path, layers, hidden, heads, kv, head_dim, ffn,
                                  published):
    """The same tower beside the 4B and 12B language models (their shapes written out):
    the published totals to the parameter."""
    cfg = fixture("gemma-3-27b-it")
    cfg["text_config"] = {**cfg["text_config"], "num_hidden_layers": layers,
                          "hidden_size": hidden, "num_attention_heads": heads,
                          "num_key_value_heads": kv, "head_dim": head_dim,
                          "intermediate_size": ffn}
    m = write(tmp_path, cfg)
    assert m.parameters == gemma3_text(layers, hidden, heads, kv, head_dim, ffn)
    assert m.vision_parameters == gemma3_tower(hidden)
    assert m.parameters + m.vision_parameters == published


def test_siglip_pooling_head_counted_unless_vision_use_head_is_false(tmp_path):
    cfg = fixture("gemma-3-27b-it")
    del cfg["vision_config"]["vision_use_head"]    # SiglipVisionTransformer: a head then
    m = write(tmp_path, cfg)
    assert m.vision_parameters == gemma3_tower(5376, head=True)
    assert m.vision_parameters - 423_060_336 == 15_238_352


# InternViT-300M-448px: class embedding, patch Conv2d with bias, 1,025 positions; 24 layers
# of fused QKV with biases, an output projection with bias, two LayerNorms, fc1/fc2 with
# biases, two layer scales; mlp1: LayerNorm(4096), 4096 -> 4096 -> 4096 with biases
INTERNVIT = (1024 + 3 * 14 * 14 * 1024 + 1024 + 1025 * 1024
             + 24 * ((3 * 1024 * 1024 + 3 * 1024) + (1024 * 1024 + 1024) + 4 * 1024
                     + (1024 * 4096 + 4096) + (4096 * 1024 + 1024) + 2 * 1024))
MLP1 = 2 * 4096 + (4096 * 4096 + 4096) + (4096 * 4096 + 4096)


def test_internvl2_8b_tower_and_total():
    assert (INTERNVIT, MLP1) == (304_012_288, 33_570_816)
    m = read("internvl2-8b")
    assert m.vision_parameters == INTERNVIT + MLP1 == 337_583_104
    # InternVL2.5-8B (the same InternViT-300M-448px and InternLM2.5-7B-chat shapes):
    # 8,075,365,376 parameters
    assert m.parameters + m.vision_parameters == 8_075_365_376


@pytest.mark.parametrize("change, delta", [
    ({"norm_type": "rms_norm"}, -24 * 2 * 1024),       # one scale per norm, not two
    ({"qk_normalization": True}, 24 * 2 * 1024),       # RMSNorms over Q and K
    ({"qkv_bias": False}, -24 * 3 * 1024),
])
def test_internvit_6b_style_keys(tmp_path, change, delta):
    """InternViT-6B's keys (norm_type rms_norm, qk_normalization true, no QKV bias) on the
    300M tower, each alone."""
    cfg = fixture("internvl2-8b")
    cfg["vision_config"] = {**cfg["vision_config"], **change}
    assert write(tmp_path, cfg).vision_parameters == INTERNVIT + MLP1 + delta


def test_internvit_without_qk_normalization_stays_uncounted(tmp_path):
    """InternVisionConfig's default qk_normalization (true) is InternViT-6B's: without the
    key the tower is not guessed."""
    cfg = fixture("internvl2-8b")
    del cfg["vision_config"]["qk_normalization"]
    m = write(tmp_path, cfg)
    assert m.vision_parameters == 0
    assert "vision_config lacks 'qk_normalization'" in m.source


# Pixtral (Mistral-Small-3.1/3.2): patch Conv2d without bias, ln_pre; 24 layers of two
# RMSNorms, Q, K, V, O of 16 x 64 without biases, SwiGLU 4096 wide without biases;
# Mistral3MultiModalProjector: RMSNorm, patch merger 4096 -> 1024, 1024 -> 5120 -> 5120
# without biases (multimodal_projector_bias false)
PIXTRAL = 3 * 14 * 14 * 1024 + 1024 + 24 * (2 * 1024 + 4 * 1024 * 1024 + 3 * 1024 * 4096)
MISTRAL3_PROJECTOR = 1024 + 4 * 1024 * 1024 + 1024 * 5120 + 5120 * 5120


def test_mistral_small_32_tower_and_total():
    m = read("mistral-small-3.2-24b-instruct-2506")
    assert m.vision_parameters == PIXTRAL + MISTRAL3_PROJECTOR == 438_958_080
    # mistralai/Mistral-Small-3.2-24B-Instruct-2506: 24,011,361,280 parameters
    assert m.parameters + m.vision_parameters == 24_011_361_280


def test_mistral3_projector_bias(tmp_path):
    cfg = {**fixture("mistral-small-3.2-24b-instruct-2506"), "multimodal_projector_bias": True}
    assert write(tmp_path, cfg).vision_parameters == 438_958_080 + 2 * 5120


@pytest.mark.parametrize("name, table, key, value, says", [
    ("internvl2-8b", None, "downsample_ratio", 0.3, "downsample_ratio 0.3 is not 1 / a whole"),
    ("internvl2-8b", None, "downsample_ratio", 0, "downsample_ratio"),
    ("internvl2-8b", "vision_config", "norm_type", "banana", "norm_type 'banana' is unknown"),
    ("internvl2-8b", "vision_config", "qkv_bias", "yes", "qkv_bias"),
    ("gemma-3-27b-it", "vision_config", "vision_use_head", 2, "vision_use_head"),
    ("mistral-small-3.2-24b-instruct-2506", None, "spatial_merge_size", -2,
     "spatial_merge_size"),
])
def test_bad_tower_values_are_one_line(tmp_path, name, table, key, value, says):
    cfg = fixture(name)
    if table:
        cfg[table] = {**cfg[table], key: value}
    else:
        cfg[key] = value
    one_line_error(run_cli(["models", write_config(tmp_path, cfg)]), says)


# Llama-4's vision encoder (Scout and Maverick alike): the unfolded patch embedding 3 x 14 x
# 14 -> 1408 without bias, a class embedding, 577 positions, LayerNorms before and after,
# 34 layers (Q, K, V, O with biases, fc1/fc2 5632 wide with biases, two LayerNorms); the
# pixel-shuffle adapter 5632 -> 4096 and 4096 -> 4096 without biases; the projector 4096 ->
# 5120 without bias
LLAMA4_TOWER = (3 * 14 * 14 * 1408 + 1408 + 577 * 1408 + 4 * 1408
                + 34 * (4 * (1408 * 1408 + 1408) + (1408 * 5632 + 5632)
                        + (5632 * 1408 + 1408) + 4 * 1408)
                + 5632 * 4096 + 4096 * 4096 + 4096 * 5120)


@pytest.mark.parametrize("name, published", [
    ("llama-4-scout-17b-16e-instruct", 108_641_793_536),
    ("llama-4-maverick-17b-128e-instruct", 401_583_781_376),
])
def test_llama4_tower_and_totals(name, published):
    """meta-llama/Llama-4-Scout-17B-16E-Instruct and -Maverick-17B-128E-Instruct: the
    language model and this tower make the published totals to the parameter (the
    fixtures' vision_config carries the published image_size 336, patch_size 14 and
    projector widths)."""
    assert LLAMA4_TOWER == 871_932_416
    m = read(name)
    assert m.vision_parameters == LLAMA4_TOWER
    assert m.parameters + m.vision_parameters == published
