"""Units at the boundary: parse the strings users type into SI base units, and back.

Inside netmodel every quantity is in SI base units: bytes, seconds, FLOP, FLOP/s,
bytes/s per direction, watts. These helpers convert once, where numbers enter (the
command line, config files) or leave (tables).

The unit rules (one place; docs/units-and-errors.md repeats them):

* ``B`` is a byte and ``b`` a bit, always: ``400Gb/s`` is 50e9 bytes/s, ``8b`` is not 8 bytes.
* ``KB``/``kB``, ``MB``, ``GB``, ``TB``, ``PB`` are decimal (1e3 ... 1e15 bytes); ``KiB``,
  ``MiB``, ``GiB``, ``TiB``, ``PiB`` are binary (2**10 ... 2**50).
* A bare ``K``, ``M``, ``G``, ``T``, ``P`` (a size with no ``B``) is **binary**, as nccl-tests
  reads its ``-b 8M -e 8G`` options: ``8M`` is 8 MiB. Lower-case ``k``/``m``/``g`` alone are refused.
* A message size (:func:`parse_bytes`) is a whole number of bytes, at least 1 and at most 1 PiB
  (:data:`MAX_MESSAGE_BYTES`): a size in bits (``8b``, ``1Gb``), a fraction of a byte
  (``0.5B``), a sub-byte size or one no GPU's memory holds is refused.
* Bandwidths are bytes or bits per second: ``GB/s`` (= ``GBps``), ``GiB/s``, ``Gb/s``
  (= ``Gbps``); decimal prefixes on bit rates (``Kb/s`` = ``kb/s`` = 1000 bits/s), as network
  rates are quoted. A bare number is bytes/s.
* Times: ``s``, ``ms``, ``us`` (= ``µs``), ``ns``, ``ps``; a bare number is seconds.
* Since a bare number is SI, a slip is easy (``--tbt 50`` is 50 s, ``fabric.bandwidth=100``
  100 B/s). The SLOs (``--ttft``, ``--tbt``, :class:`compute.phases.Slo`) and a fabric's
  bandwidths and latencies (a builder's keys, in a spec, a scenario's ``[fabric]`` or a
  sweep's ``fabric.*bandwidth`` and ``fabric.*latency``) must lie in plausible ranges, each with its reasoning in
  ``compute/data/limits.toml`` (``[quantity]``, :func:`check_plausible`); outside, one line
  names the value as read with its unit, the range and, for a bare number, the unit it was
  likely meant in.
* A number is read exactly (as the decimal typed) and multiplied by its unit's exact factor,
  then rounded once (:func:`scaled`): one quantity written two ways is one float (``1us``,
  ``1000ns`` and ``0.001ms`` are all 1e-06 s; ``400Gb/s`` is ``50GB/s``), so a list naming it
  twice is refused as a duplicate.
* A value of a data row's unit (a sweep's ``cost.NAME``, :func:`parse_in_unit`) takes a unit
  of that row's kind: ``0.1USD/kWh`` (= ``0.1$/kWh``), ``5y`` (a Julian year, 365.25 days),
  ``1.2kW``, ``75%``, ``1.5USD/(Gb/s)``, ``6.9pJ/bit``; a bare number is SI (USD/J, s, W);
  a unit of another kind is refused.
* Numbers take the ASCII digits ``0``-``9`` only: Python reads every script's decimal digits
  (a fullwidth ``１００GB/s``, an Arabic-Indic ``١٠٠GB/s``), refused in one line naming the value
  and the digit, here and in every other parser of numbers from text
  (:func:`compute.validate.ascii_digits`).
* One grammar for every number typed (an option, a spec's ``key=value``, a scenario's or a
  sweep's string value, ``LO:HI:N``, an environment variable, a CSV cell;
  :data:`compute.validate.NUMBER_PATTERN`, read by :func:`compute.validate.read_number` and
  :func:`split_number`): ASCII digits with an optional sign (``+16`` is 16; ``-1`` is a number
  that a range refuses with its usual message), an optional fraction (``.5``, ``5.``) and an
  optional exponent (``1e3``). A whole number may be written so only where its value is whole
  (``1e3`` and ``16.0`` are 1000 and 16; ``1.5`` and ``1e-3`` are refused, as is a float that
  rounds to one: ``2.0000000000000001``). ``nan``, ``inf`` and ``infinity`` (any case, signed)
  are read alike by both readers, for a range to refuse by name. A number that is not zero
  but below the smallest normal float (``1e-400``, ``1e-310``, ``1e-300ps``) is refused (``is
  below the smallest number netmodel reads``); zero written any way (``0``, ``0e0``, ``-0``)
  is 0. Digits grouped by ``_`` are refused in one line
  naming the value and its spelling without them (``write 1000MiB, not 1_000MiB``), and a
  space inside a number likewise (``1 000MiB``), everywhere: Python's ``int``/``float`` read
  ``1_000`` while the number-then-unit reader stopped at the ``_``. ``--cluster-gpus`` also
  takes thousands grouped by commas (``131,072``; a first group of 1-3 digits not starting
  with 0, so ``0,128`` is refused: :data:`compute.validate.GROUPED_PATTERN`). TOML and JSON files keep their format's own
  numbers (TOML's ``1_000`` too); a GraphML fabric's ``int`` and ``float`` values are read by
  this grammar (``1_000`` refused; ``16.0`` is a whole 16). In every file a number that is
  not zero but below the smallest normal float is refused as on the command line.

>>> parse_bytes("64MiB")
67108864.0
>>> parse_bytes("1.5 GB")
1500000000.0
>>> parse_bytes("8M")          # nccl-tests style: binary
8388608.0
>>> parse_bytes("8b")
Traceback (most recent call last):
...
compute.errors.UserError: size '8b' is in bits (b); a size is in bytes: write B (8b = 1B)
>>> parse_time("0.1us")
1e-07
>>> parse_bandwidth("450GB/s")
450000000000.0
>>> parse_bandwidth("400Gb/s")
50000000000.0
>>> [int(b) for b in parse_size_range("1KiB:8KiB")]
[1024, 2048, 4096, 8192]
>>> format_bytes(67108864)
'64 MiB'
"""

