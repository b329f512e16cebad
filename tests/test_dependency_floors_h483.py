"""The code runs on the oldest releases pyproject.toml admits, not only the newest: each test
here stands in for an old release's behaviour the suite met on the floors (scipy 1.11,
matplotlib 3.8) and checks the code copes with it on whatever release is installed."""

from __future__ import annotations

import numpy as np

from topologies import ring
from topologies.analysis import diameter


def test_exact_diameter_gives_scipy_32_bit_indices(monkeypatch):
    # scipy 1.11-1.14's csgraph.shortest_path reads 32-bit indices only; networkx builds a
    # matrix with 64-bit ones, and every diameter without a closed form raised "Buffer
    # dtype mismatch, expected 'int' but got 'long'" there.
    from scipy.sparse import csgraph

    newest = csgraph.shortest_path

    def before_scipy_1_15(matrix, *args, **kwargs):
        if matrix.indices.dtype != np.int32 or matrix.indptr.dtype != np.int32:
            raise ValueError("Buffer dtype mismatch, expected 'int' but got 'long'")
        return newest(matrix, *args, **kwargs)

    monkeypatch.setattr(csgraph, "shortest_path", before_scipy_1_15)
    g = ring(8)
    g.graph["spec"] = ""   # no closed form: the breadth-first search
    # 8 GPUs in a ring: the farthest pair is 8 / 2 = 4 hops apart
    assert diameter(g) == (4, "breadth-first search")


def test_quick_text_leaves_a_matplotlib_without_render_mode_alone(monkeypatch):
    # matplotlib.ft2font.RenderMode is new in matplotlib 3.10; on 3.8 (the floor) saving
    # any figure raised ImportError. Such a matplotlib keeps its own draw_text.
    import matplotlib.ft2font
    from matplotlib.backends.backend_agg import RendererAgg

    from netmodel.study.figure_kit import _quick_text

    monkeypatch.delattr(matplotlib.ft2font, "RenderMode", raising=False)
    renderer = RendererAgg(40, 30, 72)
    _quick_text(renderer)
    assert "draw_text" not in vars(renderer)
    assert "_get_font_height_metrics" not in vars(renderer)


def test_ruff_floor_has_no_removed_upgrade_rules():
    # ruff 0.6-0.12 select UP038 (removed in 0.13) and 0.6-0.7 UP027 (removed in 0.8) with
    # the UP set pyproject.toml selects; the code follows the rules of 0.13 on, and
    # 'ruff check .' failed on the old floor (0.6).
    import re
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    spec = next(d for d in project["project"]["optional-dependencies"]["test"]
                if re.match(r"ruff\b", d))
    floor = re.fullmatch(r"ruff>=(\d+)\.(\d+)(?:\.\d+)?", spec.replace(" ", ""))
    assert floor, spec
    assert (int(floor[1]), int(floor[2])) >= (0, 13), spec
    assert "UP" in project["tool"]["ruff"]["lint"]["select"]   # why the floor is 0.13
