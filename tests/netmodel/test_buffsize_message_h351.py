"""--nccl-buffsize's refusal names the value once, as typed: it said "--nccl-buffsize '7'
must be ..., got 7.0" (the option's name carried the text and the library's check added the
float parse_bytes read), and "got 2199023255552.0" for '2TiB'."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.collectives.calibration import NCCL_STEPS, SIMPLE_BUFFER_MAX, check_simple_buffer
from tests.netmodel.cli_helpers import one_line_error, run_cli

ARGS = ["collective", "send-recv", "--fabric", "h100-dgx", "--nccl-buffsize"]


@pytest.mark.parametrize("typed", ["7", "2TiB", "1.5B"])
def test_cli_names_the_value_once_as_typed(typed):
    line = one_line_error(run_cli([*ARGS, typed]))
    if typed == "1.5B":   # refused by parse_bytes first: a fraction of a byte
        assert line.count("'1.5B'") == 1
        return
    allowed = f"a whole number of bytes from {NCCL_STEPS} B to 1 TiB ({SIMPLE_BUFFER_MAX:,} B)"
    assert line.startswith(f"error: --nccl-buffsize must be {allowed}"), line
    assert line.endswith(f"got '{typed}'"), line
    assert line.count(f"'{typed}'") == 1 and ".0" not in line, line


def test_the_library_names_the_number_it_was_given():
    with pytest.raises(UserError, match=r"^simple_buffer must be .*, got 7\.0$"):
        check_simple_buffer(7.0)


def test_a_buffer_in_range_runs():
    assert run_cli([*ARGS, "8"]).exit_code == 0   # NCCL_STEPS bytes: one byte a step