from __future__ import annotations

import math

from compute.errors import UserError
from compute.quantities import (
    GREEK_MU,
    MICRO_SIGN,
    NUMBER_WITH_UNIT,
    ExactFactor,
    check_finite_positive,
    exact_value,
    parse_quantity,
    scaled,
    split_number,
)
from compute.validate import (
    describe,
    limits,
)

__all__ = [
    "GREEK_MU",
    "LENGTH_UNITS",
    "MICRO_SIGN",
    "ExactFactor",
    "RATE_FLOOR",
    "RATE_RUNGS",
    "check_finite_positive",
    "check_plausible",
    "check_message_bytes",
    "counted",
    "format_bytes",
    "format_quantity",
    "format_time",
    "parse_bandwidth",
    "parse_bytes",
    "parse_quantity",
    "parse_size_range",
    "parse_time",
    "rung",
    "scaled",
    "size_units",
    "split_number",
    "time_units",
]

_BYTE_UNITS = {
    "": 1.0, "B": 1.0,
    "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
    "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40, "PiB": 2.0**50,
    "K": 2.0**10, "M": 2.0**20, "G": 2.0**30, "T": 2.0**40,  # nccl-tests style (-b 8M): binary
    "P": 2.0**50,   # the largest message (MAX_MESSAGE_BYTES), as 1PiB and 1PB are taken
}
#: Bit units a user may mistakenly give as a size (refused with a hint).
_BIT_UNITS = ("b", "kb", "Kb", "Mb", "Gb", "Tb", "Pb", "Kib", "Mib", "Gib", "Tib", "bit", "bits")
#: Units a cable length takes, metres inside: a builder's ``length`` in a spec string
#: (``ring:n=4,length=20m``) and a sweep's ``fabric.length`` (``50cm``) alike.
LENGTH_UNITS = {"": 1.0, "mm": 1e-3, "cm": 1e-2, "m": 1.0, "km": 1e3}
_TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12}
_BANDWIDTH_UNITS = {
    "": 1.0, "B/s": 1.0,
    "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12, "PB/s": 1e15,
    "KiB/s": 2.0**10, "MiB/s": 2.0**20, "GiB/s": 2.0**30, "TiB/s": 2.0**40,
    "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
    "b/s": 1 / 8, "kb/s": 1e3 / 8, "Kb/s": 1e3 / 8, "Mb/s": 1e6 / 8, "Gb/s": 1e9 / 8,
    "Tb/s": 1e12 / 8, "Pb/s": 1e15 / 8,
    "bps": 1 / 8, "Kbps": 1e3 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8,
    "Tbps": 1e12 / 8,
}
#: Largest message size taken (bytes): 1 PiB (2**50), the largest unit a size takes. A message
#: (nccl-tests' convention: the full buffer on each rank) lies in one GPU's memory, and a GPU
#: file may declare at most 100,000 GB of HBM (compute/data/limits.toml, gpu.hbm_capacity_GB:
#: ~350x a B200's 192 GB); 1 PiB is 11x that, so a larger size is a typo (1e30) or hostile,
#: not a message (1e308 B was costed as an all-reduce of 3.6e296 s). Checked where a size is
#: given: :func:`parse_bytes` and the collectives library's entry points
#: (:func:`check_message_bytes`).
MAX_MESSAGE_BYTES = 2**50
#: The message sizes :func:`parse_bytes` takes, as each of its refusals states them (0, 0.5,
#: 1.5 and 2 PiB alike), with why its top is where it is.
MESSAGE_RULE = (f"a whole number of bytes from 1 B to 1 PiB ({MAX_MESSAGE_BYTES:,} B, more "
                f"than any GPU's memory holds)")


