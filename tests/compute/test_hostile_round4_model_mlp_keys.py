"""mlp_weight_dtype of the wrong type (round 4): null, false and 0 were taken as 'unset'
(falsy) though mlp_dtype_layers = null was refused; now each is refused in one line."""
import pytest

from compute.errors import UserError
from compute.models import load_model_file

BODY = {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
        "ffn": 14336, "vocab": 128256, "gated_mlp": True, "source": "test"}


def _load(tmp_path, **extra):
    import json
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"model": {"J": {**BODY, **extra}}}))
    return load_model_file(p)["J"]


@pytest.mark.parametrize("value", [None, False, 0, [], "FP8"])
def test_wrong_mlp_weight_dtype_refused(tmp_path, value):
    with pytest.raises(UserError, match="mlp_weight_dtype .* is unknown; known: 'bf16'") as e:
        _load(tmp_path, mlp_weight_dtype=value)
    assert "\n" not in str(e.value)


def test_empty_mlp_weight_dtype_is_unset(tmp_path):
    # Llama-3-8B's shape: 8.03e9 parameters x 2 B in bf16 throughout
    m = _load(tmp_path, mlp_weight_dtype="")
    assert m.mlp_weight_dtype == "" and m.weight_storage_bytes == 2 * m.parameters
    assert abs(m.parameters - 8.03e9) < 0.01e9
