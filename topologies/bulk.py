"""Building a fabric graph in bulk from blocks of nodes and links, and checking it in that
compact form.

A builder describes its fabric as runs of nodes that share one attribute template (with
optional per-node whole-number labels) and runs of links, each an array of endpoint
positions with one attribute template. :func:`assemble` fills an empty graph from them
exactly as the equivalent ``add_nodes_from`` / ``add_edges_from`` calls would (same node
order, same neighbour order, one fresh attribute dict per node and per edge, the edge's dict
shared by both directions), but in bulk: the neighbour lists are ordered with one numpy
sort instead of one Python call per edge.

:func:`check_blocks` then checks the schema (:func:`topologies.schema.validate`) on the
blocks instead of on every node and edge: each template once, labels, port counts and
connectivity with numpy. It is validate's fast test, conservative: whenever it is not sure
(anything wrong, or anything validate only accepts on a closer look, such as a fractional
cable count), :func:`assemble` runs the full :func:`~topologies.schema.validate` on the
graph, so that the verdict and the error are validate's own (naming the first node or edge
at fault).

>>> import networkx as nx
>>> g = nx.Graph(name="pair", spec="", gpus=2)
>>> gpus = Nodes("gpu", 2, {"kind": "gpu", "gpu": "H100-SXM"})
>>> cable = {"bandwidth": 450e9, "latency": 1e-8, "medium": "copper", "lanes": 36}
>>> assemble(g, [gpus], [Links([0], [1], cable)]) is g
True
>>> list(g.edges(data="medium")), g.edges["gpu0", "gpu1"] is g.edges["gpu1", "gpu0"]
([('gpu0', 'gpu1', 'copper')], True)
"""

from __future__ import annotations

import gc
import operator
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.hardware import catalog
from topologies.schema import (
    _INF,
    _LABELS,
    _MEDIA,
    NODE_KEYS,
    _check_graph_attributes,
    _ocs_problem,
    _switch_problem,
    validate,
)

__all__ = ["Links", "Nodes", "assemble", "check_blocks", "names"]


def names(prefix: str, count: int, start: int = 0) -> list[str]:
    """``[prefix0, prefix1, ...]``: ``count`` node ids numbered from ``start``.

    >>> names("leaf", 3, start=2)
    ['leaf2', 'leaf3', 'leaf4']
    """
    return [f"{prefix}{i}" for i in range(start, start + count)]


@dataclass(frozen=True)
class Nodes:
    """``count`` nodes ``{prefix}{start}`` ... sharing the attributes ``attrs``, each with
    its own copy; ``labels`` adds per-node values (``{key: sequence of ints}``, in order,
    after the template's keys)."""

    prefix: str
    count: int
    attrs: Mapping
    labels: Mapping[str, Sequence[int] | np.ndarray] = field(default_factory=dict)
    start: int = 0


@dataclass(frozen=True)
class Links:
    """Edges ``u[i]``-``v[i]`` between node positions (in the order of the node blocks,
    counted from 0 over all of them), sharing the attributes ``attrs``, each edge with its
    own copy."""

    u: Sequence[int] | np.ndarray
    v: Sequence[int] | np.ndarray
    attrs: Mapping


