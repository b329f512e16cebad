"""Sweep curves that coincide are drawn in turns and named; a pair that never crosses says so.

In the study's sweep.png (Llama-3-70B, decode) lite-flat and lite-hier drew one line (equal at
every hop latency) and lite-direct and lite-flat-inr nearly so (0.47% apart), the later line
hiding the earlier with nothing said. And a cost sweep in which lite-flat stays costlier than
h100-dgx even with free optics printed its table and no word that the two never cross.
Curves here are hand-made, so every expectation is derived by hand.
"""

import numpy as np
import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study import compare_plots, figure_kit
from netmodel.study.sweep import COINCIDENT, SweepParam, SweepResult, SweepRow

HOP = SweepParam("adjust.hop_latency", (1e-7, 1e-6, 1e-5), "s")   # 0.1, 1, 10 us


def _result(curves, param=HOP, metric=None):
    """A sweep of ``curves`` ``{label: values}`` (None: infeasible) along ``param``;
    ``metric`` ``usd_per_mtoken`` sets that column instead of tokens/s/SM."""
    rows = []
    for lab, vals in curves.items():
        for x, v in zip(param.values, vals, strict=True):
            score = {"usd_per_mtoken": v, "tokens_per_s_per_sm": 1.0} if metric else \
                {"tokens_per_s_per_sm": v}
            rows.append(SweepRow(label=lab, scenario=lab.split("@")[0], gpu="Lite",
                                 model="M", phase="decode", x=x, feasible=v is not None,
                                 tp=8, batch=1, latency_name="tbt", latency_s=0.01,
                                 latency_limit_s=0.05, network_share=0.5,
                                 **(score if v is not None else {})))
    return SweepResult(rows=tuple(rows), params=(param,), labels=tuple(curves))


CURVES = {"base@Lite": [20.0, 19.0, 17.0],
          "flat@Lite": [13.0, 12.0, 8.0],
          "hier@Lite": [13.0, 12.0, 8.0],            # flat's, exactly
          "direct@Lite": [14.0, 13.8, 12.4],
          "inr@Lite": [14.0 * 0.995, 13.8, 12.4],    # 0.5% below direct at 0.1 us
          "ocs@Lite": [13.0 * 1.02, 12.0, 8.0]}      # 2% above flat at 0.1 us: apart


def test_coinciding_groups_are_those_within_the_tolerance():
    assert COINCIDENT == 0.01
    groups = {g["labels"]: g["spread"] for g in _result(CURVES).coinciding()}
    assert set(groups) == {("flat@Lite", "hier@Lite"), ("direct@Lite", "inr@Lite")}
    assert groups[("flat@Lite", "hier@Lite")] == 0.0
    assert groups[("direct@Lite", "inr@Lite")] == pytest.approx(0.005)   # (14 - 13.93) / 14
    # tighter than 0.5%: only the equal pair; looser than 2%: ocs joins flat's group
    assert [g["labels"] for g in _result(CURVES).coinciding(rtol=0.004)] == \
        [("flat@Lite", "hier@Lite")]
    wide = {g["labels"] for g in _result(CURVES).coinciding(rtol=0.03)}
    assert ("flat@Lite", "hier@Lite", "ocs@Lite") in wide


def test_a_curve_infeasible_where_the_other_is_not_does_not_coincide():
    r = _result({"a@Lite": [2.0, 1.0, 0.5], "b@Lite": [2.0, 1.0, None]})
    assert r.coinciding() == []


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """plot_sweep's first panel: its lines' (label, colour), each drawn line's dash pattern
    by colour, its texts, and the figure's legend."""
    kept = {}
    save = figure_kit.save_figure

    def keep(fig, path):
        ax = fig.axes[0]
        kept["lines"] = [(ln.get_label(), ln.get_color()) for ln in ax.get_lines()]
        kept["dash"] = {ln.get_color(): ln._unscaled_dash_pattern for ln in ax.get_lines()
                        if len(ln.get_xdata())}
        kept["texts"] = [t.get_text() for t in ax.texts]
        kept["legend"] = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        save(fig, path)

    monkeypatch.setattr(figure_kit, "save_figure", keep)
    compare_plots.plot_sweep(_result(CURVES), tmp_path / "sweep.png")
    return kept


def test_coinciding_lines_are_dashed_in_turns(drawn):
    colour = {lab: c for lab, c in drawn["lines"] if lab.endswith("@Lite")}
    dash = drawn["dash"]
    # flat and hier: dashes of one length, gaps as long, hier's offset by one dash, so
    # each colour shows where the other does not
    (off_f, seq_f), (off_h, seq_h) = dash[colour["flat@Lite"]], dash[colour["hier@Lite"]]
    assert seq_f and seq_f == seq_h and seq_f[0] == seq_f[1]
    assert off_f == 0 and off_h == seq_f[0]
    assert dash[colour["direct@Lite"]][1] and dash[colour["inr@Lite"]][1]
    # the others stay solid
    for lab in ("base@Lite", "ocs@Lite"):
        assert dash[colour[lab]][1] is None


