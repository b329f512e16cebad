"""Rows of the project's economics data files: one table per value with ``value``,
``unit``, ``source``, ``ref`` and ``confidence`` (``compute/data/economics.toml``, a GPU's
``die`` table, ``netmodel/data/network_costs.toml``), read into :class:`Parameter`
objects in SI units, and the shipped defaults of ``compute/data/economics.toml``.

Read by compute.hardware (a GPU's die table, checked when its file is read: compute.dies)
and compute.yield_model (which re-exports these names).

>>> parameter("wafer_diameter")  # 300 mm
0.3
>>> economics()["wafer_price"].confidence
'read-estimate'
"""

from __future__ import annotations

import math
import numbers
import tomllib
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from typing import Any

from compute.errors import UserError, chosen, known, lookalike
from compute.units import PER_YEAR, ROW_UNIT_INPUTS, SECONDS_PER_YEAR, ExactFactor, scaled
from compute.validate import describe

__all__ = ["CONFIDENCE", "HOST_TABLE", "ROW_KEYS", "SI_UNITS", "UNITS", "Parameter",
           "check_number",
           "economics", "host_power_table", "number_words", "parameter", "read_host_powers",
           "read_parameters", "read_rows"]

#: Confidence tags of a default (../shared/reference/README.md) plus ``assumption``.
CONFIDENCE = ("read-primary", "read-secondary", "read-estimate", "vendor-claim", "derived",
              "assumption")
#: Units a data file may state, and the factor to SI.
UNITS = {
    "1": 1.0, "name": 1.0, "mm": 1e-3, "m": 1.0, "mm^2": 1e-6, "1/cm^2": 1e4, "1/mm^2": 1e6,
    "USD": 1.0, "W": 1.0, "year": SECONDS_PER_YEAR, "1/year": PER_YEAR,
    "USD/kWh": ExactFactor(1, 3_600_000), "USD/GB": 1e-9,
    "USD/GiB": ExactFactor(1, 2**30), "pJ/bit": 1e-12, "USD/(Gb/s)": 1e-9,
    "USD/mm^2": 1e6, "USD/m": 1.0, "USD/port": 1.0, "W/port": 1.0,
    # rent per kW of IT power a month (a Julian month): the factor the unit's input table has
    "USD/kW/month": ROW_UNIT_INPUTS["USD/kW/month"][1]["USD/kW/month"],
}
#: The SI unit a value of each of :data:`UNITS` is held in once converted ("" for a pure
#: number or a name): what an output names beside the SI value (a sweep's ``params[].unit``),
#: said once, as the SI unit of that unit's inputs (:data:`compute.units.ROW_UNIT_INPUTS`).
SI_UNITS = {unit: "" if unit == "name" or ROW_UNIT_INPUTS[unit][0] == "a plain number"
            else ROW_UNIT_INPUTS[unit][0] for unit in UNITS}
ROW_KEYS = ("value", "unit", "source", "ref", "confidence")


