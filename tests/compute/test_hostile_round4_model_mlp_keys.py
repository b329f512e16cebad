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


@pytest.mark.parametrize("value", [None, False, 0, [], "FP9"])
def test_wrong_mlp_weight_dtype_refused(tmp_path, value):
    with pytest.raises(UserError, match="mlp_weight_dtype .* is unknown; known: 'bf16'") as e:
        _load(tmp_path, mlp_weight_dtype=value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("value", ["FP8", " fp8 ", "Fp8"])
def test_mlp_weight_dtype_in_another_case_is_kept_as_the_list_spells_it(tmp_path, value):
    """A choice is read regardless of case and blanks at either end (compute.errors.chosen),
    and kept as its list spells it: 'FP8' was taken but kept as typed, and the weights'
    bytes then failed on a KeyError ('FP8' is not a key of DTYPE_BYTES). 8.03e9 parameters:
    the MLP's in 1 byte, the rest in 2, the same as 'fp8' gives."""
    m = _load(tmp_path, mlp_weight_dtype=value, weight_dtype="BF16", norm="RMSNorm")
    ref = _load(tmp_path, mlp_weight_dtype="fp8")
    assert (m.mlp_weight_dtype, m.weight_dtype, m.norm) == ("fp8", "bf16", "rmsnorm")
    assert m.weight_storage_bytes == ref.weight_storage_bytes < 2 * ref.parameters


def test_empty_mlp_weight_dtype_is_unset(tmp_path):
    # Llama-3-8B's shape: 8.03e9 parameters x 2 B in bf16 throughout
    m = _load(tmp_path, mlp_weight_dtype="")
    assert m.mlp_weight_dtype == "" and m.weight_storage_bytes == 2 * m.parameters
    assert abs(m.parameters - 8.03e9) < 0.01e9
