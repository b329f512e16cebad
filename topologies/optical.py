"""Optical circuit-switched fabrics: GPUs with ``ports`` optical ports each, port ``p`` of
every GPU cabled to OCS ``ocs{p}`` (one OCS per port plane, as the TPU v4 cabling puts the
same face of every cube on the same OCS), and :func:`realize`, which sets up circuits for a
logical topology and returns them as direct GPU-to-GPU edges.

A circuit joins port ``p`` of one GPU to port ``p`` of another through ``ocs{p}``: it carries
one port's bandwidth, has no switching delay (latency = fibre on both sides + the OCS's
insertion latency) and cannot be changed without a reconfiguration, whose time
:func:`realize` reports in ``graph.graph["reconfiguration_time"]`` so callers can charge it.
"""

from __future__ import annotations

import itertools
import operator
import weakref
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence, Set
from typing import TypeAlias

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.hardware import GpuSpec
from compute.units import counted
from compute.validate import MAX_TEXT_LENGTH, describe, flag, number_text, read_number
from topologies.common import (
    OCS_LATENCY,
    OCS_LENGTH,
    OCS_PORTS,
    OCS_RECONFIGURATION,
    Links,
    Nodes,
    bandwidth_or,
    cable_latency,
    cable_length,
    check_int,
    check_length,
    check_medium,
    check_positive,
    check_radix,
    finish_blocks,
    gpu_type,
    latency_adjustment,
    link,
    new_graph,
)
from topologies.limits import check_size
from topologies.ocs_planes import assign_planes
from topologies.registry import builder, format_value
from topologies.schema import (
    circuit_count,
    circuit_each,
    circuit_via,
    gpu_nodes,
    validate,
)
from topologies.schema_circuits import OPTICAL_MEDIA

__all__ = ["circuits_for", "drop_circuits", "ocs", "ocs_cabling", "ports_optics", "realize"]

#: A logical topology: ``"ring"``, ``"full-mesh"``, ``"torus:AxB[xC]"``, a circuit list
#: ``"0-1;1-2"`` or a sequence of GPU pairs (node ids or member indices).
Logical: TypeAlias = str | Sequence[Sequence[Hashable]]



