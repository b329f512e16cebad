"""Every star of the sweep figure is named in its panel, and every name has its star.

The study's sweep.png (Llama-3-70B, decode) starred lite-ocs@Lite+BW passing lite-flat and
lite-hier at 1.16 us and falling back below them at 3.27 us, but the panel's box named only
crossings with the baseline (h100-dgx): two stars no text explained. Curves here are
hand-made, so the places of the crossings are derived by hand: on a log axis a crossing is
where the drawn lines meet, log-linearly in x and linearly in the value.
"""

import math

import pytest

from netmodel.study import compare_plots, figure_kit
from netmodel.study.sweep import SweepParam, SweepResult, SweepRow

HOP = SweepParam("adjust.hop_latency", (1e-7, 1e-6, 1e-5), "s")   # 0.1, 1, 10 us


def _result(curves, param=HOP):
    rows = []
    for lab, vals in curves.items():
        for x, v in zip(param.values, vals, strict=True):
            rows.append(SweepRow(label=lab, scenario=lab.split("@")[0], gpu="Lite",
                                 model="M", phase="decode", x=x, feasible=True, tp=8,
                                 batch=1, latency_name="tbt", latency_s=0.01,
                                 latency_limit_s=0.05, network_share=0.5,
                                 tokens_per_s_per_sm=v))
    return SweepResult(rows=tuple(rows), params=(param,), labels=tuple(curves))


def _drawn(monkeypatch, tmp_path, result):
    """The first panel's stars (x, y in drawn units, one after the other) and the lines
    of its box."""
    kept = {}
    save = figure_kit.save_figure

    def keep(fig, path):
        ax = fig.axes[0]
        kept["stars"] = [float(c) for ln in ax.get_lines()
                         if ln.get_marker() == "*" and len(ln.get_xdata())
                         for xy in zip(ln.get_xdata(), ln.get_ydata(), strict=True)
                         for c in xy]   # x, y of each star, flat
        kept["box"] = [ln for t in ax.texts for ln in t.get_text().splitlines()]
        save(fig, path)

    monkeypatch.setattr(figure_kit, "save_figure", keep)
    compare_plots.plot_sweep(result, tmp_path / "sweep.png")
    return kept


# flat and hier equal (drawn as one); ocs 1 below, 1 above, 1 below them: it crosses them
# half-way between 0.1 and 1 us (sqrt(0.1) = 0.316 us, at 12.5) and between 1 and 10 us
# (sqrt(10) = 3.16 us, at 10); base stays above everything (no crossing with it)
CURVES = {"base@Lite": [20.0, 19.0, 17.0],
          "flat@Lite": [13.0, 12.0, 8.0],
          "hier@Lite": [13.0, 12.0, 8.0],
          "ocs@Lite": [12.0, 13.0, 7.0]}


def test_crossings_away_from_the_baseline_are_starred_and_named(monkeypatch, tmp_path):
    d = _drawn(monkeypatch, tmp_path, _result(CURVES))
    notes = [ln for ln in d["box"] if ln.startswith("* ")]
    assert notes == ["* ocs overtakes flat, hier at 0.316 us",
                     "* ocs falls below flat, hier at 3.16 us"]
    # one star per note (flat's and hier's crossings share one), where the lines meet
    assert d["stars"] == pytest.approx([math.sqrt(0.1), 12.5, math.sqrt(10.0), 10.0])


def test_a_crossing_with_the_baseline_keeps_its_words(monkeypatch, tmp_path):
    # b leads a below sqrt(10) us (half-way from 1 to 10 us), a leads above
    d = _drawn(monkeypatch, tmp_path, _result({"a@Lite": [1.0, 2.0, 5.0],
                                               "b@Lite": [3.0, 4.0, 3.0]}))
    assert [ln for ln in d["box"] if ln.startswith("* ")] == \
        ["* b falls below a at 3.16 us"]
    assert d["stars"] == pytest.approx([math.sqrt(10.0), 3.5])   # (2 + 5) / 2 = (4 + 3) / 2


def test_beyond_six_stars_the_rest_are_counted_not_starred(monkeypatch, tmp_path):
    # a zig-zags around b's constant 1.5: 8 crossings, one between each pair of values
    xs = tuple(k * 1e-7 for k in range(1, 10))
    zig = [1.0, 2.0] * 4 + [1.0]
    d = _drawn(monkeypatch, tmp_path, _result({"a@Lite": zig, "b@Lite": [1.5] * 9},
                                              SweepParam("adjust.hop_latency", xs, "s")))
    notes = [ln for ln in d["box"] if ln.startswith("* ")]
    assert len(notes) == len(d["stars"]) // 2 == 6
    assert "2 more crossings, not starred (crossovers in sweep.json)" in d["box"]
    assert d["stars"][1::2] == pytest.approx([1.5] * 6)
