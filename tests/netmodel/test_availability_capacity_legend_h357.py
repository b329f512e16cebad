"""``availability_capacity.png``'s legend sits below the axes, not over the p1-p99 band.

At the lower left inside the axes it covered the band's floor (the p1 of capacity, 0.875
on lite-direct with no reachable spare: one TP-16 instance of 8 down) for the first
months of the year: the figure hid what it drew.
"""

from netmodel.study import reliability_plots as rp
from netmodel.study.availability import availability


def test_capacity_legend_is_below_the_axes(tmp_path, monkeypatch):
    avail = availability("lite-direct", "Llama-3-70B", trials=20, seed=0)
    figures = []

    def keep(fig, path):
        fig.canvas.draw()
        figures.append(fig)

    monkeypatch.setattr(rp, "_save", keep)
    rp.plot_capacity(avail, tmp_path / "c.png")
    (fig,) = figures
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    axes = ax.get_window_extent(renderer)
    assert legend.y1 <= axes.y0          # wholly under the plotting area
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == [
        "p1-p99 over trials", "median over trials"]
