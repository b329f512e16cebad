"""Shared set-up of the HuggingFace config tests: the stored configs of
tests/compute/data/hf_families, and writing a config to a test's folder."""

from __future__ import annotations

import json
from pathlib import Path

from compute.models import load_hf_config

DATA = Path(__file__).parent / "data" / "hf_families"
#: Llama-3-8B's dense shape (meta-llama/Meta-Llama-3-8B config.json).
LLAMA3_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
             "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
             "vocab_size": 128256, "max_position_embeddings": 8192}


def read(name: str):
    """The stored config ``name`` read as a model."""
    return load_hf_config(DATA / f"{name}.json")


def fixture(name: str) -> dict:
    """The stored config ``name`` as a dict, to change."""
    return json.loads((DATA / f"{name}.json").read_text())


def write_config(tmp_path, cfg: dict) -> Path:
    """``cfg`` written as ``tmp_path/config.json``."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return path


def write(tmp_path, cfg: dict):
    """``cfg`` written and read as the model 'm'."""
    return load_hf_config(write_config(tmp_path, cfg), name="m")
