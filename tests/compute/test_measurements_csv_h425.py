"""A measurements CSV whose header has a column without a name (a trailing comma, or ',,')
is told which column, not 'unknown column(s) ;' or 'column(s)  given twice'."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.measurements import MEASUREMENT_COLUMNS, read_measurements

COLUMNS = ", ".join(MEASUREMENT_COLUMNS[0] + MEASUREMENT_COLUMNS[1])
ROW = "Llama-3-8B,H100-SXM,1,1,decode,,1000,0.008"


@pytest.mark.parametrize(("header", "row", "column", "of"), [
    # Before: "unknown column(s) ; columns: ..." (the unknown name is the empty one)
    ("model,gpu,tp,batch,phase,prompt,context,latency_s,", ROW + ",", 9, 9),
    # Before: "column(s)  given twice" (two empty names)
    ("model,gpu,tp,batch,phase,,prompt,context,latency_s,", "", 6, 10),
    ("model,gpu,tp,batch,phase,prompt, ,context,latency_s", "", 7, 9),
])
def test_a_column_without_a_name_is_named_by_its_place(tmp_path, header, row, column, of):
    f = tmp_path / "m.csv"
    f.write_text(header + "\n" + row + "\n")
    with pytest.raises(UserError) as err:
        read_measurements(f)
    assert str(err.value) == (f"{f}: the header's column {column} (of {of}) has no name (a "
                              f"comma too many?); columns: {COLUMNS}")


def test_a_missing_column_is_still_told_first(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("model,gpu,tp,batch,phase,prompt,context,\n")
    with pytest.raises(UserError, match="missing column"):
        read_measurements(f)


def test_the_same_file_without_the_comma_reads(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n" + ROW + "\n")
    (m,) = read_measurements(f)
    assert (m.model, m.tp, m.batch, m.context, m.latency_s) == ("Llama-3-8B", 1, 1, 1000, 0.008)
