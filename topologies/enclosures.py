"""What holds what in a fabric, read from its graph and labels: the GPUs of each host
(:func:`hosts`: ``server`` labels, else blocks of ``gpus_per_host``), the racks that hold
whole hosts (:func:`_whole_host_racks`), and the tier-0 switches a host or rack holds
(:func:`_holds`: those whose GPUs are all its own, which fail with it). Split from
:mod:`topologies.failure_domains`, whose ``host`` and ``rack`` components are made of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable

import networkx as nx

from compute.errors import UserError
from compute.validate import describe, is_whole
from topologies.schema import gpu_nodes

__all__ = ["hosts"]


def hosts(graph: nx.Graph, gpus_per_host: int | None = None) -> list[tuple]:
    """The GPUs of each host: by ``server`` label where every GPU has one, else blocks of
    ``gpus_per_host`` consecutive GPUs (none when it is None).

    >>> from topologies.specs import build
    >>> [len(h) for h in hosts(build("rail-optimized:domains=2,domain_size=8"))]
    [8, 8]
    >>> hosts(build("flat:n=6,planes=2,radix=8"), 4)
    [('gpu0', 'gpu1', 'gpu2', 'gpu3'), ('gpu4', 'gpu5')]
    """
    gpus = gpu_nodes(graph)
    data = graph.nodes
    if gpus and all("server" in data[g] for g in gpus):
        by: dict = defaultdict(list)
        for g in gpus:
            by[data[g]["server"]].append(g)
        return [tuple(v) for v in by.values()]
    if gpus_per_host is None:
        return []
    if not is_whole(gpus_per_host) or gpus_per_host < 1:   # numpy's too
        raise UserError(f"gpus_per_host must be a whole number >= 1, got "
                        f"{describe(gpus_per_host)}")
    gpus_per_host = int(gpus_per_host)
    return [tuple(gpus[i:i + gpus_per_host]) for i in range(0, len(gpus), gpus_per_host)]


def _whole_host_racks(labels: list, at: dict, host_list: list) -> list:
    """Each GPU's rack (``labels`` in GPU order, ``at`` a GPU's position) with the racks
    that one host spans joined, named by the first of them: a rack holds whole hosts (a
    leaf-spine's rack label is its leaf, which splits a host of more GPUs than the leaf
    holds: lite-hier's 16-Lite leaves and 32-Lite hosts make racks of 32).

    >>> _whole_host_racks([0, 0, 1, 1, 2, 2], {g: g for g in range(6)}, [(0, 1, 2, 3), (4, 5)])
    [0, 0, 0, 0, 2, 2]
    """
    first = {}
    for label in labels:
        first.setdefault(label, label)
    root = dict(first)

    def find(x):
        while root[x] != x:
            x = root[x]
        return x

    order = {label: i for i, label in enumerate(first)}
    for members in host_list:
        spans = {find(labels[at[g]]) for g in members if g in at}
        if len(spans) > 1:
            keep = min(spans, key=order.__getitem__)
            for r in spans:
                root[r] = keep
    return [find(label) for label in labels]


def _held_index(held: dict) -> tuple[list, dict]:
    """``(held's items, GPU -> positions of the tier-0 switches wired to it)`` for
    :func:`_holds`."""
    items = list(held.items())
    by_gpu: dict = defaultdict(list)
    for i, (_, gpus) in enumerate(items):
        for g in gpus:
            by_gpu[g].append(i)
    return items, by_gpu


def _holds(held: dict, members: Iterable[Hashable], index: tuple | None = None) -> tuple:
    """The tier-0 switches a host or rack of ``members`` holds: those whose GPUs are all
    its own (an HGX baseboard's NVSwitch in its server, an NVL72 rack's switch trays), which
    fail with it and stop any GPU wired to them since (a spare on a free port). ``index``
    (:func:`_held_index` of ``held``): look only at the switches wired to ``members``, in
    ``held``'s order, not every one of them for every host (fat-tree:k=128: 65,536 hosts x
    8,192 leaves, 537 million subset tests).

    >>> held = {"sw0": frozenset({"g0", "g1"}), "sw1": frozenset({"g1", "g2"}), "x": frozenset()}
    >>> _holds(held, ["g0", "g1"]), _holds(held, ["g2", "g1"], _held_index(held))
    (('sw0',), ('sw1',))
    """
    members = set(members)
    if index is None:
        return tuple(n for n, gpus in held.items() if gpus and gpus <= members)
    items, by_gpu = index
    near = sorted({i for g in members for i in by_gpu.get(g, ())})
    return tuple(items[i][0] for i in near if items[i][1] <= members)
