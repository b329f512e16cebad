"""availability_spares.png: a placement whose spares reach no GPU (pod and group on
lite-direct, a mesh with no free port) is a curve of one point, at 0 spares, the no-spares
point every curve starts at. Drawn, it lay under the others' first point and its legend
entry ('lite-direct@Lite pod') showed a mark that matched nothing seen. Now every legend
entry has a point of its own in sight, and every curve is in the legend or named in the
title as not drawn."""

import numpy as np
import pytest

import netmodel.study.figure_kit as kit
from netmodel.study.reliability_plots import plot_spares

NO_SPARES = (0.997, 0.0219)   # every curve's first point: the cluster without spares


def _curves(stuck_first: bool) -> dict:
    one = (np.array([0.0]), np.array([NO_SPARES[0]]), np.array([NO_SPARES[1]]))
    full = (np.array([0.0, 12.5, 25.0]), np.array([NO_SPARES[0], 0.9995, 0.99998]),
            np.array([NO_SPARES[1], 2.4e-3, 1.1e-4]))
    return ({"c pod": one, "c global": full, "c group": one} if stuck_first
            else {"c global": full, "c pod": one})


@pytest.fixture
def figure(monkeypatch, tmp_path):
    kept = []
    monkeypatch.setattr(kit, "save_figure", lambda fig, path: kept.append(fig))

    def draw(curves):
        plot_spares(curves, tmp_path / "s.png", threshold=0.99, quantile=0.999)
        return kept[-1]
    yield draw
    import matplotlib.pyplot as plt

    for fig in kept:   # kept from save_figure, which would have closed them
        plt.close(fig)


def _points(line) -> set:
    return set(zip(np.asarray(line.get_xdata(), float).tolist(),
                   np.asarray(line.get_ydata(), float).tolist(), strict=True))


@pytest.mark.parametrize("stuck_first", [True, False])
def test_every_legend_mark_has_a_point_in_sight(figure, stuck_first):
    curves = _curves(stuck_first)
    fig = figure(curves)
    title = fig._suptitle.get_text()
    for ax in fig.axes:
        lines = [ln for ln in ax.lines if ln.get_label() and not ln.get_label().startswith("_")]
        for line in lines:
            later = set().union(*(_points(ln) for ln in ax.lines[ax.lines.index(line) + 1:]))
            assert _points(line) - later, (line.get_label(), "hidden under later lines")
    legend = {t.get_text() for t in fig.axes[1].get_legend().get_texts()}
    for label in curves:
        assert any(t.startswith(label) for t in legend) or label in title, (label, legend)
    assert ("not drawn: c pod" in title) and "reach no GPU" in title
    if stuck_first:
        assert "c group" in title


def test_nothing_stuck_keeps_the_title_and_every_line(figure):
    full = _curves(True)["c global"]
    fig = figure({"a global": full, "b global": (full[0], full[1] * 0.9999, full[2] / 2)})
    assert fig._suptitle.get_text() == "Spares against availability (closed forms)"
    assert [ln.get_label() for ln in fig.axes[0].lines if ln.get_label()] == ["a global",
                                                                       "b global"]


def test_monte_carlo_marks_only_for_drawn_curves(monkeypatch, tmp_path):
    """A Monte Carlo point of a placement whose curve is not drawn would sit beside a curve
    it does not belong to: only the drawn curves' marks are plotted."""
    kept = []
    monkeypatch.setattr(kit, "save_figure", lambda fig, path: kept.append(fig))
    curves = _curves(True)
    marks = [("c pod", 2.3, 0.998, 0.01), ("c global", 12.5, 0.9994, 2.5e-3)]
    plot_spares(curves, tmp_path / "s.png", threshold=0.99, quantile=0.999, marks=marks)
    xs = [ln.get_xdata()[0] for ln in kept[-1].axes[0].lines if ln.get_marker() == "x"]
    import matplotlib.pyplot as plt

    plt.close(kept[-1])
    assert xs == [12.5]
