"""The spares plot marks the points where the closed form took a fallback.

Past the spare chain's limit the closed form solves the pools approximately and says so
(``Analytic.fallback``: the table's note, ``availability.json``); the closed-form curve of
``availability_spares.png`` (and the study's ``reliability_spares.png``) drew those points
as the others. ``lite-flat`` with Llama-3-8B and global spares passes the limit at 80
spares and above, so the default ``availability`` run's plot held 7 such points unmarked.
Now ``spare_curve(..., fallback=True)`` gives a fourth array, true at those points, and
``plot_spares`` draws them as open circles and says so in the title.
"""

from __future__ import annotations

import numpy as np
import pytest

import netmodel.study.figure_kit as kit
from netmodel.study import availability_busy as ab
from netmodel.study import reliability_plots as rp
from netmodel.study.availability import availability, availability_files, spare_curve
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_catalog import get_scenario


@pytest.fixture(scope="module")
def flat():
    return build_cluster(get_scenario("lite-flat"), "Llama-3-70B", "decode")


def test_the_curve_marks_the_counts_past_the_limit(flat, monkeypatch):
    # lite-flat's host asks its pod pool for 2 instances of 16, granted in part: a chain
    # at every count but 0 (no spares: no chain), well within 10,000 states
    counts = [0, 16, 32]
    pct, mean, below, past = spare_curve(flat, "pod", counts, fallback=True)
    assert past.tolist() == [False, False, False]
    assert len(spare_curve(flat, "pod", counts)) == 3   # the three arrays, as before
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)   # every chain past it
    *_, past = spare_curve(flat, "pod", counts, fallback=True)
    assert past.tolist() == [False, True, True]


@pytest.fixture
def figure(monkeypatch, tmp_path):
    kept = []
    monkeypatch.setattr(kit, "save_figure", lambda fig, path: kept.append(fig))

    def draw(curves):
        rp.plot_spares(curves, tmp_path / "s.png", threshold=0.99, quantile=0.999)
        return kept[-1]
    yield draw
    import matplotlib.pyplot as plt

    for fig in kept:
        plt.close(fig)


def _open(ax):
    return [ln for ln in ax.lines if ln.get_marker() == "o" and ln.get_markerfacecolor()
            == "none"]


def test_the_plot_circles_them_and_says_so(figure):
    pct = np.array([0.0, 10.0, 20.0, 30.0])
    mean = np.array([0.99, 0.999, 0.9999, 0.99999])
    below = np.array([0.1, 0.01, 1e-3, 1e-4])
    fig = figure({"a global": (pct, mean, below, np.array([False, False, True, True]))})
    for ax, y in ((fig.axes[0], 1 - mean), (fig.axes[1], below)):
        (ring,) = _open(ax)
        assert ring.get_xdata().tolist() == [20.0, 30.0]
        assert np.allclose(ring.get_ydata(), y[2:])
    assert "limit" in fig._suptitle.get_text() and "approximation" in fig._suptitle.get_text()
    # none past it (or no fourth array): no circle, the title as before
    for curve in ((pct, mean, below), (pct, mean, below, np.zeros(4, dtype=bool))):
        fig = figure({"a global": curve})
        assert not _open(fig.axes[0])
        assert fig._suptitle.get_text() == "Spares against availability (closed forms)"


def test_the_availability_run_hands_the_plot_its_fallbacks(flat, monkeypatch):
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)
    a = availability(None, None, cluster=flat, spares=16, placement="pod", trials=5)
    seen = {}
    monkeypatch.setattr(rp, "plot_spares",
                        lambda curves, path, **kw: seen.update(curves))
    availability_files(a)["availability_spares.png"]("unused.png")
    pct, _, _, past = seen[f"{flat.scenario.label} pod"]
    # a pool of fewer than one instance's 16 spares serves none (no chain); from 16 on
    # the host's ask is a chain, past a limit of 1
    spares = np.rint(pct * flat.gpus / 100)
    assert spares.max() >= 16 and past.tolist() == (spares >= 16).tolist()
