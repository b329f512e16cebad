"""A die table's process without a wafer price says what to do (h234): a GPU file's MI300X
XCDs on TSMC N5 were refused as "process 'N5' has no wafer price; known: 'N4', 'N7'", which
names the allowed values but not that the price is a row of compute/data/economics.toml
(wafer_price_<process>, economics.md), the one place another process is priced. N5 itself is
priced now (the N4/N5 row covers it, h262): the unknown example is N2, which no row prices."""

from __future__ import annotations

import pytest

from compute.dies import wafer_price_of
from compute.errors import UserError
from compute.rows import economics


def test_unknown_process_names_the_row_to_add():
    with pytest.raises(UserError, match=r"^f\.toml: process 'N2' has no wafer price; known: "
                       r"'4N', 'N3', 'N3E', 'N3P', 'N4', 'N4P', 'N5', 'N5P', 'N7' \(give one of "
                       r"them, or add a sourced row \[wafer_price_n2\] "
                       r"to compute/data/economics\.toml\)$"):
        wafer_price_of("N2", "f.toml")
    # the row it names is the one read for a process that has it
    assert wafer_price_of("N7", "f.toml") == economics()["wafer_price_n7"].value
