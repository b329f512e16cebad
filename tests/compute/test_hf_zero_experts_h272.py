"""Hostile input, helper 272, on an HF config shape read silently (exit 0) where the house
rule is one line naming the key and what is allowed, exit 2.

* An experts key of 0: the reader took 0 as "dense" in every family. HF's code reads it so
  only where the decoder layer checks the count (GraniteMoeHybrid ``num_local_experts > 0``,
  granite-4.0-micro's 0; Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer ``num_experts > 0``);
  Mixtral's MixtralSparseMoeBlock (and DeepSeek's, OLMoE's, Phi-MoE's) is built on every MoE
  layer whatever the count, a router onto 0 experts: malformed. So is any config that routes
  tokens (``num_experts_per_tok`` > 0) or sizes experts (``moe_intermediate_size``) beside
  0 of them.
Fixed in compute/hf_config.py (_zero_experts).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.models import load_hf_config
from tests.compute.hf_helpers import LLAMA3_8B, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

#: Mixtral-8x7B's shape (mistralai/Mixtral-8x7B-v0.1 config.json).
MIXTRAL = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
           "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
           "max_position_embeddings": 32768, "num_local_experts": 8,
           "num_experts_per_tok": 2}
#: Llama-3-8B's dense shape, the same layer widths without experts.
DENSE = LLAMA3_8B


def _write(tmp_path, cfg: dict):
    return write_config(tmp_path, cfg)


@pytest.mark.parametrize("cfg", [
    {**MIXTRAL, "num_local_experts": 0},                           # Mixtral, routed 2
    {**MIXTRAL, "num_local_experts": 0, "num_experts_per_tok": None},  # Mixtral's own type
    {**DENSE, "num_experts": 0, "num_experts_per_tok": 8},          # routed onto none
    {**DENSE, "n_routed_experts": 0, "moe_intermediate_size": 2048},  # sized, none of them
    {**DENSE, "model_type": "deepseek_v3", "n_routed_experts": 0},  # DeepseekV3MoE built
], ids=["mixtral", "mixtral-untold-top-k", "num_experts-routed", "n_routed-sized",
        "deepseek-v3"])
def test_zero_experts_beside_moe_keys_is_refused_naming_the_key(tmp_path, cfg):
    key = next(k for k in ("num_local_experts", "num_experts", "n_routed_experts") if k in cfg)
    path = _write(tmp_path, cfg)
    with pytest.raises(UserError, match=f"{key} is 0 but .*{key} >= 2"):
        load_hf_config(path)
    one_line_error(run_cli(["models", path]), f"{key} is 0")


def test_zero_experts_is_dense_where_hf_reads_it_so(tmp_path):
    """Guards: Qwen-MoE's num_experts 0 (HF builds its dense MLP), GraniteMoeHybrid's
    num_local_experts 0 with num_experts_per_tok 0 (granite-4.0-micro), and a bare
    num_experts 0 with no other MoE key: the dense model, 32 x 3 x 4096 x 14336 MLP weights."""
    dense = load_hf_config(_write(tmp_path, DENSE))
    for extra in ({"model_type": "qwen2_moe", "num_experts": 0, "num_experts_per_tok": 4},
                  {"num_experts": 0}, {"num_experts": 0, "num_experts_per_tok": 0}):
        spec = load_hf_config(_write(tmp_path, {**DENSE, **extra}))
        assert spec.experts == 1
        assert spec.ffn == 14336
        if "model_type" not in extra:
            assert spec.parameters == dense.parameters


def test_eight_experts_still_read(tmp_path):
    """Guard: Mixtral's 8 experts, 2 a token, 14,336 wide each."""
    spec = load_hf_config(_write(tmp_path, MIXTRAL))
    assert (spec.experts, spec.experts_per_token, spec.ffn) == (8, 2, 14336)
