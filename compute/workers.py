"""Worker processes: how many this machine gives netmodel, and a function run in a forked
child while the caller goes on.

Forked children start with everything the parent has computed (caches of routes, compiled
collectives, grids), so independent parts of a long run can share the work done before
them and run on the machine's other cores. Results come back pickled through a file that
no directory names, and a child ends as soon as its result is written (through a pipe
alone, a result past the pipe's 64 KiB held the child, and its memory, until the parent
asked for it: the study's MoE part, done at 9 s of 19 with 0.47 MB to send, kept its
0.11 GB to the end, where the study's three processes peak together); through the pipe
where the file cannot take it (past ``RLIMIT_FSIZE``, a full disk). A
:class:`~compute.errors.UserError` in the child is raised again in the parent, any other
exception as a RuntimeError carrying the child's traceback. A child ends with its parent
(Linux: ``prctl(PR_SET_PDEATHSIG)``), so a killed run leaves nothing behind.

Without ``os.fork`` (not POSIX) or with ``NETMODEL_JOBS=1``, :func:`in_background` runs
the function at once, here, and hands back its result the same way: the answer never
depends on how many processes computed it.

>>> job = in_background(lambda: 6 * 7)
>>> job.result()
42
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import os
import pickle
import traceback
from collections.abc import Callable
from typing import Any

from compute.errors import UserError

__all__ = ["Background", "die_with", "forks", "in_background", "jobs"]


def jobs() -> int:
    """Processes netmodel may run at once: the CPUs this process may use, at most 4
    (``NETMODEL_JOBS`` overrides; 1 runs everything one after the other, in this process).
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    default = max(1, min(4, cpus))
    if not os.environ.get("NETMODEL_JOBS", "").strip():
        return default
    from compute.limits import setting

    return setting("NETMODEL_JOBS", default, most=999_999)


@functools.cache
def libc() -> ctypes.CDLL | None:
    """The C library, loaded once (None where it cannot be). On Linux the running program's
    own symbols (``dlopen(NULL)``: Python links the C library), as
    ``ctypes.util.find_library("c")`` runs ``ldconfig -p`` in a child process, once in
    every forked worker that asked."""
    import sys

    try:
        name = None if sys.platform.startswith("linux") else ctypes.util.find_library("c")
        return ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None


def die_with(parent: int) -> None:
    """Make this (forked) process end when ``parent`` does, so a killed run leaves no
    worker behind (Linux: ``prctl(PR_SET_PDEATHSIG)``)."""
    import signal

    try:
        libc().prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG
    except AttributeError:  # no C library, or no prctl in it
        pass
    if os.getppid() != parent:  # the parent died before the call took effect
        os._exit(1)


class Background:
    """A function's result, computed in a forked child (or already here); see
    :func:`in_background`."""

    def __init__(self, pid: int | None, pipe: int | None, value: Any = None,
                 file: int | None = None) -> None:
        self._pid, self._fd, self._file, self._value = pid, pipe, file, value
        self._owner = os.getpid()   # a forked copy of this object is not the child's parent

    def cancel(self) -> None:
        """Stop the child if it still runs (its result is dropped); nothing if it is done."""
        if self._stop():
            gc.unfreeze()

    def _close(self) -> None:
        for fd in (self._fd, self._file):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _stop(self) -> bool:
        """Kill and reap the child if it still runs; whether there was one."""
        if self._pid is not None and os.getpid() == self._owner:
            import signal

            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self._pid, 0)
            self._close()
            self._pid = None
            return True
        return False

    def __del__(self) -> None:   # a result never asked for (the caller failed): no orphan
        self._stop()   # (not gc.unfreeze: this may run inside a collection)

    def result(self) -> Any:
        """The function's return value (waits for the child); raises what it raised."""
        if self._pid is None:
            return self._value
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
            status = os.waitstatus_to_exitcode(os.waitpid(self._pid, 0)[1])
            if chunks == [_IN_FILE]:   # the child wrote its result to the file and ended
                chunks = []
                os.lseek(self._file, 0, os.SEEK_SET)   # its writes moved the shared offset
                while chunk := os.read(self._file, 1 << 20):
                    chunks.append(chunk)
        finally:
            self._close()
            self._pid = None
            gc.unfreeze()   # what was frozen at the fork is collected again
        if not chunks:
            raise RuntimeError(f"a worker process ended (status {status}) without a result")
        kind, payload = pickle.loads(b"".join(chunks))
        if kind == "user":
            raise UserError(payload)
        if kind == "error":
            raise RuntimeError(f"a worker process failed:\n{payload}")
        self._value = payload
        return payload


#: What a child sends through the pipe where its result is in the file (a pickle's first
#: byte is never 0).
_IN_FILE = b"\0"


def forks() -> bool:
    """Whether :func:`in_background` runs its function in another process (fork exists
    and :func:`jobs` allows more than one)."""
    return hasattr(os, "fork") and jobs() >= 2


def in_background(fn: Callable[[], Any]) -> Background:
    """Start ``fn()`` in a forked child and return at once; ``.result()`` waits for it.

    Runs ``fn`` here, now, when fork is not available or :func:`jobs` is 1. The child's
    stdout and stderr are the parent's: ``fn`` should not print.

    Parameters
    ----------
    fn : callable
        A function of no arguments whose result pickles.

    Returns
    -------
    Background
        Its ``result()`` is ``fn()``'s value, or raises what ``fn`` raised.
    """
    if not forks():
        return Background(None, None, fn())
    import tempfile

    read_end, write_end = os.pipe()
    # the result goes to a file no directory names, so that the child ends (and frees its
    # memory) once it is done, not once the parent reads it (a result past a pipe's 64 KiB
    # blocked it till then); through the pipe where the file cannot take it
    try:
        file, path = tempfile.mkstemp(prefix="netmodel-result-")
        os.unlink(path)
    except OSError:
        file = None
    parent = os.getpid()
    # what exists now leaves the collector's generations until the result is taken: the
    # child's collections then do not write to (and so copy) the pages it shares with the
    # parent, and neither process rescans the caches both start with (Python's gc docs
    # advise freezing before a fork without exec)
    gc.freeze()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running the parent's exit code
        try:
            os.close(read_end)
            die_with(parent)
            try:
                message = ("ok", fn())
            except UserError as exc:
                message = ("user", str(exc))
            except BaseException:  # noqa: BLE001 - sent to the parent, raised there
                message = ("error", traceback.format_exc())
            data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            if file is not None:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(file, view):]
                    data = _IN_FILE
                except OSError:   # past RLIMIT_FSIZE, a full disk: through the pipe
                    pass
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view):]
        finally:
            os._exit(0)
    os.close(write_end)
    return Background(pid, read_end, file=file)
