"""Biases as each family's HF code builds them (helper h321): ``ModelSpec.o_bias`` (the
attention's output projection), ``mlp_bias`` (the MLPs' linear layers where the attention
has none) and ``lm_head_bias`` (``vocab`` elements on the LM head).

Before: GPT-J's biases (fc_in, fc_out and the LM head in HF's GPTJForCausalLM) were read as
biases on every linear layer, 6,051,291,136 for HF's 6,050,882,784; Phi-2's LM-head bias
was left out, 2,779,632,640 for the hub's 2,779,683,840; Phi-3.5-MoE's ``attention_bias``
(Q, K, V and O in HF's PhimoeAttention) and ``lm_head_bias`` counted Q, K and V only,
163,136 low; a Llama-style ``mlp_bias`` was not counted at all.
"""

from __future__ import annotations

import pytest

from compute.memory import weight_bytes
from compute.sharding import shards
from tests.compute.hf_helpers import LLAMA3_8B, read, write

# https://huggingface.co/EleutherAI/gpt-j-6b/blob/main/config.json (the keys read)
GPTJ_6B = {"activation_function": "gelu_new", "architectures": ["GPTJForCausalLM"],
           "model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_inner": None,
           "n_layer": 28, "n_positions": 2048, "rotary": True, "rotary_dim": 64,
           "tie_word_embeddings": False, "vocab_size": 50400}


def test_gptj_biases_on_the_mlp_and_lm_head_only(tmp_path):
    # HF GPTJForCausalLM: Q, K, V, O without bias; fc_in (4096 -> 16384) and fc_out with;
    # one LayerNorm a layer (ln_1) and ln_f; an untied LM head with a bias of 50,400
    layer = 4 * 4096 * 4096 + (4096 * 16384 + 16384) + (16384 * 4096 + 4096) + 2 * 4096
    total = 28 * layer + 2 * 50400 * 4096 + 50400 + 2 * 4096
    assert total == 6_050_882_784       # the hub's "6.05B params" for EleutherAI/gpt-j-6b
    m = write(tmp_path, GPTJ_6B)
    assert (m.bias, m.qkv_bias, m.o_bias, m.mlp_bias, m.lm_head_bias) == (
        False, False, False, True, True)
    assert m.parameters == total
    assert m.attention_parameters == 4 * 4096 * 4096


def test_phi2_lm_head_bias_makes_the_hub_total():
    # https://huggingface.co/microsoft/phi-2/blob/main/config.json (tests/compute/data/
    # hf_families/phi-2.json): PhiForCausalLM's lm_head has a bias, 51,200 elements
    m = read("phi-2")
    assert m.lm_head_bias and m.parameters == 2_779_683_840   # the hub's count of phi-2
    assert m.embedding_parameters == 2 * 51200 * 2560 + 51200


def test_phi35_moe_attention_bias_covers_o_and_lm_head_bias():
    # https://huggingface.co/microsoft/Phi-3.5-MoE-instruct/blob/main/config.json:
    # attention_bias true, lm_head_bias true; 32 layers of hidden 4096
    m = read("phi-3.5-moe-instruct")
    assert (m.qkv_bias, m.o_bias, m.lm_head_bias) == (True, True, True)
    # a hand count (test_hf_families.test_phi35_moe_layernorm), no published total to the
    # parameter found; 41.9B rounded as a third-party GGUF card (huface.ru/MikeKuykendall/
    # phi-3.5-moe-cpu-offload-gguf) gives it; before 41,872,990,208
    assert m.parameters == 41_873_153_344
    assert round(m.parameters / 1e9, 1) == 41.9


def test_llama_attention_bias_and_mlp_bias(tmp_path):
    # HF LlamaAttention: attention_bias biases q, k, v and o_proj; LlamaMLP: mlp_bias biases
    # gate, up and down (Llama-3-8B's shape)
    plain = write(tmp_path, LLAMA3_8B)
    biased = write(tmp_path, {**LLAMA3_8B, "attention_bias": True, "mlp_bias": True})
    per_layer = (4096 + 2 * 1024 + 4096) + (2 * 14336 + 4096)
    assert biased.parameters - plain.parameters == 32 * per_layer
    w = weight_bytes(biased, shards(biased, [1]))
    assert float(w[0, 0]) == biased.parameters * biased.weight_bytes


def test_glm_attention_bias_leaves_o_without_one():
    # HF Glm4MoeAttention: attention_bias biases q, k and v; o_proj has none
    # (https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json: attention_bias true)
    m = read("glm-4.5")
    assert (m.qkv_bias, m.o_bias) == (True, False)


@pytest.mark.parametrize("name", ["phi-2", "phi-3.5-moe-instruct"])
def test_weight_memory_at_tp1_holds_every_bias_once(name):
    m = read(name)
    w = weight_bytes(m, shards(m, [1]))
    assert float(w[0, 0]) == m.parameters * m.weight_bytes


def test_gptj_weight_memory_at_tp1(tmp_path):
    m = write(tmp_path, GPTJ_6B)
    w = weight_bytes(m, shards(m, [1]))
    assert float(w[0, 0]) == m.parameters * m.weight_bytes