def check_message_bytes(n, what: str = "message size") -> None:
    """Refuse a size (a number or an array of finite sizes) above :data:`MAX_MESSAGE_BYTES`,
    naming the first one too large.

    >>> check_message_bytes(2.0**50)
    >>> check_message_bytes([1.0, 1e300])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compute.errors.UserError: message size 1e+300 B is above 1 PiB (1,125,899,906,842,624 B), ...
    """
    import numpy as np

    a = np.asarray(n, dtype=float)
    if a.size and a.max() > MAX_MESSAGE_BYTES:
        first = float(a.flat[int(np.argmax(a.ravel() > MAX_MESSAGE_BYTES))])
        raise UserError(f"{what} {first:g} B is above 1 PiB ({MAX_MESSAGE_BYTES:,} B), more "
                        f"than any GPU's memory holds")


def parse_bytes(text: str | float, what: str = "size", *, rule: str | None = None) -> float:
    """A message size in bytes from e.g. ``'64MiB'``, ``'1GB'``, ``'8M'`` (nccl-tests style,
    binary) or a number: a whole number of bytes >= 1 (bits and fractions of a byte are
    refused; see the module docstring for the unit rules). ``rule``: where the caller holds
    a range of its own (a buffer's), what its refusals say is allowed; the bytes are then
    returned for the caller to check (any finite number above 0), so a value below the
    range and one above it are refused in the same words."""
    if isinstance(text, str):
        m = split_number(text, what)
        if m and m[1] in _BIT_UNITS:
            raise UserError(f"{what} {describe(text)} is in bits ({m[1]}); a size is in bytes: "
                            f"write B (8b = 1B)")
    value = parse_quantity(text, _BYTE_UNITS, what, rule=rule or MESSAGE_RULE)
    if rule is not None:
        return value
    if not 1 <= value <= MAX_MESSAGE_BYTES or value != math.floor(value):
        # below 1 B, a fraction or past 1 PiB: the one range said each time
        raise UserError(f"{what} {describe(text)} is {value:g} B: a message is {MESSAGE_RULE}")
    return value


def time_units() -> tuple[str, ...]:
    """The units :func:`parse_time` takes (a bare number is seconds), for help texts.

    >>> time_units()
    ('s', 'ms', 'us', 'µs', 'ns', 'ps')
    """
    return tuple(u for u in _TIME_UNITS if u)


def size_units() -> tuple[str, ...]:
    """The units :func:`parse_bytes` takes (a bare number is bytes), for help texts.

    >>> size_units()[:4]
    ('B', 'kB', 'KB', 'MB')
    """
    return tuple(u for u in _BYTE_UNITS if u)


def parse_time(text: str | float, what: str = "time", *, allow_zero: bool = True,
               quantity: str | None = None) -> float:
    """Seconds from e.g. ``'0.1us'``, ``'50ms'``, ``'1s'`` or a number of seconds;
    ``quantity`` (a ``[quantity]`` key of ``compute/data/limits.toml``, ``"tbt"``): also
    within its plausible range (:func:`check_plausible`, which names ``text`` as typed),
    the range stated by a refusal below it too (0, -1, nan), as above it.

    >>> parse_time("-1", "--tbt", allow_zero=False, quantity="tbt")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --tbt must be a time from 1 us to 10 s, got '-1'
    """
    if quantity is None:
        return parse_quantity(text, _TIME_UNITS, what, allow_zero=allow_zero)
    value = parse_quantity(text, _TIME_UNITS, what, allow_zero=allow_zero,
                           rule=f"a time from {plausible_range(quantity)}")
    return check_plausible(quantity, value, what, typed=text)


def plausible_range(quantity: str) -> str:
    """The range of ``quantity`` (a ``[quantity]`` key of ``compute/data/limits.toml``) as
    :func:`check_plausible`'s refusal states it.

    >>> plausible_range("ttft")
    '1 us to 600 s'
    """
    r = limits("quantity")[quantity]
    least = "0" if r.minimum == 0 else format_quantity(r.minimum, r.unit)
    return f"{least} to {format_quantity(r.maximum, r.unit)}"


def parse_bandwidth(text: str | float, what: str = "bandwidth", *,
                    quantity: str | None = None, rule: str | None = None) -> float:
    """Bytes/s from e.g. ``'450GB/s'``, ``'400Gb/s'`` (bits), ``'3.35TB/s'`` or a number;
    ``quantity`` as :func:`parse_time` takes it (``"link_bandwidth"``); ``rule`` as
    :func:`~compute.quantities.parse_quantity` takes it (by default, with ``quantity``, its
    range: 0 refused as 1e30 is)."""
    if rule is None and quantity is not None:
        rule = f"a bandwidth from {plausible_range(quantity)}"
    value = parse_quantity(text, _BANDWIDTH_UNITS, what, rule=rule)
    return value if quantity is None else check_plausible(quantity, value, what, typed=text)


