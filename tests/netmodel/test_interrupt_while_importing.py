"""A signal while the program imports its command line (netmodel.cli.entry.run), or while
main() readies matplotlib's folder before the command runs, stops it with the command's own
line and status, no traceback. Before: KeyboardInterrupt raised inside an import, a
traceback of 6-29 lines and exit status 1 or -2, and SIGTERM killed the process (-15).
Deterministic: the process sends the signal to itself at that point (a hook on the import
of netmodel.cli.main, or a stand-in for matplotlib's folder), in a child of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from netmodel.cli import main as cli_main
from tests.netmodel.cli_helpers import ROOT

#: The child: sends ``SIG`` to itself as netmodel.cli.main is imported, then runs ``RUN``.
CHILD = """
import builtins, os, signal, sys
real = builtins.__import__
def hooked(name, *args, **kw):
    if name == "netmodel.cli.main" and not getattr(hooked, "sent", False):
        hooked.sent = True
        os.kill(os.getpid(), signal.{sig})
    return real(name, *args, **kw)
builtins.__import__ = hooked
sys.argv = ["netmodel", "--help"]
{run}
"""


def _defaults() -> None:
    """SIGINT and SIGTERM at their defaults in the child, as a terminal starts a command
    (the test runner may itself have been started with SIGINT ignored, a background job
    of a shell without job control, and its children would keep ignoring it)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def _ignoring() -> None:
    """SIGINT ignored in the child, as a shell without job control starts a background job
    (``netmodel ... &`` in a script); SIGTERM at its default."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _child(sig: str, run: str, start=_defaults) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD.format(sig=sig, run=run)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          preexec_fn=start)


@pytest.fixture
def ctrl_c_default():
    """SIGINT raising KeyboardInterrupt in this process for the test, as at a terminal,
    whatever the runner was started with; put back after."""
    given = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, given)


@pytest.mark.parametrize("sig, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_while_importing_stops_with_one_line(sig, status):
    out = _child(sig, "from netmodel.cli.entry import run\nrun()")
    assert out.returncode == status, out.stderr
    assert out.stderr == (f"interrupted by {sig}: stopped, nothing half-written "
                          f"(exit status {status})\n")
    assert out.stdout == ""   # the command (--help) never ran


def test_importing_main_itself_had_no_such_guard():
    """The same signal with netmodel.cli.main imported as the old entry point did: Python's
    own KeyboardInterrupt, a traceback (what run() guards against)."""
    out = _child("SIGINT", "from netmodel.cli.main import main\nmain()")
    assert out.returncode != 130 and "KeyboardInterrupt" in out.stderr


def test_matplotlib_folder_under_the_commands_handlers(monkeypatch, capsys, ctrl_c_default):
    """main() readies matplotlib's folder (its check imports tempfile, 0.01-0.05 s at a
    cold start) once the command's handlers are in place: a Ctrl-C there is the command's
    line and 130, not a KeyboardInterrupt."""
    def ctrl_c() -> None:
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(cli_main, "matplotlib_folder", ctrl_c)
    with pytest.raises(SystemExit) as stopped:
        cli_main.main(["--help"])
    assert stopped.value.code == 130
    err = capsys.readouterr().err
    assert err == "interrupted by SIGINT: stopped, nothing half-written (exit status 130)\n"


def test_a_sigint_ignored_from_the_start_is_ignored_while_importing():
    """Started with SIGINT ignored (a background job of a script), a SIGINT while the
    command line is imported is ignored, as Python ignores it: the command runs (its help,
    exit 0). SIGTERM is not ignored there and still stops it."""
    out = _child("SIGINT", "from netmodel.cli.entry import run\nrun()", start=_ignoring)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.startswith("Usage: netmodel")
    out = _child("SIGTERM", "from netmodel.cli.entry import run\nrun()", start=_ignoring)
    assert out.returncode == 143 and out.stdout == ""


def test_a_sigint_ignored_from_the_start_is_ignored_while_the_command_runs(monkeypatch,
                                                                          capsys):
    """The same once the command's handlers are in place (where matplotlib's folder is
    readied): before, SIGINT ignored while importing stopped the command from there on
    (exit 130), so one signal stopped a background job or not by when it came."""
    def ctrl_c() -> None:
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(cli_main, "matplotlib_folder", ctrl_c)
    given = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(SystemExit) as done:
            cli_main.main(["--help"])
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN   # left as it was
    finally:
        signal.signal(signal.SIGINT, given)
    assert done.value.code == 0
    said = capsys.readouterr()
    assert said.err == "" and said.out.startswith("Usage: netmodel")
