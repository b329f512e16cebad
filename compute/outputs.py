"""Writing results: one file atomically, or a set of files all or nothing.

Every command that writes goes through this module, so the rules are the same everywhere
(the paths checked by :mod:`compute.output_paths`):

* **Paths.** An output path must be non-empty, hold no control character (a NUL byte, a
  newline, DEL, a C1 control or a Unicode line separator) nor a bidirectional control
  (U+202A-U+202E, U+2066-U+2069) nor a blank at either end (a reader drops it, so
  the file could not be read back) and must not be ``.``, ``..`` or end in a separator
  when a file is meant. The folder a file goes into must exist (netmodel never
  creates a chain of folders); an output *folder* (``--out DIR``) may be created, but its
  parent must exist. A file path that is an existing folder, or a folder path that is an
  existing file, is refused, and so is a symbolic link that loops; a file path that is a
  symbolic link is refused (its file would replace the link), and so is an existing file
  its user may not write (read-only) or one the command reads as input (its output would
  replace it). A folder path that is a symbolic link to an existing folder is taken
  (scratch space elsewhere); one to nothing is refused (the folder would be made where it
  points), and one to a file is refused as a link. An unwritable place is refused with the
  reason, and so is a name with no room for the staging folder or temporary file written
  beside it (a name within a few dozen bytes of the file system's longest, 255 on most).
* **One file** (:func:`atomic_write`) is written to a temporary file beside it and moved
  into place with :func:`os.replace`: readers see the old file or the new one, never half.
* **A set of files** (:func:`write_outputs`) is written into a staging folder beside the
  output folder, with a manifest (:data:`MANIFEST`) naming the run; then the staging folder
  and the output folder are exchanged in one step (``renameat2(RENAME_EXCHANGE)`` on Linux;
  elsewhere two renames, the old folder kept until the new one is in place). A folder that
  holds the output of an earlier run is therefore replaced whole: old or new, never mixed,
  even if the process is killed at any instant. To protect a user's own files, an output
  folder must be new, empty, or an earlier netmodel output that holds only :data:`MANIFEST`
  and the files it lists, each as netmodel wrote it (a regular file of the size and SHA-256
  the manifest records): any other file in it (an input such as the scenario file being
  read, or notes of one's own) and a listed one changed since (edited by hand, another
  tool's, or a manifest entry recording no size and hash) is named and the run refused,
  the folder untouched, as is a :data:`MANIFEST` that is no file (a folder, which the
  old output would have taken with it, a symbolic link, a FIFO). A new
  output folder named like a file (ending in one of
  :data:`~compute.output_paths.FILE_SUFFIXES`, a suffix of the files netmodel reads and
  writes: ``.csv``, ``.png`` ...) is refused: a file was meant, and so is the folder the
  command runs in (replaced whole, it would leave the shell in the deleted old folder). Staging and retired folders left by a killed run
  are removed by the next run.
* **Permissions**: every file gets ``0666 & ~umask``, as ``open()`` would give it.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> paths = write_outputs(os.path.join(d, "out"), {"a.txt": b"1", "b.txt": b"2"})
>>> sorted(os.listdir(os.path.join(d, "out")))
['a.txt', 'b.txt', 'netmodel-manifest.json']
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from compute.errors import UserError
from compute.output_paths import (
    MANIFEST,
    RETIRED,
    STAGING,
    _describe,
    _refusal_kind,
    check_file_path,
    check_folder_path,
    side_file_affixes,
    side_folder_prefix,
)
from compute.validate import describe, is_whole
from compute.workers import die_with as _die_with
from compute.workers import jobs as _jobs
from compute.workers import libc as _libc

__all__ = ["atomic_write", "write_outputs"]

#: ``{name: bytes}`` or ``{name: writer(path)}``: what :func:`write_outputs` takes.
Content = bytes | bytearray | Callable[[str], object]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fix_mode(path: str) -> None:
    os.chmod(path, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual ones


def atomic_write(path: str | os.PathLike[str], write: Callable[[str], object] | bytes,
                 what: str = "output file", suffixes: Collection[str] | None = None) -> str:
    """Write one file atomically: ``write(tmp_path)`` (or the bytes) into a temporary file
    beside ``path``, then :func:`os.replace` it into place. On failure nothing is left.

    Parameters
    ----------
    path : path
        The file, checked by :func:`check_file_path`.
    write : callable or bytes
        The bytes, or ``write(tmp_path)``, which writes the file at ``tmp_path``.
    what, suffixes
        As :func:`check_file_path` takes them.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    UserError
        A path :func:`check_file_path` refuses, or a failed write (an
        :class:`~compute.errors.OutputLost` for want of room or of a working device).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> atomic_write(path, b"1") == path, open(path).read()
    (True, '1')
    """
    p = check_file_path(path, what, suffixes)
    try:
        start, end = side_file_affixes(p)
        fd, tmp = tempfile.mkstemp(prefix=start, suffix=end, dir=p.parent)
    except OSError as exc:
        raise _cannot_write(what, path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(write, bytes | bytearray):
                fh.write(write)
        if not isinstance(write, bytes | bytearray):
            write(tmp)
        _fix_mode(tmp)
        os.replace(tmp, p)
    except OSError as exc:
        _unlink(tmp)
        raise _cannot_write(what, path, exc) from None
    except BaseException:
        _unlink(tmp)
        raise
    return str(p)


def _cannot_write(what: str, path, exc: OSError) -> UserError:
    """The refusal of an output whose write failed with ``exc``: an
    :class:`~compute.errors.OutputLost` for a full disk, a quota, an I/O error or a file
    over its size limit (:func:`_refusal_kind`), else a :class:`UserError`.

    >>> type(_cannot_write("figure", "a.png", OSError(errno.ENOSPC, "No space left"))).__name__
    'OutputLost'
    """
    return _refusal_kind(exc)(f"cannot write {what} {_describe(path)}: {exc.strerror or exc}")


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        fn = _libc().renameat2
    except AttributeError:  # no C library, or glibc before 2.28
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0


def _clean_stale(parent: Path, name: str) -> None:
    """Remove staging and retired folders of ``name`` that no live process owns; where a
    run was killed between its two renames (no folder ``name``, a retired one), put the
    retired folder back first."""
    final = parent / name
    retired = sorted(parent.glob(f".{name}{RETIRED}*"), key=lambda e: e.stat().st_mtime)
    if retired and not final.exists():
        with contextlib.suppress(OSError):
            os.rename(retired[-1], final)
    for prefix in (STAGING, RETIRED):
        for entry in parent.glob(f".{name}{prefix}*"):
            pid = entry.name.rsplit("-", 2)[-2] if entry.name.count("-") >= 2 else ""
            if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)) \
                    and time.time() - entry.stat().st_mtime < 24 * 3600:
                continue  # another run is writing right now
            _remove(entry)


def _remove(entry: Path, tries: int = 50) -> None:
    """Remove a dead run's folder. A killed run's workers die with it (``die_with``), but
    one may still be finishing a file for a few milliseconds after its parent is gone
    (the kernel delivers their SIGKILL when they next run, later on a loaded machine):
    remove again until the folder stays gone, for at most about a second."""
    for _ in range(tries):
        shutil.rmtree(entry, ignore_errors=True)
        if not os.path.lexists(entry):
            return
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _manifest(files: Mapping[str, Path], run: Mapping | None) -> bytes:
    listing = {}
    for name, path in files.items():
        data = path.read_bytes()
        listing[name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    doc = {"netmodel": _version(), "run": dict(run or {}),
           "written_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "files": listing}
    return (json.dumps(doc, indent=2, default=str) + "\n").encode()


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("netmodel")
    except Exception:  # not installed (python -m from a checkout)
        return "unknown"


#: A writer process's exit status for an OSError: this plus its errno.
_ERRNO_STATUS = 64


def _run_writers(writers, jobs: int | None) -> None:
    """Call each ``(name, writer, path)``; with more than one job, in forked processes that
    take the writers one at a time from a shared pipe (figures: independent, CPU-bound,
    of unequal cost). A writer that fails in a child fails the whole set, as it would
    here."""
    jobs = _jobs() if jobs is None else jobs
    jobs = min(jobs, len(writers))
    if jobs <= 1 or not hasattr(os, "fork"):
        for _, writer, path in writers:
            writer(str(path))
        return
    read_end, write_end = os.pipe()
    os.write(write_end, bytes(range(len(writers))) if len(writers) < 256 else b"")
    os.close(write_end)
    if len(writers) >= 256:  # not expected of figures; keep it simple and sequential
        os.close(read_end)
        for _, writer, path in writers:
            writer(str(path))
        return

    def work() -> list[str]:
        done = []
        while True:
            index = os.read(read_end, 1)
            if not index:
                return done
            name, writer, path = writers[index[0]]
            done.append(name)
            writer(str(path))

    children = []
    parent = os.getpid()
    for _ in range(jobs - 1):
        pid = os.fork()
        if pid == 0:  # the child: take writers until the pipe is empty
            status = 0
            try:
                _die_with(parent)
                work()
            except OSError as exc:   # the parent raises it again: a full disk is said so
                status = _ERRNO_STATUS + exc.errno \
                    if exc.errno and 0 < exc.errno < 256 - _ERRNO_STATUS else 1
            except BaseException:  # noqa: BLE001 - reported through the exit status
                status = 1
            finally:
                os._exit(status)
        children.append(pid)
    error = None
    try:
        work()
    except BaseException as exc:  # noqa: BLE001 - re-raised once the children are reaped
        error = exc
    finally:
        os.close(read_end)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    failed = sum(code != 0 for code in codes)
    if error is not None:
        raise error
    lost = [code - _ERRNO_STATUS for code in codes if code > _ERRNO_STATUS]
    if lost:   # an OSError in a worker (ENOSPC): the reason, as the writer here gives it
        raise OSError(lost[0], os.strerror(lost[0]))
    if failed:
        raise UserError("could not write every figure (one failed in a worker process; "
                        "NETMODEL_JOBS=1 shows why)")


def _put_in_place(stage: Path, final: Path) -> None:
    """Rename ``stage`` to ``final``, which did not exist a moment ago. Where another run
    of netmodel put its output there since (two runs into one new ``--out`` folder at once:
    the later rename failed with ENOTEMPTY, one line and exit status 2 for a command line
    that was right), exchange the two instead, as a run into that folder would: the
    outcome is one run's whole output, the other's removed."""
    try:
        os.rename(stage, final)
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) \
                or not (final / MANIFEST).is_file() or not _exchange(stage, final):
            raise
        shutil.rmtree(stage, ignore_errors=True)   # now the other run's output


def write_outputs(out_dir: str | os.PathLike[str], files: Mapping[str, Content], *,
                  run: Mapping | None = None, what: str = "output folder", jobs: int | None = None
                 ) -> list[Path]:
    """Write every file of ``files`` into ``out_dir``, all or nothing (see the module doc).

    Parameters
    ----------
    out_dir : path
        The output folder: new, empty, or an earlier netmodel output (replaced whole).
    files : mapping
        ``{name: bytes}`` or ``{name: writer}``, where ``writer(path)`` writes the file at
        ``path``. Names are plain file names (no folders).
    run : mapping, optional
        What produced the files (command, arguments), recorded in the manifest.
    jobs : int, optional
        Processes writing the ``writer`` files at once (default :func:`_jobs`: the CPUs
        available, at most 4; ``NETMODEL_JOBS`` sets it).

    Returns
    -------
    list of Path
        The final paths, in the order of ``files``.

    Raises
    ------
    UserError
        A bad or unwritable path, a name that is not a plain file name, or ``jobs`` that is
        not a whole number >= 1.
    """
    # before any folder is made: '2' raised TypeError mid-write, 0, -1, 2.5 and True ran
    if jobs is not None and (not is_whole(jobs) or jobs < 1):
        raise UserError(f"jobs must be a whole number >= 1 (or None: as NETMODEL_JOBS "
                        f"says), got {describe(jobs)}")
    out = check_folder_path(out_dir, what)
    for name in files:
        if not isinstance(name, str) or not name or name in (".", "..", MANIFEST) \
                or os.sep in name or "/" in name or name.startswith("."):
            raise UserError(f"output name {name!r} is not a plain file name")
    parent, base = out.resolve().parent, out.resolve().name
    _clean_stale(parent, base)
    try:
        stage = Path(tempfile.mkdtemp(prefix=side_folder_prefix(base, STAGING), dir=parent))
    except OSError as exc:
        raise _cannot_write(what, out_dir, exc) from None
    try:
        os.chmod(stage, 0o777 & ~_umask())
        written: dict[str, Path] = {}
        writers = []
        for name, content in files.items():
            path = stage / name
            if isinstance(content, bytes | bytearray):
                path.write_bytes(bytes(content))
            else:
                path.write_bytes(b"")
                writers.append((name, content, path))
            written[name] = path
        _run_writers(writers, None if jobs is None else int(jobs))
        for path in written.values():
            _fix_mode(str(path))
        (stage / MANIFEST).write_bytes(_manifest(written, run))
        _fix_mode(str(stage / MANIFEST))
        final = out.resolve()
        if final.exists():
            if not _exchange(stage, final):
                retired = Path(tempfile.mkdtemp(prefix=side_folder_prefix(base, RETIRED),
                                                dir=parent))
                os.rmdir(retired)
                os.rename(final, retired)
                os.rename(stage, final)
                stage = retired
            shutil.rmtree(stage, ignore_errors=True)  # now the old output
        else:
            _put_in_place(stage, final)
    except OSError as exc:
        shutil.rmtree(stage, ignore_errors=True)
        raise _cannot_write(what, out_dir, exc) from None
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return [out / name for name in files]
