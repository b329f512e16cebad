"""The ``netmodel`` program's first step (``python -m netmodel`` and the ``netmodel``
script): the command line is imported with SIGINT and SIGTERM noted, not raised, then run.

While :mod:`netmodel.cli.main` and what it needs are imported (0.1-0.3 s), no handler of
the command's is in place yet (:func:`~netmodel.cli.interrupt.stop_on_signals` is put in
place when the command runs): a Ctrl-C there raised KeyboardInterrupt inside an import, a
traceback of 6-29 lines and exit status 1 or -2 (Python killing itself by the signal), and
SIGTERM killed the process. Now a signal there is noted; once the imports are done the
program stops with the command's own line (``interrupted by SIGINT: stopped, nothing
half-written (exit status 130)``), nothing having been written. A signal the process was
started ignoring (a background job of a shell without job control) is left ignored here.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import NoReturn

__all__ = ["leave", "run"]


def run() -> None:
    """Import the command line with SIGINT and SIGTERM noted, then stop with the command's
    line if one came (its status, 130 or 143), else run :func:`netmodel.cli.main.main`
    and :func:`leave` with its status."""
    came: list[int] = []
    kept = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                kept[sig] = signal.signal(sig, lambda signum, _frame: came.append(signum))
    try:
        from netmodel.cli.interrupt import say_interrupted
        from netmodel.cli.main import main
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)
    if came:
        raise SystemExit(say_interrupted(signal.Signals(came[0]).name))
    try:
        main()
    except SystemExit as done:
        leave(done.code)


def leave(code: object) -> NoReturn:
    """End the process with the status of a command that is done (``code``: its
    SystemExit's), skipping the interpreter's teardown: its non-daemon threads joined and
    its ``atexit`` functions run (matplotlib's temporary folder removed, a Dask cluster
    closed) as at any exit, its streams flushed, then ``os._exit``. Every output is
    written whole by then; what the teardown did besides is free each object the command
    made, one by one (0.1-0.6 s after ``study lite-gpu`` or ``availability``, the larger
    the heap the longer), which the system does at once.

    In that time SIGINT and SIGTERM were the system's defaults again, so a signal there
    killed a process whose work was done (exit status -2, no line: 6 of 30 SIGINTs sent in
    the last seconds of ``availability`` under load); now both are ignored while it
    leaves (a few milliseconds). Status as Python's own exit gives it: None 0, an int
    itself, anything else written on stderr and 1."""
    import atexit
    import os
    import sys

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:
        with contextlib.suppress(Exception):
            sys.stderr.write(f"{code}\n")
        status = 1
    shutdown = getattr(threading, "_shutdown", None)   # what the teardown would call first
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)
