"""Where each node of a fabric's picture goes (:mod:`topologies.draw`): a layout for each
kind of fabric, and the representative part of a fabric too large to draw whole.

Layouts: switched fabrics stacked by tier (GPUs at the bottom, then scale-up switches,
leaves, spines, cores); a circle for rings, meshes and other switchless fabrics; a grid for
tori (a 3D torus as its slices offset behind one another); GPUs and OCS in two rows for the fibre cabling
of an optical circuit-switched fabric; and for realized circuits (GPU-GPU edges with
``medium="ocs-circuit"`` and ``via``, :func:`topologies.optical.realize`) each group of GPUs
joined by circuits (an instance) on a circle of its own, the OCS above. A fabric of more
than :data:`MAX_GPUS` GPUs is drawn as one representative part (:func:`representative`: the
first pod's first GPUs and the switches above them, taken in turns so that each keeps a
link upwards).

Positions are in data coordinates; nothing here imports matplotlib.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

import networkx as nx

from topologies.draw_labels import node_order
from topologies.schema import gpu_nodes

#: Node positions in data coordinates.
Positions = dict[Hashable, tuple[float, float]]

MAX_GPUS = 512          # drawn node by node up to this many GPUs
SAMPLE_GPUS = 64        # GPUs in the representative part of a larger fabric
SAMPLE_SWITCHES = 16    # switches per tier in the representative part
CIRCLE = 0.3          # radius of a circuit group's circle in its unit cell
TIER_PLURALS = {0: "scale-up switches", 1: "leaves / planes", 2: "spines", 3: "cores"}


def representative(graph: nx.Graph) -> tuple[nx.Graph, str]:
    """The part of ``graph`` to draw and a note of what was left out ('' if nothing).

    Up to :data:`MAX_GPUS` GPUs the whole graph; beyond, the first :data:`SAMPLE_GPUS` GPUs
    (the builders number physically close GPUs together: the first servers of the first
    pod), the switches and OCS above them tier by tier (at most :data:`SAMPLE_SWITCHES`
    per tier) and the links among those. A torus keeps its first 8 positions per side.

    >>> from topologies import fat_tree
    >>> part, note = representative(fat_tree(16))   # 1,024 GPUs
    >>> part.graph["gpus"], note.splitlines()[0]
    (64, 'representative part: 64 of 1,024 GPUs')
    """
    gpus = gpu_nodes(graph)
    if len(gpus) <= MAX_GPUS:
        return graph, ""
    if "dims" in graph.graph and not any(k != "gpu" for _, k in graph.nodes(data="kind")):
        from topologies.direct import parse_dims

        sides = parse_dims(graph.graph["dims"])
        keep_sides = tuple(min(s, 8) for s in sides)
        corner = []
        for i in range(len(gpus)):
            coords, rest = [], i
            for s in reversed(sides):
                coords.append(rest % s)
                rest //= s
            if all(c < k for c, k in zip(reversed(coords), keep_sides, strict=True)):
                corner.append(f"gpu{i}")
        part = _induced(graph, corner)
        part.graph["dims"] = "x".join(map(str, keep_sides))
        return part, (f"representative part: {len(corner)} of {len(gpus):,} GPUs,\n"
                      f"a{'n' * part.graph['dims'].startswith('8')} {part.graph['dims']} corner "
                      f"of the {graph.graph['dims']} torus;\n"
                      f"{part.number_of_edges():,} of {graph.number_of_edges():,} links drawn "
                      "(none leaving the corner)")
    keep = set(gpus[:SAMPLE_GPUS])
    tiers = sorted({_tier(graph, n) for n, k in graph.nodes(data="kind") if k != "gpu"})
    for tier in tiers:  # climb: each tier's switches above what is kept, a few of them
        keep |= _above(graph, keep, tier)
    part = _induced(graph, keep)
    counts = Counter(_label(graph, n) for n in graph if graph.nodes[n]["kind"] != "gpu")
    shown = Counter(_label(graph, n) for n in part if graph.nodes[n]["kind"] != "gpu")
    lines = [f"representative part: {part.graph['gpus']} of {len(gpus):,} GPUs"]
    lines += [f"{shown[k]} of {counts[k]:,} {k}" for k in sorted(counts, key=_label_order)]
    lines += [f"{part.number_of_edges():,} of {graph.number_of_edges():,} links drawn "
              "(legend: the part's cables)"]
    return part, "\n".join(lines)


def _above(graph: nx.Graph, keep: set, tier: int) -> set:
    """At most :data:`SAMPLE_SWITCHES` switches (or OCS) of ``tier`` above the kept nodes,
    taken in turns: each kept node below (lowest tier first, in name order) takes its next
    neighbour of ``tier`` not yet taken, round after round. So every kept switch keeps a
    link upwards where it can: the first 16 cores of a k=64 fat tree all hang off spine0,
    one core for each of 16 spines shows how the spines reach the cores."""
    below = sorted((n for n in keep if _tier(graph, n) < tier),
                   key=lambda n: (_tier(graph, n), node_order(n)))
    ups = [iter(sorted((v for v in graph._adj[n] if graph.nodes[v]["kind"] != "gpu"
                        and _tier(graph, v) == tier), key=node_order)) for n in below]
    taken: dict = {}  # insertion-ordered
    while ups and len(taken) < SAMPLE_SWITCHES:
        alive = []
        for up in ups:
            for v in up:
                if v not in taken:
                    taken[v] = None
                    alive.append(up)
                    break
            if len(taken) == SAMPLE_SWITCHES:
                break
        ups = alive
    return set(taken)


def _induced(graph: nx.Graph, keep: Iterable[Hashable]) -> nx.Graph:
    """The subgraph on ``keep``, nodes in the graph's own order (GPU numbering kept)."""
    keep = set(keep)
    part = nx.Graph(**graph.graph)
    part.add_nodes_from((n, d) for n, d in graph.nodes(data=True) if n in keep)
    part.add_edges_from((u, v, d) for u, v, d in graph.edges(keep, data=True)
                        if u in keep and v in keep)
    part.graph["gpus"] = sum(1 for _, k in part.nodes(data="kind") if k == "gpu")
    return part


