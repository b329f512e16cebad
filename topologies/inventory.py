"""What a fabric is made of: its links as arrays read in one pass (:func:`edge_arrays`), the
bill of materials (cables, traces, lanes, optics, ports in use), the ports in use on every
switch and OCS and the share of them a fabric fills (:func:`port_fill`), and which of its
parts copies of it would share in a full build (:func:`shared_part`,
:func:`cells_per_shared_part`). What a fabric can carry (diameter, bisection, injection
bandwidth, path diversity) is :mod:`topologies.analysis`'s, whose
:func:`~topologies.analysis.summary` gathers both.

>>> from topologies import build
>>> g = build("fat-tree:k=4")   # 16 GPUs, 20 four-port switches, 3 x 16 optical cables
>>> b = bill_of_materials(g)
>>> b.cables, b.pluggable_transceivers, b.switch_ports_used, b.switch_ports
({'pluggable-optics': 48}, 96, 80, 80)
>>> port_fill(g)   # every leaf's down ports hold a GPU
1.0
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.validate import describe, of_type
from topologies.schema import TRACE_MEDIA, circuit_via
from topologies.schema_circuits import CABLING_FIBRES

__all__ = ["NIC_MEDIA", "OPTICAL_MEDIA", "BillOfMaterials", "EdgeArrays", "bill_of_materials",
           "cable_end_parts", "cells_per_shared_part", "edge_arrays", "edges_of", "nic_gpus",
           "nic_ports", "nic_share", "ocs_fibre_rate", "ocs_fibre_rows", "ocs_fibres", "port_fill",
           "port_use", "shared_part"]

#: The media whose link ends are pluggable optics (a transceiver each end), for the bill of
#: materials here and the network's prices (:mod:`netmodel.study.network_bill`).
OPTICAL_MEDIA = ("pluggable-optics", "fibre")

#: The media of a GPU's link to the network (a switch of tier >= 1 or an OCS) that a
#: scale-out NIC drives (:func:`nic_gpus`): a pluggable module, plain fibre or a copper
#: cable in a NIC's port. A co-packaged-optics end is an optical engine on the GPU's own
#: package, driven by the GPU die's I/O as an H100's NVLinks are (Intel's OCI chiplet,
#: co-packaged with a CPU, carries that processor's own PCIe lanes: 64 x 32 Gb/s, 4 Tb/s at
#: 5 pJ/bit, Tom's Hardware 2024-06-27): no NIC, the engine priced and powered as optics
#: (docs/economics.md, "Scale-out NICs").
NIC_MEDIA = ("pluggable-optics", "fibre", "copper")


@dataclass(frozen=True)
class BillOfMaterials:
    """Cables by medium (circuits are not cables), traces (links of a medium of
    :data:`~topologies.schema.TRACE_MEDIA`, a board's or a package's wiring: not cables, no
    optics or connectors) by medium, lanes, optics and ports in use.

    ``pluggable_transceivers``: one per optical cable end at a GPU or switch (pluggable
    optics or plain fibre); ``cpo_ports``: the same for co-packaged optics; an end at an OCS
    needs no transceiver (the OCS steers light) and counts in ``ocs_ports_used``. Ends of a
    breakout share count as :func:`cable_end_parts` says: the GPU end one, the switch end
    its share of a port.
    A realized OCS fabric (:func:`~topologies.optical.realize`, graph attribute
    ``ocs_cabling``) is made of the same fibres, ports and optics as its bare cabling,
    whatever circuits are set up; ``circuits`` counts those. ``nics``: the GPUs that hold a
    scale-out NIC (:func:`nic_gpus`), one each however many network links a GPU has (on a
    realized OCS fabric, every GPU its fibres reach, a circuit set on its port or not).
    ``nic_worth``: the NICs those ports make up (:func:`nic_ports`' ``cables`` summed, a
    breakout share its share: lite-direct's 128 Lites hold 32 NICs' worth), what the cost
    model charges.
    """

    cables: dict
    lanes: int
    pluggable_transceivers: int
    cpo_ports: int
    switch_ports_used: int
    switch_ports: int
    ocs_ports_used: int
    ocs_ports: int
    circuits: int
    traces: dict
    nics: int = 0
    nic_worth: float = 0.0


def _kinds(graph: nx.Graph) -> dict[Hashable, str]:
    return dict(graph.nodes(data="kind"))


@dataclass(frozen=True)
class EdgeArrays:
    """A fabric's links as arrays, read from the graph in one pass (:func:`edge_arrays`) and
    shared by the analyses that would each loop over every edge in Python: ``u``/``v``
    index ``nodes`` (edge order is ``graph.edges()``'s), ``node_kind`` codes index
    ``kinds``, ``medium`` and ``optics`` (a circuit's, default co-packaged optics) codes
    index ``media``; ``node_bandwidth`` each node's links' bandwidth summed in its adjacency
    order (``graph.degree(weight="bandwidth")``'s sums)."""

    nodes: list
    kinds: tuple
    node_kind: np.ndarray
    u: np.ndarray
    v: np.ndarray
    links: np.ndarray
    bandwidth: np.ndarray
    lanes: np.ndarray
    media: tuple
    medium: np.ndarray
    optics: np.ndarray
    node_bandwidth: np.ndarray

    def kind_is(self, kind: str) -> np.ndarray:
        """Boolean per node: of ``kind``."""
        return self.node_kind == _code(self, kind)

    def end_parts(self, ends: np.ndarray) -> np.ndarray:
        """Per edge: :func:`cable_end_parts` at its end ``ends`` (``self.u`` or ``self.v``)."""
        kind = self.node_kind[ends]
        return np.where(kind == _code(self, "ocs"), 0.0,
                        np.where(kind == _code(self, "gpu"), np.ceil(self.links - 1e-9),
                                 self.links))

    def medium_in(self, media: Iterable[str]) -> np.ndarray:
        """Boolean per edge: its medium one of ``media``."""
        return np.isin(self.medium, self._media_codes(media))

    def optics_in(self, media: Iterable[str]) -> np.ndarray:
        """Boolean per edge: its ``optics`` one of ``media``."""
        return np.isin(self.optics, self._media_codes(media))

    def _media_codes(self, media: Iterable[str]) -> list[int]:
        wanted = set(media)
        return [i for i, m in enumerate(self.media) if m in wanted]


def _codes(values: list) -> tuple[tuple, np.ndarray]:
    """The distinct ``values`` in order of first appearance and each value's code."""
    names = tuple(dict.fromkeys(values))
    code = {x: i for i, x in enumerate(names)}
    return names, np.fromiter(map(code.__getitem__, values), dtype=np.int64, count=len(values))


def edge_arrays(graph: nx.Graph) -> EdgeArrays:
    """One pass over ``graph`` into an :class:`EdgeArrays` (for :func:`bill_of_materials`,
    :func:`port_use` and :func:`port_fill`, which build one each where not given it).

    >>> from topologies import build
    >>> e = edge_arrays(build("leaf-spine:leaves=2,radix=4"))
    >>> len(e.u), e.kinds, int(e.links.sum())
    (8, ('switch', 'gpu'), 8)
    """
    adj = graph._adj
    nodes = list(adj)
    index = {n: i for i, n in enumerate(nodes)}
    kinds, node_kind = _codes(list(map(itemgetter("kind"), graph._node.values())))
    # every edge twice (once from each end), in adjacency order; graph.edges() yields an
    # edge from the end it meets first, the one of lower node index (a self-loop once)
    degree = np.fromiter(map(len, adj.values()), dtype=np.int64, count=len(nodes))
    total = int(degree.sum())
    far = np.fromiter(map(index.__getitem__, chain.from_iterable(adj.values())),
                      dtype=np.int64, count=total)
    near = np.repeat(np.arange(len(nodes), dtype=np.int64), degree)
    first = np.flatnonzero(near <= far)
    data = list(chain.from_iterable(nbrs.values() for nbrs in adj.values()))
    ds = list(map(data.__getitem__, first.tolist()))
    media, medium = _codes(list(map(itemgetter("medium"), ds)) +
                           [d.get("optics", "co-packaged-optics") for d in ds])
    m = len(ds)
    return EdgeArrays(
        nodes=nodes, kinds=kinds, node_kind=node_kind, u=near[first], v=far[first],
        links=np.array([d.get("links", 1) for d in ds], dtype=float).reshape(m),
        bandwidth=np.array(list(map(itemgetter("bandwidth"), ds)), dtype=float).reshape(m),
        lanes=np.array(list(map(itemgetter("lanes"), ds))).reshape(m),
        media=media, medium=medium[:m], optics=medium[m:],
        node_bandwidth=np.bincount(near, weights=np.array(
            list(map(itemgetter("bandwidth"), data)), dtype=float).reshape(total),
            minlength=len(nodes)))


def edges_of(graph: nx.Graph, edges: EdgeArrays | None = None) -> EdgeArrays:
    """``edges`` where they are ``graph``'s :func:`edge_arrays` (node list and link count
    compared, O(n)), built where None; another graph's refused in one line naming which
    differs (they index nodes this one lacks, or misread its links).

    >>> from topologies import build
    >>> edges_of(build("ring:n=4"), edge_arrays(build("ring:n=8")))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: edges must be edge_arrays(graph) of this graph (4 nodes, 4 links), got another graph's (8 nodes, 8 links)
    >>> g = build("ring:n=4"); e = edge_arrays(g); g.remove_edge(*next(iter(g.edges)))
    >>> edges_of(g, e)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: edges must be edge_arrays(graph) of this graph (4 nodes, 3 links), got arrays of the same nodes with 4 links
    """
    if of_type("edges", edges, EdgeArrays, "edge_arrays(graph)") is None:
        return edge_arrays(graph)
    if edges.nodes != list(graph) or len(edges.u) != graph.number_of_edges():
        got = (f"another graph's ({len(edges.nodes):,} nodes, {len(edges.u):,} links)"
               if edges.nodes != list(graph) else
               f"arrays of the same nodes with {len(edges.u):,} links")
        raise UserError(f"edges must be edge_arrays(graph) of this graph ({len(graph):,} "
                        f"nodes, {graph.number_of_edges():,} links), got {got}")
    return edges


def cable_end_parts(kind: str, links: float) -> float:
    """Parts (transceivers, co-packaged engines, copper connectors) at one end of an edge of
    ``links`` cables, the end being a node of ``kind``: the one rule the bill of materials
    and the failure domains (:mod:`topologies.failure_domains`) both count by.

    A switch end holds ``links`` ports' worth: a breakout share (``links < 1``, or a share
    such as 4.5 cables) is that fraction of the switch-side transceivers, which every share
    of the cable shares. A GPU end holds ``ceil(links)``: each far end of a breakout is a
    part of its own. An OCS end holds none (it steers light; no transceiver). A 400G-DR4
    breakout is 5 transceivers: one OSFP-400G-DR4 in the switch port and up to four
    QSFP-100G-DR at the far ends, one each (Arista FAQ, "How can I break out a 400G port and
    connect to 100G QSFP ports on existing platforms", as reproduced at
    https://www.fiberolink.com/how-can-i-break-out-a-400g-port-and-connect-to-100g-qsfp-ports-on-existing-platforms).

    >>> cable_end_parts("switch", 0.25), cable_end_parts("gpu", 0.25), cable_end_parts("ocs", 1)
    (0.25, 1, 0)
    >>> cable_end_parts("gpu", 4.5), cable_end_parts("switch", 8)
    (5, 8)
    """
    if kind == "ocs":
        return 0
    if kind == "gpu":
        return math.ceil(links - 1e-9)
    return links


def port_use(graph: nx.Graph, edges: EdgeArrays | None = None) -> tuple[dict, dict, dict]:
    """Ports in use on every switch and OCS: ``(gpu_ports, net_ports, port_rate)``, the
    cables (an edge's ``links``) to GPUs and to other switches by node, and each node's
    fastest cable (bytes/s). OCS circuits take no port. Read by :func:`port_fill` and by the
    cost model (:func:`netmodel.study.network_bill.network_bill`). ``edges``: the graph's
    :func:`edge_arrays`, where the caller has them.

    >>> from topologies import build
    >>> gpu, net, rate = port_use(build("leaf-spine:leaves=2,radix=4"))
    >>> gpu["leaf0"], net["leaf0"], net["spine0"]
    (2.0, 2.0, 2.0)
    """
    e = edge_arrays(graph) if edges is None else edges
    keep = ~e.medium_in(("ocs-circuit",))
    # each edge's two ends in edge order, (u, v) then (v, u): the order the dicts fill in
    a = np.stack([e.u[keep], e.v[keep]], axis=1).ravel()
    b = np.stack([e.v[keep], e.u[keep]], axis=1).ravel()
    links = np.repeat(e.links[keep], 2)
    rate = np.repeat(e.bandwidth[keep] / e.links[keep], 2)
    gpu = e.kind_is("gpu")
    at = ~gpu[a]
    a, b, links, rate = a[at], b[at], links[at], rate[at]
    n = len(e.nodes)

    def in_order(ends: np.ndarray, values: np.ndarray) -> dict:
        # each node in order of its first end, as the running dicts filled in
        order = ends[np.sort(np.unique(ends, return_index=True)[1])]
        return dict(zip([e.nodes[i] for i in order.tolist()], values[order].tolist(),
                        strict=True))

    def by_node(mask: np.ndarray) -> dict:
        # np.bincount adds in input order, as the running sums did
        return in_order(a[mask], np.bincount(a[mask], weights=links[mask], minlength=n))

    best = np.zeros(n)
    np.maximum.at(best, a, rate)
    to_gpu = gpu[b]
    return by_node(to_gpu), by_node(~to_gpu), in_order(a, best)


def port_fill(graph: nx.Graph, edges: EdgeArrays | None = None, *,
              use: tuple[dict, dict, dict] | None = None) -> float:
    """Share of the GPU-facing ports in use on the tier >= 1 switches and OCSes GPUs attach
    to: their GPU links over their ports not taken by links to other switches (a link of
    ``links`` cables takes that many ports; circuits take none). The one figure by which a
    fabric is read as a slice of one built out to full size, by the cost model
    (:func:`netmodel.study.network_bill.network_bill`, ``share="ports-used"``) and by the failure
    model (:func:`cells_per_shared_part`). 1 where GPUs attach to no such switch. ``use``:
    :func:`port_use`'s ``(gpu_ports, net_ports, port_rate)`` of this graph, where the
    caller has it (``edges`` is then not read).

    >>> from topologies import build
    >>> port_fill(build("rail-optimized:domains=4"))   # 32 of 8 leaves x 32 down ports
    0.125
    >>> round(port_fill(build("flat:n=128,planes=4,radix=144")), 4)
    0.8889
    """
    kind = _kinds(graph)
    gpu_ports, net_ports, _ = port_use(graph, edges) if use is None else _port_use_of(graph, use)
    attach = [n for n in gpu_ports if kind[n] == "ocs" or graph.nodes[n]["tier"] >= 1]
    room = sum(_node_ports(graph, n) - net_ports.get(n, 0.0) for n in attach)
    return min(1.0, sum(gpu_ports[n] for n in attach) / room) if room > 0 else 1.0


def _port_use_of(graph: nx.Graph, use: object) -> tuple[dict, dict, dict]:
    """``use`` where it has :func:`port_use`'s shape (three dicts) and names only nodes of
    ``graph`` (O(n)), else refused in one line."""
    if not (isinstance(use, tuple) and len(use) == 3 and all(isinstance(d, dict) for d in use)):
        raise UserError(f"use must be port_use(graph)'s (gpu_ports, net_ports, port_rate), "
                        f"three dicts; got {describe(use)}")
    stray = next((n for d in use for n in d if n not in graph), None)
    if stray is not None:
        raise UserError(f"use must be port_use(graph) of this graph; it names node "
                        f"{describe(stray)}, not one of this graph's")
    return use


def _node_ports(graph: nx.Graph, node: Hashable) -> int:
    d = graph.nodes[node]
    return int(d["ports"] if d["kind"] == "ocs" else d["radix"])


def cells_per_shared_part(graph: nx.Graph) -> int:
    """How many copies of ``graph`` (cells) one :func:`shared_part` of a full build serves:
    ``floor(1 / port_fill)``, at least 1. A cell that fills 4 of the 32 GPU ports of each
    rail leaf (``h100-dgx``: 4 servers on leaves built for an SU of 32) is an eighth of
    the SU its leaves, spines and uplinks are built for, so 8 cells share one set of them;
    a flat fabric of 128 Lites on 144-port planes fills no second cell's worth (1).

    >>> from topologies import build
    >>> cells_per_shared_part(build("rail-optimized:domains=4")), \\
    ...     cells_per_shared_part(build("flat:n=128,planes=4,radix=144"))
    (8, 1)
    """
    return max(1, math.floor(1 / port_fill(graph) + 1e-9))


def shared_part(graph: nx.Graph, u: Hashable, v: Hashable | None = None) -> bool:
    """Whether a node (``v`` None) or the link ``u``-``v`` belongs to the part of a fabric
    that copies of it would share in a full build: a switch of tier >= 1 or an OCS (it
    holds other cells' GPUs, or links the switches that do), and a link between two
    switches or OCSes. A GPU, its tier-0 (scale-up) switch and a GPU's own link are its
    cell's alone. The cost model charges shared parts at :func:`port_fill`'s share; the
    failure model counts them once per :func:`cells_per_shared_part` cells.

    >>> from topologies import build
    >>> g = build("rail-optimized:domains=4")
    >>> shared_part(g, "leaf0"), shared_part(g, "nvs0"), shared_part(g, "leaf0", "spine0"), \\
    ...     shared_part(g, "gpu0", "leaf0")
    (True, False, True, False)
    """
    data = graph._node   # the attribute dicts (called per link of a fabric)
    if v is None:
        d = data[u]
        return d["kind"] == "ocs" or (d["kind"] == "switch" and d["tier"] >= 1)
    return data[u]["kind"] != "gpu" and data[v]["kind"] != "gpu"


def _total(values: np.ndarray) -> float | int:
    """Sum of a float array, whole-valued sums as int (as Python's running sums of the
    ``links`` ints gave)."""
    t = math.fsum(values.tolist()) if len(values) else 0
    return int(t) if float(t).is_integer() else t


def _code(e: EdgeArrays, kind: str) -> int:
    """``kind``'s code in ``e.node_kind`` (-1: no node of it)."""
    return e.kinds.index(kind) if kind in e.kinds else -1


def bill_of_materials(graph: nx.Graph, edges: EdgeArrays | None = None) -> BillOfMaterials:
    """Count cables, lanes, transceivers and ports of ``graph`` (see :class:`BillOfMaterials`).

    >>> from topologies import superpod
    >>> b = bill_of_materials(superpod(1))   # 248 H100 x 18 NVLinks on their baseboards
    >>> b.cables, b.traces, b.pluggable_transceivers
    ({'pluggable-optics': 504}, {'board': 4464}, 1008)
    """
    cables: Counter = Counter()
    traces: Counter = Counter()
    lanes = 0
    plug = cpo = switch_used = ocs_used = circuits = 0.0
    cabling = graph.graph.get("ocs_cabling")
    if cabling is not None:  # a realized OCS fabric: its GPU-OCS fibres, used or not
        cables[cabling["medium"]] += cabling["cables"]
        lanes += cabling["lanes"]
        ocs_used += cabling["cables"]
        if cabling["medium"] in OPTICAL_MEDIA:
            plug += cabling["cables"]
        elif cabling["medium"] == "co-packaged-optics":
            cpo += cabling["cables"]
    e = edge_arrays(graph) if edges is None else edges
    links = e.links
    circuit = e.medium_in(("ocs-circuit",))
    circuits += _total(links[circuit])
    if cabling is None:
        lanes += int(e.lanes.sum())
        ocs_used += 2 * _total(links[circuit])
        cpo += 2 * _total(links[circuit & e.optics_in(("co-packaged-optics",))])
        plug += 2 * _total(links[circuit & e.optics_in(OPTICAL_MEDIA)])
    else:   # circuits ride on the fibres counted above
        lanes += int(e.lanes[~circuit].sum())
    cabled = ~circuit
    for code, medium in enumerate(e.media):
        on = cabled & (e.medium == code)
        if on.any():
            (traces if medium in TRACE_MEDIA else cables)[medium] += _total(links[on])
    optical, co_packaged = cabled & e.medium_in(OPTICAL_MEDIA), cabled & e.medium_in(
        ("co-packaged-optics",))
    for end in (e.u, e.v):
        kind = e.node_kind[end]
        ocs_used += _total(links[cabled & (kind == _code(e, "ocs"))])
        switch_used += _total(links[cabled & (kind == _code(e, "switch"))])
        share = e.end_parts(end)
        plug += _total(share[optical])
        cpo += _total(share[co_packaged])
    switch_ports = sum(d["radix"] for _, d in graph.nodes(data=True) if d["kind"] == "switch")
    ocs_ports = sum(d["ports"] for _, d in graph.nodes(data=True) if d["kind"] == "ocs")
    def whole(counts: Counter) -> dict:
        return {m: (round(c) if abs(c - round(c)) < 1e-6 else c) for m, c in sorted(counts.items())}

    return BillOfMaterials(
        cables=whole(cables), lanes=int(lanes), pluggable_transceivers=round(plug),
        cpo_ports=round(cpo), switch_ports_used=round(switch_used), switch_ports=switch_ports,
        ocs_ports_used=round(ocs_used), ocs_ports=ocs_ports, circuits=round(circuits),
        traces=whole(traces), nics=len(nic_gpus(graph, e)),
        nic_worth=_worth(sum(c for _, _, c in nic_ports(graph, e))))


def _worth(n: float) -> float:
    """A sum of breakout shares as the whole it makes where it is one (0.25 x 128 = 32.0
    exactly, 0.1 x 10 = 1.0 and not 0.9999999999999999)."""
    return float(round(n)) if abs(n - round(n)) < 1e-9 else n


def nic_gpus(graph: nx.Graph, edges: EdgeArrays | None = None) -> list:
    """The GPUs of ``graph`` that hold a scale-out NIC: those with a link of a medium of
    :data:`NIC_MEDIA` to a switch of tier >= 1 or an OCS, or, on a realized OCS fabric, a
    fibre of its cabling of such a medium (:func:`ocs_fibres`; a fabric file's fibres
    whose ends are not known name no GPU), in node order. Not a GPU that reaches the
    network only through its scale-up domain's tier-0 switch (rail-optimized's
    ``nics_per_server`` below ``gpus_per_server``, a fabric of one scale-up domain) or
    only through other GPUs, nor one whose network links are co-packaged optics on its own
    package (its die's I/O drives them: the Lite fabrics lite-flat, lite-hier and
    lite-ocs). The cost model charges their NICs by :func:`nic_ports`, a NIC a cable
    (:func:`netmodel.study.host_bill.nic_charge`).

    >>> from topologies import build
    >>> len(nic_gpus(build("rail-optimized:domains=2,nics_per_server=4")))
    8
    >>> nic_gpus(build("leaf-spine:leaves=2,radix=4"))
    ['gpu0', 'gpu1', 'gpu2', 'gpu3']
    >>> nic_gpus(build("leaf-spine:leaves=2,radix=4,medium=co-packaged-optics"))
    []

    A realized OCS fabric (its circuits set) holds the NICs of its cabling, every GPU port
    cabled to an OCS whether a circuit is set on it now or not (:func:`ocs_fibres`):

    >>> from topologies.optical import realize
    >>> g = build("ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics")
    >>> nic_gpus(realize(g, [("gpu0", "gpu1")]))   # one circuit; 4 GPUs cabled
    ['gpu0', 'gpu1', 'gpu2', 'gpu3']
    """
    e = edges_of(graph, edges)
    holds = np.zeros(len(e.nodes), dtype=bool)
    holds[_nic_ends(graph, e)[0]] = True
    fibres = ocs_fibres(graph, e)[0] if _cabling_medium(graph) in NIC_MEDIA else ()
    if fibres:
        at = {n: i for i, n in enumerate(e.nodes)}
        holds[[at[g] for g, _ in fibres]] = True
    return [e.nodes[i] for i in np.flatnonzero(holds).tolist()]


def _cabling_medium(graph: nx.Graph) -> str | None:
    """The medium of a realized OCS fabric's cabling (None for any other graph)."""
    cabling = graph.graph.get("ocs_cabling")
    return None if cabling is None else cabling["medium"]


def ocs_fibres(graph: nx.Graph, edges: EdgeArrays | None = None) -> tuple[list[tuple], int]:
    """``(fibres, unknown)``: the GPU-OCS fibres of a realized OCS fabric (its circuits
    set, :func:`~topologies.optical.realize`: its fibres are not edges but the graph
    attribute ``ocs_cabling``), each a ``(gpu, ocs)`` pair in node order, and how many more
    fibres ``ocs_cabling`` counts whose ends are not known. Where it counts a fibre from
    every GPU to every OCS (the ``ocs`` builder's cabling: port ``p`` of each GPU to
    ``ocs{p}``) they are all known, with a circuit set on them or not; else they are the
    fibres the circuits' ``via`` name, the rest ``unknown``. ``([], 0)`` for any other graph
    (its fibres are edges). The failure model reads the same fibres
    (:mod:`topologies.failure_domains`: a NIC and an end a fibre).

    >>> from topologies import build
    >>> from topologies.optical import realize
    >>> g = realize(build("ocs:gpus=4,ports=2,ocs_ports=4"), [("gpu0", "gpu1")])
    >>> fibres, unknown = ocs_fibres(g)
    >>> len(fibres), fibres[:3], unknown
    (8, [('gpu0', 'ocs0'), ('gpu0', 'ocs1'), ('gpu1', 'ocs0')], 0)
    """
    cabling = graph.graph.get("ocs_cabling")
    if cabling is None:
        return [], 0
    data = graph._node
    if "fibres" in cabling:   # the cabling's own record (realize keeps it)
        rows = ocs_fibre_rows(graph)
        return ([(r[0], r[1]) for r in rows if r[0] in data],
                round(sum(r[2] for r in rows if r[0] not in data)))
    gpus = [n for n, d in data.items() if d.get("kind") == "gpu"]
    switches = [n for n, d in data.items() if d.get("kind") == "ocs"]
    cables = round(float(cabling["cables"]))
    if cables == len(gpus) * len(switches):   # every GPU to every OCS
        return [(g, o) for g in gpus for o in switches], 0
    e = edges_of(graph, edges)
    used = set()
    for i in np.flatnonzero(e.medium_in(("ocs-circuit",))).tolist():
        u, v = e.nodes[e.u[i]], e.nodes[e.v[i]]
        for o in circuit_via(u, v, graph._adj[u][v], data) or ():
            used.update(((u, o), (v, o)))
    at = {n: i for i, n in enumerate(data)}
    return sorted(used, key=lambda p: (at[p[0]], at[p[1]])), max(0, cables - len(used))


def ocs_fibre_rows(graph: nx.Graph) -> list[tuple] | None:
    """The fibres of a realized OCS fabric's cabling as it recorded them
    (``ocs_cabling["fibres"]``, :func:`topologies.optical.ocs_cabling`), one ``(gpu, ocs,
    cables, bandwidth, lanes, length)`` a GPU-OCS pair in node order (bandwidth in bytes/s
    per direction over its cables, length in m; the fibres of GPUs that are not nodes of
    ``graph`` last, where a part of a cell carries the whole cell's cabling); None for any
    other graph, and for a
    fabric file written before the record (its fibres' rate is read back from its
    circuits, :func:`ocs_fibre_rate`; the network bill takes their length from the
    builder's parameters the file records, else from its circuits).

    >>> from topologies import build
    >>> from topologies.optical import realize
    >>> g = build("ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics")
    >>> g.edges["gpu0", "ocs1"]["bandwidth"] *= 2   # one faster port; no circuit on it
    >>> ocs_fibre_rows(realize(g, [("gpu2", "gpu3")]))[:2]
    [('gpu0', 'ocs0', 1, 225000000000.0, 18, 10.0), ('gpu0', 'ocs1', 1, 450000000000.0, 18, 10.0)]
    """
    cabling = graph.graph.get("ocs_cabling")
    if cabling is None or "fibres" not in cabling:
        return None
    f = cabling["fibres"]
    at = {n: i for i, n in enumerate(graph._node)}
    rows = zip(*(f[k] for k in CABLING_FIBRES), strict=True)
    # a GPU outside the graph (a part of a cell carrying the whole cell's cabling) last,
    # in the record's order
    return sorted(rows, key=lambda r: (at.get(r[0], len(at)), at[r[1]]))


def ocs_fibre_rate(graph: nx.Graph, edges: EdgeArrays | None = None) -> float:
    """The rate of each fibre of a realized OCS fabric's cabling (:func:`ocs_fibres`;
    bytes/s per direction): the circuits' rate a lane times the cabling's lanes a fibre (a
    circuit holds its fibres' lanes, :func:`~topologies.optical.realize`). The cabling keeps
    no rate of its own, so a realized fabric with no circuit set is refused (UserError).

    >>> from topologies import build
    >>> ocs_fibre_rate(build("ocs:gpus=8,ports=4,ocs_ports=8,logical=ring")) / 1e9
    112.5
    """
    cabling = graph.graph.get("ocs_cabling")
    e = edges_of(graph, edges)
    circuit = e.medium_in(("ocs-circuit",))
    if cabling is None or not circuit.any():
        raise UserError("a realized OCS fabric with no circuit set has no known port rate: "
                        "its cabling (graph attribute 'ocs_cabling') holds none; use the "
                        "cabling itself (the ocs spec without logical=)")
    cables, lanes = int(cabling["cables"]), int(cabling["lanes"])
    done = e.lanes[circuit].sum()
    total = e.bandwidth[circuit].sum()
    return float(total / done * lanes / cables) if done and cables \
        else float(total / e.links[circuit].sum())


def _nic_ends(graph: nx.Graph, e: EdgeArrays) -> tuple[np.ndarray, np.ndarray]:
    """``(gpu, edge)`` index arrays: each GPU end of a link a NIC drives (:func:`nic_gpus`'
    rule), by node index and edge position."""
    gpu = e.kind_is("gpu")
    tier = np.fromiter((d.get("tier", -1) for d in graph._node.values()), dtype=float,
                       count=len(e.nodes))
    network = e.kind_is("ocs") | (e.kind_is("switch") & (tier >= 1))
    by_nic = e.medium_in(NIC_MEDIA)
    # a circuit's NIC is its fibre's (ocs_fibres), held by the realized fabric's cabling;
    # a circuit with no cabling recorded (a fabric file's) holds one at each end
    circuit = e.medium_in(("ocs-circuit",)) & e.optics_in(NIC_MEDIA) \
        & ("ocs_cabling" not in graph.graph)
    nodes, where = [], []
    for near, far in ((e.u, e.v), (e.v, e.u)):
        on = (gpu[near] & network[far] & by_nic) | (circuit & gpu[near])
        nodes.append(near[on])
        where.append(np.flatnonzero(on))
    return np.concatenate(nodes), np.concatenate(where)


def nic_share(links: float | np.ndarray) -> float | np.ndarray:
    """NICs' worth behind a GPU end of ``links`` cables a NIC drives: one NIC a cable, a
    breakout share its share, so the shares of one cable share one NIC (lite-direct's four
    Lites share their H100's NIC: a ConnectX-7 serves up to four hosts from one x16
    interface, NVIDIA Multi-Host; compute/data/economics.toml). The one rule the bill
    (:func:`nic_ports`' ``cables``) and the failure domains' ``nic`` parts count by.

    >>> nic_share(0.25) * 4, nic_share(1.0)
    (1.0, 1.0)
    """
    return links


def nic_ports(graph: nx.Graph, edges: EdgeArrays | None = None) -> list[tuple]:
    """The NIC ports of ``graph``: one ``(gpu, rate, cables)`` per GPU end of a link a NIC
    drives (:func:`nic_gpus`' rule), in edge order: ``rate`` the link's cable rate (bytes/s
    per direction: its bandwidth over its ``links``), ``cables`` its ``links`` (a breakout
    share below 1: four Lites of lite-direct each ride a quarter of one 400G cable, so each
    holds a quarter of its NIC). What the cost model charges NICs by
    (:func:`netmodel.study.host_bill.nic_charge`: the NIC class of the rate, ``cables`` of it).

    >>> from topologies import build
    >>> nic_ports(build("leaf-spine:leaves=2,radix=4"))[:1]
    [('gpu0', 50000000000.0, 1.0)]
    >>> nic_ports(build("leaf-spine:leaves=2,radix=4,medium=co-packaged-optics"))
    []

    A realized OCS fabric whose cabling is of pluggable optics, fibre or copper has NIC
    ports on its cabling too, a circuit set on a fibre or not, after the ports of its other
    links: one ``(gpu, rate, cables)`` per GPU-OCS pair of the cabling's record
    (:func:`ocs_fibre_rows`), ``rate`` the pair's recorded bandwidth over its cables, ``gpu``
    None where the GPU is not a node of ``graph`` (a part of a cell carries the whole cell's
    cabling). So a realized fabric with no circuit set has them too, at the rates its
    cabling recorded. A fabric file written before that record has one per fibre
    (:func:`ocs_fibres`), each at :func:`ocs_fibre_rate`, read back from its circuits
    (fibres whose ends are not known are one ``(None, rate, count)``), and is refused when
    no circuit is set (its fibres' rate is not known).

    >>> from topologies.optical import realize
    >>> g = build("ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics")
    >>> ports = nic_ports(realize(g, [("gpu0", "gpu1")]))   # one circuit, 8 fibres
    >>> len(ports), ports[-1]
    (8, ('gpu3', 225000000000.0, 1.0))
    >>> nic_ports(realize(g, [])) == ports   # no circuit set: the recorded rates
    True
    """
    e = edges_of(graph, edges)
    node, where = _nic_ends(graph, e)
    order = np.argsort(where, kind="stable")
    node, where = node[order], where[order]
    links = nic_share(e.links[where].astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(links > 0, e.bandwidth[where] / links, 0.0)
    out = [(e.nodes[n], r, c) for n, r, c in zip(node.tolist(), rate.tolist(),
                                                  links.tolist(), strict=True)]
    if _cabling_medium(graph) in NIC_MEDIA and (rows := ocs_fibre_rows(graph)) is not None:
        # the cabling's own fibres, each at its own rate (a cable a NIC port)
        data = graph._node   # a GPU outside the graph (a part of a cell) names none
        return out + [(g if g in data else None, bw / c, float(c))
                      for g, _, c, bw, _, _ in rows]
    fibres, unknown = ocs_fibres(graph, e) if _cabling_medium(graph) in NIC_MEDIA else ((), 0)
    if fibres or unknown:
        each = ocs_fibre_rate(graph, e)
        out += [(g, each, 1.0) for g, _ in fibres]
        if unknown:
            out.append((None, each, float(unknown)))
    return out