#: The unit families of :func:`check_plausible`'s quantities (a ``[quantity]`` entry's
#: ``unit``): the suffixes a value takes, each with its factor to SI.
_FAMILIES = {"s": _TIME_UNITS, "B/s": _BANDWIDTH_UNITS}
#: Unit suffixes a slip hint names, in words.
_UNIT_WORDS = {"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
               "MB/s": "megabytes per second", "GB/s": "gigabytes per second",
               "TB/s": "terabytes per second", "Gb/s": "gigabits per second"}


#: The decimal rates a bandwidth is printed in, largest first (:func:`format_quantity`,
#: :func:`format_bandwidth`, topology compare's rows; :func:`parse_bandwidth` reads each), and
#: below them ``B/s``.
RATE_RUNGS = tuple((u, _BANDWIDTH_UNITS[u]) for u in ("PB/s", "TB/s", "GB/s", "MB/s", "kB/s"))
#: The unit below :data:`RATE_RUNGS`, with its factor: a rate under 1 kB/s is in ``B/s``.
RATE_FLOOR = ("B/s", _BANDWIDTH_UNITS["B/s"])
#: The units a time is printed in, largest first (:func:`format_time`), and below them ``ns``.
_TIME_RUNGS = tuple((u, _TIME_UNITS[u]) for u in ("s", "ms", "us"))


def rung(value: float, rungs: tuple[tuple[str, float], ...] = RATE_RUNGS,
         below: tuple[str, float] = RATE_FLOOR) -> tuple[str, float]:
    """``(unit, factor)``: the largest of ``rungs`` (``(unit, factor)`` pairs, largest
    first) where ``value`` reads at least 1 once rounded to 4 significant digits, else
    ``below``; so the mantissa is under 1000 after rounding on every rung but the top one
    (999.96e9 B/s is ``1 TB/s``, not ``1000 GB/s``, which a test of the value before
    rounding printed). The choice :func:`format_quantity` and :func:`format_time` print
    by, and topology compare's rows are scaled by.

    >>> rung(999.96e9), rung(125e3), rung(0.5), rung(-2e9)
    (('TB/s', 1000000000000.0), ('kB/s', 1000.0), ('B/s', 1.0), ('GB/s', 1000000000.0))
    """
    value = float(value)
    return next(((name, scale) for name, scale in rungs
                 if abs(float(f"{value / scale:.4g}")) >= 1), below)


def _readable(value: float, rungs: tuple[tuple[str, float], ...], below: tuple[str, float]) -> str:
    """``value`` in the unit :func:`rung` chooses, to 4 significant digits."""
    name, scale = rung(value, rungs, below)
    return f"{float(value) / scale:.4g} {name}"


def format_quantity(value: float, unit: str) -> str:
    """``value`` (SI ``unit``: ``"s"`` or ``"B/s"``) as a person reads it: the unit with the
    fewest digits before the point, 4 significant digits, the number under 1000 once
    rounded (up to ``PB/s``; ``s`` for a time).

    >>> format_quantity(50, "s"), format_quantity(1e-6, "s"), format_quantity(100, "B/s")
    ('50 s', '1 us', '100 B/s')
    >>> format_quantity(112.5e9, "B/s"), format_quantity(1e14, "B/s")
    ('112.5 GB/s', '100 TB/s')
    >>> format_quantity(1e15, "B/s"), format_quantity(999.96e12, "B/s")
    ('1 PB/s', '1 PB/s')
    """
    if unit == "s":
        return format_time(value)
    return _readable(value, RATE_RUNGS, RATE_FLOOR)


def _bare(typed: object) -> bool:
    """Whether ``typed`` is a number with no unit (so read in SI)."""
    m = NUMBER_WITH_UNIT.match(typed) if isinstance(typed, str) else None
    return m is not None and not m.group(2)


def _shown_past(value: float, bound: float, unit: str) -> str:
    """``value`` (SI ``unit``), outside a range whose nearer bound is ``bound``, as
    :func:`format_quantity` writes it, or to as many digits as tell it from the bound
    where 4 round it onto it (600.001 s is not '600 s', the bound it passes).

    >>> _shown_past(600.001, 600.0, "s"), _shown_past(700.0, 600.0, "s")
    ('600.001 s', '700 s')
    """
    shown = format_quantity(value, unit)
    if shown != format_quantity(bound, unit):
        return shown
    name = shown.rsplit(" ", 1)[1]
    scale = _FAMILIES[unit][name]
    return next((f"{value / scale:.{d}g} {name}" for d in range(5, 18)
                 if float(f"{value / scale:.{d}g}") != bound / scale), shown)


