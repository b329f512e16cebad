"""The guards of reading a fabric file: its size before it is read, and its JSON's nesting,
containers, numbers and keys before and as it is parsed.

A hostile file gets a one-line UserError naming it, never a traceback or a machine's worth
of memory: a file over :func:`~topologies.limits.max_file_bytes` is refused before it is
read (:func:`read_file_bytes`, :func:`check_file_size`); JSON nested deeper than
:data:`~topologies.limits.MAX_DEPTH` (:func:`json_depth`) or holding more arrays and objects
than a fabric within the node and edge limits needs is refused before it is parsed; a
number past a float's range (``1e400``) is named as typed, and a key given twice in an
object is refused (:func:`load_json`). :mod:`topologies.io` reads fabric files through
these; the GraphML pass has its own (:func:`topologies.graphml.parse`).

>>> load_json(b'{"nodes": [], "edges": []}', "f.json")
{'nodes': [], 'edges': []}
>>> load_json(b'{"a": 1, "a": 2}', "f.json")
Traceback (most recent call last):
...
compute.errors.UserError: f.json is not a readable json fabric: key 'a' is given twice in one object; give each key once
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from compute.config_files import (
    DuplicateKeyError,
    FileRefusal,
    FloatOverflow,
    check_one_bom,
    finite_float,
    read_bytes,
    unique_keys,
)
from compute.errors import UserError
from compute.units import counted
from topologies.limits import ENV, MAX_DEPTH, max_edges, max_file_bytes, max_nodes, nonzero_range

__all__ = ["check_file_size", "fabric_file", "json_depth", "load_json", "read_file_bytes"]

_STRUCTURE = bytes(c for c in range(256) if c not in b'"[]{}:')


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text ``raw``, found without parsing
    (brackets inside strings do not count). Escapes are dropped first (``\\\\`` pairs, then
    ``\\"``), then everything but quotes and brackets, so the rest is a short string.

    >>> json_depth(b'{"a": [1, {"b": "[[[[\\\\"}], "c": "\\"{"}')
    3
    """
    return _json_structure(raw)[0]


def _json_structure(raw: bytes) -> tuple[int, int, int, int]:
    """:func:`json_depth` of ``raw``, the arrays and objects it opens, the objects alone and
    the colons (outside strings: in JSON text that parses, one a key of an object).

    >>> _json_structure(b'{"a": [[], {}], "b": "[{:"}')
    (3, 4, 2, 2)
    """
    import numpy as np

    if b"\\" in raw:   # a scan; the copies only for a text with escapes
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = raw.translate(None, _STRUCTURE)
    inside, depth, deepest, opens = 0, 0, 0, 0   # in a string at the block's start; depth
    objects = colons = 0
    for at in range(0, len(kept), _BLOCK):   # blocks: small arrays (the same peak memory)
        b = np.frombuffer(kept, dtype=np.uint8, count=min(_BLOCK, len(kept) - at), offset=at)
        quote = b == 0x22
        odd = np.bitwise_xor.accumulate(quote.view(np.uint8))   # quotes so far, odd: 1
        if inside:
            odd ^= 1
        inside = int(odd[-1])
        out = b[(odd == 0) & ~quote]
        colon = out == 0x3A
        n = int(np.count_nonzero(colon))
        if n:
            colons += n
            out = out[~colon]
        objects += int(np.count_nonzero(out == 0x7B))   # '{'
        steps = np.where(out & 0x02, 1, -1)  # '[' '{' have bit 1 set
        if steps.size:
            run = np.cumsum(steps, dtype=np.int64)
            deepest = max(deepest, depth + int(run.max()))
            depth += int(run[-1])
            opens += (steps.size + int(run[-1])) // 2   # +1s: (size + sum) / 2
    return deepest, opens, objects, colons


#: Bytes of brackets and quotes :func:`json_depth` reads at a time.
_BLOCK = 1 << 16


def check_file_size(path: Path, size: int) -> None:
    """Refuse the fabric file ``path`` of ``size`` bytes (read by a caller) where it is over
    :func:`~topologies.limits.max_file_bytes`, as :func:`read_file_bytes` refuses it."""
    limit = max_file_bytes()
    if size > limit:
        raise UserError(_too_large(path, size, limit))


