"""Pictures of fabrics that show their structure at a glance.

Layouts: switched fabrics stacked by tier (GPUs at the bottom, then scale-up switches,
leaves, spines, cores); a circle for rings, meshes and other switchless fabrics; a grid for
tori (a 3D torus as its slices side by side); GPUs and OCS in two rows for circuit-switched
fabrics (circuits drawn as arcs between GPUs). Lite groups and scale-up domains are shaded
behind their GPUs. Nodes are coloured by kind (switches by tier), lines coloured by medium
and as wide as their bandwidth (log scale), with a legend. A fabric of more than
:data:`MAX_GPUS` GPUs is drawn as one representative part (the first pod's first GPUs and
the switches above them) with the full counts written beside it.

matplotlib is imported only when a picture is drawn.
"""

from __future__ import annotations

import math
from collections import Counter

import networkx as nx

from compute.outputs import FIGURE_FORMATS, atomic_write, check_file_path, figure_format
from topologies.schema import gpu_nodes, validate

__all__ = ["MAX_GPUS", "layout", "plot", "representative"]

MAX_GPUS = 512          # drawn node by node up to this many GPUs
SAMPLE_GPUS = 64        # GPUs in the representative part of a larger fabric
SAMPLE_SWITCHES = 16    # switches per tier in the representative part
FORMATS = tuple(f".{f}" for f in FIGURE_FORMATS)  # the suffixes figure_format accepts

KIND_COLOURS = {"gpu": "#2e7d32", "ocs": "#8e24aa"}
TIER_COLOURS = {0: "#f9a825", 1: "#1e88e5", 2: "#3949ab", 3: "#c62828"}
TIER_NAMES = {0: "scale-up switch", 1: "leaf / plane", 2: "spine", 3: "core"}
TIER_PLURALS = {0: "scale-up switches", 1: "leaves / planes", 2: "spines", 3: "cores"}
MEDIUM_COLOURS = {"on-package": "#6d4c41", "copper": "#ef6c00", "pluggable-optics": "#546e7a",
                  "co-packaged-optics": "#00897b", "fibre": "#90a4ae", "ocs-circuit": "#8e24aa"}


def representative(graph: nx.Graph) -> tuple[nx.Graph, str]:
    """The part of ``graph`` to draw and a note of what was left out ('' if nothing).

    Up to :data:`MAX_GPUS` GPUs the whole graph; beyond, the first :data:`SAMPLE_GPUS` GPUs
    (the builders number physically close GPUs together: the first servers of the first
    pod), the switches and OCS above them tier by tier (at most :data:`SAMPLE_SWITCHES`
    per tier) and the links among those. A torus keeps its first 8 positions per side.
    """
    gpus = gpu_nodes(graph)
    if len(gpus) <= MAX_GPUS:
        return graph, ""
    if "dims" in graph.graph and not any(k != "gpu" for _, k in graph.nodes(data="kind")):
        from topologies.direct import parse_dims

        sides = parse_dims(graph.graph["dims"])
        keep_sides = tuple(min(s, 8) for s in sides)
        keep = []
        for i in range(len(gpus)):
            coords, rest = [], i
            for s in reversed(sides):
                coords.append(rest % s)
                rest //= s
            if all(c < k for c, k in zip(reversed(coords), keep_sides, strict=True)):
                keep.append(f"gpu{i}")
        part = _induced(graph, keep)
        part.graph["dims"] = "x".join(map(str, keep_sides))
        return part, (f"showing a {part.graph['dims']} corner of the {graph.graph['dims']} "
                      f"torus ({len(keep)} of {len(gpus):,} GPUs; links leaving the corner omitted)")
    keep = set(gpus[:SAMPLE_GPUS])
    tiers = sorted({_tier(graph, n) for n, k in graph.nodes(data="kind") if k != "gpu"})
    for tier in tiers:  # climb: each tier's switches above what is kept, a few of them
        above = {v for node in keep for v in graph._adj[node]
                 if graph.nodes[v]["kind"] != "gpu" and _tier(graph, v) == tier
                 and _tier(graph, node) < tier}
        keep |= set(sorted(above, key=_order)[:SAMPLE_SWITCHES])
    part = _induced(graph, keep)
    counts = Counter(_label(graph, n) for n in graph if graph.nodes[n]["kind"] != "gpu")
    shown = Counter(_label(graph, n) for n in part if graph.nodes[n]["kind"] != "gpu")
    lines = [f"representative part: {SAMPLE_GPUS} of {len(gpus):,} GPUs"]
    lines += [f"{shown[k]} of {counts[k]:,} {k}" for k in sorted(counts, key=_label_order)]
    return part, "\n".join(lines)


