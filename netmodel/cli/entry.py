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

import signal
import threading

__all__ = ["run"]


def run() -> None:
    """Import the command line with SIGINT and SIGTERM noted, then stop with the command's
    line if one came (its status, 130 or 143), else run :func:`netmodel.cli.main.main`."""
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
    main()
