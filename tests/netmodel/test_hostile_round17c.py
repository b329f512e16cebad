"""Hostile input, round 17c (netmodel): the scenario-file cases of /tmp/h17_files.py.
``compare --show FILE`` printed a scenario file back without building its fabric: a
[fabric] value its builder refuses (leaves = -1, leaves = "x", bandwidth = "x",
gpu = true) was printed as if valid, while ``--scenarios FILE`` refuses it. Now --show
builds the fabric and refuses in the builder's one line, exit 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from tests.netmodel.fabric_helpers import HIER_OS2


@pytest.mark.parametrize("line, message", [
    ("leaves = -1", "error: leaf-spine: leaves must be an integer >= 1, got -1\n"),
    ('leaves = "x"', "error: leaf-spine: leaves must be an integer, got 'x'\n"),
    ('bandwidth = "x"', "error: leaf-spine: bandwidth 'x' is not a number with a unit "),
    ("latency = -1", "error: leaf-spine: latency"),
])
def test_show_refuses_a_fabric_value_its_builder_refuses(tmp_path, line, message):
    key = line.split(" = ")[0]
    text = HIER_OS2.replace(next(ln for ln in HIER_OS2.splitlines()
                                 if ln.startswith(f"{key} = ") and "as lite" not in ln), line)
    (tmp_path / "s.toml").write_text(text)
    r = CliRunner().invoke(cli, ["compare", "--show", str(tmp_path / "s.toml")])
    assert r.exit_code == 2, r.output
    # the file named first (h244: the builder's words alone did not say which file)
    message = message.replace("error: ", f"error: {tmp_path / 's.toml'}: [fabric]: ", 1)
    assert r.output.startswith(message) and r.output.count("\n") == 1, r.output


def test_show_prints_a_valid_file_as_read(tmp_path):
    (tmp_path / "s.toml").write_text(HIER_OS2)
    r = CliRunner().invoke(cli, ["compare", "--show", str(tmp_path / "s.toml")])
    assert r.exit_code == 0, r.output
    assert 'leaves = 8' in r.output and 'builder = "leaf-spine"' in r.output
    assert 'latency = "330ns"' in r.output
