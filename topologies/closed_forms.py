"""Closed forms for the structured builders: GPU-to-GPU diameter (hops) and bisection
bandwidth, so that analysing a 100,000-GPU fabric needs no all-pairs search or max-flow.

Bisection here is the one :func:`topologies.analysis.bisection_maxflow` computes exactly:
the most bytes/s per direction the first half of the GPUs (``gpu0 .. gpu{n//2 - 1}``, the
builders number physically close GPUs consecutively, so this splits across the top of the
hierarchy) can send to the rest; for a torus, the least over the half cuts across each
side. A closed form is returned only where it is derived below;
callers fall back to the exact computation otherwise.

A closed form holds only for the graph its builder made: :func:`closed_form` reads the
builder and its arguments from ``graph.graph["builder"]`` and ``graph.graph["args"]`` (it
never parses the spec string) and checks that the node and edge counts still match those
the builder recorded (``nodes_built``, ``edges_built``), so a graph with links removed is
analysed exactly. Bandwidths are read from the graph (a GPU's links), so scaling every link
alike is followed; changing the bandwidth of single links while keeping the counts is not
detected: clear ``graph.graph["spec"]`` (or remove ``builder``) after such an edit to have
the graph analysed exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from compute.errors import UserError
from topologies.schema import edge_count

__all__ = ["ClosedForm", "closed_form"]


@dataclass(frozen=True)
class ClosedForm:
    """Diameter in GPU-to-GPU hops and bisection in bytes/s per direction (None = no
    closed form for this shape)."""

    diameter: int | None
    bisection: float | None
    note: str = ""


def _bw(graph: nx.Graph, u: Hashable, v: Hashable) -> float:
    return graph.edges[u, v]["bandwidth"]


def _inject(graph: nx.Graph, node: Hashable) -> float:
    return sum(d["bandwidth"] for *_, d in graph.edges(node, data=True))


def _ring(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    n = a["n"]
    return ClosedForm(n // 2, _inject(g, "gpu0"))  # the half cut crosses two links


def _full_mesh(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    n = a["n"]
    return ClosedForm(1, (n // 2) * (n - n // 2) * _bw(g, "gpu0", "gpu1"))


def _torus(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    from topologies.direct import parse_dims

    sides = parse_dims(a["dims"])
    n = g.graph["gpus"]
    per_port = _inject(g, "gpu0") / (2 * len(sides))
    longest = max(sides)
    if len(sides) == 1:
        bis = 2 * per_port  # a ring: any half cut crosses two ports
    elif longest % 2 == 0:
        # the narrowest half cut is the plane across the longest side: 2 * n / longest
        # ports cross (k-ary n-cube: 2 k^(n-1) links, Dally & Towles 2004, section 3.3);
        # a cut across a shorter side crosses 2 * n / side >= that
        bis = 2 * (n // longest) * per_port
    else:
        bis = None  # a half cut across an odd side is not a plane: max-flow over the sides
    return ClosedForm(sum(s // 2 for s in sides), bis)


def _single_switch(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    n = a["n"]
    return ClosedForm(2 if n > 1 else 0, (n // 2) * _bw(g, "gpu0", "nvs0"))


def _flat(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    n = a["n"]
    return ClosedForm(2 if n > 1 else 0, (n // 2) * _inject(g, "gpu0"))


def _leaf_spine(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    leaves, h = a["leaves"], a["radix"] // 2
    up = h // a["oversubscription"]
    nic = _bw(g, "gpu0", "leaf0")
    if leaves == 1:
        return ClosedForm(2 if h > 1 else 0, (h // 2) * nic)
    return ClosedForm(4, (leaves // 2) * up * nic if leaves % 2 == 0 else None)


def _fat_tree(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    k = a["k"]
    h = k // 2
    up = h // a["oversubscription"]
    pods = k if a["pods"] is None else a["pods"]
    nic = _bw(g, "gpu0", "leaf0")
    if pods == 1:
        if h == 1:
            return ClosedForm(0, 0.0)
        return ClosedForm(4, (h // 2) * up * nic if h % 2 == 0 else None)
    # across pods through the cores; every pod sends up * h cables' worth
    return ClosedForm(6, (pods // 2) * up * h * nic if pods % 2 == 0 else None)


def _rail(g: nx.Graph, domains: int, size: int, gps: int, per_leaf: int) -> ClosedForm:
    n = domains * size
    nvl = _bw(g, "gpu0", "nvs0")
    if domains == 1:
        return ClosedForm(2 if size > 1 else 0, (size // 2) * nvl)
    nic = next(d["bandwidth"] for _, v, d in g.edges("gpu0", data=True)
               if v.startswith("leaf"))
    sus = -(-(n // gps) // per_leaf)
    diameter = 2 if gps == 1 and sus == 1 else 4
    if domains % 2 == 0:
        # every path out of the first half's domains leaves through one of its GPUs' NICs;
        # leaves have as many uplinks as GPU ports and reach every spine: non-blocking
        return ClosedForm(diameter, (n // 2) * nic)
    if size % 2 == 0:
        # the middle domain is split: its halves also talk through their NVLink switch
        return ClosedForm(diameter, (n // 2) * nic + (size // 2) * nvl)
    return ClosedForm(diameter, None)


def _rail_optimized(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    domains, gps = a["domains"], a["gpus_per_server"]
    nics = a["nics_per_server"]
    if domains > 1 and nics not in (None, gps):
        return _fewer_nics(g, domains, a["domain_size"], gps, nics, a["servers_per_leaf"])
    # (one domain has no scale-out network: its NICs are not built)
    return _rail(g, domains, a["domain_size"], gps, a["servers_per_leaf"])


def _fewer_nics(g: nx.Graph, domains: int, size: int, gps: int, nics: int,
                per_leaf: int) -> ClosedForm:
    """Rail-optimized with ``nics < gps`` NICs a server (every ``gps // nics``-th GPU
    holds one; so every server has GPUs without). The farthest pair: two GPUs without a
    NIC in different domains, each reaching a NIC of its domain over its NVSwitch (gpu -
    nvs - gpu, 2 hops a side), the NICs on one rail meeting at their leaf (2 hops) where
    the two domains have servers in one scalable unit (a domain of several servers may
    reach into the next unit), else through a spine (4): 6, or 8 where the first domain's
    units and the last's are apart (then no two domains closer apart share one). Bisection,
    an even number of domains: the first half's servers send only through their NICs,
    ``n / 2 / stride`` of them, into non-blocking leaves (as :func:`_rail`); an odd one
    splits a domain across its NVSwitch, left to the max-flow."""
    n = domains * size
    per_domain = size // gps   # servers a domain; domains and units are runs of servers
    apart = (per_domain - 1) // per_leaf < (domains - 1) * per_domain // per_leaf
    diameter = 8 if apart else 6
    if domains % 2:
        return ClosedForm(diameter, None)
    nic = next(d["bandwidth"] for _, v, d in g.edges("gpu0", data=True)
               if v.startswith("leaf"))
    return ClosedForm(diameter, (n // 2) // (gps // nics) * nic)


def _superpod(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    return _rail(g, 32 * a["sus"] - 1, 8, 8, 32)


def _nvl72(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm:
    return _rail(g, a["racks"], 72, 4, 32)


def _ocs(g: nx.Graph, a: Mapping[str, Any]) -> ClosedForm | None:
    if a["logical"] is not None:
        return None
    n = a["gpus"]
    # the bare cabling, read as if the OCS layer were one non-blocking switch per plane:
    # the most any set of circuits can carry across the half (every port of one half
    # wired to the other)
    return ClosedForm(2 if n > 1 else 0, (n // 2) * _inject(g, "gpu0"),
                      "bare OCS cabling: the best any circuit set can do")


_FORMS: dict[str, Callable[[nx.Graph, Mapping[str, Any]], ClosedForm | None]] = {
    "ring": _ring, "full-mesh": _full_mesh, "torus": _torus, "single-switch": _single_switch,
    "flat": _flat, "leaf-spine": _leaf_spine, "fat-tree": _fat_tree,
    "rail-optimized": _rail_optimized, "superpod": _superpod, "nvl72": _nvl72, "ocs": _ocs,
}


def closed_form(graph: nx.Graph) -> ClosedForm | None:
    """The closed form for ``graph`` if a structured builder made it (``builder`` and
    ``args`` recorded, ``spec`` not cleared) and it is still the graph that builder made
    (same node and edge counts); else None.

    >>> from topologies import fat_tree
    >>> g = fat_tree(4)
    >>> closed_form(g)
    ClosedForm(diameter=6, bisection=400000000000.0, note='')
    >>> g.remove_edge("gpu0", "leaf0")
    >>> closed_form(g) is None
    True
    """
    name, recorded = graph.graph.get("builder"), graph.graph.get("args")
    if not graph.graph.get("spec") or name not in _FORMS or not isinstance(recorded, dict) \
            or graph.graph.get("nodes_built") != graph.number_of_nodes() \
            or graph.graph.get("edges_built") != edge_count(graph):
        return None
    from topologies.registry import bound_arguments

    try:
        args = bound_arguments(name, recorded)
    except (UserError, TypeError):  # arguments from a file that the builder no longer takes
        return None
    return _FORMS[name](graph, args)
