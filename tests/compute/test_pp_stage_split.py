"""Pipeline stages of models whose layers are not all alike: each stage's weights and KV
cache come from the layers it holds (vLLM's split, vllm/distributed/utils.py
get_pp_indices), the embedding on the first stage, the LM head on the last, and the memory
fit is judged on the fullest stage. Every figure below is derived by hand."""

from pathlib import Path

import pytest

from compute.evaluate_many import evaluate_many
from compute.evaluate_one import evaluate
from compute.hf_config import load_hf_config
from compute.parallel import Parallelism, stage_layers, stage_mix

DATA = Path(__file__).parent / "data" / "hf_families"


def test_vllm_split_puts_the_left_over_layers_before_the_last_stage():
    # get_pp_indices: layers // pp each; the remainder one each to partitions[-2], [-3], ...
    assert stage_layers(61, 2) == ((0, 31), (31, 61))
    assert stage_layers(10, 4) == ((0, 2), (2, 5), (5, 8), (8, 10))       # 2, 3, 3, 2
    assert stage_layers(11, 4) == ((0, 3), (3, 6), (6, 9), (9, 11))       # 3, 3, 3, 2
    assert stage_layers(92, 2) == ((0, 46), (46, 92))


def test_dense_layers_sit_where_the_config_puts_them():
    glm = load_hf_config(DATA / "glm-4.5.json")                 # first_k_dense_replace 3
    assert stage_mix(glm, 2)[:, :2].tolist() == [[46, 3], [46, 0]]
    mav = load_hf_config(DATA / "llama-4-maverick-17b-128e-instruct.json")
    assert mav.moe_layer_step == 2                               # interleave_moe_layer_step
    assert stage_mix(mav, 4)[:, :2].tolist() == [[12, 6]] * 4


# GLM-4.5 bf16 at TP 8 (hidden 5120; 12 query heads and 1 KV head of 128 per GPU, QKV
# biases; experts 160 x 1536 / 8 = 192 columns, one shared expert of 192, dense MLP
# 12288 / 8 = 1536; vocabulary 151552 / 8 = 18944 rows), elements per GPU:
ATTN = 5120 * (12 + 2) * 128 + 12 * 128 * 5120 + (12 + 2) * 128        # 17,041,152
MOE_LAYER = ATTN + 160 * 3 * 5120 * 192 + 5120 * 160 + 3 * 5120 * 192 + 2 * 5120
DENSE_LAYER = ATTN + 3 * 5120 * 1536 + 2 * 5120
VOCAB = 18944 * 5120


def test_glm45_pp2_weights_are_those_of_the_last_stage():
    # stage 0: layers 0-45 (3 dense, 43 MoE) + embedding; stage 1: 46 MoE + LM head; the
    # final norm (5120) counted on each. The old average, (89 MoE + 3 dense) / 2 + one
    # vocabulary matrix, said 44.16 GB for both.
    first = 2 * (43 * MOE_LAYER + 3 * DENSE_LAYER + VOCAB + 5120)
    last = 2 * (46 * MOE_LAYER + VOCAB + 5120)
    assert (first, last) == (42_808_249_344, 45_520_456_704)
    r = evaluate(load_hf_config(DATA / "glm-4.5.json"), "H200-SXM", 8, 1, pp=2)
    assert r.memory.weights == last
    # KV: 46 layers on each stage, 1 KV head of 128 x 2 bytes x (K, V), context 1513
    assert r.memory.kv_cache == 46 * 2 * 128 * 2 * 1513


def test_gpt_oss_pp4_kv_of_the_stage_with_the_most_full_attention_layers():
    # 36 layers, sliding (128 tokens) on the even ones (layer_types): stages of 9 layers
    # hold 5 windowed + 4 full, 4 + 5, 5 + 4, 4 + 5. At TP 8 one KV head of 64: 2 x 64 x 2
    # = 256 bytes per token and layer. Decode at context 1513, batch 16: stage 3 (LM head,
    # 5 full layers) is the fullest: 256 x (5 x 1513 + 4 x 128) x 16; the old average
    # (9 layers x 820.5 tokens) said 30,246,912.
    r = evaluate("gpt-oss-120b", "H200-SXM", 8, 16, pp=4)
    assert r.memory.kv_cache == 256 * (5 * 1513 + 4 * 128) * 16 == 33_083_392


def test_evaluate_and_evaluate_many_agree_on_the_fullest_stage():
    glm = load_hf_config(DATA / "glm-4.5.json")
    configs = [Parallelism(8, pp=2), Parallelism(8), Parallelism(4, pp=4)]
    many = evaluate_many(glm, "H200-SXM", configs, [1, 64, 7], "decode")
    for i, (c, b) in enumerate(zip(configs, [1, 64, 7], strict=True)):
        one = evaluate(glm, "H200-SXM", c.tp, b, pp=c.pp)
        assert (many.weights[i], many.kv_cache[i], many.fits[i]) == \
            pytest.approx((one.memory.weights, one.memory.kv_cache, one.memory.fits), rel=0)
