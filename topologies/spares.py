"""Spare GPUs on a fabric's free ports: where a spare fits (a GPU's site wired as a GPU of
the fabric is, on switches or an OCS with a port free for each of its cables), planned
without copying the graph (:func:`plan_spares`, one site at a time :func:`place_spare`) or
added to a copy (:func:`add_spares`). What a failure removes, and so what a spare stands in
for, is :mod:`topologies.failure_domains`'s.

>>> from topologies.specs import build
>>> g = build("flat:n=6,planes=2,radix=8")   # 6 GPUs on two 8-port planes: 2 ports free each
>>> free_ports(g)
{'plane0': 2, 'plane1': 2}
>>> [name for name, _, _ in plan_spares(g, 5)]
['spare0', 'spare1']
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from itertools import chain

import networkx as nx

from compute.errors import UserError
from compute.validate import describe, is_whole
from compute.validate import name as text_name
from topologies.registry import not_as_built
from topologies.schema import gpu_nodes

__all__ = ["add_spares", "free_ports", "place_spare", "plan_spares"]


def free_ports(graph: nx.Graph) -> dict[Hashable, int]:
    """Unused ports of every switch and OCS: ``{node: radix (or ports) - cables in use}``.

    >>> from topologies.specs import build
    >>> free_ports(build("flat:n=6,planes=2,radix=8"))
    {'plane0': 2, 'plane1': 2}
    """
    out = {}
    for n, d in graph.nodes(data=True):
        if d["kind"] in ("switch", "ocs"):
            size = d["radix"] if d["kind"] == "switch" else d["ports"]
            used = sum(e.get("links", 1) for _, _, e in graph.edges(n, data=True))
            out[n] = int(math.floor(size - used + 1e-6))
    return out


def place_spare(graph: nx.Graph, template: Hashable, free: dict, plan: list, taken: set,
                prefix: str = "spare") -> bool:
    """Add to ``plan`` one spare site wired as GPU ``template`` is, if every switch it
    attaches to has the ports in ``free`` (which it then takes); False, nothing taken, if
    one has not. Its name is ``prefix`` and the plan's length, made unique against the
    graph's nodes and ``taken`` (to which it is added); its entry is :func:`plan_spares`'.

    >>> g = nx.Graph()
    >>> g.add_node("s", kind="switch", radix=2); g.add_node("gpu0", kind="gpu")
    >>> g.add_edge("gpu0", "s", links=1)
    >>> free, plan = free_ports(g), []
    >>> place_spare(g, "gpu0", free, plan, set()), place_spare(g, "gpu0", free, plan, set())
    (True, False)
    >>> plan[0][0], plan[0][2], free
    ('spare0', [('s', {'links': 1})], {'s': 0})
    """
    need = {n: graph.edges[template, n].get("links", 1) for n in graph.neighbors(template)}
    if any(free[n] < c - 1e-6 for n, c in need.items()):
        return False
    name = f"{prefix}{len(plan)}"
    while name in graph or name in taken:
        name += "_"
    taken.add(name)
    for n, c in need.items():
        free[n] -= c
    attrs = {**graph.nodes[template], "spare": True}
    if "device" in attrs:   # a new GPU of the server: the next device index, not the template's
        server = attrs.get("server")
        attrs["device"] = 1 + max(
            (d["device"] for d in chain((d for _, d in graph.nodes(data=True)),
                                        (a for _, a, _ in plan))
             if d.get("kind") == "gpu" and "device" in d and d.get("server") == server),
            default=-1)
    plan.append((name, attrs, [(n, dict(graph.edges[template, n])) for n in need]))
    return True


def plan_spares(graph: nx.Graph, count: int, *, like: Iterable[Hashable] | None = None,
                prefix: str = "spare") -> list[tuple[str, dict, list[tuple[Hashable, dict]]]]:
    """Where up to ``count`` spares fit on free ports, without copying the graph: a list of
    ``(name, node attributes, [(neighbour, edge attributes), ...])`` (see
    :func:`add_spares`, which applies it)."""
    if not is_whole(count) or count < 0:   # numpy's too, as Python's int
        raise UserError(f"spare count must be a whole number >= 0, got {describe(count)}")
    count = int(count)
    # a prefix is the start of a node's name (5 made '50', a newline broke every table);
    # like a list of GPUs ('gpu0' was read letter by letter, [] placed no spare)
    prefix = text_name("", "spare prefix", prefix)
    if like is not None and (isinstance(like, (str, bytes)) or not isinstance(like, Iterable)
                             or not (like := list(like))):
        raise UserError(f"like must be a non-empty list of the fabric's GPUs (e.g. ['gpu0']) "
                        f"or None for every GPU, got {describe(like)}")
    free = free_ports(graph)
    data = graph.nodes
    templates: dict = {}
    for g in (gpu_nodes(graph) if like is None else like):
        if not isinstance(g, Hashable) or g not in graph or data[g].get("kind") != "gpu":
            raise UserError(f"spare template {g!r} is not a GPU of the fabric")
        nbrs = list(graph.neighbors(g))
        if any(data[n]["kind"] == "gpu" for n in nbrs):
            continue
        templates.setdefault(frozenset(nbrs), g)
    plan: list = []
    taken = set()
    order = list(templates.values())
    while len(plan) < count and order:
        still = []
        for g in order:
            if len(plan) >= count:
                break
            if place_spare(graph, g, free, plan, taken, prefix):
                still.append(g)
        order = still
    return plan


def add_spares(graph: nx.Graph, count: int, *, like: Iterable[Hashable] | None = None,
               prefix: str = "spare") -> tuple[nx.Graph, tuple[str, ...]]:
    """A copy of ``graph`` with up to ``count`` spare GPUs on free ports, and their names.

    A spare is wired as a GPU of the fabric is (same switches or OCS, same cables, same
    labels), where every one of those has a free port for it; GPUs wired directly to other
    GPUs (a mesh, a ring) offer no place for a spare. ``like``: the GPUs spares may be
    wired like (default every GPU). Spares are spread over the distinct attachments (every
    leaf in turn, say) and carry ``spare=True``; fewer than ``count`` come back where the
    ports run out.

    >>> from topologies.specs import build
    >>> g, names = add_spares(build("flat:n=6,planes=2,radix=8"), 5)
    >>> names, g.graph["gpus"], sorted(g.neighbors("spare0"))
    (('spare0', 'spare1'), 8, ['plane0', 'plane1'])
    """
    plan = plan_spares(graph, count, like=like, prefix=prefix)
    out = graph.copy()
    for name, attrs, edges in plan:
        out.add_node(name, **attrs)
        out.add_edges_from((name, n, d) for n, d in edges)
    out.graph["gpus"] = graph.graph["gpus"] + len(plan)
    not_as_built(out)
    return out, tuple(name for name, _, _ in plan)
