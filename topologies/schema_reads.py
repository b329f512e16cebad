"""Reading a fabric as the schema lays it out: its GPU nodes and their types, its count of
links, and the check that a value given as a fabric is one.

A GPU node names its type (``gpu``): one of the graph's own ``gpu_types`` first, then
compute's catalog (:func:`gpu_spec`, :func:`gpu_types`); where the type derives from another
GPU, the graph's ``gpu_file_facts`` say so first (:func:`gpu_derivation`). The schema's
check of these attributes is :func:`topologies.schema.validate`; the readers here trust a
fabric that passed it and refuse only a value that is no graph (:func:`check_graph`).

>>> from topologies import build
>>> g = build("ring:n=4,gpu=Lite")
>>> gpu_nodes(g)[:2], edge_count(g), gpu_spec(g, "Lite").sms
(['gpu0', 'gpu1'], 4, 33)
"""

from __future__ import annotations

import functools
import itertools
import operator

import networkx as nx

from compute.errors import UserError, known
from compute.gpu_facts import derivation, named_fact, stated_fact
from compute.hardware import GpuSpec, catalog
from compute.validate import describe

__all__ = ["check_graph", "edge_count", "gpu_derivation", "gpu_named_fact", "gpu_nodes", "gpu_spec",
           "gpu_types"]


def edge_count(graph: nx.Graph) -> int:
    """``graph.number_of_edges()`` for an undirected simple graph, counted from the
    neighbour lists' lengths in C rather than node by node through the degree view (a
    quarter of a second at 131,072 GPUs); other graphs ask networkx.

    >>> edge_count(nx.Graph([(0, 1), (1, 2), (2, 2)])), nx.Graph([(0, 1), (1, 2), (2, 2)]).size()
    (3, 3)
    """
    if type(graph) is not nx.Graph:
        return graph.number_of_edges()
    adj = graph._adj
    loops = sum(map(operator.contains, adj.values(), adj))  # a self-loop is listed once
    return (sum(map(len, adj.values())) + loops) // 2


def check_graph(graph: object, what: str = "graph") -> nx.Graph:
    """``graph`` if it is a networkx Graph; otherwise a UserError naming ``what`` (a name, a
    list or None raised AttributeError from deep inside the function given it).

    >>> check_graph("ring:n=4")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: graph must be a networkx Graph (a fabric from build or read_graph), got 'ring:n=4'
    """
    if not isinstance(graph, nx.Graph):
        raise UserError(f"{what} must be a networkx Graph (a fabric from build or read_graph), "
                        f"got {describe(graph)}")
    return graph


def gpu_nodes(graph: nx.Graph) -> list:
    """The GPU nodes of ``graph`` in insertion order (the order builders number them),
    picked in C (``graph.nodes(data="kind")``'s view, node by node in Python, took 0.7 s
    of a 1,000,000-GPU torus's ``topology show``, twice)."""
    data = check_graph(graph)._node
    kinds = map(operator.methodcaller("get", "kind"), data.values())
    return list(itertools.compress(data, map(operator.eq, kinds, itertools.repeat("gpu"))))


def gpu_spec(graph: nx.Graph, name: str) -> GpuSpec:
    """The :class:`~compute.hardware.GpuSpec` of GPU type ``name`` on ``graph``: the graph's
    own ``gpu_types`` first (a user's GPU placed by a builder or read from a fabric file),
    then compute's catalog. For a node: ``gpu_spec(graph, graph.nodes[node]["gpu"])``.

    >>> from compute.hardware import derive_gpu, get_gpu
    >>> from topologies import build
    >>> mine = derive_gpu(get_gpu("H100-SXM"), "Half", fraction=0.5)
    >>> g = build("ring", {"n": 4, "gpu": mine})
    >>> gpu_spec(g, g.nodes["gpu0"]["gpu"]).sms, gpu_spec(g, "Lite").sms
    (66, 33)
    """
    own = check_graph(graph).graph.get("gpu_types")
    if isinstance(own, dict) and name in own:
        return own[name]
    table = catalog()
    if isinstance(name, str) and name in table:
        return table[name]
    names = list(own or {}) + list(table)
    raise UserError(f"GPU type {describe(name)} is neither one of the fabric's gpu_types nor in "
                    f"the catalog; known: {known(names)}")


def gpu_derivation(graph: nx.Graph, name: str) -> tuple[str, float] | None:
    """``(base GPU, fraction)`` where GPU type ``name`` on ``graph`` derives from another
    GPU (a GPU file's ``derive_from``): the graph's own ``gpu_file_facts`` first (recorded
    by the builder, carried by a fabric file), then compute's (the catalog's Lite family, a
    GPU file read in this process); None where it derives from none.

    >>> from topologies import build
    >>> g = build("ring:n=2,gpu=Lite")
    >>> gpu_derivation(g, "Lite"), gpu_derivation(g, "H100-SXM")
    (('H100-SXM', 0.25), None)
    """
    facts = (graph.graph.get("gpu_file_facts") or {}).get(name)
    if facts is not None:
        return (facts["derive_from"], facts.get("fraction", 1.0)) if "derive_from" in facts \
            else None
    return derivation(name)


def gpu_named_fact(graph: nx.Graph, name: str, key: str) -> tuple[str, str] | None:
    """``(value, GPU that states it)`` of the named fact ``key`` (a GPU entry's
    ``collective_generation``, ``compute_capability`` or ``host_arch``: one of
    :data:`compute.gpu_rows.NAMED_KEYS`) of GPU type ``name`` on ``graph``:
    its own or kept from the GPU it derives from (:func:`compute.gpu_facts.named_fact`),
    each GPU's facts and derivation read from the graph's own ``gpu_file_facts`` first
    (:func:`gpu_derivation`), then compute's; None where its lineage states none.

    >>> from topologies import build
    >>> gpu_named_fact(build("ring:n=2,gpu=Lite"), "Lite", "collective_generation")
    ('hopper', 'H100-SXM')
    """
    own = graph.graph.get("gpu_file_facts") or {}

    def stated(gpu: str, key: str) -> str | None:
        facts = own.get(gpu)
        return stated_fact(gpu, key) if facts is None else facts.get(key)

    return named_fact(name, key, step=functools.partial(gpu_derivation, graph), stated=stated)


def gpu_types(graph: nx.Graph) -> dict[str, GpuSpec]:
    """``{name: GpuSpec}`` of every GPU type the GPU nodes of ``graph`` name, in node order
    (resolved by :func:`gpu_spec`).

    >>> from topologies import build
    >>> list(gpu_types(build("lite-groups:base=[ring:n=2],lites=2")))
    ['Lite']
    """
    names = dict.fromkeys(t for _, t in check_graph(graph).nodes(data="gpu") if t is not None)
    return {t: gpu_spec(graph, t) for t in names}
