"""Process names a wafer price row covers are accepted (h262). The ``wafer_price`` row
prices 'N4/N5' wafers ($18,000, Morgan Stanley via heise, P11), yet a die table on "N5" (AMD
MI300X's XCDs, TSMC N5) was refused: only "N4", "N7" and "N3" were names. Now each price
row's ``processes_of_<row>`` list names the processes it covers."""

from __future__ import annotations

import pytest

from compute.dies import check_die_table, process_rows, wafer_price_of
from compute.errors import UserError
from compute.rows import economics


def _row(v, u):
    return {"value": v, "unit": u, "source": "s", "ref": "", "confidence": "assumption"}


@pytest.mark.parametrize("process, usd", [
    ("N5", 18000), ("N5P", 18000), ("N4P", 18000), ("4N", 18000), ("N4", 18000),
    ("N3P", 20000), ("N3E", 20000), ("N3", 20000), ("N7", 9346),
    # a name in any case: 'n5' and 'n3e' were refused (h269's left item), 'n3' priced
    ("n5", 18000), ("n3e", 20000), ("n3", 20000)])
def test_a_covered_name_takes_its_rows_price(process, usd):
    # the published prices: N4/N5 $18,000 (P11), 3 nm $20,000 (P12), 7 nm $9,346 (P10)
    assert wafer_price_of(process, "f.toml") == usd


def test_an_n5_die_table_is_read():
    # MI300X: eight XCDs of 38 enabled CUs (40 physical) on TSMC N5
    t = {"area": _row(115, "mm^2"), "dies": _row(8, "1"), "sms_physical": _row(40, "1"),
         "sms_enabled": _row(38, "1"), "process": _row("N5", "name"),
         "hbm_sites": _row(8, "1"), "packaging": _row("CoWoS-S", "name")}
    d = check_die_table("MI300X", t, "f.toml: GPU 'MI300X' die", 304)
    assert d.process == "N5" and d.wafer_price == 18000
    # the name is kept as the upper-case process, which the study compares with the
    # reference process (netmodel/study/cost.py)
    lower = check_die_table("MI300X", {**t, "process": _row("n5", "name")}, "f.toml", 304)
    assert lower.process == "N5" and lower.wafer_price == 18000


@pytest.mark.parametrize("process", ["N6", "N2", "n2", "N5 N4"])
def test_a_name_no_row_covers_stays_refused(process):
    with pytest.raises(UserError, match=f"process '{process}' has no wafer price"):
        wafer_price_of(process, "f.toml")


def test_every_list_names_a_price_row():
    rows = economics()
    assert set(process_rows().values()) <= {k for k in rows if k.startswith("wafer_price")}
    assert process_rows()[rows["reference_process"].value] == "wafer_price"
