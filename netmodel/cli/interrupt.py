"""Ctrl-C (SIGINT) and SIGTERM while a command runs: raised as :class:`Interrupted` where
the process is, so that every clean-up on the way out runs and nothing is left
half-written; :func:`netmodel.cli.main.main` then says so in one line and exits with the
shell's status for the signal (:data:`INTERRUPTED`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

__all__ = ["INTERRUPTED", "Interrupted", "interruption", "say_interrupted", "stop_on_signals"]


#: Exit status of a command stopped by a signal, as a shell reports one (128 + the signal's
#: number): 130 for SIGINT (Ctrl-C), 143 for SIGTERM (a scheduler, ``kill``).
INTERRUPTED = {"SIGINT": 130, "SIGTERM": 143}


def say_interrupted(name: str) -> int:
    """Say on stderr, in one line, that the command stopped on signal ``name``
    (``"SIGINT"``, ``"SIGTERM"``) and that nothing is half-written; the exit status for it
    (:data:`INTERRUPTED`). A stderr that cannot be written is passed over.

    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as said:
    ...     status = say_interrupted("SIGTERM")
    >>> status, said.getvalue()
    (143, 'interrupted by SIGTERM: stopped, nothing half-written (exit status 143)\\n')
    """
    import sys

    with suppress(Exception):
        sys.stderr.write(f"interrupted by {name}: stopped, nothing half-written "
                         f"(exit status {INTERRUPTED[name]})\n")
        sys.stderr.flush()
    return INTERRUPTED[name]


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (:func:`stop_on_signals`): raised where the process is, so
    that every ``finally`` and ``except BaseException`` on the way out runs (a temporary
    file or staging folder of :mod:`compute.outputs` removed), then
    :func:`netmodel.cli.main.main` says so in one line and exits :data:`INTERRUPTED`. Not a KeyboardInterrupt, which click turns
    into ``Aborted!`` and exit 1."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


#: The signal :func:`stop_on_signals` last raised as :class:`Interrupted` (its name), while
#: the command it guards runs: :func:`interruption` reads it where a library replaced the
#: Interrupted by an error of its own. Emptied as each command starts.
_RAISED: list[str] = []


def _send_later(signum: int) -> None:
    """Send ``signum`` to this process in 10 ms (from a thread of its own)."""
    import time

    time.sleep(0.01)
    os.kill(os.getpid(), signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the command runs, SIGINT and SIGTERM raise :class:`Interrupted` (SIGTERM's
    default killed the process where it stood: a temporary file or staging folder was left
    beside the output, removed only by the next run into the same folder). The first one
    only: from then on both are the system's default again, so a second Ctrl-C stops a
    process whose cleanup hangs. The handlers are put back after. Only in the main thread
    (where Python runs signal handlers): elsewhere nothing changes.

    A signal the process was started ignoring stays ignored, as
    :func:`netmodel.cli.entry.run` leaves it while the command line is imported and as
    Python leaves SIGINT (no KeyboardInterrupt): a shell without job control starts a
    background job (``netmodel sweep ... &`` in a script) with SIGINT ignored, so that a
    Ctrl-C at the terminal stops the foreground command, not the jobs behind it (SIGTERM,
    ``kill``'s, still stops them). Before, such a job ignored a SIGINT sent while it
    imported (its first 0.1-0.5 s) and stopped on one sent after: the same signal stopped
    it or not by when it came.

    A signal may come where Python drops what is raised (a weakref callback, such as
    importlib's module locks', or a ``__del__``): Python printed ``Exception ignored in
    ...`` with a traceback, and the command ran on, the signal spent. There
    (``sys.unraisablehook``) the handlers are put back and the signal sent again from
    another thread, to come where it stops the command."""
    import _thread
    import signal
    import sys
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = tuple(s for s in (signal.SIGINT, signal.SIGTERM)   # not one ignored from the start
                    if signal.getsignal(s) is not signal.SIG_IGN)

    def stop(signum: int, frame: object) -> None:
        for s in signals:
            signal.signal(s, signal.SIG_DFL)
        _RAISED[:] = [signal.Signals(signum).name]
        raise Interrupted(_RAISED[0])

    def dropped(info: Any) -> None:
        if not isinstance(info.exc_value, Interrupted):
            return hook(info)
        for s in signals:
            signal.signal(s, stop)
        # from a bare thread, a moment later: threading.Thread.start waits for its thread,
        # and the signal came there, in this hook, dropped again
        _thread.start_new_thread(_send_later, (signal.Signals[info.exc_value.name],))
        return None

    _RAISED.clear()
    given = {s: signal.signal(s, stop) for s in signals}
    hook, sys.unraisablehook = sys.unraisablehook, dropped
    try:
        yield
    finally:
        for s, handler in given.items():
            signal.signal(s, handler)
        sys.unraisablehook = hook


def interruption(exc: BaseException) -> Interrupted | None:
    """The :class:`Interrupted` that ``exc`` is or arose from (its ``__cause__`` or
    ``__context__``, at any depth), or None. A signal that comes while a C extension
    initialises (numpy, matplotlib imported on first use) reaches the command as
    ``ImportError: initialization failed``, the interruption its context: a traceback and
    exit status 1 where the user pressed Ctrl-C.

    Where no link leads to it, the signal :func:`stop_on_signals` raised during the last
    command, if any: an error raised because of it, the Interrupted replaced rather than
    chained. numpy does so where the signal comes as it compares two structured arrays
    (``np.unique(..., axis=0)`` does): ``TypeError: Cannot compare structured arrays
    unless they have a common dtype``, a traceback where ``availability`` was stopped.

    >>> try:
    ...     try:
    ...         raise Interrupted("SIGINT")
    ...     except Interrupted:
    ...         raise ImportError("initialization failed")
    ... except ImportError as exc:
    ...     interruption(exc).name
    'SIGINT'
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Interrupted):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return Interrupted(_RAISED[0]) if _RAISED else None
