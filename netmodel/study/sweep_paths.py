"""What a scenario may sweep: its numeric builder keywords, ``adjust.*`` and ``cost.*``, each
with its SI unit and whether it is a whole number, and the word a builder leaves one unset
with.

A path is ``fabric.KEY`` (``fabric.TABLE.KEY`` for a nested builder's table),
``adjust.KEY`` or ``cost.NAME`` (:func:`parameters`); :func:`_kind` is one path's unit and
kind, known to every scenario of a sweep or refused with the list of those that are.

>>> p = parameters("lite-flat")
>>> p["fabric.planes"], p["adjust.hop_latency"], p["cost.lifetime"]
(('', True), ('s', False), ('s', False))
>>> _kind("fabric.radix", ["lite-flat", "lite-hier"])
('', True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compute.errors import UserError, known, lookalike
from compute.validate import listed
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenarios import ADJUST_KEYS
from netmodel.study.sweep_values import COST

if TYPE_CHECKING:
    from netmodel.study.scenarios import Scenario

#: Units of the [adjust] parameters.
_ADJUST_UNITS = {"latency_scale": "", "hop_latency": "s", "bandwidth_scale": ""}


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


def sweep_scenarios(scenarios: object) -> tuple:
    """The scenarios a sweep parameter is checked against, as a tuple: one or more names,
    paths or Scenario objects. A lone name was read letter by letter (``unknown scenario
    'l'``), none left the parameter with no unit (a list of ``1us`` refused as 'not a
    number', a range of ``fabric.planes`` taken as fractional values), a generator was
    spent by the first check.

    >>> sweep_scenarios(["lite-flat"])
    ('lite-flat',)
    >>> sweep_scenarios("lite-flat")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: scenarios must be a list of scenario names, paths or Scenario objects, got 'lite-flat'
    """
    out = listed("scenarios", scenarios, "scenario names, paths or Scenario objects")
    if not out:
        raise UserError("a sweep parameter is checked against the sweep's scenarios: give at "
                        "least one")
    return out


def _kind(path: str, scenarios) -> tuple[str, bool]:
    """(unit, integer) of ``path``, which every scenario must know."""
    unit = integer = None
    for s in sweep_scenarios(scenarios):
        known_params = parameters(s)
        if path not in known_params:
            # name the fabric's own parameters (and adjust.*) for a fabric or adjust path,
            # the cost ones for a cost path: not all 60 (fabric.ports on lite-flat)
            group = (COST,) if path.startswith(COST) else ("fabric.", "adjust.")
            near = [k for k in known_params if k.startswith(group)]
            raise UserError(f"unknown parameter {path!r} for scenario "
                            f"{get_scenario(s).name!r}{lookalike(path, known_params)}; "
                            f"known: {known(near)}"
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
