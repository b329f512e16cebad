"""Cohere configs: Command R / R+ (cohere) give no key for their gated MLP; Cohere2 configs
(Command R7B, Command A, Aya) carry Cohere's own ``use_gated_activation`` (true in every
published one). The reader now reads that key where given (it ignored it: a config saying
false was counted with a gate it does not have), and refuses a value that is not a boolean.
Sources of the files and of the published totals: data/hf_families/README.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.hf_config import hf_from_dict
from compute.models import get_model

HF = Path(__file__).parent / "data" / "hf_families"


def _count(layers, hidden, heads, kv_heads, ffn, *, gated=True, vocab=256000, head=128,
           qk_norm=False):
    """Hand count of a Cohere model: Q, K, V, O; a gated (3 matrices) or plain (2) MLP; the
    one weight-only LayerNorm a layer (h283: it was counted as two); with use_qk_norm
    (command-r-plus) per-head LayerNorm scales on Q and K; tied embeddings; the final norm."""
    attn = hidden * (heads * head + 2 * kv_heads * head) + heads * head * hidden
    attn += (heads + kv_heads) * head if qk_norm else 0
    mlp = (3 if gated else 2) * hidden * ffn
    return layers * (attn + mlp + hidden) + vocab * hidden + hidden


@pytest.mark.parametrize("name, shape, published", [
    ("command-r-v01", (40, 8192, 64, 64, 22528), 35e9),
    ("command-r-08-2024", (40, 8192, 64, 8, 24576), 32.3e9),
    ("command-r-plus", (64, 12288, 96, 8, 33792), 104e9),
    ("command-a-03-2025", (64, 12288, 96, 8, 36864), 111e9)])
def test_cohere_totals_by_hand_and_published(name, shape, published):
    m = get_model(str(HF / f"{name}.json"))
    assert m.gated_mlp and m.tied_embeddings
    assert m.parameters == _count(*shape, qk_norm=name == "command-r-plus")
    assert m.parameters == pytest.approx(published, rel=0.01)   # as rounded when published


def _command_a(**change):
    cfg = json.loads((HF / "command-a-03-2025.json").read_text())
    cfg.update(change)
    return cfg


def test_use_gated_activation_false_drops_the_gate(tmp_path):
    m = hf_from_dict(_command_a(use_gated_activation=False), tmp_path / "config.json")
    assert not m.gated_mlp
    # 64 x (327,155,712 + 2 x 12288 x 36864 + 12288) + 256000 x 12288 + 12288
    assert m.parameters == _count(64, 12288, 96, 8, 36864, gated=False) == 82_066_550_784


def test_use_gated_activation_true_or_absent_keeps_it(tmp_path):
    with_key = hf_from_dict(_command_a(use_gated_activation=True), tmp_path / "config.json")
    without = _command_a()
    del without["use_gated_activation"]
    assert with_key.parameters == hf_from_dict(without, tmp_path / "config.json").parameters \
        == 111_057_580_032


@pytest.mark.parametrize("value", ["yes", 1, 0, [True], {"x": 1}])
def test_use_gated_activation_must_be_a_boolean(tmp_path, value):
    with pytest.raises(UserError, match=r"use_gated_activation must be true or false, got "):
        hf_from_dict(_command_a(use_gated_activation=value), tmp_path / "config.json")
