"""``availability --spares 1e-320%`` said the option in two forms on one line ("--spares
'1e-320' is below ...; spares must be a percentage >= 0"): the command line names the
option at each clause the library's parameter starts, as --detection's refusal does; the
library (parse_spares) keeps naming its parameter."""

from __future__ import annotations

import re

import pytest

from compute.errors import UserError
from compute.validate import SMALLEST_NUMBER
from tests.netmodel.cli_helpers import one_line_error, run_cli

HEAD = f"below the smallest number netmodel reads ({SMALLEST_NUMBER:.4g})"
RUN = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B"]


def test_spares_below_smallest_names_the_flag_once_in_one_form():
    r = run_cli([*RUN, "--spares", "1e-320%"])
    assert r.exit_code == 2
    line = one_line_error(r)
    assert line == (f"error: --spares '1e-320' is {HEAD}; --spares must be a percentage "
                    ">= 0")
    assert not re.search(r"(?<!-)\bspares\b", line)   # no bare parameter name left


def test_detection_reads_the_same_way():
    """The form the spares line now takes: the flag at the head and at the range."""
    r = run_cli([*RUN, "--detection", "1e-320"])
    assert r.exit_code == 2
    assert one_line_error(r) == (f"error: --detection '1e-320' is {HEAD}; --detection must "
                                 "be a duration from 0 to 100 y")


def test_the_library_names_its_parameter():
    from netmodel.study.availability import parse_spares

    with pytest.raises(UserError) as err:
        parse_spares("1e-320%", 128)
    assert str(err.value) == f"spares '1e-320' is {HEAD}; spares must be a percentage >= 0"


@pytest.mark.parametrize("argv, line", [
    # a clause that only mentions GPUs is not a parameter's name: left as it is
    (["--spares", "200%"], "error: --spares '200%' (256) exceed the cluster's 128 GPUs; "
     "allowed: 0 to 128 (100%), a pool as large as the cluster"),
    (["--spares", "-1"], "error: --spares '-1' is below 0; allowed: 0 to 128 (100%), a pool "
                       "as large as the cluster"),
])
def test_other_spares_refusals_unchanged(argv, line):
    r = run_cli([*RUN, *argv])
    assert r.exit_code == 2
    assert one_line_error(r) == line
