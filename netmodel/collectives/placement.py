"""Where a group of GPUs sits in a fabric: placement policies.

Policies (GPUs are taken in the builders' numbering, which follows the physical hierarchy:
domain by domain, server by server, leaf by leaf):

* ``contiguous``: consecutive GPUs (a TP group inside one scale-up domain when it fits);
* ``rail-aligned``: GPUs with the same ``rail`` label (the same position in their servers)
  in consecutive servers, the way data-parallel peers sit on one rail of a rail-optimized
  fabric;
* ``spread``: GPUs as far apart as possible (every ``G/size``-th GPU);
* ``random``: a seeded random sample, kept in numbering order.

:func:`partition` cuts the whole fabric into disjoint groups by the same policy (every TP
group of a cluster), :func:`place` returns one of them.

>>> import networkx as nx
>>> g = nx.Graph(gpus=8)
>>> g.add_nodes_from((f"gpu{i}", {"kind": "gpu", "rail": i % 4}) for i in range(8))
>>> place(g, 4, "contiguous")
('gpu0', 'gpu1', 'gpu2', 'gpu3')
>>> place(g, 2, "rail-aligned", index=1)
('gpu1', 'gpu5')
>>> place(g, 4, "spread")
('gpu0', 'gpu2', 'gpu4', 'gpu6')
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError, chosen, known, lookalike
from compute.units import counted
from compute.validate import describe, flag, is_whole
from netmodel.collectives.names import PLACEMENTS
from topologies.schema import check_graph, gpu_nodes

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["check_group", "check_seed", "partition", "place"]


def check_seed(seed: object) -> int:
    """``seed`` as an int, refusing negatives, booleans and non-integers (numpy's generators
    take seeds >= 0).

    >>> check_seed(7)
    7
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: seed must be a whole number >= 0, got -1
    """
    if not is_whole(seed) or seed < 0:
        raise UserError(f"seed must be a whole number >= 0, got {describe(seed)}")
    return int(seed)


def _size(graph: nx.Graph, size: object, gpus: Sequence[Hashable] | None = None,
          checked: bool = False) -> tuple[Sequence[Hashable], int]:
    if gpus is None:
        gpus = gpu_nodes(graph)
    elif checked:   # the fabric's own GPUs (a router's gpu_list): nothing to check
        pass
    elif not isinstance(gpus, list | tuple):   # a string was cut into its letters
        raise UserError(f"gpus must be a list of the fabric's GPU nodes in numbering order, or "
                        f"None to read them from the fabric, got {describe(gpus)}")
    else:
        _check_gpus(check_graph(graph), gpus)
    if not is_whole(size) or size < 1:
        raise UserError(f"group size must be an integer >= 1, got {describe(size)}")
    if size > len(gpus):
        raise UserError(f"group size {size} is larger than the fabric's "
                        f"{counted(len(gpus), 'GPU')}")
    return gpus, int(size)


def _check_gpus(graph: nx.Graph, gpus: Sequence[Hashable]) -> None:
    """Refuse a ``gpus`` list that names a node the fabric lacks, a node that is not a GPU,
    or one GPU twice (it made groups of GPUs that are not there, or a GPU in two groups),
    naming the first bad value. O(n): one set and one look-up a GPU (2.5 ms for 16,384); the
    slow walk that finds the first bad value only on a refusal."""
    nodes = graph.nodes
    try:
        if len(set(gpus)) == len(gpus) and all(nodes[g].get("kind") == "gpu" for g in gpus):
            return
    except (KeyError, TypeError):   # a node the fabric lacks, an unhashable value
        pass
    seen: set = set()
    for g in gpus:
        try:
            kind = nodes[g].get("kind")
        except (KeyError, TypeError):
            kind = None
            why = "is not a node of the fabric"
        else:
            why = f"is a {kind}, not a GPU" if kind != "gpu" else "appears more than once"
        if kind != "gpu" or g in seen:
            fabric = gpu_nodes(graph)
            raise UserError(f"gpus must be the fabric's GPU nodes, each once: {describe(g)} "
                            f"{why} (its {len(fabric):,} GPUs: {known(map(str, fabric))})")
        seen.add(g)


def partition(graph: nx.Graph, size: int, policy: str = "contiguous", *, seed: int = 0,
              gpus: Sequence[Hashable] | None = None, checked: bool = False
              ) -> list[tuple[Hashable, ...]]:
    """All ``floor(G / size)`` disjoint groups of ``size`` GPUs under ``policy``
    (``gpus``: the fabric's GPU nodes in numbering order, if already known; each must be a
    GPU node of ``graph``, listed once; ``checked``: ``gpus`` read from the fabric itself,
    as a :class:`~netmodel.collectives.routing.Router`'s ``gpu_list``, not checked again:
    the check is a look-up a GPU, 2.6 ms of a 64-GPU all-reduce's 50 ms on a 16,384-GPU
    fabric)."""
    checked = flag("", "checked", checked)   # "no" skipped the checks
    if chosen(policy, PLACEMENTS) is None:   # blanks at either end dropped
        raise UserError(f"unknown placement {describe(policy)}{lookalike(policy, PLACEMENTS)}; "
                        f"known: {known(PLACEMENTS)}")
    policy = chosen(policy, PLACEMENTS)
    seed = check_seed(seed)
    gpus, size = _size(graph, size, gpus, checked)
    count = len(gpus) // size
    if policy == "contiguous":
        order = gpus
    elif policy == "rail-aligned":
        data = graph.nodes
        if any("rail" not in data[g] for g in gpus):
            exc = UserError("rail-aligned placement needs GPUs labelled with their 'rail' "
                            "(this fabric has none); use contiguous, spread or random")
            exc.parameter = "placement"   # the policy refused, not the group it places
            raise exc
        pos = {g: i for i, g in enumerate(gpus)}
        order = sorted(gpus, key=lambda g: (data[g]["rail"], pos[g]))
    elif policy == "spread":
        stride = count
        return [tuple(gpus[j + k * stride] for k in range(size)) for j in range(count)]
    else:
        rng = np.random.default_rng(seed)
        perm = rng.permutation(len(gpus))
        # each group's GPUs in numbering order: one sort of the (group, member) table
        rows = np.sort(perm[:count * size].reshape(count, size), axis=1).tolist()
        return [tuple(map(gpus.__getitem__, row)) for row in rows]
    return [tuple(order[j * size:(j + 1) * size]) for j in range(count)]


def place(graph: nx.Graph, size: int, policy: str = "contiguous", *, seed: int = 0,
          index: int = 0, gpus: Sequence[Hashable] | None = None, checked: bool = False
          ) -> tuple[Hashable, ...]:
    """Group number ``index`` of :func:`partition` (the first by default)."""
    groups = partition(graph, size, policy, seed=seed, gpus=gpus, checked=checked)
    if not (is_whole(index) and 0 <= index < len(groups)):   # not None, not True as 1
        raise UserError(f"group index must be a whole number from 0 to {len(groups) - 1} "
                        f"({policy} placement makes {len(groups)} group(s) of {size}), got "
                        f"{describe(index)}")
    return groups[int(index)]


def check_group(graph: nx.Graph, group: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """``group`` as a tuple of GPU nodes, refusing unknown, non-GPU or repeated nodes, and
    a set (its order, the ring order, follows Python's string hashing, which PYTHONHASHSEED
    changes from run to run)."""
    if isinstance(group, set | frozenset):
        raise UserError(f"group must be an ordered list of GPUs (its order is the ring order), "
                        f"got a {type(group).__name__}, whose order changes from run to run; "
                        f"give a list or tuple in ring order")
    group = tuple(group)
    if not group:
        raise UserError("a group needs at least one GPU, got none")
    seen = set()
    for g in group:
        try:
            known_node = g in graph
        except TypeError:   # unhashable (a list): no node
            known_node = False
        if not known_node:
            raise UserError(f"group member {describe(g)} is not a node of the fabric")
        kind = graph.nodes[g].get("kind")
        if kind != "gpu":
            raise UserError(f"group member {describe(g)} is a {kind}, not a GPU")
        if g in seen:
            raise UserError(f"group member {describe(g)} appears more than once")
        seen.add(g)
    return group
