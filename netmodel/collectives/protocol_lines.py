"""Which protocols a collective runs, and NCCL's Simple send/recv lines by channel.

An algorithm's steps run with the protocols :func:`step_protocols` names: every
point-to-point protocol for a point-to-point algorithm (but LL128 for NCCL's send/recv),
the in-network constants alone for an in-network one, the point-to-point protocol of
highest bandwidth for one mixing both. NCCL's Simple send-recv and direct all-to-all
inside one NVLink domain go on more channels as a peer's bytes grow, so their time under
Simple is not one minimum of lines but a line per channel count, each at its own sizes
(:func:`channel_lines`); :func:`lines_within` keeps of one share's lines those that set
its time at its sizes. :class:`~netmodel.collectives.cost.CompiledCollective` and the
concurrent options (:mod:`netmodel.collectives.concurrent_options`) cost them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.pipeline_fill import p2p_simple_channels

__all__ = ["channel_lines", "lines_within", "step_protocols"]


#: The (op, algorithm) pairs whose Simple lines go by NCCL's channels, with the peers each
#: GPU sends to (:func:`~netmodel.collectives.pipeline_fill.p2p_simple_channels`: 1 the
#: send-recv's next GPU, 0 the all-to-all's every GPU).
_CHANNEL_PEERS = {("send-recv", "direct"): 1, ("all-to-all", "direct"): 0}


def channel_lines(op: str, algorithm: str, protocol: str, sizes: Sequence[int],
                  crosses: Any, cal: Calibration) -> list[tuple[np.ndarray, ...]]:
    """``[(share, lo, hi)]``, arrays over collectives of ``sizes`` GPUs each: the lines of
    NCCL's Simple send-recv and direct all-to-all by their channels, the ``k``-th at
    ``share`` of the protocol's rate at sizes ``lo < n <= hi``
    (:func:`~netmodel.collectives.pipeline_fill.p2p_simple_channels`: the send-recv's one
    peer, the all-to-all's every GPU); a collective whose steps cross the scale-out network
    (``crosses``) keeps one line at every size, one with fewer lines repeats its last.
    ``[]`` for every other op, algorithm and protocol, or where no collective has lines by
    channel."""
    peers = _CHANNEL_PEERS.get((op, algorithm))
    if peers is None or protocol != "Simple":
        return []
    per = [[] if bool(c) else p2p_simple_channels(int(p), cal, peers)
           for p, c in zip(sizes, np.broadcast_to(crosses, (len(sizes),)), strict=True)]
    if not any(per):
        return []
    per = [x or [(1.0, 0.0, math.inf)] for x in per]
    return [tuple(np.array([x[min(k, len(x) - 1)][j] for x in per]) for j in range(3))
            for k in range(max(len(x) for x in per))]


def lines_within(lines: list[tuple[float, ...]], lo: float, hi: float
                 ) -> list[tuple[float, ...]]:
    """Of ``lines`` (``(a, b, ...)``, :func:`~netmodel.collectives.cost.combine`'s:
    concave, from the smallest sizes' line to the largest's), those that are the least at
    some size ``lo < n <= hi``: one share's lines by channel keep only the lines that set
    its time at its own sizes, so that a line's slope names it among every share's
    (:meth:`~netmodel.collectives.cost.CompiledCollective.size_range` with ``b``; a fill
    line of one share may have the slope of another share's steady line).

    >>> lines_within([(1.0, 3.0), (5.0, 1.0)], 0.0, 1.0)     # they cross at n = 2
    [(1.0, 3.0)]
    >>> lines_within([(1.0, 3.0), (5.0, 1.0)], 1.0, 4.0)
    [(1.0, 3.0), (5.0, 1.0)]
    >>> lines_within([(1.0, 3.0), (5.0, 1.0)], 2.0, math.inf)
    [(5.0, 1.0)]
    """
    if len(lines) < 2:
        return lines

    def meet(x: tuple[float, ...], y: tuple[float, ...]) -> float:
        """The size from which ``y`` (the flatter) is below ``x``."""
        if x[1] > y[1]:
            return (y[0] - x[0]) / (x[1] - y[1])
        return 0.0 if y[0] <= x[0] else math.inf

    keep = []
    for i, line in enumerate(lines):
        # line i is the least from where it meets line i-1 to where it meets line i+1
        start = 0.0 if i == 0 else meet(lines[i - 1], line)
        end = math.inf if i == len(lines) - 1 else meet(line, lines[i + 1])
        if max(start, lo) < min(end, hi):
            keep.append(line)
    return keep or lines[-1:]


def step_protocols(in_network: bool, p2p: bool, cal: Calibration,
                   send_recv: bool = False) -> tuple[Protocol, ...]:
    """The protocols an algorithm with in-network and/or point-to-point steps runs with:
    every point-to-point protocol for a point-to-point algorithm, the in-network constants
    alone for an in-network one, and for one mixing both the point-to-point protocol of
    highest bandwidth (NCCL runs its NVLS family with Simple only). ``send_recv``: the
    algorithm is NCCL's send/recv (:data:`~netmodel.collectives.cost.SEND_RECV`), which
    runs LL or Simple and never LL128 (NVIDIA/nccl src/enqueue.cc, addP2pToPlan:
    ``protocol = protoLL ? LL : SIMPLE``), so LL128 is left out."""
    if not in_network:
        if send_recv:
            kept = tuple(p for p in cal.protocols if p.name != "LL128")
            return kept or cal.protocols
        return cal.protocols
    if not p2p:
        return (cal.in_network,)
    return (max(cal.protocols, key=lambda p: p.bandwidth_factor),)
