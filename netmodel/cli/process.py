"""What :func:`netmodel.cli.main.main` readies in the process before a command runs:
output streams whose reader may leave and whose lost writes are said once at the end
(:func:`reader_may_leave`, :func:`write_error`), an error handler that writes any character
a terminal's encoding cannot hold (:data:`ESCAPE`), and a folder for matplotlib's settings
and font cache where the user's are out of reach (:func:`matplotlib_folder`). Imports only
the standard library.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
from typing import Any


class _ReaderMayLeave(io.FileIO):
    """The lowest layer of ``netmodel``'s stdout and stderr (:func:`reader_may_leave`):
    where a write fails, the descriptor is pointed at the null device and the bytes are
    taken as written, so the rest of the output goes nowhere and nothing raises, now or in
    the flush at exit, and the command runs to its end. The reader having closed the pipe
    (``netmodel hardware | head -1``: EPIPE) is no failure of the command; any other
    error (a full disk: ENOSPC, an I/O error: EIO, a file over its size limit: EFBIG) is
    kept in :attr:`lost`, the first only, for :func:`~netmodel.cli.main.main` to report
    once the command is done."""

    #: the first write error other than EPIPE, or None
    lost: OSError | None = None

    def write(self, b: Any) -> int:
        try:
            return super().write(b)
        except OSError as exc:
            if not isinstance(exc, BrokenPipeError) and self.lost is None:
                self.lost = exc
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self.fileno())
            finally:
                os.close(null)
            return memoryview(b).nbytes


class _Closed(io.RawIOBase):
    """Where ``netmodel``'s stdout goes when it was started with descriptor 1 closed
    (``netmodel hardware >&-``; Python then sets ``sys.stdout`` to None and click's echo
    drops every line, exit 0 as if all was written): each write is taken as written and
    the output lost as :class:`_ReaderMayLeave` keeps it (:attr:`lost`: EBADF), so the
    command runs to its end and :func:`~netmodel.cli.main.main` says so. Nothing writes to
    descriptor 1, which a file the command opens may now hold."""

    lost: OSError | None = None

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        if self.lost is None:
            self.lost = OSError(errno.EBADF, os.strerror(errno.EBADF))
        return memoryview(b).nbytes


#: The error handler of ``netmodel``'s stdout and stderr (:func:`_escape_unencodable`).
ESCAPE = "netmodel.escape"


def _escape_unencodable(exc: UnicodeError) -> tuple[str | bytes, int]:
    r"""A character the stream's encoding cannot hold: a lone surrogate of an argument's
    byte that was not UTF-8 (U+DC80-U+DCFF) is that byte again, as ``surrogateescape``
    writes it; any other is written as its escape (``\u0663``), as ``backslashreplace``
    writes it, so that a Latin-1 or ASCII terminal (``PYTHONIOENCODING=latin-1``) gets a
    line, not a ``UnicodeEncodeError`` traceback (``netmodel models 'Llama→'``'s refusal
    quoting the name was one).

    >>> "error: 'x\u2192' \udce9".encode("latin-1", ESCAPE)
    b"error: 'x\\u2192' \xe9"
    """
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    c = exc.object[exc.start]
    if 0xDC80 <= ord(c) <= 0xDCFF:
        return bytes([ord(c) - 0xDC00]), exc.start + 1
    return codecs.backslashreplace_errors(
        UnicodeEncodeError(exc.encoding, c, 0, 1, exc.reason))[0], exc.start + 1


codecs.register_error(ESCAPE, _escape_unencodable)


def reader_may_leave(stream: Any, fd: int | None = None) -> Any:
    """``stream`` (sys.stdout or sys.stderr) as a text stream over the same descriptor
    whose writes survive the reader closing it (:class:`_ReaderMayLeave`): its encoding
    and buffering as ``stream``'s, with the error handler :data:`ESCAPE` (see
    :func:`~netmodel.cli.main.main`).
    A stream with no descriptor (captured in-process) only gets that error handler. None
    where descriptor ``fd`` is closed (Python's stream for it is None): a stream whose
    output is lost (:class:`_Closed`).

    >>> reader_may_leave(io.StringIO()).__class__.__name__
    'StringIO'
    """
    if stream is None and fd is not None and _closed(fd):
        return io.TextIOWrapper(io.BufferedWriter(_Closed()), encoding="utf-8",
                                errors=ESCAPE, newline="\n")
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):   # None, or no descriptor (a test capture)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=ESCAPE)
        return stream
    stream.flush()
    raw = io.BufferedWriter(_ReaderMayLeave(fd, "w", closefd=False))
    return io.TextIOWrapper(raw, encoding=stream.encoding, errors=ESCAPE,
                            newline="\n", line_buffering=stream.line_buffering,
                            write_through=getattr(stream, "write_through", False))


def _closed(fd: int) -> bool:
    """Whether descriptor ``fd`` is closed."""
    try:
        os.fstat(fd)
    except OSError as exc:
        return exc.errno == errno.EBADF
    return False


def write_error(stream: Any) -> OSError | None:
    """The write error kept by ``stream``'s :class:`_ReaderMayLeave` or :class:`_Closed`
    (None: none, or a stream :func:`reader_may_leave` did not wrap)."""
    raw = getattr(getattr(stream, "buffer", None), "raw", None)
    return raw.lost if isinstance(raw, (_ReaderMayLeave, _Closed)) else None


def may_make(folder: str) -> bool:
    """Whether ``folder`` is a folder this process may write, or one it could make: its
    nearest existing parent a folder it may write. ``os.access`` says yes to root
    everywhere, so for root a folder is made and removed there to see (HOME=/proc or /sys,
    a container's root: matplotlib's mkdir failed and it said so in two warnings on
    stderr); otherwise nothing is made."""
    path = os.path.abspath(folder)
    while not os.path.lexists(path):
        path = os.path.dirname(path)
    if not (os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)):
        return False
    if os.geteuid() != 0:
        return True
    import tempfile

    try:
        os.rmdir(tempfile.mkdtemp(prefix=".netmodel-probe.", dir=path))
    except OSError:
        return False
    return True


def matplotlib_folder() -> None:
    """Where matplotlib keeps its settings and font cache, where the user's are out of
    reach: with no ``MPLCONFIGDIR`` and a HOME (or ``XDG_CONFIG_HOME``,
    ``XDG_CACHE_HOME``) that cannot hold its folders (HOME=/dev/null, a read-only home),
    or an ``MPLCONFIGDIR`` that cannot be a folder (a file, ``/etc/passwd``; a read-only
    place), ``MPLCONFIGDIR`` is set to this user's own folder under the temporary folder
    (made mode 0700; one that is not a folder of this user's alone is not used: a new one
    is made). matplotlib would make a new folder at each start, rebuild its font cache
    there (seconds) and say so in two warnings on stderr after the command's output.
    Nothing is made where the user's folders will do."""
    import sys

    if not sys.platform.startswith(("linux", "freebsd")):
        return
    given = os.environ.get("MPLCONFIGDIR")
    if given:
        if may_make(given):
            return
        os.environ.pop("MPLCONFIGDIR")   # as if unset: the user's folders, else ours
    home = os.path.expanduser("~")
    wanted = [os.path.join(os.environ.get(var) or os.path.join(home, default), "matplotlib")
              for var, default in (("XDG_CONFIG_HOME", ".config"),
                                   ("XDG_CACHE_HOME", ".cache"))]
    if home != "~" and all(map(may_make, wanted)):
        return
    import stat
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), f"netmodel-matplotlib-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return   # no temporary folder either: matplotlib's own refusal says so
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        import atexit
        import shutil

        folder = tempfile.mkdtemp(prefix="netmodel-matplotlib-")
        atexit.register(shutil.rmtree, folder, True)
    os.environ["MPLCONFIGDIR"] = folder
