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
from collections.abc import Collection, Iterable

__all__ = ["BIDI_CONTROLS", "KNOWN_LENGTH", "KNOWN_SHOWN", "MAX_WORD", "NothingFeasible", "UserError", "chosen", "cut_long", "find_name", "known", "lookalike", "looks_like", "odd_character", "refuse_lookalike_names", "one_line", "shown"]

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

#: Letters of other scripts drawn as a Latin letter, which NFKC keeps as they are (a
#: Cyrillic EN in 'Н100-SXM' prints as the H of 'H100-SXM'): the Cyrillic and Greek
#: entries of Unicode's confusables table (UTS #39, confusables.txt) for the letters catalog
#: names are spelled with, each to its Latin look-alike.
_HOMOGLYPHS = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеіјорсхуѕһԁԛԝ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινα",
    "ABESIJKMHOPCTXYaeijopcxyshdqw" "ABEZHIKMNOPTYXoiva")

#: Latin letters and digits drawn alike (UTS #39 folds each pair to one): a name of another
#: script's letter in place of a digit ('vllm-dgx-h1О0', a Cyrillic O for the zero) looks
#: like the name it copies only with these folded too.
_DIGIT_LOOKALIKES = str.maketrans("01", "ol")


def _folded(text: str) -> str:
    """``text`` as it looks: NFKC (fullwidth letters, ligatures), every dash or minus sign
    ``-``, every space ' ', no invisible format character (a soft hyphen, a zero-width
    space), a Cyrillic or Greek letter as the Latin one it looks like (:data:`_HOMOGLYPHS`),
    in one case, 0 and O one, 1, l and I one."""
    text = unicodedata.normalize("NFKC", text).translate(_HOMOGLYPHS)
    return "".join("-" if c in _MINUSES or unicodedata.category(c) == "Pd" else " "
                   if c.isspace() else "" if unicodedata.category(c) == "Cf" else c
                   for c in text).casefold().translate(_DIGIT_LOOKALIKES).replace("i", "l")


def looks_like(name: object, table: Iterable[str]) -> str | None:
    """The name of ``table`` that ``name`` is not but prints alike (:func:`_folded`: a dash,
    space or fullwidth letter of another kind, a Cyrillic or Greek letter for a Latin one),
    where ``name`` holds a character outside ASCII; else None. A user's GPU, model, profile
    or workload of such a name would be reported as the catalog's.

    >>> looks_like("\u041d100-SXM", ["H100-SXM"]), looks_like("H100-SXM", ["H100-SXM"])
    ('H100-SXM', None)
    >>> looks_like("vllm-dgx-h1\u041e0", ["vllm-dgx-h100"]), looks_like("H1OO", ["H100"])
    ('vllm-dgx-h100', None)
    """
    if not isinstance(name, str) or name.isascii():
        return None
    folded = _folded(name)
    return next((n for n in table if n != name and _folded(n) == folded), None)


def odd_character(name: str, like: str) -> str:
    """The first character of ``name`` (not ASCII) that ``like``, the name it looks like,
    lacks, said with its code point and Unicode name: ``"'Н', U+041D CYRILLIC CAPITAL
    LETTER EN"``.

    >>> odd_character("\u041d100-SXM", "H100-SXM")
    "'\u041d', U+041D CYRILLIC CAPITAL LETTER EN"
    """
    odd = next((c for c in name if c not in like and not c.isascii()), None) or \
        next(c for c in name if not c.isascii())
    return f"{odd!r}, U+{ord(odd):04X} {unicodedata.name(odd, 'a character of no name')}"


