"""``collective --plot`` / ``costs --plot``: an algorithm whose busbw equals one drawn before
it (``ring`` and ``bidirectional-ring`` on a one-hop fabric such as lite-flat) was drawn
exactly under it, so its legend entry had no visible line; it is now labelled with the
algorithm it equals and dashed (h328)."""

from __future__ import annotations

import numpy as np

from netmodel.collectives.plot import curve_labels, plot_busbw
from tests.netmodel.cli_helpers import run_cli


def test_equal_curves_are_named_and_dashed():
    a, b = np.array([1e9, 5e9, 9e9]), np.array([1e9, 4e9, 9e9])
    labels = curve_labels({"ring": a, "bidirectional-ring": a.copy(), "tree": b,
                           "direct": b * (1 + 1e-6)})
    assert labels == {"bidirectional-ring": ("bidirectional-ring", False),
                      "direct": ("direct", False),
                      "ring": ("ring (= bidirectional-ring)", True),
                      "tree": ("tree", False)}   # 1e-6 apart is another curve


def test_lite_flat_ring_twins_in_the_written_figure(tmp_path):
    """The case seen: all-reduce on lite-flat's 16 GPUs, where the two rings coincide."""
    r = run_cli(["collective", "all-reduce", "--fabric", "lite-flat", "--group", "16",
                 "--json", "--plot", tmp_path / "c.png"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c.png").stat().st_size > 0
    sizes = np.array([2.0 ** 20, 2.0 ** 30])
    same = np.array([3e10, 1e11])
    path = plot_busbw([("t", sizes, {"ring": same, "bidirectional-ring": same}, [])],
                      tmp_path / "t.png")
    assert (tmp_path / "t.png").exists() and str(path).endswith("t.png")
