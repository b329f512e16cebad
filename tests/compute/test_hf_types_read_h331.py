"""The refusal of a model_type the reader has no family for says what it reads (helper
h331, review of 84fb3ef), derived from the registries: the families and keyed types, the
architectures read as a family, and that a multimodal wrapper is read through its language
model's table (:data:`~compute.hf_families.TEXT_MODEL_KEYS`), with the wrappers whose
vision tower is counted (:data:`~compute.hf_vision.VISION_TOWERS`). Before, a wrapper
whose text_config named an unknown type was told only the text families, as if LLaVA-NeXT,
Idefics3, DeepSeek-VL2, Gemma-3 or Mistral-3 wrappers were not read at all.

And the common types still read after the refusal came in (a guard: passes on the old
code too), each fixture against the total another test or the publisher gives.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hf_families import ARCHITECTURE_FAMILIES, HF_FAMILIES, KEYED_TYPES, TEXT_MODEL_KEYS
from compute.hf_vision import VISION_TOWERS
from tests.compute.hf_helpers import LLAMA3_8B, read, write

WRAPPED = {"model_type": "acme_vl", "architectures": ["AcmeForConditionalGeneration"],
           "text_config": {**LLAMA3_8B, "model_type": "acme_text"},
           "vision_config": {"model_type": "clip_vision_model"}}


def _refusal(tmp_path, cfg) -> str:
    with pytest.raises(UserError) as e:
        write(tmp_path, cfg)
    text = str(e.value)
    assert "\n" not in text
    return text


def test_a_nested_unknown_type_is_told_wrappers_are_read(tmp_path):
    text = _refusal(tmp_path, WRAPPED)
    assert "text_config: model_type 'acme_text' is not a family netmodel reads" in text
    assert "multimodal wrapper through its language model's table" in text
    for wrapper in ("llava_next", "idefics3", "deepseek_vl_v2", "gemma3", "mistral3"):
        assert wrapper in text


def test_the_list_is_the_registries(tmp_path):
    text = _refusal(tmp_path, {**LLAMA3_8B, "model_type": "acme"})
    for name in (*HF_FAMILIES, *KEYED_TYPES, *ARCHITECTURE_FAMILIES, *TEXT_MODEL_KEYS,
                 *VISION_TOWERS):
        assert name in text


def test_the_same_wrapper_with_a_known_text_type_is_read(tmp_path):
    m = write(tmp_path, {**WRAPPED, "text_config": {**LLAMA3_8B, "hidden_act": "silu"}})
    assert m.parameters == 8_030_261_248            # Llama-3-8B, hf_helpers.LLAMA3_8B


# (fixture, its model_type, the total): exact where another test pins it (named), else the
# publisher's rounded figure
COMMON = [
    ("qwen3-8b", "qwen3", 8_190_735_360, None),              # test_hostile_h287
    ("qwen3-30b-a3b", "qwen3_moe", 30_532_122_624, None),    # test_hf_families
    ("llama-3.2-1b", "llama", 1_235_814_400, None),          # test_hfaudit_published
    ("gemma-3-27b-it", "gemma3", 27_009_346_304, None),      # test_hf_norms_h283
    ("deepseek-r1", "deepseek_v3", 671_026_404_352, None),   # test_hf_2025_audit
    ("gpt-neox-20b", "gpt_neox", 20_554_567_680, None),      # test_hf_outside_h252
    ("starcoder2-15b", "starcoder2", 15_957_889_024, None),  # test_hf_outside_h252
    ("phi-4", "phi3", None, 14.7),                # the hub's "14.7B params" for microsoft/phi-4
    ("mixtral-8x22b-instruct-v0.1", "mixtral", None, 141),   # Mistral AI: 141B total
    ("mistral-large-instruct-2407", "mistral", None, 123),   # Mistral AI: 123B
    ("falcon-180b", "falcon", None, 180),   # TII: "180B", a round figure (178.6B here)
]


@pytest.mark.parametrize(("name", "model_type", "exact", "billions"), COMMON)
def test_common_types_still_read(name, model_type, exact, billions):
    from tests.compute.hf_helpers import fixture
    assert fixture(name)["model_type"] == model_type
    m = read(name)
    if exact is not None:
        assert m.parameters == exact
    else:
        digits = 1 if billions < 100 else 0 if billions % 10 else -1
        assert round(m.parameters / 1e9, digits) == billions


def test_a_type_taken_from_the_wrapper_says_so(tmp_path):
    # text_config without a model_type takes the wrapper's; before, the refusal named it as
    # text_config's own ("text_config: model_type 'acme_vl' is not a family")
    text = {k: v for k, v in LLAMA3_8B.items() if k != "model_type"}
    msg = _refusal(tmp_path, {**WRAPPED, "text_config": text})
    assert ("text_config: model_type 'acme_vl' (the wrapper's: text_config names none) is "
            "not a family netmodel reads") in msg
