"""netmodel.cli.entry.leave: the process ends with the command's status once it is done,
its threads joined, its atexit functions run and its streams flushed as at any exit, the
interpreter's teardown skipped (0.1-0.6 s of freeing objects one by one after a large
command), and a signal in that time ignored (before: SIGINT at the system's default there,
exit status -2 with no line for a command whose work was done). Each case in a child
process of its own: leave ends the process."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.netmodel.cli_helpers import ROOT


def _defaults() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def _leave(code: str, before: str = "") -> subprocess.CompletedProcess:
    text = f"from netmodel.cli.entry import leave\n{before}\nleave({code})\n"
    return subprocess.run([sys.executable, "-c", text], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, preexec_fn=_defaults)


@pytest.mark.parametrize("code, status, err", [
    ("None", 0, ""), ("0", 0, ""), ("2", 2, ""), ("130", 130, ""), ("256 + 3", 3, ""),
    ("'no such thing'", 1, "no such thing\n")])
def test_the_status_is_pythons_for_the_same_exit(code, status, err):
    out = _leave(code)
    assert (out.returncode, out.stderr, out.stdout) == (status, err, "")
    # the same SystemExit through Python's own teardown
    same = subprocess.run([sys.executable, "-c", f"raise SystemExit({code})"],
                          capture_output=True, text=True, timeout=60)
    assert (same.returncode, same.stderr) == (status, err)


def test_threads_joined_atexit_run_streams_flushed(tmp_path):
    mark = tmp_path / "late"
    out = _leave("0", f"""
import atexit, sys, threading, time
def late():
    time.sleep(0.2)
    open({str(mark)!r}, "w").write("thread")
threading.Thread(target=late).start()
atexit.register(lambda: sys.stdout.write("atexit ran"))
sys.stdout.write("no newline, buffered")
sys.stderr.write("err, buffered")
""")
    assert out.returncode == 0
    assert mark.read_text() == "thread"   # the non-daemon thread ran to its end
    assert out.stdout == "no newline, bufferedatexit ran"
    assert out.stderr == "err, buffered"


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_while_leaving_is_ignored(sig):
    """The signal comes as an atexit function runs (deterministic: the process sends it
    to itself there): the command's own status, no traceback."""
    out = _leave("3", f"""
import atexit, os, signal
atexit.register(lambda: os.kill(os.getpid(), signal.{sig}))
""")
    assert (out.returncode, out.stderr) == (3, "")


def test_a_command_ends_by_leave_with_its_output_and_status(tmp_path):
    """python -m netmodel: a command's output and status (2 for a refusal) as before."""
    ok = subprocess.run([sys.executable, "-m", "netmodel", "hardware", "H100-SXM"],
                        capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert ok.returncode == 0 and "H100-SXM" in ok.stdout and ok.stderr == ""
    bad = subprocess.run([sys.executable, "-m", "netmodel", "hardware", "--nope"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error: No such option '--nope'")
