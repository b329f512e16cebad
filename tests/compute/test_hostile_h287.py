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


# ModelSpec.qk_norm (this session): elements of a layer's query and key norms, at most a
# scale per element of the queries' and keys' widths ((heads + kv_heads) x head_dim, as
# limits.toml's [model.qk_norm] says); a model file's 100,000,000 was taken, adding 3.2e9
# parameters to an 8B model.
_MODEL = """[model.Mine]
layers = 32
hidden = 4096
heads = 32
kv_heads = 8
head_dim = 128
ffn = 14336
vocab = 128256
gated_mlp = true
max_context = 8192
source = "Llama-3-8B's shape"
"""


def _model_file(tmp_path, extra):
    from compute.models import load_model_file

    path = tmp_path / "mine.toml"
    path.write_text(_MODEL + extra)
    return load_model_file(path)["Mine"]


def test_qk_norm_at_most_the_query_and_key_widths(tmp_path):
    plain = _model_file(tmp_path, "").parameters
    assert plain == 8_030_261_248          # Llama-3-8B's published count
    # (32 + 8) x 128 = 5,120 a layer, 32 layers: 163,840 more
    assert _model_file(tmp_path, "qk_norm = 5120\n").parameters == plain + 32 * 5120
    assert _model_file(tmp_path, "qk_norm = 256\n").parameters == plain + 32 * 256
    for bad in (5121, 100_000_000):
        with pytest.raises(UserError, match=rf"model 'Mine': qk_norm \({bad:,}\) exceeds the "
                                            r"queries' and keys' widths, \(heads \+ kv_heads\) "
                                            r"x head_dim = 5,120; allowed: 0 to 5,120"):
            _model_file(tmp_path, f"qk_norm = {bad}\n")


# An experts key of 0 (compute.hf_families' ZERO_EXPERTS table and EXPERT_FIELDS): the other
# keys that speak of experts were tested with ``value not in (0, [])``, so a false, 0.0 or
# -0.0 (== 0) passed as "no experts" and a NaN, '' or {} was called "for experts". Each is now
# refused as the count (or list) it should be; 0, null and [] still read dense.
@pytest.mark.parametrize("key,bad,what", [
    ("num_experts_per_tok", False, "a whole number from 0 to 1,048,576"),
    ("num_experts_per_tok", 0.0, "a whole number from 0 to 1,048,576"),
    ("num_experts_per_tok", float("nan"), "a whole number from 0 to 1,048,576"),
    ("num_experts_per_tok", {}, "a whole number from 0 to 1,048,576"),
    ("moe_intermediate_size", -0.0, "a whole number from 0 to 10,000,000"),
    ("n_shared_experts", "", "a whole number from 0 to 1,048,576"),
    ("moe_layers", 0, "a list of layer indices"),
    ("moe_layers", False, "a list of layer indices")])
def test_zero_experts_other_keys_must_be_counts(tmp_path, key, bad, what):
    with pytest.raises(UserError, match=rf"config\.json: {key} must be {what}, got "):
        _read(tmp_path, "qwen3-8b.json", lambda c: c.update(num_experts=0, **{key: bad}))


def test_zero_experts_with_zero_counts_is_dense(tmp_path):
    dense = _read(tmp_path, "qwen3-8b.json", lambda c: None).parameters
    assert dense == 8_190_735_360      # Qwen3-8B's safetensors total / 2
    m = _read(tmp_path, "qwen3-8b.json",
              lambda c: c.update(num_experts=0, num_experts_per_tok=0, moe_intermediate_size=0,
                                 n_shared_experts=None, moe_layers=[]))
    assert (m.parameters, m.experts) == (dense, 1)
    with pytest.raises(UserError, match=r"num_experts is 0 but its num_experts_per_tok is for "
                                        r"experts"):
        _read(tmp_path, "qwen3-8b.json", lambda c: c.update(num_experts=0,
                                                              num_experts_per_tok=2))


def test_a_tower_past_the_limit_is_named_as_the_tower(tmp_path):
    # InternVL's pixel shuffle at 1/1000: mlp1 takes 3,200 x 1000**2 inputs, 4.2e12
    # parameters, over limits.toml's 1e12; refused as the language model's vision_parameters
    # ("llm_config: model 'hf': vision_parameters must be ...") before
    with pytest.raises(UserError, match=r"config\.json: vision_config: its InternViT and MLP "
                                        r"projector would hold 4,196,672,797,696 parameters, "
                                        r"over the 1,000,000,000,000 a vision tower may hold"):
        _read(tmp_path, "internvl2-8b.json", lambda c: c.update(downsample_ratio=0.001))
    # 1/2 (the fixture's) stays counted
    assert _read(tmp_path, "internvl2-8b.json", lambda c: c.update(downsample_ratio=0.5)
                 ).vision_parameters == TOWERS["internvl2-8b.json"]


# A list naming one hidden state twice (or more entries than the tower has hidden states)
# widened the projector once per entry: 24,000 entries made LLaVA-1.5-7B's weights 215 GB.
@pytest.mark.parametrize("bad, says", [
    ([-1, 24], "names hidden state 24 twice"),     # -1 and 24 are the same of -25..24
    ([3, 3], "names hidden state 3 twice"),
    ([-1] * 24_000, "lists 24,000 hidden states; the tower has 25"),
])
def test_vision_feature_layer_names_each_hidden_state_once(tmp_path, bad, says):
    with pytest.raises(UserError, match=says):
        _read(tmp_path, "llava-1.5-7b-hf.json",
              lambda c: c.update(vision_feature_layer=bad))
    # every one of the 25 once is a layout: 25 x the 1024-wide tower into the projector
    m = _read(tmp_path, "llava-1.5-7b-hf.json",
              lambda c: c.update(vision_feature_layer=list(range(-25, 0))))
    assert m.vision_parameters == TOWERS["llava-1.5-7b-hf.json"] + 24 * 1024 * 4096
