"""Recursive collective algorithms over a power-of-two core: Rabenseifner's halving-doubling
all-reduce, recursive halving reduce-scatter, recursive doubling all-gather and all-reduce.

Each generator takes the group and the fabric graph and returns a list of
:class:`~netmodel.collectives.steps.Step` (the interface of
:mod:`netmodel.collectives.algorithms`, whose table gives their costs).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.steps import NotApplicable, Pairs, Step

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["doubling_all_gather", "halving_doubling_all_reduce", "halving_reduce_scatter",
           "recursive_doubling_all_reduce"]


def _pow2_floor(p: int) -> int:
    return 1 << (p.bit_length() - 1)


def _fold(group):
    """The power-of-two core size and the (extra -> partner) positions."""
    p = len(group)
    q = _pow2_floor(p)
    return q, np.arange(q, p), np.arange(p - q)


def _exchange(group, q, distance, frac) -> Pairs:
    i = np.arange(q)
    return Pairs(group, i, i ^ distance, frac)


def halving_doubling_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    q, extra, partner = _fold(group)
    steps = []
    if len(extra):
        steps.append(Step("fold in", Pairs(group, extra, partner, 1.0), reduce=1.0))
    dist, frac = q // 2, 0.5
    while dist >= 1:
        steps.append(Step(f"halving d={dist}", _exchange(group, q, dist, frac), reduce=frac))
        dist, frac = dist // 2, frac / 2
    dist, frac = 1, 1 / q
    while dist < q:
        steps.append(Step(f"doubling d={dist}", _exchange(group, q, dist, frac)))
        dist, frac = dist * 2, frac * 2
    if len(extra):
        steps.append(Step("fold out", Pairs(group, partner, extra, 1.0)))
    return steps


def _need_pow2(group, what):
    p = len(group)
    if p & (p - 1):
        raise NotApplicable(f"{what} needs a power-of-two group, got {p} GPUs")


def halving_reduce_scatter(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    _need_pow2(group, "recursive halving")
    q = len(group)
    steps, dist, frac = [], q // 2, 0.5
    while dist >= 1:
        steps.append(Step(f"halving d={dist}", _exchange(group, q, dist, frac), reduce=frac))
        dist, frac = dist // 2, frac / 2
    return steps


def doubling_all_gather(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    _need_pow2(group, "recursive doubling")
    q = len(group)
    steps, dist, frac = [], 1, 1 / q
    while dist < q:
        steps.append(Step(f"doubling d={dist}", _exchange(group, q, dist, frac)))
        dist, frac = dist * 2, frac * 2
    return steps


def recursive_doubling_all_reduce(group: tuple[Hashable, ...],
                                  graph: nx.Graph | None) -> list[Step]:
    q, extra, partner = _fold(group)
    steps = []
    if len(extra):
        steps.append(Step("fold in", Pairs(group, extra, partner, 1.0), reduce=1.0))
    dist = 1
    while dist < q:
        steps.append(Step(f"exchange d={dist}", _exchange(group, q, dist, 1.0), reduce=1.0))
        dist *= 2
    if len(extra):
        steps.append(Step("fold out", Pairs(group, partner, extra, 1.0)))
    return steps
