"""An output folder that is the folder the command runs in is refused, not replaced.

netmodel writes an output folder whole: it stages the files in a new folder beside it and
renames that over the old one (compute.outputs). Given the current folder (``-o .``,
``--out .`` or the folder's own path), empty or an earlier output, it replaced the folder
the shell stood in: the files went to a new folder of the same path while the shell was
left in the deleted old one (``ls`` showed nothing, ``touch f`` failed with 'No such file or
directory', and the next ``-o .`` read 'is a symbolic link that loops'). Now it is refused
in one line, exit 2, the folder untouched (the same inode, still empty).
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.output_paths import check_folder_path
from compute.outputs import write_outputs
from netmodel.cli.main import cli

VIDUR = ["costs", "--fabric", "single-switch:n=8", "--sizes", "1MiB", "--groups", "2",
         "--format", "vidur"]


@pytest.fixture
def here(tmp_path, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("name", [".", "./", "work", "abs"])
def test_the_current_folder_is_refused(here, name):
    target = str(here) if name == "abs" else ("../work" if name == "work" else name)
    inode = os.stat(here).st_ino
    r = CliRunner().invoke(cli, [*VIDUR, "-o", target])
    assert r.exit_code == 2, r.output
    assert "is the folder this command runs in" in r.output and "Traceback" not in r.output
    assert os.stat(here).st_ino == inode and os.listdir(here) == []
    assert os.getcwd() == str(here)


def test_an_earlier_output_as_the_current_folder_is_refused(here):
    # an earlier output, then run from inside it: still refused, the files kept
    out = here / "v"
    write_outputs(out, {"a.csv": b"x\n"})
    os.chdir(out)
    inode = os.stat(out).st_ino
    with pytest.raises(UserError, match="is the folder this command runs in"):
        check_folder_path(".")
    with pytest.raises(UserError, match="is the folder this command runs in"):
        write_outputs(".", {"b.csv": b"y\n"})
    assert os.stat(out).st_ino == inode
    assert sorted(os.listdir(out)) == ["a.csv", "netmodel-manifest.json"]


def test_a_folder_below_the_current_one_is_still_written(here):
    r = CliRunner().invoke(cli, [*VIDUR, "-o", "v/"])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(here / "v")) == ["all_reduce.csv", "netmodel-manifest.json"]
