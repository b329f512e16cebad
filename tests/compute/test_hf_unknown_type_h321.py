"""A model_type the reader has no family for is refused in one line naming the ones it
reads (helper h321). Before, any unknown type was read Llama-style (GPT-2-style with
``n_embd``) with no word said: its layers guessed, so norms, biases, Q/K norms or
whole layer kinds of another family could be miscounted silently. A type of its own that
names a known architecture first in ``architectures`` (Kimi-K2's kimi_k2 with
DeepseekV3ForCausalLM) is read as that family; a config with no model_type is read from its
keys, as before.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from tests.compute.hf_helpers import LLAMA3_8B, read, write, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli


def test_an_unknown_model_type_is_refused_naming_the_families(tmp_path):
    # before: read as Llama-3-8B, 8,030,261,248 parameters, exit 0
    cfg = {**LLAMA3_8B, "model_type": "acme", "hidden_act": "silu"}
    with pytest.raises(UserError) as e:
        write(tmp_path, cfg)
    text = str(e.value)
    assert "model_type 'acme' is not a family netmodel reads" in text
    assert "\n" not in text
    for name in ("llama", "qwen2", "gptj", "phi", "LlamaForCausalLM"):   # what is read
        assert name in text
    one_line_error(run_cli(["models", write_config(tmp_path, cfg)]),
                   "model_type 'acme' is not a family netmodel reads")


def test_a_type_of_its_own_naming_a_known_architecture_is_read_as_it(tmp_path):
    cfg = {**LLAMA3_8B, "model_type": "acme", "architectures": ["LlamaForCausalLM"]}
    assert write(tmp_path, cfg).parameters == 8_030_261_248


def test_kimi_k2_reads_as_deepseek_v3_by_its_architecture():
    # https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json: model_type
    # kimi_k2, architectures DeepseekV3ForCausalLM (1T total, 32B active, the model card)
    m = read("kimi-k2-instruct")
    assert m.is_mla and round(m.parameters / 1e12, 2) == 1.03


def test_a_config_without_model_type_is_read_from_its_keys(tmp_path):
    cfg = {k: v for k, v in LLAMA3_8B.items() if k != "model_type"}
    assert write(tmp_path, {**cfg, "hidden_act": "silu"}).parameters == 8_030_261_248


def test_exaone4_has_q_and_k_norms(tmp_path):
    # HF Exaone4Attention: q_norm and k_norm, RMSNorms over head_dim (128), 256 a layer;
    # EXAONE-4.0-32B's shape (was read Llama-style: no Q/K norms, 16,384 low)
    cfg = {"model_type": "exaone4", "hidden_size": 5120, "num_hidden_layers": 64,
           "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
           "intermediate_size": 27392, "vocab_size": 102400, "hidden_act": "silu",
           "tie_word_embeddings": False}
    m = write(tmp_path, cfg)
    assert m.qk_norm == 2 * 128
    layer = 5120 * (5120 + 2 * 1024) + 5120 * 5120 + 3 * 5120 * 27392 + 2 * 5120 + 256
    assert m.parameters == 64 * layer + 2 * 102400 * 5120 + 5120 == 32_003_216_384
