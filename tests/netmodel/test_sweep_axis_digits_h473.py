"""A sweep's table and notes write swept values apart.

The table's header, the crossover line and the no-crossing note wrote every value of the
first parameter at 3 significant digits, so values that differ in the fourth read the
same: ``netmodel sweep --scenarios h100-dgx --param cost.nic_price=1599USD,1600USD,1601USD``
printed the columns ``1.6e+03  1.6e+03  1.6e+03``. Now they take as many digits as it
takes to tell the swept values apart (3 at least, as before for values that differ there).
"""

from __future__ import annotations

from netmodel.study.sweep import SweepParam, _example

XS = (1.0, 1.001, 1.002)


def _header(r) -> list[str]:
    lines = r.table().splitlines()
    return lines[1].split()


def test_columns_differ_where_values_differ():
    r = _example([("a", [3.0, 2.0, 1.0]), ("b", [0.5, 0.5, 0.5])], XS)
    assert _header(r) == ["1", "1.001", "1.002"]


def test_notes_name_the_values_apart():
    # a meets b at the middle value and goes below it: a crossing exactly at 1.001
    r = _example([("a", [2.0, 1.0, 0.5]), ("b", [1.0, 1.0, 1.0])], XS)
    assert [c["x"] for c in r.crossovers()] == [1.001]
    assert "overtakes a at adjust.latency_scale = 1.001" in r.table()
    # b stays above c everywhere: the note's range and closest value as typed
    r = _example([("b", [2.0, 2.0, 1.5]), ("c", [1.0, 1.0, 1.0])], XS)
    text = "\n".join(r.no_crossing_lines())
    assert "from adjust.latency_scale = 1 to 1.002" in text
    assert "closest at 1.002:" in text


def test_three_digits_where_they_tell_values_apart():
    # unchanged where 3 digits suffice (a log-spaced range's values are not written long)
    r = _example([("a", [3.0, 2.0, 1.0])], (0.1, 0.31622776601683794, 1.0))
    assert _header(r) == ["0.1", "0.316", "1"]
    assert SweepParam("cost.nic_price", (1599.0, 1600.0, 1601.0)).digits() == 4
    assert SweepParam("cost.nic_price", (0.0, 1599.0)).digits() == 3


def test_a_typed_value_is_written_as_typed():
    # 0 and 1599 are apart at 3 digits, but 1599 read 1.6e+03
    r = _example([("b", [2.0, 1.5]), ("c", [1.0, 1.0])], (0.0, 1599.0))
    assert _header(r) == ["0", "1599"]
    assert "from adjust.latency_scale = 0 to 1599" in "\n".join(r.no_crossing_lines())


def test_a_flat_curve_with_infeasible_values_says_where_it_holds():
    """A curve flat where feasible but infeasible at another value is moved by the
    parameter (netmodel sweep --scenarios lite-ocs --param fabric.ports=1,2,4: 1 port
    leaves 2-GPU rings, where Llama-3-70B does not fit); the note said '6.805 tokens/s/SM
    at every buildable value', though 1 port builds. It counts the values now."""
    nan = float("nan")
    r = _example([("a", [nan, 2.0, 2.0])])
    (u,) = r.unchanged()
    assert (u["points"], u["total"]) == (2, 3)
    (line,) = r.unchanged_lines()
    assert "(2.000 tokens/s/SM at the 2 of 3 values where it is feasible)" in line
    assert "every buildable value" not in line
    # feasible everywhere: the words as before
    (line,) = _example([("a", [2.0, 2.0, 2.0])]).unchanged_lines()
    assert "(2.000 tokens/s/SM at every buildable value)" in line
