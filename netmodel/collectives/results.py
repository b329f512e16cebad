"""What a costed collective reports: its time, bandwidths and bottlenecks, per step and whole.

:mod:`netmodel.collectives.cost` costs the steps and builds :class:`StepTiming`
(:meth:`~netmodel.collectives.cost.CompiledCollective.timings`), with a :class:`TreeCap` or an
:class:`InSwitchCeiling` where one, not a link, bounds a step;
:class:`~netmodel.collectives.model.FabricCostModel` picks the fastest choice and returns a
:class:`CollectiveResult` (one size) or a :class:`SweepResult` (an array of sizes).

busbw and algbw follow nccl-tests (doc/PERFORMANCE.md): ``algbw = n / time``, ``busbw =
algbw * factor`` with factor ``2(p-1)/p`` for all-reduce, ``(p-1)/p`` for reduce-scatter,
all-gather and all-to-all, and 1 for broadcast, reduce and send-recv.

>>> bus_factor("all-reduce", 8)
1.75
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from compute.validate import MAX_WHOLE, number

__all__ = ["CollectiveResult", "InSwitchCeiling", "StepTiming", "SweepResult", "TreeCap", "bus_factor"]


def bus_factor(op: str, p: int) -> float:
    """nccl-tests' busbw / algbw ratio for ``op`` on ``p`` ranks (a whole number from 1:
    NaN gave NaN, inf NaN, an array ValueError).

    >>> bus_factor("all-reduce", 4), bus_factor("all-gather", 4)
    (1.5, 0.75)
    """
    p = number("bus_factor", "p", p, minimum=1, maximum=MAX_WHOLE, integer=True)
    if p <= 1:
        return 1.0
    if op == "all-reduce":
        return 2 * (p - 1) / p
    if op in ("reduce-scatter", "all-gather", "all-to-all"):
        return (p - 1) / p
    return 1.0



@dataclass(frozen=True)
class TreeCap:
    """NCCL's per-channel tree cap where it, not a link, bounds a step of its tree
    (:attr:`~netmodel.collectives.calibration.Calibration.tree_channel_bandwidth`).

    ``channels`` tree channels (one per NIC rail) at ``channel_bandwidth`` bytes/s of busbw
    each (NCCL's ``table``: ``perChMaxTreeBws``, or under LL128 ``perChMaxTreeLL128Bws``
    where it is the lower, for ``nodes`` scale-up domains: 1, 2, 3 or more) under the
    protocol's ``protocol_factor`` (1 for LL128's own table): the tree's busbw is at most
    their product and its algbw half of it. NCCL's NVLSTree (``table``
    ``perChMaxNVLSTreeBws``, a channel per NVLS head) counts busbw as a ring does: its
    algbw is at most busbw / (2 ``share``), ``share`` = (n - 1) / n on n GPUs (1 for
    Tree): the cap's share of each of NCCL's two phases, reduce and broadcast, whether
    one step runs both at once (Tree: the step's
    :attr:`~netmodel.collectives.steps.Step.tree_share` 2) or each is a step (NVLSTree).
    ``slowdown``: the step's transfer time over what its links alone would take (> 1).
    """

    channels: int
    channel_bandwidth: float
    nodes: int
    protocol_factor: float
    slowdown: float
    table: str = "perChMaxTreeBws"
    share: float = 1.0

    @property
    def busbw(self) -> float:
        """The tree's busbw ceiling (bytes/s): channels x per-channel rate x protocol."""
        return self.channels * self.channel_bandwidth * self.protocol_factor

    @property
    def algbw(self) -> float:
        """The algbw ceiling (bytes/s) that busbw ceiling allows."""
        return self.busbw / (2 * self.share)


@dataclass(frozen=True)
class InSwitchCeiling:
    """The in-switch reduction ceiling where it, not a link, bounds an in-switch phase
    (:attr:`~netmodel.collectives.calibration.Calibration.in_network_ceiling`: the highest
    published NVLS busbw of the generation over a GPU's NVLink rate).

    The phase's busbw is at most ``ceiling`` x ``link_rate`` (a GPU's line rate into its
    domain's reducing switches, bytes/s a direction; :attr:`busbw`) while its bytes stream,
    counted over the ``heads`` GPUs of a domain the phase runs on (0: not known);
    ``per_byte`` is the seconds per byte of the message it holds the phase (or its full
    pipeline) to, the time each byte more takes, not the start-up latency or the pipeline's
    fill. ``slowdown``: that time over what its links alone would take (> 1).
    """

    ceiling: float
    link_rate: float
    slowdown: float
    per_byte: float = 0.0
    heads: int = 0

    @classmethod
    def of(cls, heads: int, floor: float, ceiling: float, slowdown: float,
           per_byte: float = 0.0) -> InSwitchCeiling:
        """The ceiling of an in-switch step of ``heads`` heads whose ``floor`` (seconds per
        byte at a ceiling of 1, :attr:`~netmodel.collectives.step_cost.StepCost.floor`) is
        (heads - 1) / heads over a GPU's link rate."""
        return cls(ceiling, (heads - 1) / heads / floor, slowdown, per_byte, heads)

    @property
    def busbw(self) -> float:
        """The phase's busbw ceiling (bytes/s): ceiling x a GPU's link rate."""
        return self.ceiling * self.link_rate

    def group_busbw(self, p: int) -> float:
        """The ceiling as the busbw of a collective of ``p`` GPUs whose in-switch phases run
        on domains of :attr:`heads` GPUs each (an all-reduce across scale-up domains):
        :attr:`busbw` x ((p-1)/p) / ((heads-1)/heads), the two bus factors' ratio (the
        phases move ``(heads-1)/heads`` of the message each, the collective's busbw counts
        ``(p-1)/p``); :attr:`busbw` where the phases run on the whole group.

        >>> round(InSwitchCeiling(1.0, 400e9, 1.1, heads=8).group_busbw(16) / 1e9, 2)
        428.57
        >>> InSwitchCeiling(1.0, 400e9, 1.1, heads=8).group_busbw(8) / 1e9
        400.0
        """
        if self.heads < 2 or self.heads == p:
            return self.busbw
        return self.busbw * ((p - 1) / p) / ((self.heads - 1) / self.heads)


