"""Hostile input, helper 272: a multimodal wrapper holding two of ``text_config`` /
``llm_config`` / ``language_config`` was read from ``text_config`` with no word said (exit 0);
the house rule is one line naming both keys, exit 2. Fixed in compute/hf_config.py
(_text_model).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.models import load_hf_config
from tests.compute.hf_helpers import LLAMA3_8B, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

#: Llama-3-8B's dense shape.
DENSE = LLAMA3_8B


def _write(tmp_path, cfg: dict):
    return write_config(tmp_path, cfg)


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
