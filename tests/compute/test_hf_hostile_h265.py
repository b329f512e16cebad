"""Hostile input, helper 265, on the HF config keys read since a62200f: two keys of the wrong
type or an unknown value are read silently, exit 0, where the house rule is one line naming
the key and what is allowed, exit 2.

* ``architectures`` (00f13ad, h263: the family of a config whose model_type names none, by
  its first entry): HF writes a list of class names; a string ``"Grok1ForCausalLM"``, a list
  ``[5]``, ``[["Grok1ForCausalLM"]]`` or a table are passed over, so a Grok-2 config whose
  ``architectures`` is a bare string is read as a plain Llama-style model (6.15B for the
  config below, ungated: Grok-1's family is gated) with no word said.
* ``position_embedding_type`` (44d76cf, h263): ``alibi``, ``rope``, ``rotary`` and ``nope``
  drop the learned position table; any other text, ``"warp"`` (or a typo, ``"alibl"``), is
  read as a learned table (GPT-2 style) with no word said. Values in use that a fix must
  keep: "absolute" / "learned" (a table), "rope_gptj" (Cohere's command-r7b and
  command-a fixtures in tests/compute/data/hf_families: no table).

Fixed in compute/hf_config.py (_architectures, _keyed_architecture): both are refused in one
line naming the key and what is allowed.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.models import load_hf_config
from tests.compute.hf_helpers import write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

#: A Llama-3-8B-shaped config whose model_type names no family (Grok-2 says "git").
BASE = {"model_type": "git", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "vocab_size": 128256, "max_position_embeddings": 8192}


def _write(tmp_path, cfg: dict):
    return write_config(tmp_path, cfg)


def test_a_list_of_names_is_read(tmp_path):
    """The guard: the shape HF writes picks Grok-1's family (a gated MLP: 3 x 4096 x 14336
    a layer, and four norms a layer where the plain reading has two: 8,030,523,392 in all
    with the untied 128,256-row embedding and head); without it the unknown model type is
    read ungated with two norms (2 matrices: 6,151,213,056)."""
    grok = load_hf_config(_write(tmp_path, {**BASE, "architectures": ["Grok1ForCausalLM"]}))
    assert grok.gated_mlp
    # h321: the unknown model type alone is refused (it was read as below, no word said);
    # a config with no model_type is read from its keys
    with pytest.raises(UserError, match="model_type 'git' is not a family netmodel reads"):
        load_hf_config(_write(tmp_path, BASE))
    plain = load_hf_config(_write(tmp_path, {k: v for k, v in BASE.items()
                                             if k != "model_type"}))
    assert not plain.gated_mlp
    assert grok.parameters - plain.parameters == 32 * 4096 * 14336 + 32 * 2 * 4096


@pytest.mark.parametrize("arch", ["Grok1ForCausalLM", [5], [["Grok1ForCausalLM"]],
                                  {"a": "Grok1ForCausalLM"}])
def test_architectures_of_the_wrong_type_is_refused_naming_it(tmp_path, arch):
    path = _write(tmp_path, {**BASE, "architectures": arch})
    with pytest.raises(UserError, match="architectures"):
        load_hf_config(path)
    one_line_error(run_cli(["models", path]), "architectures")


@pytest.mark.parametrize("kind", ["warp", "alibl"])
def test_an_unknown_position_embedding_type_is_refused_naming_the_kinds(tmp_path, kind):
    cfg = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
           "vocab_size": 50257, "n_positions": 1024, "position_embedding_type": kind}
    path = _write(tmp_path, cfg)
    one_line_error(run_cli(["models", path]), "position_embedding_type", repr(kind),
                   "alibi")
