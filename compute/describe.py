"""Describing a value in an error message: the value itself when short, its kind and size
otherwise, on one line, never a conversion that fails.

Every refusal of every package shows the value it refuses through :func:`describe` (a
hostile ``__repr__``, ``__len__`` or ``__float__``, a number of thousands of digits, a table
of megabytes: each is told in a few words, never raising). :func:`file_values` makes it say
None as a JSON file wrote it, ``null``. The checks of :mod:`compute.validate` and the
readers of typed numbers (:mod:`compute.typed_numbers`) build their messages on it.

>>> describe([132]), describe(10**4000), describe({"k": list(range(100))})
('[132]', 'an integer of 4001 digits', 'a table of 1 key')
"""

from __future__ import annotations

import datetime
import math
import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from compute.errors import one_line

__all__ = ["SHOWN_LENGTH", "describe", "file_values"]


#: Longest value :func:`describe` shows itself (a longer one is told by its kind and size).
SHOWN_LENGTH = 60


#: True while a JSON document's values are checked (:func:`file_values`): :func:`describe`
#: then says None as the file wrote it, ``null``.
_JSON_NULL: ContextVar[bool] = ContextVar("compute.describe.json_null", default=False)


@contextmanager
def file_values(path: object) -> Iterator[None]:
    """A block that checks the values of the document ``path`` names: where it is JSON
    (``.json``), :func:`describe` says None as ``null``, the file's own spelling (a value
    of None read from JSON can only be a ``null`` the file holds; TOML and GraphML have no
    null). A refusal then reads ``hbm_capacity_GB must be a number ..., got null``, not
    ``got None``, which names nothing in the file.

    >>> with file_values("gpus.json"):
    ...     describe(None), describe([None])
    ('null', '[None]')
    >>> describe(None)
    'None'
    """
    token = _JSON_NULL.set(str(path).lower().endswith(".json"))
    try:
        yield
    finally:
        _JSON_NULL.reset(token)


def describe(value: object) -> str:
    """A short, one-line description of ``value`` for an error message: the value itself
    when it is short, its kind and size otherwise (never more than a line of about
    :data:`SHOWN_LENGTH` characters, never a conversion that fails: a ``__repr__`` or
    ``__len__`` that raises or returns megabytes gives the value's kind). The one describer
    of values for every package's errors.

    >>> describe(3.5), describe(float("nan")), describe(True), describe("ab\\ncd")
    ('3.5', 'nan', 'True', "'ab\\\\ncd'")
    >>> describe(10**50), describe(-10**50), describe(None), describe(object())
    ('an integer of 51 digits', 'a negative integer of 51 digits', 'None', 'an object')
    >>> describe({"a": 1}), describe([1, 2]), describe(list(range(100))), describe({"k": [10**5000]})
    ("{'a': 1}", '[1, 2]', 'a list of 100 items', 'a table of 1 key')
    >>> import numpy as np   # a numpy scalar as numpy writes it: np.True_ from numpy 2, True before
    >>> [describe(v) == repr(v) for v in (np.timedelta64(5, "s"), np.True_, np.longdouble("1e4000"))]
    [True, True, True]
    >>> import datetime   # TOML's dates and times as the file wrote them
    >>> describe(datetime.date(1979, 5, 27)), describe(datetime.time(7, 32))
    ('the date 1979-05-27', 'the time 07:32:00')
    >>> describe("\\u2028" * 100)
    "'\\\\u2028\\\\u2028\\\\u2028\\\\u2028\\\\u2028...'"

    Inside :func:`file_values` of a JSON file, None is ``null``.
    """
    if value is None and _JSON_NULL.get():
        return "null"
    try:
        shown = _describe(value)
    except Exception:   # noqa: BLE001  (a hostile __len__, __float__, shape: say its kind)
        shown = ""
    if not shown or len(shown) > SHOWN_LENGTH + 10:
        shown = _kind(value)
    return shown + decimal_hint(value)


