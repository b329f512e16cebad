"""``collective --plot`` / ``costs --plot``: an algorithm whose busbw equals one drawn before
it (``ring`` and ``bidirectional-ring`` on a one-hop fabric such as lite-flat) was drawn
exactly under it, so its legend entry had no visible line; it is now labelled with the
algorithm it equals and dashed (h328)."""

from __future__ import annotations

import numpy as np

from netmodel.collectives.plot import curve_labels
from tests.netmodel.cli_helpers import run_cli


def test_equal_curves_are_named_and_dashed():
    a, b = np.array([1e9, 5e9, 9e9]), np.array([1e9, 4e9, 9e9])
    labels = curve_labels({"ring": a, "bidirectional-ring": a.copy(), "tree": b,
                           "direct": b * (1 + 1e-6)})
    assert labels == {"ring": ("ring", False),     # the first drawn keeps its name
                      "bidirectional-ring": ("bidirectional-ring (= ring)", True),
                      "tree": ("tree", False),
                      "direct": ("direct", False)}   # 1e-6 apart is another curve


def test_lite_flat_ring_twins_in_the_written_figure(tmp_path, monkeypatch):
    """The case seen: all-reduce on lite-flat's 16 GPUs, where the two rings coincide: in
    the figure the command writes, ring (drawn after bidirectional-ring) is dashed and named
    after it, and its points are bidirectional-ring's (h341: this test only checked that a
    file was written, which the old code did too)."""
    import matplotlib.pyplot as plt

    drawn = {}
    close = plt.close

    def keep(fig=None):
        if fig is not None and not isinstance(fig, str):
            drawn.update((ln.get_label(), ln) for ax in fig.axes for ln in ax.get_lines())
        return close(fig)

    monkeypatch.setattr(plt, "close", keep)
    r = run_cli(["collective", "all-reduce", "--fabric", "lite-flat", "--group", "16",
                 "--json", "--plot", tmp_path / "c.png"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c.png").stat().st_size > 0
    twin, first = drawn["ring (= bidirectional-ring)"], drawn["bidirectional-ring"]
    assert (twin.get_linestyle(), first.get_linestyle()) == ("--", "-")
    assert np.array_equal(twin.get_ydata(), first.get_ydata())
    assert "ring" not in drawn   # no solid line of the same name beside it


def test_spares_figure_names_a_curve_equal_to_an_earlier_one(tmp_path, monkeypatch):
    """docs/figures/reliability_spares.png: lite-flat-inr@Lite's closed-form curve equals
    lite-flat@Lite's (the same fabric for a failure), so it hid the green line under its red
    one; it is now dashed and named after it. lite-ocs, whose curve differs, is not."""
    from netmodel.study import figure_kit
    from netmodel.study.reliability_plots import plot_spares

    drawn = []
    monkeypatch.setattr(figure_kit, "save_figure",
                        lambda fig, path: drawn.extend(ax.get_lines() for ax in fig.axes))
    pct = np.array([0.0, 1.6, 12.5])
    flat = (pct, np.array([0.99701, 0.99956, 0.99997]), np.array([2e-2, 2e-3, 4e-4]))
    ocs = (pct, np.array([0.99694, 0.99950, 0.99990]), np.array([2e-2, 2e-3, 4e-4]))
    plot_spares({"lite-flat@Lite (pod)": flat, "lite-flat-inr@Lite (pod)": flat,
                 "lite-ocs@Lite (pod)": ocs}, tmp_path / "s.png", threshold=0.99,
                quantile=0.999)
    styles = {ln.get_label(): ln.get_linestyle() for lines in drawn for ln in lines
              if "(pod)" in ln.get_label()}
    assert styles == {"lite-flat@Lite (pod)": "-",
                      "lite-flat-inr@Lite (pod) (= lite-flat@Lite (pod))": "--",
                      "lite-ocs@Lite (pod)": "-"}, styles
