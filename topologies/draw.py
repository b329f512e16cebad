"""Pictures of fabrics that show their structure at a glance.

Nodes sit where :mod:`topologies.draw_layout` puts them: by tier, on a circle, in a grid, in
two rows, or each group of GPUs joined by realized circuits on a circle of its own; a fabric
of more than :data:`MAX_GPUS` GPUs as one representative part, with the full counts of nodes
and links written beside it. Every realized circuit is drawn as its own curve in the colour
of the OCS that carries it (parallel circuits side by side), the OCS above with their
circuit counts. Lite groups and scale-up domains are shaded behind their GPUs. Nodes are
coloured by kind (switches by tier), lines coloured by medium and as wide as their
bandwidth (log scale; the range narrowed where GPUs crowd, so that a fan of links shows
its lines), with a legend whose width samples are the drawn widths.

Labels are placed, not just written: each goes beside its symbol on the first side where it
touches no line, symbol or other text, and a class of labels (GPUs, each switch tier) is
thinned to every second, third, ... node until they all fit (at most :data:`MAX_LABELS` per
class). GPU symbols shrink where GPUs sit close together, and on circuit circles to at most
:data:`topologies.draw_labels.CIRCUIT_DOT` of the distance between neighbours, so that the circuits between
neighbours show.

matplotlib and numpy are imported only when a picture is drawn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

import networkx as nx

from compute.output_paths import FIGURE_FORMATS, check_file_path, figure_format
from compute.outputs import atomic_write
from compute.units import counted
from topologies.draw_labels import (
    MARKERS,
    MAX_LABELS,
    node_order,
    place_labels,
    size_nodes,
)
from topologies.draw_layout import (
    CIRCLE,
    MAX_GPUS,
    Positions,
    circuit_groups,
    layout,
    representative,
    wrap_edges,
)
from topologies.schema import TRACE_MEDIA, circuit_via, gpu_nodes, validate

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

__all__ = ["MAX_GPUS", "MAX_LABELS", "circuit_groups", "figure", "layout", "plot", "representative"]

WIDTH_MIN, WIDTH_MAX = 0.6, 4.0  # points: the thinnest and the widest bandwidth's line
WRAP_ALPHA = 0.35     # a torus wrap-around arc's opacity
SHADE_MARGIN = 2.5    # points a group band reaches above and below its GPU symbols
UNCROWDED = 10.0      # points: GPU symbols this wide or wider leave link widths as they are
THINNEST_SCALE = 0.3  # link widths shrink to no less than this share where GPUs crowd
WIDTH_SAMPLES = ("thinnest:", "widest:", "every ", "wrap-around")  # legend width samples
FORMATS = tuple(f".{f}" for f in FIGURE_FORMATS)  # the suffixes figure_format accepts

KIND_COLOURS = {"gpu": "#2e7d32", "ocs": "#8e24aa"}
TIER_COLOURS = {0: "#f9a825", 1: "#1e88e5", 2: "#3949ab", 3: "#c62828"}
TIER_NAMES = {0: "scale-up switch", 1: "leaf / plane", 2: "spine", 3: "core"}
MEDIUM_COLOURS = {"on-package": "#6d4c41", "board": "#827717", "copper": "#ef6c00",
                  "pluggable-optics": "#546e7a", "co-packaged-optics": "#00897b",
                  "fibre": "#90a4ae", "ocs-circuit": "#8e24aa"}
PLANE_COLOURS = ("#8e24aa", "#00897b", "#e53935", "#3949ab", "#f4511e", "#7cb342", "#5e35b1",
                 "#039be5", "#6d4c41", "#d81b60")


# --- drawing ---------------------------------------------------------------------------


def _circuit_count(d: dict) -> int:
    """Circuits an edge stands for (``links``, default 1)."""
    return max(1, round(d.get("links", 1)))


def _gbps(bandwidth: float) -> str:
    """A legend's bandwidth in GB/s: exact where six significant figures or fewer hold it
    (a quarter of a Lite's 112.5 GB/s is 28.125, not ``.4g``'s half-even ``28.12``), else
    four.

    >>> _gbps(112.5e9 / 4), _gbps(450e9), _gbps(450e9 / 7), _gbps(12.5e9)
    ('28.125', '450', '64.29', '12.5')
    """
    value = bandwidth / 1e9
    for digits in (4, 5, 6):
        text = f"{value:.{digits}g}"
        if math.isclose(float(text), value, rel_tol=1e-12):
            return text
    return f"{value:.4g}"


def _widths(bws: Sequence[float]) -> tuple[list[float], float, float]:
    """Line widths (points, log scale from :data:`WIDTH_MIN` for the thinnest bandwidth to
    :data:`WIDTH_MAX` for the widest; all halfway when every bandwidth is the same).

    >>> _widths([50e9, 450e9, 150e9])[0][:2], _widths([1.0, 1.0])[0]
    ([0.6, 4.0], [2.3, 2.3])
    """
    lo, hi = min(bws), max(bws)
    span = math.log(hi / lo) if hi > lo else 1.0
    return [round(WIDTH_MIN + (WIDTH_MAX - WIDTH_MIN)
                  * (math.log(b / lo) / span if hi > lo else 0.5), 9) for b in bws], lo, hi


def _plane_colour(planes: list[Hashable], ocs_node: Hashable) -> str:
    """One colour per OCS, shared by the circuits it carries."""
    return PLANE_COLOURS[planes.index(ocs_node) % len(PLANE_COLOURS)]


def _node_colour(d: dict) -> str:
    if d["kind"] == "switch":
        return TIER_COLOURS.get(d["tier"], "#455a64")
    return KIND_COLOURS[d["kind"]]


def plot(graph: nx.Graph, path: str | PathLike[str], *, title: str | None = None) -> str:
    """Draw ``graph`` to ``path``, atomically; return the path. The path's suffix decides the
    format (``.png``, ``.svg`` or ``.pdf``: :func:`compute.output_paths.figure_format`); another
    suffix, or a path that cannot be written (:func:`compute.output_paths.check_file_path`), is a
    UserError before anything is drawn. See the module docstring for the layouts and
    :func:`figure` for the picture itself.

    >>> import tempfile, pathlib
    >>> from topologies import ring
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot(ring(4), pathlib.Path(d) / "ring.svg")
    ...     out.endswith("ring.svg"), open(out, "rb").read(5)
    (True, b'<?xml')
    """
    validate(graph, check_connected=False)
    path = check_file_path(path, "figure")
    fmt = figure_format(path)
    fig = figure(graph, title=title)
    # zlib level 3: 30% faster than PIL's default 6 and, for these flat-colour pictures,
    # no larger (measured on the 16,384-GPU fat tree: 405 kB against 439 kB)
    extra: dict[str, Any] = {"pil_kwargs": {"compress_level": 3}} if fmt == "png" else {}
    return atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, bbox_inches="tight",
                                                      **extra), what="figure")


def figure(graph: nx.Graph, *, title: str | None = None) -> Figure:
    """The picture of ``graph`` as a matplotlib Figure (an Agg canvas attached, laid out,
    labels placed), for :func:`plot` and for checking what is drawn.

    Artists carry a ``gid``: ``"link"`` (a straight link), ``"arc"`` (a bowed link),
    ``"circuit"`` (one circuit: an edge of ``links=k`` circuits is k of them), ``"nodes"``
    (a scatter of one kind), ``"label"`` (a node's label), ``"note"`` and ``"shade"``
    (group shading behind the GPUs).

    >>> from topologies import ocs
    >>> fig = figure(ocs(gpus=8, ports=4, logical="ring"))
    >>> sum(p.get_gid() == "circuit" for p in fig.axes[0].patches)
    8
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from compute import validate as checks

    if title is not None:   # a lone surrogate (a non-UTF-8 byte of argv) fails in FreeType
        checks.string("figure", "title", title)

    part, note = representative(graph)
    pos, how = layout(part)
    planes = sorted((n for n, k in part.nodes(data="kind") if k == "ocs"), key=node_order)
    groups, alone = circuit_groups(part) if how == "circuits" else ([], [])
    size_in = {"circle": (9, 9), "two rows": (12, 5.5), "circuits": (13, 9.5)}.get(how, (12, 7.5))
    fig = Figure(figsize=size_in, dpi=120)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.xaxis.set_visible(False)  # nor lay out ticks that are never drawn
    ax.yaxis.set_visible(False)
    shaded = _shade_groups(ax, part, pos, how)
    edges = list(part.edges(data=True))
    media: Counter = Counter()   # cables (circuits) by medium, as the bill of materials
    lines: Counter = Counter()   # drawn lines by medium: an edge stands for its cables
    for *_, d in edges:
        media[d["medium"]] += _circuit_count(d) if d["medium"] == "ocs-circuit" \
            else d.get("links", 1)
        lines[d["medium"]] += 1
    # nodes first (their sizes are set once the axes are laid out)
    size = max(12.0, min(220.0, 9000.0 / max(1, len(part))))
    scatters = {}
    for kind_key in ("ocs", "switch", "gpu"):
        nodes = [n for n, d in part.nodes(data=True) if d["kind"] == kind_key]
        if not nodes:
            continue
        xs, ys = zip(*(pos[n] for n in nodes), strict=True)
        colours = [_plane_colour(planes, n) if kind_key == "ocs" and media.get("ocs-circuit")
                   else _node_colour(part.nodes[n]) for n in nodes]
        scatters[kind_key] = (nodes, ax.scatter(
            xs, ys, s=size * (1.6 if kind_key != "gpu" else 1.0), c=colours,
            marker=MARKERS[kind_key], edgecolors="white", linewidths=0.6, zorder=3, gid="nodes"))
    span = _draw_edges(ax, part, pos, how, planes, edges, groups)
    handles = _legend(part, media, lines, span, shaded, how)
    legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
                       frameon=False)
    head = _headline(graph, title)
    spec = graph.graph.get("spec")
    # the title and a file's name and spec are the user's text, not formulas: '$$' or
    # '$\\undefinedmacro$' raised matplotlib's ValueError (a traceback) when parsed as math
    ax.set_title(head + (f"\n{_wrap(spec, 120)}" if spec and spec != head else ""), fontsize=11,
                 parse_math=False)
    note = "\n".join(x for x in (note, _circuits_note(part, how, groups, alone)) if x)
    note_text = None
    if note:
        note_text = ax.text(1.01, 0.0, note, transform=ax.transAxes, fontsize=8, va="bottom",
                            ha="left", gid="note",
                            bbox={"boxstyle": "round", "fc": "#f5f5f5", "ec": "#bdbdbd"})
    if how in ("circle", "grid", "circuits"):
        ax.set_aspect("equal")
    _limits(ax, pos, how)
    fig.tight_layout()
    ax.apply_aspect()  # what drawing does: display coordinates are final from here on
    renderer = canvas.get_renderer()
    if note_text is not None:  # just below the legend, whatever its length
        box = legend.get_window_extent(renderer)
        note_text.set_transform(ax.transAxes)
        x, y = ax.transAxes.inverted().transform((box.x0, box.y0 - 14))
        note_text.set_position((x + 0.005, y))
        note_text.set_verticalalignment("top")
        note_text.update_bbox_position_size(renderer)
    size_nodes(ax, scatters, pos, how, groups)
    _fit_shades(ax, scatters)
    if how != "circuits":
        _thin_crowded_links(ax, scatters)
    place_labels(fig, ax, renderer, part, pos, how, scatters, planes, groups)
    return fig


