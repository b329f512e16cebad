"""Alpha-beta costing of algorithm steps over routed link loads, and the result types.

A step of transfers (see :mod:`netmodel.collectives.algorithms`) is routed once: every transfer's
route (ECMP fractions over directed links) is scaled by its fraction of ``n`` and summed
into per-link loads. The step then takes, for a message of ``n`` bytes::

    stages * (alpha + L) + n * max_link(load_coefficient / achievable_bandwidth) / f

with ``L`` the longest route latency among its transfers, ``alpha`` and ``f`` the chosen
protocol's per-step latency and bandwidth factor, and ``achievable_bandwidth`` the link's
line rate times its side's efficiency (:class:`~netmodel.collectives.calibration.Calibration`). A
collective is the protocol's base latency plus the sum of its steps, so for each
(algorithm, protocol) its time is *linear* in ``n``: ``time = a + b * n``. Any array of
message sizes then costs one multiply-add.

busbw and algbw follow nccl-tests (doc/PERFORMANCE.md): ``algbw = n / time``, ``busbw =
algbw * factor`` with factor ``2(p-1)/p`` for all-reduce, ``(p-1)/p`` for reduce-scatter,
all-gather and all-to-all, and 1 for broadcast, reduce and send-recv.

>>> bus_factor("all-reduce", 8)
1.75
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from netmodel.collectives.algorithms import Step
from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.routing import NoPath as GroupCut
from netmodel.collectives.routing import Router

__all__ = ["CollectiveResult", "CompiledCollective", "GroupCut", "StepCost", "StepTiming",
           "SweepResult", "bus_factor", "compile_steps", "cost_step"]

# GroupCut (re-exported): no path joins two members of a group (a cut fabric).


def bus_factor(op: str, p: int) -> float:
    """nccl-tests' busbw / algbw ratio for ``op`` on ``p`` ranks."""
    if p <= 1:
        return 1.0
    if op == "all-reduce":
        return 2 * (p - 1) / p
    if op in ("reduce-scatter", "all-gather", "all-to-all"):
        return (p - 1) / p
    return 1.0


@dataclass(frozen=True)
class StepCost:
    """A step's size-independent structure.

    Attributes
    ----------
    name : str
    repeat, stages : int
    transfers : int
        Point-to-point transfers in the step.
    latency : float
        Longest route latency among the transfers (s).
    scaleout : bool
        Whether any transfer crosses the scale-out network.
    beta : float
        Seconds per byte of ``n`` at protocol factor 1: the bottleneck link's load
        coefficient over its achievable bandwidth.
    bottleneck : tuple
        The bottleneck directed link ``(u, v)`` (empty for a step without transfers).
    bottleneck_bandwidth : float
        Its line rate (bytes/s per direction).
    reduce : float
        Bytes reduced per byte of ``n`` on the busiest GPU.
    in_network : bool
    """

    name: str
    repeat: int
    stages: int
    transfers: int
    latency: float
    scaleout: bool
    beta: float
    bottleneck: tuple
    bottleneck_bandwidth: float
    reduce: float
    in_network: bool


def _link_efficiency(router: Router, links: np.ndarray, cal: Calibration) -> np.ndarray:
    return np.where(router.scaleout[links], cal.scaleout_efficiency, cal.scaleup_efficiency)


def cost_step(router: Router, step: Step, cal: Calibration, cache: dict | None = None) -> StepCost:
    """Route and cost one step (structure only; see :class:`StepCost`)."""
    key = step.transfers
    hit = None if cache is None else cache.get(key)
    if hit is None:
        links, coef, latency, scaleout = router.loads(step.transfers)
        if len(links):
            if len(links) > 4096:
                load = np.bincount(links, coef, minlength=router.n_links)
                uniq = np.flatnonzero(load)
                load = load[uniq]
            else:
                uniq, inv = np.unique(links, return_inverse=True)
                load = np.bincount(inv, coef)
            t = load / (router.bandwidth[uniq] * _link_efficiency(router, uniq, cal))
            j = int(np.argmax(t))
            hit = (float(t[j]), router.link_name(uniq[j]), float(router.bandwidth[uniq[j]]),
                   latency, scaleout)
        else:
            hit = (0.0, (), 0.0, 0.0, False)
        if cache is not None:
            cache[key] = hit
    beta, bneck, bbw, latency, scaleout = hit
    if step.route_latency is not None:
        latency = step.route_latency
    return StepCost(step.name, step.repeat, step.stages, len(step.transfers), latency,
                    scaleout, beta, bneck, bbw, step.reduce, step.in_network)


