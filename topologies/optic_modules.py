"""Pluggable optical modules of several ports: which cable ends one module holds.

A fabric's graph attribute :data:`~topologies.schema.MODULE_PORTS` (``module_ports``, 1 or
2; a fabric without it, a file written before it included, reads 1) says how many optical
cable ends one pluggable module serves. With 1 every end of a ``pluggable-optics`` or
``fibre`` cable at a GPU or a switch is a module of its own (a single-port 400G OSFP, say).
With 2 the ends pair up as a DGX H100 SuperPOD's twin-port OSFP modules hold them: two
400 Gb/s ports in one module, at every Quantum-2 switch (32 OSFP cages for its 64 ports,
shared/reference/power_cost_yield.csv ``P40``: NVIDIA MMS4X00-NS, 800G twin-port 2x400G)
and at the DGX H100 (4 OSFP cages for its 8 ConnectX-7 NICs: NVIDIA DGX H100 User Guide,
Network Modules, Table 6). The pairing (:func:`optical_modules`):

* at a switch, its optical cable ends in link order, those down (to GPUs and to switches
  of a lower tier) and those up apart (in cages of their own; an edge of ``C`` cables is
  ``C`` ends in a row, so the two ends of a module go to the same far node where they
  can);
* at a GPU, the optical ends of every GPU of its ``server`` label together, in GPU order
  (the builders number a server's GPUs by rail: GPUs 0 and 1 of a DGX share a cage, an
  assumption for which two of its eight NICs a cage holds; a GPU without a ``server``
  label pairs its own ends only);
* a node (or server) of an odd count keeps one module half used; an OCS end holds no
  module (it steers light).

A breakout share (a fractional ``links``) and a realized OCS fabric's fibres are one
module an end whatever ``module_ports`` says (no published build pairs them). A module
that fails takes every cable it holds: an edge of which it holds every cable is cut, one
of which it holds ``k`` of ``C`` keeps ``(C - k) / C`` of its bandwidth
(:mod:`topologies.failure_domains`); the bill of materials counts modules
(:func:`~topologies.inventory.bill_of_materials`).

One SU of a DGX SuperPOD (:func:`~topologies.hierarchical.superpod`, twin-port by
default): 248 NIC ends two a module, 124; each of 8 rail leaves 31 GPU ends (a server slot
holds the UFM) in 16 modules, one half used, and 32 up in 16, 256; 4 spines of 64 ends, 128:
508 modules for 1,008 ends (504 were every module full).

>>> from topologies import superpod
>>> from topologies.edge_arrays import edge_arrays
>>> g = superpod(1)
>>> e = edge_arrays(g)
>>> mods = optical_modules(g, e)
>>> len(mods), [(e.nodes[e.u[i]], e.nodes[e.v[i]], k) for i, k in mods[0][1]]
(508, [('gpu0', 'leaf0', 1), ('gpu1', 'leaf1', 1)])
>>> sorted({sum(k for _, k in m) for w, m in mods if w.startswith("leaf")})
[1, 2]
"""

from __future__ import annotations

from typing import NamedTuple

import networkx as nx
import numpy as np

from topologies.edge_arrays import EdgeArrays, edge_arrays
from topologies.schema import (
    MODULE_PORT_CHOICES,
    MODULE_PORTS,
    MODULE_PORTS_RULE,
    check_graph_attributes,
)
from topologies.schema_reads import check_graph

__all__ = ["ends_held", "module_count", "module_effects", "module_ports", "module_worth",
           "optical_modules", "paired_ends"]

#: A module of so many ports, named (:data:`~topologies.schema.MODULE_PORT_CHOICES` past 1).
_KIND = {2: "twin-port"}