def _induced(graph, keep) -> nx.Graph:
    """The subgraph on ``keep``, nodes in the graph's own order (GPU numbering kept)."""
    keep = set(keep)
    part = nx.Graph(**graph.graph)
    part.add_nodes_from((n, d) for n, d in graph.nodes(data=True) if n in keep)
    part.add_edges_from((u, v, d) for u, v, d in graph.edges(keep, data=True)
                        if u in keep and v in keep)
    part.graph["gpus"] = sum(1 for _, k in part.nodes(data="kind") if k == "gpu")
    return part


def _order(node):
    text = str(node)
    digits = "".join(c for c in text if c.isdigit())
    return (text.rstrip("0123456789"), int(digits) if digits else 0, text)


def _tier(graph, node) -> int:
    """Height in the picture: GPUs -1, switches their tier, OCS above every switch."""
    d = graph.nodes[node]
    return d["tier"] if d["kind"] == "switch" else (-1 if d["kind"] == "gpu" else 99)


def _label(graph, node) -> str:
    d = graph.nodes[node]
    if d["kind"] == "switch":
        return f"{TIER_PLURALS.get(d['tier'], 'switches')} (tier {d['tier']})"
    return "OCS"


def _label_order(label: str):
    return (label == "OCS", label.split("tier ")[-1])


def layout(graph: nx.Graph) -> tuple[dict, str]:
    """Node positions ``{node: (x, y)}`` and the layout's name (``"tiers"``, ``"two rows"``,
    ``"grid"`` or ``"circle"``).

    >>> from topologies import fat_tree, ring
    >>> pos, how = layout(fat_tree(4))
    >>> how, pos["gpu0"][1] < pos["leaf0"][1] < pos["spine0"][1] < pos["core0"][1]
    ('tiers', True)
    >>> layout(ring(8))[1]
    'circle'
    """
    kinds = Counter(k for _, k in graph.nodes(data="kind"))
    gpus = gpu_nodes(graph)
    if kinds.get("ocs"):
        pos = _row(gpus, 0.0)
        pos.update(_row(sorted((n for n in graph if graph.nodes[n]["kind"] == "ocs"), key=_order),
                        1.0))
        return pos, "two rows"
    if kinds.get("switch"):
        return _tiers(graph, gpus), "tiers"
    if "dims" in graph.graph:
        return _grid(graph, gpus), "grid"
    n = len(gpus)
    return {g: (math.sin(2 * math.pi * i / n), math.cos(2 * math.pi * i / n))
            for i, g in enumerate(gpus)}, "circle"


def _row(nodes, y, width=1.0):
    n = len(nodes)
    return {v: ((i + 0.5) / n * width if n else 0.5, y) for i, v in enumerate(nodes)}


def _gpu_row(graph, gpus):
    """GPUs along y = 0, with a gap wherever the group (domain / Lite group) changes."""
    slots, last, x = {}, None, 0.0
    for g in gpus:
        group = graph.nodes[g].get("group")
        if last is not None and group != last:
            x += 1.0
        slots[g] = x
        x += 1.0
        last = group
    width = max(x - 1.0, 1.0)
    return {g: ((v + 0.5) / (width + 1.0), 0.0) for g, v in slots.items()}