@dataclass(frozen=True)
class CompiledCollective:
    """An algorithm's steps for one op and group, costed independently of the size."""

    op: str
    algorithm: str
    group: tuple
    steps: tuple

    @property
    def in_network(self) -> bool:
        return any(s.in_network for s in self.steps)

    def protocols(self, cal: Calibration) -> tuple:
        """The protocols this algorithm can run with."""
        return (cal.in_network,) if self.in_network else cal.protocols

    def linear(self, protocol: Protocol, cal: Calibration) -> tuple[float, float]:
        """``(a, b)`` with ``time = a + b * n`` seconds under ``protocol``."""
        a = protocol.base_latency
        b = 0.0
        gamma = cal.reduction_rate
        for s in self.steps:
            a += s.repeat * s.stages * (protocol.step_latency(s.scaleout) + s.latency)
            b += s.repeat * s.beta / protocol.bandwidth_factor
            if gamma > 0:
                b += s.repeat * s.reduce / gamma
        return a, b

    def timings(self, protocol: Protocol, cal: Calibration, nbytes: float) -> tuple:
        """Per-step :class:`StepTiming` at one size."""
        out = []
        gamma = cal.reduction_rate
        for s in self.steps:
            lat = s.stages * (protocol.step_latency(s.scaleout) + s.latency)
            ser = nbytes * s.beta / protocol.bandwidth_factor
            red = nbytes * s.reduce / gamma if gamma > 0 else 0.0
            out.append(StepTiming(s.name, s.repeat, s.stages, s.transfers, lat, ser, red,
                                  s.repeat * (lat + ser + red), s.bottleneck,
                                  s.bottleneck_bandwidth, s.scaleout))
        return tuple(out)


def compile_steps(router: Router, op: str, algorithm: str, group, steps, cal: Calibration,
                  cache: dict | None = None) -> CompiledCollective:
    """Cost every step once (steps with identical transfers share one routing)."""
    return CompiledCollective(op, algorithm, tuple(group),
                              tuple(cost_step(router, s, cal, cache) for s in steps))


@dataclass(frozen=True)
class StepTiming:
    """One step of a costed collective at one size (seconds; per step, except ``time``)."""

    name: str
    repeat: int
    stages: int
    transfers: int
    latency: float
    serialization: float
    reduction: float
    time: float
    bottleneck: tuple
    bottleneck_bandwidth: float
    scaleout: bool


@dataclass(frozen=True)
class CollectiveResult:
    """The cost of one collective of one size on one group.

    ``time`` is seconds; ``algbw`` and ``busbw`` are bytes/s (nccl-tests definitions);
    ``bottleneck`` lists the directed links ``(u, v)`` that limit the costliest step(s);
    ``connected`` is False when a degraded fabric cut the group apart (then ``time`` is
    infinite and ``cut`` names a pair of members with no path between them).
    """

    op: str
    group: tuple
    nbytes: float
    time: float
    algbw: float
    busbw: float
    algorithm: str
    protocol: str
    base_latency: float
    steps: tuple
    bottleneck: tuple
    connected: bool = True
    cut: tuple = ()

    @property
    def group_size(self) -> int:
        return len(self.group)

    def as_dict(self) -> dict:
        """A JSON-ready dict (SI units)."""
        d = asdict(self)
        d["group"] = [str(g) for g in self.group]
        d["group_size"] = self.group_size
        d["bottleneck"] = [[str(u), str(v)] for u, v in self.bottleneck]
        d["cut"] = [str(x) for x in self.cut]
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
    group: tuple
    nbytes: np.ndarray
    time: np.ndarray
    algorithm: tuple
    protocol: tuple

    @property
    def algbw(self) -> np.ndarray:
        """Bytes/s."""
        return self.nbytes / self.time

    @property
    def busbw(self) -> np.ndarray:
        """Bytes/s."""
        return self.algbw * bus_factor(self.op, len(self.group))