def _headline(graph: nx.Graph, title: str | None) -> str:
    """The title's first line: ``title``, else the graph's name, which for circuits
    realized from a long circuit list names the count instead of the list.

    >>> from topologies import ocs, realize
    >>> g = realize(ocs(gpus=64, ports=2), [(i, (i + 1) % 64) for i in range(64)])
    >>> _headline(g, None)
    '64 H100-SXM x 2 ports on 2 OCS as 64 circuits'
    """
    head = title or graph.graph.get("name") or "fabric"
    if len(head) <= 100:
        return head
    base, sep, _ = head.partition(" as ")
    if sep and "circuits" in graph.graph and len(base) < 80:
        return f"{base} as {graph.graph['circuits']} circuits"
    return head[:97] + "..."


def _wrap(text: str, width: int) -> str:
    """``text`` broken after commas into lines of at most ``width`` characters (longer
    pieces kept whole)."""
    lines, line = [], ""
    for piece in text.split(","):
        add = piece if not line else "," + piece
        if line and len(line) + len(add) > width:
            lines.append(line + ",")
            line = piece
        else:
            line += add
    return "\n".join([*lines, line])


def _limits(ax: Axes, pos: Positions, how: str) -> None:
    """Data limits: every node, with room for bowed links and labels."""
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    if how == "circuits":
        ax.set_xlim(x0 - 0.14, x1 + 0.14)
        ax.set_ylim(y0 - 0.14, y1 + 0.1)
        return
    ax.update_datalim(list(pos.values()))
    ax.autoscale_view()
    ax.margins(0.06)


