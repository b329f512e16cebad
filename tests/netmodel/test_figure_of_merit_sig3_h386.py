"""A figure of merit is printed one way: three significant figures, trailing zeros kept
(:func:`netmodel.study.summary_words.sig3`, as summary.md prints them).

``netmodel cost`` printed tokens/s/W and tokens/J with ``.3g`` ("tokens/s/W 2.8" where
summary.md says 2.80) and USD per million tokens with ``.4g``; cost_per_scenario.png's bar
labels were ``.3g`` too ("2.8" over the H100's decode bar).
"""

from dataclasses import replace

import pytest

from netmodel.cli.economics import _print_summary
from netmodel.study.cost import cost_summary
from netmodel.study.summary_words import sig3


@pytest.fixture(scope="module")
def summary():
    return cost_summary("h100-dgx", "Llama-3-70B", "decode")


def _lines(capsys, s) -> dict:
    _print_summary(s)
    out = capsys.readouterr().out
    return {line[:21].strip(): line[22:] for line in out.splitlines() if len(line) > 22}


def test_cost_prints_three_significant_figures(summary, capsys):
    # tokens/s set to 3 x the IT power in W: 3 tokens/s/W, printed "3.00" (not "3")
    s = replace(summary, tokens_per_s=3.0 * summary.power_it)
    assert s.tokens_per_s_per_w == pytest.approx(3.0)
    said = _lines(capsys, s)
    assert said["tokens/s/W"] == "3.00"
    assert said["tokens/J (facility)"] == sig3(3.0 / s.pue)
    # USD per million tokens: cost a year over tokens a year, x 1e6, to 3 figures
    usd = s.cost_per_year / (s.tokens_per_s * 365.25 * 86400) * 1e6
    assert said["$ per M tokens"] == f"${sig3(usd)}"
    assert len(said["$ per M tokens"].lstrip("$0.").replace(".", "")) == 3


def test_the_rule():
    assert (sig3(2.8), sig3(2.8022), sig3(0.1675), sig3(1.0)) == ("2.80", "2.80", "0.168", "1.00")


def test_cost_plot_labels_the_bars_so(summary, tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    from netmodel.study.cost_plots import plot_cost_per_scenario

    said = []
    text = Axes.text

    def record(self, x, y, s, *args, **kw):
        said.append(s)
        return text(self, x, y, s, *args, **kw)

    monkeypatch.setattr(Axes, "text", record)
    s = replace(summary, tokens_per_s=3.0 * summary.power_it)
    plot_cost_per_scenario([s], tmp_path / "c.png")
    assert said[:2] == ["3.00", sig3(s.usd_per_mtoken)]
