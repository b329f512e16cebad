"""Checks of output paths: a file or a folder to write, before anything is written.

:mod:`compute.outputs` writes through these checks, so the rules (its module doc's
**Paths**) are the same for every command; :func:`check_folder_path` also reads an earlier
output's manifest (:data:`MANIFEST`) to refuse a folder that holds a file netmodel did not
write. A check that probes the place (a file created and removed) says a full disk or a
broken device as :class:`~compute.errors.OutputLost` (exit status 1), else
:class:`~compute.errors.UserError` (exit status 2).

>>> check_file_path("a/")
Traceback (most recent call last):
...
compute.errors.UserError: output file 'a/' names a folder, not a file
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Collection
from pathlib import Path

from compute.config_files import read_as_input
from compute.errors import BIDI_CONTROLS, OutputLost, UserError, one_line

__all__ = ["FIGURE_FORMATS", "FILE_SUFFIXES", "MANIFEST", "check_file_path",
           "check_folder_path", "figure_format"]

#: The file in every multi-file output folder that names the run and lists its files.
MANIFEST = "netmodel-manifest.json"
#: Figure formats netmodel writes, chosen by the path's suffix.
FIGURE_FORMATS = ("png", "svg", "pdf")
#: Suffixes of the files netmodel reads and writes (tables, data, reports, figures): an
#: output folder that does not exist yet may not end in one (``--out cmpout.csv`` made a
#: folder of that name, where a file was meant).
FILE_SUFFIXES = (".csv", ".json", ".toml", ".txt", ".md", ".graphml",
                 *(f".{f}" for f in FIGURE_FORMATS))


#: The folders netmodel makes beside an output folder (``.NAME`` then one of these, then
#: its process id, ``-`` and tempfile's random characters: :func:`side_folder_prefix`): the
#: staging folder the files are written into, and the old output's while it is replaced.
STAGING, RETIRED = ".netmodel-staging-", ".netmodel-retired-"
#: How many random characters tempfile puts in a name it makes (mkstemp, mkdtemp).
_RANDOM = 8
#: The longest name a folder holds where the file system does not say (most do: 255).
_NAME_MAX = 255


def side_folder_prefix(name: str, kind: str) -> str:
    """The start of the name of a folder of ``kind`` (:data:`STAGING`, :data:`RETIRED`)
    made beside the output folder ``name``; tempfile adds its random characters."""
    return f".{name}{kind}{os.getpid()}-"


def side_file_affixes(path: Path) -> tuple[str, str]:
    """The start and end of the name of the temporary file a file ``path`` is written
    through beside it; tempfile puts its random characters between."""
    return f".{path.name}.", ".tmp" + path.suffix


def _room_beside(path: Path, text: str, what: str, longer: int, made: str) -> None:
    """Refuse an output ``path`` whose name passes the longest name its folder holds once
    made ``longer`` bytes longer, as the ``made`` netmodel writes beside it is named: a name
    of 250 bytes passed every check, and the run's work was lost at its end ('cannot write
    output folder ...: File name too long').

    >>> _room_beside(Path("a" * 250), "a" * 250, "output folder", 35, "staging folder")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: output folder 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...aaaaaaaaaaaaaaa': its name is 250 bytes; netmodel writes it through a staging folder beside it whose name is 35 bytes longer, so it may be at most 220 bytes where a name holds 255
    """
    try:
        most = os.pathconf(path.parent if path.parent.is_dir() else ".", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):   # no pathconf on Windows
        most = _NAME_MAX
    size = len(os.fsencode(path.name))
    if size + longer > most:
        raise UserError(f"{what} {_describe(text)}: its name is {size:,} bytes; netmodel writes "
                        f"it through a {made} beside it whose name is {longer} bytes longer, so "
                        f"it may be at most {most - longer:,} bytes where a name holds {most:,}")


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
    start, end = side_file_affixes(p)
    _room_beside(p, text, what, len(start) - len(p.name) + _RANDOM + len(end),
                 "temporary file")
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
    longest = max(len(side_folder_prefix(resolved.name, k)) for k in (STAGING, RETIRED))
    _room_beside(resolved, os.fspath(path), what, longest - len(resolved.name) + _RANDOM,
                 "staging folder")
    if p.is_dir():
        if not os.access(p, os.W_OK | os.X_OK):
            raise UserError(f"{what} {_describe(path)} is not writable")
        entries = [e.name for e in os.scandir(p)]
        if entries and MANIFEST not in entries:
            raise UserError(f"{what} {_describe(path)} holds files netmodel did not write "
                            f"(no {MANIFEST}); netmodel replaces its output folder whole, so "
                            f"give a new or empty folder")
        kind = _not_a_file(p / MANIFEST) if entries else ""   # an empty folder: none
        listed = {} if kind else _listed(p / MANIFEST)
        others = sorted(set(entries) - set(listed) - {MANIFEST})
        if others:
            shown = ", ".join(repr(name) for name in others[:3])
            more = f" and {len(others) - 3:,} more" if len(others) > 3 else ""
            raise UserError(f"{what} {_describe(path)} holds {shown}{more}, which its "
                            f"{MANIFEST} does not list (a file netmodel did not write: an "
                            f"input, or your own); {_MOVE_IT_OUT}")
        if kind:
            # a folder (of one's notes), a link or a FIFO under the manifest's name: replaced
            # whole with the output, the folder of notes was deleted
            raise UserError(f"{what} {_describe(path)} holds {MANIFEST!r}, which is not the "
                            f"file netmodel writes there: {kind}; {_MOVE_IT_OUT}")
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


def _not_a_file(manifest: Path) -> str:
    """Why ``manifest`` (present) is no manifest netmodel wrote because it is not a regular
    file (the words after 'is not the file netmodel writes there: '), or ``""`` where it is
    one."""
    try:
        mode = manifest.lstat().st_mode
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    return "" if stat.S_ISREG(mode) else "it is a symbolic link" if stat.S_ISLNK(mode) else \
        "it is a folder" if stat.S_ISDIR(mode) else "it is not a regular file"


def _listed(manifest: Path) -> dict[str, object]:
    """The files ``manifest`` (a regular file: :func:`_not_a_file`) lists (its ``files``
    table), each name with its entry (what :func:`compute.outputs._manifest` wrote:
    ``{"bytes", "sha256"}``); none when it is not a manifest netmodel wrote (unreadable, too
    large, not JSON, no such table)."""
    try:
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


