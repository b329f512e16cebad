"""A mixed kind's grant follows 'the down first, fewest spares first' whatever the order
of its ``each``: the rule is made in one place (availability_kinds._steps), not left to
whoever builds the Kind (kinds_for sorted, a Kind built by hand did not).

The hand kind of 6d6ec68: 2 instances down needing 3 and 5 spares, a slowed one swapped on
2. With 3 free the operator brings back the down instance that needs 3 (1 instance back);
with 5, that one and the slowed swap (3 + 2), not the one needing 5 alone.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability_kinds import Kind


def _kind(each):
    return Kind("host", "x", 1.0, down=2, slow=0.5, units=10, restored=0.0, d_repair=1.0,
                d_swap=0.0, hold=1.0, d_slow=1.0, slow_swapped=1.0, each=each)


@pytest.mark.parametrize("each", [(5, 3, 2), (3, 5, 2)])
@pytest.mark.parametrize(("free", "taken", "down_back", "swapped"),
                         [(2, 2, 0, 1), (3, 3, 1, 0), (4, 3, 1, 0), (5, 5, 1, 1),
                          (7, 5, 1, 1), (8, 8, 2, 0), (10, 10, 2, 1)])
def test_fewest_first_whatever_the_order(each, free, taken, down_back, swapped):
    k = _kind(each)
    assert k.steps[k.granted(free)] == (taken, down_back, swapped)
    assert k.take(free) == taken
