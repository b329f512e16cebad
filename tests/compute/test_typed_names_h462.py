"""One rule for every catalog name a user types back: a model file's model names, as a GPU
file's GPU names (and a scenario file's names, tests/netmodel/test_scenario_names_h462.py).

Before: a model file's model named 'a,b' (or 'a:b', 'a=b', 'a@b') loaded and listed
(``models --model-file``, exit 0), though ``--models A,B`` splits at the comma; the GPU
reader alone refused the four characters. Now compute.validate.typed_name refuses them for
the GPU, model and scenario readers alike, one line naming the file, the name, the
character and what it does.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.hardware import load_gpu_file
from compute.models import get_model, load_model_file, model_names
from tests.netmodel.cli_helpers import one_line_error, run_cli

_MODEL = ('[model."{name}"]\nlayers = 2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\n'
          'source = "what-if: test"\n')
_GPU = '[gpu."{name}"]\nderive_from = "H100-SXM"\nfraction = 0.5\nsource = "what-if: test"\n'
#: Each character and what it does where names are typed, written out here (not read from
#: NAME_MARKS): the message must say it.
_WHY = {
    ",": "it separates the names of a list, as in H100-SXM,Lite",
    "=": "it joins a fabric spec's parameter to its value, as in gpu=Lite",
    ":": "it ends a fabric spec's builder, as in ring:n=4",
    "@": "it joins a name to a GPU or a clock, as in lite-flat@Lite and H100-SXM@0.5x",
}


def test_the_rule_is_the_four_characters():
    from compute.validate import NAME_MARKS

    assert dict(NAME_MARKS) == _WHY


@pytest.mark.parametrize("mark", list(_WHY))
def test_a_model_name_holding_a_mark_is_refused(tmp_path, mark):
    path = tmp_path / "m.toml"
    path.write_text(_MODEL.format(name=f"a{mark}b"))
    with pytest.raises(UserError) as e:
        load_model_file(path)
    assert str(e.value) == (f"{path}: model name 'a{mark}b' must not contain {mark!r} "
                            f"({_WHY[mark]}); a model's name holds none of '@', ',', '=', ':'")


@pytest.mark.parametrize("mark", list(_WHY))
def test_a_json_model_file_obeys_it_too(tmp_path, mark):
    """get_model reads a catalog-format .json by its own path: the same rule."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"model": {f"x{mark}y": {
        "layers": 2, "hidden": 64, "heads": 4, "ffn": 128, "vocab": 100,
        "source": "what-if: test"}}}))
    with pytest.raises(UserError, match=f"model name 'x{mark}y' must not contain {mark!r}"):
        get_model(str(path))


@pytest.mark.parametrize("mark", list(_WHY))
def test_gpu_and_model_files_say_the_same_reason(tmp_path, mark):
    """One rule: the GPU reader's line and the model reader's differ only in the kind."""
    gpu, model = tmp_path / "g.toml", tmp_path / "m.toml"
    gpu.write_text(_GPU.format(name=f"a{mark}b"))
    model.write_text(_MODEL.format(name=f"a{mark}b"))
    lines = []
    for path, load in ((gpu, load_gpu_file), (model, load_model_file)):
        with pytest.raises(UserError) as e:
            load(path)
        lines.append(str(e.value).removeprefix(f"{path}: "))
    assert lines[0].replace("GPU name", "model name", 1).replace(
        "a GPU's name", "a model's name", 1) == lines[1]


@pytest.mark.parametrize("name", ["Tiny", "Tiny 2", "tiny+wide/2", "Tiny (test)", "x;y",
                                  "a-b_c.d"])
def test_other_model_names_load(tmp_path, name):
    path = tmp_path / "m.toml"
    path.write_text(_MODEL.format(name=name))
    assert list(load_model_file(path)) == [name]


def test_catalog_names_obey_it():
    assert not [n for n in model_names() if any(m in n for m in _WHY)]


def test_the_cli_refuses_the_model_name_in_one_line(tmp_path):
    """Before: models --model-file listed 'Half,1' (exit 0), which --models could never
    name again."""
    path = tmp_path / "m.toml"
    path.write_text(_MODEL.format(name="Half,1"))
    one_line_error(run_cli(["models", "--model-file", path]),
                   f"{path}: model name 'Half,1' must not contain ','")
