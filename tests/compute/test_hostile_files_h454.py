"""Hostile files, round 14 (compute): GPU names, and HF keys of the wrong type read as none.

* A GPU file's GPU named with ',', '=' or ':' loaded and listed, but could not be named
  again where GPUs are named in text (``--gpus A,B`` splits at the comma; a fabric spec
  ``ring:n=4,gpu=NAME`` at ':', ',' and '='), as '@' (the clock mark) already could not.
  Now all four are refused in one line naming the character and its use
  (compute.validate.typed_name, NAME_MARKS).
* An HF config's ``mlp_only_layers`` (Qwen-MoE's dense layers) given as 0, false, "" or
  {} was read as no dense layer (``or []``), where any other wrong type was refused;
  DeepSeek-VL2's ``projector_config`` given as 0, false or "" likewise read as an empty
  table. Now only null (or absent) means none, and the rest is refused naming the key.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hardware import load_gpu_file
from compute.models import load_hf_config
from tests.compute.hf_helpers import fixture, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

_GPU = '[gpu."{name}"]\nderive_from = "H100-SXM"\nfraction = 0.5\nsource = "what-if: test"\n'


@pytest.mark.parametrize(("mark", "why"), [
    (",", "it separates the names of a list, as in H100-SXM,Lite"),
    ("=", "it joins a fabric spec's parameter to its value, as in gpu=Lite"),
    (":", "it ends a fabric spec's builder, as in ring:n=4"),
    ("@", "it joins a name to a GPU or a clock, as in lite-flat@Lite and H100-SXM@0.5x"),
])
def test_a_gpu_name_holding_a_mark_is_refused(tmp_path, mark, why):
    path = tmp_path / "g.toml"
    path.write_text(_GPU.format(name=f"My{mark}GPU"))
    with pytest.raises(UserError) as e:
        load_gpu_file(path)
    assert str(e.value) == (f"{path}: GPU name 'My{mark}GPU' must not contain {mark!r} "
                            f"({why}); a GPU's name holds none of '@', ',', '=', ':'")


@pytest.mark.parametrize("name", ["MI355X", "Lite 2", "Lite+BW/2", "A100 (40 GB)", "x;y"])
def test_other_gpu_names_load(tmp_path, name):
    path = tmp_path / "g.toml"
    path.write_text(_GPU.format(name=name))
    assert list(load_gpu_file(path)) == [name]


def test_the_cli_refuses_the_name_in_one_line(tmp_path):
    """hardware --gpu-file listed a GPU named 'Half,1' (exit 0) that compare --gpus could
    never name; now one line, exit 2."""
    path = tmp_path / "g.toml"
    path.write_text(_GPU.format(name="Half,1"))
    one_line_error(run_cli(["hardware", "--gpu-file", path]),
                   "GPU name 'Half,1' must not contain ','")


@pytest.mark.parametrize("value", [0, False, "", {}])
def test_mlp_only_layers_of_the_wrong_type_is_refused(tmp_path, value):
    cfg = fixture("qwen3-30b-a3b")
    cfg["mlp_only_layers"] = value
    with pytest.raises(UserError, match="mlp_only_layers must be a list of at most 48 layer "
                                        "indices, got "):
        load_hf_config(write_config(tmp_path, cfg))


def test_mlp_only_layers_null_or_a_list_is_read(tmp_path):
    """The guard: null and [] are no dense layer (every one of the 48 layers MoE); [0, 1]
    keeps two layers dense (46 MoE)."""
    cfg = fixture("qwen3-30b-a3b")
    counts = []
    for value in (None, [], [0, 1]):
        cfg["mlp_only_layers"] = value
        m = load_hf_config(write_config(tmp_path, cfg))
        counts.append(m.moe_layers)
    assert counts == [48, 48, 46]


@pytest.mark.parametrize("value", [0, False, ""])
def test_projector_config_of_the_wrong_type_is_refused(tmp_path, value):
    cfg = fixture("deepseek-vl2-tiny")
    cfg["projector_config"] = value
    with pytest.raises(UserError, match=f"projector_config must be a table of keys, got "
                                        f"{value!r}"):
        load_hf_config(write_config(tmp_path, cfg))
