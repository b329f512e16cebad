"""A --fabric spec (a scenario label of ~190 characters) stays inside the blast-radius
figure: its title was two lines split at a hard-coded ',\\n', the first the whole spec,
drawn from x = -106 to 1341 px of a 1428 px figure (the title centred on the axes). Now
each line is broken (after the spec's commas) at a width scaled to the figure's, as the
availability figures' titles are."""

import pytest

from netmodel.cli.main import cli
from netmodel.study import reliability_plots as rp

SPEC = ("rail-optimized:domains=4,domain_size=8,gpus_per_server=8,gpu=H100-SXM,"
        "scaleup_bandwidth=450GB/s,nic_bandwidth=50GB/s,nvlinks=18,"
        "in_network_reduction=true,sharp=false,medium=pluggable-optics")


@pytest.fixture
def figure(tmp_path, monkeypatch):
    """The blast-radius figure of the --fabric run, drawn, not written."""
    import matplotlib.pyplot as plt

    out = []

    def keep(fig, path):
        fig.tight_layout()
        fig.canvas.draw()
        out.append(fig)

    monkeypatch.setattr(rp, "_save", keep)
    from click.testing import CliRunner

    r = CliRunner().invoke(cli, ["blast-radius", "--fabric", SPEC, "--model", "Llama-3-8B",
                                 "--out", str(tmp_path / "d")])
    assert r.exit_code == 0, r.output
    (fig,) = out
    yield fig
    plt.close(fig)


def test_blast_radius_title_inside(figure):
    (ax,) = figure.axes
    title = ax.title
    assert SPEC[:40] in title.get_text() and "Llama-3-8B" in title.get_text()
    box = title.get_window_extent(figure.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= figure.bbox.width, (box.x0, box.x1, figure.bbox.width)


def test_title_width_scales_with_the_figure():
    # 100 characters of 9-point type across 7.5 inches, 86 across 6.5 (the availability
    # figures' widths, unchanged); 8-point type fits 9/8 as many
    assert rp._title_width(7.5) == 100 and rp._title_width(6.5) == 86
    assert rp._title_width(11.9, 8) == int(40 / 3 * 11.9 * 9 / 8) == 178