@builder("ocs", absent=("logical",))
def ocs(gpus: int = 16, ports: int = 4, ocs_ports: int = OCS_PORTS,
        gpu: str | GpuSpec = "H100-SXM",
        bandwidth: float | None = None, reconfiguration_time: float = OCS_RECONFIGURATION,
        latency: float = OCS_LATENCY, medium: str = "co-packaged-optics",
        length: float = OCS_LENGTH, logical: str | None = None) -> nx.Graph:
    """``gpus`` GPUs with ``ports`` optical ports each, port ``p`` cabled to OCS ``ocs{p}``.

    Without ``logical`` this is the physical cabling (GPU-OCS fibre edges; route nothing
    over it). With ``logical`` it is :func:`realize` of that logical topology: GPU-GPU
    circuit edges only.

    Parameters
    ----------
    gpus : int
        GPUs (each OCS needs ``ocs_ports >= gpus``).
    ports : int
        Optical ports per GPU (= OCS devices).
    ocs_ports : int
        Ports per OCS (136 for Google's Palomar).
    gpu : str or GpuSpec
        GPU type: a catalog name, a GPU file or a GpuSpec.
    bandwidth : float, optional
        Bytes/s per direction per GPU over all its ports; default its scale-up bandwidth.
        One port (and one circuit) carries ``bandwidth / ports``.
    reconfiguration_time : float
        Seconds to set up a new set of circuits (default 10 ms, an assumption within the
        published millisecond-to-200 ms range for MEMS switches).
    latency : float
        OCS insertion latency, s (default 0: mirrors add no switching delay).
    medium : str
        Optics at the GPU end (default co-packaged).
    length : float
        Fibre from a GPU to an OCS, m (5 ns/m): each fibre edge's ``length``, a fact of
        the cabling that a latency scaled afterwards leaves as it is.
    logical : str, optional
        ``"ring"``, ``"full-mesh"``, ``"torus:AxB[xC]"`` or a circuit list ``"0-1;1-2"``.

    Examples
    --------
    >>> g = ocs(gpus=8, ports=2)
    >>> sorted(n for n in g if n.startswith("ocs")), g.degree("gpu0")
    (['ocs0', 'ocs1'], 2)
    >>> r = ocs(gpus=8, ports=2, logical="ring")
    >>> r.edges["gpu0", "gpu1"]["medium"], r.graph["reconfiguration_time"]
    ('ocs-circuit', 0.01)
    """
    n = check_int("gpus", gpus)
    p = check_radix("ports", ports)
    r = check_radix("ocs_ports", ocs_ports)
    if n > r:
        raise UserError(f"gpus {n} exceeds ocs_ports {r}: port p of every GPU is cabled to the "
                        f"same OCS, so an OCS needs a port per GPU")
    spec = gpu_type(gpu)
    bw = bandwidth_or("bandwidth", bandwidth, spec.scaleup_bandwidth)
    medium = check_medium("medium", medium, OPTICAL_MEDIA,
                          "an OCS switches light, so its ports take optics or fibre")
    reconf = check_positive("reconfiguration_time", reconfiguration_time, allow_zero=True)
    lat = check_positive("latency", latency, allow_zero=True)
    length = check_length(length)
    if logical is not None and not isinstance(logical, str):
        raise UserError(f"logical must be a string such as 'ring', 'torus:4x4' or '0-1;1-2', "
                        f"got {describe(logical)}")
    check_size("ocs", n + p, n * p)
    graph = new_graph(f"{n} {spec.name} x {p} ports on {p} OCS")
    nodes = [Nodes("gpu", n, {"kind": "gpu", "gpu": spec.name}),
             Nodes("ocs", p, {"kind": "ocs", "ports": r, "reconfiguration_time": reconf,
                              "latency": lat})]
    # one chiplet a fibre: the GPU's (the OCS end is mirrors), so a circuit crosses two
    fibre = link(bw / p, cable_latency(length, medium, chiplets=1), medium)
    fibre["length"] = length   # read by ocs_cabling and the bill, not back from the latency
    # GPU i's fibres to ocs0..ocs{p-1}, i in turn (node positions: the GPUs, then the OCS)
    cables = Links(np.repeat(np.arange(n), p), n + np.tile(np.arange(p), n), fibre)
    graph = finish_blocks(graph, n, nodes, [cables], spec)
    # the cabling is checked (finish_blocks), and realize checks what it makes, once
    return graph if logical is None else realize(graph, logical, validated=True,
                                                 check_connected=True)


def _members(value: object, what: str) -> list:
    """``value`` as a list of node ids: a list, tuple or range of them (not a string, a
    number or None, which raised TypeError from len() or list()), each once: a GPU given
    twice laid a ring's circuit from it to itself (``circuits_for("ring", [0, 0, 1])``),
    refused only later as a self-loop naming no parameter.

    >>> _members(["gpu0", "gpu1", "gpu0"], "gpus")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: gpus names 'gpu0' more than once (at 0 and 2); give each GPU once
    """
    if not isinstance(value, list | tuple | range):
        raise UserError(f"{what} must be a list of GPU nodes, got {describe(value)}")
    members = list(value)
    first: dict = {}
    for i, node in enumerate(members):
        try:
            j = first.setdefault(node, i)
        except TypeError:   # a list in it: no node id; the ends' check says so
            continue
        if j != i:
            raise UserError(f"{what} names {describe(node)} more than once (at {j} and {i}); "
                            f"give each GPU once")
    return members


def _id_set(value: object, what: str, items: str) -> frozenset:
    """``value``, a set, list or tuple of node ids (or pairs), as a frozenset: not a string,
    which matched ids by substring (``"ocs10"`` dropped the circuits of ``ocs1``)."""
    if not isinstance(value, Set | list | tuple):
        raise UserError(f"{what} must be a set of {items}, got {describe(value)}")
    try:
        return frozenset(value)
    except TypeError:   # a list in it: unhashable
        raise UserError(f"{what} must be a set of {items}, got {describe(value)}") from None