def _tier(graph: nx.Graph, node: Hashable) -> int:
    """Height in the picture: GPUs -1, switches their tier, OCS above every switch."""
    d = graph.nodes[node]
    return d["tier"] if d["kind"] == "switch" else (-1 if d["kind"] == "gpu" else 99)


def _label(graph: nx.Graph, node: Hashable) -> str:
    d = graph.nodes[node]
    if d["kind"] == "switch":
        return f"{TIER_PLURALS.get(d['tier'], 'switches')} (tier {d['tier']})"
    return "OCS"


def _label_order(label: str) -> tuple[bool, str]:
    return (label == "OCS", label.split("tier ")[-1])


def _is_circuits(graph: nx.Graph) -> bool:
    """Realized circuits: OCS nodes and only circuit (GPU-GPU) edges."""
    return (any(k == "ocs" for _, k in graph.nodes(data="kind"))
            and all(m == "ocs-circuit" for *_, m in graph.edges(data="medium")))


def layout(graph: nx.Graph) -> tuple[Positions, str]:
    """Node positions ``{node: (x, y)}`` and the layout's name (``"tiers"``, ``"two rows"``,
    ``"circuits"``, ``"grid"`` or ``"circle"``).

    >>> from topologies import fat_tree, ocs, ring
    >>> pos, how = layout(fat_tree(4))
    >>> how, pos["gpu0"][1] < pos["leaf0"][1] < pos["spine0"][1] < pos["core0"][1]
    ('tiers', True)
    >>> layout(ring(8))[1], layout(ocs(gpus=8, ports=2))[1]
    ('circle', 'two rows')
    >>> pos, how = layout(ocs(gpus=8, ports=2, logical="ring"))
    >>> how, round(math.dist(pos["gpu0"], pos["gpu1"]), 3) == round(math.dist(pos["gpu3"], pos["gpu4"]), 3)
    ('circuits', True)
    """
    kinds = Counter(k for _, k in graph.nodes(data="kind"))
    gpus = gpu_nodes(graph)
    ocs_nodes = sorted((n for n in graph if graph.nodes[n]["kind"] == "ocs"), key=node_order)
    if ocs_nodes and not kinds.get("switch"):
        if _is_circuits(graph):
            return _circuits(graph, gpus), "circuits"
        pos = _row(gpus, 0.0)
        pos.update(_row(ocs_nodes, 1.0))
        return pos, "two rows"
    if kinds.get("switch"):
        pos = _tiers(graph, gpus)
        if ocs_nodes:   # switches and OCS in one fabric (a user's file): the OCS on top
            pos.update(_row(ocs_nodes, max(y for _, y in pos.values()) + 1.0))
        return pos, "tiers"
    if "dims" in graph.graph:
        return _grid(graph, gpus), "grid"
    n = len(gpus)
    return {g: (math.sin(2 * math.pi * i / n), math.cos(2 * math.pi * i / n))
            for i, g in enumerate(gpus)}, "circle"


# --- circuits: one circle per group of GPUs joined by circuits -------------------------


