"""Which protocols a collective runs and at which sizes, and NCCL's Simple send/recv lines by
channel.

An algorithm's steps run with the protocols :func:`step_protocols` names: every
point-to-point protocol for a point-to-point algorithm (but LL128 for NCCL's send/recv),
the in-network constants alone for an in-network one, the point-to-point protocol of
highest bandwidth for one mixing both. Each runs at every size but under NCCL's send/recv,
which runs LL while a peer's bytes are at most a threshold times the channels a peer gets
and Simple above (:func:`p2p_size_range`; a peer across the scale-out network gets the
channels of NCCL's rule of the calibration's version, :func:`net_peer_channels`). NCCL's
Simple send-recv and direct all-to-all inside one NVLink domain go on more channels as a
peer's bytes grow, so their time under Simple is not one minimum of lines but a line per
channel count, each at its own sizes (:func:`channel_lines`); :func:`lines_within` keeps
of one share's lines those that set its time at its sizes.
:class:`~netmodel.collectives.cost.CompiledCollective` and the concurrent options
(:mod:`netmodel.collectives.concurrent_options`) cost them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.pipeline_fill import p2p_path_channels, p2p_simple_channels

__all__ = ["channel_lines", "lines_within", "net_peer_channels", "p2p_size_range",
           "step_protocols"]


#: The (op, algorithm) pairs whose Simple lines go by NCCL's channels, with the peers each
#: GPU sends to (:func:`~netmodel.collectives.pipeline_fill.p2p_simple_channels`: 1 the
#: send-recv's next GPU, 0 the all-to-all's every GPU).
_CHANNEL_PEERS = {("send-recv", "direct"): 1, ("all-to-all", "direct"): 0}


def channel_lines(op: str, algorithm: str, protocol: str, sizes: Sequence[int],
                  crosses: Any, cal: Calibration, rates: Any = 0.0
                  ) -> list[tuple[np.ndarray, ...]]:
    """``[(share, lo, hi)]``, arrays over collectives of ``sizes`` GPUs each: the lines of
    NCCL's Simple send-recv and direct all-to-all by their channels, the ``k``-th at
    ``share`` of the protocol's rate at sizes ``lo < n <= hi``
    (:func:`~netmodel.collectives.pipeline_fill.p2p_simple_channels`: the send-recv's one
    peer, the all-to-all's every GPU, on each collective's slowest path at ``rates``, as
    NCCL's topology sees it, :meth:`~netmodel.collectives.cost.CompiledCollective.path_rate`;
    a scalar for all, 0: unknown); a collective whose steps cross the scale-out network
    (``crosses``) keeps one line at every size, one with fewer lines repeats its last.
    ``[]`` for every other op, algorithm and protocol, or where no collective has lines by
    channel."""
    peers = _CHANNEL_PEERS.get((op, algorithm))
    if peers is None or protocol != "Simple":
        return []
    n = len(sizes)
    per = [[] if bool(c) else p2p_simple_channels(int(p), cal, peers, float(r))
           for p, c, r in zip(sizes, np.broadcast_to(crosses, (n,)),
                              np.broadcast_to(rates, (n,)), strict=True)]
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
    runs LL or Simple and never LL128 (NVIDIA/nccl src/enqueue.cc, addP2pToPlan: LL
    where the size allows it, else Simple), so LL128 is left out."""
    if not in_network:
        if send_recv:
            kept = tuple(p for p in cal.protocols if p.name != "LL128")
            return kept or cal.protocols
        return cal.protocols
    if not p2p:
        return (cal.in_network,)
    return (max(cal.protocols, key=lambda p: p.bandwidth_factor),)