def circuits_for(logical: Logical, members: Sequence[Hashable]) -> list[tuple[Hashable, Hashable]]:
    """The GPU pairs of a logical topology over ``members`` (node ids, in order).

    ``logical`` is ``"ring"``, ``"full-mesh"``, ``"torus:AxB[xC]"`` (sides multiplying to
    the member count), a string ``"0-1;1-2"`` of member indices, or a list of pairs of
    node ids or indices.

    Parameters
    ----------
    logical : str or sequence of pairs
        The logical topology (:data:`Logical`).
    members : list, tuple or range
        The GPUs it is laid over, in order.

    Returns
    -------
    list of (GPU, GPU)
        One pair a circuit, repeated for parallel circuits (a torus side of 2's two links).

    Raises
    ------
    UserError
        Text that is none of the forms, a torus whose positions are not the members, a
        ring of fewer than 2, or a circuit end that is no member (or joins a GPU to
        itself).

    Examples
    --------
    >>> circuits_for("ring", ["a", "b", "c"])
    [('a', 'b'), ('b', 'c'), ('c', 'a')]
    >>> circuits_for("0-2;1-2", ["a", "b", "c"])
    [('a', 'c'), ('b', 'c')]
    """
    members = _members(members, "members")
    n = len(members)
    if isinstance(logical, str):
        text = logical.strip().lower()
        if text == "ring":
            if n < 2:
                raise UserError("a ring needs at least 2 GPUs")
            return [(members[i], members[(i + 1) % n]) for i in range(n)]
        if text in ("full-mesh", "mesh"):
            return list(itertools.combinations(members, 2))
        if text.startswith("torus"):
            from topologies.direct import torus

            dims = text.partition(":")[2]
            if not dims:
                raise UserError("torus needs its sides, e.g. 'torus:4x4'")
            shape = torus(dims)
            if shape.graph["gpus"] != n:
                raise UserError(f"torus {dims} has {shape.graph['gpus']} positions but there "
                                f"are {n} GPUs")
            pairs = []
            for u, v, d in shape.edges(data=True):
                pair = (members[int(u[3:])], members[int(v[3:])])
                pairs += [pair] * d.get("links", 1)
            return pairs
        read = [tuple(read_number("logical topology", x, whole=True) for x in item.split("-"))
                for item in number_text("logical topology", text).split(";")]   # one grammar
        if any(None in pair for pair in read):
            raise UserError(f"logical topology {logical[:40]!r} is not one of 'ring', "
                            "'full-mesh', 'torus:AxB[xC]' or a circuit list like "
                            "'0-1;1-2'")
        logical = read
    if not isinstance(logical, list | tuple):
        raise UserError(f"logical topology must be a string or a list of GPU pairs, got "
                        f"{describe(logical)}")
    pairs = []
    known = set(members)   # a set: a list's ``in`` made n circuits cost n x n (131,072 GPUs)
    for item in logical:
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise UserError(f"circuit {str(item)[:40]!r} must join exactly two GPUs")
        ends = []
        for end in item:
            if isinstance(end, int) and not isinstance(end, bool):
                if not 0 <= end < n:
                    raise UserError(f"circuit end {end} is not a GPU index in 0..{n - 1}")
                end = members[end]
            elif not isinstance(end, str | int) or end not in known:
                raise UserError(f"circuit end {str(end)[:40]!r} is not one of the GPUs")
            ends.append(end)
        if ends[0] == ends[1]:
            raise UserError(f"circuit {item!r} joins a GPU to itself")
        pairs.append(tuple(ends))
    return pairs


def _pairs_text(pairs: Sequence[tuple[Hashable, Hashable]]) -> str:
    """The ``logical`` graph attribute of a circuit list: ``u-v;...``, or where that is
    over the schema's text limit (a ring over each pair of 16,384 GPUs: 180,000 characters,
    refused by validate) how many circuits (the circuits themselves are the edges).

    >>> _pairs_text([("gpu0", "gpu1")]), _pairs_text([("gpu0", "gpu1")] * 5000)
    ('gpu0-gpu1', '5000 circuits')
    """
    if 2 * len(pairs) - 1 > MAX_TEXT_LENGTH:   # over it, "-" and ";" alone: not joined
        return f"{len(pairs)} circuits"
    text = ";".join(f"{a}-{b}" for a, b in pairs)
    return text if len(text) <= MAX_TEXT_LENGTH else f"{len(pairs)} circuits"


