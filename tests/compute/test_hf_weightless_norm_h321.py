"""OLMo v1's LayerNorms have no weights (helper h321): HF's OlmoLayerNorm normalises without
a scale or a shift, so ``ModelSpec.norm`` "weightless" counts 0 elements a norm. Before,
model_type olmo was read Llama-style with RMSNorm scales, (2 x layers + 1) x hidden too
many: OLMo-7B 266,240 high, OLMo-1B 67,584 high.

Sources (h331): the shapes are allenai/OLMo's configs/official/OLMo-7B.yaml (d_model 4096,
32 heads, 32 layers, mlp_hidden_size 22,016 = 2 x 11,008 SwiGLU, weight_tying false) and
OLMo-1B.yaml (2048, 16, 16, mlp_ratio 8 = 2 x 8,192, weight_tying true), both
embedding_size 50,304, include_bias false and layer_norm_with_affine false. The totals are
UNVERIFIED: no published count to the parameter was found (h321 cited "public parameter
records" it could not name); each is the hand count in the test.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.memory import weight_bytes
from compute.model_spec import ModelSpec
from compute.sharding import shards
from tests.compute.hf_helpers import write

# https://huggingface.co/allenai/OLMo-7B-0724-hf/blob/main/config.json (the keys read)
OLMO_7B = {"model_type": "olmo", "architectures": ["OlmoForCausalLM"], "hidden_act": "silu",
           "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 50304,
           "max_position_embeddings": 4096, "attention_bias": False, "clip_qkv": None,
           "tie_word_embeddings": False, "torch_dtype": "float32"}
# https://huggingface.co/allenai/OLMo-1B-hf/blob/main/config.json: 16 layers of 2048,
# SwiGLU 8192, tied
OLMO_1B = {**OLMO_7B, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
           "num_attention_heads": 16, "num_key_value_heads": 16, "tie_word_embeddings": True}


@pytest.mark.parametrize("cfg, total", [
    # OLMo-7B by hand (unverified: no published total found): 32 x (4 x 4096^2 + 3 x 4096 x
    # 11008) + 2 x 50304 x 4096, no norm weights
    (OLMO_7B, 6_888_095_744),
    # OLMo-1B by hand (unverified likewise): 16 x (4 x 2048^2 + 3 x 2048 x 8192) + 50304 x
    # 2048, tied
    (OLMO_1B, 1_176_764_416),
])
def test_olmo_v1_norms_hold_no_weights(tmp_path, cfg, total):
    h, f, n = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    tied = cfg["tie_word_embeddings"]
    assert n * (4 * h * h + 3 * h * f) + (1 if tied else 2) * 50304 * h == total
    m = write(tmp_path, cfg)
    assert (m.norm, m.norm_parameters) == ("weightless", 0)
    assert m.parameters == total
    w = weight_bytes(m, shards(m, [1]))
    assert float(w[0, 0]) == m.parameters * m.weight_bytes


def test_a_model_file_may_say_weightless_and_nothing_else():
    m = ModelSpec("m", 2, 64, 4, 4, 16, 128, 100, norm="weightless")
    assert m.parameters == ModelSpec("m", 2, 64, 4, 4, 16, 128, 100).parameters - 5 * 64
    with pytest.raises(UserError, match="norm"):
        ModelSpec("m", 2, 64, 4, 4, 16, 128, 100, norm="none")
