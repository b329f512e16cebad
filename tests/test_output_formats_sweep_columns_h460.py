"""docs/output-formats.md says which of compare.csv's columns sweep.csv has: "those up to
COLUMN ..., and ``reason``". It said ``spares_needed`` while sweep.csv also carries
``analytic_fallback`` and ``threshold_low`` after it (the reliability group's last columns);
this checks the named column against the row types' declared columns.
"""

import re
from pathlib import Path

from netmodel.study.compare import CompareRow
from netmodel.study.sweep import SweepRow

PAGE = Path(__file__).resolve().parent.parent / "docs" / "output-formats.md"


def test_sweep_columns_sentence_names_the_last_shared_column():
    text = " ".join(PAGE.read_text().split())
    said = re.search(r"those of `sweep\.csv` are those up to `([a-z_]+)`", text)
    assert said, "output-formats.md no longer says which columns sweep.csv has"
    last = said.group(1)
    sweep = [c for c in SweepRow.columns() if c not in ("x", "y", "reason")]
    compare = CompareRow.columns()
    # sweep.csv's columns besides the parameters' and reason are compare.csv's, in its
    # order up to the named one (label before scenario aside), and none after it
    assert sweep[-1] == last
    upto = compare[:compare.index(last) + 1]
    assert sorted(sweep) == sorted(upto)
    assert SweepRow.columns()[-1] == "reason"
