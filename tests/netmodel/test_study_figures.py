"""The study's figures: drawn with few artists (netmodel.study.figure_kit's helpers), they
show what matplotlib's own ticks and bars would show, at the size asked, every text inside
the figure and none over another."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from netmodel.study import figure_kit  # noqa: E402
from netmodel.study.figure_kit import (  # noqa: E402
    DPI,
    bars,
    plain_power,
    save_figure,
    set_margins,
    static_ticks,
)

#: The study's figures (``full_study_files``), with their resolution.
FIGURES = {"tokens_per_sm.png": 130, "compare_tokens_per_sm.png": DPI,
           "compare_time_split.png": DPI, "serving.png": DPI, "reliability_spares.png": DPI,
           "cost_per_scenario.png": DPI, "cost_yield_vs_area.png": DPI, "sweep.png": DPI,
           "crossovers.png": DPI}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """Each figure of a small full study: its PNG, its size in inches and the extents
    (pixels, origin bottom left) of every text it drew."""
    from netmodel.study.lite_gpu import full_study_files, run_full_study

    r = run_full_study(["Llama-3-8B"], ["H100-SXM", "Lite", "Lite+BW"], ["prefill", "decode"],
                       scenarios=["h100-dgx", "lite-flat", "lite-direct"], paper=False,
                       moe=None, packed=False)
    files = full_study_files(r, plot=True, summary=False)
    out = tmp_path_factory.mktemp("figures")
    seen: dict = {}
    original = figure_kit.save_figure

    def spy(fig, path):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        texts = [t for t in fig.findobj(matplotlib.text.Text)
                 if t.get_visible() and t.get_text().strip()]
        seen["fig"] = (fig.get_size_inches().copy(),
                       [(t.get_text(), t.get_window_extent(renderer)) for t in texts])
        original(fig, path)

    mp = pytest.MonkeyPatch()
    mp.setattr(figure_kit, "save_figure", spy)
    try:
        result = {}
        for name in FIGURES:
            seen.clear()
            files[name](str(out / name))
            result[name] = (out / name, *seen["fig"])
    finally:
        mp.undo()
    return result


@pytest.mark.parametrize("name", FIGURES)
def test_figure_is_its_size_at_its_resolution(drawn, name):
    path, inches, _ = drawn[name]
    with Image.open(path) as im:
        assert im.format == "PNG" and im.mode == "RGB"
        # Agg's canvas is the figure's size in pixels, truncated
        assert im.size == tuple(int(v) for v in inches * FIGURES[name])
        assert im.info["dpi"] == pytest.approx((FIGURES[name],) * 2, abs=0.05)  # per metre
    assert path.stat().st_size < 1_000_000


@pytest.mark.parametrize("name", FIGURES)
def test_every_text_is_inside_the_figure(drawn, name):
    _, inches, texts = drawn[name]
    w, h = inches * FIGURES[name]
    outside = [(s, b.bounds) for s, b in texts
               if b.x0 < -0.5 or b.y0 < -0.5 or b.x1 > w + 0.5 or b.y1 > h + 0.5]
    assert outside == []


@pytest.mark.parametrize("name", FIGURES)
def test_no_text_covers_another(drawn, name):
    _, _, texts = drawn[name]
    clash = [(a, b) for i, (a, ba) in enumerate(texts) for b, bb in texts[i + 1:]
             if ba.shrunk(0.9, 0.9).overlaps(bb.shrunk(0.9, 0.9))]
    assert clash == []


def _pair(**subplot):
    """Two equal panels: the first keeps matplotlib's ticks, the second gets static ones."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3), dpi=DPI, **subplot)
    set_margins(fig, bottom=0.6, top=0.3, left=0.8, right=0.2, wspace=0.4)
    return fig, axes


@pytest.mark.parametrize("scale, lim", [("linear", (0, 73.0)), ("linear", (-0.013, 0.041)),
                                        ("log", (3e-6, 0.02)), ("log", (0.08, 40.0))])
def test_static_ticks_are_matplotlibs(scale, lim):
    fig, (ref, ax) = _pair()
    for a in (ref, ax):
        a.set_yscale(scale)
        a.set_ylim(*lim)
        a.set_ylabel("a label")
        a.tick_params(labelsize=7)
    texts = static_ticks(ax, "y", labelsize=7)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    lo, hi = sorted(lim)
    want = [(t.get_position()[1], t.get_text()) for t in ref.yaxis.get_ticklabels()
            if lo - 1e-12 <= t.get_position()[1] <= hi + 1e-12]
    got = [(t.get_position()[1], t.get_text()) for t in texts]
    assert [v for v, _ in got] == pytest.approx([v for v, _ in want])
    assert [s for _, s in got] == [plain_power(s) for _, s in want]
    # each label sits where matplotlib's sits, relative to its panel
    for mine, theirs in zip(texts, [t for t in ref.yaxis.get_ticklabels()
                                    if lo - 1e-12 <= t.get_position()[1] <= hi + 1e-12],
                            strict=True):
        a, b = mine.get_window_extent(renderer), theirs.get_window_extent(renderer)
        shift = ax.bbox.x0 - ref.bbox.x0
        assert a.x1 == pytest.approx(b.x1 + shift, abs=1.0)
        assert (a.y0 + a.y1) / 2 == pytest.approx((b.y0 + b.y1) / 2, abs=2.0)
    # and so does the axis label, beside the widest tick label
    mine, theirs = ax.yaxis.label.get_window_extent(renderer), \
        ref.yaxis.label.get_window_extent(renderer)
    assert mine.x1 - ax.bbox.x0 == pytest.approx(theirs.x1 - ref.bbox.x0, abs=3.0)
    if scale == "log":          # minor ticks, as marks only
        minor = [v for v in ref.yaxis.get_minorticklocs() if lo <= v <= hi]
        marks = [line for line in ax.get_children()
                 if isinstance(line, matplotlib.lines.Line2D)
                 and line.get_marker() == matplotlib.lines.TICKLEFT
                 and line.get_markersize() == matplotlib.rcParams["ytick.minor.size"]]
        assert len(marks) == 1
        assert sorted(marks[0].get_ydata()) == pytest.approx(sorted(minor))
    plt.close(fig)


