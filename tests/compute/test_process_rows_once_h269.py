"""A process name is priced by one wafer price row (h269 review of ad300cb): process_rows took
the first processes_of_<row> list naming it (setdefault) and passed over a second, and a name
listed under one row while economics.toml has its own wafer_price_<name> row was priced by the
list, so an N7 listed in the N4/N5 family's list would price N7 wafers at $18,000, not CSET's
$9,346, without a word. Either is now refused in one line naming both rows."""

from __future__ import annotations

from dataclasses import replace

import pytest

import compute.dies as dies
from compute.errors import UserError


def _with(monkeypatch, key, names):
    rows = dict(dies.economics())
    rows[key] = replace(rows[key], value=names, raw=names)
    monkeypatch.setattr(dies, "economics", lambda: rows)


def test_the_shipped_lists_each_name_once():
    rows = dies.process_rows()
    assert rows["N5"] == "wafer_price" and rows["N7"] == "wafer_price_n7"
    assert dies.wafer_price_of("N7", "f") == 9346.0       # CSET 2020 (P10)
    assert dies.wafer_price_of("N3E", "f") == 20000.0     # TrendForce 2025 (P12)


def test_a_name_in_two_lists_is_refused(monkeypatch):
    _with(monkeypatch, "processes_of_wafer_price_n3", "N3 N3E N3P N5")
    with pytest.raises(UserError, match=r"^compute/data/economics\.toml: process 'N5' is "
                                        r"priced by both \[wafer_price\] and "
                                        r"\[wafer_price_n3\] \(listed in "
                                        r"\[processes_of_wafer_price_n3\]\); list it under one$"):
        dies.process_rows()


def test_a_name_with_its_own_row_listed_under_another_is_refused(monkeypatch):
    _with(monkeypatch, "processes_of_wafer_price", "N4 N4P N5 N5P 4N N7")
    with pytest.raises(UserError, match=r"process 'N7' is priced by both \[wafer_price_n7\] "
                                        r"and \[wafer_price\]"):
        dies.wafer_price_of("N7", "f")
