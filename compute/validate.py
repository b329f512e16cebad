"""Checking the values that come from documents and users: numbers with ranges, flags, names.

Every loader of a user's document (GPU and model files, HuggingFace ``config.json``; scenario
and fabric files may use it too) takes each value through these helpers, so that a wrong type
(a list where a number belongs, a string where a table belongs), a boolean given as a number,
NaN or infinity, a number of thousands of digits or a physically absurd magnitude is a
:class:`~compute.errors.UserError` with one line naming the key, the value and what is
allowed, never a ``TypeError``, an ``OverflowError`` or nonsense downstream.

The plausible ranges of GPU and model numbers are written down, with the reasoning for each,
in one place: ``compute/data/limits.toml`` (:func:`limits`, :func:`in_range`).

Two concerns these checks build on have their own modules, and their names are importable
from here too: describing a value in a message (:func:`describe`, :mod:`compute.describe`)
and reading a number typed as text (:func:`read_number`, :mod:`compute.typed_numbers`).

>>> number("gpu.toml: GPU 'X'", "tdp_W", 700, minimum=1, maximum=1e6)
700.0
>>> number("gpu.toml: GPU 'X'", "sms", [132], minimum=1, maximum=1e5, integer=True)
Traceback (most recent call last):
...
compute.errors.UserError: gpu.toml: GPU 'X': sms must be a whole number from 1 to 100,000, got [132]
>>> in_range("m.toml: model 'x'", "model", "layers", 10**4000)
Traceback (most recent call last):
...
compute.errors.UserError: m.toml: model 'x': layers must be a whole number from 1 to 10,000, got an integer of 4001 digits
"""

from __future__ import annotations

import math
import numbers
import operator
import tomllib
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Literal, overload

from compute.describe import describe, file_values
from compute.errors import BIDI_CONTROLS, UserError, chosen, known, lookalike, one_line
from compute.typed_numbers import (
    GROUPED_PATTERN,
    GROUPED_RULE,
    NONFINITE_WORDS,
    NUMBER_PATTERN,
    NUMBER_RULE,
    SMALLEST_NUMBER,
    ZeroAllowed,
    ascii_digits,
    below_smallest,
    below_smallest_words,
    not_below_smallest,
    number_text,
    read_grouped,
    read_number,
    spells_zero,
)

__all__ = ["NONFINITE_WORDS", "NUMBER_PATTERN", "NUMBER_RULE", "Range", "SMALLEST_NUMBER", "ZeroAllowed", "below_smallest_words", "below_smallest", "not_below_smallest", "spells_zero", "ascii_digits", "number_text", "read_number", "GROUPED_PATTERN", "GROUPED_RULE", "read_grouped", "choice", "comma_list", "describe", "file_values", "flag", "holds_flag", "in_range", "is_flag", "limit_allowed", "range_words", "an_int", "is_finite", "is_whole", "limits",
           "listed", "name", "number", "of_type", "refuse_repeats", "refuse_unordered", "string", "table", "NAME_MARKS", "typed_name"]

#: Largest whole number a batch, a degree or a count of tokens may be, from the command line
#: or the API: far past any that fits a GPU cluster (Llama-4 Scout's context is 10M tokens),
#: and exact as a float. compute.roofline.MAX_BATCH, compute.phases.MAX_TOKENS and the
#: command line's bound are this one number.
MAX_WHOLE = 10**9

#: Longest name (of a GPU, a model, a fabric) accepted from a file.
MAX_NAME_LENGTH = 200

#: Longest other text (a source, a description, a saved fabric's name or spec) accepted.
MAX_TEXT_LENGTH = 10_000


