"""An instance's circuits on an optical circuit-switched (OCS) cell: the cell read for a
group, and the circuits of instances wired alike set once and copied.

:func:`ocs_ports` and :func:`ocs_planes` read a group's ports and shared planes (the
copies they carry and the planes each copy takes are
:mod:`netmodel.study.circuit_planes`'); :func:`members_cell` is a group's part of the
cell, with the whole cell's cabling. Instances wired alike (:func:`alike_groups`) take
the same planes: :func:`alike_circuits` sets the first one's circuits and copies them to
the others, where they are many enough (:func:`worth_copying`, :data:`ALIKE_PORTS`).

>>> g = nx.Graph([("a", "o"), ("b", "o"), ("c", "p")])
>>> g.add_nodes_from("op", kind="ocs")
>>> g.add_nodes_from("abc", kind="gpu")
>>> ocs_ports(g, "ab"), ocs_planes(g, "abc")
(1, 2)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

from netmodel.study.circuit_planes import circuit_options

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Sequence

__all__ = ["ALIKE_PORTS", "alike_circuits", "alike_groups", "members_cell", "ocs_planes",
           "ocs_ports", "worth_copying"]


#: The GPU ports of a size's instances (ports a GPU x GPUs placed) from which their circuits
#: are set on the first instance and copied (:func:`alike_circuits`) and ``best`` chosen on
#: the first instance (:func:`~netmodel.study.scenario_fabric.first_instance_layout`):
#: below, the whole cell's circuits are few (lite-ocs: 4 ports x 128 GPUs, 256 circuits a
#: ring) and setting each layout on it costs less than costing the first instance apart;
#: above, each circuit's colouring dominates (4,096 ports: 262,144 circuits a ring, about
#: 1.5 s a realize).
ALIKE_PORTS = 8_192

def ocs_ports(graph: nx.Graph, gpus: Iterable[Hashable]) -> int:
    """The fewest optical ports (links to an OCS) of any of ``gpus``."""
    data = graph.nodes
    return min(sum(1 for o in graph.neighbors(g) if data[o]["kind"] == "ocs") for g in gpus)


def ocs_planes(graph: nx.Graph, gpus: Iterable[Hashable]) -> int:
    """The optical switches (OCS planes) any of ``gpus`` is cabled to: the colours a set
    of circuits among them can take (every port of a GPU of the ``ocs`` builder is on its
    own plane, the same planes for every GPU, so this is their ports)."""
    data = graph.nodes
    return len({o for g in gpus for o in graph.neighbors(g) if data[o]["kind"] == "ocs"})


def members_cell(physical: nx.Graph, members: Sequence[Hashable]) -> nx.Graph:
    """``physical`` (an OCS cell) with every node and only the links of ``members``: what
    :func:`topologies.optical.realize` reads to set circuits among the members (each
    member's OCS ports in their order, with their fibres' and the OCSes' attributes), and
    no other GPU's fibres (4,096 ports a GPU: 524,288 fibres a cell, read by each realize),
    with the whole cell's cabling (:func:`topologies.optical.ocs_cabling`: its record, one
    object, read once for a built fabric), which realize gives what it sets on it;
    ``physical`` itself where the members are all its GPUs.

    >>> g = nx.Graph([("a", "o"), ("b", "o"), ("c", "o")])
    >>> sorted(members_cell(g, ["a"]).edges), list(members_cell(g, ["a"]))
    ([('a', 'o')], ['a', 'o', 'b', 'c'])
    """
    if len(members) == physical.graph.get("gpus"):
        return physical   # every GPU: the whole cell
    from topologies.optical import ocs_cabling

    out = type(physical)()
    out.graph.update(physical.graph)
    cabling = ocs_cabling(physical)
    if cabling is not None:   # the whole cell's (its record shared, not read again)
        out.graph["ocs_cabling"] = dict(cabling)
    out.add_nodes_from(physical.nodes(data=True))
    adj = physical.adj
    out.add_edges_from((m, n, d) for m in members for n, d in adj[m].items())
    return out


def worth_copying(ports: int, groups: Sequence[Sequence[Hashable]]) -> bool:
    """Whether the circuits of ``groups`` (GPUs of ``ports`` optical ports each) are many
    enough to be set on the first group alone (:data:`ALIKE_PORTS`).

    >>> worth_copying(4, [range(8)] * 16), worth_copying(1024, [range(8)] * 16)
    (False, True)
    """
    return ports * sum(len(g) for g in groups) >= ALIKE_PORTS


def alike_groups(graph: nx.Graph, groups: Sequence[Sequence[Hashable]]) -> bool:
    """Whether every group's GPUs are wired as the first group's at their place: each one's
    node attributes and its links in order (the same neighbours, link attributes equal).

    >>> g = nx.Graph([("a", "o"), ("b", "o"), ("c", "o"), ("d", "p")])
    >>> alike_groups(g, [("a",), ("b",), ("c",)]), alike_groups(g, [("a",), ("d",)])
    (True, False)
    """
    # the adjacency's own dicts: compared whole, in C (a view's == walks it in Python)
    adj, data = graph._adj, graph._node
    for group in groups[1:]:
        for m, f in zip(group, groups[0], strict=True):
            own, lead = adj[m], adj[f]
            if data[m] != data[f] or own != lead or list(own) != list(lead):
                return False
    return True


def alike_circuits(graph: nx.Graph, groups: Sequence[Sequence[Hashable]], layout: str,
                   ports: int, planes: int | None, made: dict | None = None) -> nx.Graph | None:
    """The circuits of ``layout`` among every group of ``groups`` (one size, wired alike:
    :func:`alike_groups`) on the OCS cell ``graph``, as
    :func:`~netmodel.study.scenario_fabric.instance_graph` sets them (the first of
    :func:`circuit_options`' counts :func:`topologies.optical.realize` can set on the
    whole cell), set once, on the first group's part of the cell (:func:`members_cell`),
    and copied to the others: each group's circuits are coloured apart from the others'
    (its GPUs' ports alone), so alike groups take the same OCS planes at the same count,
    and the whole cell's graph is the first group's circuits renamed group by group, in
    the order realize adds them (the graph's own attributes, its cabling and the circuit
    count the whole cell's). O(circuit edges) a group instead of O(circuits): 2,048 copies
    of a ring of 128 GPUs is 262,144 circuits, 128 edges. ``made``: the first group's
    pairs and circuits by layout, if set already
    (:func:`~netmodel.study.scenario_fabric.first_instance_layout`). None where no count
    can be set on the first group's part (the caller tries the whole cell, and says why).

    >>> from topologies.optical import ocs, realize
    >>> g = ocs(gpus=8, ports=4)
    >>> groups = [tuple(f"gpu{i}" for i in range(k, k + 4)) for k in (0, 4)]
    >>> pairs = [p for gr in groups for p in zip(gr, gr[1:] + gr[:1]) for _ in range(2)]
    >>> a, b = alike_circuits(g, groups, "ring", 4, 4), realize(g, pairs)
    >>> list(a.edges(data=True)) == list(b.edges(data=True)), a.graph == b.graph
    (True, True)
    """
    from compute.errors import UserError
    from compute.validate import MAX_TEXT_LENGTH
    from topologies.optical import _pairs_text, ocs_cabling, realize
    from topologies.schema import circuit_count, validate

    first = groups[0]
    hit = None if made is None else made.get(layout)
    cell = graph
    if hit is None:
        cell = members_cell(graph, first)
        for pairs in circuit_options(layout, [first], ports, planes):
            try:
                hit = (pairs, realize(cell, pairs, validated=True))
            except UserError:
                continue
            break
        else:
            return None
    pairs, one = hit
    # each circuit edge once, in the order realize adds them (its first pair's ends)
    ends: dict = {}
    for u, v in pairs:
        if (v, u) not in ends:
            ends[u, v] = None
    out = nx.Graph()
    out.graph.update(one.graph)   # the cell's attributes; what the circuits count below
    # the whole cell's record: the one members_cell gave the first group's part, where
    # made here (not read again: a graph not frozen lists every fibre a read)
    cabling = cell.graph.get("ocs_cabling") if cell is not graph else ocs_cabling(graph)
    if cabling is None:
        out.graph.pop("ocs_cabling", None)
    else:
        out.graph["ocs_cabling"] = dict(cabling)
    out.add_nodes_from(one.nodes(data=True))
    edges = one.edges
    for group in groups:
        name = dict(zip(first, group, strict=True))
        out.add_edges_from((name[u], name[v], edges[u, v]) for u, v in ends)
    count = len(pairs) * len(groups)
    whole = pairs if len(groups) == 1 else \
        [(n[u], n[v]) for n in (dict(zip(first, gr, strict=True)) for gr in groups)
         for u, v in pairs] if 2 * count - 1 <= MAX_TEXT_LENGTH else [None] * count
    out.graph.update(name=f"{graph.graph.get('name', 'fabric')} as {count} circuits",
                     logical=_pairs_text(whole), circuits=circuit_count(out))
    return validate(out, check_connected=False)