def _ends(links: Sequence[Links]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every edge's endpoints and its block number, in insertion order."""
    u = [np.asarray(b.u, dtype=np.int64).ravel() for b in links]
    v = [np.asarray(b.v, dtype=np.int64).ravel() for b in links]
    for a, b in zip(u, v, strict=True):
        if a.shape != b.shape:
            raise ValueError("a link block's u and v differ in length")
    block = [np.full(len(a), i, dtype=np.int64) for i, a in enumerate(u)]
    if not links:
        return np.zeros((3, 0), dtype=np.int64)  # type: ignore[return-value]
    return np.concatenate(u), np.concatenate(v), np.concatenate(block)


def _copies(attrs: Mapping, count: int) -> list[dict]:
    return list(map(dict.copy, repeat(dict(attrs), count)))


def assemble(graph: nx.Graph, nodes: Sequence[Nodes], links: Sequence[Links], *,
             check: bool = True) -> nx.Graph:
    """Fill the empty :class:`networkx.Graph` ``graph`` with the node blocks ``nodes`` (in order) and the edge blocks
    ``links`` (in order), as ``add_nodes_from`` then ``add_edges_from`` over the blocks
    would; then (``check``) check it against the schema (see the module docstring).

    Edges must be simple: no self-loop, no pair twice (ValueError otherwise: a builder's
    mistake, not the user's). The garbage collector is paused meanwhile: the graph's
    hundreds of thousands of new dicts would otherwise set off collections that traverse
    them, again and again, for nothing (none of them is garbage; at 131,072 GPUs this
    saved about 0.3 s).
    """
    if type(graph) is not nx.Graph or graph.number_of_nodes():
        raise ValueError("assemble fills an empty networkx.Graph (not a subclass: its dicts "
                         "are plain dicts)")
    u, v, block = _ends(links)
    paused = gc.isenabled()
    gc.disable()
    try:
        _fill(graph, nodes, links, u, v)
    finally:
        if paused:
            gc.enable()
    cache = getattr(graph, "__networkx_cache__", None)  # networkx >= 3.3 caches per graph
    if cache:
        cache.clear()
    if check and not check_blocks(graph, nodes, links, (u, v, block)):
        validate(graph)  # the error validate gives, or a graph its exact rules accept
    return graph


def _fill(graph: nx.Graph, nodes: Sequence[Nodes], links: Sequence[Links], u: np.ndarray,
          v: np.ndarray) -> None:
    ids: list[str] = []
    node_dicts: list[dict] = []
    for block in nodes:
        dicts = _copies(block.attrs, block.count)
        for key, values in block.labels.items():
            column = np.asarray(values).tolist()
            if len(column) != block.count:
                raise ValueError(f"label {key!r} has {len(column)} values for {block.count} "
                                 "nodes")
            deque(map(operator.setitem, dicts, repeat(key), column), maxlen=0)
        ids += names(block.prefix, block.count, block.start)
        node_dicts += dicts
    n = len(ids)
    if len(u) and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= n):
        raise ValueError("a link names a node position outside the node blocks")
    if np.any(u == v):
        raise ValueError("a link joins a node to itself")
    rows = [{} for _ in range(n)]
    graph._node.update(zip(ids, node_dicts, strict=True))
    graph._adj.update(zip(ids, rows, strict=True))
    if len(graph._node) != n:
        raise ValueError("two nodes have the same id")
    edge_dicts: list[dict] = []
    for b in links:
        edge_dicts += _copies(b.attrs, len(np.asarray(b.u).ravel()))
    # edge e is entered in u's row, then in v's, in edge order, as add_edges_from does:
    # each row lists its neighbours in the order of the edges that touch it
    src = np.empty(2 * len(u), dtype=np.int64)
    dst = np.empty_like(src)
    src[0::2], src[1::2] = u, v
    dst[0::2], dst[1::2] = v, u
    row_of = np.empty(n, dtype=object)
    row_of[:] = rows
    deque(map(operator.setitem, row_of[src].tolist(), np.array(ids, dtype=object)[dst].tolist(),
              chain.from_iterable(zip(edge_dicts, edge_dicts, strict=True))), maxlen=0)
    if sum(map(len, rows)) != len(src):
        raise ValueError("a pair of nodes is linked twice")


def _edge_ok(d: Mapping) -> bool:
    """Whether edge attributes ``d`` pass :func:`~topologies.schema.validate`'s fast test."""
    bw, lat, lanes, links = (d.get("bandwidth"), d.get("latency"), d.get("lanes"),
                             d.get("links", 1))
    return (bw.__class__ is float and 0 < bw < _INF and lat.__class__ is float
            and 0 <= lat < _INF and lanes.__class__ is int and lanes >= 1
            and (links.__class__ is int and links >= 1
                 or links.__class__ is float and 0 < links < _INF)
            and d.get("medium").__class__ is str and d["medium"] in _MEDIA)