def _cluster_groups(graph, gpus, pos, aspect):
    """Put the GPUs of each directly wired group (a Lite group's mesh) on a small ring at
    the group's place in the row, so that the mesh shows; ``aspect`` = x units per y unit
    on paper."""
    groups: dict = {}
    for g in gpus:
        if "group" in graph.nodes[g]:
            groups.setdefault(graph.nodes[g]["group"], []).append(g)
    meshed = any(graph.nodes[v]["kind"] == "gpu" for g in gpus for v in graph._adj[g])
    if not meshed or len(groups) < 1:
        return
    for members in groups.values():
        if len(members) < 3:
            continue
        xs = [pos[m][0] for m in members]
        cx, rx = sum(xs) / len(xs), (max(xs) - min(xs)) / 2
        ry = rx * aspect
        for i, m in enumerate(members):
            angle = math.pi / 2 + 2 * math.pi * i / len(members)
            pos[m] = (cx + rx * math.cos(angle), ry * math.sin(angle))


def _tiers(graph, gpus):
    pos = _gpu_row(graph, gpus)
    tiers: dict = {}
    for n, d in graph.nodes(data=True):
        if d["kind"] == "switch":
            tiers.setdefault(d["tier"], []).append(n)
    levels = sorted(tiers)
    for level, tier in enumerate(levels, start=1):
        members = sorted(tiers[tier], key=_order)
        if tier == 0:  # a scale-up switch sits above the middle of its GPUs
            for m in members:
                xs = [pos[g][0] for g in graph._adj[m] if g in pos and graph.nodes[g]["kind"] == "gpu"]
                pos[m] = (sum(xs) / len(xs) if xs else 0.5, level)
        else:
            pos.update(_row(members, level))
    # paper: ~9 inches for x in [0, 1], ~6.5 inches for y in [0, levels]
    _cluster_groups(graph, gpus, pos, aspect=9.0 / 6.5 * max(1, len(levels)))
    for m in [n for n in pos if graph.nodes[n]["kind"] == "switch" and graph.nodes[n]["tier"] == 0]:
        xs = [pos[g][0] for g in graph._adj[m] if graph.nodes[g]["kind"] == "gpu"]
        if xs:
            pos[m] = (sum(xs) / len(xs), pos[m][1])
    return pos


def _coords(graph):
    """Picture coordinates (depth, row, column) of each torus GPU from ``graph['dims']``:
    the smallest side of a 3D torus becomes the depth (slices behind one another)."""
    from topologies.direct import parse_dims

    sides = parse_dims(graph.graph["dims"])
    sides = (1,) * (3 - len(sides)) + sides
    depth = min(range(3), key=lambda a: (sides[a], a)) if sides[0] > 1 else 0
    others = [a for a in range(3) if a != depth]
    out = {}
    for i, g in enumerate(gpu_nodes(graph)):
        coord, rest = [0, 0, 0], i
        for axis in (2, 1, 0):
            coord[axis] = rest % sides[axis]
            rest //= sides[axis]
        out[g] = (coord[depth], coord[others[0]], coord[others[1]])
    return out, (sides[depth], sides[others[0]], sides[others[1]])


def _grid(graph, gpus):
    """Rows and columns of each slice on a grid; the slices of a 3D torus stacked
    diagonally behind one another (a small oblique offset per slice)."""
    coords, (slices, _, _) = _coords(graph)
    step = min(0.3, 0.8 / slices)
    return {g: (c + s * step, -r + s * step * 0.75) for g, (s, r, c) in coords.items()}


def _wraps(graph) -> set:
    """Torus links that wrap around (their ends differ by more than one step in a side)."""
    if "dims" not in graph.graph:
        return set()
    coords, _ = _coords(graph)
    return {(u, v) for u, v in graph.edges()
            if any(abs(a - b) > 1 for a, b in zip(coords[u], coords[v], strict=True))}


def _widths(graph, edges):
    bws = [d["bandwidth"] for *_, d in edges]
    lo, hi = min(bws), max(bws)
    span = math.log(hi / lo) if hi > lo else 1.0
    return [0.6 + 3.4 * (math.log(b / lo) / span if hi > lo else 0.5) for b in bws], lo, hi


