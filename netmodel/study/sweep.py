"""``netmodel sweep``: tokens/s/SM of scenarios while one or two fabric parameters vary, to
see where one fabric overtakes another (or their cost per token while a cost parameter
varies).

A parameter is a dotted path into the scenario (:func:`parameters` lists them):

* ``fabric.KEY`` (or ``fabric.base.KEY``): a numeric keyword of the fabric's builder, e.g.
  ``fabric.latency`` (switch traversal, s), ``fabric.bandwidth`` (bytes/s per direction),
  ``fabric.radix``, ``fabric.ports`` and ``fabric.reconfiguration_time`` (OCS);
* ``adjust.hop_latency`` (s added to every link: the per-hop latency, for any fabric),
  ``adjust.latency_scale`` and ``adjust.bandwidth_scale`` (multipliers, for any fabric);
* ``cost.NAME``: a power, cost or yield default of :mod:`netmodel.study.cost`, its value in
  a unit of its data row's unit (:func:`netmodel.study.cost.parameter_rows`,
  :data:`compute.units.ROW_UNIT_INPUTS`: ``0.1USD/kWh``, ``5y``, ``1.2kW``, ``75%``,
  ``1.5USD/(Gb/s)``, ``6.9pJ/bit``) or a bare SI number (``cost.defect_density`` per m^2,
  ``cost.wafer_price`` USD, ``cost.pluggable_price`` and ``cost.cpo_price`` USD per bit/s,
  ``cost.cpo_energy`` J per bit, ``cost.electricity_price`` USD/J, ``cost.lifetime`` s); a
  unit of another kind is refused. Each point is then
  scored by USD per million tokens (lower is better) instead of tokens/s/SM; the searches
  run once, since these change what a configuration costs, not which one is best.

Values are ``LO:HI`` (``points`` log-spaced values, default 7; ``LO:HI:N`` for N) or a comma
list (swept in increasing order; one value given twice, in any units, is refused); they take units (``0.1us:10us``, ``100GB/s``). A range of a whole-number parameter
takes the nearest whole numbers of its log-spaced values (repeats dropped); a listed value
of one must be whole, and a whole-number ``fabric.*`` value (a count) from 1 to what a
fabric within :mod:`topologies.limits` holds (10,000,000 by default). A range must be positive and
not empty. At most
:data:`MAX_POINTS` values per parameter, :data:`MAX_SEARCHES` searches per sweep and
:data:`MAX_LINKS` links in the fabric of a point (a point over it is refused, as one the
builder refuses) (settable, :mod:`compute.limits`).

>>> p = parse_param("adjust.hop_latency=0.1us:10us:3", ["lite-flat"])
>>> p.path, [round(v * 1e6, 6) for v in p.values]
('adjust.hop_latency', [0.1, 1.0, 10.0])
>>> r = run_sweep(["lite-flat", "lite-ocs"], [p], ["Llama-3-8B"], ["decode"])
>>> len(r.rows)
6
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from os import PathLike
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from compute.errors import UserError, known
from compute.limits import check, setting
from compute.models import get_model
from compute.phases import Slo, check_phase, check_slo, latency_name
from compute.roofline import check_options, make_workload
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH
from compute.units import (
    ROW_UNIT_INPUTS,
    parse_bandwidth,
    parse_in_unit,
    parse_quantity,
    parse_time,
)
from compute.validate import describe, is_whole, number, read_number
from netmodel.study import figure_kit
from netmodel.study.defaults import PARALLELISM
from netmodel.study.progress import NO_PROGRESS
from netmodel.study.rows import FabricRow, RowsResult, distinct_models, key, mtp_note
from netmodel.study.scenarios import ADJUST_KEYS, ADJUST_RANGES, get_scenario
from topologies.common import check_positive
from topologies.limits import PHYSICAL_MAX

if TYPE_CHECKING:
    from pathlib import Path

    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from netmodel.study.distributed import Executor
    from netmodel.study.progress import ProgressLike
    from netmodel.study.scenarios import Scenario

__all__ = ["DEFAULT_POINTS", "SweepParam", "SweepResult", "parameters", "parse_param",
           "run_sweep", "sweep_files", "write_sweep"]

#: Values of a ``LO:HI`` range.
DEFAULT_POINTS = 7
#: Most values of one parameter (``NETMODEL_MAX_SWEEP_POINTS`` overrides).
MAX_POINTS = 1_000
#: Most searches of one sweep: scenarios x points x models x phases
#: (``NETMODEL_MAX_SWEEP_SEARCHES`` overrides; each takes 5-100 ms on one core).
MAX_SEARCHES = 20_000
#: Most links of the fabric at one point of a sweep (``NETMODEL_MAX_SWEEP_LINKS``
#: overrides). Costing a point takes about 30 us per link on one core (its searches'
#: collectives and its bill of materials: lite-flat with 1,000 planes, 128,000 links, 4 s;
#: 10,000 planes, 1,280,000 links, 35-75 s), so 200,000 links is about 6 s a point.
MAX_LINKS = 200_000
#: Prefix of the power and cost parameters (:func:`netmodel.study.cost.parameters`, SI
#: inside, typed in their data row's unit or bare SI): they change what a configuration costs, not which one is best, so a sweep of
#: them searches once per scenario and scores every point by USD per million tokens.
COST = "cost."
#: How each metric is named in tables and figures.
_METRIC_NAMES = {"tokens_per_s_per_sm": "tokens/s/SM", "usd_per_mtoken": "USD per million tokens"}
#: Curves of one panel within this share of each other at every swept value (feasible at
#: the same values) coincide in the figure: a line 1-2.2 points wide on a panel some 180
#: points tall from 0 covers about 1% of its height, so the later one hides the earlier
#: (:meth:`SweepResult.coinciding`; sweep.png names them and draws them in turns).
COINCIDENT = 0.01
#: Units of the [adjust] parameters.
_ADJUST_UNITS = {"latency_scale": "", "hop_latency": "s", "bandwidth_scale": ""}
#: Units a length parameter (``fabric.length``, m) takes.
_LENGTH_UNITS = {"": 1.0, "mm": 1e-3, "cm": 1e-2, "m": 1.0, "km": 1e3}


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


def parameters(scenario: str | Scenario) -> dict[str, tuple[str, bool]]:
    """The numeric parameters of ``scenario`` a sweep may vary: ``{path: (unit, integer)}``."""
    from topologies.specs import builders

    infos = {b.name: b for b in builders()}
    out = {}

    def walk(table: dict, prefix: str) -> None:
        for p in infos[table["builder"]].params:
            base = p.type.split(" ")[0]
            if base in ("int", "float"):
                out[f"{prefix}.{p.name}"] = (p.unit, base == "int")
        for k, v in table.items():
            if isinstance(v, dict):
                walk(v, f"{prefix}.{k}")

    fabric = get_scenario(scenario).fabric
    if fabric:   # a fabric graph (a saved fabric file) has no builder arguments
        walk(fabric, "fabric")
    out.update({f"adjust.{k}": (_ADJUST_UNITS[k], False) for k in ADJUST_KEYS})
    from compute.rows import SI_UNITS
    from netmodel.study.cost import parameter_rows
    from netmodel.study.cost import parameters as cost_parameters

    rows = parameter_rows()   # a cost value is held in SI: its unit is its row's SI unit
    out.update({f"{COST}{k}": (SI_UNITS[rows[k].unit], False)
                for k in cost_parameters(numeric=True)})
    return out


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
        return parse_quantity(text, _LENGTH_UNITS, what, allow_zero=True)
    v = read_number(f"{what} value", text)   # the one number grammar ('٢', '1_0' refused)
    if v is None:
        raise UserError(f"{what} value {text!r} is not a number")
    if not (math.isfinite(v) and v >= 0):
        raise UserError(f"{what} value {text!r} must be a finite number >= 0")
    return v + 0.0   # '-0' is 0 (the column printed '-0'), as compute.validate.number has it


def _cost_value(text: str, what: str) -> float:
    """A cost parameter's value, typed in its data row's unit or bare SI."""
    from netmodel.study.cost import parameter_rows

    rows = parameter_rows()
    row = rows[what[len(COST):]]
    shown = _in_row_unit(row.raw, row.unit)
    v = parse_in_unit(text, row.unit, what, example=f"{what}={shown}")
    if row.value > 0:
        base, of = row, f"its shipped default {shown}"
    else:   # a default of 0 (copper_energy): the largest default in the same unit
        kin = [(r.value, n, r) for n, r in rows.items()
               if r.unit == row.unit and r.unit != "1" and _real_number(r.value) > 0]
        if not kin:
            return v
        _, name, base = max(kin)
        of = (f"the largest shipped default in {row.unit} ({COST}{name} "
              f"{_in_row_unit(base.raw, base.unit)}; this one's is 0)")
    if v > ABSURD_COST_FACTOR * base.value:
        most = _in_row_unit(ABSURD_COST_FACTOR * base.raw, base.unit)
        read = typed = ""
        si = ROW_UNIT_INPUTS[row.unit][0]
        if _is_bare(text) and si != "a plain number":
            # '0.1' is 0.1 USD/J, not 0.1 USD/kWh: say so, or 'over a million times 0.0826'
            # reads as false to whoever meant the row's unit
            meant = _in_row_unit(float(text), row.unit)
            as_row = _in_row_unit(v * base.raw / base.value, base.unit)
            read = f" (a bare number is SI, {si}: {as_row})"
            typed = f"; for {meant} write {what}={meant}"
        raise UserError(f"{what} value {text!r}{read} is over {ABSURD_COST_FACTOR:,.0f} times "
                        f"{of}: no system is priced so; the most a sweep takes is {most}{typed}")
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


def _kind(path: str, scenarios) -> tuple[str, bool]:
    """(unit, integer) of ``path``, which every scenario must know."""
    unit = integer = None
    for s in scenarios:
        known_params = parameters(s)
        if path not in known_params:
            # name the fabric's own parameters (and adjust.*) for a fabric or adjust path,
            # the cost ones for a cost path: not all 60 (fabric.ports on lite-flat)
            group = (COST,) if path.startswith(COST) else ("fabric.", "adjust.")
            near = [k for k in known_params if k.startswith(group)]
            raise UserError(f"unknown parameter {path!r} for scenario "
                            f"{get_scenario(s).name!r}; known: {known(near)}"
                            + ("" if group == (COST,) else
                               f", and {sum(k.startswith(COST) for k in known_params)} "
                               f"cost.* parameters"))
        unit, integer = known_params[path]
    return unit, integer


def _unset_word(path: str, scenarios) -> str:
    """The word (``auto``, ``none``: :data:`topologies.registry.SPEC_UNSET`) a spec leaves
    the builder parameter ``path`` (``fabric.NAME``, or ``fabric.TABLE.NAME`` of a nested
    builder's table) unset with, as the first scenario holding it builds it; ``""`` for
    one that takes neither or a path that is no builder's.

    >>> _unset_word("fabric.nics_per_server", ["h100-dgx"]), _unset_word("fabric.domains",
    ...                                                                  ["h100-dgx"])
    ('auto', '')
    """
    from topologies.specs import builders

    *tables, name = path.split(".")
    if tables[:1] != ["fabric"]:
        return ""
    infos = {b.name: b for b in builders()}
    for s in scenarios:
        table = get_scenario(s).fabric
        for k in tables[1:]:
            table = table.get(k) if isinstance(table, dict) else None
        if isinstance(table, dict) and table.get("builder") in infos:
            for p in infos[table["builder"]].params:
                if p.name == name:
                    return p.unset
    return ""


def parse_param(text: str, scenarios: Iterable[str | Scenario], points: int = DEFAULT_POINTS
               ) -> SweepParam:
    """A :class:`SweepParam` from ``PATH=LO:HI[:N]`` or ``PATH=V1,V2,...``, checked against
    every scenario of the sweep. ``points``: the values of a ``LO:HI`` range, a whole
    number >= 1 (1 only where LO is HI: one value of a wider range would drop its HI)."""
    if not is_whole(points) or points < 1:
        raise UserError(f"points must be a whole number >= 1 (the values of a LO:HI range), "
                        f"got {describe(points)}")
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
        if n == 1 and hi != lo:   # geomspace of 1 is LO alone: the HI typed was dropped
            raise UserError(f"sweep parameter {path} range {spec!r} of 1 value would sweep "
                            f"its LO alone; give 2 or more values (N, or --points), or the "
                            f"one value")
        values = [float(v) for v in np.geomspace(lo, hi, n)] if n > 1 else [lo]
    else:
        items = [x.strip() for x in spec.split(",")]
        check("sweep parameter " + path, "values", len(items), MAX_POINTS,
              "NETMODEL_MAX_SWEEP_POINTS", "give fewer values")
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
            fractional = [v for v in values if v != round(v)]
            if fractional:
                raise UserError(f"sweep parameter {path} takes whole numbers, got "
                                f"{fractional[0]:g}")
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


def _check_searches(searches: int) -> None:
    """Refuse a sweep of more than :data:`MAX_SEARCHES` searches (``NETMODEL_MAX_SWEEP_SEARCHES``
    sets it): the whole sweep's count in :func:`run_sweep`, and one parameter's values (each
    a search at least) in :func:`parse_param`, before they are made. A range's values were
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


@dataclass(frozen=True, kw_only=True)
class SweepRow(FabricRow):
    """Best configuration of one model x scenario x phase at one point of the sweep."""

    label: str = key()       #: ``scenario@gpu``
    scenario: str = key()
    x: float = key()         #: the first parameter's value (its column is named by its path)
    y: float | None = key(default=None)  #: the second parameter's value (None with one)


@dataclass(frozen=True, eq=False)
class SweepResult(RowsResult):
    """Rows of the sweep and the parameters swept."""

    rows: tuple[SweepRow, ...] = ()
    settings: dict = field(default_factory=dict)
    params: tuple[SweepParam, ...] = ()
    labels: tuple[str, ...] = ()

    ROW = SweepRow

    @property
    def metric(self) -> str:
        """What the curves show: ``usd_per_mtoken`` (lower is better) when a cost
        parameter is swept, else ``tokens_per_s_per_sm`` (higher is better)."""
        return "usd_per_mtoken" if any(p.path.startswith(COST) for p in self.params) \
            else "tokens_per_s_per_sm"

    @property
    def higher_is_better(self) -> bool:
        return self.metric != "usd_per_mtoken"

    def panels(self) -> list[tuple]:
        """Every (model, phase, second parameter's value) whose curves the results hold, in
        the order tables and figures take them (``y`` None with one parameter)."""
        ys = self.params[1].values if len(self.params) > 1 else (None,)
        return [(m, ph, y) for m in self.models for ph in self.phases for y in ys]

    def curve(self, label: str, model: str, phase: str,
              y: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(x, metric)`` of one scenario (NaN where infeasible or not priced)."""
        rows = [r for r in self.rows if (r.label, r.model, r.phase, r.y) == (label, model,
                                                                            phase, y)]
        values = [getattr(r, self.metric) if r.feasible else None for r in rows]
        return (np.array([r.x for r in rows]),
                np.array([np.nan if v is None else v for v in values], dtype=float))

    def crossovers(self) -> list[dict]:
        """Where one scenario overtakes another along the first parameter: for every pair
        of scenarios whose :attr:`metric` difference changes sign between two neighbouring
        values, ``{model, phase, y, x, METRIC, before, after}`` (``METRIC`` the
        :attr:`metric`'s name, ``tokens_per_s_per_sm`` or ``usd_per_mtoken``; ``before``
        led below ``x``, ``after`` leads above it), with ``x`` and the value there
        interpolated (a cost linearly in ``x``, exact where it is a price; tokens/s/SM
        in the space its figure draws, log-linearly on a log axis: :func:`_crossings`)."""
        out = []
        for model, phase, y in self.panels():
            curves = [self.curve(lab, model, phase, y) for lab in self.labels]
            for a in range(len(curves)):
                for b in range(a + 1, len(curves)):
                    out += _crossings(curves[a], curves[b], self.labels[a],
                                      self.labels[b], dict(model=model, phase=phase,
                                                           y=y), self.metric,
                                      self.higher_is_better)
        return out

    def coinciding(self, rtol: float = COINCIDENT) -> list[dict]:
        """Curves drawn one over the other: per model x phase (x second value), each group
        of two or more scenarios feasible at the same values whose metric is within
        ``rtol`` of the group's first (in :attr:`labels` order) at every one of them,
        ``{model, phase, y, labels, spread, rtol}`` (``spread``: the largest relative
        difference, ``|a - b| / max(|a|, |b|)``, from the first; 0 where they are equal).

        >>> r = _example([("a", [2.0, 1.5, 1.0]), ("b", [2.0, 1.5, 1.0]),
        ...               ("c", [2.0, 1.5, 1.005])])
        >>> [(g["labels"], round(g["spread"], 6)) for g in r.coinciding()]
        [(('a', 'b', 'c'), 0.004975)]
        >>> r.coinciding(rtol=0.001)[0]["labels"]
        ('a', 'b')
        """
        out = []
        for model, phase, y in self.panels():
            curves = {lab: self.curve(lab, model, phase, y)[1] for lab in self.labels}
            taken: set[str] = set()
            for lab in self.labels:
                if lab in taken:
                    continue
                a = curves[lab]
                ok = np.isfinite(a)
                group, spread = [lab], 0.0
                for other in self.labels:
                    b = curves[other]
                    if other == lab or other in taken or len(b) != len(a) \
                            or not ok.any() or (np.isfinite(b) != ok).any():
                        continue
                    top = np.maximum(np.abs(a[ok]), np.abs(b[ok]))
                    rel = np.abs(a[ok] - b[ok]) / np.where(top > 0, top, 1.0)
                    if rel.max() <= rtol:
                        group.append(other)
                        spread = max(spread, float(rel.max()))
                if len(group) > 1:
                    taken.update(group)
                    out.append({"model": model, "phase": phase, "y": y,
                                "labels": tuple(group), "spread": spread,
                                "rtol": rtol})
        return out

    def no_crossings(self) -> list[dict]:
        """The scenarios whose curve never crosses the first scenario's (the baseline,
        ``labels[0]``): per model x phase (x second value) and other scenario feasible
        together with it at two or more values and on one side of it at every one of them,
        ``{model, phase, y, above, below, lo, hi, points, closest}``: ``above`` has the
        higher :attr:`metric` from ``lo`` to ``hi`` (the first and last of the ``points``
        values where both are feasible); ``closest`` is ``(x, above's value, below's)``
        where they are nearest, relatively. Crossings are :meth:`crossovers`; equal curves
        are neither.

        >>> r = _example([("a", [2.0, 1.5, 1.2]), ("b", [1.0, 1.1, 1.0]),
        ...               ("c", [3.0, 1.0, 0.5])])
        >>> [(n["above"], n["below"], n["closest"]) for n in r.no_crossings()]
        [('a', 'b', (3.0, 1.2, 1.0))]
        """
        out = []
        base = self.labels[0]
        for model, phase, y in self.panels():
            x, a = self.curve(base, model, phase, y)
            for lab in self.labels[1:]:
                b = self.curve(lab, model, phase, y)[1]
                if len(b) != len(a):
                    continue
                ok = np.isfinite(a) & np.isfinite(b)
                d = a[ok] - b[ok]
                if ok.sum() < 2 or not ((d > 0).all() or (d < 0).all()):
                    continue
                hi_v, lo_v = (a, b) if d[0] > 0 else (b, a)
                above, below = (base, lab) if d[0] > 0 else (lab, base)
                xs, top, bottom = x[ok], hi_v[ok], lo_v[ok]
                k = int(np.argmin((top - bottom) / np.abs(top)))
                out.append({"model": model, "phase": phase, "y": y, "above": above,
                            "below": below, "lo": float(xs[0]), "hi": float(xs[-1]),
                            "points": int(ok.sum()),
                            "closest": (float(xs[k]), float(top[k]),
                                        float(bottom[k]))})
        return out

    def no_crossing_lines(self) -> list[str]:
        """The :meth:`no_crossings` in words, so that a sweep in which a scenario never
        crosses the baseline says so: a note per model x phase (x second value) and side
        of the baseline (pairs over the same values together), naming where the nearest
        pair comes closest."""
        from netmodel.study.summary_words import and_list

        p0 = self.params[0]
        k, unit = p0.display()
        unit = f" {unit}" if unit else ""
        d = p0.digits()
        base = self.labels[0]
        groups: dict[tuple, list[dict]] = {}
        for n in self.no_crossings():
            groups.setdefault((n["model"], n["phase"], n["y"], n["above"] == base, n["lo"],
                               n["hi"], n["points"]), []).append(n)
        lines = []
        for (model, phase, y, over, lo, hi, points), ns in groups.items():
            extra = "" if y is None else f", {self.params[1].show(y)}"
            others = and_list(n["below" if over else "above"] for n in ns)
            who = f"{base} stays above {others}" if over else \
                f"{others} {'stays' if len(ns) == 1 else 'stay'} above {base}"
            total = len(self.curve(base, model, phase, y)[0])
            where = "" if points == total else \
                f" (at the {points} of {total} values where both are feasible)"
            near = min(ns, key=lambda n: (n["closest"][1] - n["closest"][2])
                       / abs(n["closest"][1]))
            cx, va, vb = near["closest"]
            which = "" if len(ns) == 1 else f", {near['below' if over else 'above']},"
            lines.append(f"note: {model}, {phase}{extra}: no crossing in the swept range: "
                         f"{who} from {p0.path} = {_written(lo * k, d)} to {_written(hi * k, d)}{unit}"
                         f"{where} (closest{which} at {_written(cx * k, d)}{unit}: {va:.3f} vs "
                         f"{vb:.3f} "
                         f"{_METRIC_NAMES[self.metric]})")
        return lines

    def unchanged(self) -> list[dict]:
        """The curves the first parameter does not move: ``{label, model, phase, y, value,
        points, total}`` (feasible at ``points`` of the ``total`` values) for each scenario
        x model x phase (x second value) feasible at two or more values of it with the same
        metric at all of them (a parameter its best configurations do
        not depend on, e.g. ``fabric.nic_bandwidth`` where TP fits in a scale-up domain),
        with the range of USD per million tokens there when that moves instead."""
        out = []
        for model, phase, y in self.panels():
            for lab in self.labels:
                every = self.curve(lab, model, phase, y)[1]
                v = every[np.isfinite(every)]
                if len(v) < 2 or v.max() - v.min() > 1e-12 * abs(v.max()):
                    continue
                # points: the values it is feasible at, of total swept
                d = {"label": lab, "model": model, "phase": phase, "y": y,
                     "value": float(v[0]), "points": len(v), "total": len(every)}
                cost = [r.usd_per_mtoken for r in self.rows if r.feasible
                        and (r.label, r.model, r.phase, r.y) == (lab, model, phase, y)
                        and r.usd_per_mtoken is not None]
                if self.metric != "usd_per_mtoken" and cost and \
                        max(cost) - min(cost) > 1e-12 * max(cost):
                    d["usd_per_mtoken"] = [min(cost), max(cost)]
                out.append(d)
        return out

    def unchanged_lines(self) -> list[str]:
        """A note per curve of :meth:`unchanged`, so that a flat line is never silent."""
        p0, lines = self.params[0], []
        for u in self.unchanged():
            extra = "" if u["y"] is None else f", {self.params[1].show(u['y'])}"
            what = _METRIC_NAMES[self.metric]
            # where it is infeasible at some values the parameter does move it (1 OCS port:
            # nothing fits): the note counts the values it holds at
            at = "at every buildable value" if u["points"] == u["total"] else \
                f"at the {u['points']} of {u['total']} values where it is feasible"
            line = (f"note: {u['model']}, {u['phase']}{extra}: {p0.path} moves no point of "
                    f"{u['label']} ({u['value']:.3f} {what} {at}): "
                    + ("its cost per token does not depend on it"
                       if self.metric == "usd_per_mtoken"
                       else "its best configuration's step time does not depend on it"))
            if "usd_per_mtoken" in u:
                lo, hi = u["usd_per_mtoken"]
                line += f" (USD per million tokens moves: {lo:.3f} to {hi:.3f})"
            lines.append(line)
        return lines

    def columns(self) -> tuple[str, ...]:
        """The row columns, ``x`` and ``y`` named by the parameters' paths (``y`` only
        with a second parameter)."""
        names = {"x": self.params[0].path,
                 "y": self.params[1].path if len(self.params) > 1 else None}
        return tuple(names.get(c, c) for c in super().columns() if names.get(c, c))

    def to_dicts(self) -> list[dict]:
        out = []
        unset = self.unset_columns()
        for r in self.rows:
            d = r.to_dict(unset)
            x, y = d.pop("x"), d.pop("y")
            out.append({**d, self.params[0].path: x,
                        **({self.params[1].path: y} if len(self.params) > 1 else {})})
        return out

    def refused_lines(self) -> list[str]:
        """A note per scenario and reason a point could not be built at (its ``-`` in the
        table; the reason is in the CSV and JSON rows), once whatever the models and
        phases, with the values it was refused at.

        >>> r = _example([("a", [1.0, 2.0, 3.0])])
        >>> r = replace(r, rows=r.rows[:2] + (replace(r.rows[2], feasible=False,
        ...     reason="fabric refused: ring: n must be an integer >= 2, got 1"),))
        >>> r.refused_lines()
        ['note: a: no point at adjust.latency_scale = 3: fabric refused: ring: n must be an integer >= 2, got 1']
        """
        refused: dict[tuple[str, str], list[str]] = {}
        p0, k, d = self.params[0], self.params[0].display()[0], self.params[0].digits()
        for r in self.rows:
            if r.feasible or not r.reason.startswith("fabric refused"):
                continue
            at = _written(r.x * k, d) + ("" if r.y is None else
                                         f" ({self.params[1].show(r.y)})")
            at_list = refused.setdefault((r.label, r.reason), [])
            if at not in at_list:
                at_list.append(at)
        return [f"note: {label}: no point at {p0.path} = {', '.join(at)}: {reason}"
                for (label, reason), at in refused.items()]

    def table(self) -> str:
        """A plain-text table: tokens/s/SM per scenario along the first parameter, then
        the crossovers, and why a point could not be built (:meth:`refused_lines`)."""
        result = self
        p0 = result.params[0]
        k, unit = p0.display()
        d = p0.digits()
        name = f"{p0.path} ({unit})" if unit else p0.path
        lines = []
        for model, phase, y in result.panels():
            extra = "" if y is None else f", {result.params[1].show(y)}"
            lines.append(f"{model}, {phase}{extra}: {_METRIC_NAMES[result.metric]} "
                         f"by {name}")
            xs = result.curve(result.labels[0], model, phase, y)[0]
            width = max(len(lab) for lab in result.labels) + 2
            cells = [[_written(x * k, d) for x in xs]] + [
                ["-" if v_ != v_ else f"{v_:.3f}" if abs(v_) < 1e9 else f"{v_:.4g}"
                 for v_ in result.curve(lab, model, phase, y)[1]]
                for lab in result.labels]
            # 10 characters a column, wider where a value needs it (USD per
            # million tokens at a price swept over decades: 124144.292) so that
            # neighbouring values never run together
            col = max([10] + [len(c) + 2 for row in cells for c in row])
            lines.append(" " * width + "".join(f"{c:>{col}}" for c in cells[0]))
            for lab, row in zip(result.labels, cells[1:], strict=True):
                lines.append(f"{lab:<{width}}" + "".join(f"{c:>{col}}" for c in row))
        for c in result.crossovers():
            extra = "" if c["y"] is None else f", {result.params[1].show(c['y'])}"
            lines.append(f"{c['model']}, {c['phase']}{extra}: {c['after']} overtakes "
                         f"{c['before']} at {p0.path} = {_written(c['x'] * k, d)} {unit}".rstrip())
        lines += result.no_crossing_lines()
        lines += result.unchanged_lines()
        lines += result.refused_lines()
        capped = result.batch_limit_line(" at some points")
        if capped:
            lines.append(capped)
        note = mtp_note(result.settings.get("options", {}))
        if note is not None:
            lines.append(note)
        lines += [f"note: {k}: {v}" for k, v in result.settings.get("not_computed", {}).items()
                  if k.startswith(("schedule of ", _COST_AT))]
        return "\n".join(lines)

    def to_json(self, indent: int | None = 2) -> str:
        """``{"sweep", "params", "scenarios", "settings", "crossovers", "rows"}``, and
        ``"unchanged"`` (:meth:`unchanged`) where the parameter moves some curve not at
        all."""
        unchanged = self.unchanged()
        unset = self.unset_columns()
        return json.dumps({"sweep": [p.path for p in self.params],
                           "params": [asdict(p) for p in self.params],
                           "scenarios": list(self.labels), "settings": self.settings,
                           "crossovers": self.crossovers(),
                           **({"unchanged": unchanged} if unchanged else {}),
                           "rows": [r.to_dict(unset) for r in self.rows]}, indent=indent)


def run_sweep(scenarios: Iterable[str | Scenario], params: Iterable[SweepParam | str],
              models: Iterable[str | ModelSpec] = ("Llama-3-70B",),
              phases: Iterable[str] = ("decode",), *,
              gpus: Collection[str | GpuSpec] | None = None,
              options: RooflineOptions | None = None, slo: Slo | None = None,
              prompt: int | None = None, context: int | None = None,
              max_batch: int = DEFAULT_MAX_BATCH, instances: str | None = None,
              progress: ProgressLike = NO_PROGRESS, parallelism: str = "auto",
              workers: int | None = None, scheduler: str | None = None,
              executor: Executor | None = None) -> SweepResult:
    """Best tokens/s/SM of every scenario x model x phase at every point of the sweep.

    ``params``: one or two :class:`SweepParam` (or ``PATH=RANGE`` strings). ``instances``:
    ``"alone"`` or ``"all"`` for every scenario (None: each scenario's own setting).
    ``workers`` (a local Dask cluster of that many processes), ``scheduler`` (a running
    one's address) or ``executor`` (an open :class:`~netmodel.study.distributed.Executor`)
    run the points on Dask, a run of neighbouring points per task; the result is identical
    to the in-process run's.
    """
    from netmodel.study.distributed import executor_for
    from netmodel.study.scenarios import expand_scenarios, instances_note
    from netmodel.study.search_options import check_fabric_options

    scens = expand_scenarios(scenarios, gpus)
    if instances is not None:
        scens = [s.with_instances(instances) for s in scens]
    params = [replace(p, values=tuple(sorted(dict.fromkeys(p.values))))
              if isinstance(p, SweepParam) else parse_param(p, scens) for p in params]
    if not 1 <= len(params) <= 2:
        raise UserError(f"sweep one or two parameters, got {len(params)}")
    if len(params) == 2 and params[0].path == params[1].path:
        raise UserError(f"parameter {params[0].path!r} is given twice")
    for p in params:
        _kind(p.path, scens)  # every scenario knows it
    models = distinct_models(get_model(m) for m in models)
    phases = [check_phase(p) for p in phases]
    if not (models and phases):
        raise UserError("the sweep needs at least one model and one phase")
    # said once here, not as every point refused ('no point of the sweep can be built: ...')
    # a string first: an array compared with the names raised numpy's ambiguous-truth error
    if not isinstance(parallelism, str) or parallelism not in PARALLELISM:
        raise UserError(f"parallelism {describe(parallelism)} is unknown; known: "
                        f"{known(PARALLELISM)}")
    check_fabric_options(models, options, parallelism, phases)
    if isinstance(max_batch, bool) or not is_whole(max_batch) or max_batch < 1:
        raise UserError(f"max_batch must be a whole number >= 1, got {describe(max_batch)}")
    options = check_options(options)
    slo = check_slo(slo)
    ys = params[1].values if len(params) > 1 else (None,)
    _check_host_power_moves(params, scens)
    _check_searches(len(scens) * len(params[0].values) * len(ys) * len(models) * len(phases))
    setting("NETMODEL_MAX_SWEEP_LINKS", MAX_LINKS)  # a bad value said now, not as refused points
    shared = _SweepSettings(tuple(params), tuple(models), tuple(phases), options, slo,
                            prompt, context, max_batch, parallelism)
    points = [(s, x, y) for s in scens for y in ys for x in params[0].values]

    # points differing only in cost parameters share searches
    def searched_key(point: tuple[Scenario, float, float | None]) -> tuple:
        s, x, y = point
        return (s.label, *(v for p, v in zip(params, (x, y), strict=False)
                           if not p.path.startswith(COST)))

    with executor_for(executor, workers, scheduler) as ex:
        # in-process every point is a cell and all share the caches, as one loop would;
        # on Dask each task is a run of points with caches of its own
        caches = (None, None) if ex.distributed else ({}, {})
        cells = [_SweepCell(c, shared, *caches) for c in ex.chunks(points, searched_key)]
        done = ex.map(_sweep_cell, cells, progress=progress,
                      labels=[f"{c.points[-1][0].label} {params[0].path}={c.points[-1][1]:g}"
                              for c in cells],
                      weights=[len(c.points) for c in cells])
    rows = []
    refused: list[str] = []
    notes: dict = {}
    for point_rows, why, point_notes in (point for cell in done for point in cell):
        rows.extend(point_rows)
        if why is not None:
            refused.append(why)
        for k, v in point_notes.items():
            notes.setdefault(k, v)
    if refused and all(r.reason.startswith("fabric refused") for r in rows):
        raise UserError(f"no point of the sweep can be built: {refused[0]}")
    cost_refused = [v for k, v in notes.items() if k.startswith(_COST_AT)]
    if cost_refused and not any(r.feasible and r.usd_per_mtoken is not None for r in rows):
        raise UserError(cost_refused[0])   # no point priced: the swept values' refusal
    settings = {"slo": slo.to_dict(), "options": options.to_dict(),
                "max_batch": max_batch, "parallelism": parallelism}
    if notes:
        settings["not_computed"] = notes
    if any(s.instances != "alone" for s in scens):
        settings["instances"] = instances_note(scens)
    return SweepResult(rows=tuple(rows), params=tuple(params),
                       labels=tuple(s.label for s in scens), settings=settings)


def _check_host_power_moves(params, scens) -> None:
    """Refuse a sweep of ``cost.host_power_per_h100`` that moves no scenario: it sets the
    host power of GPUs with no ``[host_power_per_gpu]`` row only (docs/economics.md), so
    where every scenario's GPU has one, each point would cost the same without a word."""
    path = f"{COST}host_power_per_h100"
    if not any(p.path == path for p in params):
        return
    from compute.hardware import catalog
    from netmodel.study.cost import host_power_row, host_powers

    rows = [(s, host_power_row(s.gpu_spec)) for s in scens]
    if all(row is not None for _, row in rows):
        own = ", ".join(dict.fromkeys(f"{s.gpu_spec.name} {row.value:g} W" for s, row in rows))
        raise UserError(f"sweep parameter {path} moves no scenario of this sweep: each one's "
                        f"GPU has its own host power row in compute/data/economics.toml "
                        f"[host_power_per_gpu] or its GPU file's host_power_W ({own} per GPU); "
                        f"it sets the host power of "
                        f"{', '.join(n for n in catalog() if n not in host_powers())} and GPU "
                        f"files' GPUs without host_power_W only")


class _SweepSettings(NamedTuple):
    """What every point of a sweep shares (picklable)."""

    params: tuple
    models: tuple
    phases: tuple
    options: RooflineOptions
    slo: Slo
    prompt: int | None
    context: int | None
    max_batch: int
    parallelism: str


class _SweepCell(NamedTuple):
    """A run of points ``((scenario, x, y), ...)``; ``searched`` and ``rescored`` are the
    caches of :func:`run_sweep` (shared in-process, None on Dask: the task's own)."""

    points: tuple
    settings: _SweepSettings
    searched: dict | None
    rescored: dict | None


def _sweep_cell(cell: _SweepCell) -> list[tuple]:
    """``[(rows, refused reason or None, notes), ...]``, one per point of ``cell``, in
    order (the body of :func:`run_sweep`, a pure function of the cell)."""
    from netmodel.study.fabric_search import fabric_search

    st = cell.settings
    params, models, phases, slo = st.params, st.models, st.phases, st.slo
    searched = cell.searched if cell.searched is not None else {}
    rescored = cell.rescored if cell.rescored is not None else {}
    out = []
    for s, x, y in cell.points:
        values = [(params[0], x)] + ([(params[1], y)] if y is not None else [])
        costs = {p.path[len(COST):]: v for p, v in values if p.path.startswith(COST)}
        notes: dict = {}
        try:
            point = s
            for p, v in values:
                if not p.path.startswith(COST):
                    point = point.with_param(p.path, _typed(p, v))
            key = (point.label, point.fabric_spec(), point.adjust, point.instances)
            if key not in searched:
                _check_links(point, values)
                coll, comm = _collectives(point, rescored)
                searched[key] = [(phase, model, fabric_search(
                    model, point, make_workload(phase, st.prompt, st.context),
                    options=st.options, slo=slo, max_batch=st.max_batch, collectives=coll,
                    comm=comm, parallelism=st.parallelism))
                    for phase in phases for model in models]
                # instances = all charged in lockstep past the schedule's budget, at the
                # values the search depends on: points differing only in cost parameters
                # share it (and its charge), so it holds at each of them
                at = ", ".join(f"{p.path}={v:g}" for p, v in values
                               if not p.path.startswith(COST))
                for k, v in coll.schedule_notes(at=f" at {at}" if at else "").items():
                    notes.setdefault(k, v)
            found = searched[key]
        except UserError as exc:
            # a point the fabric cannot be built at (a radix below the GPU count, a
            # ring on too few ports...) is an infeasible point, not the end of the sweep
            out.append(([_refused_row(s, model.name, phase, x, y, f"fabric refused: {exc}",
                                      slo) for phase in phases for model in models],
                        str(exc), notes))
        else:
            out.append(([_row(s, x, y, r, costs, notes) for _, _, r in found], None, notes))
    return out


def _crossings(ca, cb, la, lb, where, metric: str = "tokens_per_s_per_sm",
               higher_is_better: bool = True) -> list[dict]:
    """Sign changes of ``ca - cb`` between neighbouring points where both are feasible
    (the leader has the higher metric, or the lower one when lower is better), placed
    where the two curves meet between the points. A cost (``usd_per_mtoken``) is taken as
    a straight line in the swept value, which it is in a price, a power or an energy
    figure (the best configuration does not depend on them), so the crossing is exact
    there; in ``lifetime``, ``utilization``, a yield figure or a parameter other than a
    cost's it is an estimate between the two points (log-linear interpolation put
    lite-ocs's OCS-port crossing with lite-flat, between 100 and 1,000 USD, at 338 where
    the lines meet at 576). tokens/s/SM is taken as a straight line in the space its
    figure draws (:func:`~netmodel.study.figure_kit.log_axis`): log-linearly on a log
    axis, linearly on a linear one, so a crossing is where the drawn lines meet. Curves
    that meet at a swept value and part on the side they came from, or meet at the last
    one, touch without crossing: no crossover (the next value where both are feasible and
    differ decides).

    >>> r = _example([("a", [2.0, 1.0, 2.0]), ("b", [1.0, 1.0, 1.0])])
    >>> r.crossovers()
    []
    >>> [(c["before"], c["after"], c["x"]) for c in
    ...  _example([("a", [2.0, 1.0, 0.5]), ("b", [1.0, 1.0, 1.0])]).crossovers()]
    [('a', 'b', 2.0)]
    """
    x, va = ca
    vb = cb[1]
    d = (va - vb) if higher_is_better else (vb - va)
    out = []
    linear = metric == "usd_per_mtoken" or not figure_kit.log_axis(x)
    for k in range(1, len(x)):
        d0, d1 = d[k - 1], d[k]
        if not (np.isfinite(d0) and np.isfinite(d1)) or d0 == 0 or d0 * d1 > 0:
            continue
        if d1 == 0:   # they meet at x[k]: a crossing only if the next that differs is across
            after = d[k + 1:][np.isfinite(d[k + 1:]) & (d[k + 1:] != 0)]
            if not len(after) or after[0] * d0 > 0:
                continue
        t = d0 / (d0 - d1)
        x0, x1 = x[k - 1], x[k]
        xc = x0 + t * (x1 - x0) if linear else x0 * (x1 / x0) ** t
        value = va[k - 1] + t * (va[k] - va[k - 1])
        before, after = (la, lb) if d0 > 0 else (lb, la)
        out.append({**where, "x": float(xc), metric: float(value),
                    "before": before, "after": after})
    return out


def _example(curves: list[tuple[str, list[float]]], xs: tuple[float, ...] = (1.0, 2.0, 3.0)
             ) -> SweepResult:
    """A :class:`SweepResult` of tokens/s/SM ``curves`` ``[(label, values), ...]`` along
    ``adjust.latency_scale`` = ``xs`` (model ``M``, decode), for the examples."""
    rows = [SweepRow(label=lab, scenario=lab, gpu="G", model="M", phase="decode", x=x,
                     feasible=True, tp=1, batch=1, latency_name="tbt", latency_s=0.01,
                     latency_limit_s=0.05, tokens_per_s_per_sm=v, network_share=0.5)
            for lab, vals in curves for x, v in zip(xs, vals, strict=True)]
    return SweepResult(rows=tuple(rows), params=(SweepParam("adjust.latency_scale", xs),),
                       labels=tuple(lab for lab, _ in curves))


def _typed(param: SweepParam, v: float):
    return int(v) if param.integer else float(v)


#: Parameters a sweep re-scores from the fabric's compiled costs instead of routing it
#: again at every value (exact: :mod:`netmodel.study.adjusted_comm`).
def _check_links(point: Scenario, values: list) -> None:
    """Refuse a point whose fabric has more than :data:`MAX_LINKS` links, before any search
    or bill of materials is run on it (its build is bounded by :mod:`topologies.limits`;
    the work after it grows with the links)."""
    from netmodel.study.scenario_fabric import build_fabric

    at = ", ".join(f"{p.path}={v:g}" for p, v in values)
    check(f"sweep point {point.label} at {at}", "links", build_fabric(point).number_of_edges(),
          MAX_LINKS, "NETMODEL_MAX_SWEEP_LINKS", "sweep smaller fabrics")


RESCORED = ("adjust.hop_latency", "adjust.bandwidth_scale")


def _collectives(point, cache: dict):
    """``(collectives, comm)`` for one point: where only :data:`RESCORED` adjustments
    differ from the scenario's (instances alone), the base fabric's compiled costs and a
    re-scoring comm (:class:`~netmodel.study.adjusted_comm.AdjustedComm`, which also costs a
    mixture of experts' prefill all-to-all once a server on the adjusted links, as
    ``compare`` and ``search --scenario`` do); else the point's own collectives and None."""
    from netmodel.study.adjusted_comm import AdjustedComm, hop_latency_slopes
    from netmodel.study.scenario_collectives import ScenarioCollectives

    if point.instances != "alone":
        return ScenarioCollectives(point), None
    base = point.with_param("adjust.hop_latency", 0.0) \
        .with_param("adjust.bandwidth_scale", 1.0)
    key = (base.label, base.fabric_spec(), base.adjust)
    if key not in cache:
        coll = ScenarioCollectives(base)
        cache[key] = (coll, hop_latency_slopes(base, coll, {}))
    coll, slopes = cache[key]
    return coll, AdjustedComm(coll, point.adjust.bandwidth_scale, point.adjust.hop_latency,
                              slopes)


def _refused_row(s, model, phase, x, y, reason, slo: Slo) -> SweepRow:
    return SweepRow(label=s.label, scenario=s.name, gpu=s.gpu, model=model, phase=phase, x=x,
                    y=y, feasible=False, latency_name=latency_name(phase),
                    latency_limit_s=slo.limit(phase), reason=reason)


#: The key of a sweep's note for a point whose cost values were refused (:func:`_row`).
_COST_AT = "cost not computed at "
#: The cost model's refusal of a NIC dearer or hungrier than the host that holds it
#: (netmodel.study.cost's NIC-in-host check: ``nic_price (1,599 USD) must be at most
#: host_cost_per_h100 (1,000 USD): ...``), the one refusal a sweep takes point by point:
#: each value is allowed, the pair contradicts only at some points. Read off its words (the
#: cost module names no kind of refusal); tests/netmodel/test_sweep_notes_h482.py holds them.
_NIC_IN_HOST = re.compile(r"nic_\w+ \([^)]*\) must be at most ")


def _row(s, x, y, found, costs: dict, notes: dict) -> SweepRow:
    """The row of one search at one point, priced with the point's cost parameters."""
    from netmodel.study.cost import cost_summary

    row = SweepRow.from_search(found.search, label=s.label, scenario=s.name, x=x, y=y,
                               **found.charged())
    if row.feasible:
        try:   # without a price (no die data) its power stands, unless cost.* is swept
            cost = cost_summary(found.scenario, row.model, row.phase, found.best,
                                without_price=not costs, **costs)
            row = row.with_group("cost", cost.to_dict())
            if not cost.priced:
                notes.setdefault(f"cost of {s.label}", cost.unpriced_note())
        except UserError as exc:
            if costs and not _NIC_IN_HOST.match(str(exc)):
                raise   # a swept value refused on its own (lifetime 0): the user must hear it
            if costs:   # values that contradict each other only here (a NIC dearer than
                # the host at this host price): not priced there, said once a point; the
                # sweep runs on (run_sweep refuses it whole where no point is priced)
                at = ", ".join(f"{COST}{k}={v:g}" for k, v in costs.items())
                notes.setdefault(f"{_COST_AT}{at}", str(exc))
            else:
                notes.setdefault(f"cost of {s.label}", str(exc))
    return row


def sweep_files(result: SweepResult, *, plot: bool = True) -> dict:
    """``sweep.csv``, ``sweep.json`` and (with ``plot``) ``sweep.png``."""
    files = {"sweep.csv": result.to_csv().encode(), "sweep.json": result.to_json().encode()}
    if plot:
        from netmodel.study import compare_plots

        files["sweep.png"] = lambda path: compare_plots.plot_sweep(result, path)
    return files


def write_sweep(result: SweepResult, out_dir: str | PathLike[str], *,
                plot: bool = True, run: Mapping | None = None) -> list[Path]:
    """Write :func:`sweep_files` into ``out_dir`` atomically; ``run`` (what produced them)
    goes into the manifest."""
    from compute.outputs import write_outputs

    return write_outputs(out_dir, sweep_files(result, plot=plot), run=run)
