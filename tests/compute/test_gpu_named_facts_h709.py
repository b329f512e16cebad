"""What a GPU's entry names it (compute.gpu_rows.NAMED_KEYS): its collective generation and
its compute capability, kept beside its spec, kept by a GPU derived from it unless it names
its own, carried by a saved fabric for a GPU file's GPUs (h709). Which generations exist is
netmodel's to say (tests/netmodel/test_gpu_names_generation_h709.py); compute checks the
name is a name and the capability CUDA's MAJOR.MINOR."""

from __future__ import annotations

import json
import tomllib
from importlib import resources

import pytest

from compute.errors import UserError
from compute.gpu_facts import check_gpu_file_facts, gpu_file_facts, named_fact, stated_fact
from compute.hardware import load_gpu_file


def _load(tmp_path, entries):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"gpu": entries}))
    return load_gpu_file(path)


HALF_H100 = {"derive_from": "H100-SXM", "fraction": 0.5, "source": "test"}


def test_named_facts_are_read_and_kept_by_derived_gpus(tmp_path):
    gpus = _load(tmp_path, {
        "H709c-Own": {**HALF_H100, "collective_generation": "blackwell",
                      "compute_capability": "10.3"},
        "H709c-Kept": {"derive_from": "H709c-Own", "fraction": 0.5, "source": "test"}})
    assert stated_fact("H709c-Own", "collective_generation") == "blackwell"
    assert stated_fact("H709c-Kept", "collective_generation") is None
    assert named_fact("H709c-Kept", "collective_generation") == ("blackwell", "H709c-Own")
    assert named_fact("H709c-Kept", "compute_capability") == ("10.3", "H709c-Own")
    # a saved fabric carries what each entry states, not what it keeps
    assert gpu_file_facts(gpus["H709c-Own"]) == {
        "derive_from": "H100-SXM", "fraction": 0.5, "collective_generation": "blackwell",
        "compute_capability": "10.3"}
    assert gpu_file_facts(gpus["H709c-Kept"]) == {"derive_from": "H709c-Own", "fraction": 0.5}
    # the GpuSpec itself is as without them (performance only)
    assert gpus["H709c-Own"] == _load(tmp_path, {"H709c-Own": HALF_H100})["H709c-Own"]


@pytest.mark.parametrize("key, value, message", [
    ("compute_capability", 10.3, r"compute_capability must be CUDA's compute capability "
                                 r"MAJOR\.MINOR as text \(e\.g\. \"9\.0\", \"10\.3\"\), got 10\.3"),
    ("compute_capability", "sm_103", r"compute_capability must be .* got 'sm_103'"),
    ("compute_capability", "10.30", r"got '10\.30'"),
    ("collective_generation", 3, r"collective_generation name 3 must be non-empty text"),
    ("collective_generation", " hopper", r"collective_generation name ' hopper' must be"),
])
def test_a_bad_value_is_refused_in_one_line(tmp_path, key, value, message):
    text = resources.files("compute").joinpath("data/gpus.toml").read_text(encoding="utf-8")
    h100 = {k: v for k, v in tomllib.loads(text)["gpu"]["H100-SXM"].items() if k not in (
        "collective_generation", "compute_capability")}   # derived from none
    for entry in (HALF_H100, h100):
        with pytest.raises(UserError, match=message) as err:
            _load(tmp_path, {"H709c-Bad": {**entry, key: value}})
        assert "\n" not in str(err.value) and "H709c-Bad" in str(err.value)


def test_a_saved_fabrics_facts_are_checked_as_a_gpu_files(tmp_path):
    gpus = _load(tmp_path, {"H709c-Fab": HALF_H100})
    with pytest.raises(UserError, match=r"f\.json: GPU 'H709c-Fab': compute_capability must"):
        check_gpu_file_facts(gpus, {"H709c-Fab": {**gpu_file_facts(gpus["H709c-Fab"]),
                                                  "compute_capability": 9}}, "f.json")
    named = check_gpu_file_facts(gpus, {"H709c-Fab": {"collective_generation": "ampere"}},
                                 "f.json")[3]
    assert named == {"H709c-Fab": {"collective_generation": "ampere"}}


def test_unknown_key_refusals_name_the_keys(tmp_path):
    with pytest.raises(UserError, match=r"a derived GPU allows: .*collective_generation, "
                                        r"compute_capability, host_arch, source"):
        _load(tmp_path, {"H709c-K": {**HALF_H100, "generation": "hopper"}})