PLANE_COLOURS = ("#8e24aa", "#00897b", "#e53935", "#3949ab", "#f4511e", "#7cb342", "#5e35b1",
                 "#039be5", "#6d4c41", "#d81b60")


def _plane_colour(part, ocs_node):
    """One colour per OCS, shared by the circuits it carries."""
    planes = sorted((n for n, k in part.nodes(data="kind") if k == "ocs"), key=_order)
    return PLANE_COLOURS[planes.index(ocs_node) % len(PLANE_COLOURS)]


def _node_colour(d):
    if d["kind"] == "switch":
        return TIER_COLOURS.get(d["tier"], "#455a64")
    return KIND_COLOURS[d["kind"]]


def plot(graph: nx.Graph, path, *, title: str | None = None) -> str:
    """Draw ``graph`` to ``path``, atomically; return the path. The path's suffix decides the
    format (``.png``, ``.svg`` or ``.pdf``: :func:`compute.outputs.figure_format`); another
    suffix, or a path that cannot be written (:func:`compute.outputs.check_file_path`), is a
    UserError before anything is drawn. See the module docstring for the layouts."""
    validate(graph, check_connected=False)
    path = check_file_path(path, "figure")
    fmt = figure_format(path)
    from matplotlib.figure import Figure

    part, note = representative(graph)
    pos, how = layout(part)
    gpus = gpu_nodes(part)
    size_in = {"circle": (9, 9), "two rows": (12, 5.5)}.get(how, (12, 7.5))
    fig = Figure(figsize=size_in, dpi=120)
    ax = fig.add_subplot()
    ax.set_axis_off()
    shaded = _shade_groups(ax, part, pos, how)
    edges = list(part.edges(data=True))
    media = Counter()
    wraps = _wraps(part) if how == "grid" else set()
    if edges:
        widths, lo, hi = _widths(part, edges)
        for (u, v, d), w in zip(edges, widths, strict=True):
            media[d["medium"]] += 1
            _edge(ax, pos, u, v, d, w, how, part, wraps)
    size = max(12.0, min(220.0, 9000.0 / max(1, len(part))))
    circuits = media.get("ocs-circuit", 0)
    for kind_key in ("ocs", "switch", "gpu"):
        nodes = [n for n, d in part.nodes(data=True) if d["kind"] == kind_key]
        if not nodes:
            continue
        xs, ys = zip(*(pos[n] for n in nodes), strict=True)
        ax.scatter(xs, ys, s=size * (1.6 if kind_key != "gpu" else 1.0),
                   c=[_plane_colour(part, n) if kind_key == "ocs" and circuits
                      else _node_colour(part.nodes[n]) for n in nodes],
                   marker="o" if kind_key == "gpu" else ("D" if kind_key == "ocs" else "s"),
                   edgecolors="white", linewidths=0.6, zorder=3)
    clustered = how == "tiers" and len({pos[g][1] for g in gpus}) > 1
    for n in part if len(part) <= 48 else ():
        is_gpu = part.nodes[n]["kind"] == "gpu"
        if is_gpu and clustered:
            continue
        ax.annotate(str(n), pos[n], xytext=(0, -11) if is_gpu else (11, 0),
                    textcoords="offset points", ha="center" if is_gpu else "left",
                    va="center", fontsize=7, zorder=4, annotation_clip=False)
    handles = _legend(part, media, edges and (lo, hi), shaded)
    if wraps:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color="#9e9e9e", ls="--", label="wrap-around link"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
              frameon=False)
    head = title or graph.graph.get("name") or "fabric"
    spec = graph.graph.get("spec")
    ax.set_title(head + (f"\n{spec}" if spec and spec != head else ""), fontsize=11)
    if note:
        ax.text(1.01, 0.0, note, transform=ax.transAxes, fontsize=8, va="bottom",
                ha="left", bbox={"boxstyle": "round", "fc": "#f5f5f5", "ec": "#bdbdbd"})
    if how in ("circle", "grid"):
        ax.set_aspect("equal")
    ax.margins(0.06)
    fig.tight_layout()
    return atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, bbox_inches="tight"),
                        what="figure")