def _draw_edges(ax: Axes, part: nx.Graph, pos: Positions, how: str, planes: list[Hashable],
                edges: list[tuple[Hashable, Hashable, dict]],
                groups: list[list[Hashable]]) -> tuple[float, float] | None:
    """Every link (every circuit its own curve); the thinnest and widest bandwidth drawn."""
    if not edges:
        return None
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyArrowPatch

    if how == "circuits":
        return _draw_circuits(ax, pos, planes, edges, groups)
    widths, lo, hi = _widths([d["bandwidth"] for *_, d in edges])
    wraps = wrap_edges(part) if how == "grid" else set()
    alpha = 0.75 if len(edges) < 400 else 0.35
    straight: list = []  # (segment, colour, width): one collection draws them all
    for (u, v, d), w in zip(edges, widths, strict=True):
        colour = MEDIUM_COLOURS.get(d["medium"], "#9e9e9e")
        (x1, y1), (x2, y2) = pos[u], pos[v]
        wrap = how == "grid" and ((u, v) in wraps or (v, u) in wraps)
        in_row = how in ("tiers", "two rows") and y1 == y2
        if d["medium"] == "ocs-circuit" or wrap or in_row:
            # links along a row (GPU to GPU) bow below it; torus wrap-arounds bow outwards
            rad = 0.25 if wrap else (0.5 if in_row else 0.35)
            if in_row and x1 < x2:
                rad = -rad
            ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), connectionstyle=f"arc3,rad={rad}",
                                         arrowstyle="-", color=colour, lw=w * (0.6 if wrap else 1.0),
                                         alpha=WRAP_ALPHA if wrap else 0.6,
                                         linestyle="--" if wrap else "-", zorder=1, gid="arc"))
            continue
        straight.append((((x1, y1), (x2, y2)), to_rgba(colour, alpha), w))
    if straight:
        segments, colours, lws = zip(*straight, strict=True)
        ax.add_collection(LineCollection(segments, colors=colours, linewidths=lws, zorder=1,
                                         capstyle="round", gid="link"))
    return lo, hi


