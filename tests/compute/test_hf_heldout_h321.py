"""Held-out check of the HuggingFace config.json reader (helper h321): 13 models no earlier
test read, each config trimmed to the keys the reader uses (values as in the published
file at the URL beside it), against a total published to the parameter. Every one is
exact; the three families fixed here (biases, h321) and the two vision towers are in
test_hf_biases_h321.py and test_vision_towers_h321.py.

Published totals: keras-hub's preset tables (github.com/keras-team/keras-hub,
keras_hub/src/models/<family>/<family>_presets.py, "params": the checkpoint's parameter
count), which are the HF checkpoints' totals for these families (tied embeddings counted
once); StarCoder2-7B's is the hub's rounded "7.17B" only, checked by hand below.
"""

from __future__ import annotations

import pytest

from tests.compute.hf_helpers import write

GEMMA = dict(model_type="gemma", hidden_act="gelu", max_position_embeddings=8192,
             vocab_size=256000, head_dim=256, torch_dtype="bfloat16")
GEMMA2 = dict(model_type="gemma2", hidden_activation="gelu_pytorch_tanh", vocab_size=256000,
              max_position_embeddings=8192, sliding_window=4096, attn_logit_softcapping=50.0,
              final_logit_softcapping=30.0, torch_dtype="float32")
QWEN25 = dict(model_type="qwen2", hidden_act="silu", vocab_size=151936, use_sliding_window=False,
              torch_dtype="bfloat16")
