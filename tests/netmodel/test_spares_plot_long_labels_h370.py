"""availability_spares.png: the title line naming the curves not drawn (spares that reach
no GPU) fits across the figure when the labels are long (availability --fabric SPEC labels
each curve with the whole spec, ~280 characters): it was one line of ~600 characters,
centred, cut off at both edges of the figure."""

import numpy as np
import pytest

import netmodel.study.figure_kit as kit
from netmodel.study.reliability_plots import plot_spares

SPEC = ("lite-groups:lites=4,lite=Lite,split=even,mesh_bandwidth=112.5GB/s,"
        "medium=co-packaged-optics,length=1.0,base=[rail-optimized:domains=4,domain_size=8,"
        "gpus_per_server=8,gpu=H100-SXM,scaleup_bandwidth=450GB/s,nic_bandwidth=50GB/s,"
        "nvlinks=18,in_network_reduction=true,sharp=false,medium=pluggable-optics]")


@pytest.fixture
def figure(monkeypatch, tmp_path):
    kept = []
    monkeypatch.setattr(kit, "save_figure", lambda fig, path: kept.append(fig))

    def draw(curves):
        plot_spares(curves, tmp_path / "s.png", threshold=0.99, quantile=0.999,
                    marks=[(f"{SPEC} pod", 2.3, 0.998, 0.02)])
        return kept[-1]
    return draw


def test_long_labels_not_drawn_fit_in_the_figure(figure):
    one = (np.array([0.0]), np.array([0.997]), np.array([0.0219]))
    full = (np.array([0.0, 12.5, 25.0]), np.array([0.997, 0.9995, 0.99998]),
            np.array([0.0219, 2.4e-3, 1.1e-4]))
    fig = figure({f"{SPEC} pod": one, f"{SPEC} global": full, f"{SPEC} group": one})
    title = fig._suptitle
    box = title.get_window_extent(fig.canvas.get_renderer())
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width, (box, fig.bbox)
    assert box.y1 <= fig.bbox.height
    axes_top = max(ax.get_window_extent().y1 for ax in fig.axes)
    assert box.y0 >= axes_top, (box, axes_top)   # the title clear of the panels
    flat = "".join(title.get_text().split())
    for label in (f"{SPEC} pod", f"{SPEC} group"):   # named whole, broken only at commas
        assert "".join(label.split()) in flat
    assert "".join(f"{SPEC} global".split()) not in flat
