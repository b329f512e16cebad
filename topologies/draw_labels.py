"""Node symbol sizes and label placement for :mod:`topologies.draw`: symbols shrink to
fit the space between neighbours; labels are placed, for each node, at the first of a
ring of candidate spots around its symbol that collides with no line, symbol or label
already placed (display coordinates, measured with the renderer's own text sizes), and
left out beyond :data:`MAX_LABELS` per class.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

import networkx as nx

from compute.units import counted
from topologies.schema import circuit_via

__all__ = ["MARKERS", "MAX_LABELS", "node_order", "place_labels", "size_nodes"]

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure

#: Node positions in data coordinates.
Positions = dict[Hashable, tuple[float, float]]

MAX_LABELS = 64         # labels per class (GPUs, each switch tier) at most
CIRCUIT_DOT = 0.4       # GPU symbol diameter on a circuit circle / distance between neighbours
LABEL_SIZE = 7          # points
LABEL_GAP = 2.5         # points between a symbol and its label
CLEARANCE = 1.5         # points a label keeps from lines and symbols
OWN_MARGIN = 1.2        # another symbol must be this much farther from a label than its own
MARKERS = {"gpu": "o", "ocs": "D", "switch": "s"}
#: Half the height of a marker's bounding box per unit of its size (sqrt of the scatter
#: size in points^2): a diamond ("D") is a square turned by 45 degrees.
MARKER_HALF = {"o": 0.5, "s": 0.5, "D": 0.5 * math.sqrt(2.0)}


def node_order(node: Hashable) -> tuple[str, int, str]:
    """Sort key of a node name: its letters, then its number as a number (gpu2 < gpu10)."""
    text = str(node)
    digits = "".join(c for c in text if c.isascii() and c.isdigit())   # int() refuses '²'
    return (text.rstrip("0123456789"), int(digits) if digits else 0, text)


# --- node sizes and labels -------------------------------------------------------------


def _display(ax: Axes, points: Sequence[tuple[float, float]]) -> np.ndarray:
    """Data coordinates to display pixels, an (n, 2) array."""
    import numpy as np

    return ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2))


def _nearest(xy: np.ndarray) -> float:
    """The smallest distance between two of the points (rows of ``xy``)."""
    import numpy as np

    d = np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=2)
    d[np.diag_indices(len(xy))] = np.inf
    return float(d.min())


def size_nodes(ax: Axes, scatters: dict, pos: Positions, how: str,
                groups: list[list[Hashable]]) -> None:
    """Shrink each kind's symbols to at most 0.9 of the closest distance between two of
    them (GPUs on circuit circles: :data:`CIRCUIT_DOT` of the distance between circle
    neighbours), so that symbols do not run into one another and the circuits between
    neighbours show; never below 2 points across."""
    import numpy as np

    to_pt = 72.0 / ax.figure.dpi
    for kind_key, (nodes, coll) in scatters.items():
        default = math.sqrt(coll.get_sizes()[0])
        if how == "circuits" and kind_key == "gpu":
            ring = [np.linalg.norm(np.diff(_display(ax, [pos[m] for m in (*ms, ms[0])]), axis=0),
                                   axis=1).min() for ms in groups]
            if not ring:
                continue
            diameter = CIRCUIT_DOT * min(ring) * to_pt
        elif len(nodes) < 2:
            continue
        else:
            diameter = 0.9 * _nearest(_display(ax, [pos[n] for n in nodes])) * to_pt
        coll.set_sizes([max(2.0, min(default, diameter)) ** 2])


def _segments(ax: Axes) -> np.ndarray:
    """Every drawn line (links, arcs, circuits; not the group shading) as display-pixel
    segments, an (n, 4) array of x1, y1, x2, y2."""
    import numpy as np
    from matplotlib.collections import LineCollection
    from matplotlib.patches import FancyArrowPatch

    out = [np.zeros((0, 4))]
    for line in ax.lines:
        if line.get_gid() != "shade":
            xy = line.get_transform().transform(line.get_xydata())
            out.append(np.hstack([xy[:-1], xy[1:]]))
    for coll in ax.collections:
        if isinstance(coll, LineCollection) and coll.get_segments():
            ends = np.asarray([np.asarray(seg)[[0, -1]] for seg in coll.get_segments()],
                              dtype=float)
            xy = coll.get_transform().transform(ends.reshape(-1, 2)).reshape(-1, 4)
            out.append(xy)
    for patch in ax.patches:
        if isinstance(patch, FancyArrowPatch):
            path = patch.get_transform().transform_path(patch.get_path())
            for poly in path.to_polygons(closed_only=False):
                ring = np.asarray(poly, dtype=float)
                out.append(np.hstack([ring[:-1], ring[1:]]))

    return np.vstack(out)


def _marker_boxes(ax: Axes, scatters: dict, pos: Positions) -> tuple[np.ndarray, dict]:
    """Each symbol's bounding box in display pixels (an (n, 4) array x0, y0, x1, y1) and
    each node's centre and half-size ``{node: (x, y, half)}``."""
    import numpy as np

    px = ax.figure.dpi / 72.0
    boxes = [np.zeros((0, 4))]
    centres: dict[Hashable, tuple[float, float, float]] = {}
    for kind_key, (nodes, coll) in scatters.items():
        marker = MARKERS[kind_key]
        half = (MARKER_HALF[marker] * math.sqrt(coll.get_sizes()[0]) + 0.3) * px
        xy = _display(ax, [pos[n] for n in nodes])
        boxes.append(np.hstack([xy - half, xy + half]))
        centres.update((n, (float(x), float(y), half)) for n, (x, y) in zip(nodes, xy, strict=True))
    return np.vstack(boxes), centres


