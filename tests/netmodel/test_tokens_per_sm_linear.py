"""tokens_per_sm.png draws bars whose height is their value (audit h232).

The figure put every model of a phase on one log axis whose floor was a third of the
smallest value, so a bar's height said nothing about its ratio: Llama-3.1-405B decode's
plain Lite, 0.076 tokens/s/SM against the H100's 4.27 (0.02x), stood a third as tall as the
H100's bar. Each (phase, model) is now a panel of its own, linear from 0."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from netmodel.study import figure_kit  # noqa: E402


@pytest.fixture(scope="module")
def study():
    from netmodel.study.lite_gpu import run_lite_gpu_study

    return run_lite_gpu_study(["Llama-3-8B", "Llama-3-70B"], ["H100-SXM", "Lite", "Lite+BW"],
                              ["prefill", "decode"])


def test_each_bar_stands_on_zero_at_its_value_on_a_linear_axis(study, tmp_path, monkeypatch):
    from netmodel.study.lite_gpu_plots import plot_tokens_per_sm

    drawn, seen = [], {}
    real_bars = figure_kit.bars

    def spy_bars(ax, x, height, width, **kwargs):
        drawn.append((ax, list(height), kwargs.get("bottom", 0.0)))
        return real_bars(ax, x, height, width, **kwargs)

    def spy_save(fig, path):
        seen["axes"] = [ax for ax in fig.axes if ax.get_visible()]

    monkeypatch.setattr(figure_kit, "bars", spy_bars)
    monkeypatch.setattr(figure_kit, "save_figure", spy_save)
    plot_tokens_per_sm(study, tmp_path / "t.png")

    values = sorted(r.tokens_per_s_per_sm for r in study.rows if r.feasible)
    heights = sorted(h for _, hs, _ in drawn for h in hs)
    assert heights == pytest.approx(values, rel=1e-12)        # each bar's height is its value
    assert all(b == 0.0 for _, _, b in drawn)                  # from 0, not from a floor
    axes = seen["axes"]
    assert len(axes) == 2 * 2                                  # a panel per phase x model
    assert {ax.get_yscale() for ax in axes} == {"linear"}
    assert all(ax.get_ylim()[0] == 0.0 for ax in axes)
    # one model per panel: a panel's bars are one model's GPUs
    per_axes: dict = {}
    for ax, hs, _ in drawn:
        per_axes.setdefault(id(ax), []).extend(hs)
    assert sorted(len(v) for v in per_axes.values()) == [3, 3, 3, 3]
