"""A standard output that cannot be written (a full disk: ``netmodel hardware > /dev/full``;
an I/O error; a file over its size limit) gives one ``error:`` line on stderr naming what
failed and why, exit status 1, no traceback, and the files the command writes whole
(docs/units-and-errors.md, "Exit statuses"; ``netmodel.cli.main.main``).

Before, the first failed write raised: a traceback of 30 lines ending in ``OSError: [Errno
28] No space left on device``, status 1. A reader that closes the pipe (EPIPE) is not a
failure: tests/netmodel/test_closed_pipe_h412.py.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "netmodel"]
FULL = "/dev/full"
LINE = "error: cannot write the output to standard output: {}\n"
#: os.strerror of ENOSPC and EFBIG on Linux (glibc and musl say the same)
NO_SPACE, TOO_LARGE = "No space left on device", "File too large"

needs_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")

#: compare's Llama-3-70B decode on one H100 DGX under a 5 ms TBT: nothing feasible (status
#: 3 read whole; docs/units-and-errors.md); --out writes its files before the table
NOTHING_FEASIBLE = ["compare", "--models", "Llama-3-70B", "--scenarios", "h100-dgx",
                    "--phases", "decode", "--tbt", "5ms"]

#: a table of 3 x 2,085 sizes (1 KiB to 1 GiB by 1 %): ~300 kB, many buffers' worth
LARGE = ["costs", "--fabric", "single-switch:n=8", "--sizes", "1KiB:1GiB:1.01",
         "--groups", "2,4,8"]


def _run(args: list[str], stdout=None, **kw) -> tuple[int, str]:
    """Status and stderr of ``netmodel args`` writing its stdout to ``stdout`` (a path)."""
    with open(stdout or FULL, "wb") as out:
        r = subprocess.run(COMMAND + args, cwd=ROOT, stdout=out, stderr=subprocess.PIPE,
                           text=True, timeout=300, **kw)
    return r.returncode, r.stderr


def _whole(args: list[str]) -> tuple[int, str, str]:
    r = subprocess.run(COMMAND + args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


@needs_full
@pytest.mark.parametrize("args", [
    ["hardware"],          # a small table (1.2 kB), a line at a time
    ["models", "--json"],  # one JSON document (17 kB), one write
    LARGE,
])
def test_full_disk_is_one_line_and_status_1(args):
    status, out, err = _whole(args)
    assert (status, err) == (0, "") and len(out) > 1000
    assert _run(args) == (1, LINE.format(NO_SPACE))


def test_file_over_its_size_limit(tmp_path):
    """EFBIG: stdout a regular file past RLIMIT_FSIZE (Python ignores SIGXFSZ, so the
    write fails rather than the process being killed). The first 4 kB are written, the
    rest is not, and the line says so."""
    limit = 4096
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    if hard != resource.RLIM_INFINITY and hard < limit:
        pytest.skip("file size limit below 4 kB here")
    path = tmp_path / "out.txt"
    got = _run(["models", "--json"], stdout=path,
               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard)))
    assert got == (1, LINE.format(TOO_LARGE))
    assert path.stat().st_size == limit


@needs_full
def test_files_written_before_the_table_are_whole(tmp_path):
    """compare --out writes its folder, then prints the table (lost), then says nothing is
    feasible: the folder is the one a run read whole writes (but the manifest, which names
    the run), the 'nothing feasible' line stays, then the line of the output lost, and
    status 1 (3 promises the tables were printed). --no-plot: the figures are written with
    the tables, before any output; drawing them would double the test's time."""
    status, _, err = _whole(NOTHING_FEASIBLE + ["--no-plot", "--out", str(tmp_path / "whole")])
    assert status == 3 and err.startswith("nothing feasible:") and err.count("\n") == 1
    whole = {p.name: p.read_bytes() for p in (tmp_path / "whole").iterdir()}
    data = sorted(n for n in whole if not n.startswith("netmodel-manifest"))
    assert {"compare.csv", "compare.json"} <= set(data)
    json.loads(whole["compare.json"])
    folder = tmp_path / "full"
    assert _run(NOTHING_FEASIBLE + ["--no-plot", "--out", str(folder)]) == (
        1, err + LINE.format(NO_SPACE))
    assert sorted(p.name for p in folder.iterdir()) == sorted(whole)
    assert all((folder / n).read_bytes() == whole[n] for n in data)


#: a command that prints before it writes its files (none of netmodel's does today), and
#: one whose only output waits in the buffer for the flush at exit
PROBE = """
import sys, click
from netmodel.cli.main import cli, main
from compute.outputs import write_outputs

@cli.command("probe-before")
@click.argument("folder")
def before(folder):
    click.echo("x" * 200_000)
    write_outputs(folder, {"a.txt": b"1" * 100_000, "b.txt": b"2"})
    click.echo("done")

@cli.command("probe-at-exit")
def at_exit():
    sys.stdout.write("held in the buffer until the end\\n")

main(sys.argv[1:])
"""


@needs_full
def test_lost_before_the_files_are_written(tmp_path):
    """The output lost before the files are written: the command still runs to its end,
    so its files are written whole (not some of them, not none)."""
    folder = tmp_path / "out"
    with open(FULL, "wb") as out:
        r = subprocess.run([sys.executable, "-c", PROBE, "probe-before", str(folder)],
                           cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True,
                           timeout=120)
    assert (r.returncode, r.stderr) == (1, LINE.format(NO_SPACE))
    assert (folder / "a.txt").read_bytes() == b"1" * 100_000
    assert (folder / "b.txt").read_bytes() == b"2"


@needs_full
def test_lost_in_the_flush_at_exit():
    """Output held in the buffer fails only when flushed at the end: the same one line,
    nothing 'ignored' at interpreter exit."""
    with open(FULL, "wb") as out:
        r = subprocess.run([sys.executable, "-c", PROBE, "probe-at-exit"], cwd=ROOT,
                           stdout=out, stderr=subprocess.PIPE, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (1, LINE.format(NO_SPACE))


@needs_full
def test_user_error_keeps_its_status_and_line():
    """Nothing reaches stdout: the user error's line and status 2, no line of lost output."""
    status, err = _run(["infer", "--model", "Llama-3-70B", "--gpu", "H100", "--tp", "4",
                        "--batch", "8"])
    assert status == 2 and err.startswith("error: unknown GPU 'H100'") and err.count("\n") == 1


@needs_full
def test_stderr_unwritable_is_status_1_with_the_output_whole():
    """The 'nothing feasible' line cannot be written: status 1 (the run's words lost), its
    table on stdout whole."""
    status, out, _ = _whole(NOTHING_FEASIBLE)
    assert status == 3
    with open(FULL, "wb") as err:
        r = subprocess.run(COMMAND + NOTHING_FEASIBLE, cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=err, text=True, timeout=300)
    assert (r.returncode, r.stdout) == (1, out)
