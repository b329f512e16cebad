"""Failures applied to a fabric: the graph left once components of
:mod:`topologies.failure_domains` failed, with failed GPUs' shared NICs handed on and the
result marked degraded.

:func:`degrade` removes or thins what each component removes or thins, removes the GPUs
a failed tier-0 switch stops, hands a failed GPU's shared NIC links to its first heir
left (:func:`hand_on`), keeps the device indices of the GPUs left (:func:`keep_devices`)
and marks the result (:func:`mark_degraded`), which a cost model refuses
(:func:`is_degraded`).

>>> from topologies.failure_domains import components
>>> from topologies.specs import build
>>> g = build("leaf-spine:leaves=2,radix=4,gpu=Lite")
>>> degraded = degrade(g, [components(g)["leaf"][0]])
>>> degraded.graph["gpus"], "leaf0" in degraded
(4, False)
>>> nvs = components(build("single-switch:n=4"))["nvswitch"][0]
>>> degrade(build("single-switch:n=4"), [nvs]).graph["gpus"]
0
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable

import networkx as nx

from compute.errors import UserError
from compute.validate import describe, flag
from topologies.failure_domains import Component, stopped_by
from topologies.graph_ops import edge_key
from topologies.optical import drop_circuits
from topologies.registry import not_as_built
from topologies.schema import DEGRADED, circuit_count

__all__ = ["degrade", "hand_on", "is_degraded", "keep_devices", "label_devices", "mark_degraded"]


def keep_devices(graph: nx.Graph, gone: Iterable[Hashable]) -> None:
    """Before the GPUs ``gone`` (and any other nodes) are removed from ``graph``: give each
    GPU with a ``server`` label its device index, ``device``, its position among its
    server's GPUs in ``graph``'s node order (where none has one yet, and a GPU of ``gone``
    has a ``server`` label), so that the GPUs left keep it.

    NCCL's PXN relays to the GPU of the sender's server at the peer's device index (CUDA's
    device number, ``peerInfo.nvmlDev``), which a failed GPU elsewhere in the server does
    not change (:meth:`~netmodel.collectives.route_pxn.PxnRoutes.pxn_proxies` reads
    ``device`` where every GPU with a ``server`` label has one, else the position)."""
    data = graph.nodes
    if any(n in graph and data[n].get("kind") == "gpu" and "server" in data[n]
           for n in gone):
        label_devices(graph)


def label_devices(graph: nx.Graph) -> None:
    """Give each GPU of ``graph`` with a ``server`` label its device index, ``device``:
    its position among its server's GPUs in node order, where not every such GPU has one
    yet (labels a file gave are kept). A graph made from part of ``graph`` (one
    instance's GPUs and the switches, as the reliability models cost an instance on) keeps
    the device indices of the whole server, not positions among the GPUs it holds
    (:func:`keep_devices` does this before GPUs are removed).

    >>> g = nx.Graph()
    >>> g.add_nodes_from((f"g{i}", {"kind": "gpu", "server": i // 2}) for i in range(4))
    >>> label_devices(g); [d for _, d in g.nodes(data="device")]
    [0, 1, 0, 1]
    """
    data = graph.nodes
    labelled = [n for n, d in data.items() if d.get("kind") == "gpu" and "server" in d]
    if all("device" in data[n] for n in labelled):
        return
    count: dict = {}
    for n in labelled:
        d = data[n]
        s = d["server"]
        d["device"] = count.get(s, 0)
        count[s] = d["device"] + 1



def _components(failed: object) -> tuple:
    """``failed`` as a tuple of failure components (it may be a generator), or one line
    naming what is not one: a node's or a link's name raised AttributeError ('str' object
    has no attribute 'handed')."""
    what = ("failed must be a list of topologies.failure_domains.Component (as "
            "components(graph) gives them)")
    if isinstance(failed, (str, bytes, Component)) or not isinstance(failed, Iterable):
        raise UserError(f"{what}, got {describe(failed)}")
    failed = tuple(failed)
    for comp in failed:
        if not isinstance(comp, Component):
            raise UserError(f"{what}, got {describe(comp)} in it; "
                            f"netmodel.collectives.degraded.degrade takes nodes and links by "
                            f"name")
    return failed


def degrade(graph: nx.Graph, failed: Iterable[Component], *, copy: bool = True) -> nx.Graph:
    """A copy of ``graph`` with every component of ``failed`` applied (edges removed or
    thinned, nodes removed, and a component's ``disabled`` GPUs removed with every other
    GPU wired to a tier-0 switch it removes, in ``graph``: a spare added since stops too,
    whether the switch failed alone or with its host or rack); ``gpus`` is
    recounted. Connectivity is not required. With ``copy=False`` the graph itself is
    changed and returned. A failed GPU whose NIC its server's other GPUs share hands the
    NIC's links to the first of them no component of ``failed`` takes
    (:attr:`~topologies.failure_domains.Component.handed`); a component that removes or
    thins such a link removes or thins its copy too. On a realized OCS fabric a failed OCS
    takes the circuits through it (:func:`~topologies.optical.drop_circuits`: a pair's
    parallel circuits on other planes stay, its bandwidth in proportion) and ``circuits``
    is recounted (:func:`~topologies.schema.circuit_count`). Given any component, the
    result is marked degraded (:func:`mark_degraded`).

    Two GPUs with a circuit through each of 2 OCS and two with one through ``ocs0``: 3
    circuits; ``ocs0`` failed leaves the first pair's circuit through ``ocs1``:

    >>> from topologies.failure_domains import components
    >>> from topologies.optical import ocs, realize
    >>> g = realize(ocs(gpus=4, ports=2, ocs_ports=4),
    ...             [("gpu0", "gpu1")] * 2 + [("gpu2", "gpu3")])
    >>> failed = [c for c in components(g)["ocs"] if c.nodes == ("ocs0",)]
    >>> out = degrade(g, failed)
    >>> g.graph["circuits"], out.graph["circuits"], list(out.edges)
    (3, 1, [('gpu0', 'gpu1')])
    """
    failed = _components(failed)
    out = graph.copy() if flag("", "copy", copy) else graph
    moved = _hand_on(out, failed)
    for comp in failed:
        if comp.fibres:   # a realized OCS fabric's fibre: the circuit on it goes
            if "circuits" in out.graph:
                drop_circuits(out, set(), fibres=set(comp.fibres), nodes=out.nodes)
            continue
        for (u, v), factor in comp.scaled:
            for a, b in ((u, v), *moved.get(edge_key(u, v), ())):
                if out.has_edge(a, b):
                    out.edges[a, b]["bandwidth"] = out.edges[a, b]["bandwidth"] * factor
        for u, v in comp.edges:
            for a, b in ((u, v), *moved.get(edge_key(u, v), ())):
                if out.has_edge(a, b):
                    out.remove_edge(a, b)
        gone = {n for n in comp.nodes if n in out}
        gone.update(n for n in comp.disabled if n in out)
        gone.update(x for n in comp.nodes if n in out for x in stopped_by(out, n))
        if "circuits" in out.graph:   # a realized OCS fabric (a cabled one has none set):
            # a failed OCS takes the circuits through it (a GPU gone takes its own)
            drop_circuits(out, {n for n in gone if out.nodes[n].get("kind") == "ocs"},
                          nodes=out.nodes)
        keep_devices(out, gone)
        out.remove_nodes_from(list(gone))
    out.graph["gpus"] = sum(1 for _, k in out.nodes(data="kind") if k == "gpu")
    if "circuits" in out.graph:   # a realized OCS fabric: the circuits left
        out.graph["circuits"] = circuit_count(out)
    not_as_built(out)
    if failed:
        mark_degraded(out)
    return out


def _hand_on(graph: nx.Graph, failed: tuple[Component, ...]) -> dict:
    """:func:`hand_on` of every NIC link a component of ``failed`` hands on
    (:attr:`~topologies.failure_domains.Component.handed`), no heir that any of them takes
    (removes or stops)."""
    if not any(c.handed for c in failed):
        return {}
    dead = {n for c in failed for n in (*c.nodes, *c.disabled)}
    dead.update(x for c in failed for n in c.nodes if n in graph for x in stopped_by(graph, n))
    return hand_on(graph, [h for c in failed for h in c.handed], dead)


def hand_on(graph: nx.Graph, handed: Iterable[tuple], dead: Collection) -> dict:
    """Wire each NIC link of ``handed`` (``((gpu, switch), heirs)``, as
    :func:`~topologies.failure_domains.nic_heirs` gives them for a failed GPU) to its first
    heir in ``graph`` and not in ``dead`` (the nodes failed or stopped with it), in
    ``graph``, where ``graph`` still has the link (one failed with the GPU is not handed
    on); returns each moved link's
    :func:`~topologies.graph_ops.edge_key` to its copies, whose removal or thinning by a
    failure goes with them. One rule for every degraded fabric: :func:`degrade` (the
    reliability study) and :func:`netmodel.collectives.degraded.degrade` (parts failed by
    hand) both hand on through it.

    >>> from topologies.failure_domains import nic_heirs
    >>> from topologies.specs import build
    >>> g = build("rail-optimized:domains=2,nics_per_server=1")
    >>> hand_on(g, nic_heirs(g)["gpu0"], {"gpu0", "gpu1"})
    {('gpu0', 'leaf0'): [('gpu2', 'leaf0')]}
    """
    moved: dict = {}
    for (g, s), heirs in handed:
        heir = next((h for h in heirs if h in graph and h not in dead), None)
        if heir is not None and graph.has_edge(g, s) and not graph.has_edge(heir, s):
            data = dict(graph.edges[g, s])
            if "latency" in data:   # the heir's way to the NIC as long as it was
                data["latency"] = data["latency"] + _detour(graph, heir, g)
            graph.add_edge(heir, s, **data)
            moved.setdefault(edge_key(g, s), []).append((heir, s))
    return moved


def _detour(graph: nx.Graph, heir: Hashable, holder: Hashable) -> float:
    """The latency from ``heir`` to ``holder`` over a tier-0 switch both are wired to (its
    two links and the switch), the least; 0 where none is. A handed NIC link carries it, so
    that the heir, which reached the NIC through that switch and the holder, is not made
    nearer the network by the holder's failure (a failure never speeds a collective up;
    the GPUs after it, which now reach the NIC through the heir, take that way once more).

    >>> from topologies.specs import build
    >>> round(_detour(build("rail-optimized:domains=2,nics_per_server=1"), "gpu1", "gpu0"), 12)
    1.7e-07
    """
    adj, node = graph._adj, graph._node
    ways = [adj[heir][t].get("latency", 0.0) + node[t].get("latency", 0.0)
            + adj[t][holder].get("latency", 0.0)
            for t in adj[heir] if t in adj[holder] and node[t].get("kind") == "switch"
            and int(node[t].get("tier", -1)) == 0]
    return min(ways, default=0.0)


def mark_degraded(graph: nx.Graph) -> nx.Graph:
    """Mark ``graph`` as a fabric with failed parts taken out (graph attribute
    ``degraded``, True: :data:`topologies.schema.DEGRADED`): what a failure removes was
    still bought, so a cost model that counts parts from the graph cannot price it
    (:func:`is_degraded`). Every function that applies failures calls it: :func:`degrade`
    and :func:`netmodel.collectives.degraded.degrade`. Returns the graph.

    >>> from topologies.specs import build
    >>> is_degraded(mark_degraded(build("ring:n=4"))), is_degraded(build("ring:n=4"))
    (True, False)
    """
    graph.graph[DEGRADED] = True
    return graph


def is_degraded(graph: nx.Graph) -> bool:
    """Whether ``graph`` carries :func:`mark_degraded`'s mark (a copy or a saved file of
    a degraded fabric keeps it).

    >>> from topologies.failure_domains import components
    >>> from topologies.specs import build
    >>> g = build("rail-optimized:domains=2")
    >>> link = next(c for c in components(g)["transceiver"])
    >>> is_degraded(g), is_degraded(degrade(g, [link])), is_degraded(degrade(g, []))
    (False, True, False)
    """
    return graph.graph.get(DEGRADED) is True