@dataclass(frozen=True)
class Parameter:
    """One default: its SI ``value``, the ``unit`` and ``raw`` value as written in the data
    file, its ``source``, the reference row ``ref`` and the ``confidence`` tag."""

    name: str
    value: object
    unit: str
    raw: object
    source: str
    ref: str
    confidence: str

    def to_dict(self) -> dict:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def read_parameters(text: str, where: str) -> dict[str, Parameter]:
    """Parameters from TOML text: one table per default with ``value``, ``unit``,
    ``source``, ``ref`` and ``confidence`` (see ``compute/data/economics.toml``).

    >>> p = read_parameters('[x]\\nvalue = 3\\nunit = "mm"\\nsource = "s"\\nref = ""\\n'
    ...                     'confidence = "assumption"', "t.toml")
    >>> p["x"].value, p["x"].raw
    (0.003, 3)
    >>> read_parameters('[x]\\nvalue = 3\\nunit = "furlong"\\nsource = "s"\\nref = ""\\n'
    ...                 'confidence = "derived"', "t.toml")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: t.toml: [x] unit 'furlong' is not known; known: '1', '1/cm^2', '1/mm^2', '1/year', 'USD', 'USD/(Gb/s)', 'USD/GB', 'USD/GiB', 'USD/kW/month', 'USD/kWh', 'USD/m', 'USD/mm^2', 'USD/port', 'W', 'W/port', 'm', 'mm', 'mm^2', 'name', 'pJ/bit', 'year'
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{where}: not valid TOML ({exc})") from None
    return read_rows(data, where)


def read_rows(data: dict, where: str) -> dict[str, Parameter]:
    """Parameters from a parsed table of rows (see :func:`read_parameters`)."""
    out = {}
    for name, row in data.items():
        if not isinstance(row, dict) or set(row) != set(ROW_KEYS):
            raise UserError(f"{where}: [{name}] must hold exactly the keys "
                            f"{', '.join(ROW_KEYS)}")
        unit, value = row["unit"], row["value"]
        if unit not in UNITS:
            raise UserError(f"{where}: [{name}] unit {unit!r} is not known; known: "
                            f"{known(UNITS)}")
        if row["confidence"] not in CONFIDENCE:
            raise UserError(f"{where}: [{name}] confidence {row['confidence']!r} is not "
                            f"allowed; allowed: {known(CONFIDENCE)}")
        if not (isinstance(row["source"], str) and row["source"].strip()
                and isinstance(row["ref"], str)):
            raise UserError(f"{where}: [{name}] needs a non-empty source and a ref string")
        if unit == "name":
            if not isinstance(value, str):
                raise UserError(f"{where}: [{name}] value must be a name, got {describe(value)}")
            si = value
        else:
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not (-1e308 < value < 1e308) or not math.isfinite(value) or value < 0:
                raise UserError(f"{where}: [{name}] value must be a finite number >= 0, "
                                f"got {describe(value)}")   # an int beyond a float too
            si = scaled(value, UNITS[unit])   # exact, rounded once (0.1 x 1/3.6e6)
        out[name] = Parameter(name, si, unit, value, row["source"], row["ref"],
                              row["confidence"])
    return out


#: The table of ``compute/data/economics.toml`` holding a host power row per catalog GPU
#: (``[host_power_per_gpu."B200-HGX"]``): :func:`host_power_table`, not a default.
HOST_TABLE = "host_power_per_gpu"
_ECONOMICS = "compute/data/economics.toml"


@cache
def _economics_data() -> dict:
    text = resources.files("compute").joinpath("data/economics.toml").read_text(encoding="utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{_ECONOMICS}: not valid TOML ({exc})") from None


@cache
def economics() -> dict[str, Parameter]:
    """The shipped defaults of ``compute/data/economics.toml`` by name (read once); the
    per-GPU host table is :func:`host_power_table`."""
    data = {k: v for k, v in _economics_data().items() if k != HOST_TABLE}
    return read_rows(data, _ECONOMICS)


def read_host_powers(table: object, where: str, gpus) -> dict[str, Parameter]:
    """Host power rows (W per GPU, at the system's max) by GPU name, checked: each a row in
    W (:func:`read_rows`: a negative or NaN value is refused), each name one of ``gpus``
    (the catalog's names; compute.rows does not read the catalog).

    >>> row = {"value": 700, "unit": "W", "source": "s", "ref": "", "confidence": "derived"}
    >>> read_host_powers({"B200-HGX": row}, "t.toml", ["B200-HGX"])["B200-HGX"].value
    700.0
    >>> read_host_powers({"B200-HGX": dict(row, value=-1)}, "t.toml", ["B200-HGX"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: t.toml: [B200-HGX] value must be a finite number >= 0, got -1
    >>> read_host_powers({"X100": row}, "t.toml", ["B200-HGX"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: t.toml: [X100] is not a GPU of the catalog (compute/data/gpus.toml)
    """
    if not isinstance(table, dict):
        raise UserError(f"{where}: must be a table of rows by GPU name")
    rows = read_rows(table, where)
    for name, row in rows.items():
        if name not in gpus:
            raise UserError(f"{where}: [{name}] is not a GPU of the catalog "
                            f"(compute/data/gpus.toml)")
        if row.unit != "W":
            raise UserError(f"{where}: [{name}] unit must be 'W', got {row.unit!r}")
    return rows


def host_power_table() -> tuple[dict, str]:
    """``compute/data/economics.toml``'s ``[host_power_per_gpu]`` table as parsed (rows
    by GPU name, unchecked: :func:`read_host_powers` checks them against the catalog) and
    where it was read."""
    return _economics_data().get(HOST_TABLE, {}), f"{_ECONOMICS} {HOST_TABLE}"


def parameter(name: str) -> Any:
    """The SI value of the shipped default ``name``.

    >>> parameter("defect_density")  # 0.1 /cm^2 in defects per m^2
    1000.0
    """
    table = economics()
    key = name if name in table else chosen(name, table)   # blanks at either end dropped
    if key is None:
        raise UserError(f"unknown economics parameter {describe(name)}"
                        f"{lookalike(name, table)}; known: {known(table)}")
    return table[key].value


def _as_float(value: object) -> float | None:
    """``value`` as a float if it is a real number (Python's, numpy's, a Fraction; not a
    bool), ``inf`` for one past a float's range; else None (a string, a Decimal, numpy's
    timedelta64, which claims to be a number and refuses ``float()``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except OverflowError:   # an integer (or a fraction) too large for a float
        return math.inf
    except (TypeError, ValueError, ArithmeticError):
        return None


def number_words(low: float = 0.0, high: float = math.inf, *, low_open: bool = False) -> str:
    """The range :func:`check_number` takes, in its refusal's words (a caller reading the
    text itself says it for a number below the smallest float).

    >>> number_words(0.01, 100), number_words(0.0, low_open=True)
    ('a finite number >= 0.01 and <= 100', 'a finite number > 0')
    """
    lo = f"> {low:g}" if low_open else f">= {low:g}"
    hi = "" if high == math.inf else f" and <= {high:g}"
    return f"a finite number {lo}{hi}"


def check_number(name: str, value: object, *, low: float = 0.0, high: float = math.inf,
                 low_open: bool = False) -> float:
    """``value`` as a float if it is a finite number in ``[low, high]`` (``(low, high]``
    with ``low_open``), else a UserError naming ``name``.

    >>> check_number("area", 3)
    3.0
    >>> check_number("area", float("nan"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: area must be a finite number >= 0, got nan
    """
    v = _as_float(value)
    if v is None:
        raise UserError(f"{name} must be a number, got {describe(value)}")
    bad = not math.isfinite(v) or v < low or v > high or (low_open and v == low)
    if bad:
        raise UserError(f"{name} must be {number_words(low, high, low_open=low_open)}, got "
                        f"{describe(value)}")
    return v + 0.0   # a -0.0 allowed is 0 (printed '-0'), as compute.validate.number has it
