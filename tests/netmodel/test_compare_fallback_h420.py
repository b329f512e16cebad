"""compare --reliability says where the closed form took a fallback past the spare chain's
limit, as availability does: the row's ``analytic_fallback`` (JSON list, CSV joined by
'; ') and one note in the table naming the rows."""

from __future__ import annotations

import csv
import io
import json

from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study import availability_busy as ab
from netmodel.study.reliability_summary import reliability_summary

FALLBACKS = {ab.FALLBACK_ONE_HOLD, ab.FALLBACK_INDEPENDENT, ab.FALLBACK_APART}


def _compare(tmp_path, *extra):
    return CliRunner().invoke(cli, ["compare", "--models", "Llama-3-70B", "--scenarios",
                                    "lite-flat", "--phases", "decode", "--reliability",
                                    "--no-plot", *extra])


def test_within_the_limit_nothing_is_said(tmp_path):
    r = _compare(tmp_path)
    assert r.exit_code == 0, r.output
    assert "fell back" not in r.output
    row = json.loads(_compare(tmp_path, "--json").output)["rows"][0]
    assert row["analytic_fallback"] == []


def test_past_the_limit_rows_and_table_say_so(tmp_path, monkeypatch):
    # lite-flat's hosts ask their pod pools for instances of 16 GPUs, granted in part: a
    # chain of more than 1 state, so at a limit of 1 the closed form falls back
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)
    r = _compare(tmp_path, "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    notes = [line for line in r.output.splitlines() if "fell back" in line]
    assert len(notes) == 1, r.output
    assert "(1 state)" in notes[0] and "lite-flat@Lite Llama-3-70B decode" in notes[0]
    row = json.loads((tmp_path / "o" / "compare.json").read_text())["rows"][0]
    fell = row["analytic_fallback"]
    assert fell and set(fell) <= FALLBACKS and fell == sorted(fell)
    assert all(name in notes[0] for name in fell)
    with open(tmp_path / "o" / "compare.csv", newline="") as f:
        cells = next(csv.DictReader(f))
    assert cells["analytic_fallback"] == "; ".join(fell)


def test_the_summary_takes_the_spares_search_fallbacks_too(monkeypatch):
    # every closed-form run of the summary counts: with no reference spares (spares=0)
    # only the spares-needed search runs pools with spares, which at a limit of 1 fall back
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)
    s = reliability_summary("lite-flat", "Llama-3-70B", "decode", spares=0,
                            method="analytic")
    assert s.spares_needed and s.spares_needed > 0
    assert s.analytic_fallback and set(s.analytic_fallback) <= FALLBACKS
    assert s.to_dict()["analytic_fallback"] == list(s.analytic_fallback)
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 10_000)
    s0 = reliability_summary("lite-flat", "Llama-3-70B", "decode", spares=0,
                             method="analytic")
    assert s0.analytic_fallback == ()
    # the figures are the same runs: only what is said moves with the flag's field
    assert s0.availability == s.availability


def test_csv_joins_a_list():
    from compute.results import rows_to_csv

    text = rows_to_csv([{"a": ["x", "y"], "b": []}, {"a": None, "b": ("z",)}], ("a", "b"))
    assert list(csv.reader(io.StringIO(text))) == [["a", "b"], ["x; y", ""], ["", "z"]]