def decimal_hint(value: object) -> str:
    """Words :func:`describe` ends a ``decimal.Decimal`` with, each message that shows
    one a refusal of it as a number. The library's one rule for a number given in code: a
    real number (Python's ``numbers.Real``: an int, a float, a Fraction, numpy's), not a
    bool and not a Decimal, which Python keeps out of ``numbers.Real`` (it refuses
    arithmetic with a float); a quantity with a unit (``compute.units.parse_time``, ...)
    takes text too. Every reader refuses a Decimal alike, where one took it by its text and
    others refused it without saying why.

    >>> from decimal import Decimal
    >>> describe(Decimal("0.05")), describe(0.05)
    ("Decimal('0.05') (a Decimal is not read as a number: give float(value), or its text where a unit is read)", '0.05')
    """
    from decimal import Decimal

    if not isinstance(value, Decimal):
        return ""
    return " (a Decimal is not read as a number: give float(value), or its text where a unit is read)"


def _kind(value: object) -> str:
    """``a NAME`` of ``value``'s type (``an object`` when the name is not a short word)."""
    kind = type(value).__name__
    if not (isinstance(kind, str) and kind.isidentifier() and len(kind) <= 40):
        kind = "object"
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _few(value: object) -> bool:
    """Whether ``value`` (a container) holds few enough items, strings short enough and
    nesting shallow enough that its repr may be short (and is cheap to make)."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > SHOWN_LENGTH // 2:
            return False
        if isinstance(v, str | bytes | bytearray) and len(v) > SHOWN_LENGTH:
            return False
        if isinstance(v, dict | list | tuple | set | frozenset):
            if len(v) > SHOWN_LENGTH // 2:
                return False
            stack.extend(v.items() if isinstance(v, dict) else v)
    return True


def _short_repr(value: object) -> str:
    """``value``'s repr on one line if it is at most :data:`SHOWN_LENGTH` characters and
    shows the value (not ``<object at 0x...>``), else ``""``."""
    try:
        shown = one_line(repr(value))
    except Exception:   # noqa: BLE001  (a hostile __repr__ must not hide the real error)
        return ""
    return shown if len(shown) <= SHOWN_LENGTH and not shown.startswith("<") else ""


def _digits(n: int) -> int:
    """The decimal digits of ``n`` > 0 without ``str`` (which refuses past 4,300 digits):
    from its bits, 10 ** d compared where a power of ten falls among its bit length's
    numbers (bits x log10(2) + 1 said 4,301 of 10**4300 - 1).

    >>> _digits(10**4300 - 1), _digits(10**4300), _digits(2**20000)
    (4300, 4301, 6021)
    """
    bits = n.bit_length()
    low, high = int((bits - 1) * math.log10(2)), int(bits * math.log10(2))
    return low + 1 if low == high or n < 10**high else high + 1


def _describe(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    try:   # numpy's timedelta64 claims to be Integral and refuses int(); shown by repr below
        if isinstance(value, numbers.Integral):
            v = int(value)
            if v.bit_length() > 64:
                digits = len(str(abs(v))) if v.bit_length() < 13000 else _digits(abs(v))
                return f"{'a negative' if v < 0 else 'an'} integer of {digits} digits"
            return str(v)
        if isinstance(value, numbers.Real):
            f = float(value)
            # a float that is not the value (a long double of 1e4000 is no inf, a tiny
            # fraction no 0): shown by repr below
            if math.isnan(f) or value == f or math.isfinite(f) and f != 0:
                return repr(f)
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        pass
    if isinstance(value, datetime.date | datetime.time):   # TOML's, as a file writes them
        kind = ("date and time" if isinstance(value, datetime.datetime) else "date"
                if isinstance(value, datetime.date) else "time")
        return f"the {kind} {value.isoformat()}"
    if isinstance(value, str):
        for n in (SHOWN_LENGTH - 3, 28, 12, 5):   # escapes (\\u2028) make a repr longer
            shown = one_line(repr(value if len(value) <= n + 3 else value[:n] + "..."))
            if len(shown) <= SHOWN_LENGTH + 2:
                return shown
        return f"a text of {len(value):,} characters"
    if isinstance(value, dict | list | tuple | set | frozenset):
        shown = _short_repr(value) if _few(value) else ""
        if shown:
            return shown
        n = len(value)
        if isinstance(value, dict):
            return f"a table of {n:,} key{'' if n == 1 else 's'}"
        return f"a list of {n:,} item{'' if n == 1 else 's'}"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and shape and hasattr(value, "dtype"):   # numpy, not importing it
        shown = one_line(shape)
        return f"an array of shape {shown}" if len(shown) <= 40 else \
            f"an array of {len(shape)} dimension{'' if len(shape) == 1 else 's'}"
    return _short_repr(value)
