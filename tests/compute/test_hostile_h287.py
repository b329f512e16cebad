"""Hostile-input round h287 on the vision towers read this session (compute/hf_vision.py).

A ``vision_config`` without ``model_type`` is the wrapper's own tower in HF's config classes
(Gemma3Config, Llama4Config and InternVLChatConfig build theirs from the dict whatever it
says; LlavaConfig and Mistral3Config set ``model_type`` to ``clip_vision_model`` /
``pixtral`` when it is absent), so it is counted as with the key; the reader left it at 0
(``'gemma3': an architecture the reader does not count``). A ``model_type`` of 0, false or
[] was read as absent; it is refused. A ``vision_feature_layer`` indexes the tower's hidden
states (its embeddings and each layer's output: ``num_hidden_layers + 1``); an index past
them, which HF fails on, widened the projector as a real layer.
"""

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.hf_config import load_hf_config

DATA = Path(__file__).parent / "data" / "hf_families"

#: fixtures of this session's counted towers and LLaVA's, each with its published tower count
#: (tests/compute/test_vision_towers_h283.py, test_vision_tower_h267.py)
TOWERS = {"gemma-3-27b-it.json": 423_060_336, "internvl2-8b.json": 337_583_104,
          "mistral-small-3.2-24b-instruct-2506.json": 438_958_080,
          "llama-4-scout-17b-16e-instruct.json": 871_932_416,
          "llava-1.5-7b-hf.json": 324_487_168}


def _read(tmp_path, name, change):
    cfg = json.loads((DATA / name).read_text())
    change(cfg)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_hf_config(path)


@pytest.mark.parametrize("name", sorted(TOWERS))
def test_vision_config_without_model_type_is_the_wrappers_tower(tmp_path, name):
    assert _read(tmp_path, name, lambda c: None).vision_parameters == TOWERS[name]
    m = _read(tmp_path, name, lambda c: c["vision_config"].pop("model_type", None))
    assert m.vision_parameters == TOWERS[name]
    m = _read(tmp_path, name, lambda c: c["vision_config"].update(model_type=None))
    assert m.vision_parameters == TOWERS[name]


@pytest.mark.parametrize("bad", [0, False, [], -0.0])
def test_vision_model_type_not_text_is_refused(tmp_path, bad):
    with pytest.raises(UserError, match=r"vision_config: model_type must be text"):
        _read(tmp_path, "llama-4-scout-17b-16e-instruct.json",
              lambda c: c["vision_config"].update(model_type=bad))


@pytest.mark.parametrize("name", ["mistral-small-3.2-24b-instruct-2506.json",
                                  "llava-1.5-7b-hf.json"])
def test_vision_feature_layer_must_index_the_towers_hidden_states(tmp_path, name):
    # both towers have 24 layers: hidden states -25..24
    for ok in (24, -25):
        m = _read(tmp_path, name, lambda c, ok=ok: c.update(vision_feature_layer=ok))
        assert m.vision_parameters == TOWERS[name]
    # two layers concatenated: the projector's input is twice the tower's width (1024), so
    # one more 1024 x hidden matrix (Mistral-Small 5120, LLaVA-1.5-7B 4096)
    hidden = {"mistral-small-3.2-24b-instruct-2506.json": 5120,
              "llava-1.5-7b-hf.json": 4096}[name]
    m = _read(tmp_path, name, lambda c: c.update(vision_feature_layer=[-1, -2]))
    assert m.vision_parameters == TOWERS[name] + 1024 * hidden
    for bad in (25, -26, [-1, 30]):
        with pytest.raises(UserError, match=r"vision_feature_layer must be a whole number "
                                            r"from -25 to 24, got (25|-26|30)$"):
            _read(tmp_path, name, lambda c, bad=bad: c.update(vision_feature_layer=bad))