def circuit_groups(graph: nx.Graph) -> tuple[list[list[Hashable]], list[Hashable]]:
    """The groups of GPUs joined by circuits (connected components of the circuit edges;
    each in ring order when it is a cycle, else in GPU order) and the GPUs without any
    circuit.

    >>> from topologies import ocs, realize
    >>> g = realize(ocs(gpus=6, ports=3), "0-2;2-1;1-0;3-4")
    >>> circuit_groups(g)
    ([['gpu0', 'gpu1', 'gpu2'], ['gpu3', 'gpu4']], ['gpu5'])
    """
    gpus = gpu_nodes(graph)
    rank = {g: i for i, g in enumerate(gpus)}
    links = nx.Graph()
    links.add_nodes_from(gpus)
    links.add_edges_from((u, v) for u, v, m in graph.edges(data="medium")
                         if m == "ocs-circuit" and u in rank and v in rank)
    groups, alone = [], []
    for comp in nx.connected_components(links):
        members = sorted(comp, key=rank.__getitem__)
        if len(members) == 1:
            alone.append(members[0])
            continue
        if len(members) > 2 and all(links.degree(m) == 2 for m in members):  # a cycle: walk it
            walk, prev = [members[0]], None
            nxt = min(links[members[0]], key=rank.__getitem__)
            while nxt != members[0]:
                walk.append(nxt)
                prev, nxt = nxt, next(w for w in links[nxt] if w not in (walk[-2], prev))
            members = walk
        groups.append(members)
    groups.sort(key=lambda ms: min(rank[m] for m in ms))
    return groups, sorted(alone, key=rank.__getitem__)


def _grid_shape(count: int, width: float = 8.5, height: float = 6.0) -> tuple[int, int]:
    """Columns and rows of square cells for ``count`` circles in a width x height box that
    make the cells largest (fewer rows on a tie)."""
    best = (0.0, 1, count)
    for cols in range(1, max(count, 1) + 1):
        rows = math.ceil(count / cols)
        cell = min(width / cols, height / rows)
        if cell > best[0] + 1e-12:
            best = (cell, cols, rows)
    return best[1], best[2]


def _circuits(graph: nx.Graph, gpus: list[Hashable]) -> Positions:
    """Each circuit group on a circle of radius :data:`CIRCLE` in a unit cell of a grid (first GPU at
    the top, clockwise), GPUs without circuits in a row below, the OCS in a row above."""
    groups, alone = circuit_groups(graph)
    cols, rows = _grid_shape(len(groups)) if groups else (1, 0)
    pos: Positions = {}
    for k, members in enumerate(groups):
        cx, cy = k % cols + 0.5, -(k // cols) - 0.5
        n = len(members)
        start = math.pi if n == 2 else math.pi / 2
        for i, m in enumerate(members):
            angle = start - 2 * math.pi * i / n
            pos[m] = (cx + CIRCLE * math.cos(angle), cy + CIRCLE * math.sin(angle))
    pos.update(_row(alone, -rows - 0.2, width=cols))
    planes = sorted((n for n, k in graph.nodes(data="kind") if k == "ocs"), key=node_order)
    pos.update(_row(planes, 0.02, width=cols - 0.25))  # room for the last one's label
    return pos


# --- rows, tiers, grids --------------------------------------------------------------


def _row(nodes: Sequence[Hashable], y: float, width: float = 1.0) -> Positions:
    n = len(nodes)
    return {v: ((i + 0.5) / n * width if n else 0.5, y) for i, v in enumerate(nodes)}


def _gpu_row(graph: nx.Graph, gpus: list[Hashable]) -> Positions:
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


def _cluster_groups(graph: nx.Graph, gpus: list[Hashable], pos: Positions,
                    aspect: float) -> None:
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
            angle = -math.pi / 2 - 2 * math.pi * i / len(members)  # first at the bottom
            pos[m] = (cx + rx * math.cos(angle), ry * math.sin(angle))


def _tiers(graph: nx.Graph, gpus: list[Hashable]) -> Positions:
    pos = _gpu_row(graph, gpus)
    tiers: dict = {}
    for n, d in graph.nodes(data=True):
        if d["kind"] == "switch":
            tiers.setdefault(d["tier"], []).append(n)
    levels = sorted(tiers)
    for level, tier in enumerate(levels, start=1):
        members = sorted(tiers[tier], key=node_order)
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


def _coords(graph: nx.Graph) -> tuple[dict[Hashable, tuple[int, int, int]], tuple[int, int, int]]:
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


def _grid(graph: nx.Graph, gpus: list[Hashable]) -> Positions:
    """Rows and columns of each slice on a grid; the slices of a 3D torus stacked
    diagonally behind one another (a small oblique offset per slice)."""
    coords, (slices, _, _) = _coords(graph)
    step = min(0.3, 0.8 / slices)
    return {g: (c + s * step, -r + s * step * 0.75) for g, (s, r, c) in coords.items()}


def wrap_edges(graph: nx.Graph) -> set[tuple[Hashable, Hashable]]:
    """Torus links that wrap around (their ends differ by more than one step in a side)."""
    if "dims" not in graph.graph:
        return set()
    coords, _ = _coords(graph)
    return {(u, v) for u, v in graph.edges()
            if any(abs(a - b) > 1 for a, b in zip(coords[u], coords[v], strict=True))}
