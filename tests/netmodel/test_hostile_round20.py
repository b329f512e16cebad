"""Hostile round 20 (scripts/hostile_round20.py): a command that writes, stopped, raced or
out of room, run as a user runs it (``python -m netmodel`` in a child process).

Found wrong, each checked here:

(a) Ctrl-C printed ``Aborted!`` with exit status 1, the status of a bug; SIGTERM killed the
process where it stood (status -15), a temporary file or staging folder left beside the
output until the next run into it. Now both raise in the process
(netmodel.cli.interrupt.Interrupted): every clean-up on the way out runs, one line says which
signal, exit status 130 (SIGINT) or 143 (SIGTERM).

(b) Two runs into one new ``--out`` folder at once: the one that renamed its staging
folder second failed with ``error: cannot write output folder ...: Directory not empty``,
exit 2, for a command line that was right. Now it puts its output in place of the other's,
as a run into an existing output does.

(c) An output with no room (a full disk, a file over RLIMIT_FSIZE) exited 2, a user error,
where docs/units-and-errors.md gives 1 (nothing in the command line was wrong); figures
drawn in worker processes said only ``could not write every figure ... NETMODEL_JOBS=1
shows why``. Now exit 1 and ``error: cannot write ...: File too large`` (the reason).

And a sample of what held: a write stopped over an earlier output leaves it whole, the
refusal of two-batch overlap under attention DP names ``--attention-dp``.

(d) A signal handled where Python drops what is raised (a weakref callback) was lost,
with a traceback on stderr; now it is sent again.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import io
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.netmodel.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "hostile_round20.py"


@pytest.fixture(scope="module")
def h20():
    spec = importlib.util.spec_from_file_location("hostile_round20", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def complete(h20, tmp_path_factory):
    """A complete run of COMPARE (a child process), made once: its output folder's files.
    The tests that need an earlier output write these in place (as the script's own
    stop_case does from its Reference) instead of each running COMPARE again."""
    d = tmp_path_factory.mktemp("complete")
    rc, err = h20.finish(h20.child(COMPARE, d))
    assert rc == 0, err
    return h20.contents(d / "out")


def _earlier(d: Path, files: dict[str, bytes]) -> None:
    """A complete run's output written at ``d / 'out'``."""
    (d / "out").mkdir()
    for name, data in files.items():
        (d / "out" / name).write_bytes(data)


@pytest.fixture(scope="module")
def fonts(h20):
    """matplotlib's font cache built once for the module's children."""
    h20.font_cache()


COMPARE = ["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch",
           "8", "--no-plot", "-q", "--out", "out"]
EXPORT = ["topology", "export", "ring:n=400", "-o", "f.json"]


def _stopped_at(h20, d: Path, argv: list[str], point: str, name: str):
    fn, after = h20.POINTS[point]
    env = {"HOOK_POINT": fn, "HOOK_SIGNAL": str(int(getattr(signal, name)))}
    if after:
        env["HOOK_AFTER"] = "1"
    return h20.finish(h20.child(argv, d, env, hooked=True))


def _one_line(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip()]


@pytest.mark.skipif(sys.platform != "linux", reason="signals and renameat2 as on Linux")
def test_sigterm_mid_write_leaves_the_earlier_output_whole_and_nothing_beside(h20, complete,
                                                                               tmp_path):
    """SIGTERM with the new files staged: before, the process died there (-15), its staging
    folder left beside the output; now 143, one line, the earlier output as it was, the
    folder holding it alone."""
    _earlier(tmp_path, complete)
    earlier = h20.contents(tmp_path / "out")
    assert set(earlier) == {"compare.csv", "compare.json", "netmodel-manifest.json"}
    rc, err = _stopped_at(h20, tmp_path, COMPARE, "staged", "SIGTERM")
    assert (rc, _one_line(err)) == (
        143, ["interrupted by SIGTERM: stopped, nothing half-written (exit status 143)"])
    assert h20.contents(tmp_path / "out") == earlier
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_ctrl_c_mid_file_write_is_130_and_leaves_no_file(h20, tmp_path):
    """Ctrl-C with a file's temporary written, before it is moved into place: before,
    ``Aborted!`` and exit 1; now 130, one line, no file and no temporary."""
    rc, err = _stopped_at(h20, tmp_path, EXPORT, "staged", "SIGINT")
    assert (rc, _one_line(err)) == (
        130, ["interrupted by SIGINT: stopped, nothing half-written (exit status 130)"])
    assert os.listdir(tmp_path) == []