def check_plausible(quantity: str, value: float, what: str, typed: object = None) -> float:
    """``value`` (SI) if it lies in the plausible range of ``quantity`` (a ``[quantity]`` key
    of ``compute/data/limits.toml``: ``"ttft"``, ``"tbt"``, ``"link_bandwidth"``,
    ``"link_latency"``), else a
    :class:`UserError` in one line naming ``what``, the value as read (``typed``, the text
    the user gave, when known) with its unit, the range, and for a bare number (or a number
    from Python, which is SI too) the unit it was likely meant in. The library names the
    parameter (``tbt SLO``); the command line passes its flag (``--tbt``) and the text.

    >>> check_plausible("tbt", 0.05, "--tbt", "50ms")
    0.05
    >>> check_plausible("tbt", 50.0, "--tbt", "50")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --tbt 50 was read as 50 s, outside the 1 us to 10 s allowed for a decode SLO (TBT, time between tokens); write 50ms for milliseconds
    >>> check_plausible("link_bandwidth", 100.0, "bandwidth")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: bandwidth 100 B/s, outside the 125 kB/s to 1 PB/s allowed for a fabric's link or per-GPU bandwidth (per direction); a number is in B/s: for 100 GB/s give 1e+11
    """
    r = limits("quantity")[quantity]
    if r.minimum <= value <= r.maximum:
        return value
    try:
        shown = _shown_past(float(value), r.maximum if value > r.maximum else r.minimum,
                            r.unit)
    except OverflowError:   # a whole number past a float (Slo(tbt=10**400))
        shown = f"{describe(value)} (in {r.unit})"
    text = typed.strip() if isinstance(typed, str) else None
    if text is None:
        head = f"{what} {shown}"
    elif _bare(text):
        head = f"{what} {text} was read as {shown}"
    else:
        head = f"{what} {text} is {shown}"
    message = f"{head}, outside the {plausible_range(quantity)} allowed for {r.label}"
    number = (text if text is not None else
              f"{value:g}" if isinstance(value, float) else str(value))
    # a slip is a number as people write one in the unit meant (50, 330, 100), not 0.002
    if (text is None or _bare(text)) and 1 <= value < 1e30:
        for unit in r.hints:
            try:
                meant = scaled(number, _FAMILIES[r.unit][unit])
            except (ValueError, OverflowError):
                break
            if r.minimum <= meant <= r.maximum:
                if text is None:
                    message += (f"; a number is in {r.unit}: for {number} {unit} give "
                                f"{meant:g}")
                else:
                    message += f"; write {number}{unit} for {_UNIT_WORDS[unit]}"
                break
    raise UserError(message)


#: Most sizes :func:`parse_size_range` makes (a tiny factor would otherwise ask for billions).
MAX_SIZES = 100_000


def parse_size_range(text: str, what: str = "sizes", *, max_sizes: int = MAX_SIZES) -> list[float]:
    """Message sizes from ``'LO:HI'`` (powers of two from LO to HI, as nccl-tests -f 2),
    ``'LO:HI:FACTOR'``, or a comma list ``'1KiB,1MiB'``; at most ``max_sizes`` of them
    (counted before any list is built)."""
    from compute.validate import MAX_WHOLE, number

    max_sizes = number("", "max_sizes", max_sizes, minimum=1, maximum=MAX_WHOLE, integer=True)
    text = str(text).strip()
    if "," in text or ":" not in text:
        if text.count(",") >= max_sizes:
            raise UserError(f"{what} lists more than {max_sizes:,} sizes")
        items = text.split(",")
        if not text:
            raise UserError(f"{what} {text!r} is empty; give e.g. '1KiB:1GiB' or '1KiB,1MiB'")
        if not all(t.strip() for t in items):
            raise UserError(f"{what} {text!r} has an empty item; give e.g. '1KiB:1GiB' or "
                            f"'1KiB,1MiB'")
        sizes = [parse_bytes(t, what) for t in items]
        seen: dict = {}
        for i, n in enumerate(sizes):   # by value: 1MiB and 1048576 are one
            first = seen.setdefault(n, i)
            if first != i:   # a table's rows twice, as --groups 8,8 is refused
                raise UserError(f"{what} {text!r} names {format_bytes(n)} twice "
                                f"({items[first].strip()!r} and {items[i].strip()!r}); give "
                                f"each size once")
        return sizes
    lo, factor, n = _size_range(text, what)
    if n > max_sizes:
        raise UserError(f"{what} {text!r} makes {n:,} sizes, more than the limit of "
                        f"{max_sizes:,}; use a larger factor or a narrower range")
    return [lo * factor**i for i in range(n)]


