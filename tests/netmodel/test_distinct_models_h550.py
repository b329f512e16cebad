"""Two different models of one name (two model files both defining ``Mine``) are refused
with what tells them apart (scripts/hostile_round18.py): the line said only 'two different
models are named 'Mine'', which of the files given held which left to guess; now the first
field they differ in, with both values; and compare and sweep name --models."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compute.errors import UserError
from compute.models import get_model
from netmodel.study.rows import distinct_models
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli


def test_the_first_field_apart_is_said():
    a = replace(get_model("Llama-3-8B"), name="Mine")
    b = replace(a, layers=16)
    with pytest.raises(UserError) as err:
        distinct_models([a, b])
    assert str(err.value) == ("two different models are named 'Mine' (layers 32 and 16; a "
                              "HuggingFace config.json takes its folder's name, another .json "
                              "file its own, unless it names itself); give each its own name")


def test_the_same_model_twice_is_kept_once():
    a = replace(get_model("Llama-3-8B"), name="Mine")
    assert distinct_models([a, replace(a), get_model("Llama-3-8B")]) == [a, get_model(
        "Llama-3-8B")]


@pytest.mark.parametrize("command", [
    ["compare", "--scenarios", "h100-dgx"],
    ["sweep", "--scenarios", "h100-dgx", "--param", "cost.pue=1.1,1.2"],
])
def test_the_command_line_names_models(tmp_path, command):
    # two model files defining 'Mine': the line named no flag
    text = (ROOT / "compute/data/models.toml").read_text()
    at = text.index('[model."Llama-3-8B"]')
    table = text[at:text.index("\n[", at + 1)].replace('"Llama-3-8B"', '"Mine"') + "\n"
    (tmp_path / "m1.toml").write_text(table)
    (tmp_path / "m2.toml").write_text(table.replace("layers = 32", "layers = 16"))
    line = one_line_error(run_cli([*command, "--models", "m1.toml,m2.toml", "--max-batch", "8",
                                   "--no-plot", "-q"], cwd=tmp_path))
    assert line == ("error: --models 'm1.toml,m2.toml': two different models are named 'Mine' "
                    "(layers 32 and 16; a HuggingFace config.json takes its folder's name, "
                    "another .json file its own, unless it names itself); give each its own "
                    "name")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m1.toml", "m2.toml"]