def _edge(ax, pos, u, v, d, width, how, part, wraps):
    from matplotlib.patches import FancyArrowPatch

    colour = MEDIUM_COLOURS.get(d["medium"], "#9e9e9e")
    if d["medium"] == "ocs-circuit" and d.get("via", "").split(",")[0] in part:
        colour = _plane_colour(part, d["via"].split(",")[0])
    (x1, y1), (x2, y2) = pos[u], pos[v]
    wrap = how == "grid" and ((u, v) in wraps or (v, u) in wraps)
    in_row = how in ("tiers", "two rows") and y1 == y2
    if d["medium"] == "ocs-circuit" or wrap or in_row:
        # links along a row (GPU to GPU) bow below it; torus wrap-arounds bow outwards
        rad = 0.25 if wrap else (0.5 if in_row else 0.35)
        if in_row and x1 < x2:
            rad = -rad
        ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), connectionstyle=f"arc3,rad={rad}",
                                     arrowstyle="-", color=colour,
                                     lw=width * (0.6 if wrap else 1.0),
                                     alpha=0.35 if wrap else 0.6,
                                     linestyle="--" if wrap else "-", zorder=1))
        return
    alpha = 0.75 if part.number_of_edges() < 400 else 0.35
    ax.plot([x1, x2], [y1, y2], color=colour, lw=width, alpha=alpha, zorder=1,
            solid_capstyle="round")


def _shade_groups(ax, part, pos, how):
    """A translucent band behind the GPUs of each Lite group / scale-up domain."""
    from matplotlib.patches import Ellipse, FancyBboxPatch

    groups: dict = {}
    for g in gpu_nodes(part):
        if "group" in part.nodes[g]:
            groups.setdefault(part.nodes[g]["group"], []).append(g)
    if len(groups) < 2 or how == "two rows":
        return False
    for i, members in enumerate(groups.values()):
        if len(members) < 2:
            continue
        xs, ys = zip(*(pos[m] for m in members), strict=True)
        colour = "#ffe082" if i % 2 == 0 else "#ffcc80"
        if how == "tiers" and max(ys) > min(ys):  # a group drawn as a small ring
            cx, cy = sum(xs) / len(xs), sum(ys) / len(ys)
            ax.add_patch(Ellipse((cx, cy), 1.6 * (max(xs) - min(xs)), 1.6 * (max(ys) - min(ys)),
                                 fc=colour, ec="#ffa000", lw=0.8, alpha=0.7, zorder=0))
        elif how == "tiers":
            pad = 0.35 * (max(xs) - min(xs)) / max(1, len(members) - 1)
            ax.add_patch(FancyBboxPatch((min(xs) - pad, -0.06), max(xs) - min(xs) + 2 * pad,
                                        0.12, boxstyle="round,pad=0.01", fc=colour,
                                        ec="#ffa000", lw=0.8, alpha=0.7, zorder=0))
        else:
            ax.plot(xs, ys, color=colour, lw=16, alpha=0.6, solid_capstyle="round",
                    solid_joinstyle="round", zorder=0)
    return True


def _legend(part, media, span, shaded):
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
        label = f"{medium} ({media[medium]} links)"
        if medium == "ocs-circuit":
            label += ", coloured by OCS"
        handles.append(Line2D([], [], color=MEDIUM_COLOURS.get(medium, "#9e9e9e"), lw=2,
                              label=label))
    if span:
        lo, hi = span
        handles.append(Line2D([], [], color="#424242", lw=0.6,
                              label=f"thinnest: {lo / 1e9:.4g} GB/s per direction"))
        if hi > lo:
            handles.append(Line2D([], [], color="#424242", lw=4.0,
                                  label=f"widest: {hi / 1e9:.4g} GB/s per direction"))
    return handles