def ocs_cabling(graph: nx.Graph, kind: Mapping[Hashable, str] | None = None) -> dict | None:
    """The cabling of an OCS cell, which a realized fabric's bill of materials counts
    (:func:`realize`: the fibres stay in the ground whatever circuits the mirrors make):
    ``graph``'s own ``ocs_cabling``, else its GPU-OCS fibres' one medium, cables, lanes
    and ``fibres``, each fibre's own facts as columns, one entry a GPU-OCS edge in edge
    order (:data:`~topologies.schema_circuits.CABLING_FIBRES`: its ``gpu`` and ``ocs`` ends, its
    ``cables``, its ``bandwidth`` (bytes/s per direction, all its cables) and ``lanes``,
    its ``length`` in m: the edge's own, else read back from its latency less the one
    co-packaged engine's delay a fibre crosses, the GPU's (the OCS end is mirrors:
    :func:`ocs`), a scenario's adjustment undone (:func:`~topologies.common.cable_length`),
    as the network bill reads a fibre to an OCS), so what is priced, counted
    and failed is the cabling itself, not what the circuits set on it carry (the slower
    end's rate). None where it has no fibre or two media. ``kind``: each node's kind, if
    known. The record is one object: every graph realized from it shares its columns
    (tuples), none copies them; a frozen graph's (a built fabric's,
    :func:`networkx.freeze`: its fibres cannot be added or removed) is read once and kept
    while the graph lives, so every graph realized from that fabric shares one record
    (read it; a caller that changes it copies it first, as :func:`realize` does). Kept,
    it is read again where the graph's attributes it reads
    (:func:`~topologies.common.latency_adjustment`: a length read back from a latency
    undoes it) have changed since; the fibres' own attributes are taken as they were at
    the first read: freezing does not stop editing them in place, but a built fabric is
    shared by every caller and not edited (:func:`netmodel.study.scenario_fabric.adjusted`
    edits a copy, which is read afresh): checking every fibre's attributes again at each
    read would cost a good part of what keeping the record saves.

    Parameters
    ----------
    graph : networkx.Graph
        A fabric with an OCS layer, bare or realized.
    kind : mapping, optional
        Each node's kind, where the caller has it.

    Returns
    -------
    dict or None
        ``{"medium", "cables", "lanes", "fibres"}``, or None as said above.

    Examples
    --------
    >>> c = ocs_cabling(ocs(gpus=2, ports=2))   # 2 GPUs x 2 ports: 4 fibres
    >>> c["medium"], c["cables"], c["fibres"]["ocs"], c["fibres"]["length"]
    ('co-packaged-optics', 4, ('ocs0', 'ocs1', 'ocs0', 'ocs1'), (10.0, 10.0, 10.0, 10.0))
    """
    cabling = graph.graph.get("ocs_cabling")
    if cabling is not None:
        return cabling
    # a frozen graph (a built fabric, shared by every caller: networkx.freeze) keeps its
    # fibres: its record is read once, and every graph realized from it shares it
    frozen = nx.is_frozen(graph)
    if frozen:
        adjustment = latency_adjustment(graph.graph)   # writable on a frozen graph
        kept = _FROZEN_CABLING.get(graph)
        if kept is not None and kept[0] == adjustment:
            return kept[1]
    cabling = _read_cabling(graph, kind)
    if frozen:
        _FROZEN_CABLING[graph] = (adjustment, cabling)
    return cabling


#: :func:`ocs_cabling`'s record of each frozen graph still alive (None: no cabling), with
#: the latency adjustment it was read under.
_FROZEN_CABLING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _read_cabling(graph: nx.Graph, kind: Mapping[Hashable, str] | None) -> dict | None:
    """:func:`ocs_cabling` read from ``graph``'s GPU-OCS edges."""
    if kind is None:
        kind = dict(graph.nodes(data="kind"))
    found = _fibre_edges(graph, kind)
    if not found:
        return None
    gpu, ocs_, data = map(tuple, zip(*found, strict=True))
    if len(set(map(_MEDIUM, data))) != 1:
        return None
    medium = data[0]["medium"]
    # read back as the network bill reads a fibre to an OCS (one co-packaged engine's
    # delay, the GPU's, as ocs charged it; a scenario's adjustment undone), so the
    # realized fabric's bill is its cabling's to the metre
    chiplets = int(medium == "co-packaged-optics")
    read = iter(cable_length([float(d["latency"]) for d in data if "length" not in d],
                             chiplets, latency_adjustment(graph.graph)).tolist())
    cables = tuple(d.get("links", 1) for d in data)
    lanes = tuple(map(int, map(_LANES, data)))
    fibres = {"gpu": gpu, "ocs": ocs_, "cables": cables,
              "bandwidth": tuple(map(float, map(_BANDWIDTH, data))), "lanes": lanes,
              "length": tuple(float(d["length"]) if "length" in d else round(next(read), 9)
                              for d in data)}
    return {"medium": medium, "cables": round(sum(cables)), "lanes": sum(lanes),
            "fibres": fibres}


