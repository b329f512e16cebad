"""The text rule of a fabric graph: every text it carries prints and draws as it reads.

A graph's texts (its attributes' string values and those of ``args``, its node ids, and the
string attributes of nodes and edges that the schema does not otherwise type, such as a
circuit's ``via`` or a file's own) are printed in tables and drawn in figures, so each is
one line with no control or format character and no ``$`` (:func:`text_problem` says why a
text breaks the rule), and a node id is non-empty and at most :data:`MAX_NODE_ID`
characters.

Interface: :func:`text_problem` (why one text breaks the rule, or None);
:func:`check_node_ids`, :func:`check_graph_texts` and :func:`check_attribute_texts` (raise
UserError naming the first text at fault, its message opening with ``where``, by default
:data:`INVALID`); :data:`UNPRINTABLE` and :data:`FORMULA` (the two wordings of why);
:func:`near_miss` (the name a misspelt one looks like, for the schema's refusal of an
attribute it does not read).
:func:`topologies.schema.validate` calls the three checks; the fabric-file readers
(:mod:`topologies.io`) call :func:`check_node_ids` and :func:`text_problem` first, to name
the file.
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import chain
from typing import NoReturn

import networkx as nx

from compute.errors import UserError
from compute.validate import describe

__all__ = ["FORMULA", "INVALID", "MAX_NODE_ID", "UNPRINTABLE", "check_attribute_texts",
           "check_graph_texts", "check_node_ids", "invalid", "near_miss", "text_problem"]

#: How the refusal of a fabric graph opens: this module's checks' and
#: :func:`topologies.schema.validate`'s.
INVALID = "invalid fabric graph"


def invalid(msg: str) -> NoReturn:
    """Refuse a fabric graph: UserError of ``msg`` after :data:`INVALID` (every schema
    module's checks refuse so).

    >>> invalid("edge 'a'-'b' lacks attribute(s) lanes")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: edge 'a'-'b' lacks attribute(s) lanes
    """
    raise UserError(f"{INVALID}: {msg}")


#: The longest node id a fabric may hold, in characters: builders name nodes in under 40; a
#: longer id is data in the wrong place, and drawing or printing it costs its length at
#: every use (a file of 100,000-character ids took minutes to plot; hostile round 12).
MAX_NODE_ID = 256
#: Why a text is refused (:func:`text_problem`; one wording for every check).
UNPRINTABLE = ("holds a control character or a format character (a newline, tab, ESC, "
               "U+202E, a zero-width character...)")
FORMULA = "holds '$' (a figure reads the text between two as a formula)"


def text_problem(text: str) -> str | None:
    """Why ``text`` would not print or draw as it reads, or None: a graph's texts (its name,
    spec, builder, dims, node ids, a node's or an edge's string attributes) are printed in
    tables and drawn in figures, so each must be one line with no control or format
    character (:meth:`str.isprintable`: no newline, tab, ESC, bidirectional control,
    zero-width character, line separator or lone surrogate; a newline printed a line of a
    file's choosing) and no ``$`` (matplotlib reads the text between two as a formula;
    ``$\\undefinedmacro$`` raised ParseFatalException from ``topology plot``).

    >>> text_problem("fat-tree:k=8") is None
    True
    >>> text_problem("torus\\nerror: forged")
    'holds a control character or a format character (a newline, tab, ESC, U+202E, a zero-width character...)'
    """
    if not text.isprintable():
        return UNPRINTABLE
    return FORMULA if "$" in text else None


def _all_printable(texts: list[str]) -> bool:
    """Whether every text of ``texts`` is :func:`text_problem`-free: one joined string checked
    at C speed (0.2 ms for 30,528 ids; the loop that names a culprit runs on failure only)."""
    joined = "".join(texts)
    return joined.isprintable() and "$" not in joined


def check_node_ids(graph: nx.Graph, where: str = INVALID) -> None:
    """Refuse a string node id that is empty, over :data:`MAX_NODE_ID` characters or has a
    :func:`text_problem`, in one line starting ``where``.

    >>> check_node_ids(nx.Graph([("gpu0", "gpu\\n1")]))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: node id 'gpu\\n1' must be non-empty text without control or format characters (a newline, tab, ESC, U+202E...) or '$': it is printed in tables and drawn in figures
    """
    ids = [node for node in graph if isinstance(node, str)]
    if not ids or (_all_printable(ids) and "" not in ids
                   and max(map(len, ids)) <= MAX_NODE_ID):
        return
    for node in ids:
        if len(node) > MAX_NODE_ID:
            raise UserError(f"{where}: node id {describe(node)} is {len(node):,} characters; "
                            f"at most {MAX_NODE_ID} (a name, not data)")
        if not node or text_problem(node):
            raise UserError(f"{where}: node id {describe(node)} must be non-empty text without "
                            f"control or format characters (a newline, tab, ESC, U+202E...) "
                            f"or '$': it is printed in tables and drawn in figures")


def check_graph_texts(graph: nx.Graph, where: str = INVALID) -> None:
    """Refuse a graph attribute (any, and the string values of ``args``) or a node id
    (:func:`check_node_ids`) with a :func:`text_problem`, in one line starting ``where``.

    >>> check_graph_texts(nx.Graph(name="ring", args={"logical": "a$b$"}))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: graph attribute 'args' entry 'logical' 'a$b$' holds '$' (a figure reads the text between two as a formula)
    """
    attrs = graph.graph
    args = attrs.get("args")
    for key, value in chain(attrs.items(), args.items() if isinstance(args, dict) else ()):
        if isinstance(value, str) and (problem := text_problem(value)):
            name = f"graph attribute {key!r}" if attrs.get(key) is value \
                else f"graph attribute 'args' entry {describe(key)}"
            raise UserError(f"{where}: {name} {describe(value)} {problem}")
    check_node_ids(graph, where)


def check_attribute_texts(holders: list, where: str = INVALID) -> None:
    """Refuse a string attribute with a :func:`text_problem` among ``holders``, the
    ``(node, None, data)`` and ``(u, v, data)`` whose attributes the schema does not type
    (``via``, a file's own); the others are numbers, bools or one of a list. Their strings
    are checked joined; the loop that names a culprit runs on failure only.

    >>> check_attribute_texts([("gpu0", "gpu1", {"via": "ocs0"}), ("ocs0", None, {"note": "a\\tb"})])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: node 'ocs0' attribute 'note' 'a\\tb' holds a control character or a format character (a newline, tab, ESC, U+202E, a zero-width character...)
    """
    texts = [v for _, _, data in holders for v in data.values() if isinstance(v, str)]
    if _all_printable(texts):
        return
    for u, v, data in holders:
        for key, value in data.items():
            if isinstance(value, str) and (problem := text_problem(value)):
                what = f"node {describe(u)}" if v is None else \
                    f"edge {describe(u)}-{describe(v)}"
                raise UserError(f"{where}: {what} attribute {key!r} {describe(value)} {problem}")


def near_miss(name: object, names: Collection) -> str | None:
    """The attribute of ``names`` that ``name``, not one of them, looks like a misspelling of,
    or None: the same but for case, ``-`` or a space for ``_`` and spaces at the ends; or,
    both of 4 letters or more with the same first letter, one letter (not a digit or ``_``)
    added or dropped, or two neighbouring letters swapped. A fabric file may carry
    attributes of its own, kept unread; one that is a near miss was a typo read as nothing
    (``link`` for ``links``: one cable, not two). Words of their own a schema name stands in
    are not near misses (``server_id``, ``latency_ms``, ``tier2``, ``uplinks``, ``planes``,
    ``rank`` for ``rack``): other tools' files carry such labels.

    >>> names = ("lanes", "latency", "links", "rack", "server")
    >>> near_miss("link", names), near_miss("Server", names)
    ('links', 'server')
    >>> [near_miss(n, names) for n in ("label", "links", "server_id", "rank")]
    [None, None, None, None]
    """
    if not isinstance(name, str) or name in names:
        return None
    folded = name.strip().casefold().replace("-", "_").replace(" ", "_")
    if folded in names:
        return folded
    return next((n for n in sorted(names) if _one_letter_apart(folded, n)), None)


def _one_letter_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (4 letters or more, the same first) differ by one letter
    added or dropped, or two neighbouring letters swapped (see :func:`near_miss`)."""
    if min(len(a), len(b)) < 4 or a[0] != b[0] or a == b:
        return False
    if len(a) == len(b):
        at = [i for i in range(len(a)) if a[i] != b[i]]
        return (len(at) == 2 and at[1] == at[0] + 1 and a[at[0]] == b[at[1]]
                and a[at[1]] == b[at[0]])
    short, long = sorted((a, b), key=len)
    if len(long) != len(short) + 1:
        return False
    i = next((i for i in range(len(short)) if short[i] != long[i]), len(short))
    return long[i].isalpha() and long[:i] + long[i + 1:] == short
