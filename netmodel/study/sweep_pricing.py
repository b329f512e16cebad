"""A sweep point's rows priced with its ``cost.*`` values, leaving a point unpriced where its
values contradict each other only there.

The search's best configuration at a point is costed with the point's cost values
(:func:`netmodel.study.cost.cost_summary`); values that contradict each other only at some
points (a NIC dearer than the host that holds it) leave those points unpriced and noted
rather than the sweep refused.

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
