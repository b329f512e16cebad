"""A collective's time at a grid's sizes is taken over the candidate lines that can be the
least somewhere (h718).

A fabric's collective has tens of candidate lines ``a + b n`` (algorithms x protocols x
routings x pipeline-fill ranges), of which a few are the least at any size; a search timed
every line at every cell of its grid (66 million line-cells for the study's MoE part).
:func:`~netmodel.collectives.cost.least_lines` leaves out a line another one is at most
everywhere (``a' <= a`` and ``b' <= b``), which rounding keeps at most in floating point
too, so the time is the same to the last bit; lines with size ranges of their own (NCCL's
send/recv) are kept whole. The scenario's costing
(:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.collective_time`) and an
instance's placed groups (:class:`~netmodel.study.placed_cost.GroupComm`) keep those lines
once per (op, group): each is checked here against every line, bit for bit.
"""

import numpy as np
import pytest

from netmodel.collectives.cost import least_lines, lines_time
from netmodel.collectives.model import candidate_lines
from netmodel.study.scenario_collectives import ScenarioCollectives

#: Sizes from nothing to 4 GiB, and the crossings of the lines drawn below
SIZES = np.concatenate([[0.0, 1.0], np.geomspace(1.0, 4.0 * 2 ** 30, 997)])


def test_dominated_lines_are_left_out_and_the_first_of_equals_kept():
    a = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    b = np.array([2.0, 2.0, 3.0, 2.0, 0.1])
    la, lb, lo, hi = least_lines(a, b)
    # 2 + 2n is above 1 + 2n everywhere, the second 1 + 2n equals the first
    assert la.tolist() == [1.0, 0.5, 3.0] and lb.tolist() == [2.0, 3.0, 0.1]
    assert lo is None and hi is None


def test_random_lines_give_the_same_times_bit_for_bit():
    rng = np.random.default_rng(718)
    dropped = 0
    for _ in range(200):
        c = int(rng.integers(1, 40))
        # few distinct values: ties and equal lines are common
        a = rng.choice(np.array([0.0, 1e-6, 2e-6, 5e-6, 1.3e-5]), c)
        b = rng.choice(np.array([1e-11, 2.5e-11, 4e-11, 1e-10]), c)
        n = np.concatenate([SIZES, rng.uniform(0, 1e9, 64)])
        la, lb, _, _ = least_lines(a, b)
        dropped += c - len(la)
        assert np.array_equal(lines_time(la, lb, None, None, n), lines_time(a, b, None, None, n))
    assert dropped > 1000   # the check is not vacuous


def test_a_nan_line_is_kept_and_ranged_lines_are_whole():
    a, b = np.array([1.0, np.nan, 2.0]), np.array([1.0, 1.0, 1.0])
    la, lb, _, _ = least_lines(a, b)
    assert np.isnan(la[1]) and len(la) == 2     # 2 + n dropped, the NaN line kept
    lo, hi = np.array([0.0, 0.0, 4.0]), np.array([4.0, np.inf, np.inf])
    out = least_lines(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), lo, hi)
    assert out[2] is lo and out[3] is hi and len(out[0]) == 3


@pytest.mark.parametrize("name", ["lite-flat", "lite-direct", "h100-dgx", "lite-ocs"])
def test_scenario_times_are_those_of_every_line(name):
    coll = ScenarioCollectives(name)
    for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        for p in (2, 8, 16):
            a, b = coll.linear(op, p)
            lo, hi = coll._linear[("ranges", op, p)]
            every = np.where(SIZES > 0, lines_time(a, b, lo, hi, SIZES), 0.0)
            assert np.array_equal(coll.collective_time(op, SIZES, p), every), (op, p)
            least = coll._linear[("least", op, p)]
            if lo is None:   # lines without ranges of their own: some left out
                assert len(least[0]) <= len(a)


def test_placed_groups_times_are_those_of_every_line():
    # an instance of 32 Lite GPUs on lite-direct in stages of 8: its groups of 4 are costed
    # on each slice as placed (GroupComm), the slowest one's time
    coll = ScenarioCollectives("lite-direct")
    placed = coll.for_instance(32, 8)._placed()
    for op in ("all-reduce", "all-gather"):
        for k in (4, 8):
            got = placed.collective_time(op, SIZES, k)
            slowest = None
            for model, members in placed.slices(k):
                t = lines_time(*candidate_lines(model, model.candidates(op, members)), SIZES)
                slowest = t if slowest is None else np.maximum(slowest, t)
            assert np.array_equal(got, np.where(SIZES > 0, slowest, 0.0)), (op, k)
            # asked again: the lines kept give the same
            assert np.array_equal(placed.collective_time(op, SIZES, k), got)
    # a size below 0 (no search asks one) is timed over every line, as before
    m, members = next(iter(placed.slices(4)))
    n = np.array([-1e6, 1e6])
    every = lines_time(*candidate_lines(m, m.candidates("all-reduce", members)), n)
    assert np.array_equal(placed._time("all-reduce", members, m, n), every)
