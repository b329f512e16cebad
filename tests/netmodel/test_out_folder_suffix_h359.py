"""An output folder that does not exist yet and is named like a file (``--out cmpout.csv``)
is refused in one line, exit status 2, nothing created: netmodel made a folder of that name
where the user meant a file. One rule, in compute.output_paths.check_folder_path, for every
command whose --out (or -o) is a folder."""

import os

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.output_paths import FIGURE_FORMATS, FILE_SUFFIXES, check_folder_path
from netmodel.cli.main import cli

COMMANDS = [
    ["compare", "--model", "Llama-3-70B", "--scenarios", "lite-flat"],
    ["sweep", "--scenarios", "lite-flat", "--model", "Llama-3-70B",
     "--param", "fabric.latency=100ns,1us"],
    ["study", "lite-gpu"],
    ["availability", "--scenario", "lite-direct", "--model", "Llama-3-70B"],
    ["blast-radius", "--scenario", "lite-direct", "--model", "Llama-3-70B"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("name", ["cmpout.csv", "r.JSON", "fig.png", "notes.md"])
def test_new_folder_named_like_a_file_is_refused(tmp_path, monkeypatch, args, name):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, [*args, "--out", name])
    assert out.exit_code == 2, out.output
    stem = name.rsplit(".", 1)[0]
    assert out.output.count("\n") == 1 and f"such as '{stem}'" in out.output, out.output
    assert os.listdir(tmp_path) == []


def test_vidur_folder_is_checked_by_the_same_rule(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["costs", "--fabric", "flat:n=8", "--format", "vidur",
                                   "-o", "v.toml"])
    assert out.exit_code == 2 and "such as 'v'" in out.output, out.output
    assert os.listdir(tmp_path) == []


def test_rule_covers_every_written_suffix_and_leaves_folders_alone(tmp_path):
    assert {f".{f}" for f in FIGURE_FORMATS} <= set(FILE_SUFFIXES)
    for suffix in FILE_SUFFIXES:
        with pytest.raises(UserError, match="named like a"):
            check_folder_path(tmp_path / f"x{suffix}")
    (tmp_path / "kept.csv").mkdir()   # a folder the user made so: taken
    assert check_folder_path(tmp_path / "kept.csv") == tmp_path / "kept.csv"
    for name in ("out", "run.2026", "v1.5", ".csv"):   # no file suffix: a folder
        assert check_folder_path(tmp_path / name) == tmp_path / name