def test_the_panel_and_the_legend_say_which_lines_coincide(drawn):
    (box,) = drawn["texts"]
    assert "flat = hier (equal at every value)" in box.splitlines()
    assert "direct \u2248 inr (within 0.5% at every value)" in box.splitlines()
    assert any("dashed in turns: lines within 1% of each other" in t for t in drawn["legend"])
    # the legend keeps each scenario's own (solid) line
    assert {t for t in drawn["legend"] if t.endswith("@Lite")} == set(CURVES)


CPO = SweepParam("cost.cpo_price", (0.0, 0.4e-9, 1.56e-9))   # 0, 0.4, 1.56 USD/(Gb/s)


def test_no_crossing_is_said_with_its_range_and_closest_point():
    # a costs 0.5 at free optics rising to 0.6; b costs 0.2 throughout: a stays above b,
    # closest (relatively) where a is cheapest, at 0: 0.5 vs 0.2
    r = _result({"b@H100": [0.2, 0.2, 0.2], "a@Lite": [0.5, 0.52, 0.6]}, CPO, metric=True)
    assert r.crossovers() == []
    (n,) = r.no_crossings()
    assert (n["above"], n["below"], n["lo"], n["hi"], n["points"]) == \
        ("a@Lite", "b@H100", 0.0, 1.56e-9, 3)
    assert n["closest"] == (0.0, 0.5, 0.2)
    line = ("note: M, decode: no crossing in the swept range: a@Lite stays above b@H100 from "
            "cost.cpo_price = 0 to 1.56 USD/(Gb/s) (closest at 0 USD/(Gb/s): 0.500 vs 0.200 "
            "USD per million tokens)")
    assert r.no_crossing_lines() == [line]
    assert line in r.table().splitlines()


def test_crossing_pairs_and_pairs_without_the_baseline_are_not_noted():
    # c crosses the baseline between 1 and 10 us; d and e never cross each other nor the
    # baseline (d below it, e above it with a gap): only d and e against the baseline
    r = _result({"base@Lite": [10.0, 9.0, 8.0], "c@Lite": [11.0, 9.5, 7.0],
                 "d@Lite": [5.0, 4.0, 3.0], "e@Lite": [12.0, None, 9.0],
                 "f@Lite": [6.0, 4.5, 3.5]})
    assert {(c["before"], c["after"]) for c in r.crossovers()
            if "base@Lite" in (c["before"], c["after"])} == {("c@Lite", "base@Lite")}
    notes = {(n["above"], n["below"], n["points"]) for n in r.no_crossings()}
    assert notes == {("base@Lite", "d@Lite", 3), ("e@Lite", "base@Lite", 2),
                     ("base@Lite", "f@Lite", 3)}
    # d and f below the baseline over the same values: one note; f comes closest, at
    # 0.1 us, (10 - 6) / 10 = 0.4 (d: 0.5 there, 0.56 and 0.62 further on)
    assert ("note: M, decode: no crossing in the swept range: base@Lite stays above d@Lite "
            "and f@Lite from adjust.hop_latency = 0.1 to 10 us (closest, f@Lite, at 0.1 us: "
            "10.000 vs 6.000 tokens/s/SM)") in r.no_crossing_lines()
    (e_line,) = [ln for ln in r.no_crossing_lines() if ": e@Lite stays above" in ln]
    # e: closest at 10 us, (9 - 8) / 9 against (12 - 10) / 12 at 0.1 us
    assert "from adjust.hop_latency = 0.1 to 10 us (at the 2 of 3 values where both are " \
           "feasible) (closest at 10 us: 9.000 vs 8.000 tokens/s/SM)" in e_line


def test_cli_cost_sweep_says_lite_flat_never_crosses_h100_dgx():
    r = CliRunner().invoke(cli, ["sweep", "--scenarios", "h100-dgx,lite-flat", "--model",
                                 "Llama-3-70B", "--phase", "decode", "--param",
                                 "cost.cpo_price=0,0.4USD/(Gb/s),1.56USD/(Gb/s)", "-q"])
    assert r.exit_code == 0, r.output
    rows = {ln.split()[0]: [float(v) for v in ln.split()[1:]] for ln in r.output.splitlines()
            if ln.startswith(("h100-dgx@", "lite-flat@"))}
    flat, h100 = rows["lite-flat@Lite"], rows["h100-dgx@H100-SXM"]
    assert all(f > h for f, h in zip(flat, h100, strict=True))   # the table: never crosses
    k = int(np.argmin([(f - h) / f for f, h in zip(flat, h100, strict=True)]))
    x = ["0", "0.4", "1.56"][k]
    assert (f"note: Llama-3-70B, decode: no crossing in the swept range: lite-flat@Lite stays "
            f"above h100-dgx@H100-SXM from cost.cpo_price = 0 to 1.56 USD/(Gb/s) (closest at "
            f"{x} USD/(Gb/s): {flat[k]:.3f} vs {h100[k]:.3f} USD per million tokens)"
            ) in r.output.splitlines()
    assert "overtakes" not in r.output