_MEDIUM, _LANES, _BANDWIDTH = map(operator.itemgetter, ("medium", "lanes", "bandwidth"))


def _fibre_edges(graph: nx.Graph, kind: Mapping[Hashable, str]) -> list[tuple]:
    """``graph``'s GPU-OCS edges as ``(gpu, ocs, data)``, in edge order
    (``graph.edges(data=True)``'s: each edge at the first of its ends in node order),
    read from the adjacency itself for a plain graph (524,288 fibres at 4,096 ports a
    Lite, no view's step per edge)."""
    if type(graph) is not nx.Graph:
        ends = {("gpu", "ocs"): False, ("ocs", "gpu"): True}   # flipped?
        return [(v, u, d) if flip else (u, v, d) for u, v, d in graph.edges(data=True)
                if (flip := ends.get((kind[u], kind[v]))) is not None]
    found: list[tuple] = []
    seen: set = set()
    for u, nbrs in graph._adj.items():
        ku = kind[u]
        if ku == "gpu":
            found.extend((u, v, d) for v, d in nbrs.items()
                         if kind[v] == "ocs" and v not in seen)
        elif ku == "ocs":
            found.extend((v, u, d) for v, d in nbrs.items()
                         if kind[v] == "gpu" and v not in seen)
        seen.add(u)
    return found


