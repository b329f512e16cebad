"""Drawing helpers shared by the study's figures (compare_plots, lite_gpu_plots,
cost_plots, reliability_plots, crossovers and the serving figure). What a figure costs is
mostly matplotlib's per-artist overhead and its text (a Rectangle per bar, five artists per
tick, about a millisecond per label, a layout pass that measures every text), not its
pixels; these draw the same things with fewer artists and measure only what they must.
matplotlib is imported inside the functions, so importing this module costs nothing."""

from __future__ import annotations

from os import PathLike

from compute.memo import Memo

__all__ = ["DPI", "FIGURE_RC", "bars", "pyplot", "figure_style", "fit_inside", "fitted_suptitle",
           "label", "legend_entries", "log_axis", "plain_log_labels", "plain_power", "png_bytes", "save_figure", "set_margins",
           "static_ticks"]

#: Resolution of the study's figures (dots per inch); the figures are created at it, so
#: what is measured before saving (text extents) is what is drawn.
DPI = 120

#: rcParams the figures are drawn with: unhinted text. FreeType's hinter is about a third
#: of the cost of drawing a label, and at 120 dpi the glyphs read the same without it.
FIGURE_RC = {"text.hinting": "none"}


def pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display), imported on first
    use so that importing a figure module costs nothing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def log_axis(values: object) -> bool:
    """Whether swept values are drawn on a log axis: all positive, spanning 10x or more
    (the sweep figure's x axis; :func:`netmodel.study.sweep_curves._crossings` places tokens/s/SM
    crossings in the same space).

    >>> log_axis([0.1, 1, 10]), log_axis([0.4, 0.8]), log_axis([0, 10, 100])
    (True, False, False)
    """
    import numpy as np

    x = np.asarray(values, dtype=float)
    return bool(x.size and (x > 0).all() and x.max() / x.min() >= 10)