def test_ctrl_c_right_after_the_swap_keeps_the_new_output_whole(h20, complete, tmp_path):
    """The signal just after the new folder took the old one's place: the new output stays,
    whole (the files of a complete run, each as its manifest records), the old one gone."""
    _earlier(tmp_path, complete)
    ref = h20.contents(tmp_path / "out")
    rc, err = _stopped_at(h20, tmp_path, COMPARE, "exchanged", "SIGINT")
    assert rc == 130 and len(_one_line(err)) == 1
    assert h20.whole(h20.contents(tmp_path / "out"), ref) is None
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_two_runs_renaming_into_one_new_folder_at_once_both_succeed(h20, tmp_path):
    """Both runs held where each found no folder and is about to rename its own there:
    before, the second exited 2 ('Directory not empty'); now both exit 0 and the folder is
    one run's whole output: max batch 8's or 16's, each file as that run's manifest
    records (a mix would not be)."""
    other = [*COMPARE]
    other[other.index("--max-batch") + 1] = "16"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    d = tmp_path / "case"
    d.mkdir()
    env = {"HOOK_POINT": h20.RACED, "HOOK_BARRIER": str(barrier), "HOOK_PEERS": "2"}
    runs = [h20.child(argv, d, env, hooked=True) for argv in (COMPARE, other)]
    assert [h20.finish(p) for p in runs] == [(0, ""), (0, "")]
    assert len(os.listdir(barrier)) == 2   # both reached the rename
    found = h20.contents(d / "out")
    assert set(found) == {"compare.csv", "compare.json", "netmodel-manifest.json"}
    manifest = json.loads(found["netmodel-manifest.json"])
    for name in ("compare.csv", "compare.json"):
        assert manifest["files"][name]["sha256"] == hashlib.sha256(found[name]).hexdigest()
    batch = manifest["run"]["max-batch"]
    assert batch in ("8", "16")
    rows = list(csv.DictReader(io.StringIO(found["compare.csv"].decode())))
    assert [r["batch"] for r in rows] == [batch, batch]   # the table of the run it names
    assert sorted(os.listdir(d)) == ["out"]


@pytest.mark.parametrize("argv, target", [
    (EXPORT, "f.json"),
    (["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
      "-q", "--out", "out"], "out"),   # its figures drawn by worker processes
])
def test_an_output_past_the_file_size_limit_is_exit_1_naming_why(h20, fonts, tmp_path, argv,
                                                                  target):
    """RLIMIT_FSIZE 16 KiB (the fabric file and the figures are larger): before, exit 2 (and
    for figures 'could not write every figure ... NETMODEL_JOBS=1 shows why'); now exit 1,
    one line with the reason, nothing written."""
    p = h20.child(argv, tmp_path, {"NETMODEL_JOBS": "2"},
                  limits={resource.RLIMIT_FSIZE: 16 << 10})
    rc, err = h20.finish(p)
    lines = _one_line(err)
    assert rc == 1, err
    flag = "--output" if argv is EXPORT else "--out"   # named as the checks name it
    assert len(lines) == 1 and lines[0].startswith(f"error: {flag} {target!r}: cannot write ")
    assert lines[0].endswith(": File too large")
    assert os.listdir(tmp_path) == []


def test_two_batch_overlap_under_attention_dp_refusal_names_the_flag():
    """Decode batch 8 over 8 attention DP ranks: one sequence a rank, no two halves."""
    r = run_cli(["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8",
                 "--attention-dp", "8", "--batch", "8", "--phase", "decode",
                 "--two-batch-overlap"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "error: two-batch overlap needs every attention DP rank's decode batch split in two, "
        "at least 2 sequences a rank; got batch 8 over --attention-dp 8; allowed: a batch of "
        "at least 16"]


def test_the_exit_statuses_are_the_shells():
    from netmodel.cli.interrupt import INTERRUPTED

    assert INTERRUPTED == {"SIGINT": 128 + signal.SIGINT, "SIGTERM": 128 + signal.SIGTERM}


DROPPED = r"""
import os, signal, sys, time, weakref
from netmodel.cli.interrupt import stop_on_signals
class A: pass
a = A()
def callback(ref):   # Python drops what a weakref callback raises
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(3): pass
w = weakref.ref(a, callback)
t0 = time.monotonic()
try:
    with stop_on_signals():
        del a
        time.sleep(5)
    print("ran on")
except BaseException as e:
    print(type(e).__name__, e, time.monotonic() - t0 < 4)
"""


def test_a_signal_raised_where_python_drops_it_still_stops_the_command():
    """SIGTERM handled inside a weakref callback (importlib's module locks have them: a
    Ctrl-C during an import landed there): before, 'Exception ignored in ...' and a
    traceback on stderr, and the command ran on, the signal spent; now it is sent again
    and stops the command."""
    r = subprocess.run([sys.executable, "-c", DROPPED], capture_output=True, text=True,
                       timeout=30, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (r.stdout.strip(), r.stderr) == ("Interrupted SIGTERM True", "")
