"""Round 12 of hostile inputs, GPU and model files: a key beside the file's one top-level
table is named (each test failed on the code before it)."""

import pytest

from compute.errors import UserError
from compute.hardware import load_gpu_file
from compute.models import load_model_file

MODEL = """[model."M"]
layers = 32
hidden = 4096
heads = 32
kv_heads = 8
head_dim = 128
ffn = 14336
vocab = 128256
gated_mlp = true
max_context = 8192
source = "a test model"
"""

GPU = """[gpu."X"]
sms = 132
bf16_dense_TFLOPs = 989
fp8_dense_TFLOPs = 1979
hbm_capacity_GB = 85.5
hbm_bandwidth_TBps = 3.35
scaleup_GBps_per_direction = 450
scaleout_Gbps = 400
tdp_W = 700
max_instance = 8
source = "a test GPU"
"""


@pytest.mark.parametrize(("load", "body", "table", "stray"), [
    (load_model_file, MODEL, "model", 'source = "mine"\n'),
    (load_gpu_file, GPU, "gpu", "gpus = 1\n"),
], ids=["model", "gpu"])
def test_a_key_beside_the_top_level_table_is_named(tmp_path, load, body, table, stray):
    """Before: "expected a top-level table 'model' of model entries ([model.NAME] in TOML,
    ...)", of a file that holds that table: the stray key (written above the first table
    header, so TOML puts it at the top) went unnamed."""
    path = tmp_path / "f.toml"
    path.write_text(body)
    assert load(path)   # the file reads without the stray key
    path.write_text(stray + body)
    with pytest.raises(UserError) as err:
        load(path)
    key = stray.split(" =")[0]
    assert str(err.value) == f"{path} (top level): unknown key(s) {key}; allowed: {table}"


@pytest.mark.parametrize(("load", "text", "table"), [
    (load_model_file, "[models.M]\nlayers = 1\n", "model"),
    (load_gpu_file, "[gpus.X]\nsms = 1\n", "gpu"),
], ids=["model", "gpu"])
def test_a_file_without_the_table_is_still_told_what_it_needs(tmp_path, load, text, table):
    path = tmp_path / "f.toml"
    path.write_text(text)
    with pytest.raises(UserError, match=rf"expected a top-level table '{table}' of "):
        load(path)


@pytest.mark.parametrize(("value", "digits"), [(10**4300 - 1, 4300), (9 * 10**4299 + 1, 4300),
                                               (10**4300, 4301), (10**5000 - 1, 5000),
                                               (2**20000, 6021)],
                         ids=["10^4300-1", "9x10^4299+1", "10^4300", "10^5000-1", "2^20000"])
def test_describe_counts_the_digits_of_a_long_integer_exactly(value, digits):
    """Before: past 13,000 bits the count was bits x log10(2) + 1, one too many just under a
    power of ten: a GraphML lanes '9.99e4299' (4,300 digits) was told 'got an integer of
    4301 digits'. Digits by hand: 10**k - 1 has k, 10**k has k + 1, 2**20000 has
    floor(20000 log10 2) + 1 = 6021."""
    from compute.validate import describe

    assert describe(value) == f"an integer of {digits} digits"
    assert describe(-value) == f"a negative integer of {digits} digits"


def _derived(name: str, base: str) -> str:
    return f'[gpu."{name}"]\nderive_from = "{base}"\nfraction = 0.5\nsource = "a test"\n'


def test_a_gpu_deriving_from_a_later_entry_or_itself_is_told_so(tmp_path):
    """Before: "GPU 'A' derives from unknown GPU 'B'; known: 'A100-SXM-80GB', ..." of a file
    that gives 'B' (after 'A'), and 'unknown GPU 'A'' of 'A' deriving from itself."""
    path = tmp_path / "g.toml"
    path.write_text(_derived("A", "B") + _derived("B", "H100-SXM"))
    with pytest.raises(UserError) as err:
        load_gpu_file(path)
    assert str(err.value) == (f"{path}: GPU 'A' derives from 'B', which the file gives after "
                              "it; give 'B' first (a GPU derives from a catalog GPU or one "
                              "given before it)")
    path.write_text(_derived("A", "A"))
    with pytest.raises(UserError) as err:
        load_gpu_file(path)
    assert str(err.value) == (f"{path}: GPU 'A' derives from itself (a GPU derives from a "
                              "catalog GPU or one given before it)")
    # in order, it reads: B is half an H100, A half of B (H100-SXM's 132 SMs -> 33)
    path.write_text(_derived("B", "H100-SXM") + _derived("A", "B"))
    assert load_gpu_file(path)["A"].sms == 33
