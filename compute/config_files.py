"""Reading the data files users write (TOML or JSON) and checking their keys.

One place for the checks every catalog and config loader needs (GPUs, models, HuggingFace
``config.json``, calibration, scenarios): a file that cannot be read, is not text, is
malformed, is larger than ``max_bytes``, nests deeper than ``max_depth``, holds a number too
long to convert, repeats a key within one JSON object (as TOML refuses to: Python's json
kept the last without a word), has an unknown suffix, or has unknown or missing keys raises
:class:`~compute.errors.UserError` with one line naming the problem. The size is checked
before the file is read in full and the depth before it is parsed (a parser recurses once per
level, so ``[[[[...]]]]`` nested ten thousand deep would otherwise end in a
``RecursionError``), and again on the parsed document (TOML's dotted keys ``a.b.c...`` nest
without brackets). Values inside the document are checked by :mod:`compute.validate`.

Limits: :data:`DEFAULT_MAX_BYTES` (16 MiB: GPU, model and scenario files are a few KB, a
HuggingFace config.json under 10 KB), :data:`DEFAULT_MAX_DEPTH` (32 levels: the deepest
document netmodel reads nests 4 or 5 levels) and :data:`DEFAULT_MAX_VALUES` (values in
lists and tables, counted before parsing); each reader may pass its own.

>>> parse_table('a = 1', "toml", "x.toml")
{'a': 1}
>>> parse_table('[' * 100 + ']' * 100, "json", "deep.json")
Traceback (most recent call last):
...
compute.errors.UserError: deep.json nests deeper than 32 levels (100); is it the right file?
>>> parse_table('a = [' + '[],' * 1_000_000 + ']', "toml", "big.toml")
Traceback (most recent call last):
...
compute.errors.UserError: big.toml holds about 1,000,001 values in lists and tables, more than the 1,000,000 netmodel reads in such a file; is it the right file?
>>> parse_table('{"gpu": {"tp": 2, "tp": 4}}', "json", "x.json")
Traceback (most recent call last):
...
compute.errors.UserError: x.json is malformed JSON: key 'tp' is given twice in one object; give each key once
>>> check_keys("x.toml: [fabric]", {"builder": "ring", "colour": 1}, ("builder",), ("gpus",))
Traceback (most recent call last):
...
compute.errors.UserError: x.toml: [fabric]: unknown key(s) colour; allowed: builder, gpus
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
import tomllib
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import accumulate
from os import PathLike
from pathlib import Path
from typing import Any

from compute.errors import UserError, looks_like, odd_character
from compute.validate import below_smallest, below_smallest_words, describe

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_VALUES", "DuplicateKeyError",
           "FileRefusal", "FloatOverflow", "check_keys", "check_not_shipped_name", "document_depth", "finite_float",
           "noting_reads", "parse_table", "read_as_input", "read_bytes", "read_table",
           "read_text", "unique_keys"]

#: Largest document read (bytes).
DEFAULT_MAX_BYTES = 16 * 2**20
#: Deepest nesting of tables and lists accepted in a document.
DEFAULT_MAX_DEPTH = 32
#: Most values in lists and tables (the commas outside strings and comments, or the opening
#: brackets where more, counted before parsing) accepted in a document: the files netmodel ships hold
#: under 500, a calibrated profile's measurement tables 2 a row. tomllib takes 2-5 us and
#: about 150 bytes a value: a 16 MiB file of ``[],`` (5.6 million empty lists) took 30 s and
#: 0.9 GB to parse before its first key was refused, a million about 5 s.
DEFAULT_MAX_VALUES = 1_000_000

_FORMATS = {".toml": "toml", ".json": "json"}

# What to blank out before counting brackets: strings (and TOML comments), whose brackets do
# not nest. Unrolled-loop patterns: linear time, no backtracking blow-up.
_JSON_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_TOML_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
                           r"|'[^'\n]*'|#[^\n]*")
_NOT_BRACKETS = re.compile(r"[^\[\]{},]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class FileRefusal(ValueError):
    """Why :func:`read_bytes` did not read a path, for its caller to word: ``reason`` is
    ``"missing"`` (nothing there, or a dangling link), ``"folder"``, ``"special"`` (a FIFO,
    device or socket: not a regular file), ``"large"`` (``size``: the bytes the file says
    it holds, or those read, over ``limit``) or ``"unreadable"`` (``strerror``: the OS's
    reason, such as a loop of symbolic links or a name too long)."""

    def __init__(self, reason: str, *, size: int = 0, limit: int = 0, strerror: str = ""
                 ) -> None:
        super().__init__(reason)
        self.reason, self.size, self.limit, self.strerror = reason, size, limit, strerror


# Opened without blocking (a FIFO with no writer would otherwise wait forever in open()) and
# as bytes; a flag a platform lacks is 0 (O_NONBLOCK on Windows, O_BINARY on POSIX).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


#: The files :func:`read_bytes` read inside :func:`noting_reads` ((device, inode) -> the
#: path as given); None outside one.
_READ: ContextVar[dict[tuple[int, int], str] | None] = ContextVar("netmodel_files_read",
                                                                   default=None)


@contextmanager
def noting_reads() -> Iterator[dict[tuple[int, int], str]]:
    """Within the block, each file :func:`read_bytes` reads is noted, so that an output of
    the same run can be told from its inputs (:func:`read_as_input`): the command line runs
    each command in one, and :func:`compute.output_paths.check_file_path` refuses to replace an
    input with an output. A block inside another notes into the outer one.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.toml")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"a = 1")
    >>> with noting_reads():
    ...     _ = read_bytes(path, 100)
    ...     read_as_input(path) == path
    True
    >>> read_as_input(path) is None   # outside the block nothing is noted
    True
    """
    notes = _READ.get()
    if notes is not None:
        yield notes
        return
    token = _READ.set({})
    try:
        yield _READ.get()
    finally:
        _READ.reset(token)


def read_as_input(path: str | PathLike[str]) -> str | None:
    """The path (as given to :func:`read_bytes`) by which the enclosing
    :func:`noting_reads` block read the file ``path`` names (the same file under another
    name too), or None."""
    notes = _READ.get()
    if not notes:
        return None
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return notes.get((info.st_dev, info.st_ino))


def read_bytes(path: str | PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the user's file ``path``, read safely: opened once, so the file checked
    is the file read; refused if it is not a regular file or holds more than ``max_bytes``.

    The open does not block (a FIFO with no writer), ``fstat`` of the open file tells a
    folder, FIFO, device or socket, and its size is checked before reading; the read takes
    a buffer of the file's size and a byte, and reads on (up to the limit and a byte) only
    if the file grew since its size was taken, so never more than ``max_bytes + 1`` bytes.
    The readers of every user's file use it (:func:`read_text`;
    :mod:`topologies.io` for fabric files), each wording the refusals its own way.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    max_bytes : int
        Most bytes accepted.

    Returns
    -------
    bytes
        The file's content, at most ``max_bytes`` long.

    Raises
    ------
    FileRefusal
        With ``reason`` ``"missing"``, ``"folder"``, ``"special"``, ``"large"`` or
        ``"unreadable"`` (the OS's ``strerror``).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "a.toml")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"a = 1")
    >>> read_bytes(path, 100)
    b'a = 1'
    >>> for where, limit in ((path, 4), (folder, 100), (path + "x", 100)):
    ...     try:
    ...         read_bytes(where, limit)
    ...     except FileRefusal as refusal:
    ...         print(refusal.reason, refusal.size, refusal.limit)
    large 5 4
    folder 0 0
    missing 0 0
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise FileRefusal("missing") from None
    except IsADirectoryError:
        raise FileRefusal("folder") from None
    except OSError as exc:   # a name over the file system's limit, a loop of links, EACCES
        raise FileRefusal("unreadable", strerror=exc.strerror or str(exc)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise FileRefusal("folder" if stat.S_ISDIR(info.st_mode) else "special")
    if (notes := _READ.get()) is not None:
        notes.setdefault((info.st_dev, info.st_ino), os.fspath(path))
    with os.fdopen(fd, "rb") as fh:
        if info.st_size > max_bytes:
            raise FileRefusal("large", size=info.st_size, limit=max_bytes)
        try:
            raw = fh.read(info.st_size + 1)   # a buffer of the file's size, not the limit's
            if len(raw) > info.st_size:   # grown since its size was read: on to the limit
                parts, total = [raw], len(raw)
                while total <= max_bytes and (
                        more := fh.read(min(1 << 20, max_bytes + 1 - total))):
                    parts.append(more)
                    total += len(more)
                raw = b"".join(parts)
        except OSError as exc:
            raise FileRefusal("unreadable", strerror=exc.strerror or str(exc)) from None
    if len(raw) > max_bytes:   # the bytes read, not the size said
        raise FileRefusal("large", size=len(raw), limit=max_bytes)
    return raw


#: UTF-8's byte-order mark: one at the start of a file is read past (editors on Windows
#: write it); a second is a character no reader takes.
BOM = "\ufeff".encode()


def check_one_bom(data: bytes, name: str) -> None:
    """Refuse ``data`` (a file's bytes, ``name`` naming it) that starts with two UTF-8
    byte-order marks: the parsers read past one and then stop at the other, saying only
    'invalid statement at line 1, column 1', where nothing is seen.

    >>> check_one_bom(BOM + b"a = 1", "x.toml")
    >>> check_one_bom(BOM + BOM + b"a = 1", "x.toml")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: x.toml starts with 2 byte-order marks (U+FEFF, invisible in most editors); save it as UTF-8 with one or none
    """
    if data.startswith(BOM + BOM):
        count = 2
        while data.startswith(BOM, count * len(BOM)):
            count += 1
        raise UserError(f"{name} starts with {count} byte-order marks (U+FEFF, "
                        f"invisible in most editors); save it as UTF-8 with one or none")


def read_text(path: str | PathLike[str], what: str = "file", *, max_bytes: int = DEFAULT_MAX_BYTES
             ) -> str:
    """The text of ``path`` (UTF-8); a missing, unreadable, binary (not UTF-8, or holding a
    NUL byte, as UTF-16 without its byte-order mark does), larger than ``max_bytes`` or not
    regular file (a FIFO, which would block, or a device) is a UserError. Never reads more
    than ``max_bytes + 1`` bytes (:func:`read_bytes`)."""
    path = Path(path)
    name = f"{what} {str(path)!r}"
    try:
        data = read_bytes(path, max_bytes)
    except FileRefusal as refusal:
        raise UserError({
            "missing": f"{name} does not exist",
            "folder": f"cannot read {name}: it is a folder, not a file",
            "special": f"{name} is not a regular file (a FIFO, device or socket); give a file",
            "large": f"{name} is larger than the {max_bytes:,}-byte limit for such files; "
                     f"is it the right file?",
            "unreadable": f"cannot read {name}: {refusal.strerror}",
        }[refusal.reason]) from None
    check_one_bom(data, name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{name} is not a UTF-8 text file") from None
    if "\x00" in text:   # valid UTF-8, but no text file holds one: UTF-16 without its BOM
        at = text.index("\x00")
        line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        raise UserError(f"{name} holds a NUL byte (\\x00) at line {line}, column {column}: not "
                        f"UTF-8 text (UTF-16 without its byte-order mark, or a binary file?); "
                        f"save it as UTF-8")
    return text


def _structure(text: str, fmt: str) -> tuple[int, int]:
    """Deepest nesting of ``[``/``{`` outside strings (and TOML comments), and about the
    values of its lists and tables: the commas there, or the opening brackets where more
    (``[1, 2, 3]`` 2, ``[[], [], []]`` 4)."""
    pattern = _JSON_STRINGS if fmt == "json" else _TOML_STRINGS
    marks = _NOT_BRACKETS.sub("", pattern.sub("", text))
    values = max(marks.count(","), marks.count("[") + marks.count("{"))
    brackets = marks.replace(",", "")
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0), values


def document_depth(doc: object, limit: int | None = None) -> int:
    """Nesting depth of a parsed document (a scalar is 0, ``{}`` and ``[]`` are 1), walked
    without recursion; stops early once ``limit`` is passed.

    >>> document_depth({"a": [1, {"b": 2}]}), document_depth(3)
    (3, 0)
    """
    if not isinstance(doc, dict | list):
        return 0
    peak = 0
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        peak = max(peak, depth)
        if limit is not None and peak > limit:
            return peak
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return peak


class DuplicateKeyError(ValueError):
    """A JSON object that gives one key twice (raised by :func:`unique_keys`)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} is given twice in one object; give each key once")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook``: the object as a dict, or
    :class:`DuplicateKeyError` naming a key it gives twice (``json.loads`` alone keeps the
    last value, which TOML and the project's readers refuse).

    >>> json.loads('{"a": 1, "b": 2}', object_pairs_hook=unique_keys)
    {'a': 1, 'b': 2}
    """
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        raise DuplicateKeyError(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


class FloatOverflow(ValueError):
    """A number written in a document that no float holds: past a float's range (``1e400``:
    Python reads inf) or, not zero, below the smallest normal float (``1e-400``: Python reads
    0.0; ``1e-310``: a float that has lost its digits; :func:`compute.validate.below_smallest`).
    :meth:`message` is the one line that names it."""

    def __init__(self, text: str, below: bool = False) -> None:
        super().__init__(text)
        self.text, self.below = text, below

    def message(self, where: str, document: str | None = None,
                allowed: Callable[[str], str | None] | None = None,
                key: str | None = None) -> str:
        """The refusal, naming ``where`` and, given the ``document``'s text, the line (and
        the key, and a TOML table's section) the number is written on. ``allowed``: the
        range of a key whose value may not be 0 (None where it may), in the words of the
        reader that knows it, given the key (``key``, else :func:`number_key`'s), for a
        number below the smallest (:func:`~compute.validate.below_smallest_words`)."""
        at = "" if document is None else number_place(document, self.text)
        if self.below:
            if key is None and allowed is not None and document is not None:
                key = number_key(document, self.text)
                if key == "value":   # a row's value: the row's table names its range
                    key = _row_name(at) or key
            words = below_smallest_words(key or "it", allowed(key) if allowed and key else None)
            return f"{where} holds the number {self.text}{at}, {words}"
        return (f"{where} holds the number {self.text}{at}, beyond the range of a float "
                "(at most about 1.8e308); give a number within it")


def number_place(document: str, literal: str) -> str:
    r"""Where in ``document`` (TOML or JSON text) the number ``literal`` is first written as
    a value: ``" at line N (KEY)"``, a TOML key with its table's header (``[fabric]
    planes``), a JSON key with the keys of the objects it is in (``"n" > "lat"``, lists
    passed over); ``""`` where it is not found (the parser's text differs).

    >>> number_place('a = 1\n[fabric]\nplanes = 1e400  # x\n', "1e400")
    ' at line 3 ([fabric] planes)'
    >>> number_place('{"n": {\n "lat": 1e-400}}', "1e-400")
    ' at line 2 ("n" > "lat")'
    >>> number_place('{"edges": [{"a": 1}, {"b": 2,\n "lat": 1e-400}]}', "1e-400")
    ' at line 2 ("edges" > "lat")'
    """
    import re

    found = re.search(rf"(?<![\w.+-]){re.escape(literal)}(?![\w.])", document)
    if found is None:
        return ""
    start = document.rfind("\n", 0, found.start()) + 1
    before = document[start:found.start()]
    headers = re.findall(r"(?m)^[ \t]*(\[\[?[^\]\n]+\]\]?)[ \t]*(?:#.*)?$",
                         document[:start]) if "[" in document[:start] else []
    json_key = re.findall(r'"((?:[^"\\]|\\.)*)"\s*:', before)
    if json_key and len(document) <= _PATH_CHARS:   # the objects it is in, too
        json_key = _json_keys(document[:found.start()])
    toml_key = re.match(r"\s*([\w\"'.-][^=]*?)\s*=", before)
    key = (" > ".join(f'"{k}"' for k in json_key[-4:]) if json_key else
           " ".join(filter(None, (headers[-1] if headers else "", toml_key.group(1))))
           if toml_key else "")
    number = document.count("\n", 0, start) + 1
    return f" at line {number}" + (f" ({key})" if key else "")


def _row_name(place: str) -> str | None:
    r"""The name of the table whose ``value`` a :func:`number_place` names (a sourced row,
    ``[parameters.gemm_efficiency]`` with ``value = ...``), or None.

    >>> _row_name(" at line 4 ([parameters.gemm_efficiency] value)")
    'gemm_efficiency'
    >>> _row_name(' at line 1 ("parameters" > "step_overhead_s" > "value")')
    'step_overhead_s'
    """
    found = re.search(r'\(\[(?:[^\]]*\.)?"?([^\]".]+)"?\] value\)$', place) \
        or re.search(r'"([^"]*)" > "value"\)$', place)
    return found.group(1) if found else None


def number_key(document: str, literal: str) -> str | None:
    r"""The key whose value the number ``literal`` first written in ``document`` (TOML or
    JSON text) is (:func:`number_place`'s, its table or the objects it is in left out), or
    None where it is found under no key.

    >>> number_key('a = 1\n[fabric]\nplanes = 1e400\n', "1e400")
    'planes'
    >>> number_key('{"edges": [{"a": 1}, {"b": 2,\n "lat": 1e-400}]}', "1e-400")
    'lat'
    """
    place = number_place(document, literal)
    found = re.search(r'\((?:.* > )?(?:\[[^\]]*\] )?"?([^"()]*?)"?\)$', place)
    return found.group(1) if found else None


#: Largest document whose JSON keys :func:`number_place` walks from its start (beyond, the
#: key of the number's own line alone).
_PATH_CHARS = 4 * 2**20


def _json_keys(prefix: str) -> list[str]:
    """The keys of the objects a JSON value is in, outermost first, from the text before
    it (``prefix``): each ``{``/``[`` opened keeps the key it is the value of."""
    import re

    stack: list[str | None] = []
    last = None
    for token in re.finditer(r'"((?:[^"\\]|\\.)*)"(\s*:)?|[{}\[\]]', prefix):
        text = token.group(0)
        if token.group(2) is not None:
            last = token.group(1)
        elif text in "{[":
            stack.append(last)
            last = None
        elif text in "}]":
            if stack:
                stack.pop()
            last = None
    return [k for k in (*stack, last) if k is not None]


def finite_float(text: str) -> float:
    """``parse_float`` of TOML and JSON: ``float(text)``, but a number past a float's range
    (``1e400``, which Python reads as inf) or not zero and below the smallest normal float
    (``1e-400``, which Python reads as 0.0) is refused as typed, as a number typed on the
    command line is (:func:`compute.validate.read_number`); ``inf`` and ``nan`` written as
    such stay floats, for the value's own check to name. Also the GraphML fabric reader's
    float (:mod:`topologies.graphml`).

    >>> finite_float("1e-300"), finite_float("-0.0e-400")
    (1e-300, -0.0)
    >>> finite_float("1e-400")
    Traceback (most recent call last):
    ...
    compute.config_files.FloatOverflow: 1e-400
    """
    value = float(text)
    if math.isinf(value) and "inf" not in text.lower():
        raise FloatOverflow(text)
    if below_smallest(text.replace("_", ""), value):   # TOML groups digits with '_'
        raise FloatOverflow(text, below=True)
    return value


def parse_table(text: str, fmt: str, where: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
                max_depth: int = DEFAULT_MAX_DEPTH, max_values: int = DEFAULT_MAX_VALUES,
                allowed: Callable[[str], str | None] | None = None) -> Any:
    """Parse TOML or JSON ``text`` (``fmt`` is ``"toml"`` or ``"json"``) within the size,
    depth and value-count limits (``allowed``: :meth:`FloatOverflow.message`'s)."""
    if fmt not in ("json", "toml"):
        raise ValueError(f"unknown format {fmt!r}")  # a programming error, not a user's
    if not isinstance(text, str):
        raise UserError(f"{where} must be text, got {describe(text)}")
    if len(text) > max_bytes:
        raise UserError(f"{where} is larger than the {max_bytes:,}-byte limit for such files")
    depth, values = _structure(text, fmt)
    if depth > max_depth:
        raise UserError(f"{where} nests deeper than {max_depth} levels ({depth}); is it the "
                        f"right file?")
    if values > max_values:
        raise UserError(f"{where} holds about {values:,} values in lists and tables, more "
                        f"than the {max_values:,} netmodel reads in such a file; is it the "
                        f"right file?")
    try:
        doc = json.loads(text, object_pairs_hook=unique_keys, parse_float=finite_float) \
            if fmt == "json" else tomllib.loads(text, parse_float=finite_float)
    except FloatOverflow as exc:
        raise UserError(exc.message(where, text, allowed)) from None
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, DuplicateKeyError) as exc:
        raise UserError(f"{where} is malformed {fmt.upper()}: {exc}") from None
    except RecursionError:
        raise UserError(f"{where} nests too deeply to read (limit {max_depth} levels)") from None
    except ValueError as exc:  # an integer beyond Python's digit limit, a bad date
        if "digits" in str(exc):
            raise UserError(f"{where} holds a number of more than "
                            f"{sys.get_int_max_str_digits()} digits") from None
        raise UserError(f"{where} is malformed {fmt.upper()}: {exc}") from None
    depth = document_depth(doc, max_depth)
    if depth > max_depth:
        raise UserError(f"{where} nests deeper than {max_depth} levels; is it the right file?")
    return doc


#: The suffixes that make a name a file's path where a catalog name is also taken (a model,
#: a GPU; a scenario reads ``.toml`` only): :func:`missing_named_file`.
FILE_SUFFIXES = (".toml", ".json")


def missing_named_file(ref: str, what: str,
                       names: Collection[str] | Callable[[], Collection[str]], entry: str,
                       suffixes: Sequence[str] = FILE_SUFFIXES) -> UserError | None:
    """The refusal of ``ref``, a name ending in one of ``suffixes`` where no such file
    exists and the name less its suffix is one of ``names`` (any case; a callable giving
    them is called only then): the rule is said (a name ending in one of ``suffixes`` is
    read as a file's path, never as a catalog name,
    so a file beside the catalog's name is not shadowed by it and a missing file is not
    run as the catalog's entry without a word) with the ``entry`` it meant. None where the
    rule needs no word: a file of that path exists (it is read), the name names no entry
    (the reader's own refusal), or the suffix is another.

    >>> str(missing_named_file("Llama-3-8B.TOML", "model file", ["Llama-3-8B"],
    ...                        "the catalog's model"))
    "model file 'Llama-3-8B.TOML' does not exist; a name ending in .toml or .json is read as a file's path: the catalog's model 'Llama-3-8B' is named without '.TOML'"
    >>> missing_named_file("Llama-9.json", "model file", ["Llama-3-8B"], "model") is None
    True
    """
    suffix = next((x for x in suffixes if ref.lower().endswith(x)), None)
    if suffix is None or os.path.lexists(ref):
        return None
    stem = ref[:-len(suffix)]
    names = names() if callable(names) else names
    folded = [n for n in names if n.casefold() == stem.casefold()]   # a folder: no name
    if len(folded) != 1:
        return None
    rule = " or ".join(suffixes)
    return UserError(f"{what} {ref!r} does not exist; a name ending in {rule} is read as a "
                     f"file's path: {entry} {folded[0]!r} is named without "
                     f"{ref[-len(suffix):]!r}")


def read_table(path: str | PathLike[str], what: str = "file",
               suffixes: Collection[str] = (".toml", ".json"), *,
               max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH,
               allowed: Callable[[str], str | None] | None = None) -> Any:
    """Read and parse a TOML or JSON file, chosen by its suffix, within the size and depth
    limits (``allowed``: :meth:`FloatOverflow.message`'s)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in suffixes:
        raise UserError(f"{what} {str(path)!r} has unknown file type {suffix!r}; allowed: "
                        f"{', '.join(suffixes)}")
    text = read_text(path, what, max_bytes=max_bytes)
    return parse_table(text, _FORMATS[suffix], str(path), max_bytes=max_bytes,
                       max_depth=max_depth, allowed=allowed)


def check_keys(where: str, table: object, required: Collection[str],
               optional: Collection[str] = ()) -> None:
    """Refuse a table that is not a dict, has keys outside ``required`` + ``optional``, or
    lacks one of ``required``."""
    if not isinstance(table, dict):
        raise UserError(f"{where} must be a table of keys, got {describe(table)}")
    allowed = (*required, *optional)
    unknown = [k for k in table if k not in allowed]
    if unknown:
        shown = ", ".join(str(k)[:60] for k in unknown[:10]) + (", ..." if len(unknown) > 10 else "")
        raise UserError(f"{where}: unknown key(s) {shown}; allowed: {', '.join(allowed)}")
    missing = [k for k in required if k not in table]
    if missing:
        raise UserError(f"{where}: missing key(s) {', '.join(missing)}")


def check_not_shipped_name(where: str, said: str, name: str, kind: str,
                           shipped: Sequence[str], same: Callable[[str], bool]) -> None:
    """Refuse a file's ``kind`` (profile, workload) named ``name`` (``said``: how the file
    names it, e.g. ``[profile] name 'x'``) as a shipped one of ``shipped`` (case aside) unless it
    is that one (``same(shipped_name)``, the file's values against the shipped one's): its
    figures would be reported under the shipped one's name, as a GPU file's GPU of a catalog
    GPU's name would be (:func:`compute.hardware.load_gpu_file`).

    >>> check_not_shipped_name("w.toml", "name 'Coding'", "Coding", "workload", ("coding",),
    ...                        lambda n: False)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: w.toml: name 'Coding' already names the shipped workload 'coding' (case aside), whose values differ from this file's; give yours another name (its figures would be reported as the shipped workload's)
    """
    folded = name.casefold()
    hit = next((n for n in shipped if n.casefold() == folded), None)
    like = looks_like(name, shipped) if hit is None else None   # 'Сoding', a Cyrillic ES
    if like is not None:
        raise UserError(f"{where}: {said} prints as the shipped {kind} {like!r} but is another "
                        f"name (it has {odd_character(name, like)}); give yours a name of its own")
    if hit is None or (hit == name and same(hit)):
        return
    head = f"{where}: {said} already names the shipped {kind}"
    if same(hit):   # the case alone
        raise UserError(f"{head} {hit!r} (case aside); name it {hit!r} as shipped, or give "
                        f"it a name of its own")
    named = repr(hit) if hit == name else f"{hit!r} (case aside)"
    raise UserError(f"{head} {named}, whose values differ from this file's; give yours "
                    f"another name (its figures would be reported as the shipped {kind}'s)")
