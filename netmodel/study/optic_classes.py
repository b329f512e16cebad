"""Pluggable optical modules priced and powered by class: the module classes of
``netmodel/data/network_costs.toml`` (``[pluggable_module_price."400G"]``,
``[pluggable_module_power."400G"]``, ...), each keyed by a module's rate (its ports x
its ends' rate: a twin-port 2 x 400G OSFP is an 800G module, a single-port 400G OSFP a
400G one), and the rule for a module of a rate with no row.

The network bill (:func:`netmodel.study.network_bill.network_bill`) charges every
pluggable module whole at its class's price and power, the modules counted as
:mod:`topologies.optic_modules` pairs the ends (a half-used twin-port module is one
module). A module of a rate that is no row's is priced and powered per bit of the row
nearest its rate (nearest by ratio, the faster at a tie; below the slowest row the
slowest's, past the fastest the fastest's), an estimate the bill says in its notes
(:func:`estimate_note`).

``cost.pluggable_price`` and ``cost.pluggable_energy`` (the 800G class per bit) scale every
class: a setting moves each row by its ratio to the shipped default.

>>> [(c.name, c.price, c.power) for c in module_classes()]
[('200G', 350.0, 5.0), ('400G', 700.0, 9.0), ('800G', 1250.0, 17.0)]
>>> usd, w, off = module_figures(np.array([400e9, 800e9, 100e9, 900e9]))
>>> usd.tolist(), w.tolist(), off
([700.0, 1250.0, 175.0, 1406.25], [9.0, 17.0, 2.5, 19.125], ((100000000000.0, '200G'), (900000000000.0, '800G')))
"""

from __future__ import annotations

import math
import re
import tomllib
from functools import cache
from importlib import resources
from typing import NamedTuple

import numpy as np

from compute.errors import UserError

__all__ = ["MODULE_TABLES", "ModuleClass", "estimate_note", "module_classes", "module_figures",
           "module_rows", "network_costs_data"]

_WHERE = "netmodel/data/network_costs.toml"
#: The tables of ``network_costs.toml`` that hold the module classes, a row a class:
#: price (USD a module) and power (W a module).
MODULE_TABLES = ("pluggable_module_price", "pluggable_module_power")
_UNITS = {"pluggable_module_price": "USD", "pluggable_module_power": "W"}
_NAME = re.compile(r"[1-9][0-9]*G")


class ModuleClass(NamedTuple):
    """One class of pluggable module: ``name`` (its key, ``"400G"``), ``rate`` (bit/s,
    the module's ports x its ends' rate), ``price`` (USD a module), ``power`` (W a
    module)."""

    name: str
    rate: float
    price: float
    power: float


@cache
def network_costs_data() -> dict:
    """``netmodel/data/network_costs.toml`` as parsed (read once)."""
    text = resources.files("netmodel").joinpath("data/network_costs.toml") \
        .read_text(encoding="utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{_WHERE}: not valid TOML ({exc})") from None


@cache
def module_rows() -> dict:
    """The module classes' rows (:class:`compute.rows.Parameter`, SI) by
    ``"table.class"`` (``"pluggable_module_price.400G"``), checked: each table a row a
    class, both tables the same classes, a class named by its rate in Gb/s (``"400G"``),
    each row in its table's unit (USD, W)."""
    from compute.rows import read_rows

    data = network_costs_data()
    names = []
    out = {}
    for table in MODULE_TABLES:
        rows = data.get(table)
        if not isinstance(rows, dict) or not rows:
            raise UserError(f"{_WHERE}: [{table}] must be a table of rows by module class")
        names.append(sorted(rows))
        for name, row in read_rows(rows, f"{_WHERE} {table}").items():
            if not _NAME.fullmatch(name):
                raise UserError(f"{_WHERE}: [{table}.{name}] must be named by the module's "
                                f"rate in Gb/s, as '400G'")
            if row.unit != _UNITS[table]:
                raise UserError(f"{_WHERE}: [{table}.{name}] unit must be "
                                f"{_UNITS[table]!r}, got {row.unit!r}")
            out[f"{table}.{name}"] = row
    if names[0] != names[1]:
        raise UserError(f"{_WHERE}: [{MODULE_TABLES[0]}] and [{MODULE_TABLES[1]}] must "
                        f"hold the same module classes")
    return out


@cache
def module_classes() -> tuple[ModuleClass, ...]:
    """The module classes, slowest first."""
    rows = module_rows()
    names = {k.split(".", 1)[1] for k in rows}
    return tuple(sorted(
        (ModuleClass(n, float(n[:-1]) * 1e9, float(rows[f"{MODULE_TABLES[0]}.{n}"].value),
                     float(rows[f"{MODULE_TABLES[1]}.{n}"].value)) for n in names),
        key=lambda c: c.rate))


def module_figures(rates: np.ndarray, price_scale: float = 1.0, power_scale: float = 1.0
                   ) -> tuple[np.ndarray, np.ndarray, tuple[tuple[float, str], ...]]:
    """``(USD, W, estimated)`` of one pluggable module of each rate of ``rates`` (bit/s,
    the module's ports x its ends' rate): its class's row, else per bit of the row nearest
    its rate (by ratio, the faster at a tie); ``estimated`` the ``(rate, class name)`` of
    each distinct rate so priced, slowest first. ``price_scale`` and ``power_scale``
    multiply every row (a setting of ``cost.pluggable_price`` or ``cost.pluggable_energy``
    over its default).

    >>> module_figures(np.array([600e9, 565e9]))[2]   # nearer 800G by ratio; then 400G
    ((565000000000.0, '400G'), (600000000000.0, '800G'))
    """
    classes = module_classes()
    rate = np.asarray(rates, dtype=float)
    usd = np.zeros(rate.shape)
    watts = np.zeros(rate.shape)
    estimated = []
    for r in np.unique(rate).tolist():
        at = rate == r
        exact = [c for c in classes if math.isclose(r, c.rate, rel_tol=1e-9)]
        if exact:
            c, share = exact[0], 1.0
        else:
            # by ratio: the least |log(r / class)|, the faster at a tie (scanned fastest first)
            c = min(reversed(classes),
                    key=lambda k: abs(math.log(max(r, 1e-300) / k.rate)))
            share = r / c.rate
            estimated.append((r, c.name))
        usd[at] = c.price * share * price_scale
        watts[at] = c.power * share * power_scale
    return usd, watts, tuple(estimated)


def estimate_note(medium: str, rate: float, name: str) -> str:
    """The bill's note on ``medium`` modules of ``rate`` (bit/s) priced per bit of the class
    ``name`` (:func:`module_figures`' ``estimated``).

    >>> estimate_note("pluggable-optics", 100e9, "200G")
    'pluggable-optics modules of 100 Gb/s: no such class in netmodel/data/network_costs.toml; priced and powered per bit of the nearest class, 200G (an estimate)'
    """
    return (f"{medium} modules of {rate / 1e9:g} Gb/s: no such class in {_WHERE}; priced "
            f"and powered per bit of the nearest class, {name} (an estimate)")