def module_ports(graph: nx.Graph) -> int:
    """Optical cable ends one pluggable module of ``graph`` serves: its
    :data:`~topologies.schema.MODULE_PORTS` attribute, 1 where it has none.

    >>> from topologies import superpod, build
    >>> module_ports(superpod(1)), module_ports(build("fat-tree:k=4"))
    (2, 1)

    Refused as :func:`~topologies.schema.validate` refuses it, for a graph edited in code
    (a 3 grouped the optics three a module, '2' read as 2, a bill of materials of 5
    raised AttributeError):

    >>> g = superpod(1); g.graph["module_ports"] = 3
    >>> module_ports(g)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: graph attribute 'module_ports' must be 1 or 2 (the optical cable ends one pluggable module serves), got 3
    """
    ports = check_graph(graph).graph.get(MODULE_PORTS, 1)
    if ports.__class__ is not int or ports not in MODULE_PORT_CHOICES:
        check_graph_attributes(graph)   # says what is wrong, as the schema does
    return ports


def ends_held(modules: int, ends: int, ports: int) -> str:
    """What ``modules`` pluggable transceivers of ``ports`` ports a module hold, in the words
    ``topology show`` and ``topology compare`` give them: the optical cable ends
    (:attr:`~topologies.inventory.BillOfMaterials.pluggable_ends`); empty where every module
    holds one (``ports`` 1) or there is none.

    >>> ends_held(508, 1008, 2), ends_held(1008, 1008, 1), ends_held(0, 0, 2)
    ('twin-port modules holding 1,008 optical cable ends', '', '')
    """
    from compute.errors import UserError
    from compute.units import counted
    from compute.validate import describe

    if ports.__class__ is not int or ports not in MODULE_PORT_CHOICES:   # 3 raised KeyError
        raise UserError(f"ports must be {MODULE_PORTS_RULE}, got {describe(ports)}")
    if ports <= 1 or not modules:
        return ""
    return f"{_KIND[ports]} modules holding {counted(ends, 'optical cable end')}"


def paired_ends(graph: nx.Graph, e: EdgeArrays, optical: np.ndarray) -> np.ndarray:
    """Boolean per edge of ``e``: its optical ends are held by modules of
    :func:`optical_modules` (``module_ports`` > 1, ``optical`` and not a breakout share
    or an OCS circuit); all False where a module holds one end."""
    if module_ports(graph) <= 1:
        return np.zeros(len(e.u), dtype=bool)
    return optical & (e.links == np.trunc(e.links)) & ~e.medium_in(("ocs-circuit",))


def optical_modules(graph: nx.Graph, edges: EdgeArrays | None = None,
                    media: tuple[str, ...] = ("pluggable-optics", "fibre")
                    ) -> list[tuple[object, tuple[tuple[int, int], ...]]]:
    """The pluggable modules of ``graph`` that hold several cable ends (the module doc's
    pairing), each as ``(where, ((edge, cables), ...))``: the node (a switch, or the first
    GPU of a server) it sits at, and the edges (positions in ``edges``, the graph's
    :func:`~topologies.edge_arrays.edge_arrays`) whose cables it holds, with how many of
    each. Empty where :func:`module_ports` is 1 (every end its own module).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.
    edges : EdgeArrays, optional
        ``graph``'s edge arrays, where the caller has them.
    media : tuple of str
        The cable media of pluggable modules (:data:`topologies.inventory.OPTICAL_MEDIA`).

    Returns
    -------
    list of tuple
    """
    if module_ports(graph) <= 1:
        return []
    e = edge_arrays(graph) if edges is None else edges
    m = _modules(graph, e, media)
    if not len(m.where):
        return []
    mod, edge, cables = _held(m, len(e.u))
    cut = np.flatnonzero(np.diff(mod)) + 1
    held = list(zip(edge.tolist(), cables.tolist(), strict=True))
    spans = zip([0, *cut.tolist()], [*cut.tolist(), len(held)], strict=True)
    wheres = [e.nodes[n] for n in m.where.tolist()]
    return [(w, tuple(held[a:b])) for w, (a, b) in zip(wheres, spans, strict=True)]


