"""The graph schema every fabric obeys, and :func:`validate` that checks it.

A fabric is an undirected :class:`networkx.Graph`; each edge is a full-duplex link.

Nodes (ids are short, readable and stable: ``gpu17``, ``nvs0``, ``leaf3``, ``spine0``,
``core1``, ``ocs2``) carry ``kind``, one of :data:`NODE_KINDS`:

* ``kind="gpu"``: ``gpu`` (str) names the GPU type in compute's catalog (e.g. ``"H100-SXM"``,
  ``"Lite"``); optional placement labels used for failure domains and placement:
  ``server``, ``rack``, ``pod`` (ints), ``group`` (int: the Lite group / scale-up domain the
  GPU belongs to), ``rail`` (int: its position in the server).
* ``kind="switch"``: ``tier`` (int: 0 = scale-up switch such as NVSwitch, 1 = leaf, 2 = spine,
  3 = core), ``radix`` (int ports), ``latency`` (s, port-to-port traversal) and
  ``in_network_reduction`` (bool: can reduce data in the switch, like NVLS or SHARP).
* ``kind="ocs"``: ``ports`` (int), ``reconfiguration_time`` (s) and ``latency`` (s,
  insertion delay of a circuit through it).

Edges carry ``bandwidth`` (bytes/s per direction; an edge standing for several parallel
cables carries their sum), ``latency`` (s: propagation plus port/serialization overhead),
``medium`` (one of :data:`MEDIA`), ``lanes`` (int: electrical/optical lanes, summed over
cables) and optionally ``links`` (int, default 1: physical cables the edge stands for).
A circuit set up through an optical circuit switch is a GPU-GPU edge with
``medium="ocs-circuit"`` and ``via`` naming the OCS node.

Graph attributes: ``name`` (str), ``spec`` (the spec string that rebuilds it, or ``""``),
``gpus`` (int: the number of GPU nodes). Builders add ``nodes_built`` and ``edges_built``
(the counts they made: analysis trusts its closed forms only while they still match) and,
where they apply, ``dims`` (torus sides, ``"4x4"``), ``k`` and ``oversubscription`` (fat
tree), ``lites_per_group``, and for realized circuits ``logical``, ``circuits`` and
``reconfiguration_time`` (s). A circuit edge also carries ``optics`` (the medium of the GPU
ports at its ends).
"""

from __future__ import annotations

import math

import networkx as nx

from compute.errors import UserError, known

__all__ = ["EDGE_KEYS", "MEDIA", "NODE_KEYS", "NODE_KINDS", "gpu_nodes", "validate"]

NODE_KINDS = ("gpu", "switch", "ocs")
MEDIA = ("on-package", "copper", "pluggable-optics", "co-packaged-optics", "fibre", "ocs-circuit")
#: Required node attributes by kind.
NODE_KEYS = {
    "gpu": ("gpu",),
    "switch": ("tier", "radix", "latency", "in_network_reduction"),
    "ocs": ("ports", "reconfiguration_time", "latency"),
}
#: Required edge attributes.
EDGE_KEYS = ("bandwidth", "latency", "medium", "lanes")


def gpu_nodes(graph: nx.Graph) -> list:
    """The GPU nodes of ``graph`` in insertion order (the order builders number them)."""
    return [n for n, k in graph.nodes(data="kind") if k == "gpu"]


def _bad(msg: str):
    raise UserError(f"invalid fabric graph: {msg}")


def _nonneg(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) \
        and value >= 0