def net_peer_channels(p: int, cal: Calibration, nic: tuple[float, int] | None = None,
                      scale: float = 1.0) -> int:
    """NCCL's send/recv channels a peer (``p2pnChannelsPerPeer``) when a peer of a group of
    ``p`` GPUs is across the scale-out network: ``nic`` is the slowest member's NICs (their
    line rate together and their number, :func:`~netmodel.collectives.step_cost.group_nic`;
    None: none), ``scale`` scales their rate. NVIDIA/nccl src/graph/paths.cc,
    ``ncclTopoGetNchannels`` (network branch) and ``ncclTopoComputeP2pChannels``, by the
    calibration's version:

    * NCCL 2.29 and later (``p2p_net_channel_bandwidth`` > 0): ``max(NICs, ceil(NIC GB/s /
      NCCL_P2P_PER_CHANNEL_NET_BW))`` (``p2p_channels_per_net_peer`` with no NIC), pow2Up,
      halved while that times ``ceil(p / p2p_peers_per_batch)`` exceeds the communicator's
      ``p2p_net_channels``;
    * NCCL 2.20 to 2.28 (``p2p_net_channel_bandwidth`` = 0, ``p2p_net_channels`` > 0):
      ``nChannelsMax`` = ``p2p_channels_per_net_peer`` (2) halved while it times ``p``
      exceeds 4 x ``p2p_net_channels``, then ``max(NICs, nChannelsMax)``, pow2Up, at most
      ``p2p_net_channels``;
    * else (NCCL 2.19 and older): ``p2p_channels_per_net_peer``.

    The NICs are all the GPU's links to the scale-out network; NCCL counts them only until
    their bandwidth covers the GPU's own PCIe link (``ncclTopoGetLocalNetCountByBw``), which
    the model does not hold.

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> cal = default_calibration()                 # NCCL 2.29: one 400G NIC
    >>> [net_peer_channels(p, cal, (50e9, 1)) for p in (16, 32, 64, 72)]
    [4, 4, 2, 1]
    >>> old = cal.with_(p2p_net_channel_bandwidth=0.0)   # NCCL 2.20-2.28: 2 x p > 4 x 16
    >>> [net_peer_channels(p, old, (50e9, 1)) for p in (16, 32, 33, 144)]
    [2, 2, 1, 1]
    """
    channels = cal.p2p_channels_per_net_peer
    total = cal.p2p_net_channels
    nics = nic[1] if nic is not None and nic[1] > 0 else 0
    per = cal.p2p_net_channel_bandwidth
    if per > 0:
        if nics:
            # NCCL divides whole GB/s by whole GB/s, rounding the quotient up
            gbps, per_gbps = int(nic[0] * scale / 1e9 + 1e-9), max(1, int(per / 1e9 + 1e-9))
            channels = max(nics, -(-gbps // per_gbps))
        channels = 1 << (channels - 1).bit_length()             # pow2Up
        if total > 0:
            batches = -(-p // cal.p2p_peers_per_batch)
            while channels * batches > total and channels > 1:
                channels //= 2
    elif total > 0:
        # NCCL halves a peer's channels while they, times the group's GPUs, exceed four
        # times its p2p channels: more operations on a channel would take its sync warp
        most = channels
        while most * p > total * 4 and most > 1:
            most //= 2
        channels = 1 << (max(nics, most) - 1).bit_length()      # pow2Up
        channels = min(channels, 1 << (total - 1).bit_length())  # at most p2pnChannels
    return channels


def p2p_size_range(protocol: str, op: str, p: int, scaleout: bool, rates: Iterable[float],
                   cal: Calibration, scale: float = 1.0,
                   nic: tuple[float, int] | None = None) -> tuple[float, float]:
    """``(lo, hi)``: the sizes ``lo < n <= hi`` at which NCCL's send/recv (an algorithm of
    :data:`~netmodel.collectives.cost.SEND_RECV`) of ``op`` among ``p`` GPUs runs
    ``protocol`` (the rule of :meth:`~netmodel.collectives.cost.CompiledCollective.size_range`,
    which reads
    ``scaleout``, whether a step crosses the scale-out network, and ``rates``, its steps'
    bottleneck rates as NCCL sees their paths
    (:func:`~netmodel.collectives.step_cost.link_path_rates`), off its steps;
    :func:`netmodel.collectives.concurrent_options.option_ranges` reads them off every
    group's). A peer across the scale-out network has no LL buffer by NCCL's default
    (``p2p_net_ll_buffers`` False: ``NCCL_ALLOC_P2P_NET_LL_BUFFERS=0``, src/transport/net.cc
    allocates a send/recv network connection Simple's shared buffer only, and
    src/enqueue.cc, ``addP2pToPlan``, keeps LL only where every channel's connection has an
    LL buffer), so a group whose steps cross it runs Simple at every size: LL ``(0, 0)``.
    With LL buffers there, a peer across the network gets :func:`net_peer_channels` (NCCL's
    rule of the calibration's version, by ``nic``, the slowest member's NICs: their line
    rate together and their number, :func:`~netmodel.collectives.step_cost.group_nic`).
    A calibration that makes every link scale-up (``scaleup_everywhere``: a scenario's
    ``links = "scale-up"``) gives every peer NVLink's channels, as on the scale-up network.

    NCCL 2.28 and older run LL while a peer's bytes are at most the threshold times its
    channels; 2.29 and later (``p2p_ll_per_channel``, the default 2.30) times the channels
    its Simple parts would take, one up to 64 KiB, so one threshold a peer
    (:func:`_ll_part_channels`).

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> new = default_calibration().for_gpu("H100-SXM")
    >>> p2p_size_range("LL", "all-to-all", 8, False, [450e9], new)   # 8 x 16 KiB
    (0.0, 131072.0)
    >>> cal = new.with_(p2p_ll_per_channel=False)   # NCCL 2.28's rule
    >>> p2p_size_range("LL", "all-to-all", 8, False, [450e9], cal)   # 8 x 32 x 16 KiB
    (0.0, 4194304.0)
    >>> p2p_size_range("LL", "all-to-all", 16, True, [], cal, nic=(50e9, 1))  # no LL buffer
    (0.0, 0.0)
    >>> p2p_size_range("Simple", "all-to-all", 16, True, [], cal, nic=(50e9, 1))
    (0.0, inf)
    >>> net = cal.with_(p2p_net_ll_buffers=True)   # NCCL_ALLOC_P2P_NET_LL_BUFFERS=1
    >>> p2p_size_range("Simple", "all-to-all", 8, True, [50e9], net)  # 8 x 2 x 16 KiB
    (262144.0, inf)
    >>> # one 400 Gb/s NIC: ceil(50 / 14) = 4 channels; 16 GPUs: 4 x ceil(16 / 8) <= 16
    >>> p2p_size_range("LL", "all-to-all", 16, True, [], net, nic=(50e9, 1))  # 16 x 4 x 16 KiB
    (0.0, 1048576.0)
    >>> p2p_size_range("LL", "all-to-all", 64, True, [], net, nic=(50e9, 1))  # halved: 2
    (0.0, 2097152.0)
    >>> up = cal.with_(scaleup_everywhere=True)   # 112.5 GB/s: 4 NVLink4, 8 channels
    >>> p2p_size_range("LL", "all-to-all", 8, True, [112.5e9], up)   # 8 x 8 x 16 KiB
    (0.0, 1048576.0)
    >>> p2p_size_range("LL", "all-to-all", 16, True, [], new.with_(p2p_net_ll_buffers=True),
    ...                nic=(50e9, 1))   # 2.29 on: 16 x 16 KiB
    (0.0, 262144.0)
    """
    thr = cal.p2p_ll_threshold
    if thr <= 0 or protocol not in ("LL", "Simple") \
            or not {"LL", "Simple"} <= {x.name for x in cal.protocols}:
        return 0.0, math.inf
    if scaleout and not cal.scaleup_everywhere:
        if not cal.p2p_net_ll_buffers:   # no LL buffer across the network: Simple only
            return (0.0, 0.0) if protocol == "LL" else (0.0, math.inf)
        channels = net_peer_channels(p, cal, nic, scale)
    else:
        rates = [r for r in rates if r > 0]
        channels = p2p_path_channels(cal, min(rates) * scale if rates else 0.0)
    if cal.p2p_ll_per_channel:
        channels = _ll_part_channels(p, channels, cal,
                                     scaleout and not cal.scaleup_everywhere)
    limit = thr * channels * (p if op == "all-to-all" else 1)
    return (0.0, limit) if protocol == "LL" else (limit, math.inf)


def _ll_part_channels(p: int, channels: int, cal: Calibration, scaleout: bool) -> int:
    """The channels whose threshold bounds a peer's LL bytes under NCCL 2.29's rule
    (``p2p_ll_per_channel``; src/enqueue.cc at commit ebd1e929, 2.29.2, addP2pToPlan: LL
    while ``bytes <= nChannels x P2pLLThreshold``, ``nChannels = min(nChannelsMin,
    divUp(bytes, minPartSize))``, ``minPartSize`` an eighth of ``p2pChunkSize`` on one
    node): a peer of up to ``minPartSize`` bytes goes on one channel, so LL holds up to
    one threshold while it is at most ``minPartSize`` (16 KiB under the NVLink chunk's
    64 KiB part), and up to ``nChannelsMin`` thresholds (``channels`` halved while they
    times ``p`` exceed ``p2p_channels_per_peer``, scheduleP2pTasksToPlan) where it is
    larger. A peer across the network (``scaleout``, LL buffers there only) takes one
    channel: NCCL's part there is half its network chunk, which the model does not hold.

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> cal = default_calibration().for_gpu("B200-HGX")    # 16 KiB <= 512 KiB / 8
    >>> _ll_part_channels(8, 32, cal, False)
    1
    >>> _ll_part_channels(8, 32, cal.with_(p2p_ll_threshold=65536.0), False)   # 32 -> 4
    4
    """
    part = cal.p2p_chunk / 8
    if scaleout or cal.p2p_ll_threshold < part or part <= 0:
        return 1
    while channels * p > cal.p2p_channels_per_peer and channels > 1:
        channels //= 2
    return channels