def fabric_file(path: str | Path) -> str:
    """How a message names the fabric file ``path``: its text quoted, as a workload, profile
    or measurement file is named (a blank at either end, or a name of only digits, seen).

    >>> fabric_file(Path("f.json"))
    "fabric file 'f.json'"
    """
    return f"fabric file {str(path)!r}"


def _too_large(path: Path, size: int, limit: int) -> str:
    return (f"{fabric_file(path)} is {size:,} bytes, over the limit of {limit:,}; raise "
            f"NETMODEL_MAX_FABRIC_FILE_BYTES to read it")


def read_file_bytes(path: Path) -> bytes:
    """The bytes of ``path``, by :func:`compute.config_files.read_bytes` (opened once
    without blocking, checked open, never more than the limit and a byte read), its
    refusals worded for a fabric file: missing, not a regular file (a folder, FIFO or
    device), over :func:`~topologies.limits.max_file_bytes` (the size named), or unreadable,
    the OS's reason named (a loop of symbolic links was 'does not exist': ``exists()`` is
    False for it)."""
    try:
        return read_bytes(path, max_file_bytes())
    except FileRefusal as refusal:
        raise UserError({
            "large": _too_large(path, refusal.size, refusal.limit),
            "missing": f"{fabric_file(path)} does not exist",
            "folder": f"{fabric_file(path)} is not a file",
            "special": f"{fabric_file(path)} is not a file",
            "unreadable": f"cannot read {fabric_file(path)}: {refusal.strerror}",
        }[refusal.reason]) from None


class _Floats(dict):
    """Number text -> float, by :func:`compute.config_files.finite_float` (``1e400`` is
    refused as typed, not read as inf) on first sight: ``json.loads``' ``parse_float`` is
    this dict's ``__getitem__``, a lookup in C for the few texts a fabric repeats (a Python
    ``parse_float`` per number added ~10% to the 131,072-GPU fat tree's 0.8 s parse; this
    way none), its floats shared. At most :data:`_FLOATS` texts are kept."""

    __slots__ = ()

    def __missing__(self, text: str) -> float:
        value = finite_float(text)
        if len(self) < _FLOATS:
            self[text] = value
        return value


_FLOATS = 4096


#: Arrays and objects a fabric file may hold beyond one a node and one an edge: the
#: document, its graph, nodes and edges, and the graph's own tables (builder args, GPU types).
_GRAPH_CONTAINERS = 100_000


#: Largest JSON fabric whose text a refusal of a number searches for the number's line.
_PLACE_BYTES = 64 * 2**20


def load_json(raw: bytes | str | list, where: str) -> Any:
    """The JSON document ``raw`` (bytes or text, or a list holding them alone, emptied here:
    the bytes let go once decoded, before the parse, where no one else holds them), as
    ``json.loads`` reads it with every object's keys checked (:func:`unique_keys`) and every
    number by :class:`_Floats`; refused in one line naming ``where``.

    Parsed without the per-object check first (a Python call per object: 5.2 -> 3.9 s CPU
    of the 1,024,000-GPU fat tree's 600 MB), which stands where every object's keys are
    counted: the text's colons outside strings, one a key, against the parsed objects' keys
    (:func:`_keys_once`); a key given twice loses one, so the counts differ. Where they
    differ, or the first parse fails, it is parsed again with the check, which raises what
    it always raised (a key given twice before a bad number named first)."""
    box = raw if isinstance(raw, list) else None
    if box is not None:
        raw = box.pop()
    data = raw.encode() if isinstance(raw, str) else raw
    del raw
    check_one_bom(data, where)
    depth, opens, objects, keys = _json_structure(data)
    if depth > MAX_DEPTH:
        raise UserError(f"{where}: JSON nested {depth} deep; at most {MAX_DEPTH} (a fabric "
                        "needs 4)")
    # each costs 60-250 bytes parsed, from 3 bytes of text ('[],'): under the file size limit
    # a file of empty lists took 20 times its size (30 MB: 0.85 GB); a fabric within the
    # node and edge limits needs one a node and an edge, so its memory bounds theirs
    most = max_nodes() + max_edges() + _GRAPH_CONTAINERS
    if opens > most:
        raise UserError(f"{where}: JSON holds {opens:,} arrays and objects; a fabric within "
                        f"the limits of {counted(max_nodes(), 'node')} and "
                        f"{counted(max_edges(), 'edge')} holds "
                        f"at most {most:,} (one a node and an edge, {_GRAPH_CONTAINERS:,} "
                        f"for the rest); raise {ENV['nodes']} / {ENV['edges']} if the "
                        f"machine has the memory")
    floats = _Floats()
    encoding = json.detect_encoding(data)
    try:   # as json.loads decodes bytes
        text = data.decode(encoding, "surrogatepass")
    except ValueError as exc:
        _refuse(exc, where, data)
    if box is not None and encoding in ("utf-8", "utf-8-sig"):
        data = None   # let go: the text holds the same, encoded back where needed
    try:
        doc = json.JSONDecoder(parse_float=floats.__getitem__).decode(text)
    except ValueError:
        doc = None
    if doc is not None and _keys_once(doc, objects, keys):
        return doc
    del doc
    try:   # json.loads of the bytes, their decoding done: the same document or error
        return json.JSONDecoder(object_pairs_hook=unique_keys,
                                parse_float=floats.__getitem__).decode(text)
    except ValueError as exc:
        if data is None and isinstance(exc, FloatOverflow) and len(text) <= _PLACE_BYTES:
            data = text.encode(encoding, "surrogatepass")
        _refuse(exc, where, data)


