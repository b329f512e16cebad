"""A required HuggingFace config key written ``null`` is refused as null, naming the key
and what it may be: ``"num_hidden_layers": null`` was told 'config.json lacks
'num_hidden_layers' or ...', a key the file holds; now 'num_hidden_layers must be a whole
number from 1 to 10,000, got null' (the range of :func:`compute.validate.limits`). A key
the file does not hold is still said to be lacking."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hf_config import HF_ALIASES
from compute.validate import limits
from tests.compute.hf_helpers import LLAMA3_8B, write

#: Each required key of a Llama config: the model field its range is (limits.toml [model]).
REQUIRED = {"num_hidden_layers": "layers", "hidden_size": "hidden",
            "num_attention_heads": "heads", "intermediate_size": "ffn", "vocab_size": "vocab"}


@pytest.mark.parametrize("key", REQUIRED)
def test_required_key_null_said_null(tmp_path, key):
    assert key in HF_ALIASES[REQUIRED[key]]
    r = limits("model")[REQUIRED[key]]
    with pytest.raises(UserError) as err:
        write(tmp_path, {**LLAMA3_8B, key: None})
    msg = str(err.value)
    assert "lacks" not in msg
    assert (f"{key} must be a whole number from {r.minimum:,} to {r.maximum:,}, got null"
            in msg), msg


def test_required_key_absent_still_lacking(tmp_path):
    cfg = {k: v for k, v in LLAMA3_8B.items() if k != "num_hidden_layers"}
    with pytest.raises(UserError, match="lacks 'num_hidden_layers'"):
        write(tmp_path, cfg)


def test_optional_null_still_default(tmp_path):
    # num_key_value_heads null: as many KV heads as attention heads (LlamaConfig)
    m = write(tmp_path, {**LLAMA3_8B, "num_key_value_heads": None})
    assert m.kv_heads == LLAMA3_8B["num_attention_heads"]
