"""A relative output folder in a folder that no longer exists says so.

With the shell's folder deleted (or replaced whole, as an output folder once was) a
relative ``--out``/``-o`` cannot be resolved: ``os.getcwd`` fails. check_folder_path read
that failure as a loop of links: 'output folder 'v' is a symbolic link that loops (it
resolves to no folder)', about a path that is no link at all. Now the line names the
cause; a real loop keeps its own message.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.output_paths import check_folder_path
from netmodel.cli.main import cli


@pytest.fixture
def gone(tmp_path, monkeypatch):
    folder = tmp_path / "gone"
    folder.mkdir()
    monkeypatch.chdir(folder)
    folder.rmdir()                      # the shell's folder deleted under it
    return folder


def test_a_deleted_current_folder_is_named(gone):
    with pytest.raises(UserError, match="runs in, which no longer exists") as e:
        check_folder_path("v")
    assert "symbolic link" not in str(e.value)
    r = CliRunner().invoke(cli, ["costs", "--fabric", "single-switch:n=8", "--sizes", "1MiB",
                                 "--groups", "2", "--format", "vidur", "-o", "v"])
    assert r.exit_code == 2 and "runs in, which no longer exists" in r.output, r.output
    assert not gone.exists()


def test_a_real_loop_keeps_its_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    with pytest.raises(UserError, match="symbolic link that loops"):
        check_folder_path("a/out")
