"""The study summary's part 4 says where a row's reliability figures are approximations.

``compare --reliability`` prints a note for rows whose closed form fell back past the spare
chain's limit (``analytic_fallback``) and for rows whose ``spares_needed`` rests on a time
below the threshold in the regime where it reads low (``threshold_low``); reliability.csv
carries both columns, but summary.md's part 4 gave the spares count bare. Now a bullet names
each such scenario, and none is added where no row has one (the shipped study).
"""

from __future__ import annotations

from types import SimpleNamespace

from netmodel.study.availability_busy import FALLBACK_ONE_HOLD, fallback_words
from netmodel.study.summary_costs import reliability_section


def _summary(scenario, **kw):
    return SimpleNamespace(**{
        "model": "m", "phase": "decode", "scenario": scenario, "gpus": 32, "tp": 4,
        "pp": 1, "ep": 1, "attention_dp": 1,
        "sms_down_per_gpu_failure_hw": 132.0, "sms_down_per_gpu_failure_sw": 528.0,
        "gpu_failures_per_year": 3.5, "availability": 0.998, "availability_with_spares": 0.999,
        "spares": 1, "spare_placement": "pod", "spares_needed": 8,
        "spares_needed_placement": "global", "threshold": 0.99, "quantile": 0.999,
        "goodput_tokens_per_s_per_sm": 10.0, "goodput_tokens_per_s_per_sm_with_spares": 9.9,
        "analytic_fallback": (), "threshold_low": False, **kw})


def _section(*summaries):
    rel = SimpleNamespace(summaries=list(summaries), notes={}, recovery={})
    return reliability_section(rel, SimpleNamespace(baseline="base@H", scenarios=[]))


def test_threshold_low_is_said_naming_the_scenarios():
    lines = _section(_summary("base@H"), _summary("x@L", threshold_low=True),
                     _summary("y@L", threshold_low=True))
    [low] = [x for x in lines if "may read low" in x]
    assert "on x@L and y@L:" in low and "base@H" not in low, low
    assert "Monte Carlo" in low


def test_fallbacks_are_said_per_set_of_fallbacks():
    lines = _section(_summary("base@H", analytic_fallback=(FALLBACK_ONE_HOLD,)),
                     _summary("x@L", analytic_fallback=(FALLBACK_ONE_HOLD,)),
                     _summary("y@L"))
    [fell] = [x for x in lines if x.startswith("- **Approximations**")]
    assert f"on base@H and x@L the closed form {fallback_words([FALLBACK_ONE_HOLD])}." in fell
    assert "y@L" not in fell


def test_nothing_added_where_no_row_is_approximate():
    lines = _section(_summary("base@H"), _summary("x@L"))
    assert not [x for x in lines if "Approximations" in x or "may read low" in x]


def test_study_page_says_the_summary_names_them():
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "study.md"
    text = " ".join(page.read_text().split())
    part4 = text[text.index("4. **Blast radius and availability.**"):text.index("5. **Power")]
    assert "`analytic_fallback` and `threshold_low`" in part4
    assert "`summary.md` then says" in part4


def test_instance_column_names_every_dimension():
    """The table's instance column is the instance's layout, not its TP degree alone: a
    TP 4 x PP 2 instance spans 8 GPUs, the 1,056 SMs its failure takes (8 x 132), which a
    'TP 4' column would hide (--parallelism all)."""
    rows = [line for line in _section(_summary("base@H", pp=2, sms_down_per_gpu_failure_sw=1056.0))
            if line.startswith("| base@H")]
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[2] == "TP 4 x PP 2" and float(cells[4]) == 8 * 132