def realize(graph: nx.Graph, logical: Logical, gpus: Sequence[Hashable] | None = None, *,
            validated: bool = False, check_connected: bool = False) -> nx.Graph:
    """Circuits through the OCS layer of ``graph`` that realize ``logical`` among ``gpus``
    (default all, in order), as a new graph of GPU-GPU edges (``medium="ocs-circuit"``).

    Each circuit carries one port's bandwidth and lanes, the slower of its two ends' where
    they differ (parallel circuits between the same
    pair are one edge with ``links`` = their count and the summed bandwidth and lanes;
    where they differ from one another, ``via_bandwidth`` and ``via_lanes`` hold each
    one's, comma-separated in ``via``'s order, for :func:`drop_circuits`) and ``via`` names the
    OCS (comma-separated when several) and ``optics`` the medium of the GPU ports, one
    at both ends and for every circuit of a pair (:func:`_one_optics`; else UserError).
    Latency = GPU-OCS fibre on both sides + OCS
    latency. OCS nodes are kept (with no edges) for the bill of materials; GPUs outside
    ``gpus`` are kept unconnected, and an explicit circuit list may leave separate islands
    (several tensor-parallel groups): connectivity is checked only when ``check_connected``
    asks it. Graph attributes add ``logical``, ``circuits`` and
    ``reconfiguration_time`` (s: the slowest OCS used, the time to switch to this set).

    ``graph`` is checked against the schema first unless ``validated`` says it passed
    :func:`~topologies.schema.validate` already (a built fabric: its builder checked it; a
    caller realizing many circuit sets on one fabric checks it once, not once a set). The
    realized graph is always checked, with ``check_connected`` (the ``ocs`` builder's: its
    GPUs must reach each other) passed on.

    Parameters
    ----------
    graph : networkx.Graph
        A fabric with an OCS layer (GPU-OCS fibres), as :func:`ocs` builds one.
    logical : str or sequence of pairs
        The circuits (:func:`circuits_for`).
    gpus : sequence, optional
        The GPUs ``logical`` is laid over, in order; default all of ``graph``'s.
    validated : bool
        Whether ``graph`` passed :func:`~topologies.schema.validate` already.
    check_connected : bool
        Whether the realized fabric's GPUs must reach each other.

    Returns
    -------
    networkx.Graph
        A new graph: the GPUs and OCS nodes, and an ``ocs-circuit`` edge a GPU pair.

    Raises
    ------
    UserError
        A GPU that would need more circuits than its ports, no common OCS plane
        (:func:`~topologies.ocs_planes.assign_planes`), a circuit joining ports of two
        media, a member that is no GPU of ``graph``, or a graph the schema refuses.

    Examples
    --------
    >>> from topologies.optical import ocs
    >>> g = realize(ocs(gpus=4, ports=3), "full-mesh")
    >>> g.number_of_edges(), g.graph["circuits"], g.edges["gpu0", "gpu3"]["via"] != ""
    (6, 6, True)
    >>> realize(ocs(gpus=5, ports=3), "full-mesh")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: logical topology 'full-mesh' needs 4 circuits at GPU 'gpu0' but it has 3 optical ports
    """
    validated, check_connected = (flag("", "validated", validated),
                                  flag("", "check_connected", check_connected))
    if not validated:
        validate(graph, check_connected=False)
    members = gpu_nodes(graph) if gpus is None else _members(gpus, "gpus")
    for m in members:
        if graph.nodes.get(m, {}).get("kind") != "gpu":
            raise UserError(f"{m!r} is not a GPU of the fabric")
    pairs = circuits_for(logical, members)
    kind = dict(graph.nodes(data="kind"))   # looked up per fibre below: once, not per view
    adj = graph.adj
    free = {m: [o for o in adj[m] if kind[o] == "ocs"] for m in members}
    degree = Counter(x for pair in pairs for x in pair)
    for m, count in degree.items():
        if count > len(free[m]):
            raise UserError(f"logical topology {logical!r} needs {counted(count, 'circuit')} at "
                            f"GPU {m!r} but it has {counted(len(free[m]), 'optical port')}")
    planes = assign_planes(pairs, free)
    out = nx.Graph(**{k: v for k, v in graph.graph.items()
                      if k not in ("nodes_built", "edges_built", "builder", "args")})
    out.add_nodes_from((n, d) for n, d in graph.nodes(data=True) if d["kind"] in ("gpu", "ocs"))
    merged: dict = {}
    for (u, v), o in zip(pairs, planes, strict=True):
        key = (u, v) if (u, v) in merged or (v, u) not in merged else (v, u)
        merged.setdefault(key, []).append(o)
    for (u, v), via in merged.items():
        ends = [(graph.adj[u][o], graph.adj[v][o]) for o in via]   # each circuit's fibres
        optics = _one_optics(u, v, via, ends)
        # a circuit carries what both ends' optics carry: the slower of its two ports
        rates = [min(a["bandwidth"], b["bandwidth"]) for a, b in ends]
        lat = max(a["latency"] + b["latency"] + graph.nodes[o]["latency"]
                  for o, (a, b) in zip(via, ends, strict=True))
        attrs = link(sum(rates), lat, "ocs-circuit", links=len(via))
        # each circuit holds a whole port: its fibre's lanes, not the sum's rounded up
        # (2 circuits of 28.125 GB/s are 2 x 3 lanes of 12.5 GB/s, not 5)
        lanes = [min(a["lanes"], b["lanes"]) for a, b in ends]
        attrs["lanes"] = sum(lanes)
        attrs["via"] = ",".join(via)
        if len(set(rates)) > 1 or len(set(lanes)) > 1:
            # circuits of unequal ports: each one's, in via's order, for drop_circuits
            attrs["via_bandwidth"] = ",".join(repr(float(r)) for r in rates)   # np: 'np.float64(x)'
            attrs["via_lanes"] = ",".join(map(str, lanes))
        attrs["optics"] = optics   # the GPU ports' optics, both ends (for the BOM)
        out.add_edge(u, v, **attrs)
    used = set(planes)
    cabling = ocs_cabling(graph, kind)
    if cabling is not None:
        out.graph["ocs_cabling"] = dict(cabling)
    spec = graph.graph.get("spec", "")
    args = graph.graph.get("args")
    if spec and isinstance(logical, str) and gpus is None and "logical=" not in spec \
            and graph.graph.get("builder") == "ocs" and isinstance(args, dict):
        spec += (",", ":")[":" not in spec] + "logical=" + (format_value(logical) or "")
        out.graph.update(builder="ocs", args={**args, "logical": logical})
    else:
        spec = ""
    out.graph.update(
        spec=spec,
        name=f"{graph.graph.get('name', 'fabric')} as "
             + (logical if isinstance(logical, str) else f"{len(pairs)} circuits"),
        logical=logical if isinstance(logical, str) else _pairs_text(pairs),
        circuits=circuit_count(out),
        reconfiguration_time=max((graph.nodes[o]["reconfiguration_time"] for o in used),
                                 default=0.0))
    return validate(out, check_connected=check_connected)


