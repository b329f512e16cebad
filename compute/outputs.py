"""Writing results: one file atomically, or a set of files all or nothing.

Every command that writes goes through this module, so the rules are the same everywhere:

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
  reason.
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
  the folder untouched. A new
  output folder named like a file (ending in one of :data:`FILE_SUFFIXES`) is refused: a
  file was meant, and so is the folder the command runs in (replaced whole, it would leave
  the shell in the deleted old folder). Staging and retired folders left by a killed run
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
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from compute.config_files import read_as_input
from compute.errors import BIDI_CONTROLS, OutputLost, UserError, one_line
from compute.workers import die_with as _die_with
from compute.workers import jobs as _jobs
from compute.workers import libc as _libc

__all__ = ["FIGURE_FORMATS", "FILE_SUFFIXES", "MANIFEST", "atomic_write", "check_file_path",
           "check_folder_path", "figure_format", "write_outputs"]

#: The file in every multi-file output folder that names the run and lists its files.
MANIFEST = "netmodel-manifest.json"
#: Figure formats netmodel writes, chosen by the path's suffix.
FIGURE_FORMATS = ("png", "svg", "pdf")
#: Suffixes of the files netmodel reads and writes (tables, data, reports, figures): an
#: output folder that does not exist yet may not end in one (``--out cmpout.csv`` made a
#: folder of that name, where a file was meant).
FILE_SUFFIXES = (".csv", ".json", ".toml", ".txt", ".md", ".graphml",
                 *(f".{f}" for f in FIGURE_FORMATS))
_STAGING = ".netmodel-staging-"
_RETIRED = ".netmodel-retired-"

#: ``{name: bytes}`` or ``{name: writer(path)}``: what :func:`write_outputs` takes.
Content = bytes | bytearray | Callable[[str], object]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _describe(path) -> str:
    return repr(str(path))


def _check_text(path, what: str) -> Path:
    if path is None or not isinstance(path, str | os.PathLike):
        raise UserError(f"{what} must be a path, got {path!r}")
    text = os.fspath(path)
    if not text.strip():
        raise UserError(f"{what} must not be empty")
    # the rule of names (compute.validate.name): C0 and C1 controls, DEL and the Unicode
    # line separators, each of which breaks the one-line 'wrote PATH' a command prints, and
    # the bidirectional controls, which turn the rest of that line around
    if isinstance(text, str) and one_line(text) != text:
        raise UserError(f"{what} {text!r} holds a control character")
    if isinstance(text, str) and not BIDI_CONTROLS.isdisjoint(text):
        raise UserError(f"{what} {text!r} holds a bidirectional control (U+202A-U+202E, "
                        f"U+2066-U+2069), which would turn the line 'wrote ...' around")
    if isinstance(text, str) and text != text.strip():
        # every reader strips a path typed (--fabric ' f.json' reads 'f.json'): the file
        # written would be one no command reads back
        raise UserError(f"{what} {text!r} starts or ends with a blank, which the commands "
                        f"that read files drop: give the path without it")
    try:   # a name over the file system's limit raises here, not False, in every later check
        Path(text).exists()
    except OSError as exc:
        shown = _describe(text) if len(text) <= 100 else f"{_describe(text)[:100]}..."
        hint = (" (at most 255 bytes a name and 4,096 a path on most file systems)"
                if exc.errno == errno.ENAMETOOLONG else "")
        raise UserError(f"{what} {shown}: {exc.strerror or exc}{hint}") from None
    return Path(text)


def check_file_path(path: str | os.PathLike[str], what: str = "output file",
                    suffixes: Collection[str] | None = None) -> Path:
    """``path`` checked as a file to write: not empty, not a folder, its folder existing
    and writable, its suffix one of ``suffixes`` (when given).

    Parameters
    ----------
    path : path
        The file to write.
    what : str
        What the file is, as messages name it.
    suffixes : collection of str, optional
        The suffixes allowed (lower case, with the dot); any where None.

    Returns
    -------
    Path

    Raises
    ------
    UserError
        A path the module doc's rules refuse (:class:`~compute.errors.OutputLost` where a
        write probe finds no room or no working device).

    Examples
    --------
    >>> check_file_path("")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: output file must not be empty
    """
    p = _check_text(path, what)
    text = os.fspath(path)
    if text.endswith(("/", os.sep)) or p.name in ("", ".", ".."):
        raise UserError(f"{what} {_describe(text)} names a folder, not a file")
    if p.is_dir():
        raise UserError(f"{what} {_describe(text)} is an existing folder; give a file path")
    if _loops(p):   # exists() says False: the loop would be replaced by the file
        raise UserError(f"{what} {_describe(text)} is a symbolic link that loops (it resolves "
                        f"to no file); give a file path")
    if p.exists() and not p.is_file():
        # the file is replaced whole: a device (/dev/null), FIFO or socket would be destroyed
        raise UserError(f"{what} {_describe(text)} exists and is not a regular file (a device, "
                        f"FIFO or socket); give a file path")
    if p.is_symlink():
        # os.replace puts the new file in the link's place: the link was lost and its target
        # left as it was, under a 'wrote' naming the link; following it instead would let a
        # link planted in a shared folder (-> /etc/passwd) aim a write past the suffix check
        raise UserError(f"{what} {_describe(text)} is a symbolic link (to "
                        f"{_describe(os.readlink(p))}); netmodel writes a new file in its "
                        f"place, which would replace the link, not write where it points: "
                        f"give the target's own path, or remove the link")
    if (read := read_as_input(p)) is not None:
        # read whole before this write, but gone after it: a cost table over the fabric it
        # was computed on (costs --fabric f.json --format json -o f.json)
        raise UserError(f"{what} {_describe(text)} is "
                        f"{'' if read == text else _describe(read) + ', '}a file this "
                        f"command reads; its output would replace it: give another path")
    if p.is_file() and not os.access(p, os.W_OK):
        # os.replace needs only the folder writable: a file its owner made read-only was
        # replaced without a word (root may write any file, as open() lets it)
        raise UserError(f"{what} {_describe(text)} is read-only; netmodel would replace it: "
                        f"make it writable (chmod u+w) or give another path")
    if suffixes is not None and p.suffix.lower() not in suffixes:
        _only_a_suffix(p, what, suffixes)
        raise UserError(f"{what} {_describe(text)} must end in one of: {', '.join(suffixes)}")
    _writable_folder(p.parent, f"{what} {_describe(text)}", "folder")
    return p


def _only_a_suffix(path: Path, what: str, suffixes: Collection[str]) -> None:
    """Refuse a file name that is one of ``suffixes`` alone (``.csv``): a hidden file with no
    suffix to the file system (``Path('.csv').suffix`` is ``''``), which 'must end in one of:
    .csv' would refuse in words that contradict themselves.

    >>> _only_a_suffix(Path("out/.PNG"), "figure", (".png", ".svg"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: figure 'out/.PNG' is a suffix alone: give a name before it, e.g. 'out/figure.png'
    """
    if path.name.lower() in suffixes:
        example = path.with_name(what.split()[-1] + path.name.lower())
        raise UserError(f"{what} {_describe(path)} is a suffix alone: give a name before it, "
                        f"e.g. {_describe(example)}")


def _loops(path: Path) -> bool:
    """Whether ``path`` is a symbolic link whose chain loops (``a -> a``, ``a -> b -> a``)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _writable_folder(folder: Path, where: str, called: str) -> None:
    """``folder``, where an output goes (``where`` names the output, ``called`` the folder in
    messages), checked: it exists, is a folder, and a file can be written there."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{where}: {_describe(folder)} is a file, not a folder")
    if not folder.is_dir():
        raise UserError(f"{where}: {called} {_describe(folder)} does not exist (create it first)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"{where}: {called} {_describe(folder)} is not writable")
    _probe(folder, where)


def _probe(folder: Path, where: str) -> None:
    """Create and remove a file in ``folder``: os.access says yes to root everywhere, and
    to everyone on a read-only mount or in /proc, where the write itself fails."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".netmodel-probe.", dir=folder)
    except OSError as exc:
        # said as the checks above are, the output first (a command names its flag there)
        raise _refusal_kind(exc)(f"{where}: cannot write a file in {_describe(folder)}: "
                                 f"{exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)


def check_folder_path(path: str | os.PathLike[str], what: str = "output folder") -> Path:
    """``path`` checked as an output folder: not empty, not an existing file, not a new
    name ending in a file's suffix (:data:`FILE_SUFFIXES`: a file was meant), its parent
    existing and writable, and (when it exists) empty or an earlier netmodel output that
    holds only the files its manifest lists, each the size and SHA-256 it records: an
    input put there (a scenario file, a user's notes) or a listed file edited since would
    be lost with the old output.

    Parameters
    ----------
    path : path
        The output folder.
    what : str
        What the folder is, as messages name it.

    Returns
    -------
    Path
        ``path`` as given (not resolved).

    Raises
    ------
    UserError
        As :func:`check_file_path`.

    Examples
    --------
    >>> check_folder_path("cmpout.csv")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: output folder 'cmpout.csv' is new and named like a .csv file; \
netmodel writes a folder of files (tables, JSON, figures) there: give a folder name, such as \
'cmpout'
    """
    p = _check_text(path, what)
    if p.exists() and not p.is_dir():
        if p.is_symlink():   # said as a link: the path typed is no file of the user's eye
            raise UserError(f"{what} {_describe(path)} is a symbolic link to "
                            f"{_describe(os.readlink(p))}, which exists and is not a folder; "
                            f"give a folder path")
        raise UserError(f"{what} {_describe(path)} exists and is not a folder")
    suffix = p.suffix.lower()
    if suffix in FILE_SUFFIXES and not p.exists() and p.stem:
        raise UserError(f"{what} {_describe(path)} is new and named like a {suffix} file; "
                        f"netmodel writes a folder of files (tables, JSON, figures) there: "
                        f"give a folder name, such as {_describe(p.with_suffix(''))}")
    try:
        resolved = p.resolve()
    except (OSError, RuntimeError):   # Python 3.11-3.12 raise RuntimeError for a loop
        if not p.is_absolute() and _cwd_gone():
            raise UserError(f"{what} {_describe(path)} is relative to the folder this command "
                            f"runs in, which no longer exists (deleted or replaced since the "
                            f"shell entered it); cd to a folder and run it again") from None
        raise UserError(f"{what} {_describe(path)} is a symbolic link that loops (it "
                        f"resolves to no folder); give a folder path") from None
    if p.is_symlink() and not p.exists():
        # a link to a folder is taken (scratch space elsewhere); to nothing, the folder it
        # names would be made where it points, out of sight of the path typed
        raise UserError(f"{what} {_describe(path)} is a symbolic link to "
                        f"{_describe(os.readlink(p))}, which does not exist; netmodel would "
                        f"create that folder where the link points: create it first, give "
                        f"the target's own path, or remove the link")
    if resolved.parent == resolved:
        raise UserError(f"{what} {_describe(path)} is the file system's root")
    if p.is_dir() and _is_cwd(resolved):
        # replaced whole, it would leave the shell in the deleted old folder
        raise UserError(f"{what} {_describe(path)} is the folder this command runs in; "
                        f"netmodel replaces its output folder whole, so give a folder "
                        f"inside it (such as 'out') or elsewhere")
    _writable_folder(resolved.parent, f"{what} {_describe(path)}", "its parent folder")
    if p.is_dir():
        if not os.access(p, os.W_OK | os.X_OK):
            raise UserError(f"{what} {_describe(path)} is not writable")
        entries = [e.name for e in os.scandir(p)]
        if entries and MANIFEST not in entries:
            raise UserError(f"{what} {_describe(path)} holds files netmodel did not write "
                            f"(no {MANIFEST}); netmodel replaces its output folder whole, so "
                            f"give a new or empty folder")
        listed = _listed(p / MANIFEST)
        others = sorted(set(entries) - set(listed) - {MANIFEST})
        if others:
            shown = ", ".join(repr(name) for name in others[:3])
            more = f" and {len(others) - 3:,} more" if len(others) > 3 else ""
            raise UserError(f"{what} {_describe(path)} holds {shown}{more}, which its "
                            f"{MANIFEST} does not list (a file netmodel did not write: an "
                            f"input, or your own); {_MOVE_IT_OUT}")
        for name in sorted(set(entries) & set(listed)):
            changed = _not_as_written(p / name, listed[name])
            if changed:
                raise UserError(f"{what} {_describe(path)} holds {name!r}, which is not the "
                                f"file netmodel wrote there: {changed} (edited since, or "
                                f"another tool's); {_MOVE_IT_OUT}")
    return p


#: The end of a refusal of an output folder holding a file netmodel did not write.
_MOVE_IT_OUT = "netmodel replaces its output folder whole, so move it out or give another folder"


def _is_cwd(resolved: Path) -> bool:
    """Whether ``resolved`` (a resolved path) is the current working folder."""
    try:
        return os.path.samefile(resolved, os.getcwd())
    except OSError:
        return False


def _cwd_gone() -> bool:
    """Whether the current working folder no longer exists (``os.getcwd`` fails)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


#: Largest manifest read (bytes): one lists a run's files, a few hundred bytes each.
_MANIFEST_BYTES = 1 << 24


def _listed(manifest: Path) -> dict[str, object]:
    """The files ``manifest`` lists (its ``files`` table), each name with its entry (what
    :func:`_manifest` wrote: ``{"bytes", "sha256"}``); none when it is not a manifest
    netmodel wrote (not a regular file, unreadable, too large, not JSON, no such table)."""
    try:
        if not manifest.is_file():   # a FIFO would block the read, /dev/zero never end
            return {}
        with open(manifest, "rb") as fh:
            raw = fh.read(_MANIFEST_BYTES + 1)
        doc = json.loads(raw) if len(raw) <= _MANIFEST_BYTES else None
    except (OSError, ValueError, RecursionError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    return {name: entry for name, entry in files.items() if isinstance(name, str)} \
        if isinstance(files, dict) else {}


def _not_as_written(path: Path, entry: object) -> str:
    """Why the file at ``path`` is not the one its manifest ``entry`` records (its words
    after 'is not the file netmodel wrote there: '), or ``""`` where it is: a regular file
    (not a link, not a folder) of the ``bytes`` and ``sha256`` the entry records. An entry
    that records neither (a manifest netmodel did not write) vouches for no file."""
    size = entry.get("bytes") if isinstance(entry, dict) else None
    digest = entry.get("sha256") if isinstance(entry, dict) else None
    if not (isinstance(size, int) and not isinstance(size, bool) and isinstance(digest, str)):
        return f"its {MANIFEST} records no size and SHA-256 for it, so nothing says it is"
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode):
            return "it is now a symbolic link" if stat.S_ISLNK(st.st_mode) else \
                "it is now a folder" if stat.S_ISDIR(st.st_mode) else \
                "it is not a regular file"
        if st.st_size != size:
            return f"it holds {st.st_size:,} bytes, its {MANIFEST} records {size:,}"
        with open(path, "rb") as fh:
            found = hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if found != digest.lower():
        return f"its SHA-256 is {found[:12]}..., its {MANIFEST} records {digest[:12]}..."
    return ""


def figure_format(path: str | os.PathLike[str]) -> str:
    """The figure format ``path``'s suffix names (one of :data:`FIGURE_FORMATS`).

    Parameters
    ----------
    path : path
        A figure's file name.

    Returns
    -------
    str

    Raises
    ------
    UserError
        A suffix that names no figure format, or a suffix alone (``.png``).

    Examples
    --------
    >>> figure_format("a/b.SVG")
    'svg'
    """
    suffix = Path(os.fspath(path)).suffix.lower().lstrip(".")
    if suffix not in FIGURE_FORMATS:
        _only_a_suffix(Path(os.fspath(path)), "figure", ["." + f for f in FIGURE_FORMATS])
        raise UserError(f"figure {_describe(path)} must end in one of: "
                        f"{', '.join('.' + f for f in FIGURE_FORMATS)}")
    return suffix


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
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp" + p.suffix,
                                   dir=p.parent)
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


#: errno values of a write that failed for want of room or of a working device, not for
#: the path given (:class:`~compute.errors.OutputLost`, exit status 1).
_LOST = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG})


def _refusal_kind(exc: OSError) -> type[UserError]:
    """:class:`~compute.errors.OutputLost` (exit status 1) for a write that failed for want
    of room or of a working device (:data:`_LOST`), else :class:`UserError` (exit status 2).

    >>> _refusal_kind(OSError(errno.ENOSPC, "No space left")).__name__
    'OutputLost'
    """
    return OutputLost if exc.errno in _LOST else UserError


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
    retired = sorted(parent.glob(f".{name}{_RETIRED}*"), key=lambda e: e.stat().st_mtime)
    if retired and not final.exists():
        with contextlib.suppress(OSError):
            os.rename(retired[-1], final)
    for prefix in (_STAGING, _RETIRED):
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
        A bad or unwritable path, or a name that is not a plain file name.
    """
    out = check_folder_path(out_dir, what)
    for name in files:
        if not isinstance(name, str) or not name or name in (".", "..", MANIFEST) \
                or os.sep in name or "/" in name or name.startswith("."):
            raise UserError(f"output name {name!r} is not a plain file name")
    parent, base = out.resolve().parent, out.resolve().name
    _clean_stale(parent, base)
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{base}{_STAGING}{os.getpid()}-", dir=parent))
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
        _run_writers(writers, jobs)
        for path in written.values():
            _fix_mode(str(path))
        (stage / MANIFEST).write_bytes(_manifest(written, run))
        _fix_mode(str(stage / MANIFEST))
        final = out.resolve()
        if final.exists():
            if not _exchange(stage, final):
                retired = Path(tempfile.mkdtemp(prefix=f".{base}{_RETIRED}{os.getpid()}-",
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
