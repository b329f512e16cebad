"""An OCS circuit list ('0-1;1-2', member indices) takes the ASCII digits 0-9 only: int()
read '٠-١' as 0-1 (compute.validate.ascii_digits, the rule of every parser of numbers)."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.optical import circuits_for

OTHER_DIGITS = [chr(c) for c in range(sys.maxunicode + 1)
                if unicodedata.category(chr(c)) == "Nd" and c > 127]


@given(st.sampled_from(OTHER_DIGITS))
def test_circuit_list_refuses_every_other_digit(d):
    with pytest.raises(UserError, match=f"logical topology '0-2;1-{d}' has the digit '{d}'"):
        circuits_for(f"0-2;1-{d}", ["a", "b", "c"])


def test_ascii_circuit_list_by_hand():
    assert circuits_for("0-2;1-2", ["a", "b", "c"]) == [("a", "c"), ("b", "c")]


def test_command_line():
    r = run_cli(["topology", "show", "ocs:gpus=2,logical=٠-١"])
    one_line_error(r, "logical topology '٠-١' has the digit '٠' (ARABIC-INDIC DIGIT ZERO)")
    assert run_cli(["topology", "show", "ocs:gpus=2,logical=0-1"]).exit_code == 0
