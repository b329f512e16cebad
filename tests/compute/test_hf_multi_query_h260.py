"""Falcon and GPT-BigCode read ``multi_query`` by one rule (h260 review of h252's adfbf3d,
which gave GPT-BigCode a second branch beside Falcon's): both configs default it to true,
and HF's attention then builds one K and one V head whatever other KV-head key the config
holds; with it false, Falcon's attention takes ``num_kv_heads`` (FalconAttention:
``config.num_kv_heads if new_decoder_architecture or not multi_query else 1``).

Before: a GPT-BigCode config holding a ``num_key_value_heads`` beside its default
``multi_query`` was read with that many KV heads (GPTBigCodeAttention takes 1), and a Falcon
config with ``multi_query`` false read its query heads as KV heads, not ``num_kv_heads``.
"""

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.models import load_hf_config

DATA = Path(__file__).parent / "data" / "hf_families"


def write(tmp_path, cfg: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_hf_config(path, name="m")


def santacoder() -> dict:
    return json.loads((DATA / "gpt_bigcode-santacoder.json").read_text())


#: A Falcon of the old decoder architecture, 32 query heads of 128 (Falcon-7B's layout with
#: a head count 8 divides).
FALCON = {"model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 4096,
          "num_attention_heads": 32, "vocab_size": 65024, "new_decoder_architecture": False}


def test_bigcode_multi_query_is_one_kv_head_whatever_other_key(tmp_path):
    # santacoder: 16 heads; GPTBigCodeAttention: kv_heads = 1 if multi_query else heads
    assert santacoder().get("multi_query", True) is True
    assert "num_key_value_heads" not in santacoder()
    assert write(tmp_path, {**santacoder(), "num_key_value_heads": 16}).kv_heads == 1


@pytest.mark.parametrize("extra, kv_heads", [
    ({}, 1),                                              # multi_query defaults to true
    ({"multi_query": True, "num_kv_heads": 8}, 1),        # multi-query: one head
    ({"multi_query": False}, 32),                         # num_kv_heads defaults to heads
    ({"multi_query": False, "num_kv_heads": 8}, 8),       # HF takes num_kv_heads
    ({"new_decoder_architecture": True, "num_kv_heads": 8}, 8),
])
def test_falcon_kv_heads_as_falcon_attention_builds_them(tmp_path, extra, kv_heads):
    assert write(tmp_path, {**FALCON, **extra}).kv_heads == kv_heads


@pytest.mark.parametrize("cfg", [FALCON, None])
def test_a_bad_multi_query_is_named_in_either_family(tmp_path, cfg):
    base = santacoder() if cfg is None else cfg
    with pytest.raises(UserError, match="multi_query"):
        write(tmp_path, {**base, "multi_query": 2})