#: Why a circuit's two ends are one medium (:func:`ports_optics`, :func:`_one_optics`).
_ONE_LINK = ("an OCS circuit is one optical link, its two ends one kind of optics (the bill "
             "of materials counts and prices it so)")


def ports_optics(graph: nx.Graph, gpus: Sequence[Hashable]) -> str | None:
    """The one optical medium of the fibres from ``gpus`` to the OCS nodes of ``graph``
    (None where they have none). Two media raise UserError naming both, with a fibre of
    each: :func:`realize` refuses a circuit joining ports of two media (:func:`_one_optics`),
    so a caller whose every copy count was refused checks this to say why (not first:
    realize sets circuits on ports of two media where each circuit's ends are one, a
    plane of each medium).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric with an OCS layer.
    gpus : sequence
        GPU nodes of ``graph``.

    Returns
    -------
    str or None

    Raises
    ------
    UserError
        Fibres of two media, naming one of each.

    Examples
    --------
    >>> g = ocs(gpus=2, ports=2, ocs_ports=2)
    >>> ports_optics(g, ["gpu0", "gpu1"])
    'co-packaged-optics'
    >>> g.edges["gpu1", "ocs0"]["medium"] = "pluggable-optics"
    >>> ports_optics(g, ["gpu0", "gpu1"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: the OCS ports of these GPUs are of two media, co-packaged-optics (gpu0-ocs0) and pluggable-optics (gpu1-ocs0): an OCS circuit is one optical link, its two ends one kind of optics (the bill of materials counts and prices it so)
    """
    data, seen = graph.nodes, {}
    for g in gpus:
        for o, d in graph.adj[g].items():
            if data[o].get("kind") == "ocs":
                seen.setdefault(d.get("medium"), (g, o))
                if len(seen) > 1:
                    (a, x), (b, y) = seen.items()
                    raise UserError(f"the OCS ports of these GPUs are of two media, {a} "
                                    f"({x[0]}-{x[1]}) and {b} ({y[0]}-{y[1]}): {_ONE_LINK}")
    return next(iter(seen), None)


def _one_optics(u: Hashable, v: Hashable, via: Sequence[Hashable],
                ends: Sequence[tuple[Mapping, Mapping]]) -> str:
    """The one optical medium of the ports the circuits of the ``u``-``v`` pair hold at
    both ends (``ends``: each circuit's fibre at ``u`` and at ``v``, through the OCS of
    ``via``). An OCS passes light: a circuit is one optical link from a port of ``u`` to a
    port of ``v``, and a link's two ends are one kind of optics here (the schema gives a
    circuit edge one ``optics``, the bill of materials counts and prices it at both ends,
    and no catalog figure says a co-packaged engine and a pluggable module, or bare fibre,
    meet on one link); its rate is already the slower port's. Ends or circuits of a pair
    on different media raise UserError naming them.

    >>> a, b = {"medium": "co-packaged-optics"}, {"medium": "pluggable-optics"}
    >>> _one_optics("g0", "g1", ["ocs0"], [(a, a)])
    'co-packaged-optics'
    >>> _one_optics("g0", "g1", ["ocs0"], [(a, b)])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: circuit 'g0'-'g1' through 'ocs0' joins a co-packaged-optics port of 'g0' to a pluggable-optics port of 'g1': an OCS circuit is one optical link, its two ends one kind of optics (the bill of materials counts and prices it so)
    """
    media = [(a["medium"], b["medium"]) for a, b in ends]
    for o, (x, y) in zip(via, media, strict=True):
        if x != y:
            raise UserError(f"circuit {describe(u)}-{describe(v)} through {describe(o)} joins "
                            f"a {x} port of {describe(u)} to a {y} port of {describe(v)}: "
                            f"{_ONE_LINK}")
    kinds = sorted({x for x, _ in media})
    if len(kinds) > 1:
        raise UserError(f"circuits {describe(u)}-{describe(v)} hold ports of "
                        f"{' and '.join(kinds)}: the parallel circuits of one GPU pair are "
                        f"one edge of one optics (give the pair's ports one medium)")
    return kinds[0]