def figure_style(fn):
    """Decorator: run a figure function under :data:`FIGURE_RC`, so its measuring and its
    drawing see the same glyphs."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(FIGURE_RC):
            return fn(*args, **kwargs)

    return wrapper


def set_margins(fig, *, bottom: float, top: float = 0.75, left: float = 0.6,
                right: float = 0.2, wspace: float = 0.18, hspace: float = 0.45) -> None:
    """Place the panels with margins in inches: cheap and predictable, where tight_layout
    measures every text artist of the figure (about 0.2-0.8 s a figure)."""
    w, h = fig.get_figwidth(), fig.get_figheight()
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h,
                        wspace=wspace, hspace=hspace)


def fit_inside(fig, texts, *, pad: float = 0.06) -> None:
    """Widen the margins until every text of ``texts`` (tick labels of the outer panels,
    labels beside points) lies ``pad`` inches inside the figure. Measures only those
    texts, where tight_layout measures every artist of the figure."""
    texts = [t for t in texts if t.get_visible() and t.get_text()]
    if not texts:
        return
    renderer = fig.canvas.get_renderer()
    for _ in range(4):                  # the texts move with their axes: converge
        boxes = [t.get_window_extent(renderer) for t in texts]
        edge = pad * fig.dpi
        w, h = fig.bbox.width, fig.bbox.height
        over = {"left": edge - min(b.x0 for b in boxes),
                "right": max(b.x1 for b in boxes) - (w - edge),
                "bottom": edge - min(b.y0 for b in boxes),
                "top": max(b.y1 for b in boxes) - (h - edge)}
        if max(over.values()) <= 0.5:
            return
        sp = fig.subplotpars
        fig.subplots_adjust(left=sp.left + max(over["left"], 0) / w,
                            right=sp.right - max(over["right"], 0) / w,
                            bottom=sp.bottom + max(over["bottom"], 0) / h,
                            top=sp.top - max(over["top"], 0) / h)


def fitted_suptitle(fig, text: str, *, fontsize: float, pad: float = 0.1) -> float:
    """Give ``fig`` the title ``text``, each of its lines that is wider than the figure
    (less ``pad`` inches a side) broken at spaces into as few lines as fit, measured;
    return the height in inches the added lines take, to add to the top margin. A title
    that fits is left as it is (one measurement): a narrow figure (one model, one phase,
    two scenarios) clipped the title on both sides."""
    title = fig.suptitle(text, fontsize=fontsize)
    renderer = fig.canvas.get_renderer()
    room = fig.bbox.width - 2 * pad * fig.dpi
    if title.get_window_extent(renderer).width <= room:
        return 0.0

    def fits(line: str) -> bool:
        title.set_text(line)
        return title.get_window_extent(renderer).width <= room

    lines = []
    for line in text.split("\n"):
        words = line.split(" ")
        current = words[0]
        for word in words[1:]:
            if fits(f"{current} {word}"):
                current = f"{current} {word}"
            else:
                lines.append(current)
                current = word
        lines.append(current)
    title.set_text("\n".join(lines))
    return (len(lines) - len(text.split("\n"))) * 1.2 * fontsize / 72


def save_figure(fig, path: str | PathLike[str]) -> None:
    """Write ``fig`` to ``path`` in the format of its suffix (``.png``, ``.svg``, ``.pdf``)
    at the figure's resolution, and close it. A PNG is encoded from the drawn canvas as
    RGB (the figures are opaque) by :func:`png_bytes`."""
    import matplotlib
    import matplotlib.pyplot as plt

    from compute.output_paths import figure_format

    fmt = figure_format(path)
    try:
        if fmt != "png":
            fig.savefig(path, format=fmt)
            return
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        _quick_text(canvas.get_renderer())     # draw() keeps the renderer of this size
        canvas.draw()
        rgb = np.asarray(canvas.buffer_rgba())[..., :3]
        data = png_bytes(rgb, fig.dpi, {"Software": f"Matplotlib version{matplotlib.__version__}"
                                                    ", https://matplotlib.org/"})
        with open(path, "wb") as f:
            f.write(data)
    finally:
        plt.close(fig)


#: Glyph layouts of the texts drawn (:func:`_quick_text`), by font, size, resolution,
#: text and layout options; emptied past 4,096 entries.
_LAYOUTS = Memo(4096)
#: Line metrics of the fonts drawn with (:func:`_quick_text`): ``(ascent, descent, line
#: gap)`` in pixels by font properties and resolution; emptied as :data:`_LAYOUTS`.
_METRICS = Memo(_LAYOUTS.limit)

#: The font tables a text's line metrics come from (matplotlib 3.11's Text._get_layout):
#: the first table the font has, with its line gap, ascender and descender fields.
_METRIC_TABLES = (("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
                  ("hhea", "lineGap", "ascent", "descent"))


def _quick_text(renderer) -> None:
    """Give ``renderer`` (matplotlib's Agg renderer) a ``draw_text`` that draws the same
    pixels as its own (matplotlib 3.11's: lay the text out into glyphs, then render and
    blend each glyph at its position, rotated), with the layout of a text kept and reused
    wherever the same text is drawn again in the same font, size and resolution (a
    layout costs about 50 us a glyph; a figure repeats its tick and bar labels), the
    rotation's fixed-point matrix made once per angle instead of once per glyph, and the
    glyphs' positions rounded from Python floats (numpy's scalars round ten times slower,
    to the same whole numbers). Mathtext
    is left to matplotlib; so is every text where matplotlib's Agg renderer is not the
    one this was written against (nothing is changed then).

    The renderer also answers ``_get_font_height_metrics``, the hook matplotlib's text
    layout asks a renderer for a font's ascent, descent and line gap before it reads them
    from the font's tables itself (about 90 us a text, each drawn text laid out again):
    the same numbers, computed as matplotlib does, kept per font properties and
    resolution. Only for a renderer without the hook (Agg has none)."""
    import functools
    import math

    import numpy as np
    from matplotlib.backends import backend_agg
    try:
        from matplotlib.ft2font import RenderMode
    except ImportError:   # matplotlib before 3.10: its own draw_text is kept
        return

    agg = backend_agg.RendererAgg
    if not (hasattr(agg, "_draw_text_glyphs_and_boxes") and hasattr(agg, "_prepare_font")
            and isinstance(renderer, agg)):
        return
    stock = agg.draw_text
    turns: dict = {}   # angle -> (cos, sin, the rotation as FreeType's 16.16 matrix)

    def draw_text(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:
            return stock(renderer, gc, x, y, s, prop, angle, ismath, mtext)
        font = renderer._prepare_font(prop)
        flags = backend_agg.get_hinting_flag()
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        size = prop.get_size_in_points()
        key = (font, size, renderer.dpi, s, flags, features, language)
        items = _LAYOUTS.get(key)
        if items is None:
            items = _LAYOUTS.put(key, [(i.ft_object, i.glyph_index, i.x, i.y) for i in
                                       font._layout(s, flags=flags, features=features,
                                                    language=language)])
        # as RendererAgg._draw_text_glyphs_and_boxes with no boxes, slant 0, extend 1
        turn = turns.get(angle)
        if turn is None:
            cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
            turn = turns[angle] = (cos, sin, (0x10000 * np.array([[cos, -sin], [sin, cos]])
                                              @ [[1, 0], [0, 1]]).round().astype(int))
        cos, sin, matrix = turn
        mode = RenderMode.NORMAL if gc.get_antialiased() else RenderMode.MONO
        dpi = renderer.dpi
        # Python floats: the same doubles as numpy's scalars (the renderer's height, the
        # text's position), and round() of one costs a tenth of round() of a numpy scalar
        x, top = float(x), float(renderer.height) - float(y)
        bottom = int(renderer.height)
        draw = renderer._renderer.draw_text_image
        for ft, glyph, dx, dy in items:
            ft.set_size(size, dpi)
            ft._set_transform(matrix, [round(0x40 * (x + dx * cos - dy * sin)),
                                       round(0x40 * (top + dx * sin + dy * cos))])
            bitmap = ft._render_glyph(glyph, flags, mode)
            buffer = bitmap.buffer
            if mode is not RenderMode.NORMAL:
                buffer *= 0xff
            draw(buffer, bitmap.left, bottom - bitmap.top + buffer.shape[0], 0, gc)

    renderer.draw_text = draw_text
    if not hasattr(renderer, "_get_font_height_metrics"):
        renderer._get_font_height_metrics = functools.partial(_height_metrics, renderer.dpi)


def _height_metrics(dpi: float, prop) -> tuple:
    """``(ascent, descent, line gap)`` in pixels of the font of ``prop`` at ``dpi``, as
    matplotlib 3.11's Text._get_layout computes them from the font's tables (``(None,
    None, None)`` where the font has neither: matplotlib then measures), kept in
    :data:`_METRICS`."""
    key = (prop, dpi)
    hit = _METRICS.get(key)
    if hit is None:
        from matplotlib.font_manager import fontManager, get_font

        hit = (None, None, None)
        font = get_font(fontManager._find_fonts_by_props(prop))
        for table_name, linegap_key, ascent_key, descent_key in _METRIC_TABLES:
            table = font.get_sfnt_table(table_name)
            if table is None:
                continue
            fontsize = prop.get_size_in_points()
            units_per_em = font.get_sfnt_table("head")["unitsPerEm"]
            scale = 1 / units_per_em * fontsize * dpi / 72
            hit = (table[ascent_key] * scale, -table[descent_key] * scale,
                   table[linegap_key] * scale)
            break
        _METRICS.put((prop.copy(), dpi), hit)
    return hit


def png_bytes(rgb, dpi: float, text: dict[str, str] | None = None) -> bytes:
    """A PNG file of ``rgb`` (an ``(height, width, 3)`` uint8 array): every row filtered
    by "Up" (its difference from the row above, one numpy subtraction), deflated at zlib
    level 1, with the resolution (``pHYs``, ``dpi`` as pixels per metre rounded as
    Pillow rounds it) and ``text`` (``tEXt``, Latin-1). About half the time of Pillow's
    encoder at the same level (which tries five filters on every row), for files about as
    large; the pixels are the same.

    Examples
    --------
    >>> import io, numpy as np
    >>> from PIL import Image
    >>> rgb = (np.arange(4 * 5 * 3) * 37 % 256).astype(np.uint8).reshape(4, 5, 3)
    >>> im = Image.open(io.BytesIO(png_bytes(rgb, 120, {"Software": "x"})))
    >>> bool((np.asarray(im) == rgb).all()), im.mode, im.info["Software"]
    (True, 'RGB', 'x')
    >>> [round(d, 2) for d in im.info["dpi"]]
    [119.99, 119.99]
    """
    import struct
    import zlib

    import numpy as np

    rgb = np.asarray(rgb, dtype=np.uint8)
    h, w = rgb.shape[:2]
    if not rgb.flags.c_contiguous:   # e.g. the RGB of an RGBA canvas: copied a channel
        whole = np.empty((h, w, 3), dtype=np.uint8)  # at a time (4x numpy's strided copy)
        for c in range(3):
            whole[..., c] = rgb[..., c]
        rgb = whole
    flat = rgb.reshape(h, 3 * w)
    rows = np.empty((h, 3 * w + 1), dtype=np.uint8)
    rows[:, 0] = 2                                        # filter type 2, "Up"
    rows[0, 1:] = flat[0]                                 # above the first row: zeros
    np.subtract(flat[1:], flat[:-1], out=rows[1:, 1:])    # modulo 256

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body))

    ppm = int(dpi / 0.0254 + 0.5)
    out = [b"\x89PNG\r\n\x1a\n",
           chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)),   # 8-bit RGB
           chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1))]              # per metre
    out += [chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("latin-1"))
            for k, v in (text or {}).items()]
    out += [chunk(b"IDAT", zlib.compress(rows, 1)), chunk(b"IEND", b"")]
    return b"".join(out)


def label(ax, x, y, text: str, *, transform=None, **kwargs):
    """A text at ``(x, y)`` in ``ax``'s data coordinates (or ``transform``), unclipped, as
    ``ax.text`` draws it, but held by the figure: ``ax.text`` gives each text a clip box
    it does not use (clip_on is off) and that is two thirds of making it. Not for texts
    that an axes' legend placed at "best" must avoid: it only sees the axes' own."""
    return ax.figure.text(x, y, text, transform=transform or ax.transData, **kwargs)


def legend_entries(axes) -> tuple[list, list[str]]:
    """``(handles, labels)`` for one legend of a figure of several panels: every label
    drawn in ``axes`` (an array of axes, in reading order) once, with the handle of its
    first appearance, in the order they first appear.

    >>> fig = pyplot().figure()
    >>> a, b = fig.subplots(1, 2)
    >>> _ = a.plot([0], label="x"), b.plot([0], label="y"), b.plot([0], label="x")
    >>> legend_entries([a, b])[1]
    ['x', 'y']
    >>> pyplot().close(fig)
    """
    import numpy as np

    handles, labels = [], []
    for ax in np.asarray(axes).flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    return handles, labels


def bars(ax, x, height, width: float, *, bottom=0.0, color, label: str | None = None,
         zorder: float = 1.0):
    """Vertical bars centred on ``x`` as ONE artist (a PolyCollection), drawn as
    ``ax.bar`` draws them (no edge) but without a Rectangle per bar. Does not touch the
    axis limits: set them. Returns the collection (a legend handle)."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    x = np.asarray(x, dtype=float)
    base = np.broadcast_to(np.asarray(bottom, dtype=float), x.shape)
    top = base + np.asarray(height, dtype=float)
    lo, hi = x - width / 2, x + width / 2
    verts = np.stack([np.stack([lo, base], -1), np.stack([hi, base], -1),
                      np.stack([hi, top], -1), np.stack([lo, top], -1)], axis=1)
    coll = PolyCollection(verts, facecolors=[color], edgecolors="none", linewidths=0,
                          label=label, zorder=zorder)
    ax.add_collection(coll, autolim=False)
    return coll