def _draw_circuits(ax: Axes, pos: Positions, planes: list[Hashable],
                   edges: list[tuple[Hashable, Hashable, dict]],
                   groups: list[list[Hashable]]) -> tuple[float, float]:
    """Each circuit its own curve in its OCS's colour; the k parallel circuits of a GPU
    pair side by side, 0.35 neighbour spacings apart at their middle."""
    from matplotlib.patches import FancyArrowPatch

    spacing = {m: 2 * CIRCLE * math.sin(math.pi / len(ms)) if len(ms) > 2 else 2 * CIRCLE
               for ms in groups for m in ms}
    per = [d["bandwidth"] / _circuit_count(d) for *_, d in edges]
    widths, lo, hi = _widths(per)
    for (u, v, d), w in zip(edges, widths, strict=True):
        k = _circuit_count(d)
        via = circuit_via(u, v, d)
        (x1, y1), (x2, y2) = pos[u], pos[v]
        chord = math.hypot(x2 - x1, y2 - y1) or 1.0
        step = 0.35 * min(spacing.get(u, 2 * CIRCLE), spacing.get(v, 2 * CIRCLE))
        for i in range(k):
            bulge = (i - (k - 1) / 2) * step
            rad = max(-0.9, min(0.9, 2 * bulge / chord))
            plane = via[i] if i < len(via) else None
            colour = (_plane_colour(planes, plane) if plane in planes
                      else MEDIUM_COLOURS["ocs-circuit"])
            ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), connectionstyle=f"arc3,rad={rad}",
                                         arrowstyle="-", color=colour, lw=w, alpha=0.85,
                                         shrinkA=0, shrinkB=0, zorder=1, gid="circuit"))
    return lo, hi


def _circuits_note(part: nx.Graph, how: str, groups: list[list[Hashable]],
                   alone: list[Hashable]) -> str:
    """What the circuits (or the cabling) of an OCS fabric are, in words."""
    planes = sum(1 for _, k in part.nodes(data="kind") if k == "ocs")
    if how == "two rows":
        return (f"fibre cabling: each GPU has a port on each of the {planes} OCS;\n"
                "circuits are set per instance (logical=ring, torus, ...)")
    if how != "circuits":
        return ""
    sizes = Counter(len(ms) for ms in groups)
    lines = ["circuits: " + ", ".join(f"{c} group{'s' * (c > 1)} of {s} GPUs"
                                      for s, c in sorted(sizes.items(), reverse=True))]
    pairs = Counter(_circuit_count(d) for *_, d in part.edges(data=True))
    lines += [f"{c} GPU pair{'s' * (c > 1)} joined by {k} circuit{'s' * (k > 1)}"
              + (" each" if c > 1 else "") for k, c in sorted(pairs.items(), reverse=True)]
    per_gpu: Counter = Counter()
    for u, v, d in part.edges(data=True):
        per_gpu[u] += _circuit_count(d)
        per_gpu[v] += _circuit_count(d)
    used = sorted(set(per_gpu.values()))
    if used:
        text = str(used[0]) if len(used) == 1 else f"{used[0]}-{used[-1]}"
        lines.append(f"circuits per GPU: {text} of its {planes} ports (one per OCS)")
    if alone:
        lines.append(f"{len(alone)} GPUs without circuits (bottom row)")
    return "\n".join(lines)


