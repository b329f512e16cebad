"""Direct-connect fabrics: GPUs cabled to each other with no switch (ring, full mesh, 2D/3D
torus), and Lite groups (every big GPU of a base fabric replaced by a full mesh of Lites).

In a direct fabric a GPU's scale-up bandwidth is split evenly over its ports, one port per
neighbour: ``bandwidth`` (bytes/s per direction, default the GPU's ``scaleup_bandwidth``) is
the GPU's total, and each of its ``d`` links carries ``bandwidth / d``. Where two ports of a
GPU reach the same neighbour (a ring of 2, a torus side of 2) the two cables are one edge
with ``links=2`` and twice the bandwidth.
"""

from __future__ import annotations

import math
import re
from array import array

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.hardware import GpuSpec
from compute.validate import describe, number_text, read_number
from topologies.common import (
    GROUP_LENGTH,
    SCALEUP_LENGTH,
    Links,
    Nodes,
    bandwidth_or,
    cable_latency,
    check_choice,
    check_int,
    check_length,
    check_medium,
    finish,
    finish_blocks,
    gpu_type,
    link,
    new_graph,
)
from topologies.limits import check_size
from topologies.registry import builder
from topologies.schema import MODULE_PORTS, validate

__all__ = ["full_mesh", "lite_groups", "parse_dims", "ring", "torus"]


def _direct(name: str, n: int, ends: tuple[np.ndarray, np.ndarray, np.ndarray], ports: int,
            gpu: object, bandwidth: object, medium: object, length: object) -> nx.Graph:
    """Wire ``n`` GPUs of ``ports`` ports each by the edges ``ends = (u, v, cables)`` (GPU
    numbers and cable counts, in the order the edges are added); the caller has checked the
    size. A GPU's bandwidth is split evenly over its ports, so an edge of ``c`` cables gets
    ``c / ports`` of it. Built in blocks (:func:`~topologies.common.finish_blocks`), one
    per cable count."""
    spec = gpu_type(gpu)
    medium = check_medium("medium", medium)
    total = bandwidth_or("bandwidth", bandwidth, spec.scaleup_bandwidth)
    latency = cable_latency(check_length(length), medium)
    per_port = total / ports
    u, v, cables = ends
    counts = np.unique(cables).tolist()
    links = [Links(u[cables == c], v[cables == c], link(per_port * c, latency, medium, links=c))
             for c in counts]
    # the blocks one after the other -> the edges' own order
    at = np.concatenate([np.flatnonzero(cables == c) for c in counts])
    order = np.empty(len(at), dtype=np.int64)
    order[at] = np.arange(len(at))
    nodes = [Nodes("gpu", n, {"kind": "gpu", "gpu": spec.name})]
    return finish_blocks(new_graph(name), n, nodes, links, spec,
                         order=None if len(counts) < 2 else order)


