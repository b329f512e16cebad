"""Direct-connect fabrics: GPUs cabled to each other with no switch (ring, full mesh, 2D/3D
torus), and Lite groups (every big GPU of a base fabric replaced by a full mesh of Lites).

In a direct fabric a GPU's scale-up bandwidth is split evenly over its ports, one port per
neighbour: ``bandwidth`` (bytes/s per direction, default the GPU's ``scaleup_bandwidth``) is
the GPU's total, and each of its ``d`` links carries ``bandwidth / d``. Where two ports of a
GPU reach the same neighbour (a ring of 2, a torus side of 2) the two cables are one edge
with ``links=2`` and twice the bandwidth.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import networkx as nx

from compute.errors import UserError
from compute.hardware import GpuSpec
from compute.validate import describe
from topologies.common import (
    GROUP_LENGTH,
    SCALEUP_LENGTH,
    bandwidth_or,
    cable_latency,
    check_choice,
    check_int,
    check_length,
    check_medium,
    finish,
    gpu_type,
    link,
    new_graph,
)
from topologies.limits import check_size
from topologies.registry import builder
from topologies.schema import validate

__all__ = ["full_mesh", "lite_groups", "parse_dims", "ring", "torus"]


def _direct(name: str, n: int, neighbours: Callable[[int], list[int]], gpu: object,
            bandwidth: object, medium: object, length: object) -> nx.Graph:
    """Wire ``n`` GPUs by ``neighbours(i) -> list of j`` (one port each); the caller has
    checked the size."""
    spec = gpu_type(gpu)
    medium = check_medium("medium", medium)
    total = bandwidth_or("bandwidth", bandwidth, spec.scaleup_bandwidth)
    latency = cable_latency(check_length(length), medium)
    graph = new_graph(name)
    graph.add_nodes_from((f"gpu{i}", {"kind": "gpu", "gpu": spec.name}) for i in range(n))
    for i in range(n):
        ports = neighbours(i)
        per_port = total / len(ports)
        for j, count in Counter(ports).items():
            if j > i:
                graph.add_edge(f"gpu{i}", f"gpu{j}",
                               **link(per_port * count, latency, medium, links=count))
    return finish(graph, n, spec)


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
    return _direct(f"ring of {n}", n, lambda i: [(i - 1) % n, (i + 1) % n], gpu,
                   bandwidth, medium, length)


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
    return _direct(f"full mesh of {n}", n, lambda i: [j for j in range(n) if j != i], gpu,
                   bandwidth, medium, length)


def parse_dims(dims: object) -> tuple[int, ...]:
    """Torus side lengths from ``"4x4x4"`` or a sequence of ints (1 to 3 sides, each >= 2).

    >>> parse_dims("4x2"), parse_dims([2, 2, 2])
    ((4, 2), (2, 2, 2))
    """
    if isinstance(dims, str):
        try:
            sides = tuple(int(s) for s in dims.lower().split("x"))
        except ValueError:
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
    strides = [1] * len(sides)
    for d in range(len(sides) - 2, -1, -1):
        strides[d] = strides[d + 1] * sides[d + 1]

    def neighbours(i: int) -> list[int]:
        out = []
        for d, (side, stride) in enumerate(zip(sides, strides, strict=True)):
            coord = (i // stride) % side
            for step in (-1, 1):
                out.append(i + (((coord + step) % side) - coord) * strides[d])
        return out

    shape = "x".join(map(str, sides))
    graph = _direct(f"{shape} torus", n, neighbours, gpu, bandwidth, medium, length)
    graph.graph["dims"] = shape
    return graph


SPLITS = ("even", "gateway")


@builder("lite-groups")
def lite_groups(base: str | nx.Graph = "single-switch:n=8", lites: int = 4,
                lite: str | GpuSpec = "Lite",
                split: str = "even", mesh_bandwidth: float | None = None,
                medium: str = "co-packaged-optics", length: float = GROUP_LENGTH) -> nx.Graph:
    """Every GPU of a ``base`` fabric replaced by a group of ``lites`` Lite-GPUs wired to each
    other in a full mesh, the group sharing the big GPU's external ports.

    Lite ``j`` of big GPU ``b`` becomes ``gpu{b * lites + j}`` with ``group = b`` (and the
    big GPU's ``server``, ``rack``, ``pod`` and ``rail`` labels); switches keep their ids.

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
