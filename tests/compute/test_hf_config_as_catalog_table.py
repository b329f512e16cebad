"""A HuggingFace config becomes a catalog (or model-file) table without translating keys
by hand: ``netmodel models --hf-config PATH --json`` prints every key the reader read, and
those less ``name`` and the three counts it adds (``parameters``, ``active_parameters``,
``weight_storage_bytes``) are a ``[model.NAME]`` table that loads as the same model. A
table written by hand from a config can drop what the reader worked out (Qwen2's Q/K/V
biases, Gemma's tied head and four norms, a window's layers), and nothing said so.
docs/architecture.md's model recipe rests on this."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.models import get_model, load_model_file, model_names


def _readable(path: Path) -> bool:
    """Whether the reader reads the config (some families are refused by design: hybrids
    of state-space layers, sparse attention, cross-attention)."""
    try:
        get_model(str(path))
    except UserError:
        return False
    return True


HF = [p for p in sorted((Path(__file__).parent / "data" / "hf_families").glob("*.json"))
      if _readable(p)]
#: what ``--json`` adds to the keys a table takes
ADDED = ("name", "parameters", "active_parameters", "weight_storage_bytes")


def _table(spec) -> dict:
    return {k: v for k, v in spec.to_dict().items() if k not in ADDED}


def test_the_json_listing_less_its_counts_is_a_model_files_keys(tmp_path):
    spec = get_model("Llama-3-8B")
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"model": {"Mine": _table(spec)}}))
    assert load_model_file(f)["Mine"] == dataclasses.replace(spec, name="Mine")


@pytest.mark.parametrize("path", HF, ids=[p.stem for p in HF])
def test_every_family_config_round_trips(tmp_path, path):
    spec = get_model(str(path))
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"model": {"Mine": _table(spec)}}))
    back = load_model_file(f)["Mine"]
    assert dataclasses.replace(back, name=spec.name) == spec
    assert (back.parameters, back.active_parameters) == (spec.parameters,
                                                         spec.active_parameters)


def test_the_family_set_is_wide():
    # dense, MoE, MLA, windowed and vision-language configs among them, and the catalog's
    assert len(HF) >= 50
    kinds = [get_model(str(p)) for p in HF]
    assert any(m.experts > 1 for m in kinds) and any(m.kv_lora_rank for m in kinds)
    assert any(m.sliding_window for m in kinds) and any(m.vision_parameters for m in kinds)
    assert "Llama-3-8B" in model_names()
