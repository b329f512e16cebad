"""``availability_capacity.png`` lists the p1-p99 band in its legend only where the band
shows: on lite-flat with 16 spares every sampled instant of every trial is at full
capacity (p1 = p99 = 1), the band has no width, and its legend entry pointed at nothing.
Where capacity dips (lite-direct, no reachable spare: p1 0.875) the entry stays.
"""

from __future__ import annotations

import numpy as np

from netmodel.study import reliability_plots as rp
from netmodel.study.availability import availability


def _legend(avail, tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr(rp, "_save", lambda fig, path: figures.append(fig))
    rp.plot_capacity(avail, tmp_path / "c.png")
    (fig,) = figures
    (ax,) = fig.axes
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_no_band_entry_where_p1_equals_p99(tmp_path, monkeypatch):
    avail = availability("lite-flat", "Llama-3-70B", spares=16, trials=1000, seed=0)
    p1, _, p99 = avail.mc.band
    assert np.array_equal(p1, p99) and np.all(p99 == 1.0)
    texts = _legend(avail, tmp_path, monkeypatch)
    assert "p1-p99 over trials" not in texts
    assert texts[0] == "median over trials"


def test_band_entry_where_the_band_has_width(tmp_path, monkeypatch):
    avail = availability("lite-direct", "Llama-3-70B", trials=20, seed=0)
    p1, _, p99 = avail.mc.band
    assert np.any(p99 > p1)
    assert _legend(avail, tmp_path, monkeypatch)[0] == "p1-p99 over trials"
