"""What a sweep's refusals call its count of a range's values is said once, by the caller.

The words ``(N, or points)`` were typed in the library (``parse_param``) and again in the
sweep command, which replaced them with ``(N, or --points)``: two copies of one text that
could drift apart, the replace then doing nothing without a word. Now ``parse_param``
takes ``points_name`` (``points`` by default) and the command passes its flag.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.sweep_params import parse_param
from tests.netmodel.cli_helpers import one_line_error, run_cli


@pytest.mark.parametrize("name", ["points", "count", "--points"])
def test_a_one_value_range_names_the_count_as_the_caller_calls_it(name):
    kw = {} if name == "points" else {"points_name": name}
    with pytest.raises(UserError) as err:
        parse_param("adjust.hop_latency=0.1us:10us", ["lite-flat"], 1, **kw)
    assert str(err.value).endswith(f"give 2 or more values (N, or {name}), or the one value")


@pytest.mark.parametrize("points", [0, 2.5, -1])
def test_a_count_that_is_no_whole_number_is_named_as_the_caller_calls_it(points):
    with pytest.raises(UserError) as err:
        parse_param("adjust.hop_latency=0.1us:10us", ["lite-flat"], points, points_name="count")
    assert str(err.value).startswith("count must be a whole number >= 1 (the values of a "
                                     "LO:HI range), got ")


def test_the_command_names_its_flag_once():
    r = run_cli(["sweep", "--scenarios", "lite-flat", "--param",
                 "adjust.hop_latency=0.1us:10us", "--points", "1"])
    line = one_line_error(r, "would sweep its LO alone")
    assert line.count("--points") == 1 and "(N, or --points)" in line