def _size_range(text: str, what: str) -> tuple[float, float, int]:
    """LO, FACTOR and the count of sizes of a range ``'LO:HI[:FACTOR]'`` (stripped), each
    part checked: the one reading of a range, for :func:`parse_size_range` and
    :func:`count_sizes`."""
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise UserError(f"{what} {text!r} must be 'LO:HI' or 'LO:HI:FACTOR'")
    blank = [n for n, t in zip(("LO", "HI", "FACTOR"), parts, strict=False) if not t.strip()]
    if blank:   # said of the range typed, not of its empty part ('' is not a number)
        raise UserError(f"{what} {text!r} has no {' or '.join(blank)}; give 'LO:HI' or "
                        f"'LO:HI:FACTOR', e.g. '1KiB:1GiB' or '1KiB:1GiB:4'")
    lo, hi = parse_bytes(parts[0], what), parse_bytes(parts[1], what)
    factor = check_finite_positive(f"{what} factor", parts[2]) if len(parts) == 3 else 2.0
    if hi < lo:
        raise UserError(f"{what} {text!r} is empty: HI {format_bytes(hi)} is below LO "
                        f"{format_bytes(lo)}")
    if factor <= 1:
        raise UserError(f"{what} factor must be > 1, got {factor:g}")
    return lo, factor, int(math.floor(math.log(hi / lo) / math.log(factor) + 1e-9)) + 1


