"""The scale-out NICs of a fabric, and the OCS cabling's fibres they sit on.

Which GPUs hold a NIC (:func:`nic_gpus`) and their ports (:func:`nic_ports`), one NIC a
cable (:func:`nic_share`); the fibres of a realized OCS fabric's cabling
(:func:`ocs_fibres`, :func:`ocs_fibre_rows`, :func:`ocs_fibre_rate`), which are no edges
of its graph. The bill of materials
(:func:`topologies.inventory.bill_of_materials`), the cost model
(:mod:`netmodel.study.host_bill`, :mod:`netmodel.study.network_bill`) and the failure
domains (:mod:`topologies.failure_domains`) count NICs and fibres by these rules.

>>> from topologies import build
>>> nic_gpus(build("leaf-spine:leaves=2,radix=4"))
['gpu0', 'gpu1', 'gpu2', 'gpu3']
"""

from __future__ import annotations

from itertools import compress

import networkx as nx
import numpy as np

from compute.errors import UserError
from topologies.edge_arrays import EdgeArrays, edges_of
from topologies.schema import circuit_via
from topologies.schema_circuits import CABLING_FIBRES

__all__ = ["NIC_MEDIA", "nic_gpus", "nic_ports", "nic_share", "ocs_fibre_rate",
           "ocs_fibre_rows", "ocs_fibres"]

#: The media of a GPU's link to the network (a switch of tier >= 1 or an OCS) that a
#: scale-out NIC drives (:func:`nic_gpus`): a pluggable module, plain fibre or a copper
#: cable in a NIC's port. A co-packaged-optics end is an optical engine on the GPU's own
#: package, driven by the GPU die's I/O as an H100's NVLinks are (Intel's OCI chiplet,
#: co-packaged with a CPU, carries that processor's own PCIe lanes: 64 x 32 Gb/s, 4 Tb/s at
#: 5 pJ/bit, Tom's Hardware 2024-06-27): no NIC, the engine priced and powered as optics
#: (docs/economics.md, "Scale-out NICs").
NIC_MEDIA = ("pluggable-optics", "fibre", "copper")


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

    Parameters
    ----------
    graph : networkx.Graph
        A fabric, bare or realized.
    edges : EdgeArrays, optional
        ``graph``'s :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them.

    Returns
    -------
    list
        The GPUs' node ids, in node order.

    Raises
    ------
    UserError
        ``edges`` that are not ``graph``'s (:func:`~topologies.edge_arrays.edges_of`).

    Examples
    --------
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

    Parameters
    ----------
    graph, edges
        As :func:`nic_gpus` takes them.

    Returns
    -------
    tuple of (list of (GPU, OCS), int)

    Examples
    --------
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

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.

    Returns
    -------
    list of tuple or None

    Examples
    --------
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

    Parameters
    ----------
    graph, edges
        As :func:`nic_gpus` takes them.

    Returns
    -------
    float

    Raises
    ------
    UserError
        A graph with no OCS cabling or no circuit set, or ``edges`` not ``graph``'s.

    Examples
    --------
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
    switch = e.kind_is("switch")
    tier = np.full(len(e.nodes), -1.0)   # read from the switches alone
    data = graph._node
    tier[switch] = [data[n].get("tier", -1) for n in compress(e.nodes, switch.tolist())]
    network = e.kind_is("ocs") | (switch & (tier >= 1))
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

    Parameters
    ----------
    links : float or numpy.ndarray
        The cables of a GPU end (its edge's ``links``).

    Returns
    -------
    float or numpy.ndarray
        The NICs' worth.

    Examples
    --------
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

    Parameters
    ----------
    graph, edges
        As :func:`nic_gpus` takes them.

    Returns
    -------
    list of (GPU or None, float, float)
        ``(gpu, rate, cables)`` a NIC port, as said above and below.

    Raises
    ------
    UserError
        ``edges`` that are not ``graph``'s, or a fabric file's realized OCS fabric with
        no circuit set (:func:`ocs_fibre_rate`).

    Examples
    --------
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
