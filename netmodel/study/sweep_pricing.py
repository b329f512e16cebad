"""A sweep point's rows priced with its ``cost.*`` values, and the one line refusing a sweep
none of whose points is priced, naming each point's cause.

The search's best configuration at a point is costed with the point's cost values
(:func:`netmodel.study.cost.cost_summary`); values that contradict each other only at some
points (a NIC dearer than the host that holds it) leave those points unpriced and noted
rather than the sweep refused, as does a point that serves no tokens (``cost.utilization``
0); :func:`unpriced_refusal` refuses a sweep where that leaves no point priced.

>>> bool(_NIC_IN_HOST.match("nic_price (1,599 USD) must be at most host_cost_per_h100 "
...                         "(1,000 USD): ..."))
True
"""

from __future__ import annotations

import re

from compute.errors import UserError
from netmodel.study.sweep_notes import _COST_AT
from netmodel.study.sweep_result import SweepRow
from netmodel.study.sweep_values import COST

#: The cost model's refusal of a NIC dearer or hungrier than the host that holds it
#: (netmodel.study.cost's NIC-in-host check: ``nic_price (1,599 USD) must be at most
#: host_cost_per_h100 (1,000 USD): ...``), the one refusal a sweep takes point by point:
#: each value is allowed, the pair contradicts only at some points. Read off its words (the
#: cost module names no kind of refusal); tests/netmodel/test_sweep_notes_h482.py holds them.
_NIC_IN_HOST = re.compile(r"nic_\w+ \([^)]*\) must be at most ")


def _cost_at(costs: dict) -> str:
    """The cost values of a point as its notes name them (``cost.host_cost_per_h100=1000``).

    >>> _cost_at({"host_cost_per_h100": 1000.0, "pue": 1.2})
    'cost.host_cost_per_h100=1000, cost.pue=1.2'
    """
    return ", ".join(f"{COST}{k}={v:g}" for k, v in costs.items())


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
            elif costs and cost.usd_per_mtoken is None:   # priced, but no token served
                notes.setdefault(f"{_COST_AT}{_cost_at(costs)}", _no_tokens(costs))
        except UserError as exc:
            if costs and not _NIC_IN_HOST.match(str(exc)):
                raise   # a swept value refused on its own (lifetime 0): the user must hear it
            if costs:   # values that contradict each other only here (a NIC dearer than
                # the host at this host price): not priced there, said once a point; the
                # sweep runs on (run_sweep refuses it whole where no point is priced)
                _check_gpu_priced(found.scenario)
                notes.setdefault(f"{_COST_AT}{_cost_at(costs)}", str(exc))
            else:
                notes.setdefault(f"cost of {s.label}", str(exc))
    return row


def _no_tokens(costs: dict) -> str:
    """Why a priced point has no cost per token: it serves none (``cost.utilization`` 0).

    >>> _no_tokens({"utilization": 0.0})
    'cost.utilization=0 serves no tokens: no cost per token (its power stands)'
    """
    why = f"{COST}utilization=0" if costs.get("utilization") == 0 else "the cluster"
    return f"{why} serves no tokens: no cost per token (its power stands)"


def _check_gpu_priced(scenario) -> None:
    """Refuse, as every other point of a ``cost.*`` sweep does, a GPU the yield model cannot
    price (no die data), at a point the cost model left before pricing it (a NIC dearer
    than its host): else a sweep whose every point was such named the NIC alone, and the
    GPU's refusal came only once the NIC was fixed.

    >>> from netmodel.study.scenario_catalog import get_scenario
    >>> _check_gpu_priced(get_scenario("lite-flat"))
    """
    from compute.yield_model import gpu_dies

    gpu_dies(scenario.gpu_spec)


def unpriced_refusal(rows, params, notes: dict) -> str | None:
    """The one line refusing a ``cost.*`` sweep none of whose points is priced, naming the
    cause at each point: the cost values that contradict there (a NIC dearer than its
    host), a utilization of 0, or the search's reason the point is infeasible (no
    configuration within the SLO, a fabric that cannot be built); None where some point
    is priced, no cost parameter is swept, or nothing priced was refused (every point
    infeasible: the table says why, as a sweep of another parameter's does).

    >>> from netmodel.study.sweep_result import _example
    >>> r = _example([("a", [1.0, 2.0])], xs=(0.0, 1.0))
    >>> unpriced_refusal(r.rows, r.params, {}) is None   # no cost parameter swept
    True
    """
    if not any(p.path.startswith(COST) for p in params):
        return None
    if any(r.feasible and r.usd_per_mtoken is not None for r in rows):
        return None
    causes: dict[str, list[str]] = {}
    for r in rows:
        values = [(params[0], r.x)] + ([(params[1], r.y)] if r.y is not None else [])
        costs = {p.path[len(COST):]: v for p, v in values if p.path.startswith(COST)}
        if r.feasible:
            why = notes.get(f"{_COST_AT}{_cost_at(costs)}", "not priced")
        else:
            # a fabric refused is refused for every model and phase: said once a scenario
            who = r.label if r.reason.startswith("fabric refused") else \
                f"{r.label}, {r.model} {r.phase}"
            why = f"{who}: {r.reason or 'infeasible'}"
        at = ", ".join(p.show(v) for p, v in values)
        causes.setdefault(why, [])
        if at not in causes[why]:
            causes[why].append(at)
    if not any(k.startswith(_COST_AT) for k in notes):
        return None   # nothing the cost model refused: every point infeasible
    shown = list(causes.items())[:_MAX_CAUSES]
    more = len(causes) - len(shown)
    return ("no point of the sweep is priced (USD per million tokens): "
            + "; ".join(f"at {' and '.join(at)}: {why}" for why, at in shown)
            + (f"; and {more} more cause{'s' if more > 1 else ''} at other points"
               if more else ""))


#: Causes a refusal of a sweep with no priced point names, the first ones met (the points
#: of one cause together).
_MAX_CAUSES = 4