def _refuse(exc: ValueError, where: str, data: bytes | None) -> NoReturn:
    """The one line for ``exc``, raised parsing the JSON ``data`` (its bytes; None: not
    needed, a text too long to search for a number's place)."""
    if isinstance(exc, FloatOverflow):   # json alone read 1e400 as inf: 'got inf', never typed
        text = data.decode("utf-8", "replace") if data is not None and \
            len(data) <= _PLACE_BYTES else None
        raise UserError(exc.message(where, text, nonzero_range)) from None
    if isinstance(exc, DuplicateKeyError):   # json alone kept the last value without a word
        raise UserError(f"{where} is not a readable json fabric: {exc}") from None
    # JSONDecodeError, bad UTF-8, an integer of too many digits
    if not isinstance(exc, json.JSONDecodeError) and "digits" in str(exc):
        # Python's advice (sys.set_int_max_str_digits) is no user's: the file's number
        raise UserError(f"{where} holds a number of more than "
                        f"{sys.get_int_max_str_digits():,} digits") from None
    raise UserError(f"{where} is not a readable json fabric: {exc}") from None


#: A list of at least this many items, all of them objects, is counted whole by
#: :func:`_keys_once` (its objects and their keys, in C), not walked.
_COUNTED_WHOLE = 64


def _keys_once(doc: Any, objects: int, keys: int) -> bool:
    """Whether the document ``doc``, parsed from text of ``objects`` objects and ``keys``
    colons outside strings (:func:`_json_structure`), keeps every key its text gives: its
    objects are as many as the text's and their keys as many as the colons. The lists of
    nodes and edges (long lists of objects only) are counted whole, the objects in them not
    looked into: where those hold objects of their own, the objects found are fewer than the
    text's, and the answer is False (then :func:`load_json` checks every object).

    >>> _keys_once(json.loads('{"a": [{"b": 1}, {"c": {"d": 2}}]}'), 4, 4)
    True
    >>> _keys_once(json.loads('{"a": 1, "a": 2}'), 1, 2)
    False
    >>> _keys_once(json.loads('0'), 0, 0)     # a bare number: no object to lose
    True
    """
    found = pairs = 0
    stack = [doc] if doc.__class__ is dict or doc.__class__ is list else []   # a bare scalar
    while stack:
        x = stack.pop()
        if x.__class__ is dict:
            found += 1
            pairs += len(x)
            stack.extend(v for v in x.values() if v.__class__ is dict or v.__class__ is list)
        elif len(x) >= _COUNTED_WHOLE and set(map(type, x)) == {dict}:
            found += len(x)
            pairs += sum(map(len, x))
        else:
            stack.extend(v for v in x if v.__class__ is dict or v.__class__ is list)
    return found == objects and pairs == keys