def count_sizes(text: str, what: str = "sizes") -> int:
    """How many sizes :func:`parse_size_range` makes of ``text``, worked out before any
    list is built (a range refused as it refuses it), so a caller can bound the work.

    >>> count_sizes("1KiB:1GiB"), count_sizes("1KiB,1MiB"), count_sizes("1KiB:1GiB:1024")
    (21, 2, 3)
    """
    text = str(text).strip()
    if "," in text or ":" not in text:
        return text.count(",") + 1
    return _size_range(text, what)[2]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural but for one (every count in words is written by it: "1
    stream", "1 edge", "2 hops"; but :mod:`compute.validate`'s descriptions of a value,
    which this module imports); thousands grouped; past 10**15 its power of ten (an
    estimate that large is told by size).

    ``plural``: the noun's plural where it is not ``noun + "s"`` (``leaves``).

    >>> counted(1, "edge"), counted(2_000_000, "node"), counted(10**20, "edge")
    ('1 edge', '2,000,000 nodes', '10^20 edges')
    >>> counted(1, "leaf", "leaves"), counted(4, "leaf", "leaves")
    ('1 leaf', '4 leaves')
    """
    many = plural or f"{noun}s"
    if n < 10**15:
        return f"{n:,} {noun if n == 1 else many}"
    return f"10^{int(n.bit_length() * 0.30103)} {many}"


#: The binary prefixes a size is printed in, largest first (:func:`format_bytes`; each is a
#: unit :func:`parse_bytes` reads), and below them ``B``.
_BYTE_RUNGS = tuple((u, _BYTE_UNITS[u]) for u in ("PiB", "TiB", "GiB", "MiB", "KiB"))


def format_bytes(n: float) -> str:
    """Binary-prefixed size for tables: ``'64 MiB'``, ``'1.5 GiB'``, ``'512 B'``; 6
    significant digits, in the largest prefix (up to ``PiB``) where the size reads at least
    1 once rounded, so the number is under 1024 on every rung but the top. Just under a
    rung (within 5 parts in a million), where the rung above reads 0.99999x and 6 digits
    round up to 1024, a 7th digit is shown: 1,048,575 B is ``1023.999 KiB``, not
    ``1024 KiB``.

    >>> format_bytes(2**50), format_bytes(1048575), format_bytes(1536), format_bytes(1023)
    ('1 PiB', '1023.999 KiB', '1.5 KiB', '1023 B')
    """
    n = float(n)
    for unit, scale in _BYTE_RUNGS:
        text = f"{n / scale:g}"
        if abs(float(text)) >= 1:
            if abs(float(text)) >= 1024 and unit != _BYTE_RUNGS[0][0]:
                # the rung above read under 1 (below 0.9999995), so 7 digits read under 1024
                text = f"{n / scale:.7g}"
            return f"{text} {unit}"
    text = f"{n:g}"
    return f"{n:.7g} B" if abs(float(text)) >= 1024 else f"{text} B"


def format_bandwidth(b: float) -> str:
    """Bytes/s as a spec string a person reads and :func:`parse_bandwidth` reads back to
    the same float: ``'112.5GB/s'``, ``'1.8TB/s'``, ``'1PB/s'``; the plain number where no
    decimal prefix gives it back exactly. Any value prints (a formatter never refuses; the
    parsers do): a negative one as its size with a ``-``, ``inf`` and ``nan`` as such.

    >>> format_bandwidth(112.5e9), format_bandwidth(450e9 * 4), format_bandwidth(1/3)
    ('112.5GB/s', '1.8TB/s', '0.3333333333333333')
    >>> format_bandwidth(1e15), format_bandwidth(125e3)
    ('1PB/s', '125kB/s')
    >>> format_bandwidth(-1536), format_bandwidth(float("-inf")), format_bandwidth(float("nan"))
    ('-1.536kB/s', '-inf', 'nan')
    """
    b = float(b)
    if not math.isfinite(b):
        return repr(b)
    size, sign = abs(b), "-" if b < 0 else ""
    for unit, scale in RATE_RUNGS:
        if size >= scale:
            text = f"{size / scale!r}".removesuffix(".0") + unit
            if parse_bandwidth(text) == size:
                return sign + text
    return repr(b)


def format_time(t: float) -> str:
    """Seconds in the most readable unit, 4 significant digits, under 1000 once rounded
    (but in seconds): ``'12.5 us'``, ``'3.1 ms'``.

    >>> format_time(12.5e-6), format_time(3.1e-3), format_time(999.96e-6), format_time(5e-10)
    ('12.5 us', '3.1 ms', '1 ms', '0.5 ns')
    """
    return _readable(t, _TIME_RUNGS, ("ns", _TIME_UNITS["ns"]))


# ------------------------------------------------------------------ values of a data row's unit

#: Seconds of a year: the Julian year of 365.25 days of 86,400 s (IAU); compute/rows.py converts
#: a row in ``year`` with it, the cost model and the reliability catalog count years in it.
SECONDS_PER_YEAR = 365.25 * 86400
#: Joules of a kilowatt-hour: 1,000 W for 3,600 s (exact).
JOULES_PER_KWH = 3.6e6
_YEAR_S = 31_557_600   # SECONDS_PER_YEAR as an integer, for exact factors
#: 1/s per 1/year, exactly 1/31,557,600 (:class:`ExactFactor`).
PER_YEAR = ExactFactor(1, _YEAR_S)

_FRACTION = {"": 1.0, "%": 1e-2}
_USD = {"": 1.0, "USD": 1.0, "$": 1.0}
_POWER = {"": 1.0, "W": 1.0, "mW": 1e-3, "kW": 1e3, "MW": 1e6}
_LIFETIME = {"": 1.0, "y": SECONDS_PER_YEAR, "yr": SECONDS_PER_YEAR, "year": SECONDS_PER_YEAR,
             "years": SECONDS_PER_YEAR, "d": 86400.0, "day": 86400.0, "days": 86400.0,
             "h": 3600.0, "s": 1.0}
#: bit/s per unit of a bit rate (the rates of _BANDWIDTH_UNITS, which are bytes/s, times 8)
_BIT_RATES = {k: _BANDWIDTH_UNITS[k] * 8 for k in (
    "Gb/s", "Gbps", "Tb/s", "Tbps", "Mb/s", "Mbps", "kb/s", "Kb/s", "kbps", "Kbps", "b/s", "bps",
    "GB/s", "TB/s", "MB/s", "B/s")}

#: What a value of a data-file row's ``unit`` (compute.rows.UNITS) may be typed in on the
#: command line (``cost.NAME`` of a sweep), by that unit: the SI unit the value is held in
#: (a bare number is read in it, and outputs name it beside the SI value, as
#: compute.rows.SI_UNITS; ``"a plain number"`` for a pure number) and the suffixes taken,
#: each with its factor to SI. The row's own unit is one of them, with the factor
#: compute.rows.UNITS gives it.
ROW_UNIT_INPUTS: dict[str, tuple[str, dict[str, float]]] = {
    "1": ("a plain number", _FRACTION),
    "USD": ("USD", _USD),
    "W": ("W", _POWER),
    "year": ("s", _LIFETIME),
    "1/year": ("1/s", {"": 1.0, "1/year": PER_YEAR, "/year": PER_YEAR, "/y": PER_YEAR,
                       "%/year": ExactFactor(1, 100 * _YEAR_S),
                       "%/y": ExactFactor(1, 100 * _YEAR_S), "1/s": 1.0, "/s": 1.0}),
    "USD/kWh": ("USD/J", {"": 1.0, **{f"{c}/{e}": ExactFactor(1, j) for c in ("USD", "$")
                                      for e, j in (("kWh", 3_600_000), ("MWh", 3_600_000_000),
                                                   ("J", 1))}}),
    "pJ/bit": ("J/bit", {"": 1.0, **{f"{p}J/{b}": k for p, k in
                                     (("p", 1e-12), ("f", 1e-15), ("n", 1e-9), ("", 1.0))
                                     for b in ("bit", "b")}}),
    "USD/(Gb/s)": ("USD/(bit/s)", {"": 1.0, **{f: ExactFactor(1, exact_value(r))
                                               for c in ("USD", "$")
                                               for k, r in _BIT_RATES.items()
                                               for f in (f"{c}/({k})", f"{c}/{k}")}}),
    "USD/GB": ("USD/byte", {"": 1.0, **{f"{c}/{k}": ExactFactor(1, exact_value(_BYTE_UNITS[k]))
                                        for c in ("USD", "$")
                                        for k in ("B", "MB", "GB", "TB", "MiB", "GiB", "TiB")}}),
    "USD/port": ("USD/port", {**_USD, "USD/port": 1.0, "$/port": 1.0}),
    "W/port": ("W/port", {**_POWER, **{f"{k}/port": v for k, v in _POWER.items() if k}}),
    "USD/m": ("USD/m", {"": 1.0, **{f"{c}/{k}": ExactFactor(1, exact_value(v)) for c in ("USD", "$")
                                    for k, v in (("m", 1.0), ("km", 1e3))}}),
    "m": ("m", {"": 1.0, "mm": 1e-3, "cm": 1e-2, "m": 1.0, "km": 1e3}),
    "mm": ("m", {"": 1.0, "mm": 1e-3, "cm": 1e-2, "m": 1.0}),
    "mm^2": ("m^2", {"": 1.0, "mm^2": 1e-6, "cm^2": 1e-4, "m^2": 1.0}),
    "USD/mm^2": ("USD/m^2", {"": 1.0, **{f"{c}/{k}": ExactFactor(1, exact_value(v))
                                         for c in ("USD", "$")
                                         for k, v in (("mm^2", 1e-6), ("cm^2", 1e-4),
                                                      ("m^2", 1.0))}}),
    "1/cm^2": ("1/m^2", {"": 1.0, **{f"{o}/{k}": ExactFactor(1, exact_value(v)) for o in ("1", "")
                                     for k, v in (("cm^2", 1e-4), ("mm^2", 1e-6),
                                                  ("m^2", 1.0))}}),
}
#: rent per W of IT power and second (SI) per kW a month or a year (Julian: a twelfth of
#: SECONDS_PER_YEAR a month)
ROW_UNIT_INPUTS["USD/kW/month"] = ("USD/(W s)", {"": 1.0, **{
    f"{c}/{w}/{t}": ExactFactor(per_year, exact_value(_POWER[w]) * _YEAR_S)
    for c in ("USD", "$") for w in ("kW", "MW", "W")
    for t, per_year in (("month", 12), ("year", 1))}})
ROW_UNIT_INPUTS["1/mm^2"] = ROW_UNIT_INPUTS["1/cm^2"]
ROW_UNIT_INPUTS["USD/GiB"] = ROW_UNIT_INPUTS["USD/GB"]   # a DRAM chip's price (2**30 bytes)


def parse_in_unit(text: str, unit: str, what: str, example: str = "", *,
                  outside: str | None = None) -> float:
    """A value of a quantity stored in a data row's ``unit`` (compute.rows.UNITS), typed with
    a suffix of that unit's family (:data:`ROW_UNIT_INPUTS`) and converted to SI once; a bare
    number is SI. A suffix of another family is refused in one line naming ``what``, its
    unit and ``example``. A value below 0 or not finite is refused as 'must be a finite
    number >= 0', or, given ``outside`` (the range the caller takes), as 'is outside
    {outside}'.

    >>> parse_in_unit("0.1USD/kWh", "USD/kWh", "cost.electricity_price")
    2.7777777777777777e-08
    >>> parse_in_unit("5y", "year", "cost.lifetime") == 5 * SECONDS_PER_YEAR
    True
    >>> parse_in_unit("75%", "1", "cost.utilization"), parse_in_unit("1.2kW", "W", "p")
    (0.75, 1200.0)
    >>> parse_in_unit("700W", "USD/kWh", "cost.electricity_price", "0.0826USD/kWh")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: cost.electricity_price value '700W' is not a number in a unit of USD/kWh (the unit of its data row): 'W' is not one; write e.g. 0.0826USD/kWh, or a bare number in USD/J (SI); allowed units: USD/kWh, USD/MWh, USD/J, $/kWh, $/MWh, $/J
    """
    si, units = ROW_UNIT_INPUTS[unit]
    m = split_number(str(text), what)
    if not m:
        return parse_quantity(text, units, what, allow_zero=True)  # 'is not a number ...'
    number, suffix = m
    if suffix not in units:
        named = [u for u in units if u]
        shown = ", ".join(named[:8]) + (f", ... ({len(named)} in all)" if len(named) > 8 else "")
        bare = "a bare number (SI)" if si == "a plain number" else f"a bare number in {si} (SI)"
        label = "a plain number" if unit == "1" else unit
        raise UserError(f"{what} value {describe(text)} is not a number in a unit of {label} "
                        f"(the unit of its data row): {describe(suffix)} is not one; write e.g. "
                        f"{example or unit}, or {bare}; allowed units: {shown}")
    value = scaled(number, units[suffix])
    if not (math.isfinite(value) and value >= 0):
        raise UserError(f"{what} value {describe(text)} "
                        + (f"is outside {outside}" if outside else "must be a finite number >= 0"))
    return value + 0.0   # '-0USD/kWh' is 0 (printed '-0'), as compute.validate.number has it