def validate(graph: nx.Graph, *, check_connected: bool = True) -> nx.Graph:
    """Check that ``graph`` obeys the fabric schema; return it unchanged, else raise UserError.

    Checks every node's kind and required attributes, every edge's attributes (bandwidth
    finite and > 0, latency finite and >= 0, a known medium), the ``gpus`` graph attribute,
    and (unless ``check_connected=False``) that every GPU can reach every other.

    >>> g = nx.Graph(name="pair", spec="", gpus=2)
    >>> g.add_node("gpu0", kind="gpu", gpu="H100-SXM")
    >>> g.add_node("gpu1", kind="gpu", gpu="H100-SXM")
    >>> g.add_edge("gpu0", "gpu1", bandwidth=450e9, latency=1e-6, medium="copper", lanes=18)
    >>> validate(g) is g
    True
    >>> g.add_node("gpu2", kind="gpu", gpu="H100-SXM")
    >>> validate(g)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: graph attribute 'gpus' is 2 but it has 3 GPU nodes
    """
    if not isinstance(graph, nx.Graph) or graph.is_directed():
        _bad(f"expected an undirected networkx Graph, got {type(graph).__name__}")
    gpus = 0
    for node, data in graph.nodes(data=True):
        kind = data.get("kind")
        if kind not in NODE_KEYS:
            _bad(f"node {node!r} has kind {kind!r}; allowed: {known(NODE_KINDS)}")
        missing = [k for k in NODE_KEYS[kind] if k not in data]
        if missing:
            _bad(f"{kind} node {node!r} lacks attribute(s) {', '.join(missing)}")
        if kind == "gpu":
            gpus += 1
            if not isinstance(data["gpu"], str) or not data["gpu"]:
                _bad(f"gpu node {node!r} must name its GPU type in 'gpu', got {data['gpu']!r}")
        elif kind == "switch":
            if not (isinstance(data["radix"], int) and data["radix"] > 0):
                _bad(f"switch {node!r} radix must be a positive integer, got {data['radix']!r}")
            if not _nonneg(data["latency"]):
                _bad(f"switch {node!r} latency must be finite and >= 0 s, got {data['latency']!r}")
            # an edge may stand for several cables: count cables, not edges (a breakout
            # share of a port is a fraction; allow for rounding in their sum)
            used = sum(d.get("links", 1) for _, _, d in graph.edges(node, data=True))
            if used > data["radix"] + 1e-6:
                _bad(f"switch {node!r} uses {used:g} ports but its radix is {data['radix']}")
        else:
            if not (isinstance(data["ports"], int) and data["ports"] > 0):
                _bad(f"ocs {node!r} ports must be a positive integer, got {data['ports']!r}")
            if not _nonneg(data["reconfiguration_time"]):
                _bad(f"ocs {node!r} reconfiguration_time must be finite and >= 0 s, "
                     f"got {data['reconfiguration_time']!r}")
    for u, v, data in graph.edges(data=True):
        missing = [k for k in EDGE_KEYS if k not in data]
        if missing:
            _bad(f"edge {u!r}-{v!r} lacks attribute(s) {', '.join(missing)}")
        bw = data["bandwidth"]
        if not (_nonneg(bw) and bw > 0):
            _bad(f"edge {u!r}-{v!r} bandwidth must be finite and > 0 bytes/s, got {bw!r}")
        if not _nonneg(data["latency"]):
            _bad(f"edge {u!r}-{v!r} latency must be finite and >= 0 s, got {data['latency']!r}")
        links = data.get("links", 1)
        if not (_nonneg(links) and links > 0):
            _bad(f"edge {u!r}-{v!r} links must be finite and > 0 cables, got {links!r}")
        if data["medium"] not in MEDIA:
            _bad(f"edge {u!r}-{v!r} medium {data['medium']!r} is not one of {known(MEDIA)}")
    declared = graph.graph.get("gpus")
    if declared != gpus:
        _bad(f"graph attribute 'gpus' is {declared!r} but it has {gpus} GPU nodes")
    if gpus == 0:
        _bad("it has no GPU nodes")
    if check_connected and gpus > 1:
        first = next(n for n, k in graph.nodes(data="kind") if k == "gpu")
        reached = nx.node_connected_component(graph, first)
        cut = [n for n in gpu_nodes(graph) if n not in reached]
        if cut:
            _bad(f"GPU {cut[0]!r} cannot reach GPU {first!r} ({len(cut)} GPU(s) disconnected)")
    return graph
