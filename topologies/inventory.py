"""What a fabric is made of: the bill of materials (cables, traces, lanes, optics, ports in
use), the ports in use on every switch and OCS and the share of them a fabric fills
(:func:`port_fill`), and which of its parts copies of it would share in a full build
(:func:`shared_part`, :func:`cells_per_shared_part`). Its links as arrays are
:mod:`topologies.edge_arrays`', its scale-out NICs and an OCS cabling's fibres
:mod:`topologies.nics`'. What a fabric can carry (diameter, bisection, injection
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
from collections.abc import Hashable
from dataclasses import dataclass

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.validate import describe
from topologies.edge_arrays import EdgeArrays, edge_arrays
from topologies.nics import nic_gpus, nic_ports
from topologies.optic_modules import module_count, module_ports, paired_ends
from topologies.schema import TRACE_MEDIA
from topologies.schema_reads import check_graph

__all__ = ["OPTICAL_MEDIA", "BillOfMaterials", "bill_of_materials", "cable_end_parts",
           "cells_per_shared_part", "port_fill", "port_use", "shared_part"]

#: The media whose link ends are pluggable optics (a transceiver each end), for the bill of
#: materials here and the network's prices (:mod:`netmodel.study.network_bill`).
OPTICAL_MEDIA = ("pluggable-optics", "fibre")


@dataclass(frozen=True)
class BillOfMaterials:
    """Cables by medium (circuits are not cables), traces (links of a medium of
    :data:`~topologies.schema.TRACE_MEDIA`, a board's or a package's wiring: not cables, no
    optics or connectors) by medium, lanes, optics and ports in use.

    ``pluggable_transceivers``: the pluggable modules: one per optical cable end at a GPU or
    switch (pluggable optics or plain fibre), or where the fabric's ``module_ports`` is 2
    one per two ends (twin-port OSFP, :func:`~topologies.optic_modules.optical_modules`:
    a switch's ends two a module, a server's GPUs' ends likewise); ``cpo_ports``: the same
    for co-packaged optics; an end at an OCS needs no transceiver (the OCS steers light)
    and counts in ``ocs_ports_used``. Ends of a breakout share count as
    :func:`cable_end_parts` says: the GPU end one, the switch end its share of a port.
    A realized OCS fabric (:func:`~topologies.optical.realize`, graph attribute
    ``ocs_cabling``) is made of the same fibres, ports and optics as its bare cabling,
    whatever circuits are set up; ``circuits`` counts those. ``nics``: the GPUs that hold a
    scale-out NIC (:func:`~topologies.nics.nic_gpus`), one each however many network links a GPU has (on a
    realized OCS fabric, every GPU its fibres reach, a circuit set on its port or not).
    ``nic_worth``: the NICs those ports make up (:func:`~topologies.nics.nic_ports`' ``cables`` summed, a
    breakout share its share: lite-direct's 128 Lites hold 32 NICs' worth), what the cost
    model charges. ``pluggable_ends``: the optical cable ends those transceivers serve
    (``pluggable_transceivers`` where every module holds one end); ``module_ports``: the
    fabric's :func:`~topologies.optic_modules.module_ports` (2: twin-port modules).
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
    pluggable_ends: int = 0
    module_ports: int = 1


def _kinds(graph: nx.Graph) -> dict[Hashable, str]:
    return dict(graph.nodes(data="kind"))


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

    Parameters
    ----------
    kind : str
        The end's node kind: ``"gpu"``, ``"switch"`` or ``"ocs"``.
    links : float
        The edge's cables (its ``links``; a breakout share below 1).

    Returns
    -------
    float or int
        The parts at that end.

    Examples
    --------
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
    :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them.

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.
    edges : EdgeArrays, optional
        As said above.

    Returns
    -------
    tuple of three dicts
        ``(gpu_ports, net_ports, port_rate)`` by switch or OCS node, each in order of the
        node's first link.

    Examples
    --------
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

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.
    edges : EdgeArrays, optional
        ``graph``'s :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them.
    use : tuple of three dicts, optional
        ``graph``'s :func:`port_use`, where the caller has it.

    Returns
    -------
    float
        The share, 0 to 1.

    Raises
    ------
    UserError
        A ``use`` that is not :func:`port_use`'s shape or names a node not in ``graph``.

    Examples
    --------
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

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.

    Returns
    -------
    int

    Examples
    --------
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

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.
    u : node
        A node of ``graph``.
    v : node, optional
        The link's other end; None to ask of ``u`` itself.

    Returns
    -------
    bool

    Examples
    --------
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



def bill_of_materials(graph: nx.Graph, edges: EdgeArrays | None = None) -> BillOfMaterials:
    """Count cables, lanes, transceivers and ports of ``graph`` (see :class:`BillOfMaterials`).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric, bare or realized (an OCS fabric's ``ocs_cabling`` counted).
    edges : EdgeArrays, optional
        ``graph``'s :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them.

    Returns
    -------
    BillOfMaterials

    Examples
    --------
    >>> from topologies import superpod
    >>> b = bill_of_materials(superpod(1))   # 248 H100 x 18 NVLinks on their baseboards
    >>> b.cables, b.traces, b.pluggable_transceivers   # 1,008 ends in twin-port modules
    ({'pluggable-optics': 504}, {'board': 4464}, 508)
    >>> b.pluggable_ends, b.module_ports
    (1008, 2)
    >>> bill_of_materials(superpod(1, module_ports=1)).pluggable_transceivers
    1008
    """
    cables: Counter = Counter()
    traces: Counter = Counter()
    lanes = 0
    plug = cpo = switch_used = ocs_used = circuits = 0.0
    cabling = check_graph(graph).graph.get("ocs_cabling")   # a 5 raised AttributeError
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
    is_ocs, is_switch = e.kind_is("ocs"), e.kind_is("switch")
    paired = paired_ends(graph, e, optical)   # their ends in modules of several ports
    plug_ends = plug   # the OCS fabric's and circuits' ends above: one a module
    for end in (e.u, e.v):
        ocs_used += _total(links[cabled & is_ocs[end]])
        switch_used += _total(links[cabled & is_switch[end]])
        share = e.end_parts(end)
        plug += _total(share[optical & ~paired])
        plug_ends += _total(share[optical])
        cpo += _total(share[co_packaged])
    if paired.any():
        plug += module_count(graph, e, OPTICAL_MEDIA)
    switch_ports = sum(d["radix"] for _, d in graph.nodes(data=True) if d["kind"] == "switch")
    ocs_ports = sum(d["ports"] for _, d in graph.nodes(data=True) if d["kind"] == "ocs")
    def whole(counts: Counter) -> dict:
        return {m: (round(c) if abs(c - round(c)) < 1e-6 else c) for m, c in sorted(counts.items())}

    return BillOfMaterials(
        cables=whole(cables), lanes=int(lanes), pluggable_transceivers=round(plug),
        cpo_ports=round(cpo), switch_ports_used=round(switch_used), switch_ports=switch_ports,
        ocs_ports_used=round(ocs_used), ocs_ports=ocs_ports, circuits=round(circuits),
        traces=whole(traces), nics=len(nic_gpus(graph, e)),
        nic_worth=_worth(sum(c for _, _, c in nic_ports(graph, e))),
        pluggable_ends=round(plug_ends), module_ports=module_ports(graph))


def _worth(n: float) -> float:
    """A sum of breakout shares as the whole it makes where it is one (0.25 x 128 = 32.0
    exactly, 0.1 x 10 = 1.0 and not 0.9999999999999999)."""
    return float(round(n)) if abs(n - round(n)) < 1e-9 else n
