"""The groups of a concurrent costing, prepared once for every algorithm and kept on the model.

Checked (:func:`prepare_groups`), in ring order, as node numbers, sorted into classes of groups
that share steps (:class:`PreparedGroups`), with their steps (:func:`group_steps`); a model keeps
the last few sets (:func:`prepared_groups`) for the next costing of the same groups (another op),
with the loads of their steps. The costing itself: :mod:`netmodel.collectives.concurrent`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from compute.comm import check_op
from compute.errors import UserError
from compute.validate import describe, is_whole
from netmodel.collectives.algorithms import generate
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.steps import unique

if TYPE_CHECKING:
    from collections.abc import Iterable

    #: Groups: explicit GPU lists, or an int size cutting the fabric into groups.
    Groups = int | Iterable[Iterable[Hashable]]


#: Algorithms whose steps depend on the fabric (scale-up domains), not only on the group's
#: size: their groups share steps only when their domains fall alike.
_GRAPH_AWARE = ("ring", "tree")
#: Algorithms whose steps may name switches (in-switch phases): one class per group.
_OWN_STEPS = ("in-network", "in-network-tree", "hierarchical", "collnet-direct",
              "collnet-chain")


class PreparedGroups:
    """The groups of a concurrent costing, prepared once for every algorithm: in ring order,
    as node numbers, and sorted into classes that share steps."""

    def __init__(self, model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...],
                 hot: bool = True) -> None:
        # the model's graph and switch tiers, not the model: a model keeps its groups
        # (:func:`prepared_groups`), which then hold no reference back to it
        self.graph, self.tiers = model.graph, model.router.tier
        self.ordered = [model._ordered(g) for g in groups]
        sizes = np.fromiter(map(len, self.ordered), np.int64, count=len(self.ordered))
        flat = model.router.node_numbers([x for g in self.ordered for x in g])
        #: Every group's node numbers one after the other, and where each group starts.
        self.flat, self.start = flat, np.cumsum(sizes) - sizes
        self.sizes = sizes
        #: Whether no GPU is in two groups.
        ranked = np.sort(flat)
        self.disjoint = not bool((ranked[1:] == ranked[:-1]).any())
        #: Names this set of groups in the router's cache of routed patterns.
        self.token = object()
        self._classes: dict[str, list[np.ndarray]] = {}
        #: Loads of the steps costed so far, for every algorithm: ``{(classes, pattern):
        #: (fractions, loads)}`` (see
        #: :func:`~netmodel.collectives.concurrent_loads.evaluate_loads`).
        self.loads: dict = {}
        #: Whether the steps' loads hold their hot spots
        #: (:func:`~netmodel.collectives.concurrent_loads._loads`' ``hot_too``).
        self.hot = hot

    @staticmethod
    def partition(algorithm: str) -> str:
        """Which classes ``algorithm``'s groups fall into: ``own`` (one per group),
        ``domains`` (by size and scale-up domains) or ``sizes`` (by size)."""
        return "own" if algorithm in _OWN_STEPS else "domains" if algorithm in _GRAPH_AWARE \
            else "sizes"

    def classes(self, algorithm: str) -> list[np.ndarray]:
        """Indices of the groups that share steps, class by class."""
        kind = self.partition(algorithm)
        hit = self._classes.get(kind)
        if hit is None:
            if kind == "own":
                hit = [np.array([i]) for i in range(len(self.ordered))]
            elif kind == "domains":
                hit = self._by_domains()
            else:
                hit = [np.flatnonzero(self.sizes == p) for p in unique(self.sizes).tolist()]
            self._classes[kind] = hit
        return hit

    def _by_domains(self) -> list[np.ndarray]:
        """Groups whose members fall into scale-up domains alike (the same members share a
        domain) have the same tree and hierarchical steps."""
        from netmodel.collectives.algorithms import domain_labels

        graph, tiers = self.graph, self.tiers
        out: dict[tuple[int, int], np.ndarray] = {}
        for p in unique(self.sizes).tolist():
            idx = np.flatnonzero(self.sizes == p)
            labels = np.stack([domain_labels(graph, self.ordered[i], tiers) for i in idx]) \
                if p > 64 else None
            if labels is None:
                ids = domain_labels(graph, [x for i in idx.tolist() for x in self.ordered[i]],
                                    tiers)
                ids = ids.reshape(len(idx), p)
                same = (ids[:, :, None] == ids[:, None, :]).reshape(len(idx), -1)
                inv = _unique_rows(same)
            else:
                _, inv = np.unique(labels, axis=0, return_inverse=True)
            inv = inv.ravel()
            for c in range(inv.max() + 1):
                out[(p, c)] = idx[inv == c]
        return list(out.values())


    def rows(self, idx: np.ndarray) -> np.ndarray:
        """Node numbers of groups ``idx`` (all of one size), one row per group."""
        p = int(self.sizes[idx[0]])
        return self.flat[self.start[idx][:, None] + np.arange(p)]


def _unique_rows(same: np.ndarray) -> np.ndarray:
    """``np.unique(same, axis=0, return_inverse=True)[1]`` of a boolean table: the rows
    packed into bytes (most significant bit first, so that the bytes sort as the rows do)
    and, when they fit in 8 bytes, read as one big-endian integer each."""
    packed = np.packbits(same, axis=1)
    if packed.shape[1] > 8:
        return np.unique(packed, axis=0, return_inverse=True)[1].ravel()
    wide = np.zeros((len(packed), 8), dtype=np.uint8)
    wide[:, :packed.shape[1]] = packed
    return np.unique(wide.view(">u8").ravel(), return_inverse=True)[1].ravel()


def group_steps(groups: PreparedGroups, op: str, algorithm: str):
    """Steps of every group: ``[(steps, rows, indices)]``, one per class of groups with the
    same steps up to renaming: the steps of one of them, the node numbers of each member
    group's GPUs in ring order (one row per group) and the groups' indices. In-network
    steps (each group's own switch tree) are one class per group."""
    out = []
    for idx in groups.classes(algorithm):
        steps = generate(algorithm, op, groups.ordered[idx[0]], groups.graph)
        rows = groups.rows(idx)
        out.append((steps, rows, idx))
    return out


def prepare_groups(model: FabricCostModel, groups: Groups, op: str, algorithm: str | None
                   ) -> tuple[tuple[tuple[Hashable, ...], ...], list[str]]:
    """The groups as checked node tuples and the algorithm names to try."""
    op = check_op(op)
    if groups is None or isinstance(groups, bool | float | np.bool_ | np.floating | str) \
            or not (is_whole(groups) or hasattr(groups, "__iter__")):
        raise UserError(f"groups must be a group size (an integer >= 2) or lists of GPUs, "
                        f"got {describe(groups)}")
    _check_ordered("groups", groups)
    if is_whole(groups):
        from netmodel.collectives.placement import partition

        groups = tuple(partition(model.graph, int(groups), model.placement, seed=model.seed,
                                 gpus=model.router.gpu_list, checked=True))  # GPU tuples
    else:
        groups = tuple(groups)
        for i, g in enumerate(groups):
            _check_ordered(f"groups[{i}]", g)
        groups = model.groups(groups)
    if not groups:
        raise UserError("concurrent_cost needs at least one group")
    if any(len(g) < 2 for g in groups):
        raise UserError("every concurrent group needs at least 2 GPUs")
    return groups, model.algorithm_names(op, algorithm)


def _check_ordered(what: str, value: object) -> None:
    """Refuse a set or frozenset: its order (a group's ring order, the order of the
    result's rows) follows Python's string hashing, which PYTHONHASHSEED changes from run
    to run. (A dict and its views keep the order their keys were put in: taken.)"""
    if isinstance(value, set | frozenset):
        raise UserError(f"{what} must be an ordered list of GPUs (its order is the ring "
                        f"order), got a {type(value).__name__}, whose order changes from run "
                        f"to run; give a list or tuple in ring order" if what != "groups" else
                        f"groups must be an ordered list of groups (one result row each, in "
                        f"their order), got a {type(value).__name__}, whose order changes "
                        f"from run to run; give a list or tuple")


def groups_in_order(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...]
                    ) -> tuple[tuple[tuple[Hashable, ...], ...], np.ndarray]:
    """The groups in an order of their own (by their GPUs' node numbers, as listed in each
    group), whatever order they come in, so that no sum over groups depends on the order
    they are listed in (their loads on a shared link, the schedule's); and where each
    listed group is in it (``groups[i]`` is ``ordered[back[i]]``)."""
    # every group's node numbers looked up in one pass (8,192 lookups of 2 GPUs were most
    # of the time), then ordered as their tuples sort: by numpy's stable lexicographic
    # sort where the groups are of one size (the first number the last key), else by the
    # tuples themselves
    flat = model.router.node_numbers([x for g in groups for x in g])
    sizes = {len(g) for g in groups}
    if len(sizes) == 1:
        order = np.lexsort(flat.reshape(len(groups), -1).T[::-1]).tolist()
    else:
        flat, ends = flat.tolist(), np.cumsum([len(g) for g in groups]).tolist()
        keys = [tuple(flat[e - len(g):e]) for g, e in zip(groups, ends, strict=True)]
        order = sorted(range(len(groups)), key=keys.__getitem__)
    back = np.empty(len(groups), np.int64)
    back[order] = np.arange(len(groups))
    return tuple(groups[i] for i in order), back