def _torus_ends(sides: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges of a torus of ``sides`` (GPUs numbered row-major) as :func:`_direct` takes
    them: GPU ``i``'s edges to higher-numbered neighbours, ``i`` in turn, each in the order
    of its ports (per dimension, the -1 neighbour then the +1); a side of 2 reaches the
    same neighbour from both ports, one edge of 2 cables."""
    n = math.prod(sides)
    i = np.arange(n, dtype=np.int64)
    cols, cables = [], []
    stride = n
    for side in sides:
        stride //= side
        coord = (i // stride) % side
        for step in (-1, 1):
            j = i + (((coord + step) % side) - coord) * stride
            if side == 2 and step == 1:   # the same neighbour as step -1: counted there
                j = np.full(n, -1, dtype=np.int64)
            cols.append(j)
            cables.append(2 if side == 2 else 1)
    nbr = np.stack(cols, axis=1)   # (n, ports), row-major = the order edges are added
    keep = nbr > i[:, None]
    u = np.broadcast_to(i[:, None], nbr.shape)[keep]
    return u, nbr[keep], np.broadcast_to(np.array(cables), nbr.shape)[keep]


@builder("ring")
def ring(n: int = 8, gpu: str | GpuSpec = "H100-SXM", bandwidth: float | None = None,
         medium: str = "copper", length: float = SCALEUP_LENGTH) -> nx.Graph:
    """``n`` GPUs in a ring; each GPU's ``bandwidth`` split over its two ports.

    Parameters
    ----------
    n : int
        GPUs, >= 2 (a ring of 2 is one double cable).
    gpu : str or GpuSpec
        GPU type: a catalog name, a GPU file or a GpuSpec.
    bandwidth : float, optional
        Bytes/s per direction per GPU over both ports; default the GPU's scale-up bandwidth.
    medium : str
        Cable medium.
    length : float
        Cable length in metres (latency = 5 ns/m).

    Examples
    --------
    >>> g = ring(4)
    >>> sorted(g.neighbors("gpu0")), g.edges["gpu0", "gpu1"]["bandwidth"] / 1e9
    (['gpu1', 'gpu3'], 225.0)
    """
    n = check_int("n", n, 2)
    check_size("ring", n, n)
    return _direct(f"ring of {n}", n, _torus_ends((n,)), 2, gpu, bandwidth, medium, length)


@builder("full-mesh")
def full_mesh(n: int = 8, gpu: str | GpuSpec = "H100-SXM", bandwidth: float | None = None,
              medium: str = "copper", length: float = SCALEUP_LENGTH) -> nx.Graph:
    """``n`` GPUs each cabled to every other; each GPU's ``bandwidth`` split over its n-1 ports.

    Parameters are those of :func:`ring`.

    Examples
    --------
    >>> g = full_mesh(4, gpu="Lite")
    >>> g.number_of_edges(), round(g.edges["gpu0", "gpu3"]["bandwidth"] / 1e9, 1)
    (6, 37.5)
    """
    n = check_int("n", n, 2)
    check_size("full-mesh", n, n * (n - 1) // 2)
    u, v = np.triu_indices(n, 1)   # GPU i's edges to j > i, i in turn
    return _direct(f"full mesh of {n}", n, (u, v, np.ones(len(u), dtype=np.int64)), n - 1,
                   gpu, bandwidth, medium, length)


def parse_dims(dims: object) -> tuple[int, ...]:
    """Torus side lengths from ``"4x4x4"`` or a sequence of ints (1 to 3 sides, each >= 2).

    >>> parse_dims("4x2"), parse_dims([2, 2, 2])
    ((4, 2), (2, 2, 2))
    """
    if isinstance(dims, str):
        sides = tuple(read_number("dims", s, whole=True)
                      for s in number_text("dims", dims).lower().split("x"))
        if None in sides:   # the one number grammar: '4x4', not '4_0x4'
            raise UserError(f"dims {dims[:40]!r} must be sides joined by 'x', e.g. "
                            "'4x4x4'") from None
    elif isinstance(dims, tuple | list):
        sides = tuple(dims)
    else:
        raise UserError(f"dims must be sides joined by 'x' (e.g. '4x4x4') or a list of "
                        f"sides, got {describe(dims)}")
    if not 1 <= len(sides) <= 3:
        raise UserError(f"dims {describe(dims)} must have 1 to 3 sides, e.g. '8x8' or "
                        "'4x4x4'")
    return tuple(check_int("each torus side in dims", s, 2) for s in sides)


@builder("torus")
def torus(dims: str = "4x4", gpu: str | GpuSpec = "H100-SXM", bandwidth: float | None = None,
          medium: str = "copper", length: float = SCALEUP_LENGTH) -> nx.Graph:
    """A 2D or 3D torus (wrap-around mesh) of GPUs, numbered row-major (last side fastest).

    Each GPU has two ports per dimension (to -1 and +1); its ``bandwidth`` is split over the
    ``2 * len(dims)`` ports. The graph attribute ``dims`` keeps the shape (``"4x4"``).

    Parameters
    ----------
    dims : str
        Side lengths joined by ``x`` (``"4x4"``, ``"4x4x4"``), each >= 2.
    gpu, bandwidth, medium, length
        As for :func:`ring`.

    Examples
    --------
    >>> g = torus("4x4")
    >>> g.graph["gpus"], g.degree("gpu0"), sorted(g.neighbors("gpu0"))
    (16, 4, ['gpu1', 'gpu12', 'gpu3', 'gpu4'])
    """
    sides = parse_dims(dims)
    n = 1
    for s in sides:
        n *= s
    check_size("torus", n, n * len(sides))
    shape = "x".join(map(str, sides))
    graph = _direct(f"{shape} torus", n, _torus_ends(sides), 2 * len(sides), gpu, bandwidth,
                    medium, length)
    graph.graph["dims"] = shape
    return graph


SPLITS = ("even", "gateway")


@builder("lite-groups", choices={"split": SPLITS})
def lite_groups(base: str | nx.Graph = "single-switch:n=8", lites: int = 4,
                lite: str | GpuSpec = "Lite",
                split: str = "even", mesh_bandwidth: float | None = None,
                medium: str = "co-packaged-optics", length: float = GROUP_LENGTH) -> nx.Graph:
    """Every GPU of a ``base`` fabric replaced by a group of ``lites`` Lite-GPUs wired to each
    other in a full mesh, the group sharing the big GPU's external ports.

    Lite ``j`` of big GPU ``b`` becomes ``gpu{b * lites + j}`` with ``group = b`` (and the
    big GPU's ``server``, ``rack``, ``pod`` and ``rail`` labels); switches keep their ids.
    The base's ``module_ports`` (twin-port optics, :mod:`topologies.optic_modules`) is
    kept: its switches' ends of whole cables stay two a module, a breakout share's ends
    (``split="even"``) one a module, and co-packaged mesh ends hold no module at all.

    Parameters
    ----------
    base : str, tuple, dict or networkx.Graph
        The fabric of big GPUs: anything :func:`~topologies.registry.build` takes (a spec
        string, in a spec bracketed: ``lite-groups:base=[fat-tree:k=4],lites=4``; a
        ``(builder, params)`` pair or ``{"builder": ...}`` table) or a graph.
    lites : int
        Lites per big GPU (>= 1).
    lite : str or GpuSpec
        The Lite GPU type (catalog name, GPU file or GpuSpec).
    split : {"even", "gateway"}
        How the group shares each of the big GPU's external links. ``"even"`` (default): every
        Lite gets ``1/lites`` of the link's bandwidth and cables, as a breakout cable splits a
        switch port's lanes (``links`` may then be fractional); a link between two big GPUs
        joins Lite ``j`` to Lite ``j``. ``"gateway"``: Lite 0 takes the whole link and the
        others reach it through the mesh.
    mesh_bandwidth : float, optional
        Bytes/s per direction per Lite into the mesh, split over its ``lites - 1`` mesh links;
        default the Lite's scale-up bandwidth (112.5 GB/s for ``"Lite"``).
    medium : str
        Medium of the mesh links (default co-packaged optics, the Lite-GPU premise).
    length : float
        Mesh cable length in metres.

    Examples
    --------
    >>> g = lite_groups("single-switch:n=2", lites=4)
    >>> g.graph["gpus"], g.nodes["gpu5"]["group"], g.edges["gpu5", "nvs0"]["bandwidth"] / 1e9
    (8, 1, 112.5)
    >>> round(g.edges["gpu4", "gpu5"]["bandwidth"] / 1e9, 1)
    37.5
    """
    k = check_int("lites", lites, 1)
    split = check_choice("split", split, SPLITS)
    medium = check_medium("medium", medium)
    spec = gpu_type(lite, "lite")
    if not isinstance(base, nx.Graph):  # the registry builds a named base before the call
        raise UserError(f"base must be a fabric graph, got {str(base)[:40]!r}")
    big = validate(base)
    mesh = bandwidth_or("mesh_bandwidth", mesh_bandwidth, spec.scaleup_bandwidth)
    latency = cable_latency(check_length(length), medium)
    big_gpus = big.graph["gpus"]
    share = k if split == "even" else 1
    check_size(f"groups of {k} Lites", big.number_of_nodes() + big_gpus * (k - 1),
               big_gpus * k * (k - 1) // 2 + big.number_of_edges() * share)

    graph = new_graph(f"{big.graph.get('name', 'fabric')} as groups of {k} {spec.name}")
    graph.graph["lites_per_group"] = k
    if MODULE_PORTS in big.graph:   # the base's twin-port optics stay
        graph.graph[MODULE_PORTS] = big.graph[MODULE_PORTS]
    blocks = _lite_blocks(big, k, share, spec, link(mesh / max(k - 1, 1), latency, medium))
    if blocks is not None:
        return finish_blocks(graph, big_gpus * k, *blocks[:2], spec, order=blocks[2])
    members: dict = {}
    for b, node in enumerate(n for n, kind in big.nodes(data="kind") if kind == "gpu"):
        labels = {key: big.nodes[node][key] for key in ("server", "rack", "pod", "rail")
                  if key in big.nodes[node]}
        ids = [f"gpu{b * k + j}" for j in range(k)]
        members[node] = ids
        graph.add_nodes_from((i, {"kind": "gpu", "gpu": spec.name, "group": b, **labels})
                             for i in ids)
        for a in range(k):
            for c in range(a + 1, k):
                graph.add_edge(ids[a], ids[c], **link(mesh / (k - 1), latency, medium))
    graph.add_nodes_from((n, d) for n, d in big.nodes(data=True) if d["kind"] != "gpu")
    for u, v, data in big.edges(data=True):
        ends = [members.get(u), members.get(v)]
        if ends == [None, None]:
            graph.add_edge(u, v, **data)
            continue
        for j in range(share):
            a = ends[0][j] if ends[0] else u
            b = ends[1][j] if ends[1] else v
            cables = data.get("links", 1)
            cables = cables // share if cables % share == 0 else cables / share
            graph.add_edge(a, b, **link(data["bandwidth"] / share, data["latency"],
                                        data["medium"], links=cables))
    return finish(graph, len(members) * k, spec)


_LABEL_KEYS = ("server", "rack", "pod", "rail")
_NAMED = re.compile(r"([^\d]*)(0|[1-9]\d*)")
#: Past this many runs of base nodes or kinds of links, :func:`lite_groups` adds its nodes
#: and edges one by one (a hand-made base: each a block of its own would cost more).
_MOST_BLOCKS = 256


def _typed(attrs: dict) -> tuple:
    """A key equal for two attribute dicts only when their keys, order, value types and
    values are (TypeError where a value is unhashable)."""
    return tuple((key, value.__class__, value) for key, value in attrs.items())


def _lite_blocks(big: nx.Graph, k: int, share: int, spec: GpuSpec, mesh: dict
                 ) -> tuple[list[Nodes], list[Links], np.ndarray] | None:
    """:func:`lite_groups`'s graph as blocks (:func:`~topologies.common.finish_blocks`):
    ``(nodes, links, order)``, the nodes, edges and edge order the one-by-one code adds;
    None where the base is not made of a few runs (its GPUs' labels not the same keys of
    whole numbers, its other nodes not runs of ``prefix0, prefix1, ...`` sharing their
    attributes, a node named ``gpu...``, more than :data:`_MOST_BLOCKS` runs or kinds of
    links, an unhashable attribute): then the caller adds them one by one."""
    gpus, others = [], []
    for node, d in big.nodes(data=True):
        (gpus if d["kind"] == "gpu" else others).append((node, d))
    n = len(gpus)
    keys = [key for key in _LABEL_KEYS if key in gpus[0][1]] if gpus else []
    columns: dict = {key: [] for key in keys}
    for _, d in gpus:
        for key in keys:
            value = d.get(key)
            if value.__class__ is not int:
                return None
            columns[key].append(value)
        if sum(key in d for key in _LABEL_KEYS) != len(keys):
            return None
    labels = {"group": np.repeat(np.arange(n), k)}
    labels.update((key, np.repeat(np.array(col, dtype=np.int64), k))
                  for key, col in columns.items())
    nodes = [Nodes("gpu", n * k, {"kind": "gpu", "gpu": spec.name}, labels)]
    position = {}
    run = None
    for node, d in others:
        named = _NAMED.fullmatch(node) if isinstance(node, str) else None
        if named is None or named[1] == "gpu":
            return None
        prefix, number = named[1], int(named[2])
        try:
            key = _typed(d)
        except TypeError:
            return None
        if run is not None and run[0] == prefix and run[1] + run[2] == number and run[3] == key:
            run[2] += 1
        else:
            if run is not None:
                nodes.append(Nodes(run[0], run[2], run[4], start=run[1]))
            run = [prefix, number, 1, key, d]
            if len(nodes) > _MOST_BLOCKS:
                return None
        position[node] = n * k + len(position)
    if run is not None:
        nodes.append(Nodes(run[0], run[2], run[4], start=run[1]))
    # edges in the order they are added: each group's mesh, then the base's edges
    ends_u, ends_v, kinds = [], [], []
    templates: dict = {}
    if k > 1:
        a, c = np.triu_indices(k, 1)
        base = np.repeat(np.arange(n) * k, len(a))
        ends_u.append(base + np.tile(a, n))
        ends_v.append(base + np.tile(c, n))
        kinds.append(np.zeros(len(base), dtype=np.int64))
        templates[_typed(mesh)] = (0, mesh)
    member = {node: b for b, (node, _) in enumerate(gpus)}
    us, vs, ks = array("q"), array("q"), array("q")   # 8 bytes an edge, not a list's 36
    for u, v, data in big.edges(data=True):
        bu, bv = member.get(u), member.get(v)
        if bu is None and bv is None:
            attrs, count = data, 1
        else:
            cables = data.get("links", 1)
            cables = cables // share if cables % share == 0 else cables / share
            attrs, count = link(data["bandwidth"] / share, data["latency"], data["medium"],
                                links=cables), share
        try:
            key = _typed(attrs)
        except TypeError:
            return None
        kind = templates.get(key)
        if kind is None:
            if len(templates) >= _MOST_BLOCKS:
                return None
            kind = templates[key] = (len(templates), attrs)
        for j in range(count):
            us.append(position[u] if bu is None else bu * k + j)
            vs.append(position[v] if bv is None else bv * k + j)
            ks.append(kind[0])
    u = np.concatenate([*ends_u, np.frombuffer(us, dtype=np.int64)])
    v = np.concatenate([*ends_v, np.frombuffer(vs, dtype=np.int64)])
    kind = np.concatenate([*kinds, np.frombuffer(ks, dtype=np.int64)])
    at = np.argsort(kind, kind="stable")   # the blocks one after the other, by kind
    order = np.empty(len(at), dtype=np.int64)
    order[at] = np.arange(len(at))
    links = [Links(u[kind == t], v[kind == t], attrs) for t, attrs in templates.values()]
    return nodes, links, order
