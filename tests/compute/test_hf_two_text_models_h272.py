"""Hostile input, helper 272: a multimodal wrapper holding two of ``text_config`` /
``llm_config`` / ``language_config`` was read from ``text_config`` with no word said (exit 0);
the house rule is one line naming both keys, exit 2. Fixed in compute/hf_config.py
(_text_model).
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.models import load_hf_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

#: Llama-3-8B's dense shape.
DENSE = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "vocab_size": 128256, "max_position_embeddings": 8192}


def _write(tmp_path, cfg: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return path


@pytest.mark.parametrize("keys", [("text_config", "llm_config"),
                                  ("text_config", "language_config"),
                                  ("llm_config", "language_config")])
def test_a_wrapper_with_two_language_models_is_refused_naming_both(tmp_path, keys):
    path = _write(tmp_path, {"model_type": "llava", **{k: DENSE for k in keys}})
    with pytest.raises(UserError, match=f"holds {keys[0]} and {keys[1]}"):
        load_hf_config(path)
    one_line_error(run_cli(["models", path]), f"{keys[0]} and {keys[1]}")


def test_a_wrapper_with_one_is_read(tmp_path):
    """Guard: one language model is read from it (the dense Llama's parameters)."""
    dense = load_hf_config(_write(tmp_path, DENSE))
    spec = load_hf_config(_write(tmp_path, {"model_type": "llava", "llm_config": DENSE}))
    assert spec.parameters == dense.parameters
