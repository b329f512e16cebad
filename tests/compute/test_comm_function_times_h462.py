"""A user's comm function: a bool is no time, and a bad time names the function.

Before: a function returning ``[1, True]`` or ``[0.5, np.True_]`` (numpy reads the list as
numbers) had its True taken as 1 s; a negative, NaN or infinite time was refused with
'comm function returned a negative, NaN or infinite time', naming neither the function nor
the value. Now a bool anywhere in what it returns is refused, and every refusal is one line
naming the function (its ``__name__``, a callable object's class) and the value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.comm import as_comm
from compute.errors import UserError
from compute.roofline import evaluate_grid

SIZES = np.array([1e6, 2e6])


def _returning(value):
    def my_comm(op, nbytes, group_size):
        return value
    return my_comm


@pytest.mark.parametrize("value", [True, np.True_, [1, True], [0.5, np.True_],
                                   [[True], [1.0]], (2.0, False)])
def test_a_bool_is_no_time(value):
    with pytest.raises(UserError) as e:
        as_comm(_returning(value)).collective_time("all-reduce", SIZES, 8)
    assert str(e.value).startswith("comm function 'my_comm' returned ")
    assert str(e.value).endswith(" for all-reduce; it must return seconds, one number per "
                                 "message size")


@pytest.mark.parametrize(("value", "shown"), [
    (-1.0, "-1.0 s for all-gather among 4 GPUs, a negative time"),
    ([1e-3, -2e-6], "-2e-06 s for all-gather among 4 GPUs, a negative time"),
    (math.inf, "inf s for all-gather among 4 GPUs, an infinite time"),
    ([math.nan, 1.0], "nan s for all-gather among 4 GPUs, not a number"),
    (np.float64(-3), "-3.0 s for all-gather among 4 GPUs, a negative time")])
def test_a_time_below_zero_or_not_finite_names_the_function_and_value(value, shown):
    with pytest.raises(UserError) as e:
        as_comm(_returning(value)).collective_time("all-gather", SIZES, 4)
    assert str(e.value) == (f"comm function 'my_comm' returned {shown}; it must return "
                            f"finite seconds >= 0")


def test_a_callable_object_is_named_by_its_class():
    class SlowNet:
        def __call__(self, op, nbytes, group_size):
            return -nbytes

    with pytest.raises(UserError, match="^comm function 'SlowNet' returned -1000000.0 s"):
        as_comm(SlowNet()).collective_time("all-reduce", SIZES, 2)


@pytest.mark.parametrize("value", [[1, 2], [0.5, 0.25], (3, 4), np.array([1, 2]), 0, 7])
def test_numbers_are_times(value):
    """The guard: ints, floats, a tuple and an int array are seconds (0 s too)."""
    t = as_comm(_returning(value)).collective_time("all-reduce", SIZES, 8)
    assert t.dtype == float and t.tolist() == np.broadcast_to(
        np.asarray(value, dtype=float), (2,)).tolist()


def test_a_model_object_returning_a_list_with_true_is_refused_in_the_grid():
    """A cost model object goes through the same as_times in the grid."""
    class Model:
        def collective_time(self, op, nbytes, group_size):
            return [1e-6] * (len(np.atleast_1d(nbytes)) - 1) + [True]

    with pytest.raises(UserError, match=r"returned \[.*True\] for .*; it must return "
                                        r"seconds"):
        evaluate_grid("Llama-3-8B", "H100-SXM", [2], [1, 8], "decode", comm=Model())