_SUPERSCRIPTS = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076"
                                                "\u2077\u2078\u2079")


def plain_power(text: str) -> str:
    r"""A log axis' label ``$\mathdefault{10^{-3}}$`` as ``10⁻³``: the same text without
    mathtext, whose parser costs more than all the other labels of a figure. Any other
    text is returned as it is.

    Examples
    --------
    >>> plain_power("$\\mathdefault{10^{-3}}$"), plain_power("$\\mathdefault{10^{2}}$")
    ('10⁻³', '10²')
    >>> plain_power("$\\mathdefault{2\\times10^{1}}$"), plain_power("0.5")
    ('2×10¹', '0.5')
    """
    import re

    m = re.fullmatch(r"\$\\mathdefault\{(?:([\d.]+)\\times)?(\d+)\^\{(-?\d+)\}\}\$", text)
    if not m:
        return text
    factor = m[1] + "\u00d7" if m[1] else ""
    return f"{factor}{m[2]}{m[3].translate(_SUPERSCRIPTS)}"


#: The minor ticks of a log axis labelled where its view crosses at most one power of ten
#: and spans more than :data:`ALL_MINOR_DECADES` decades (the leading digits labelled), and
#: every minor tick where it spans less: matplotlib's own default choice, made here so
#: that every matplotlib release the project admits labels alike (3.8-3.10 counted the
#: decades otherwise and labelled a one-decade price axis '0.1' alone).
MINOR_DIGITS = (2, 3, 4, 6)
ALL_MINOR_DECADES = 0.4


