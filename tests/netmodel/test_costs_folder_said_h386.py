"""``netmodel costs --format vidur -o DIR/`` names the folder it wrote with one separator.

It printed ``wrote 16 rows to vidur// (...)``: the folder as typed, trailing slash and all,
with another slash after it.
"""

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli

ARGS = ["costs", "--fabric", "single-switch:n=8", "--ops", "all-reduce,send-recv", "--sizes",
        "1MiB:1GiB:8", "--groups", "2,8", "--format", "vidur", "-o"]


@pytest.mark.parametrize("typed", ["vidur", "vidur/", "vidur//"])
def test_folder_named_once(tmp_path, monkeypatch, typed):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, [*ARGS, typed])
    assert r.exit_code == 0, r.output
    # 2 ops x 2 groups x 4 sizes (1, 8, 64, 512 MiB: a x8 ladder from 1 MiB, below 1 GiB),
    # one file an op
    assert r.output.splitlines()[-1] == "wrote 16 rows to vidur/ (all_reduce.csv, send_recv.csv)"
    assert sorted(p.name for p in (tmp_path / "vidur").glob("*.csv")) == [
        "all_reduce.csv", "send_recv.csv"]