def _template_ok(attrs: Mapping, types: frozenset) -> bool:
    """Whether a node template is valid (labels are checked apart)."""
    kind = attrs.get("kind")
    if kind == "gpu":
        return attrs.get("gpu").__class__ is str and attrs["gpu"] in types
    if kind.__class__ is not str or kind not in NODE_KEYS or \
            any(k not in attrs for k in NODE_KEYS[kind]):
        return False
    try:
        _switch_problem("", dict(attrs), {}) if kind == "switch" else _ocs_problem("", dict(attrs))
    except UserError:
        return False
    return True


def _labels_ok(block: Nodes) -> bool:
    """Whether a GPU block's labels (and any label keys in its template) are whole >= 0."""
    for key, value in block.attrs.items():
        if key in _LABELS and (value.__class__ is not int or value < 0):
            return False
    for key, values in block.labels.items():
        if key not in _LABELS:
            return False  # a label overriding a checked key: let validate look at it all
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu" or (arr.size and arr.min() < 0):
            return False
    return True


def _components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A component label per node (the smallest position in its component): min-label
    propagation with pointer jumping, a few numpy passes for a low-diameter fabric."""
    label = np.arange(n, dtype=np.int64)
    while True:
        low = np.minimum(label[u], label[v])
        new = label.copy()
        np.minimum.at(new, u, low)
        np.minimum.at(new, v, low)
        new = new[new]
        while True:  # jump to the root: label[x] <= x always
            nxt = new[new]
            if np.array_equal(nxt, new):
                break
            new = nxt
        if np.array_equal(new, label):
            return label
        label = new


def check_blocks(graph: nx.Graph, nodes: Sequence[Nodes], links: Sequence[Links],
                 ends: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, *,
                 check_connected: bool = True) -> bool:
    """Whether the graph :func:`assemble` made from ``nodes`` and ``links`` obeys the schema
    (what :func:`~topologies.schema.validate` checks): the graph attributes, each node and
    edge template once, GPU labels, every switch's and OCS's cables against its ports, the
    ``gpus`` count and that all GPUs are connected. False when anything is wrong (then
    :func:`~topologies.schema.validate` names it)."""
    try:
        own = _check_graph_attributes(graph)
    except UserError:
        return False
    types = frozenset(own) | frozenset(catalog())
    u, v, block = _ends(links) if ends is None else ends
    if not all(_edge_ok(b.attrs) for b in links):
        return False
    n = sum(b.count for b in nodes)
    cables = np.array([b.attrs.get("links", 1) for b in links], dtype=float)[block] \
        if len(links) else np.zeros(0)
    used = np.bincount(u, cables, minlength=n) + np.bincount(v, cables, minlength=n)
    ports = np.full(n, np.inf)
    gpu_positions = []
    start = 0
    for b in nodes:
        if not _template_ok(b.attrs, types):
            return False
        kind = b.attrs["kind"]
        if kind == "gpu":
            if not _labels_ok(b):
                return False
            gpu_positions.append(np.arange(start, start + b.count))
        elif b.labels:
            return False  # labels on a switch or OCS: let validate look at it all
        else:
            ports[start:start + b.count] = b.attrs["radix" if kind == "switch" else "ports"]
        start += b.count
    if np.any(used > ports + 1e-6):
        return False
    gpus = np.concatenate(gpu_positions) if gpu_positions else np.zeros(0, dtype=np.int64)
    if graph.graph.get("gpus") != len(gpus) or not len(gpus):
        return False
    if check_connected and len(gpus) > 1:
        label = _components(n, u, v)
        if np.any(label[gpus] != label[gpus[0]]):
            return False
    return True