@dataclass(frozen=True)
class StepTiming:
    """One step of a costed collective at one size (seconds; per step, except ``time``).

    ``bottleneck`` is the directed link ``(u, v)`` that bounds the step's transfers, with
    its ``bottleneck_bandwidth``; where NCCL's tree channel cap bounds them instead,
    ``tree_cap`` says so (:class:`TreeCap`), where the in-switch reduction ceiling does,
    ``in_switch_ceiling`` (:class:`InSwitchCeiling`), and ``bottleneck`` is empty
    (bandwidth 0).
    """

    name: str
    repeat: int
    stages: int
    transfers: int
    latency: float
    serialization: float
    reduction: float
    time: float
    bottleneck: tuple[Hashable, ...]
    bottleneck_bandwidth: float
    scaleout: bool
    tree_cap: TreeCap | None = None
    in_switch_ceiling: InSwitchCeiling | None = None


@dataclass(frozen=True)
class CollectiveResult:
    """The cost of one collective of one size on one group.

    ``time`` is seconds; ``algbw`` and ``busbw`` are bytes/s (nccl-tests definitions);
    ``bottleneck`` lists the directed links ``(u, v)`` that limit the costliest step(s),
    ``tree_cap`` NCCL's tree channel cap where it limits them instead
    (:attr:`StepTiming.tree_cap`; None: none does), or where it bounds the collective's
    line though a pipeline's other phases take longer one by one (NVLSTree's in-switch
    phases), its capped phases then named and its ``slowdown`` the collective's steady
    time per byte over the links' alone; ``in_switch_ceiling`` the in-switch reduction
    ceiling where it limits the costliest step(s) instead (:attr:`StepTiming.
    in_switch_ceiling`; None: it does not);
    ``connected`` is False when a degraded fabric cut the group apart (then ``time`` is
    infinite and ``cut`` names a pair of members with no path between them);
    ``routing`` the routing policy the algorithm ran under
    (:data:`~netmodel.collectives.route_policies.ROUTINGS`: ``"shortest"`` but where a GPU
    pair has both a cable and a wider path through a switch; :meth:`as_dict` gives it only
    where it is another).
    """

    op: str
    group: tuple[Hashable, ...]
    nbytes: float
    time: float
    algbw: float
    busbw: float
    algorithm: str
    protocol: str
    base_latency: float
    steps: tuple[StepTiming, ...]
    bottleneck: tuple[tuple[Hashable, ...], ...]
    connected: bool = True
    cut: tuple[Hashable, ...] = ()
    tree_cap: TreeCap | None = None
    in_switch_ceiling: InSwitchCeiling | None = None
    routing: str = "shortest"

    @property
    def group_size(self) -> int:
        return len(self.group)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (SI units)."""
        d = asdict(self)
        d["group"] = [str(g) for g in self.group]
        d["group_size"] = self.group_size
        d["bottleneck"] = [[str(u), str(v)] for u, v in self.bottleneck]
        d["cut"] = [str(x) for x in self.cut]
        if self.routing == "shortest":   # as before, where no other policy applies
            del d["routing"]
        for st in d["steps"]:
            st["bottleneck"] = [str(x) for x in st["bottleneck"]]
        for k in ("time", "algbw", "busbw"):
            if not np.isfinite(d[k]):
                d[k] = None
        return d


@dataclass(frozen=True)
class SweepResult:
    """Costs of one op on one group over an array of sizes (the fastest choice per size)."""

    op: str
    group: tuple[Hashable, ...]
    nbytes: np.ndarray
    time: np.ndarray
    algorithm: tuple[str, ...]
    protocol: tuple[str, ...]

    @property
    def algbw(self) -> np.ndarray:
        """Bytes/s."""
        return self.nbytes / self.time

    @property
    def busbw(self) -> np.ndarray:
        """Bytes/s."""
        return self.algbw * bus_factor(self.op, len(self.group))