def chosen(value: object, allowed: Collection[str]) -> str | None:
    """The value of ``allowed`` that ``value`` names, as ``allowed`` spells it, or None for
    the caller to refuse (quoting ``value`` as given, with :func:`lookalike`'s question).
    The one rule for every choice (an option's, a file's, a library call's), and by
    :func:`find_name` for every catalog name looked up: blanks at either end are dropped, as
    they are around a number (:func:`compute.typed_numbers.read_number`) and a list's items
    (:func:`compute.validate.comma_list`), so ``--instances ' all'`` is ``--instances all``
    as ``--networks ' bound '`` is (no name may begin or end with one:
    :func:`compute.validate.name`); and case is not minded where one choice matches
    (``--phase Decode`` is ``--phase decode``, ``--algorithm RING`` is ``ring``, as
    ``--gpu h100-sxm`` is ``H100-SXM`` and a list naming ``decode,DECODE`` names one thing
    twice), while a text matching several choices but for case names none of them. Anything
    but text is None.

    >>> chosen(" all ", ("all", "alone")), chosen("al", ("all", "alone")), chosen(1, ("1",))
    ('all', None, None)
    >>> chosen("Decode", ("decode", "prefill")), chosen("a", ("A", "a")), chosen("b", ("A", "a"))
    ('decode', 'a', None)
    >>> chosen("A", ("a", "aa", "AA")), chosen("Aa", ("a", "aa", "AA"))
    ('a', None)
    """
    if not isinstance(value, str):
        return None
    if value in allowed:   # the set's (or dict's) own look-up first
        return value
    text = value.strip()
    if text in allowed:
        return text
    folded = text.casefold()
    matches = [a for a in allowed if isinstance(a, str) and a.casefold() == folded]
    return matches[0] if len(matches) == 1 else None


def lookalike(name: object, table: Iterable[str]) -> str:
    """For the refusal of an unknown ``name``: ``"; did you mean 'H100-SXM'? (it has '‑',
    U+2011 NON-BREAKING HYPHEN)"`` where ``name`` is a name of ``table`` but for characters
    that look alike (a dash or space of another kind, a fullwidth letter: text copied from
    a paper or a web page; a Cyrillic or Greek letter), which the refusal's 'known' list
    shows looking the same; else "".

    >>> lookalike("H100\u2011SXM", ["H100-SXM", "Lite"])
    "; did you mean 'H100-SXM'? (it has '\u2011', U+2011 NON-BREAKING HYPHEN)"
    >>> lookalike("H100-SMX", ["H100-SXM"]), lookalike(5, ["H100-SXM"])
    ('', '')
    """
    if isinstance(name, str):
        name = name.strip()   # as :func:`chosen` reads a choice
    match = looks_like(name, table)
    if match is None:
        return ""
    return f"; did you mean {match!r}? (it has {odd_character(str(name), match)})"


def refuse_lookalike_names(entries: Iterable[str], table: Iterable[str], where: str,
                           kind: str) -> None:
    """Refuse a user's ``kind`` (model, GPU) named in ``entries`` that prints as a catalog
    one of ``table`` but is not its name (a Cyrillic or Greek letter for a Latin one, a
    fullwidth letter, a dash of another kind: :func:`compute.errors.looks_like`): its
    figures would be read as the catalog's ('1 x Н100-SXM', half an H100, printed as
    'H100-SXM').

    >>> refuse_lookalike_names(["\u041d100-SXM"], ["H100-SXM"], "g.toml", "GPU")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: g.toml: GPU name '\u041d100-SXM' prints as the catalog GPU 'H100-SXM' but is another name (it has '\u041d', U+041D CYRILLIC CAPITAL LETTER EN); give yours a name of its own
    """
    table = list(table)
    for n in entries:
        like = looks_like(n, table)
        if like is not None:
            raise UserError(f"{where}: {kind} name {n!r} prints as the catalog {kind} "
                            f"{like!r} but is another name (it has {odd_character(n, like)}); "
                            f"give yours a name of its own")


def find_name(table: Iterable[str], name: str) -> str | None:
    """The name in ``table`` that ``name`` names: itself, else the one name equal to it but
    for case (GPU and model names are read as scenario and builder names are), else None;
    None too when several differ from it only in case (a user's file may hold ``gpu-a`` and
    ``GPU-A``), so the refusal lists them. Blanks at either end of ``name`` are dropped, as
    :func:`chosen` reads a choice (no name a file defines begins or ends with one:
    :func:`compute.validate.name`), so ``--gpu 'H100-SXM '`` is ``--gpu H100-SXM``.

    >>> find_name({"H100-SXM": 1, "Lite": 2}, "h100-sxm"), find_name(["a", "A"], "a")
    ('H100-SXM', 'a')
    >>> find_name({"H100-SXM": 1}, " H100-SXM "), find_name({"H100-SXM": 1}, "H100 SXM")
    ('H100-SXM', None)
    >>> find_name(["gpu-a", "GPU-A"], "Gpu-A") is None
    True
    """
    return chosen(name, table)   # one rule for a name and a choice