def plain_log_labels(axis) -> None:
    """Label the log ``axis`` (``ax.xaxis`` or ``ax.yaxis``) in plain numbers, ``0.05``,
    ``0.1``, ``10``: its major ticks, and its minor ticks within about a decade
    (:data:`MINOR_DIGITS`), which matplotlib's own minor formatter wrote ``2×10⁻¹`` beside
    a plain ``0.1``."""
    import math

    from matplotlib.ticker import FuncFormatter

    def minor(x, _pos=None):
        lo, hi = sorted(axis.get_view_interval())
        if not (x > 0 and lo > 0):
            return ""
        crossed = math.floor(math.log10(hi)) - math.floor(math.nextafter(math.log10(lo),
                                                                         -math.inf))
        if crossed > 1:
            return ""
        power = math.floor(math.log10(x))
        digit = round(x / 10.0 ** power)
        if math.log10(hi / lo) <= ALL_MINOR_DECADES or digit in MINOR_DIGITS:
            return f"{x:g}"
        return ""

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def _marks(ax, axis: str, where, *, kind: str, grid_alpha: float | None,
           length: float | None = None) -> None:
    """Tick marks of ``kind`` ("major" or "minor") at ``where`` (data) on the bottom or
    left spine, as one Line2D, and with ``grid_alpha`` their grid lines as one
    LineCollection, styled from rcParams as matplotlib styles its ticks."""
    import matplotlib as mpl
    import numpy as np
    from matplotlib import lines
    from matplotlib.collections import LineCollection

    where = np.asarray(where, dtype=float)
    if not len(where):
        return
    rc = mpl.rcParams
    zero = np.zeros_like(where)
    if axis == "x":
        transform, marker, xy = ax.get_xaxis_transform(), lines.TICKDOWN, (where, zero)
        segments = np.stack([np.stack([where, zero], -1), np.stack([where, zero + 1], -1)], 1)
    else:
        transform, marker, xy = ax.get_yaxis_transform(), lines.TICKLEFT, (zero, where)
        segments = np.stack([np.stack([zero, where], -1), np.stack([zero + 1, where], -1)], 1)
    ax.add_artist(lines.Line2D(*xy, transform=transform, marker=marker, ls="none",
                               ms=rc[f"{axis}tick.{kind}.size"] if length is None else length,
                               mew=rc[f"{axis}tick.{kind}.width"],
                               color=rc[f"{axis}tick.color"], clip_on=False, zorder=2.5))
    if grid_alpha is not None:
        below = ax.get_axisbelow()
        ax.add_collection(LineCollection(
            segments, transform=transform, colors=rc["grid.color"],
            linewidths=rc["grid.linewidth"], linestyles=rc["grid.linestyle"],
            alpha=grid_alpha, zorder=0.5 if below is True else 1.5 if below == "line" else 2.5),
            autolim=False)


