"""Every cited curve of scripts/accuracy_collectives.py names its source: a case whose first
row says 'same' (a second run of the source above, e.g. 8xB300 with NVLS off after NVLS
on) printed "Source: same." in docs/accuracy.md; it now takes the source of the row above,
as the ops rows already did."""

import csv
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "tests" / "netmodel" / "data" / "nccl_allreduce_published.csv"


def _script():
    path = ROOT / "scripts" / "accuracy_collectives.py"
    spec = importlib.util.spec_from_file_location("accuracy_collectives_h426", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _rows():
    with open(PUBLISHED) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def test_no_cited_curve_says_same():
    curves = _script().cited_curves()
    assert curves and all(c.source and c.source != "same" for c in curves)


def test_a_case_starting_with_same_takes_the_source_above():
    rows = _rows()
    firsts = {}
    for i, r in enumerate(rows):
        firsts.setdefault(r["case"], i)
    starting_same = [c for c, i in firsts.items() if rows[i]["source"] == "same"]
    assert "b300-8-nonvls" in starting_same and "h100-4x8-roce-nvls-on" in starting_same
    by_key = {c.key: c for c in _script().cited_curves()}
    for case in starting_same:
        i = firsts[case]
        above = next(r["source"] for r in reversed(rows[:i]) if r["source"] != "same")
        assert by_key[case].source == above, case
    assert by_key["b300-8-nonvls"].source == by_key["b300-8"].source
    assert by_key["h100-4x8-roce-nvls-off"].source.startswith("NVIDIA/nccl issue 1221")