def _blocked(boxes: np.ndarray, segs: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """For each box (rows x0, y0, x1, y1 of ``boxes``): whether a segment of ``segs`` (rows
    x1, y1, x2, y2) crosses or lies in it, or it overlaps a rectangle of ``rects``.

    >>> import numpy as np
    >>> boxes = np.array([[0.0, 0.0, 1.0, 1.0], [5.0, 5.0, 6.0, 6.0], [0.0, 3.0, 1.0, 4.0]])
    >>> segs = np.array([[-1.0, 0.5, 2.0, 0.6]])          # crosses the first box only
    >>> rects = np.array([[5.5, 5.5, 9.0, 9.0]])          # overlaps the second only
    >>> _blocked(boxes, segs, rects).tolist()
    [True, True, False]
    """
    import numpy as np

    x0, y0, x1, y1 = (boxes[:, i:i + 1] for i in range(4))
    hit = np.zeros(len(boxes), dtype=bool)
    if len(rects):
        hit |= ((rects[:, 0] < x1) & (rects[:, 2] > x0)
                & (rects[:, 1] < y1) & (rects[:, 3] > y0)).any(axis=1)
    if len(segs):
        sx1, sy1, sx2, sy2 = segs.T
        near = ((np.minimum(sx1, sx2) <= x1) & (np.maximum(sx1, sx2) >= x0)
                & (np.minimum(sy1, sy2) <= y1) & (np.maximum(sy1, sy2) >= y0))
        rows, cols = np.nonzero(near)
        if len(rows):
            dx, dy = (sx2 - sx1)[cols], (sy2 - sy1)[cols]
            bx0, by0, bx1, by1 = boxes[rows].T
            sides = np.stack([dx * (cy - sy1[cols]) - dy * (cx - sx1[cols])
                              for cx, cy in ((bx0, by0), (bx0, by1), (bx1, by0), (bx1, by1))])
            crossing = ~((sides > 0).all(axis=0) | (sides < 0).all(axis=0))
            hit[rows[crossing]] = True
    return hit


def _closer_to_another(boxes: np.ndarray, own: tuple[float, float, float],
                       points: np.ndarray) -> np.ndarray:
    """For each box (rows x0, y0, x1, y1): whether a symbol centre of ``points`` other than
    ``own`` (x, y, half-size) lies within :data:`OWN_MARGIN` times the distance from the
    box's centre to ``own`` (display pixels): such a label reads as the other symbol's, or
    as either's. Before, a tier's label set below and to the right of spine0 sat as near
    spine1 as spine0 (fat-tree:k=8,oversubscription=2).

    >>> import numpy as np
    >>> boxes = np.array([[12.0, -2.0, 30.0, 2.0], [40.0, -12.0, 60.0, -4.0]])
    >>> _closer_to_another(boxes, (0.0, 0.0, 5.0), np.array([[0.0, 0.0], [70.0, 0.0]])).tolist()
    [False, True]
    """
    import numpy as np

    x, y, _ = own
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    mine = np.hypot(cx - x, cy - y)
    others = points[(points[:, 0] != x) | (points[:, 1] != y)]
    if not len(others):
        return np.zeros(len(boxes), dtype=bool)
    near = np.hypot(cx[:, None] - others[None, :, 0], cy[:, None] - others[None, :, 1]).min(axis=1)
    return near < OWN_MARGIN * mine


def _candidate(centre: tuple[float, float, float], angle: float, w: float, h: float,
               gap: float) -> tuple[tuple[float, float, float, float], tuple[float, float], str, str]:
    """The box (display pixels) of a ``w`` x ``h`` label beside a symbol at ``centre``
    (x, y, half-size) in the direction ``angle`` (degrees), its offset from the centre
    and its alignment."""
    x, y, half = centre
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    m = max(abs(c), abs(s))
    ox, oy = c / m * (half + gap), s / m * (half + gap)
    ha = "left" if c > 0.38 else ("right" if c < -0.38 else "center")
    va = "bottom" if s > 0.38 else ("top" if s < -0.38 else "center")
    bx = x + ox - {"left": 0.0, "right": w, "center": w / 2}[ha]
    by = y + oy - {"bottom": 0.0, "top": h, "center": h / 2}[va]
    return (bx, by, bx + w, by + h), (ox, oy), ha, va


ROW_BELOW = (-90, -45, -135, 0, 180, 45, 135, 90)
BESIDE = (0, 180, 90, 45, 135, -45, -135, -90)
GRID = (-45, 135, 45, -135, -90, 90, 0, 180)
RADIAL = (0, 30, -30, 60, -60, 90, -90)  # degrees from straight outwards
INWARD = (180, 150, -150)  # then inside the circle (empty for a ring)
FARTHER = 6.0  # points: a label on a circle may also stand this much farther out


def _strides(n: int) -> list[int]:
    """Label every 1st, 2nd, 4th, 8th, ... node, at most :data:`MAX_LABELS` of them.

    >>> _strides(16), _strides(200)
    ([1, 2, 4, 8, 16], [4, 8, 16, 32, 64, 128, 256])
    """
    out, s = [], 1
    while True:
        if math.ceil(n / s) <= MAX_LABELS:
            out.append(s)
        if s >= n:
            return out
        s *= 2


class _TextSizer:
    """Width and height (display pixels) of a label, from the widths of its characters
    measured once each (plus a pixel for kerning), so that measuring costs nothing per
    label."""

    def __init__(self, fig: Figure, renderer: RendererBase) -> None:
        self.probe = fig.text(0, 0, "", fontsize=LABEL_SIZE)
        self.renderer = renderer
        self.chars: dict[str, float] = {}
        self.bars, self.height = self._extent("||")

    def _extent(self, text: str) -> tuple[float, float]:
        self.probe.set_text(text)
        box = self.probe.get_window_extent(self.renderer)
        return box.width, box.height

    def __call__(self, text: str) -> tuple[float, float]:
        for c in set(text) - self.chars.keys():
            self.chars[c] = self._extent("|" + c + "|")[0] - self.bars
        return sum(self.chars[c] for c in text) + 1.0, self.height

    def close(self) -> None:
        self.probe.remove()


def place_labels(fig: Figure, ax: Axes, renderer: RendererBase, part: nx.Graph,
                  pos: Positions, how: str, scatters: dict, planes: list[Hashable],
                  groups: list[list[Hashable]]) -> None:
    """Label the nodes, each class (a switch tier, the OCS, the GPUs) in turn: the
    smallest stride (every 1st, 2nd, 4th, ... node) at which every label of the class
    finds a side of its symbol where it meets no line, symbol or text, all on the same
    side if one side serves them all, else each on its first free side in a preferred
    order; when no stride fits them all, the stride that fits the most."""
    import numpy as np
    from matplotlib.transforms import ScaledTranslation

    segs = _segments(ax)
    markers, centres = _marker_boxes(ax, scatters, pos)
    boxes = [a.get_window_extent(renderer) for a in (ax.title, ax.get_legend()) if a]
    boxes += [(t.get_bbox_patch() or t).get_window_extent(renderer) for t in ax.texts]

    taken = np.array([[b.x0, b.y0, b.x1, b.y1] for b in boxes]).reshape(-1, 4)
    points = np.array([c[:2] for c in centres.values()]).reshape(-1, 2)
    px = fig.dpi / 72.0
    clear, gap = CLEARANCE * px, LABEL_GAP * px
    sizer = _TextSizer(fig, renderer)

    middle: dict[Hashable, tuple[float, float]] = {}
    if how == "circle":
        middle = dict.fromkeys(pos, tuple(_display(ax, [(0.0, 0.0)])[0]))
    for ms in groups:
        cx = sum(pos[m][0] for m in ms) / len(ms)
        cy = sum(pos[m][1] for m in ms) / len(ms)
        middle.update(dict.fromkeys(ms, tuple(_display(ax, [(cx, cy)])[0])))

    def angles(node: Hashable) -> Sequence[tuple[float, float]]:
        """The sides to try, in order: (direction in degrees, gap in pixels)."""
        out = [(a, gap) for a in directions(node)]
        if node in middle:
            base = directions(node)[0]
            out += [(a, gap + FARTHER * px) for a in directions(node)]
            out += [(base + a, gap + f * px) for f in (0.0, FARTHER) for a in INWARD]
        return out

    def directions(node: Hashable) -> Sequence[float]:
        if part.nodes[node]["kind"] != "gpu":
            return BESIDE
        if node in middle:  # radially outwards from its circle's centre
            x, y, _ = centres[node]
            base = math.degrees(math.atan2(y - middle[node][1], x - middle[node][0]))
            return [base + d for d in RADIAL]
        return GRID if how == "grid" else ROW_BELOW

    circuits: Counter = Counter()
    for u, v, d in part.edges(data=True):
        circuits.update(circuit_via(u, v, d))

    def text_of(node: Hashable) -> str:
        if how == "circuits" and node in planes:
            return f"{node}: {counted(circuits[node], 'circuit')}"
        return str(node)

    sides_of: dict[Hashable, list] = {}
    closer_of: dict[Hashable, np.ndarray] = {}

    def sides(node: Hashable) -> list:
        """Each preferred side's (node, box, offset, ha, va), or None where a line, a
        symbol or an earlier text is in the way (a class's earlier labels aside)."""
        if node not in sides_of:
            w, h = sizer(text_of(node))
            options = [_candidate(centres[node], a, w, h, g) for a, g in angles(node)]
            boxes = np.array([o[0] for o in options])
            grown = boxes + np.array([-clear, -clear, clear, clear])
            blocked = _blocked(grown, segs, markers) | _blocked(boxes, segs[:0], taken)
            closer_of[node] = (_closer_to_another(boxes, centres[node], points)
                               if part.nodes[node]["kind"] != "gpu" else np.zeros(len(boxes), bool))
            sides_of[node] = [None if b else (node, *o) for o, b in zip(options, blocked,
                                                                        strict=True)]
        return sides_of[node]

    def attempt(nodes: list, side: int | None, lone: bool) -> list:
        """Labels of ``nodes`` that fit: all on preferred side number ``side`` (stop at
        the first that does not), or each on its first free side (None). ``lone``: the
        labels do not stand beside every node of a row on one side, so none may sit
        about as near another switch as its own (:func:`_closer_to_another`)."""
        chosen: list = []
        for node in nodes:
            options = sides(node)
            got = None
            picks = [side] if side is not None else range(len(options))
            for option in (options[i] for i in picks if not (lone and closer_of[node][i])):
                if option is not None:
                    x0, y0, x1, y1 = option[1]
                    if not any(a < x1 and c > x0 and b < y1 and d > y0
                               for _, (a, b, c, d), *_ in chosen):
                        got = option
                        break
            if got is None and side is not None:
                return chosen
            if got:
                chosen.append(got)
        return chosen

    classes: dict = {}
    for n in sorted(centres, key=node_order):
        d = part.nodes[n]
        classes.setdefault((d["kind"] == "gpu", d.get("tier", -1)), []).append(n)
    for key in sorted(classes, key=lambda k: (k[0], -k[1])):  # switches top down, then GPUs
        members: list = classes[key]
        best: list = []
        sides_of.clear()  # the texts taken so far changed
        for stride in _strides(len(members)):
            nodes = members[::stride]
            found = None
            for side in [*range(len(angles(members[0]))), None]:
                chosen = attempt(nodes, side, stride > 1 or side is None)
                if len(chosen) > len(best):
                    best = chosen
                if len(chosen) == len(nodes):
                    found = chosen
                    break
            if found is not None:
                best = found
                break
        for node, _box, (ox, oy), ha, va in best:
            shift = ScaledTranslation(ox / px / 72.0, oy / px / 72.0, fig.dpi_scale_trans)
            ax.text(*pos[node], text_of(node), transform=ax.transData + shift, ha=ha, va=va,
                    fontsize=LABEL_SIZE, zorder=4, clip_on=False, gid="label")
        if best:
            taken = np.vstack([taken, [b for _, b, *_ in best]])
    sizer.close()
