"""Review of the sweep's crossing notes (a55831b, a62b5c1) on hand-made curves.

Curves that touch at a swept value and part on the side they came from do not cross:
_crossings took the touch for a crossover (``d0 * d1 > 0`` is false where d1 is 0), so
a = (2, 1, 2) over b = (1, 1, 1) was said to be overtaken by b at 2. The summary's
'No scenario crosses' names those above the baseline from SweepResult.no_crossings()
(one rule: above at every value both are feasible at), not its own all-values test.
"""

from __future__ import annotations

import math

import pytest

from netmodel.study.summary_crossings import sweep_section
from netmodel.study.sweep import _example

NAN = math.nan


@pytest.mark.parametrize("b", [(1.0, 1.0, 1.0),      # touch in the middle, part upwards
                               (1.0, 1.2, 1.0)])     # a = 2, 1.5, 1: touch at the last value
def test_touching_curves_do_not_cross(b):
    a = (2.0, 1.0, 2.0) if b[1] == 1.0 else (2.0, 1.5, 1.0)
    r = _example([("a", list(a)), ("b", list(b))])
    assert r.crossovers() == []


@pytest.mark.parametrize(("a", "b", "x"), [
    ((2.0, 1.0, 0.5), (1.0, 1.0, 1.0), 2.0),        # meet at 2, then b leads: a crossing at 2
    ((2.0, 1.0, NAN, 0.5), (1.0, 1.0, 1.0, 1.0), 2.0),  # the next feasible value decides
    ((2.0, 1.5, 0.5), (1.0, 1.0, 1.0), 2.5),        # a plain crossing: 1.5 - 1 = 0.5 -> -0.5
])
def test_a_crossing_through_a_meeting_point_is_kept(a, b, x):
    xs = tuple(float(k) for k in range(1, len(a) + 1))
    r = _example([("a", list(a)), ("b", list(b))], xs)
    got = [(c["before"], c["after"]) for c in r.crossovers()]
    assert got == [("a", "b")]
    # latency_scale 1..3 is drawn on a linear axis (figure_kit.log_axis: under 10x)
    assert r.crossovers()[0]["x"] == pytest.approx(x)


def test_no_crossing_summary_reads_no_crossings():
    """b is above the baseline wherever both are feasible (not at x = 2, where b is not):
    no_crossings says b stays above, and the summary says the same, once (one scenario
    'stays', as the sweep's note says it; it said 'b stay')."""
    r = _example([("base", [1.0, 1.0, 1.0]), ("b", [2.0, NAN, 2.0]),
                  ("c", [0.5, 0.5, 0.5])])
    assert [(n["above"], n["below"]) for n in r.no_crossings()] == [("b", "base"),
                                                                     ("base", "c")]
    text = "\n".join(sweep_section(r))
    assert "No scenario crosses base in this range (b stays above it)." in text
