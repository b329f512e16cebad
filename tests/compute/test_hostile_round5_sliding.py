"""Hostile sliding-window fields of a HuggingFace config.json (round 5)."""
import pytest

from compute.errors import UserError
from tests.compute.test_hf_configs import MISTRAL_7B
from tests.compute.test_sliding_window import GEMMA2_9B, load


def test_window_zero_is_no_window(tmp_path):
    # before: "model 'm': sliding_layers (32) needs sliding_window", a field the config does
    # not have; 0 is no window, as null and as ModelSpec's own 0
    zero = load(tmp_path, {**MISTRAL_7B, "sliding_window": 0})
    none = load(tmp_path, {**MISTRAL_7B, "sliding_window": None})
    assert (zero.sliding_window, zero.sliding_layers) == (0, 0)
    assert zero == none
    # every layer keeps the whole 32,768-token context (a 4,096 window would keep 4,096)
    assert zero.kv_tokens_held(32768) == 32768


@pytest.mark.parametrize("types, first", [
    (["banana"] * 42, "'banana'"),
    (["linear_attention", "sliding_attention"] * 21, "'linear_attention'"),
    (["sliding_attention"] * 41 + ["chunked_attention"], "'chunked_attention'"),
    (["Sliding_Attention"] * 42, "'Sliding_Attention'"),
    (["sliding_attention "] * 42, "'sliding_attention '"),
])
def test_unknown_layer_types_are_refused(tmp_path, types, first):
    # before: any entry other than 'sliding_attention' counted silently as a full-attention
    # layer (linear attention included)
    with pytest.raises(UserError) as e:
        load(tmp_path, {**GEMMA2_9B, "layer_types": types})
    text = str(e.value)
    assert "\n" not in text
    # 'attention': GraniteMoeHybrid's full-attention layers (h263)
    assert f"layer_types entry {first} is not modelled; known: 'attention', " \
           f"'full_attention', 'sliding_attention'" in text


def test_known_layer_types_are_counted(tmp_path):
    # 10 windowed of 42 by layer_types (not Gemma-2's alternation, 21)
    m = load(tmp_path, {**GEMMA2_9B, "layer_types": ["sliding_attention"] * 10
                        + ["full_attention"] * 32})
    assert (m.sliding_window, m.sliding_layers) == (4096, 10)
