"""``--cluster-gpus`` takes thousands grouped by commas by one rule (h394):
:data:`compute.validate.GROUPED_PATTERN`, a first group of 1-3 digits not starting with 0.
The old pattern took any 1-3 digits first, so ``--cluster-gpus 0,128`` ran 128 GPUs
(exit 0), ``000,128`` too, and ``007,000`` was read as 7,000."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from compute.validate import read_grouped
from tests.netmodel.cli_helpers import one_line_error, run_cli

BLAST = ["blast-radius", "--scenario", "lite-direct", "--model", "Llama-3-8B", "--no-plot"]
RULE = ("(digits, thousands grouped by commas: 131,072; a first group of 1-3 digits not "
        "starting with 0)")


@pytest.mark.parametrize(("text", "plain"), [("0,128", "128"), ("000,128", "128"),
                                             ("007,000", "7,000"), ("01,024", "1,024")])
def test_a_first_group_starting_with_zero_is_refused(text, plain):
    r = run_cli([*BLAST, "--cluster-gpus", text])
    assert one_line_error(r) == (f"error: --cluster-gpus {text!r} has a first group starting "
                                 f"with 0; write {plain} {RULE}")


def test_grouped_thousands_are_still_read():
    r = run_cli([*BLAST, "--cluster-gpus", "1,024"])
    assert r.exit_code == 0, r.output
    # 1,024 GPUs = 8 copies of lite-direct's 128
    assert "1,024 GPUs (8 x 128)" in r.output.splitlines()[0]


@given(st.integers(min_value=1, max_value=10**15))
def test_every_number_as_python_groups_it_reads_back(n):
    assert read_grouped("n", f"{n:,}") == n


@given(st.integers(min_value=0, max_value=99), st.integers(min_value=0, max_value=999))
def test_a_zero_first_group_never_reads(head, tail):
    text = f"0{head}"[:3] + f",{tail:03d}"   # 00,000 .. 099,999: a first group with a 0 first
    with pytest.raises(UserError, match="has a first group starting with 0"):
        read_grouped("n", text)


@pytest.mark.parametrize("text", ["3,2", "32,64", "1,0,2,4", "1,0000", "+1,000", "1,000.5"])
def test_other_commas_are_no_number(text):
    assert read_grouped("n", text) is None