def _shade_groups(ax: Axes, part: nx.Graph, pos: Positions, how: str) -> bool:
    """A translucent band behind the GPUs of each Lite group / scale-up domain."""
    from matplotlib.patches import Ellipse, FancyBboxPatch

    groups: dict = {}
    for g in gpu_nodes(part):
        if "group" in part.nodes[g]:
            groups.setdefault(part.nodes[g]["group"], []).append(g)
    if len(groups) < 2 or how in ("two rows", "circuits"):
        return False
    for i, members in enumerate(groups.values()):
        if len(members) < 2:
            continue
        xs, ys = zip(*(pos[m] for m in members), strict=True)
        colour = "#ffe082" if i % 2 == 0 else "#ffcc80"
        if how == "tiers" and max(ys) > min(ys):  # a group drawn as a small ring
            cx, cy = sum(xs) / len(xs), sum(ys) / len(ys)
            ax.add_patch(Ellipse((cx, cy), 1.6 * (max(xs) - min(xs)), 1.6 * (max(ys) - min(ys)),
                                 fc=colour, ec="#ffa000", lw=0.8, alpha=0.7, zorder=0,
                                 gid="shade"))
        elif how == "tiers":
            # half a GPU slot beyond the end GPUs: the one-slot gap between two groups
            # (_gpu_row) stays open; no box padding (it is in data units, and on a long row
            # a fixed 0.01 is several slots: the bands of a SuperPOD ran into one); the
            # height is set once the symbols are sized (_fit_shades)
            pad = 0.25 * (max(xs) - min(xs)) / max(1, len(members) - 1)
            ax.add_patch(FancyBboxPatch((min(xs) - pad, -0.06), max(xs) - min(xs) + 2 * pad,
                                        0.12, boxstyle="square,pad=0", fc=colour,
                                        ec="#ffa000", lw=0.6, alpha=0.7, zorder=0, gid="shade"))
        else:
            ax.plot(xs, ys, color=colour, lw=16, alpha=0.6, solid_capstyle="round",
                    solid_joinstyle="round", zorder=0, gid="shade")
    return True


def _fit_shades(ax: Axes, scatters: dict) -> None:
    """Make each flat group band (a row of GPUs) as high as a GPU symbol plus
    :data:`SHADE_MARGIN` above and below, whatever the data scale of the picture."""
    from matplotlib.patches import FancyBboxPatch

    if "gpu" not in scatters:
        return
    _, coll = scatters["gpu"]
    half_pt = 0.5 * math.sqrt(coll.get_sizes()[0]) + SHADE_MARGIN
    y0 = ax.transData.transform((0.0, 0.0))[1]
    per_unit = ax.transData.transform((0.0, 1.0))[1] - y0  # pixels per data unit in y
    half = half_pt * ax.figure.dpi / 72.0 / per_unit
    for p in ax.patches:
        if isinstance(p, FancyBboxPatch) and p.get_gid() == "shade":
            p.set_y(-half)
            p.set_height(2 * half)