def module_count(graph: nx.Graph, edges: EdgeArrays | None = None,
                 media: tuple[str, ...] = ("pluggable-optics", "fibre")) -> int:
    """How many modules :func:`optical_modules` gives (0 where :func:`module_ports` is 1),
    counted without listing them.

    >>> from topologies import superpod
    >>> module_count(superpod(1))
    508
    """
    if module_ports(graph) <= 1:
        return 0
    e = edge_arrays(graph) if edges is None else edges
    return len(_modules(graph, e, media).where)


class _Rows(NamedTuple):
    """:func:`optical_modules`' modules as arrays: one row a cable of an end a module holds
    (an end of ``C`` cables ``C`` rows), in module order and, within a module, in the order
    it holds them; ``module`` the row's module, ``node`` and ``edge`` the end's; ``where``
    the node position each module sits at, ``size`` the rows it holds."""

    module: np.ndarray
    node: np.ndarray
    edge: np.ndarray
    where: np.ndarray
    size: np.ndarray


def _modules(graph: nx.Graph, e: EdgeArrays, media: tuple[str, ...]) -> _Rows:
    """Pair the ends (the module doc's pairing) with arrays: every optical end of a picked
    edge keyed by its node and direction (down or up) or by its GPU's server; the keys
    numbered in the order first met (edge by edge, an edge's ``u`` end before its ``v``);
    a key's ends sorted by (node position, edge), each repeated for its cables, and cut
    into modules of ``ports`` rows by a row's rank within its key."""
    ports = module_ports(graph)
    pick = np.flatnonzero(paired_ends(graph, e, e.medium_in(media)))
    gpu, ocs = e.kind_is("gpu"), e.kind_is("ocs")
    data = graph._node
    tier = np.array([data[n].get("tier", -1) if data[n]["kind"] == "switch" else -1
                     for n in e.nodes], dtype=np.int64)
    labels: dict = {}
    server = np.array([labels.setdefault(data[n]["server"], len(labels))
                       if data[n]["kind"] == "gpu" and "server" in data[n] else -1
                       for n in e.nodes], dtype=np.int64)
    # every end of a picked edge: its u end, then its v end
    node = np.stack([e.u[pick], e.v[pick]], axis=1).ravel()
    far = np.stack([e.v[pick], e.u[pick]], axis=1).ravel()
    edge = np.repeat(pick, 2)
    keep = ~ocs[node]
    node, far, edge = node[keep], far[keep], edge[keep]
    # a switch's down ports (to GPUs and lower tiers) and up ports apart; a server's GPUs one key
    down = gpu[far] | ((tier[far] > -1) & (tier[far] < tier[node]))
    key = np.where(server[node] >= 0, 2 * len(e.nodes) + server[node],
                   2 * node.astype(np.int64) + down)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    group = rank[inverse.ravel()]
    order = np.lexsort((edge, node, group))
    cables = e.links[edge[order]].astype(np.int64)
    group, node, edge = (np.repeat(a[order], cables) for a in (group, node, edge))
    # rows a key holds, its first row, and a row's rank within its key
    per = np.bincount(group, minlength=len(first))
    start = np.cumsum(per) - per
    within = np.arange(len(group)) - start[group]
    mods = -(-per // ports)
    module = (np.cumsum(mods) - mods)[group] + within // ports
    size = np.bincount(module, minlength=int(mods.sum()))
    where = np.repeat(node[start[per > 0]], mods[per > 0])
    return _Rows(module, node, edge, where, size)


def _held(m: _Rows, edges: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(module, edge, cables)``: each module's edges, with how many of their cables it
    holds, in module order and, within one, in the order first held."""
    pair = m.module.astype(np.int64) * max(edges, 1) + m.edge
    _, first, cables = np.unique(pair, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    first = first[order]
    return m.module[first], m.edge[first], cables[order]


def module_worth(graph: nx.Graph, edges: EdgeArrays | None = None,
                 media: tuple[str, ...] = ("pluggable-optics", "fibre")) -> np.ndarray:
    """The modules each optical cable end of ``graph`` makes up, shape ``(edges, 2)`` (an
    edge's ``u`` end, its ``v`` end): for an end held in a module of :func:`optical_modules`,
    each of its cables ``1 / (ends the module holds)`` (a full twin-port module's end 0.5,
    a half-used one's 1), summed over its cables; 0 where no such module holds it (an end
    a module of its own, or no module). Summed over every end: the modules
    (``len(optical_modules(graph))``), what the network bill counts an optics line's
    modules by (:mod:`netmodel.study.network_bill`).

    >>> from topologies import superpod
    >>> w = module_worth(superpod(1))
    >>> float(w.sum()), sorted(set(w.ravel().tolist()))   # a leaf's 31st down port alone
    (508.0, [0.0, 0.5, 1.0, 4.0])
    """
    e = edge_arrays(graph) if edges is None else edges
    worth = np.zeros((len(e.u), 2))
    if module_ports(graph) <= 1:
        return worth
    m = _modules(graph, e, media)
    # in row order, as a module at a time adds its share to each end it holds
    np.add.at(worth, (m.edge, (e.u[m.edge] != m.node).astype(np.intp)), 1.0 / m.size[m.module])
    return worth


def module_effects(graph: nx.Graph, edges: EdgeArrays | None = None,
                   media: tuple[str, ...] = ("pluggable-optics", "fibre")
                   ) -> list[tuple[str, tuple, tuple]]:
    """What each module of :func:`optical_modules` takes when it fails, as
    ``(name, removed, scaled)``: the edges ``(u, v)`` of which it holds every cable, and
    ``((u, v), factor)`` for those of which it holds ``k`` of ``C``, kept at
    ``(C - k) / C`` of their bandwidth. Named ``"{where} module {j}"``, ``j`` counting the
    modules at that node (or server) from 0.

    >>> from topologies import superpod
    >>> fx = module_effects(superpod(1))
    >>> fx[0]   # GPUs 0 and 1 of server 0: their NIC cables to rails 0 and 1
    ('gpu0 module 0', (('gpu0', 'leaf0'), ('gpu1', 'leaf1')), ())
    >>> next(f for f in fx if f[0] == "leaf0 module 16")   # 2 of 8 cables to spine0
    ('leaf0 module 16', (), ((('leaf0', 'spine0'), 0.75),))
    """
    if module_ports(graph) <= 1:
        return []
    e = edge_arrays(graph) if edges is None else edges
    m = _modules(graph, e, media)
    mod, edge, k = _held(m, len(e.u))
    c = e.links[edge]
    whole = c - k <= 1e-9
    kept = np.where(whole, 0.0, (c - k) / np.where(whole, 1.0, c))
    # j: a module's count among the modules at its node, from 0
    by = np.argsort(m.where, kind="stable")
    first = np.r_[True, m.where[by][1:] != m.where[by][:-1]] if len(by) else np.zeros(0, bool)
    run = np.arange(len(by)) - np.maximum.accumulate(np.where(first, np.arange(len(by)), 0))
    j = np.empty(len(by), dtype=np.int64)
    j[by] = run
    names = [f"{e.nodes[w]} module {n}" for w, n in zip(m.where.tolist(), j.tolist(), strict=True)]
    removed: list[list] = [[] for _ in names]
    scaled: list[list] = [[] for _ in names]
    for i, u, v, cut, f in zip(mod.tolist(), e.u[edge].tolist(), e.v[edge].tolist(),
                               whole.tolist(), kept.tolist(), strict=True):
        uv = (e.nodes[u], e.nodes[v])
        if cut:
            removed[i].append(uv)
        else:
            scaled[i].append((uv, f))
    return [(n, tuple(r), tuple(s)) for n, r, s in zip(names, removed, scaled, strict=True)]
