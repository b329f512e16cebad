"""A reference for the step tables (:func:`netmodel.collectives.cost.step_table`): one
step written into one column at a time, as the costing wrote them before it wrote each
class of steps at once."""

from __future__ import annotations

from netmodel.collectives.cost import _ATTR_FIELDS


def set_step(table, rows, i, s) -> None:
    """Write step ``s`` (a StepCost or Step) into column ``i`` of ``table`` for ``rows``."""
    table["on"][rows, i] = True
    if s.latencies is None:
        table["intra"][rows, i], table["inter"][rows, i] = 0, s.repeat * s.stages
    else:
        table["intra"][rows, i], table["inter"][rows, i] = s.latencies
    for k in _ATTR_FIELDS:
        table[k][rows, i] = getattr(s, k)
