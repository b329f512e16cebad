"""Today's popular HuggingFace config.json files read against their makers' published figures.

The models, their configs (``tests/compute/data/hf_configs`` and the other stored folders) and
the published totals, active counts and their sources are listed in
``tests/compute/data/hf_configs/published.toml``. Each check: netmodel's total (with the
vision tower where the published total counts it) and active count within the stated
tolerance of the published figure (2% unless the entry says why not: model cards round), the
bf16 KV-cache bytes a token adds over all layers exactly as the factors written by hand, and
the sliding-window (or chunked) layers and their window.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import pytest

from compute.models import load_hf_config

DATA = Path(__file__).parent / "data"
MANIFEST = tomllib.loads((DATA / "hf_configs" / "published.toml").read_text())["model"]
BY_NAME = {m["name"]: m for m in MANIFEST}
_UNITS = {"M": 1e6, "B": 1e9, "T": 1e12}


def published(text: str) -> float:
    """A count as a model card writes it: ``"8.03B"`` -> 8.03e9, ``"1T"`` -> 1e12."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([MBT])", text)
    assert m, text
    return float(m.group(1)) * _UNITS[m.group(2)]


def _read(entry: dict):
    return load_hf_config(DATA / entry["config"])


def _active(model, counts: str) -> int:
    """The active count in the maker's convention (see published.toml)."""
    table = model.vocab * model.hidden
    return {"all": model.active_parameters,
            "no_embedding": model.active_parameters - table,
            "no_embeddings": model.active_parameters - table
            - (0 if model.tied_embeddings else table)}[counts]


def test_the_manifest_is_well_formed():
    names = [m["name"] for m in MANIFEST]
    assert len(names) == len(set(names)) == 40
    for m in MANIFEST:
        assert (DATA / m["config"]).is_file(), m["config"]
        assert m["config_source"].startswith("https://huggingface.co/"), m["name"]
        assert m["total_source"] and published(m["total"]) > 0
        assert ("active" in m) == ("active_source" in m) == ("active_counts" in m)
        assert ("tolerance" in m) == ("tolerance_why" in m), m["name"]
    # every config stored in hf_configs is checked here
    stored = {p.name for p in (DATA / "hf_configs").glob("*.json")}
    assert stored == {Path(m["config"]).name for m in MANIFEST
                      if m["config"].startswith("hf_configs/")}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_total_parameters_match_the_published_figure(name):
    entry = BY_NAME[name]
    m = _read(entry)
    total = m.parameters + (m.vision_parameters if entry.get("with_vision") else 0)
    tol = entry.get("tolerance", 0.02)
    assert abs(total / published(entry["total"]) - 1) <= tol, (total, entry["total"])


@pytest.mark.parametrize("name", sorted(n for n, e in BY_NAME.items() if "active" in e))
def test_active_parameters_match_the_published_figure(name):
    entry = BY_NAME[name]
    m = _read(entry)
    assert m.is_moe
    active = _active(m, entry["active_counts"])
    tol = entry.get("tolerance", 0.02)
    assert abs(active / published(entry["active"]) - 1) <= tol, (active, entry["active"])


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_kv_bytes_per_token_are_the_hand_count(name):
    entry = BY_NAME[name]
    m = _read(entry)
    factors = entry["kv_factors"]
    assert factors[0] == m.layers
    assert m.layers * m.kv_elements_per_token * 2 == math.prod(factors)
    windowed = entry.get("windowed")
    if windowed is None:
        assert m.sliding_window == 0 and m.windowed_layers == 0
    else:
        assert [m.sliding_window, m.windowed_layers] == windowed


def test_counts_to_the_parameter_where_the_hub_gives_them():
    """The hub's safetensors counts (in published.toml's total_source), each reproduced
    exactly: dense layers, GQA, separate head_dim, tied and untied heads, post-norms, Q/K
    norms, Gemma's four norms a layer."""
    exact = {}
    for m in MANIFEST:
        found = re.search(r"\((\d{1,3}(?:,\d{3})+)\)", m["total_source"])
        if found:
            exact[m["name"]] = int(found.group(1).replace(",", ""))
    assert len(exact) == 10
    for name, count in exact.items():
        assert _read(BY_NAME[name]).parameters == count, name


def test_gemma3_12b_hand_count():
    """google/gemma-3-12b-it's text_config names no head_dim, vocab_size or
    sliding_window_pattern: Gemma3TextConfig's 256, 262,208 and 6 (layers 5, 11, ..., 47
    global, 40 of 48 local)."""
    m = _read(BY_NAME["Gemma-3-12B"])
    attn = 3840 * (16 * 256 + 2 * 8 * 256) + 16 * 256 * 3840 + 2 * 256   # Q, K, V, O, q/k norm
    layer = attn + 3 * 3840 * 15360 + 4 * 3840                           # GeGLU, four norms
    assert m.parameters == 48 * layer + 262208 * 3840 + 3840 == 11_766_034_176
    assert (m.head_dim, m.vocab, m.full_layer_step) == (256, 262208, 6)


def test_deepseek_v2_lite_active_by_hand():
    """27 MLA layers (full-rank queries 2048 x 16 x 192), one dense MLP of 10944, 26 MoE
    layers running 6 routed and 2 shared experts of 1408; without the input embedding
    2.451B, the card's 2.4B."""
    m = _read(BY_NAME["DeepSeek-V2-Lite"])
    attn = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * (128 + 128) + 16 * 128 * 2048
    expert = 3 * 2048 * 1408
    active = (27 * (attn + 2 * 2048) + 3 * 2048 * 10944 + 26 * (8 * expert + 2048 * 64)
              + 102400 * 2048 + 2048)
    assert _active(m, "no_embedding") == active == 2_451_435_008