def _thin_crowded_links(ax: Axes, scatters: dict) -> float:
    """Narrow the links' range of widths, and the legend's width samples with it, by the
    crowding of the GPUs: a line w points wide becomes WIDTH_MIN + (w - WIDTH_MIN) x factor,
    the factor being the GPU symbol's diameter (shrunk by :func:`size_nodes` to 0.9 of the
    distance between neighbours) over :data:`UNCROWDED`, between :data:`THINNEST_SCALE` and
    1. Return the factor. Lines keep their order of width and the thinnest stays visible;
    where GPUs sit a few points apart (a leaf's 16 GPUs, a plane's 256) a fan of 2.3-point
    lines was one solid triangle, the lines in it hidden."""
    from matplotlib.collections import LineCollection
    from matplotlib.patches import FancyArrowPatch

    if "gpu" not in scatters:
        return 1.0
    diameter = math.sqrt(scatters["gpu"][1].get_sizes()[0])
    factor = max(THINNEST_SCALE, min(1.0, diameter / UNCROWDED))
    if factor == 1.0:
        return factor

    def narrow(w: float) -> float:
        return w if w <= WIDTH_MIN else WIDTH_MIN + (w - WIDTH_MIN) * factor

    for coll in ax.collections:
        if isinstance(coll, LineCollection) and coll.get_gid() == "link":
            coll.set_linewidths([narrow(w) for w in coll.get_linewidths()])
    for p in ax.patches:
        if isinstance(p, FancyArrowPatch):
            p.set_linewidth(narrow(p.get_linewidth()))
    legend = ax.get_legend()
    for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True):
        if text.get_text().startswith(WIDTH_SAMPLES):
            handle.set_linewidth(narrow(handle.get_linewidth()))
    return factor


def _legend(part: nx.Graph, media: Counter, lines: Counter, span: tuple[float, float] | None,
            shaded: bool, how: str) -> list[Line2D]:
    from matplotlib.lines import Line2D

    handles = []
    types = Counter(part.nodes[g]["gpu"] for g in gpu_nodes(part))
    handles.append(Line2D([], [], ls="", marker="o", color=KIND_COLOURS["gpu"],
                          label="GPU: " + ", ".join(sorted(types))))
    tiers = sorted({d["tier"] for _, d in part.nodes(data=True) if d["kind"] == "switch"})
    for t in tiers:
        handles.append(Line2D([], [], ls="", marker="s", color=TIER_COLOURS.get(t, "#455a64"),
                              label=f"{TIER_NAMES.get(t, 'switch')} (tier {t})"))
    if any(d["kind"] == "ocs" for _, d in part.nodes(data=True)):
        handles.append(Line2D([], [], ls="", marker="D", color=KIND_COLOURS["ocs"],
                              label="optical circuit switch"))
    if shaded:
        handles.append(Line2D([], [], color="#ffd54f", lw=8, alpha=0.5,
                              label="group (Lite group / scale-up domain)"))
    for medium in sorted(media):
        cables = media[medium]
        count = f"{round(cables):,}" if abs(cables - round(cables)) < 1e-6 else f"{cables:,.2f}"
        unit = "traces" if medium in TRACE_MEDIA else "cables"   # wiring, not cables
        label = f"{medium} ({count} {unit})" if cables == lines[medium] else \
            f"{medium} ({count} {unit} as {lines[medium]:,} lines)"
        if medium == "ocs-circuit":
            pairs = sum(1 for *_, m in part.edges(data="medium") if m == medium)
            label = (f"ocs-circuit ({counted(media[medium], 'circuit')} on "
                     f"{counted(pairs, 'GPU pair')}),\n"
                     "one curve per circuit, coloured by its OCS")
        handles.append(Line2D([], [], color=MEDIUM_COLOURS.get(medium, "#9e9e9e"), lw=2,
                              label=label))
    if span:
        lo, hi = span
        each = " per circuit" if how == "circuits" else ""
        if hi > lo:  # the same widths the lines are drawn with (_widths)
            handles.append(Line2D([], [], color="#424242", lw=WIDTH_MIN,
                                  label=f"thinnest: {_gbps(lo)} GB/s per direction{each}"))
            handles.append(Line2D([], [], color="#424242", lw=WIDTH_MAX,
                                  label=f"widest: {_gbps(hi)} GB/s per direction{each}"))
        else:
            handles.append(Line2D([], [], color="#424242", lw=_widths([lo])[0][0],
                                  label=f"every {'circuit' if each else 'link'}: "
                                        f"{_gbps(lo)} GB/s per direction"))
    wraps = wrap_edges(part) if how == "grid" else set()
    if wraps:  # drawn as the arcs are: the medium's colour, dashed, faint, 0.6 x as wide
        edges = list(part.edges(data=True))
        widths, *_ = _widths([d["bandwidth"] for *_, d in edges])
        (medium, lw), _ = Counter((d["medium"], w) for (u, v, d), w in zip(edges, widths, strict=True)
                                  if (u, v) in wraps or (v, u) in wraps).most_common(1)[0]
        handles.append(Line2D([], [], color=MEDIUM_COLOURS.get(medium, "#9e9e9e"),
                              alpha=WRAP_ALPHA, ls="--", lw=0.6 * lw, label="wrap-around link"))
    return handles
