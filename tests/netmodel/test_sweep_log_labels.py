"""sweep.png's log x axis: every tick label in one notation."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.text  # noqa: E402

from netmodel.study import compare_plots, figure_kit  # noqa: E402
from netmodel.study.sweep import run_sweep  # noqa: E402


def test_a_decade_of_a_swept_price_is_labelled_plainly(tmp_path, monkeypatch):
    # cost.electricity_price 0.05-0.5 USD/kWh (one decade, log-spaced): matplotlib labels
    # minor ticks too, and the axis read '6×10⁻²  0.1  2×10⁻¹  3×10⁻¹  4×10⁻¹' (its minor
    # formatter beside the sweep's plain major one); now '0.06  0.1  0.2  0.3  0.4'
    r = run_sweep(["h100-dgx"], ["cost.electricity_price=0.05USD/kWh:0.5USD/kWh:4"],
                  ["Llama-3-8B"], ["decode"])
    seen = []

    def spy(fig, path):
        ax = fig.axes[0]
        box = ax.get_window_extent(fig.canvas.get_renderer())
        renderer = fig.canvas.get_renderer()
        for t in fig.findobj(matplotlib.text.Text):   # the texts just under the x axis
            b = t.get_window_extent(renderer)
            if t.get_text() and b.y1 <= box.y0 and b.y0 > box.y0 - 25 and box.x0 <= b.x0:
                seen.append(t.get_text())

    monkeypatch.setattr(figure_kit, "save_figure", spy)
    compare_plots.plot_sweep(r, tmp_path / "sweep.png")
    assert seen, "no tick labels found"
    assert not [t for t in seen if "\u00d7" in t or "\u207b" in t], seen
    assert {"0.1", "0.2", "0.3"} <= set(seen), seen