def test_static_ticks_leave_an_offset_axis_to_matplotlib():
    fig, (_, ax) = _pair()
    ax.set_ylim(1e9, 1e9 + 5)            # labelled "+1e9" beside the axis
    assert static_ticks(ax, "y") == []
    assert len(ax.yaxis.get_majorticklocs()) > 0
    plt.close(fig)


def test_fixed_ticks_and_bare_marks():
    fig, (ax, _) = _pair()
    ax.set_xlim(-0.5, 2.5)
    names = static_ticks(ax, "x", [0, 1, 2], ["a", "bb", "ccc"], rotation=30, ha="right")
    assert [t.get_text() for t in names] == ["a", "bb", "ccc"]
    assert [t.get_rotation() for t in names] == [30, 30, 30]
    assert static_ticks(ax, "x", [0, 1, 2]) == []        # marks, no labels
    with pytest.raises(ValueError):
        static_ticks(ax, "x", [0, 1], ["a"])
    plt.close(fig)


def test_bars_cover_what_ax_bar_covers():
    fig, (ref, ax) = _pair()
    x, h, b = np.array([0.0, 1.0, 2.5]), np.array([3.0, 0.5, 2.0]), np.array([1.0, 0.0, 0.5])
    rects = ref.bar(x, h, 0.6, bottom=b)
    coll = bars(ax, x, h, 0.6, bottom=b, color="C0", label="x")
    for rect, path in zip(rects, coll.get_paths(), strict=True):
        corners = rect.get_bbox()
        got = path.vertices
        assert got[:, 0].min() == pytest.approx(corners.x0)
        assert got[:, 0].max() == pytest.approx(corners.x1)
        assert got[:, 1].min() == pytest.approx(corners.y0)
        assert got[:, 1].max() == pytest.approx(corners.y1)
    assert ax.get_legend_handles_labels()[1] == ["x"]
    plt.close(fig)


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"),
                                           (".pdf", b"%PDF")])
def test_save_figure_writes_the_suffix_format_and_closes(tmp_path, suffix, magic):
    fig, _ = plt.subplots(figsize=(2, 1), dpi=DPI)
    path = tmp_path / f"f{suffix}"
    save_figure(fig, path)
    assert path.read_bytes()[:len(magic)] == magic
    assert not plt.fignum_exists(fig.number)
    if suffix == ".png":
        with Image.open(io.BytesIO(path.read_bytes())) as im:
            assert im.size == (2 * DPI, DPI) and im.mode == "RGB"
            assert im.getpixel((0, 0)) == (255, 255, 255)


def test_tokens_per_sm_colours_each_gpu_as_the_fabric_figures_do(tmp_path, monkeypatch):
    """tokens_per_sm.png coloured GPUs by position and the fabric figures by name
    (compare_plots.gpu_colours), so with --gpus Lite+BW,GB300-NVL72 Lite+BW was orange in
    one and purple in the other, GB300-NVL72 green and grey."""
    import netmodel.study.figure_kit as kit
    from netmodel.study.compare_plots import gpu_colours
    from netmodel.study.lite_gpu import run_lite_gpu_study
    from netmodel.study.lite_gpu_plots import plot_tokens_per_sm

    drawn = []
    real = kit.bars

    def spy(ax, x, height, width, **kwargs):
        drawn.append((kwargs.get("label"), kwargs["color"]))
        return real(ax, x, height, width, **kwargs)

    monkeypatch.setattr(kit, "bars", spy)
    gpus = ["H100-SXM", "Lite+BW", "GB300-NVL72"]
    study = run_lite_gpu_study(["Llama-3-8B"], gpus, ["decode"])
    plot_tokens_per_sm(study, tmp_path / "t.png")
    want = gpu_colours(gpus)
    assert [c for _, c in drawn] == [want[g] for g in gpus]


@pytest.mark.parametrize("plot", ["plot_compare_tokens", "plot_compare_split"])
def test_a_narrow_comparison_keeps_its_title_inside(tmp_path, monkeypatch, plot):
    # one model, one phase, two scenarios: a 5-6 inch figure, where the one-line title
    # (about 7.5 inches at 10 pt) was cut off on both sides; it now wraps, whole
    from netmodel.study import compare_plots
    from netmodel.study.compare import run_compare

    r = run_compare(["Llama-3-8B"], ["h100-dgx", "lite-direct"], ["decode"])
    seen = {}

    def spy(fig, path):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        seen["width"] = fig.bbox.width
        seen["titles"] = [(t.get_text(), t.get_window_extent(renderer))
                          for t in fig.findobj(matplotlib.text.Text)
                          if t is fig._suptitle]
        seen["texts"] = [t.get_window_extent(renderer) for t in fig.findobj(matplotlib.text.Text)
                         if t.get_visible() and t.get_text().strip() and t is not fig._suptitle]

    monkeypatch.setattr(figure_kit, "save_figure", spy)
    getattr(compare_plots, plot)(r, tmp_path / "x.png")
    [(text, box)] = seen["titles"]
    assert box.x0 >= 0 and box.x1 <= seen["width"]
    assert "\n" in text.replace("fabric\n(", "")    # wrapped, not merely its own break
    assert all(b.y1 <= box.y0 + 0.5 for b in seen["texts"])    # nothing under it