def drop_circuits(graph: nx.Graph, ocs: set, fibres: set = frozenset(),
                  nodes: Mapping | None = None) -> None:
    """Take out of ``graph`` (a realized fabric, changed in place) the circuits that pass a
    failed optical switch of ``ocs`` or a failed ``(gpu, ocs)`` fibre of ``fibres``: an
    ``ocs-circuit`` edge's parallel circuits each ride one OCS (its ``via``) on a fibre at
    each end, one port's bandwidth and lanes each, so the edge keeps the other circuits,
    their bandwidth and lanes (each circuit's, :func:`~topologies.schema.circuit_each`, where
    :func:`realize` wrote them for circuits of unequal ports; else equal shares), and
    goes where none is left; the graph's ``circuits`` counts those left
    (:func:`~topologies.schema.circuit_count`). Each ``via`` is read by
    :func:`~topologies.schema.circuit_via`, against ``nodes`` (the fabric's ``graph.nodes``
    with the failed switches still in it) when given. The failed OCS nodes themselves are
    the caller's to remove (:func:`topologies.degrade.degrade`,
    :func:`netmodel.collectives.degraded.degrade`).

    The fibres of a realized fabric are not its edges (its cabling is the graph attribute
    ``ocs_cabling`` alone), so what is left of them is not known: ``ocs_cabling`` is
    dropped (a degraded graph is costed, not priced).

    Parameters
    ----------
    graph : networkx.Graph
        A realized fabric, changed in place.
    ocs : set
        The failed OCS node ids.
    fibres : set of (GPU, OCS)
        The failed fibres.
    nodes : mapping, optional
        The fabric's ``graph.nodes`` with the failed switches still in it.

    Raises
    ------
    UserError
        ``ocs`` or ``fibres`` that is not a set, list or tuple of ids (a string, say).

    Examples
    --------
    >>> g = realize(ocs(gpus=4, ports=2, ocs_ports=4), [("gpu0", "gpu1")] * 2)
    >>> both = g.edges["gpu0", "gpu1"]["bandwidth"]
    >>> drop_circuits(g, {"ocs0"}); g.remove_node("ocs0")
    >>> d = g.edges["gpu0", "gpu1"]
    >>> d["via"], d.get("links", 1), d["bandwidth"] == both / 2, g.graph["circuits"]
    ('ocs1', 1, True, 1)
    """
    ocs = _id_set(ocs, "ocs", "OCS node ids")
    fibres = _id_set(fibres, "fibres", "(gpu, ocs) pairs")
    if not ocs and not fibres:
        return
    graph.graph.pop("ocs_cabling", None)
    for u, v, d in list(graph.edges(data=True)):
        planes = circuit_via(u, v, d, nodes)
        if not planes:
            continue
        kept = [o for o in planes if o not in ocs and (u, o) not in fibres
                and (v, o) not in fibres]
        if len(kept) == len(planes):
            continue
        if not kept:
            graph.remove_edge(u, v)
            continue
        each = circuit_each(u, v, d)
        if each is None:   # equal circuits: equal shares
            bw = d["bandwidth"] * len(kept) / len(planes)
            # whole ports: each circuit holds its port's lanes (realize), not the bandwidth's
            lanes = max(1, d["lanes"] * len(kept) // len(planes))
        else:
            at = [planes.index(o) for o in kept]
            bw = sum(each[0][i] for i in at)
            lanes = sum(each[1][i] for i in at)
            d["via_bandwidth"] = ",".join(repr(each[0][i]) for i in at)
            d["via_lanes"] = ",".join(str(each[1][i]) for i in at)
        new = link(bw, d["latency"], d["medium"], links=len(kept))
        new["lanes"] = lanes
        d.pop("links", None)
        d.update(new, via=",".join(kept))
    if "circuits" in graph.graph:
        graph.graph["circuits"] = circuit_count(graph)
