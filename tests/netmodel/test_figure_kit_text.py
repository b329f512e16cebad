"""figure_kit._quick_text draws and measures text exactly as matplotlib's Agg renderer does
(its glyph, layout and extent caches change no pixel), and png_bytes encodes a strided RGB
view as its contiguous copy."""

from __future__ import annotations

import io

import numpy as np
import pytest

from netmodel.study import figure_kit
from netmodel.study.figure_kit import FIGURE_RC, png_bytes, pyplot

plt = pyplot()

TEXTS = ["0.95x", "lite-flat@Lite+BW", "tokens/s per SM", "Wy,gj 12 345", "$x^2$",
         "two\nlines"]


def _canvas(quick: bool, hinting: str) -> tuple[np.ndarray, list]:
    """A figure of texts at fractional positions, angles, sizes and antialiasing, drawn
    by matplotlib's renderer or with _quick_text; its pixels and its texts' extents."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    with matplotlib.rc_context({**FIGURE_RC, "text.hinting": hinting}):
        fig = plt.figure(figsize=(4, 3), dpi=120)
        rng = np.random.default_rng(7)
        texts = []
        for k in range(60):
            s = TEXTS[k % len(TEXTS)]
            texts.append(fig.text(rng.uniform(0.02, 0.8), rng.uniform(0.05, 0.95), s,
                                  rotation=[0, 30, 90, 45.5][k % 4],
                                  fontsize=[7, 8, 9.5][k % 3],
                                  antialiased=k % 5 != 0))
            # the same text again a fraction of a pixel and whole pixels away
            texts.append(fig.text(texts[-1].get_position()[0] + 3.37 / 480,
                                  texts[-1].get_position()[1] + 2 / 360, s,
                                  rotation=texts[-1].get_rotation(),
                                  fontsize=texts[-1].get_fontsize()))
        canvas = FigureCanvasAgg(fig)
        renderer = canvas.get_renderer()
        if quick:
            figure_kit._quick_text(renderer)
        canvas.draw()
        pixels = np.array(canvas.buffer_rgba())
        extents = [renderer.get_text_width_height_descent(t.get_text(), t.get_fontproperties(),
                                                          False) for t in texts[:10]]
        plt.close(fig)
    return pixels, extents


@pytest.mark.parametrize("hinting", ["none", "auto"])
def test_quick_text_draws_and_measures_what_matplotlib_does(hinting):
    stock, stock_extents = _canvas(False, hinting)
    quick, quick_extents = _canvas(True, hinting)
    assert (stock != 255).any()            # something was drawn
    assert np.array_equal(stock, quick)
    assert quick_extents == stock_extents
    # drawn again from the caches (every glyph and extent kept): still the same pixels
    again, again_extents = _canvas(True, hinting)
    assert np.array_equal(stock, again) and again_extents == stock_extents


def test_png_bytes_of_a_strided_view_is_that_of_its_copy():
    rgba = (np.arange(7 * 9 * 4) * 53 % 256).astype(np.uint8).reshape(7, 9, 4)
    view = rgba[..., :3]
    assert not view.flags.c_contiguous
    assert png_bytes(view, 120) == png_bytes(np.ascontiguousarray(view), 120)
    from PIL import Image

    with Image.open(io.BytesIO(png_bytes(view, 120))) as im:
        assert np.array_equal(np.asarray(im), view)
