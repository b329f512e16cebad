"""Reading one value of a swept parameter: a time, bandwidth, length or number in SI, or a
``cost.*`` value in its data row's unit.

A ``cost.*`` value is typed in its data row's unit (``0.1USD/kWh``, ``5y``, ``75%``) or bare
SI, and bounded by :data:`ABSURD_COST_FACTOR` times its shipped default.

>>> round(_value("0.1us", "s", "adjust.hop_latency"), 12)
1e-07
>>> _value("100GB/s", "bytes/s", "fabric.bandwidth")
100000000000.0
>>> round(_value("0.1USD/kWh", "", "cost.electricity_price") * 3.6e6, 12)
0.1
"""

from __future__ import annotations

import math

from compute.errors import UserError
from compute.units import (
    LENGTH_UNITS,
    ROW_UNIT_INPUTS,
    parse_bandwidth,
    parse_in_unit,
    parse_quantity,
    parse_time,
)
from compute.validate import read_number

#: Prefix of the power and cost parameters (:func:`netmodel.study.cost.parameters`, SI
#: inside, typed in their data row's unit or bare SI): they change what a configuration costs, not which one is best, so a sweep of
#: them searches once per scenario and scores every point by USD per million tokens.
COST = "cost."

#: A cost parameter is swept up to this many times its shipped default: beyond it no system is
#: meant (an absurdity bound, not a sourced limit; 1e300 USD per Gb/s drew a figure whose axes
#: overflowed and printed USD 7e296 per million tokens).
ABSURD_COST_FACTOR = 1e6


def _in_row_unit(value: float, unit: str) -> str:
    """``value`` written in a data row's ``unit`` as a sweep reads it back: ``0.05/year``,
    not ``0.051/year`` (which reads as 0.051 a year).

    >>> _in_row_unit(0.05, "1/year"), _in_row_unit(0.75, "1"), _in_row_unit(18000, "USD")
    ('0.05/year', '0.75', '18000USD')
    """
    return f"{value:g}{unit[1:] if unit.startswith('1/') else '' if unit == '1' else unit}"


def _value(text: str, unit: str, what: str) -> float:
    text = text.strip()
    if what.startswith(COST):  # in its data row's unit (0.1USD/kWh, 5y, 75%) or bare SI
        return _cost_value(text, what)
    if unit == "s":   # a builder's latency: a switch's or link's, within its plausible range
        return parse_time(text, what, quantity="link_latency" if what.startswith("fabric.")
                          and what.endswith("latency") else None)
    if unit == "bytes/s":   # a builder's bandwidth: a link's, within its plausible range
        return parse_bandwidth(text, what, quantity="link_bandwidth")
    if unit == "m":  # a cable length (fabric.length): 20m, 50cm or a number of metres
        return parse_quantity(text, LENGTH_UNITS, what, allow_zero=True)
    v = read_number(f"{what} value", text,   # the one number grammar ('٢', '1_0' refused)
                    allowed=_adjust_range(what))
    if v is None:
        raise UserError(f"{what} value {text!r} is not a number")
    if not (math.isfinite(v) and v >= 0):
        raise UserError(f"{what} value {text!r} must be a finite number >= 0")
    return v + 0.0   # '-0' is 0 (the column printed '-0'), as compute.validate.number has it


def _adjust_range(what: str) -> str | None:
    """What the swept parameter ``what`` must be, for a value below the smallest number: an
    adjust key's range (:func:`~netmodel.study.scenarios.adjust_allowed`), 0 in it or not;
    None where the range is its builder's.

    >>> _adjust_range("adjust.bandwidth_scale"), _adjust_range("adjust.latency_scale")
    ('a number from 1e-09 to 1,000,000,000,000,000', 'a number from 0 to 1,000,000')
    >>> _adjust_range("fabric.k") is None
    True
    """
    from netmodel.study.scenarios import adjust_allowed

    return adjust_allowed(what.removeprefix("adjust.")) if what.startswith("adjust.") \
        else None


def _cost_value(text: str, what: str) -> float:
    """A cost parameter's value, typed in its data row's unit or bare SI, within the range
    :func:`~netmodel.study.cost.parameter_range` declares, its top at most
    :data:`ABSURD_COST_FACTOR` times the shipped default: one range said below it and
    above."""
    from netmodel.study.cost import parameter_range, parameter_rows

    rows = parameter_rows()
    name = what[len(COST):]
    row = rows[name]
    shown = _in_row_unit(row.raw, row.unit)
    low, high, low_open = parameter_range(name)
    base, of = row, f"its shipped default {shown}"
    if not row.value > 0:   # a default of 0 (copper_energy): the largest default in the same unit
        kin = [(r.value, n, r) for n, r in rows.items()
               if r.unit == row.unit and r.unit != "1" and _real_number(r.value) > 0]
        base = max(kin)[2] if kin else None
        if base is not None:
            of = (f"the largest shipped default in {row.unit} ({COST}{max(kin)[1]} "
                  f"{_in_row_unit(base.raw, base.unit)}; this one's is 0)")
    why = ""
    if base is not None and ABSURD_COST_FACTOR * base.value < high:
        high = ABSURD_COST_FACTOR * base.value
        why = f" (at most {ABSURD_COST_FACTOR:,.0f} times {of}: no system is priced so)"
    scale = base.raw / base.value if base is not None else 1.0   # SI -> the row's unit

    def said(x: float) -> str:
        return _in_row_unit(x * scale, row.unit)

    span = (f"above {low * scale:g} up to {said(high)}" if low_open
            else f"from {low * scale:g} to {said(high)}") if math.isfinite(high) \
        else f"{'above' if low_open else 'from'} {said(low)} up"
    outside = f"the range a sweep takes, {span}{why}"
    v = parse_in_unit(text, row.unit, what, example=f"{what}={shown}", outside=outside)
    if v < low or (low_open and v == low) or v > high:
        read = typed = ""
        si = ROW_UNIT_INPUTS[row.unit][0]
        if v > high and _is_bare(text) and si != "a plain number":
            # '0.1' is 0.1 USD/J, not 0.1 USD/kWh: say so, or 'outside 0 to 82600USD/kWh'
            # reads as false to whoever meant the row's unit
            meant = _in_row_unit(float(text), row.unit)
            read = f" (a bare number is SI, {si}: {said(v)})"
            typed = f"; for {meant} write {what}={meant}"
        raise UserError(f"{what} value {text!r}{read} is outside {outside}{typed}")
    return v


def _is_bare(text: str) -> bool:
    """Whether ``text`` is a number with no unit (read in SI by :func:`_cost_value`).

    >>> _is_bare("0.1"), _is_bare("0.1USD/kWh"), _is_bare("5y")
    (True, False, False)
    """
    try:
        float(text)
    except ValueError:
        return False
    return True


def _real_number(x: object) -> float:
    """``x`` as a float where it is a number (a row's value), else 0."""
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else 0.0
