"""The values of a sweep: one swept parameter's values read and checked, and the limits on a
sweep's values and searches.

:class:`SweepParam` is one swept parameter and its values, read from ``PATH=LO:HI[:N]`` or
``PATH=V1,V2`` (:func:`parse_param`), or made in Python and checked the same way
(:func:`check_param`), against every scenario of the sweep (the paths each may sweep:
:mod:`netmodel.study.sweep_paths`); :data:`MAX_POINTS` and :data:`MAX_SEARCHES` bound a
sweep, said before any value is made.

>>> p = parse_param("fabric.planes=2:32:3", ["lite-flat"])
>>> p.values, p.integer
((2.0, 8.0, 32.0), True)
>>> parse_param("adjust.hop_latency=1us,0.1us", ["lite-flat"]).show(1e-07)
'adjust.hop_latency=0.1us'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from compute.limits import check
from compute.validate import an_int, describe, is_flag, is_whole, listed, number, read_number
from netmodel.study.scenarios import ADJUST_RANGES
from netmodel.study.sweep_paths import _kind, _unset_word, sweep_scenarios
from netmodel.study.sweep_values import COST, _in_row_unit, _value
from topologies.common import check_positive
from topologies.limits import PHYSICAL_MAX

if TYPE_CHECKING:
    from netmodel.study.scenarios import Scenario

#: Values of a ``LO:HI`` range.
DEFAULT_POINTS = 7
#: Most values of one parameter (``NETMODEL_MAX_SWEEP_POINTS`` overrides).
MAX_POINTS = 1_000
#: Most searches of one sweep: scenarios x points x models x phases
#: (``NETMODEL_MAX_SWEEP_SEARCHES`` overrides; each takes 5-100 ms on one core).
MAX_SEARCHES = 20_000


@dataclass(frozen=True)
class SweepParam:
    """One swept parameter: its path, values (SI), unit and whether it is an integer."""

    path: str
    values: tuple[float, ...]
    unit: str = ""
    integer: bool = False

    def display(self) -> tuple[float, str]:
        """``(scale, unit)``: a value times ``scale`` is the number shown in ``unit`` in
        tables, figures and the summary. Times in us, bandwidths in GB/s, a cost parameter in
        its data row's unit (the unit it is typed in: ``0.1USD/kWh``, not 2.78e-08 USD/J).

        >>> SweepParam("adjust.hop_latency", (1e-7,), "s").display()
        (1000000.0, 'us')
        >>> k, unit = SweepParam("cost.electricity_price", (2.5e-8,)).display()
        >>> round(2.5e-8 * k, 6), unit
        (0.09, 'USD/kWh')
        """
        if self.path.startswith(COST):
            from compute.rows import UNITS
            from netmodel.study.cost import parameter_rows

            unit = parameter_rows()[self.path[len(COST):]].unit
            return 1.0 / UNITS[unit], "" if unit == "1" else unit
        return _SHOWN.get(self.unit, (1.0, self.unit))

    def show(self, v: float) -> str:
        """``PATH=V`` in the unit a table shows (``adjust.hop_latency=0.1us``, not 1e-07; a
        cost parameter as a sweep reads it back, ``cost.maintenance_fraction=0.05/year``).

        >>> SweepParam("cost.maintenance_fraction", (1.5844043907014474e-09,)).show(
        ...     1.5844043907014474e-09)
        'cost.maintenance_fraction=0.05/year'
        """
        k, unit = self.display()
        if self.path.startswith(COST):
            return f"{self.path}={_in_row_unit(v * k, unit or '1')}"
        return f"{self.path}={v * k:g}{unit}"

    def digits(self) -> int:
        """The significant digits a table and its notes write this parameter's values with
        (in :meth:`display`'s unit): 3, or as many more as it takes to write every swept
        value apart (1599, 1600 and 1601 USD all read 1.6e+03 at 3).

        >>> SweepParam("cost.nic_price", (1599.0, 1600.0, 1601.0)).digits()
        4
        >>> SweepParam("adjust.hop_latency", (1e-7, 1e-6, 1e-5), "s").digits()
        3
        """
        k, _ = self.display()
        shown = sorted({float(v) * k for v in self.values if v == v})
        return next((d for d in range(3, 18)
                     if len({f"{x:.{d}g}" for x in shown}) == len(shown)), 17)


def _written(x: float, digits: int) -> str:
    """``x`` (a swept value in its shown unit) at ``digits`` significant digits, or as typed
    where up to 6 write it exactly (1599 USD, not 1.6e+03).

    >>> _written(1599.0, 3), _written(0.31622776601683794, 3), _written(0.1, 3)
    ('1599', '0.316', '0.1')
    """
    return next((t for d in range(digits, 7) if float(t := f"{x:.{d}g}") == x),
                f"{x:.{digits}g}")


#: Scale and unit a value of a parameter in SI ``unit`` is shown in.
_SHOWN = {"s": (1e6, "us"), "bytes/s": (1e-9, "GB/s")}



def refuse_unread_points(points: object, texts: Iterable[object], *,
                         points_name: str = "points", param_name: str = "parameter of params",
                         drop: str = "leave points None") -> None:
    """Refuse ``points`` given (not None) where no parameter of ``texts`` is a ``LO:HI``
    range: a list or ``LO:HI:N`` has its own values, so no value would read it (the library
    swept the list without a word). ``points_name``, ``param_name`` and ``drop``: the
    refusal's words for them (a command line's flags).

    >>> refuse_unread_points(3, ["adjust.hop_latency=1us,2us"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: points 3 sets the values of a LO:HI range, and no parameter of params has one (adjust.hop_latency=1us,2us gives its own values): give LO:HI, or leave points None
    """
    texts = list(texts)
    if points is None or not texts or any(
            isinstance(t, str) and t.partition("=")[2].count(":") == 1 for t in texts):
        return
    raise UserError(f"{points_name} {points} sets the values of a LO:HI range, and no "
                    f"{param_name} has one ({texts[0]} gives its own values): give LO:HI, or "
                    f"{drop}")


def parse_param(text: str, scenarios: Iterable[str | Scenario], points: int | None = None,
                *, points_name: str = "points") -> SweepParam:
    """A :class:`SweepParam` from ``PATH=LO:HI[:N]`` or ``PATH=V1,V2,...``, checked against
    every scenario of the sweep. ``points``: the values of a ``LO:HI`` range, a whole
    number >= 1 (1 only where LO is HI: one value of a wider range would drop its HI);
    None, not given: :data:`DEFAULT_POINTS`, and a range whose HI is its LO is that one
    value (given, or ``N`` given, a count of more than one is refused there: N copies of
    one value). ``points_name``: what a refusal calls ``points`` (a caller that took it
    under another name, a command line's flag, says it so)."""
    scenarios = sweep_scenarios(scenarios)   # read twice below: a generator was spent
    counted = points is not None    # a count asked for, not the default
    points = DEFAULT_POINTS if points is None else points
    if not is_whole(points) or points < 1:   # a float, 3.0 too, is no count given in code
        said = "an int: " if an_int(points) else ""
        raise UserError(f"{points_name} must be a whole number >= 1 ({said}the values of a "
                        f"LO:HI range), got {describe(points)}")
    path, eq, spec = (text if isinstance(text, str) else "").partition("=")
    path, spec = path.strip(), spec.strip()
    if not eq or not path or not spec:   # str() of an object ran its own __str__ (or raised)
        raise UserError(f"sweep parameter {describe(text)} must be PATH=LO:HI or "
                        f"PATH=V1,V2 (e.g. "
                        f"adjust.hop_latency=0.1us:10us)")
    unit, integer = _kind(path, scenarios)
    word = _unset_word(path, scenarios)
    typed = [x.strip() for x in spec.replace(":", ",").split(",")]
    unset = next((x for x in typed if word and x.lower() == word), None)
    if unset is not None:   # the builder takes it; an axis has no place for it
        meaning = {"auto": "the builder works the value out"}.get(word, "none of it")
        raise UserError(f"sweep parameter {path} value {unset!r} is {word} ({meaning}, as "
                        f"if not given), not a number: a sweep puts its values on a numeric "
                        f"axis and interpolates crossovers between them; give numbers, e.g. "
                        f"{path}=V1,V2")
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise UserError(f"sweep parameter {path} range {spec!r} must be LO:HI or LO:HI:N")
        if any(x.strip().startswith("-") for x in parts[:2]):
            raise UserError(f"sweep parameter {path} range {spec!r} must be positive (values are "
                            f"log-spaced)")
        lo, hi = (_value(x, unit, path) for x in parts[:2])
        n = points
        if len(parts) == 3:
            counted = True
            n = read_number(f"sweep parameter {path}: N", parts[2], whole=True)
            if n is None or n < 1:
                raise UserError(f"sweep parameter {path}: N in {spec!r} must be a whole number "
                                f">= 1")
        check("sweep parameter " + path, "values", n, MAX_POINTS, "NETMODEL_MAX_SWEEP_POINTS",
              "give fewer points")
        _check_searches(n)   # each value is a search at least: said before any is made
        if lo <= 0 or hi <= 0:
            raise UserError(f"sweep parameter {path} range {spec!r} must be positive (values are "
                            f"log-spaced); give a comma list to include 0")
        if hi < lo:
            raise UserError(f"sweep parameter {path} range {spec!r} is empty: HI is below LO")
        if hi == lo and not counted:   # LO:HI with no count asked: the one value
            n = 1
        if n > 1 and hi == lo:   # N copies of one value, swept as one without a word
            raise UserError(f"sweep parameter {path} range {spec!r} of {n} values has HI equal "
                            f"to LO: each value would be {parts[0].strip()!r}; give HI above "
                            f"LO, or the one value")
        if n == 1 and hi != lo:   # geomspace of 1 is LO alone: the HI typed was dropped
            raise UserError(f"sweep parameter {path} range {spec!r} of 1 value would sweep "
                            f"its LO alone; give 2 or more values (N, or {points_name}), or the "
                            f"one value")
        values = [float(v) for v in np.geomspace(lo, hi, n)] if n > 1 else [lo]
    else:
        # counted before it is split: 10^7 items are seconds and a gigabyte of strings
        check("sweep parameter " + path, "values", spec.count(",") + 1, MAX_POINTS,
              "NETMODEL_MAX_SWEEP_POINTS", "give fewer values")
        items = [x.strip() for x in spec.split(",")]
        if not any(items):
            raise UserError(f"sweep parameter {path} has no values")
        if not all(items):
            raise UserError(f"sweep parameter {path} values {spec!r} have an empty item")
        values = [_value(x, unit, path) for x in items]
        seen: dict[float, int] = {}
        for i, v in enumerate(values):   # by value: 1us and 1000ns are one (exact units)
            first = seen.setdefault(v, i)
            if first != i:   # one column twice, as costs --sizes 1MiB,1048576 is refused
                scale, shown = SweepParam(path, (v,), unit).display()
                raise UserError(f"sweep parameter {path} values {spec!r} name {v * scale:g}"
                                f"{' ' + shown if shown else ''} twice ({items[first]!r} and "
                                f"{items[i]!r}); give each value once")
        if integer:
            _whole_values(path, values)
    return _bounded(path, values, unit, integer)


def _whole_values(path: str, values: list[float]) -> None:
    """Refuse the first value of a whole-number parameter that is not whole (typed or
    given in Python; a range's log-spaced values are rounded instead, :func:`_bounded`)."""
    fractional = [v for v in values if v != round(v)]
    if fractional:
        raise UserError(f"sweep parameter {path} takes whole numbers, got {fractional[0]:g}")


def _bounded(path: str, values: list[float], unit: str, integer: bool) -> SweepParam:
    """The :class:`SweepParam` of ``values`` read for ``path``, refused where its least or
    greatest is past what the parameter takes (a builder's physical maximum, a count from 1
    to what a fabric holds, an ``[adjust]`` range): each such point was refused silently as
    '-'. A whole-number parameter's values are rounded (a log-spaced range's), an axis is
    ordered and each value taken once."""
    if path.startswith("fabric.") and any(path.endswith(k) for k in PHYSICAL_MAX):
        for v in (min(values), max(values)):  # past the builder's maximum: refused, not '-'
            check_positive(path, v, allow_zero=True)
    if path.startswith("fabric.") and integer:
        for v in (min(values), max(values)):
            _check_count(path, v)
    if path.startswith("adjust.") and path[7:] in ADJUST_RANGES:
        lo, hi, adjust_unit = ADJUST_RANGES[path[7:]]   # as a scenario's [adjust] takes it
        for v in (min(values), max(values)):  # each point refused silently showed '-'
            number("", path, v, minimum=lo, maximum=hi, unit=adjust_unit)
    if integer:  # a log-spaced range of a whole-number parameter: its nearest whole numbers
        values = [float(round(v)) for v in values]
    # an axis is ordered: a list given out of order (10us,0.1us,1us) is swept in order, so
    # that neighbouring points are neighbouring values (crossovers interpolate between them)
    values = sorted(dict.fromkeys(values))
    return SweepParam(path, tuple(values), unit, bool(integer))


def check_param(param: object, scenarios: Iterable[str | Scenario]) -> SweepParam:
    """``param`` (a :class:`SweepParam` made in Python rather than read by
    :func:`parse_param`) checked as :func:`parse_param` checks text: a known path of every
    scenario, one to :data:`MAX_POINTS` values (counted before they are read), each a
    finite number >= 0 in SI (taken as it is: a time in s, a ``cost.*`` value in its row's
    SI unit, past the command line's plausible ranges too), whole for a whole-number one,
    within the parameter's bounds (:func:`_bounded`); ``unit`` and
    ``integer`` are the parameter's (filled in where left at their defaults). Before, NaN,
    no values, a fractional count or a unit of another kind ran a sweep of them.

    >>> check_param(SweepParam("fabric.planes", (16, 8)), ["lite-flat"])
    SweepParam(path='fabric.planes', values=(8.0, 16.0), unit='', integer=True)
    >>> check_param(SweepParam("adjust.hop_latency", (float("nan"),)), ["lite-flat"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: sweep parameter adjust.hop_latency value nan must be a finite number >= 0 (in SI, s)
    """
    if not isinstance(param, SweepParam):
        raise UserError(f"a sweep parameter must be a SweepParam or 'PATH=LO:HI' text, got "
                        f"{describe(param)}")
    path = param.path
    if not isinstance(path, str) or not path:
        raise UserError(f"sweep parameter path must be a name such as adjust.hop_latency, got "
                        f"{describe(path)}")
    unit, integer = _kind(path, scenarios)
    if param.unit not in ("", unit):
        raise UserError(f"sweep parameter {path} is in {unit or 'no unit'} (SI), not "
                        f"{param.unit!r}: give its values in {unit or 'plain numbers'}")
    n = len(param.values) if hasattr(param.values, "__len__") else None
    if n is not None:   # counted before the values are read: 10^7 of them cost seconds
        check("sweep parameter " + path, "values", n, MAX_POINTS, "NETMODEL_MAX_SWEEP_POINTS",
              "give fewer values")
        _check_searches(n)
    given = listed(f"sweep parameter {path} values", param.values, "numbers")
    check("sweep parameter " + path, "values", len(given), MAX_POINTS,
          "NETMODEL_MAX_SWEEP_POINTS", "give fewer values")
    if not given:
        raise UserError(f"sweep parameter {path} has no values")
    values = []
    for v in given:   # SI as it is (a cost past the command line's bound too), if a number
        try:
            # numpy's bool as Python's (np.True_ was swept as 1.0)
            x = float(v) if not (is_flag(v) or isinstance(v, str | bytes)) else math.nan
        except (TypeError, ValueError, OverflowError):   # an object, 10**400
            x = math.nan
        if not (math.isfinite(x) and x >= 0):
            raise UserError(f"sweep parameter {path} value {describe(v)} must be a finite "
                            f"number >= 0 (in SI{', ' + unit if unit else ''})")
        values.append(x + 0.0)   # -0.0 is 0, as a typed '-0'
    if integer:
        _whole_values(path, values)
    return _bounded(path, values, unit, integer)


def _check_searches(searches: int) -> None:
    """Refuse a sweep of more than :data:`MAX_SEARCHES` searches (``NETMODEL_MAX_SWEEP_SEARCHES``
    sets it): the whole sweep's count in :func:`~netmodel.study.sweep.run_sweep`, and one
    parameter's values (each a search at least) in :func:`parse_param`, before they are
    made. A range's values were
    made first: with ``NETMODEL_MAX_SWEEP_POINTS`` raised, ``LO:HI:100000000000000`` raised
    numpy's MemoryError (728 TiB) and ``--points 300000000`` took 3.2 GB for over a minute."""
    check("sweep", "searches", searches, MAX_SEARCHES, "NETMODEL_MAX_SWEEP_SEARCHES",
          "sweep fewer points, scenarios or models")


def _check_count(path: str, value: float) -> None:
    """Refuse a whole-number fabric parameter (a count: GPUs, ports, domains, ...) below 1
    (every builder's least) or past what any fabric within the size limits holds (its
    nodes, edges or a switch's ports, :mod:`topologies.limits`): every such point would be
    refused by the builder, shown as '-' with exit 0 (fabric.n=1e308, fabric.n=0)."""
    from topologies.limits import MAX_RADIX, max_edges, max_nodes

    most = max(max_nodes(), max_edges(), MAX_RADIX)
    if not 1 <= value <= most:
        raise UserError(f"sweep parameter {path} value {value:g} is outside what can be built: "
                        f"a count of a fabric is a whole number from 1 to {most:,} (its size "
                        f"limits, NETMODEL_MAX_FABRIC_NODES / NETMODEL_MAX_FABRIC_EDGES)")