def static_ticks(ax, axis: str = "y", locs=None, labels=None, *,
                 labelsize: float | str | None = None, rotation: float = 0.0,
                 ha: str | None = None, grid_alpha: float | None = None,
                 length: float | None = None) -> list:
    """Draw the ticks of ``axis`` ("x": bottom, "y": left) as a few artists instead of
    matplotlib's Tick objects (five artists, about 2 ms, each): one Line2D of tick marks,
    one LineCollection of grid lines (with ``grid_alpha``), a Text per label, the axis
    label placed beside them as matplotlib would place it.

    ``locs`` and ``labels``: those ticks; ``locs`` alone: marks without labels (a panel
    whose neighbour carries them); neither: where matplotlib would put them (its locator
    and formatter, minor ticks of a log axis included). Call once the axis limits are
    final and the panels placed (the number of ticks depends on the axis' length): it
    fixes the limits. ``length``: of the marks in points (default: rcParams; 0 for
    none). Where matplotlib would draw more than plain labels (an offset or multiplier
    beside the axis), the axis is left as it is. Returns the label Texts."""
    import matplotlib as mpl
    import numpy as np
    from matplotlib import ticker
    from matplotlib.font_manager import FontProperties
    from matplotlib.transforms import offset_copy

    which = ax.xaxis if axis == "x" else ax.yaxis
    get_lim, set_lim = (ax.get_xlim, ax.set_xlim) if axis == "x" else (ax.get_ylim, ax.set_ylim)
    lim = get_lim()                           # autoscales now if it has to
    lo, hi = sorted(lim)
    tol = 1e-9 * (hi - lo)
    log = which.get_scale() == "log"

    def as_matplotlib() -> list:              # its own ticks, styled alike
        if labelsize is not None:
            which.set_tick_params(labelsize=labelsize)
        if grid_alpha is not None:
            ax.grid(True, axis=axis, which="both" if log else "major", alpha=grid_alpha)
        return []

    rc = mpl.rcParams
    fontsize = labelsize or rc[f"{axis}tick.labelsize"]
    marked = locs                             # where the major marks go
    if locs is None:
        if log and lo <= 0:
            return as_matplotlib()
        locator = which.get_major_locator()
        # matplotlib's default locators fit as many ticks as labels of this size have room
        # for along the axis (Axis.get_tick_space); the axis does not know the size here
        k = 0 if axis == "x" else 1
        ends = ax.transAxes.transform([[0, 0], [1, 1]])
        along = abs(ends[1, k] - ends[0, k]) * 72 / ax.figure.dpi       # points
        room = int(along // (FontProperties(size=fontsize).get_size_in_points() * (3 - k)))
        if isinstance(locator, ticker.AutoLocator):
            locator.set_params(nbins=min(max(room, 1), 9))
        elif isinstance(locator, ticker.LogLocator) and locator.numticks == "auto":
            locator.set_params(numticks=min(max(room, 2), 9))
        every = np.asarray(locator.tick_values(lo, hi), dtype=float)
        formatter = which.get_major_formatter()
        text = formatter.format_ticks(every)
        if formatter.get_offset():
            return as_matplotlib()
        keep = (every >= lo - tol) & (every <= hi + tol)
        locs = marked = every[keep]
        labels = [plain_power(t) for t, k in zip(text, keep, strict=True) if k]
        if log:
            minor = np.asarray(which.get_minor_locator().tick_values(lo, hi), dtype=float)
            minor = minor[(minor >= lo - tol) & (minor <= hi + tol)]
            if len(every):
                minor = minor[~np.isclose(minor[:, None], every[None, :], rtol=1e-9,
                                          atol=0).any(axis=1)]
            _marks(ax, axis, minor, kind="minor", grid_alpha=grid_alpha)
            # within about a decade matplotlib labels some minor ticks too (2x10^1, ...)
            named = [(v, plain_power(t)) for v, t in
                     zip(minor, which.get_minor_formatter().format_ticks(minor), strict=True)
                     if t]
            if named:
                both = sorted([*zip(locs, labels, strict=True), *named])
                locs, labels = [v for v, _ in both], [t for _, t in both]
    which.set_major_locator(ticker.NullLocator())
    which.set_minor_locator(ticker.NullLocator())
    set_lim(lim)
    _marks(ax, axis, marked, kind="major", grid_alpha=grid_alpha, length=length)
    fig = ax.figure
    size = (rc[f"{axis}tick.major.size"] if length is None else length) \
        + rc[f"{axis}tick.major.pad"]                                       # points
    colour = rc[f"{axis}tick.labelcolor"]
    style = dict(fontsize=fontsize, rotation=rotation,
                 color=rc[f"{axis}tick.color"] if colour == "inherit" else colour)
    pairs = zip(locs, labels, strict=True) if labels is not None else ()
    if axis == "x":
        at = offset_copy(ax.get_xaxis_transform(), fig=fig, y=-size, units="points")
        texts = [label(ax, v, 0, t, transform=at, ha=ha or "center", va="top", **style)
                 for v, t in pairs]
    else:
        at = offset_copy(ax.get_yaxis_transform(), fig=fig, x=-size, units="points")
        texts = [label(ax, 0, v, t, transform=at, ha=ha or "right", va="center_baseline",
                       **style) for v, t in pairs]
    # the axis label beside the tick labels, labelpad away, as matplotlib places it; the
    # longest labels are the widest (measuring each costs about as much as drawing it)
    renderer = fig.canvas.get_renderer()
    longest = max((len(t.get_text()) for t in texts), default=0)
    boxes = [t.get_window_extent(renderer) for t in texts
             if longest and len(t.get_text()) == longest]
    reach = (size + max((b.height if axis == "x" else b.width) for b in boxes) * 72 / fig.dpi
             if boxes else 0.0) + which.labelpad
    if axis == "x":
        which.set_label_coords(0.5, 0, transform=offset_copy(ax.transAxes, fig=fig, y=-reach,
                                                             units="points"))
    else:
        which.set_label_coords(0, 0.5, transform=offset_copy(ax.transAxes, fig=fig, x=-reach,
                                                             units="points"))
    return texts
