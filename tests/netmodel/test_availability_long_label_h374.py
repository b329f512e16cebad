"""A --fabric spec (a scenario label of ~170 characters) stays inside the availability
figures: the capacity and event-loss titles and the spares legend labels are broken into
lines (after the spec's commas), so every line's drawn extent lies within the figure's
width (they ran off both sides: the title centred, the legend from the right half)."""

import pytest

from netmodel.cli.main import cli
from netmodel.study import figure_kit
from netmodel.study import reliability_plots as rp

SPEC = ("rail-optimized:domains=4,domain_size=8,gpus_per_server=8,gpu=H100-SXM,"
        "scaleup_bandwidth=450GB/s,nic_bandwidth=50GB/s,nvlinks=18,"
        "in_network_reduction=true,sharp=false,medium=pluggable-optics")


@pytest.fixture
def figures(tmp_path, monkeypatch):
    """The three availability figures of the --fabric run, drawn, not written."""
    from click.testing import CliRunner

    from netmodel.study import availability as av

    runs, out = [], []
    real = av.availability_files

    def record(avail, *, plot=True, curves=None):
        runs.append(avail)
        return real(avail, plot=False)

    def keep(fig, path):
        fig.canvas.draw()
        out.append(fig)

    monkeypatch.setattr(av, "availability_files", record)
    r = CliRunner().invoke(cli, ["availability", "--fabric", SPEC, "--model", "Llama-3-8B",
                                 "--spares", "2%", "--trials", "20", "--horizon", "1w",
                                 "--out", str(tmp_path / "d")])
    assert r.exit_code == 0, r.output
    (avail,) = runs
    monkeypatch.setattr(rp, "_save", keep)
    monkeypatch.setattr(figure_kit, "save_figure", keep)
    files = real(avail)
    for name in ("availability_capacity.png", "availability_event_loss.png",
                 "availability_spares.png"):
        files[name](tmp_path / name)
    yield out
    import matplotlib.pyplot as plt

    for fig in out:   # kept from save_figure, which would have closed them
        plt.close(fig)


def _inside(fig, texts):
    renderer = fig.canvas.get_renderer()
    width = fig.bbox.width
    for t in texts:
        box = t.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= width, (t.get_text()[:60], box.x0, box.x1, width)


def test_titles_inside(figures):
    titled = [f for f in figures if len(f.axes) == 1]   # capacity, event loss
    assert len(titled) == 2
    for fig in titled:
        (ax,) = fig.axes
        assert SPEC[:40] in ax.get_title()
        _inside(fig, [ax.title])


def test_spares_legend_inside(figures):
    (fig,) = [f for f in figures if len(f.axes) == 2]
    texts = fig.axes[1].get_legend().get_texts()
    assert any("rail-optimized:" in t.get_text() for t in texts)
    _inside(fig, texts)
