"""A JSON ``null`` where a file needs a value is refused as the file spells it (h516).

A GPU, model or profile file in JSON with ``"hbm_capacity_GB": null`` was refused with
'got None', Python's word, which names nothing in the file; now 'got null', beside the key.
A GPU entry's ``"source": null`` read as no key at all ('lacks key source'); a top-level
``"gpu": null`` or ``"model": null`` and a profile's ``"measurement": null`` did not say
what they got. The same entries in Python (``describe(None)``) and TOML files (which have
no null) are said as before.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.hardware import load_gpu_file
from compute.models import get_model, load_model_file
from compute.profiles import read_profile
from compute.validate import describe, file_values

ROOT = Path(__file__).resolve().parents[2]
MODEL = {"layers": 32, "hidden": 4096, "heads": 32, "ffn": 14336, "vocab": 128256,
         "kv_heads": 8, "source": "test"}


def _gpu_doc() -> dict:
    doc = tomllib.loads((ROOT / "docs/examples/outside-gpus.toml").read_text())
    return {"gpu": {"MI325X": doc["gpu"]["MI325X"]}}


def _write(tmp_path: Path, doc: dict, name: str = "f.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _refusal(load, path: Path) -> str:
    with pytest.raises(UserError) as err:
        load(path)
    return str(err.value)


@pytest.mark.parametrize("key, rule", [
    ("hbm_capacity_GB", "hbm_capacity_GB must be a number from 0.001 to 100,000 GB"),
    ("max_instance", "max_instance must be a whole number from 1 to 100,000"),
    ("scaleup_reduction", "scaleup_reduction must be true or false"),
    ("source", "source must be text of at most 10,000 characters"),
])
def test_a_gpu_files_null_is_said_as_null_with_its_key(tmp_path, key, rule):
    doc = _gpu_doc()
    doc["gpu"]["MI325X"][key] = None
    path = _write(tmp_path, doc)
    assert _refusal(load_gpu_file, path) == f"{path}: GPU 'MI325X': {rule}, got null"


def test_a_gpu_row_and_the_top_table_null(tmp_path):
    doc = _gpu_doc()
    doc["gpu"]["MI325X"]["int8_dense_TOPs"] = None   # a row {value, unit, ...} in the file
    path = _write(tmp_path, doc)
    assert _refusal(load_gpu_file, path).endswith("int8_dense_TOPs must be a table (a row "
                                                  "{value, unit = 'TOPS', source, "
                                                  "confidence}), got null")
    path = _write(tmp_path, {"gpu": None})
    assert _refusal(load_gpu_file, path).endswith("in JSON), got gpu null")
    # a GPU entry with no source key at all is still told it lacks one
    doc = _gpu_doc()
    del doc["gpu"]["MI325X"]["source"]
    assert "GPU 'MI325X' lacks key source" in _refusal(load_gpu_file, _write(tmp_path, doc))


@pytest.mark.parametrize("load", [load_model_file, lambda p: get_model(str(p))])
def test_a_model_files_null_is_said_as_null(tmp_path, load):
    path = _write(tmp_path, {"model": {"Mine": dict(MODEL, layers=None)}})
    assert _refusal(load, path) == (f"{path}: model 'Mine': layers must be a whole number "
                                    f"from 1 to 10,000, got null")
    path = _write(tmp_path, {"model": None})
    assert _refusal(load_model_file, path).endswith("in JSON), got model null")


def test_the_same_model_in_toml_and_python_keeps_its_words(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[model.Mine]\nlayers = true\nhidden = 4096\nheads = 32\nffn = 14336\n'
                    'vocab = 128256\nsource = "test"\n')
    assert _refusal(load_model_file, path).endswith("layers must be a whole number from 1 "
                                                    "to 10,000, got True")
    assert describe(None) == "None"
    with file_values("x.toml"):
        assert describe(None) == "None"
    with file_values("x.JSON"):
        assert describe(None) == "null"
    assert describe(None) == "None"   # set back on leaving


def test_a_profile_files_null_is_said_as_null(tmp_path):
    doc = tomllib.loads((ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text())
    doc["parameters"]["gemm_efficiency"]["value"] = None
    path = _write(tmp_path, doc)
    assert _refusal(read_profile, path) == (f"{path}: [parameters.gemm_efficiency]: value "
                                            f"must be a number from 0.0001 to 1, got null")
    doc = tomllib.loads((ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text())
    doc["measurement"][0]["phase"] = None
    assert _refusal(read_profile, _write(tmp_path, doc)).endswith(
        "measurement 1: phase null is unknown; known: 'decode', 'prefill'")
    doc["measurement"] = None
    assert _refusal(read_profile, _write(tmp_path, doc)).endswith(
        "measurement must be a list of tables ([[measurement]]), got null")