#: How many sets of prepared groups (:class:`PreparedGroups`, with their steps' loads) a model
#: keeps for the next costing of the same groups (the least recently used dropped). The
#: fabric search asks every op at each instance size in turn (2, 4, ..., 256 GPUs: 8 sets
#: and more), so fewer than its sizes evict every set before its next op reuses it.
_KEPT_GROUPS = 16


def prepared_groups(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...],
                    alone_too: bool, hot: bool = True) -> PreparedGroups:
    """The :class:`PreparedGroups` of ``groups`` on ``model``, kept on the model: a later
    costing of the same groups (another op) reuses the loads of the steps it shares
    with the ops costed before (a ring all-reduce's steps are its reduce-scatter's and its
    all-gather's), as one costing reuses them between its algorithms. Kept apart by
    ``alone_too`` and ``hot`` (hot spots worked out), which change what a step's loads
    hold."""
    kept = model._concurrent
    key = (groups, alone_too, hot)
    hit = kept.pop(key, None)
    if hit is None:
        hit = PreparedGroups(model, groups, hot)
    kept[key] = hit   # the most recently used last
    while len(kept) > _KEPT_GROUPS:
        _forget(model, kept.pop(next(iter(kept))))
    return hit


def _forget(model: FabricCostModel, dropped: PreparedGroups) -> None:
    """Drop the router's plans of ``dropped``'s steps (kept under its token, which no
    later costing can name): else up to 256 plans of dropped sets stay, a direct
    all-to-all's of 64 groups of 256 GPUs 389 MB."""
    router = model.router
    router.drop_plans([k for k in router._plans if isinstance(k, tuple) and len(k) == 3
                       and k[0] == "concurrent" and k[2] is dropped.token])