def is_whole(value: object) -> bool:
    """Whether ``value`` is a Python or numpy integer: not a bool, not numpy's timedelta64
    (numpy registers it as an integer; ``int()`` of it raised TypeError past every check
    that asked ``isinstance(value, int | np.integer)``).

    >>> import numpy as np
    >>> is_whole(8), is_whole(np.int64(8)), is_whole(True), is_whole(8.0), is_whole(np.timedelta64(8, "s"))
    (True, True, False, False, False)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def is_finite(value: object) -> bool:
    """Whether ``value`` is a finite Python or numpy real number, not a bool: a whole number
    (:func:`is_whole`) of any size, which a caller then compares with its bounds exactly
    (``math.isfinite`` of an integer past 1e308 raised OverflowError through every check
    that asked it), or another real that converts to a finite float.

    >>> import numpy as np
    >>> is_finite(0.5), is_finite(10**400), is_finite(np.float32(2)), is_finite(float("inf"))
    (True, True, True, False)
    >>> is_finite(True), is_finite("1"), is_finite(np.timedelta64(1, "s")), is_finite(1j)
    (False, False, False, False)
    """
    if is_whole(value):
        return True
    if isinstance(value, bool | numbers.Integral) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        return False


def an_int(value: object) -> str:
    """``" (an int)"`` where ``value`` is a float (Python's, numpy's, a Fraction) holding a
    whole number, else ``""``: the words a count given in code adds to its refusal. A count
    given in code is a Python or numpy integer (:func:`is_whole`), as ``range(8.0)`` takes
    none; ``8.0`` is refused, and "must be a whole number >= 1, got 8.0" alone reads as
    allowed. Text (a command line's, a spec string's, a file's) keeps its own rule.

    >>> import numpy as np
    >>> an_int(8.0), an_int(np.float32(8)), an_int(8.5), an_int(8), an_int(True), an_int("8")
    (' (an int)', ' (an int)', '', '', '', '')
    """
    if isinstance(value, bool | numbers.Integral) or not isinstance(value, numbers.Real):
        return ""
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        return ""
    return " (an int)" if math.isfinite(f) and f.is_integer() else ""


def _fmt(x: float) -> str:
    """A bound for a message: ``100,000``, ``0.001``, ``1e+06``-free; a whole float past
    2**53 by its shortest decimal (``1e30``'s own int is 1,000,000,000,000,000,019,884,...).

    >>> _fmt(1e30) == f"{10**30:,}", _fmt(10**30 + 1), _fmt(1e-9)
    (True, '1,000,000,000,000,000,000,000,000,000,001', '1e-09')
    """
    if isinstance(x, numbers.Integral):
        return f"{int(x):,}"
    if float(x).is_integer():
        return f"{int(Decimal(repr(float(x)))):,}"
    return f"{x:g}"


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


@overload
def number(where: str, key: str, value: object, *, minimum: float, maximum: float,
           integer: Literal[True], or_zero: bool = False, unit: str = "") -> int: ...
@overload
def number(where: str, key: str, value: object, *, minimum: float, maximum: float,
           integer: Literal[False] = False, or_zero: bool = False, unit: str = "") -> float: ...
@overload
def number(where: str, key: str, value: object, *, minimum: float, maximum: float,
           integer: bool, or_zero: bool = False, unit: str = "") -> int | float: ...
def number(where: str, key: str, value: object, *, minimum: float, maximum: float,
           integer: bool = False, or_zero: bool = False, unit: str = "") -> int | float:
    """``value`` if it is a number in ``[minimum, maximum]`` (or exactly 0 with
    ``or_zero``): an ``int`` when ``integer`` (floats refused), else a ``float``, a zero as
    ``0.0`` (a ``-0.0`` where zero is allowed is 0: it printed ``-0``; where zero is
    refused, the message shows it as typed).

    Booleans, strings, lists, tables, NaN and infinities are refused, and so are integers of
    any size outside the range (compared exactly, never converted first).

    >>> number("", "batch", 8, minimum=1, maximum=1024, integer=True)
    8
    >>> number("f.json", "scale", float("inf"), minimum=0, maximum=10)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: f.json: scale must be a number from 0 to 10, got inf
    >>> number("f.json", "fp8", 0, minimum=1, maximum=10, or_zero=True)
    0.0
    >>> number("f.json", "fp8", -0.0, minimum=1, maximum=10, or_zero=True)
    0.0
    """
    def refused(shown: object) -> UserError:   # the range's words only for a refusal
        allowed = range_words(minimum, maximum, integer=integer, or_zero=or_zero, unit=unit)
        return UserError(f"{_prefix(where)}{key} must be {allowed}, got {describe(shown)}"
                         f"{_not_integer(shown, minimum, maximum, or_zero) if integer else ''}")

    whole = is_whole(value)   # not numpy's timedelta64 (registered Integral, no int())
    ok_type = whole or not integer and isinstance(value, numbers.Real) \
        and not isinstance(value, numbers.Integral)
    if isinstance(value, bool) or not ok_type:
        raise refused(value)
    if whole:
        value = int(value)
        inside = value == 0 and or_zero or minimum <= value <= maximum
    else:
        value = float(value)
        inside = math.isfinite(value) and (value == 0 and or_zero or minimum <= value <= maximum)
    if not inside:
        raise refused(value)
    # 0, however written: -0.0 (a file's '-0.0', a '-0' on the command line) printed '-0'
    return int(value) if integer else float(value) + 0.0


def _not_integer(value: object, minimum: float, maximum: float, or_zero: bool) -> str:
    """Words for a value refused as a whole number that reads as one inside the range but
    is not an integer (``8.0``, ``Fraction(8)``: "got 8.0" alone reads as allowed), naming
    its type; "" for any other value (one outside the range is refused for that).

    >>> _not_integer(8.0, 1, 10, False), _not_integer(8.5, 1, 10, False), _not_integer(8, 1, 10, False)
    (' (a float, not an integer)', '', '')
    >>> _not_integer(1e300, 1, 10, False), _not_integer(0.0, 1, 10, True)
    ('', ' (a float, not an integer)')
    """
    if isinstance(value, bool) or is_whole(value) or not isinstance(value, numbers.Real):
        return ""
    try:
        f = float(value)
        whole = math.isfinite(f) and f.is_integer() and value == int(value) \
            and (minimum <= f <= maximum or f == 0 and or_zero)
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        return ""
    kind = type(value).__name__
    if not (whole and kind.isidentifier() and len(kind) <= 40):
        return ""
    return f" ({'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}, not an integer)"


def range_words(minimum: float, maximum: float, *, integer: bool = False,
                or_zero: bool = False, unit: str = "") -> str:
    """The range :func:`number` checks, in its refusal's words (a :class:`ZeroAllowed`
    where it holds 0).

    >>> range_words(1, 10**8, integer=True), range_words(1, 10, or_zero=True, unit="s")
    ('a whole number from 1 to 100,000,000', 'a number 0 or from 1 to 10 s')
    """
    kind = "a whole number" if integer else "a number"
    allowed = f"from {_fmt(minimum)} to {_fmt(maximum)}" + (f" {unit}" if unit else "")
    words = f"{kind} {'0 or ' if or_zero else ''}{allowed}"
    return ZeroAllowed(words) if or_zero or minimum <= 0 <= maximum else words


def is_flag(value: object) -> bool:
    """Whether ``value`` is true or false: Python's bool or numpy's (``np.bool_``, a 0-d bool
    array: what comparing numpy numbers gives), not 0/1, ``"yes"`` or None.

    >>> import numpy as np
    >>> is_flag(True), is_flag(np.False_), is_flag(np.array(True)), is_flag(1)
    (True, True, True, False)
    >>> is_flag(np.array([True, False])), is_flag("yes"), is_flag(None)
    (False, False, False)
    """
    if isinstance(value, bool):
        return True
    dtype = getattr(value, "dtype", None)   # numpy's, without importing numpy here
    return getattr(dtype, "kind", "") == "b" and getattr(value, "ndim", None) == 0


def holds_flag(value: object) -> bool:
    """Whether ``value`` (a number, a list or tuple of them, a numpy array) holds a bool
    anywhere, Python's or numpy's (:func:`is_flag`): numpy reads ``[True, 8]`` as the
    numbers ``[1, 8]``, so a check of the array alone takes True as 1.

    >>> import numpy as np
    >>> holds_flag([8, True]), holds_flag((np.False_, 2.0)), holds_flag(np.array([True]))
    (True, True, True)
    >>> holds_flag([8, 2.0]), holds_flag(np.arange(3)), holds_flag(8)
    (False, False, False)
    """
    if is_flag(value):
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind is not None and kind != "O":   # a numpy array of one type
        return kind == "b"
    if kind == "O" or isinstance(value, list | tuple):
        # numpy imported here, not with this module (read for --help)
        import numpy as np

        return any(is_flag(x) for x in np.asarray(value, dtype=object).flat)
    return False


def flag(where: str, key: str, value: object) -> bool:
    """``value`` as Python's bool if it is true or false (:func:`is_flag`: Python's or
    numpy's bool; not 0/1, not ``"yes"``, not None): the one check of every flag of the
    library (a dataclass's bool field, a function's true/false parameter), so each takes
    what another does (a numpy bool was refused by some and taken by others).

    >>> import numpy as np
    >>> flag("", "bias", np.True_), type(flag("", "bias", np.True_)).__name__
    (True, 'bool')
    >>> flag("m.toml", "bias", 1)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: m.toml: bias must be true or false, got 1
    """
    if not is_flag(value):
        raise UserError(f"{_prefix(where)}{key} must be true or false, got {describe(value)}")
    return bool(value)


def _utf8(value: str) -> bool:
    """Whether ``value`` can be written as UTF-8 (no lone surrogate: a command-line argument
    of bytes that are not UTF-8 arrives as one, and fails every file and figure it reaches)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_utf8(where: str, key: str, value: str) -> None:
    if _utf8(value):
        return
    import sys

    encoding = sys.getfilesystemencoding()
    try:   # bytes that are UTF-8, read as another encoding (LC_ALL=C without UTF-8 mode)
        text = value.encode(encoding, "surrogateescape").decode("utf-8")
    except (UnicodeError, LookupError):
        text = None
    if text is not None and encoding.replace("-", "").lower() != "utf8":
        raise UserError(f"{_prefix(where)}{key} {describe(value)} is UTF-8 text "
                        f"({ascii(text)}) that this "
                        f"locale's encoding ({encoding}) cannot read; run under a UTF-8 locale "
                        f"(LC_ALL=C.UTF-8) or with PYTHONUTF8=1")
    raise UserError(f"{_prefix(where)}{key} {describe(value)} holds a byte that is not "
                    "UTF-8; give UTF-8 text")


#: The bidirectional controls (:data:`compute.errors.BIDI_CONTROLS`): printed, they reorder
#: the rest of the line, so a text could show as another.
_BIDI = BIDI_CONTROLS


def string(where: str, key: str, value: object, *, max_length: int = MAX_TEXT_LENGTH) -> str:
    """``value`` if it is a string of at most ``max_length`` characters that UTF-8 can
    write (:func:`_utf8`), on one line: no control character (a newline, a tab, ESC, NUL,
    DEL, a C1 control, a line separator) and no bidirectional control. Such texts (a
    source, an engine, a description) are printed: a newline in a file's text printed a
    line of its own choosing ('error: ...'), ESC drove the terminal, U+202E reversed the
    rest of the line.

    >>> string("calibrate", "--engine", b"vLLM\\xff".decode(errors="surrogateescape"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: calibrate: --engine 'vLLM\\udcff' holds a byte that is not UTF-8; give UTF-8 text
    >>> string("g.toml", "source", "datasheet\\nerror: forged")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: g.toml: source 'datasheet\\nerror: forged' holds a control character (a newline, tab, ESC...) or a bidirectional control (U+202A-U+202E, U+2066-U+2069); give text on one line
    """
    if not isinstance(value, str) or len(value) > max_length:
        raise UserError(f"{_prefix(where)}{key} must be text of at most {max_length:,} "
                        f"characters, got {describe(value)}")
    if one_line(value) != value or not _BIDI.isdisjoint(value):
        raise UserError(f"{_prefix(where)}{key} {describe(value)} holds a control character "
                        f"(a newline, tab, ESC...) or a bidirectional control (U+202A-U+202E, "
                        f"U+2066-U+2069); give text on one line")
    _check_utf8(where, key, value)
    return value


def name(where: str, what: str, value: object) -> str:
    """``value`` if it is usable as a name in tables and figures: a non-empty string of at
    most :data:`MAX_NAME_LENGTH` characters with no control characters (a newline in a name
    would break every printed table) and no format characters (Unicode category Cf: the
    bidirectional controls U+202A-U+202E and U+2066-U+2069 reorder the text printed after
    them, so a name could show as another; zero-width characters make two names that print
    alike), no ``$`` (matplotlib reads the text between two as a formula: a scenario named
    ``$\\undefinedmacro$`` raised ParseFatalException from every figure of compare --out)
    and no blank at either end; written in Unicode's composed form (NFC), so that a name has
    one spelling ('Café' as e + U+0301 and as U+00E9 print alike).

    >>> name("g.toml", "GPU", "H100\\n")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: g.toml: GPU name 'H100\\n' must be non-empty text of at most 200 characters without control or format characters (such as U+202E) or '$', and no blank at either end
    >>> name("g.toml", "GPU", "H100\\u202e")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: g.toml: GPU name 'H100\\u202e' must be non-empty text of at most 200 characters without control or format characters (such as U+202E) or '$', and no blank at either end

    >>> name("g.toml", "GPU", "Cafe\\u0301")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: g.toml: GPU name 'Cafe\\u0301' must be written in Unicode's composed form (NFC), 'Caf\\xe9': names are compared character by character, so two ways of writing one would be two names that print alike
    """
    ok = (isinstance(value, str) and 0 < len(value) <= MAX_NAME_LENGTH
          and one_line(value) == value and value.strip() == value and "$" not in value
          and not any(unicodedata.category(c) == "Cf" for c in value))
    if not ok:
        raise UserError(f"{_prefix(where)}{what} name {describe(value)} must be non-empty text "
                        f"of at most {MAX_NAME_LENGTH} characters without control or format "
                        f"characters (such as U+202E) or '$', and no blank at either end")
    _check_utf8(where, f"{what} name", value)
    if not unicodedata.is_normalized("NFC", value):
        def spelled(text: str) -> str:   # its code points: the two forms print alike
            return "'" + text.encode("ascii", "backslashreplace").decode("ascii") + "'"
        raise UserError(f"{_prefix(where)}{what} name {spelled(value)} must be written in "
                        f"Unicode's composed form (NFC), "
                        f"{spelled(unicodedata.normalize('NFC', value))}: names are compared "
                        f"character by character, so two ways of writing one would be two "
                        f"names that print alike")
    return value


#: The characters a catalog name read from a user's file (a GPU's, a model's, a
#: scenario's) may not hold, each with what it does in the text names are typed in: a
#: name holding one is read from its file but cannot be named again (``--models A,B``
#: splits at the comma, ``lite-flat@Lite`` at the ``@``, a fabric spec
#: ``ring:n=4,gpu=NAME`` at ``:``, ``,`` and ``=``; a scenario named ``a:b`` was taken for
#: a fabric spec and lost the ``@GPU`` of its label). One rule, :func:`typed_name`; a
#: saved fabric's ``gpu_types`` keep ``@`` (netmodel saves GPUs at another clock so).
NAME_MARKS = {
    "@": "it joins a name to a GPU or a clock, as in lite-flat@Lite and H100-SXM@0.5x",
    ",": "it separates the names of a list, as in H100-SXM,Lite",
    "=": "it joins a fabric spec's parameter to its value, as in gpu=Lite",
    ":": "it ends a fabric spec's builder, as in ring:n=4",
}


def typed_name(where: str, what: str, value: object, marks: str = "".join(NAME_MARKS)) -> str:
    """``value``, the name of a ``what`` (``"GPU"``, ``"model"``, ``"scenario"``) read from
    ``where``, if :func:`name` takes it and it holds none of ``marks`` (by default every one
    of :data:`NAME_MARKS`); else UserError naming the first it holds and what it does.

    >>> typed_name("m.toml", "model", "Llama-3-8B-mine")
    'Llama-3-8B-mine'
    >>> typed_name("m.toml", "model", "a,b")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: m.toml: model name 'a,b' must not contain ',' (it separates the names of a list, as in H100-SXM,Lite); a model's name holds none of '@', ',', '=', ':'
    """
    name(where, what, value)
    mark = next((m for m in marks if m in value), None)   # type: ignore[operator]  # a str
    if mark is not None:
        raise UserError(f"{_prefix(where)}{what} name {value!r} must not contain {mark!r} "
                        f"({NAME_MARKS[mark]}); a {what}'s name holds none of "
                        f"{', '.join(map(repr, marks))}")
    return value  # type: ignore[return-value]  # name() checked it is a str


def choice(where: str, key: str, value: object, allowed: Collection[str]) -> str:
    """``value`` if it is one of the strings in ``allowed``.

    >>> choice("m.toml", "norm", ["rmsnorm"], ("rmsnorm", "layernorm"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: m.toml: norm ['rmsnorm'] is unknown; known: 'layernorm', 'rmsnorm'
    """
    text = chosen(value, allowed)   # blanks at either end dropped, as every choice's
    if text is None:
        raise UserError(f"{_prefix(where)}{key} {describe(value)} is unknown"
                        f"{lookalike(value, allowed)}; known: {known(allowed)}")
    return text


def of_type(key: str, value: object, cls: type, example: str, *, default: bool = True) -> object:
    """``value`` when it is None (the caller's default; not with ``default=False``) or a
    ``cls``; else one line naming the parameter (a float given for a ``Slo`` raised
    AttributeError deep inside).

    >>> of_type("slo", 1.0, Collection, "[1]")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: slo must be a collections.abc.Collection (e.g. [1]) or None for the defaults, got 1.0
    >>> of_type("base", None, Collection, "[1]", default=False)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: base must be a collections.abc.Collection (e.g. [1]), got None
    """
    if isinstance(value, cls) or value is None and default:
        return value
    raise UserError(f"{key} must be a {cls.__module__}.{cls.__name__} (e.g. {example})"
                    f"{' or None for the defaults' if default else ''}, got {describe(value)}")


def refuse_unordered(key: str, value: object) -> None:
    """Refuse a set (``set``, ``frozenset``) of names or objects given as ``key``, a list
    whose order is the results' (the rows of a comparison; its first scenario, the
    baseline, where the default one is not among them): a set of text iterates in the order
    of Python's string hashing, which PYTHONHASHSEED changes from run to run, so one call
    gave its rows in another order each run. A set of numbers (whose hashes are their
    values), and one of one item, is taken.

    >>> refuse_unordered("phases", ("decode",)), refuse_unordered("sizes", {8, 1024})
    (None, None)
    >>> refuse_unordered("phases", {"decode", "prefill"})
    Traceback (most recent call last):
    ...
    compute.errors.UserError: phases must be a list or tuple, got a set, whose order changes from run to run (it orders the results); give a list or tuple in the order wanted
    """
    if isinstance(value, set | frozenset) and len(value) > 1 and not all(
            isinstance(v, numbers.Number) for v in value):
        raise UserError(f"{key} must be a list or tuple, got a {type(value).__name__}, whose "
                        f"order changes from run to run (it orders the results); give a list "
                        f"or tuple in the order wanted")


def listed(key: str, value: object, items: str) -> tuple:
    """``value``'s items as a tuple when it is a collection (a list, tuple, set or 1-d
    array), not text or a number: a string was split into its letters ('aaaa' made four
    items 'a'), a number or None raised TypeError.

    >>> listed("ops", ("all-reduce",), "operations")
    ('all-reduce',)
    >>> listed("ops", "all-reduce", "operations")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: ops must be a list of operations, got 'all-reduce'
    """
    refuse_unordered(key, value)
    if not isinstance(value, str | bytes | bytearray | dict):
        try:
            return tuple(value)   # type: ignore[call-overload]
        except TypeError:   # a number, None, a 0-d array
            pass
    raise UserError(f"{key} must be a list of {items}, got {describe(value)}")


def comma_list(what: str, text: object, give: str, *, unique: bool = True,
               key: Callable[[str], object] | None = None) -> list[str]:
    """The comma-separated items of ``text``, each stripped: empty text, an empty item and
    (with ``unique``) an item given twice (equal, or of equal ``key``: ``str.casefold`` for
    a list of choices, matched regardless of case by :func:`compute.errors.chosen`) are
    refused, the message naming ``what`` (an option or parameter) and saying what to
    ``give`` instead.

    >>> comma_list("--models", "Llama-3-8B, GPT-3-175B", "comma-separated names")
    ['Llama-3-8B', 'GPT-3-175B']
    >>> comma_list("--groups", "2,4,2", "e.g. 2,4,8")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --groups '2,4,2' names 2 more than once; give each once
    """
    items = [t.strip() for t in str(text).split(",")]
    if not any(items):
        raise UserError(f"{what} {text!r} is empty; give {give}")
    if not all(items):
        raise UserError(f"{what} {text!r} has an empty item; give {give}")
    if unique:
        refuse_repeats(what, items, key, text=str(text))
    return items


def refuse_repeats(what: str, items: Sequence[str], key: Callable[[str], object] | None = None,
                   *, text: str | None = None) -> list[str]:
    """``items`` (one list option's values, those of every repeat of it together), refused
    where two name one thing: equal, or with equal ``key`` (what a catalog resolves a name
    to: ``h100-dgx`` and ``H100-DGX`` are one scenario, names being matched regardless of
    case, :func:`compute.errors.find_name`), as the run would merge them without a word.
    ``text`` is the list as typed, for the message (default: the items comma-joined).

    >>> refuse_repeats("--gpus", ["H100-SXM", "Lite"], str.casefold)
    ['H100-SXM', 'Lite']
    >>> refuse_repeats("--gpus", ["H100-SXM", "Lite", "h100-sxm"], str.casefold)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --gpus 'H100-SXM,Lite,h100-sxm' names one thing more than once ('H100-SXM' and 'h100-sxm'); give each once
    >>> refuse_repeats("--groups", ["2", "4", "2"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --groups '2,4,2' names 2 more than once; give each once
    """
    shown = ",".join(items) if text is None else text
    groups: dict[object, list[str]] = {}
    for item in items:
        groups.setdefault(item if key is None else key(item), []).append(item)
    twice = [g for g in groups.values() if len(g) > 1]
    if not twice:
        return list(items)
    if all(len(set(g)) == 1 for g in twice):   # the same text again: name it
        names = ", ".join(sorted(g[0] for g in twice))
        raise UserError(f"{what} {shown!r} names {names} more than once; give each once")
    spelled = "; ".join(" and ".join(repr(t) for t in g) for g in twice)
    raise UserError(f"{what} {shown!r} names one thing more than once ({spelled}); "
                    f"give each once")


def table(where: str, value: object) -> dict:
    """``value`` if it is a table (a dict with string keys).

    >>> table("gpu.toml: GPU 'X'", [1])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: gpu.toml: GPU 'X' must be a table of keys, got [1]
    """
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise UserError(f"{where} must be a table of keys, got {describe(value)}")
    return value


@dataclass(frozen=True)
class Range:
    """The plausible range of one number (from ``compute/data/limits.toml``)."""

    minimum: float
    maximum: float
    integer: bool = False
    or_zero: bool = False
    unit: str = ""
    why: str = ""   #: the reasoning behind the bounds
    #: what the quantity is, in words (a ``[quantity]`` entry: "a decode SLO (TBT, time
    #: between tokens)")
    label: str = ""
    #: units a bare number out of range was likely meant in, tried in order (``["ms", "us"]``)
    hints: tuple[str, ...] = ()


@cache
def limits(section: str) -> dict[str, Range]:
    """The ranges of one section of ``compute/data/limits.toml`` (``"gpu"``, ``"model"`` or
    ``"quantity"``: SLOs and link bandwidths as the command line, scenario and sweep keys
    give them, in SI units; :func:`compute.units.check_plausible`).

    >>> limits("model")["layers"].maximum
    10000
    """
    data = tomllib.loads(resources.files("compute").joinpath("data/limits.toml")
                         .read_text(encoding="utf-8"))
    if section not in data:
        raise KeyError(f"no section {section!r} in compute/data/limits.toml")
    return {key: Range(minimum=e["min"], maximum=e["max"], integer=e.get("integer", False),
                       or_zero=e.get("or_zero", False), unit=e.get("unit", ""),
                       why=e.get("why", ""), label=e.get("label", ""),
                       hints=tuple(e.get("hints", ())))
            for key, e in data[section].items()}


def limit_allowed(section: str, key: str) -> str | None:
    """What ``key`` of ``section`` of ``compute/data/limits.toml`` must be, in
    :func:`in_range`'s words (a :class:`ZeroAllowed` where its range holds 0), for a number
    below the smallest a file holds (:meth:`compute.config_files.FloatOverflow.message`'s
    ``allowed``); None where ``key`` has no range there.

    >>> limit_allowed("model", "layers"), limit_allowed("model", "dense_layers")
    ('a whole number from 1 to 10,000', 'a whole number from 0 to 10,000')
    """
    r = limits(section).get(key)
    if r is None:
        return None
    return range_words(r.minimum, r.maximum, integer=r.integer, or_zero=r.or_zero,
                       unit=r.unit)


def in_range(where: str, section: str, field: str, value: object, *,
             key: str | None = None) -> int | float:
    """``value`` checked against the plausible range of ``field`` in ``section`` of
    ``compute/data/limits.toml``; the message names ``key`` (default ``field``), e.g. the
    config.json key the value came from."""
    r = limits(section)[field]
    return number(where, key or field, value, minimum=r.minimum, maximum=r.maximum,
                  integer=r.integer, or_zero=r.or_zero, unit=r.unit)