CONFIGS = {
    # https://huggingface.co/google/gemma-2b/blob/main/config.json
    "gemma-2b": dict(GEMMA, hidden_size=2048, intermediate_size=16384, num_hidden_layers=18,
                     num_attention_heads=8, num_key_value_heads=1),
    # https://huggingface.co/google/gemma-7b/blob/main/config.json
    "gemma-7b": dict(GEMMA, hidden_size=3072, intermediate_size=24576, num_hidden_layers=28,
                     num_attention_heads=16, num_key_value_heads=16),
    # https://huggingface.co/google/gemma-2-2b/blob/main/config.json
    "gemma-2-2b": dict(GEMMA2, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                       num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                       query_pre_attn_scalar=256),
    # https://huggingface.co/google/gemma-2-27b/blob/main/config.json
    "gemma-2-27b": dict(GEMMA2, hidden_size=4608, intermediate_size=36864,
                        num_hidden_layers=46, num_attention_heads=32, num_key_value_heads=16,
                        head_dim=128, query_pre_attn_scalar=144),
    # https://huggingface.co/google/gemma-3-270m/blob/main/config.json
    "gemma-3-270m": dict(model_type="gemma3_text", hidden_size=640, intermediate_size=2048,
                         num_hidden_layers=18, num_attention_heads=4, num_key_value_heads=1,
                         head_dim=256, vocab_size=262144, sliding_window=512,
                         max_position_embeddings=32768, torch_dtype="bfloat16"),
    # https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json
    "Qwen2.5-0.5B": dict(QWEN25, hidden_size=896, intermediate_size=4864,
                         num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                         max_position_embeddings=32768, tie_word_embeddings=True),
    # https://huggingface.co/Qwen/Qwen2.5-Math-1.5B/blob/main/config.json
    "Qwen2.5-Math-1.5B": dict(QWEN25, hidden_size=1536, intermediate_size=8960,
                              num_hidden_layers=28, num_attention_heads=12,
                              num_key_value_heads=2, max_position_embeddings=4096,
                              tie_word_embeddings=True),
    # https://huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json
    "Qwen2.5-3B": dict(QWEN25, hidden_size=2048, intermediate_size=11008,
                       num_hidden_layers=36, num_attention_heads=16, num_key_value_heads=2,
                       max_position_embeddings=32768, tie_word_embeddings=True),
    # https://huggingface.co/Qwen/Qwen2.5-32B-Instruct/blob/main/config.json
    "Qwen2.5-32B-Instruct": dict(QWEN25, hidden_size=5120, intermediate_size=27648,
                                 num_hidden_layers=64, num_attention_heads=40,
                                 num_key_value_heads=8, vocab_size=152064,
                                 max_position_embeddings=32768, tie_word_embeddings=False),
    # https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json
    "Llama-2-7b-hf": dict(model_type="llama", hidden_act="silu", hidden_size=4096,
                          intermediate_size=11008, num_hidden_layers=32,
                          num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
                          max_position_embeddings=4096, tie_word_embeddings=False,
                          torch_dtype="float16"),
    # https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.2/blob/main/config.json
    "Mistral-7B-Instruct-v0.2": dict(model_type="mistral", hidden_act="silu",
                                     hidden_size=4096, intermediate_size=14336,
                                     num_hidden_layers=32, num_attention_heads=32,
                                     num_key_value_heads=8, vocab_size=32000,
                                     max_position_embeddings=32768, sliding_window=None,
                                     rope_theta=1000000.0, tie_word_embeddings=False,
                                     torch_dtype="bfloat16"),
    # https://huggingface.co/tiiuae/falcon-rw-1b/blob/main/config.json: ALiBi, biases,
    # sequential attention and MLP (two LayerNorms a layer), 32 KV heads, tied
    "falcon-rw-1b": dict(model_type="falcon", alibi=True, bias=True, hidden_size=2048,
                         num_hidden_layers=24, num_attention_heads=32, multi_query=False,
                         new_decoder_architecture=False, parallel_attn=False,
                         vocab_size=50304, torch_dtype="bfloat16"),
    # https://huggingface.co/bigcode/starcoder2-7b/blob/main/config.json (no
    # tie_word_embeddings key: Starcoder2Config's default, true)
    "starcoder2-7b": dict(model_type="starcoder2", hidden_act="gelu_pytorch_tanh",
                          hidden_size=4608, intermediate_size=18432, num_hidden_layers=32,
                          num_attention_heads=36, num_key_value_heads=4, vocab_size=49152,
                          max_position_embeddings=16384, sliding_window=4096, use_bias=True,
                          norm_epsilon=1e-5, torch_dtype="bfloat16"),
}
#: name -> (published total, where it is published)
PUBLISHED = {
    "gemma-2b": (2_506_172_416, "keras-hub gemma_presets.py gemma_2b_en"),
    "gemma-7b": (8_537_680_896, "keras-hub gemma_presets.py gemma_7b_en"),
    "gemma-2-2b": (2_614_341_888, "keras-hub gemma_presets.py gemma2_2b_en"),
    "gemma-2-27b": (27_227_128_320, "keras-hub gemma_presets.py gemma2_27b_en"),
    "gemma-3-270m": (268_098_176, "keras-hub gemma3_presets.py gemma3_270m"),
    "Qwen2.5-0.5B": (494_032_768, "keras-hub qwen_presets.py qwen2.5_0.5b_en"),
    "Qwen2.5-Math-1.5B": (1_543_714_304, "keras-hub qwen_presets.py qwen2.5_math_1.5b_en"),
    "Qwen2.5-3B": (3_085_938_688, "keras-hub qwen_presets.py qwen2.5_3b_en"),
    "Qwen2.5-32B-Instruct": (32_763_876_352,
                             "keras-hub qwen_presets.py qwen2.5_instruct_32b_en"),
    "Llama-2-7b-hf": (6_738_415_616, "keras-hub llama_presets.py llama2_7b_en"),
    "falcon-rw-1b": (1_311_625_216, "keras-hub falcon_presets.py falcon_refinedweb_1b_en"),
    "Mistral-7B-Instruct-v0.2": (7_241_732_096,
                                 "keras-hub mistral_presets.py mistral_0.2_instruct_7b_en"),
    # hub: 7.17B; by hand: 32 x (attention 4608 x (4608 + 2 x 512) + 4608 x 4608 with
    # biases 10,240; GELU MLP 2 x 4608 x 18432 with biases 23,040; two LayerNorms 18,432)
    # + 49,152 x 4608 tied + the final LayerNorm
    "starcoder2-7b": (32 * (4608 * 5632 + 4608 * 4608 + 10240 + 2 * 4608 * 18432 + 23040
                            + 18432) + 49152 * 4608 + 9216, "hub 7.17B; by hand"),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_heldout_model_is_its_published_total(tmp_path, name):
    total, _source = PUBLISHED[name]
    m = write(tmp_path, CONFIGS[name])
    assert m.parameters + m.vision_parameters == total


def test_starcoder2_7b_by_hand_is_the_hub_figure():
    assert PUBLISHED["starcoder2-7b"][0] == 7_173_923_840
    assert round(PUBLISHED["starcoder2-7b"][0] / 1e9, 2) == 7.17
