"""The one exception type for user mistakes.

Every bad input that a user can fix (an unknown name, an impossible parameter, a malformed
file, a NaN or negative size) raises :class:`UserError` with a message that names the bad
value and says what is allowed. The command line prints that message as one line on stderr
and exits with status 2; it never shows a traceback for a ``UserError``.

A message is always one line: newlines and other control characters in it (a file name or a
GPU name that holds one, a value quoted from a hostile file) are written as escapes; and it
stays short: a word of more than :data:`MAX_WORD` characters (a value of thousands of
characters or digits quoted in it) is cut to its first 40 and last 17 (:func:`cut_long`).

>>> str(UserError("unknown GPU 'a\\nb'"))
"unknown GPU 'a\\\\nb'"
>>> str(UserError(f"unknown model {'x' * 5000!r}; known: 'a', 'b'"))
"unknown model 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxx'; known: 'a', 'b'"

It lives in ``compute`` because ``compute`` is the package every other one may import;
``netmodel.errors`` and ``topologies`` re-export it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["BIDI_CONTROLS", "KNOWN_LENGTH", "KNOWN_SHOWN", "MAX_WORD", "NothingFeasible", "UserError", "cut_long", "find_name", "known", "lookalike", "one_line", "shown"]

#: Longest word (a run of characters without a space) an error message shows whole: a path
#: of a deep folder fits; a value of thousands of characters or digits quoted in the message
#: is cut to 60 (:func:`cut_long`).
MAX_WORD = 100
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD + 1},}}")

# C0 and C1 control characters, DEL, and the Unicode line and paragraph separators.
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7f, 0xa0))}
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t",
                 0x2028: "\\u2028", 0x2029: "\\u2029"})


#: The bidirectional embedding, override and isolate controls (U+202A-U+202E,
#: U+2066-U+2069): printed, each reorders the rest of the line a terminal shows.
BIDI_CONTROLS = frozenset(map(chr, (*range(0x202A, 0x202F), *range(0x2066, 0x206A))))
_SHOWN = {**_ESCAPES, **{ord(c): f"\\u{ord(c):04x}" for c in BIDI_CONTROLS}}


def one_line(text: object) -> str:
    """``text`` with newlines and other control characters written as escapes.

    >>> one_line("a\\nb\\tc")
    'a\\\\nb\\\\tc'
    """
    return str(text).translate(_ESCAPES)


def shown(text: object) -> str:
    """``text`` as an error line shows it: :func:`one_line`'s escapes, and the
    bidirectional controls (:data:`BIDI_CONTROLS`) escaped too, so that a key or name a
    file holds cannot turn the rest of the line around.

    >>> shown("unknown key(s) x\\u202eyz")
    'unknown key(s) x\\\\u202eyz'
    """
    return str(text).translate(_SHOWN)


def cut_long(text: str) -> str:
    """``text`` with each word longer than :data:`MAX_WORD` characters cut to 60: its first
    40, ``...``, its last 17 (the closing quote and the end of a path stay).

    >>> cut_long("--gpus '" + "9" * 5000 + "' must be a whole number")
    "--gpus '999999999999999999999999999999999999999...9999999999999999' must be a whole number"
    """
    return _LONG_WORD.sub(lambda m: m.group()[:40] + "..." + m.group()[-17:], text)


class UserError(ValueError):
    """A mistake in what the user asked for; the message is shown to them as is (on one
    line: control characters and bidirectional controls in it are escaped, :func:`shown`;
    a word of thousands of characters cut)."""

    def __init__(self, message: object = "", *args):
        super().__init__(cut_long(shown(message)), *args)


class NothingFeasible(UserError):
    """The question was well put, but no configuration meets its SLO and there is nothing
    else to answer (a blast radius needs an instance): one line, exit status 3, the status
    of every command whose answer is 'nothing feasible' (netmodel.cli.main.NOTHING_FEASIBLE)."""

    exit_status = 3


class OutputLost(UserError):
    """An output file or folder the checks let through that could not be written after all
    (a full disk: ENOSPC, a quota: EDQUOT, an I/O error: EIO, a file over RLIMIT_FSIZE:
    EFBIG): one line, exit status 1, as for a standard output that cannot be written
    (netmodel.cli.main.main). Not 2: nothing in the command line was wrong, and the same
    command with room to write runs."""

    exit_status = 1


#: Most names :func:`known` lists, and the most characters it writes: a user's file may
#: hold 50,000 GPUs or models, whose names all listed made a refusal of 900,000 characters.
KNOWN_SHOWN, KNOWN_LENGTH = 40, 1000


def known(names: Iterable[str]) -> str:
    """Format a list of allowed names for an error message: ``'a', 'b', 'c'``; past
    :data:`KNOWN_SHOWN` names or :data:`KNOWN_LENGTH` characters, the first ones and how
    many more.

    >>> known(["b", "a"])
    "'a', 'b'"
    >>> known(f"G{i:05}" for i in range(50_000))[-40:]
    "037', 'G00038', 'G00039' and 49,960 more"
    """
    names = sorted(names)
    shown: list[str] = []
    length = 0
    for n in names[:KNOWN_SHOWN]:
        text = repr(n)
        if shown and length + len(text) > KNOWN_LENGTH:
            break
        shown.append(text)
        length += len(text) + 2
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f" and {rest:,} more" if rest else "")


#: Characters drawn as a hyphen that are not dashes (Unicode category Pd): the minus sign a
#: typeset paper's PDF gives, the hyphen bullet, the modifier letter minus sign.
_MINUSES = frozenset("\u2212\u2043\u02d7")


def _folded(text: str) -> str:
    """``text`` as it looks: NFKC (fullwidth letters, ligatures), every dash or minus sign
    ``-``, every space ' ', no invisible format character (a soft hyphen, a zero-width
    space), in one case."""
    text = unicodedata.normalize("NFKC", text)
    return "".join("-" if c in _MINUSES or unicodedata.category(c) == "Pd" else " "
                   if c.isspace() else "" if unicodedata.category(c) == "Cf" else c
                   for c in text).casefold()


def lookalike(name: object, table: Iterable[str]) -> str:
    """For the refusal of an unknown ``name``: ``"; did you mean 'H100-SXM'? (it has '‑',
    U+2011 NON-BREAKING HYPHEN)"`` where ``name`` is a name of ``table`` but for characters
    that look alike (a dash or space of another kind, a fullwidth letter: text copied from
    a paper or a web page), which the refusal's 'known' list shows looking the same; else
    "".

    >>> lookalike("H100\u2011SXM", ["H100-SXM", "Lite"])
    "; did you mean 'H100-SXM'? (it has '\u2011', U+2011 NON-BREAKING HYPHEN)"
    >>> lookalike("H100-SMX", ["H100-SXM"]), lookalike(5, ["H100-SXM"])
    ('', '')
    """
    if not isinstance(name, str) or name.isascii():
        return ""
    folded = _folded(name)
    match = next((n for n in table if n != name and _folded(n) == folded), None)
    if match is None:
        return ""
    odd = next((c for c in name if c not in match), None) or \
        next(c for c in name if not c.isascii())   # name is not ASCII: one there is
    return (f"; did you mean {match!r}? (it has {odd!r}, U+{ord(odd):04X} "
            f"{unicodedata.name(odd, 'a character of no name')})")


def find_name(table: Iterable[str], name: str) -> str | None:
    """The name in ``table`` that ``name`` names: itself, else the one name equal to it but
    for case (GPU and model names are read as scenario and builder names are), else None;
    None too when several differ from it only in case (a user's file may hold ``gpu-a`` and
    ``GPU-A``), so the refusal lists them.

    >>> find_name({"H100-SXM": 1, "Lite": 2}, "h100-sxm"), find_name(["a", "A"], "a")
    ('H100-SXM', 'a')
    >>> find_name(["gpu-a", "GPU-A"], "Gpu-A") is None
    True
    """
    if name in table:   # a dict's own look-up first: the case-blind scan only on a miss
        return name
    folded = name.casefold()
    matches = [n for n in table if n.casefold() == folded]
    return matches[0] if len(matches) == 1 else None
