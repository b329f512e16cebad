"""The unit of every collective algorithm: a :class:`Step` of transfers that run together,
and :class:`NotApplicable`, raised when an algorithm cannot run on a group or fabric.

>>> Step("exchange", (("gpu0", "gpu1", 0.5),), repeat=3).repeat
3
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NotApplicable", "Step"]


class NotApplicable(Exception):
    """The algorithm cannot run this op on this group and fabric (the message says why)."""


@dataclass(frozen=True)
class Step:
    """Transfers that run together.

    Attributes
    ----------
    name : str
        What the step does (for the breakdown).
    transfers : tuple of (src, dst, fraction)
        Each moves ``fraction * n`` bytes from node ``src`` to node ``dst``.
    repeat : int
        How many identical steps in a row.
    stages : int
        Pipeline stages (latency paid ``stages`` times).
    reduce : float
        Bytes (per byte of ``n``) the busiest GPU reduces in this step.
    in_network : bool
        Whether the switches reduce (in-network constants apply).
    route_latency : float or None
        Seconds of route latency per stage when the transfers' own routes do not show it
        (in-network reduction: each transfer ends at a switch, but the data climbs the tree,
        is reduced in every switch on the way and comes back down); None: the longest route
        among the transfers.
    """

    name: str
    transfers: tuple
    repeat: int = 1
    stages: int = 1
    reduce: float = 0.0
    in_network: bool = False
    route_latency: float | None = None
