"""A reader that closes netmodel's output early (``netmodel hardware | head -1``) changes
nothing but what it reads: the exit status and stderr are those of a run whose output was
read to the end, on every run, and the files a command writes are written whole
(docs/units-and-errors.md, "Exit statuses"; ``netmodel.cli.main.main``).

Each command is run as ``head -1`` runs it: its stdout a pipe, one line read, the pipe
closed. Before, click exited 1 where a write found the reader gone and 0 where the reader
left after the last write, so ``netmodel hardware | head -1`` exited 0 or 1 from run to run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "netmodel"]

#: runs of each command with the pipe closed after its first line (FEW: of compare's
#: longer runs)
RUNS, FEW = 5, 3

#: compare's Llama-3-70B decode on one H100 DGX under a 5 ms TBT: nothing feasible (the
#: fastest configuration takes 6.5 ms; docs/units-and-errors.md), so exit status 3
NOTHING_FEASIBLE = ["compare", "--models", "Llama-3-70B", "--scenarios", "h100-dgx",
                    "--phases", "decode", "--tbt", "5ms"]


def _read_all(args: list[str]) -> tuple[int, str, str]:
    r = subprocess.run(COMMAND + args, cwd=ROOT, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def _read_first_line(args: list[str], merged: bool = False) -> tuple[int, str, str]:
    """Status, first line and stderr of ``args`` whose reader closes stdout after one
    line (``merged``: stderr goes into the same pipe, as ``2>&1 | head -1``)."""
    proc = subprocess.Popen(COMMAND + args, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merged else subprocess.PIPE,
                            text=True)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = "" if merged else proc.stderr.read()
    if not merged:
        proc.stderr.close()
    return proc.wait(timeout=300), first, err


def _clean(stderr: str) -> None:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr \
        and "BrokenPipe" not in stderr, stderr


@pytest.mark.parametrize("args, runs", [
    (["hardware"], RUNS),                # a table, a line at a time
    (["models"], RUNS),
    (["models", "--json"], RUNS),        # one JSON document
    # a table of 3 x 2,085 sizes (1 KiB to 1 GiB by 1 %): ~300 kB, more than a pipe holds,
    # so every run finds the reader gone (once is enough; each run takes 1-2 s)
    (["costs", "--fabric", "single-switch:n=8", "--sizes", "1KiB:1GiB:1.01",
      "--groups", "2,4,8"], 1),
])
def test_closed_early_exits_as_read_whole(args, runs):
    status, out, err = _read_all(args)
    assert (status, err) == (0, "")
    for _ in range(runs):
        got = _read_first_line(args)
        _clean(got[2])
        assert got == (0, out.splitlines(keepends=True)[0], "")


def test_nothing_feasible_keeps_its_status_message_and_files(tmp_path):
    """compare --out writes its files, then prints its table, then says nothing is
    feasible; with the reader gone after the first line the status (3) and the message are
    the same, and the files are those of a run read to the end (its manifest names the
    run, so the others are compared: the tables; --no-plot: the figures, written with them
    before the table, would double each run's time and test nothing more)."""
    status, out, err = _read_all(NOTHING_FEASIBLE + ["--no-plot", "--out",
                                                     str(tmp_path / "whole")])
    assert status == 3 and err.startswith("nothing feasible:")
    whole = {p.name: p.read_bytes() for p in (tmp_path / "whole").iterdir()}
    data = sorted(n for n in whole if not n.startswith("netmodel-manifest"))
    assert {"compare.csv", "compare.json"} <= set(data)
    json.loads(whole["compare.json"])
    for i in range(FEW):
        folder = tmp_path / f"closed{i}"
        got = _read_first_line(NOTHING_FEASIBLE + ["--no-plot", "--out", str(folder)])
        _clean(got[2])
        assert got == (3, out.splitlines(keepends=True)[0], err)
        assert sorted(p.name for p in folder.iterdir()) == sorted(whole)
        assert all((folder / n).read_bytes() == whole[n] for n in data)


def test_closed_early_with_stderr_in_the_pipe():
    """``2>&1 | head -1``: the table and the 'nothing feasible' line both find the reader
    gone; the status is still 3."""
    for _ in range(FEW):
        assert _read_first_line(NOTHING_FEASIBLE, merged=True)[0] == 3
