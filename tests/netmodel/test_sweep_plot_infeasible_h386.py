"""sweep.png shows a lone buildable point and marks the values a fabric cannot be built at.

lite-flat puts its 128 Lites one hop apart, one port per GPU on each plane's switch: a
radix of 64 cannot (the builder refuses it: 'flat: 128 GPUs need switches of radix >=
128'), 144 (the scenario's own, Quantum-X Photonics) can; lite-hier builds both. Swept over radix 64 and
144, lite-flat had one drawn point, at 144, drawn at the same size as lite-hier's marker
and hidden under it, and nothing said that 64 was tried for it.
"""

import numpy as np
import pytest

from netmodel.study import compare_plots, figure_kit
from netmodel.study.sweep import parse_param, run_sweep

SCENARIOS = ["lite-flat", "lite-hier"]


@pytest.fixture(scope="module")
def sweep():
    return run_sweep(SCENARIOS, [parse_param("fabric.radix=64,144", SCENARIOS)],
                     ["Llama-3-70B"], ["decode"], max_batch=64)


@pytest.fixture
def figure(sweep, monkeypatch, tmp_path):
    kept = {}
    save = figure_kit.save_figure

    def keep(fig, path):
        kept["lines"] = [(ln.get_xdata(), ln.get_ydata(), ln.get_marker(), ln.get_markersize(),
                          ln.get_color(), ln.get_label()) for ln in fig.axes[0].get_lines()]
        save(fig, path)

    monkeypatch.setattr(figure_kit, "save_figure", keep)
    compare_plots.plot_sweep(sweep, tmp_path / "sweep.png")
    return kept["lines"]


def test_the_sweep_is_what_the_figure_shows(sweep):
    flat = {r.x: r.feasible for r in sweep.rows if r.label.startswith("lite-flat")}
    hier = {r.x: r.feasible for r in sweep.rows if r.label.startswith("lite-hier")}
    assert flat == {64.0: False, 144.0: True} and hier == {64.0: True, 144.0: True}


def test_a_lone_point_is_drawn_larger_than_the_others(figure):
    main = [ln for ln in figure if not ln[5].startswith("_") and ln[2] == "o"]
    ring = [ln for ln in figure if ln[2] == "o" and ln[5].startswith("_")
            and np.isfinite(np.asarray(ln[1], float)).all() and list(ln[0]) == [144.0]]
    hier = [ln for ln in figure if ln[2] == "s"]
    assert main and ring and hier
    # lite-flat's one point, at 144, is drawn larger than lite-hier's marker there
    assert ring[0][3] > max(ln[3] for ln in hier)


def test_an_infeasible_value_is_marked_on_the_axis(figure):
    flat_colour = next(ln[4] for ln in figure if ln[5] == "lite-flat@Lite")
    crosses = [ln for ln in figure if ln[2] == "x" and list(ln[0])]
    assert [(list(ln[0]), ln[4]) for ln in crosses] == [([64.0], flat_colour)]
    assert any(ln[2] == "x" and "no feasible point" in ln[5] for ln in figure)   # legend
