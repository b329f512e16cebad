"""An output file that is one of the command's own inputs is refused
(scripts/hostile_round18.py). Before: ``costs --fabric f.json --format json -o f.json``
printed 'wrote 1 rows to f.json' and the saved fabric was gone, a cost table in its place
(likewise through a link to it, topology export of a file onto itself; calibrate ``--base
q.toml -o q.toml`` names both flags). Now one line naming the file (and the name it was read by), exit 2, the
input as it was. The command line notes each file a command reads
(:func:`compute.config_files.noting_reads`); the library alone notes nothing, so a program
that reads a fabric and writes it back is not refused."""

from __future__ import annotations

import os

import pytest

from compute.config_files import noting_reads, read_as_input, read_bytes
from compute.errors import UserError
from compute.outputs import atomic_write
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

CSV = ("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
       "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368\n"
       "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.1326\n"
       "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298\n"
       "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386\n")


@pytest.fixture
def folder(tmp_path):
    assert run_cli(["topology", "export", "ring:n=4", "-o", tmp_path / "f.json"]).exit_code == 0
    os.symlink("f.json", tmp_path / "lf.json")
    (tmp_path / "m.csv").write_text(CSV)
    (tmp_path / "q.toml").write_text(
        (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text())
    return tmp_path


# costs' refusal of its output names --output (40dbf22b: the output's checks and its write
# name their flag); topology export's is of its input, read first, the fabric file
@pytest.mark.parametrize("args, what, read", [
    (["costs", "--fabric", "f.json", "--sizes", "1MiB", "--groups", "4", "--format", "json",
      "-o", "f.json"], "--output 'f.json': output file", None),
    (["costs", "--fabric", "lf.json", "--sizes", "1MiB", "--groups", "4", "--format", "json",
      "-o", "f.json"], "--output 'f.json': output file", "lf.json"),
    (["topology", "export", "f.json", "-o", "f.json"], "fabric file", None),
])
def test_an_input_is_not_replaced(folder, args, what, read):
    before = {p.name: p.read_bytes() for p in folder.iterdir() if not p.is_symlink()}
    line = one_line_error(run_cli(args, cwd=folder))
    target = args[-1]
    shown = "" if read is None else f"{read!r}, "
    assert line == (f"error: {what} {target!r} is {shown}a file this command reads; its output "
                    "would replace it: give another path")
    assert {p.name: p.read_bytes() for p in folder.iterdir() if not p.is_symlink()} == before


def test_calibrate_over_its_base_names_both_flags(folder):
    """Refused before the fit, naming --out and --base (tests/netmodel/
    test_hostile_round28b.py): it said 'profile file 'q.toml' is a file this command
    reads' once the fit was done."""
    before = (folder / "q.toml").read_bytes()
    line = one_line_error(run_cli(["calibrate", "--measurements", "m.csv", "--base", "q.toml",
                                   "-o", "q.toml"], cwd=folder))
    assert line == ("error: --out 'q.toml' is the file --base 'q.toml' reads; the profile "
                    "written would replace it: give another path")
    assert (folder / "q.toml").read_bytes() == before


def test_another_output_of_the_same_input_is_written(folder):
    r = run_cli(["topology", "export", "f.json", "-o", "g.json"], cwd=folder)
    assert r.exit_code == 0, r.output
    assert (folder / "g.json").read_bytes() == (folder / "f.json").read_bytes()
    r = run_cli(["calibrate", "--measurements", "m.csv", "--base", "q.toml", "-o", "r.toml"],
                cwd=folder)
    assert r.exit_code == 0, r.output


def test_the_library_notes_only_inside_a_block(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("{}")
    read_bytes(path, 100)
    atomic_write(path, b"[]")   # outside a block: a program may write back what it read
    assert path.read_bytes() == b"[]"
    with noting_reads() as notes:
        read_bytes(path, 100)
        with noting_reads() as inner:   # a block inside notes into the outer one
            assert inner is notes
        assert read_as_input(path) == str(path)
        with pytest.raises(UserError, match="is a file this command reads"):
            atomic_write(path, b"{}")
    assert path.read_bytes() == b"[]" and read_as_input(path) is None
