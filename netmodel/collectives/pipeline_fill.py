"""NCCL's pipeline structure in a collective's time: the fills and the per-channel caps.

:func:`~netmodel.collectives.cost.combine` adds to a collective's lines ``a + b n`` what NCCL's
pipelines cost beyond their steady rate, and raises ``b`` to what its channels allow:

* the fill of NCCL's Simple send/recv inside one NVLink domain (:func:`p2p_fills`: each
  channel's first chunk copied twice in turn), its Simple rate there by its channels
  (:func:`p2p_simple_channels`: a peer's channels, :func:`p2p_path_channels`, each copying
  at the generation's per-channel rate, :func:`p2p_channel_ratio`), and its LL rate there
  (:func:`p2p_ll_share`: the warps that send its lines, on the path's channels, each at
  the generation's per-channel rate);
* the channels of a pipeline group's slice (:func:`group_channels`: NVLS's own channel count
  inside one NVLink domain, else the calibration's);
* NCCL's per-channel busbw caps of its Tree and NVLSTree (:func:`tree_channel_rate`,
  :func:`channel_cap_rate`, :data:`TREE_TABLES`), summed per collective by
  :func:`tree_least`;
* what NCCL's tuner charges a ring across nodes (:func:`ring_net_mask`): its NVLink steps
  at least the network's post overhead (:func:`ring_net_overhead`), its LL busbw at most
  ``llMaxBw`` across nodes (:func:`ll_cap_rate`, :func:`ring_ll_least`); and a tree across
  nodes (:func:`tree_net_mask`): the same LL cap (:func:`tree_ll_least`), no post overhead.

Each rule names the NCCL source it follows; the constants are the calibration's
(``netmodel/data/collective_defaults.toml``), those of a ring across nodes the emulated
tuner's (``netmodel/data/collective_tuner_plugins.toml`` ``[nccl]``, :func:`net_rules`,
:func:`ll_cap_rate`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from netmodel.collectives.calibration import WARP_SIZE, Calibration, Protocol
from netmodel.collectives.steps import unique

__all__ = ["NCCL_PROTOCOLS", "TREE_TABLES", "channel_cap_rate", "group_channels", "has_tree_caps",
           "ll_cap_rate", "net_rules", "p2p_channel_ratio", "p2p_fills", "p2p_ll_share",
           "p2p_path_channels", "p2p_sending_channels", "p2p_simple_channels",
           "ring_ll_least", "ring_net_mask", "ring_net_overhead", "tree_channel_rate",
           "tree_least", "tree_ll_least", "tree_net_mask"]


def p2p_fills(t: dict[str, np.ndarray], plain: np.ndarray, scaleout: np.ndarray,
               bl: np.ndarray, protocol: Protocol, cal: Calibration) -> list:
    """The fills of NCCL's Simple send/recv all-to-all inside one NVLink domain (steps with
    ``p2p_ranks``, none crossing the scale-out network), as :func:`~netmodel.collectives.cost.combine` lists them:
    ``(coefficient, slice)``. A chunk (``p2p_nvlink_chunk``, NCCL_P2P_NVL_CHUNKSIZE) is
    copied by the sender into the peer's buffer and then by the peer out of it (NCCL
    src/enqueue.cc, addP2pToPlan: Simple's stepSize = comm->p2pChunkSize, one step a
    slice), so a channel's first chunk is copied twice in turn: the step's own seconds
    per byte again, over ``min(n, slice)``, each copy at the channel's share of the
    step's links. ``C`` channels run (:func:`p2p_sending_channels`: a peer's ``c``
    channels, 32 p2p channels in NCCL's logs of an NVSwitch node), each has moved a chunk
    once the GPU has sent ``C x chunk`` bytes: ``slice = C x chunk x p / (p - 1)`` of
    ``n``. 8 GPUs: c = 4, C = 28, slice 32 chunks (16 MiB); 64 GPUs: c = 1, C = 32.

    >>> import numpy as np
    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> cal = default_calibration()
    >>> simple = next(p for p in cal.protocols if p.name == "Simple")
    >>> t = {"p2p_ranks": np.array([[8.0]]), "p2p_peers": np.array([[0.0]])}
    >>> on, bl = np.array([[True]]), np.array([[2e-12]])
    >>> [(float(f[0]), float(s[0]) / 2**20) for f, s in p2p_fills(
    ...     t, on, ~on, bl, simple, cal)]
    [(2e-12, 16.0)]
    """
    chunk = cal.p2p_chunk
    if chunk <= 0 or protocol.name != "Simple":
        return []
    # the all-to-all's steps (p2p_peers 0): the slice above is its bytes a GPU sends
    ranks = np.where(plain & ~np.asarray(scaleout, dtype=bool) & (t["p2p_peers"] == 0),
                     t["p2p_ranks"], 0.0)
    out = []
    for p in unique(ranks[ranks > 1]).tolist():
        run = float(p2p_sending_channels(p, cal))
        out.append((np.where(ranks == p, bl, 0.0).sum(axis=1),
                    np.full(len(bl), run * chunk * p / (p - 1))))
    return out


def p2p_sending_channels(p: Any, cal: Calibration, peers: Any = 0, per_peer: Any = None
                         ) -> Any:
    """How many channels carry NCCL's grouped send/recv of ``p`` GPUs (array or scalar)
    inside one NVLink domain, each GPU sending to ``peers`` of them (0: every other GPU,
    the all-to-all's ``p - 1``; 1: send-recv's next GPU): a peer's bytes go through ``c``
    channels, NCCL's p2pnChannelsPerPeer halved while ``c x p`` exceeds its p2p channels
    (both ``p2p_channels_per_peer``; src/enqueue.cc, scheduleP2pTasksToPlan: ``while
    (nChannelsMin*nRanks > comm->p2pnChannels && nChannelsMin > 1) nChannelsMin /= 2``),
    so ``min(C, peers x c)`` channels run (:func:`p2p_fills`, :func:`p2p_ll_share`).
    ``per_peer``: a peer's channels before halving where the path sets them
    (:func:`p2p_path_channels`, array or scalar); None: ``p2p_channels_per_peer``.
    Under LL a peer's bytes stay on those ``c`` (addP2pToPlan: ``nChannels[dir] =
    std::min<int>(nChannelsMin, divUp(bytes[dir], minPartSize))``, doubled only while a
    part exceeds ``maxPartSize``, 32 LL steps of 64 KiB on one node, above any LL size);
    below ``c`` parts of ``minPartSize`` (an eighth of a step, 8 KiB) fewer run, each
    with one part: not modelled.

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> p2p_sending_channels(np.array([2, 4, 8, 64]), default_calibration()).tolist()
    [16.0, 24.0, 28.0, 32.0]
    >>> p2p_sending_channels(np.array([2, 4, 8, 64]), default_calibration(), 1).tolist()
    [16.0, 8.0, 4.0, 1.0]
    """
    p = np.asarray(p, dtype=float)
    total = cal.p2p_channels_per_peer
    if per_peer is None:
        per = np.full(p.shape, float(total))
    else:
        per = np.broadcast_to(np.asarray(per_peer, dtype=float),
                              np.broadcast_shapes(p.shape, np.shape(per_peer))).copy()
    while np.any(big := (per * p > total) & (per > 1)):
        per = np.where(big, per // 2, per)
    peers = np.asarray(peers, dtype=float)
    return np.minimum(total, np.where(peers > 0, peers, p - 1) * per)


def p2p_path_channels(cal: Calibration, path_rate: float = 0.0) -> int:
    """NCCL's send/recv channels a peer (``p2pnChannelsPerPeer``) inside one NVLink domain
    whose slowest path, as NCCL's topology sees it, runs at ``path_rate`` (bytes/s, line
    rate; 0: unknown): ``p2p_channels_per_peer`` (NCCL's p2p channels) and, with
    ``nvlink_bandwidth``, at most two per whole NVLink of the path, rounded up to a power
    of 2 (NVIDIA/nccl src/graph/paths.cc, ``ncclTopoGetNchannels``: twice the path's rate
    over one NVLink's, its whole part, at least 1; ``ncclTopoComputeP2pChannels``: the
    least over every peer, rounded up to a power of 2). An H100's 450 GB/s (18 NVLinks) keeps the 32; a Lite's 37.5 GB/s mesh link is
    one NVLink of 25 GB/s to NCCL (1.5, its whole part): 2.

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> cal = default_calibration().for_gpu("Lite")
    >>> [p2p_path_channels(cal, r) for r in (0.0, 450e9, 112.5e9, 37.5e9, 10e9)]
    [32, 32, 8, 2, 2]
    """
    most = int(cal.p2p_channels_per_peer)
    if path_rate > 0 and cal.nvlink_bandwidth > 0:
        links = max(1, int(path_rate / cal.nvlink_bandwidth + 1e-9))
        most = min(most, 1 << (2 * links - 1).bit_length())
    return most


def p2p_channel_ratio(cal: Calibration, path_rate: float = 0.0) -> float:
    """How many times the share of a path's rate that NCCL's tuner gives a send/recv
    channel (the path's rate over ``ring_channels``) one channel moves on a path of
    ``path_rate`` (bytes/s, line rate): ``flagship_bandwidth / path_rate`` where the path
    is slower than the generation's flagship GPU's NVLinks (``flagship_bandwidth``), else
    exactly 1. A channel is a CTA copying at a rate set by the GPU's SMs and clock, not by
    the link: on the flagship's NVLinks NCCL's ring runs ``ring_channels`` of them at the
    links' rate, so one copies ``flagship_bandwidth x scaleup_efficiency / ring_channels``
    (H100: 18 x 20.6 GB/s / 24 = 15.45 GB/s), and a GPU derived from it (a Lite: its SMs
    and clock, its generation) copies as fast over a slower path. A path at least the
    flagship's keeps NCCL's own rule (the ratio 1, ``1 + 1e-9`` of slack for rates summed
    over planes): every flagship GPU in its own NVLink domain costs as before. 1 where
    either rate is unknown (``Calibration.ideal``: no generation).

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> cal = default_calibration().for_gpu("Lite")          # Hopper: the H100's 450 GB/s
    >>> [p2p_channel_ratio(cal, r) for r in (0.0, 900e9, 450e9, 112.5e9, 37.5e9)]
    [1.0, 1.0, 1.0, 4.0, 12.0]
    """
    flagship = cal.flagship_bandwidth
    if path_rate > 0 and flagship > path_rate * (1 + 1e-9):
        return flagship / path_rate
    return 1.0


def p2p_simple_channels(p: int, cal: Calibration, peers: int = 1, path_rate: float = 0.0
                        ) -> list[tuple[float, float, float]]:
    """``[(share, lo, hi)]``: NCCL's Simple grouped send/recv among ``p`` GPUs inside one
    NVLink domain, each GPU sending to ``peers`` of them (1: send-recv's next GPU; 0: the
    all-to-all's every GPU, itself included), its slowest path at ``path_rate`` (bytes/s,
    line rate, as NCCL's topology sees it; 0: unknown), moves ``n`` bytes, ``lo < n <= hi``
    (``n`` the collective's size: a peer's bytes for the send-recv, ``p`` of them for the
    all-to-all), at ``share`` of its links' rate (the ring's Simple bus rate): on ``C``
    channels that send to another GPU, each at NCCL's tuner's per-channel rate (busBw =
    nChannels x bwIntra: the ring's rate over its ``ring_channels``) times
    :func:`p2p_channel_ratio` (a channel copies at the generation's flagship's
    per-channel rate, however slow the path), so ``share = min(1, C / ring_channels x
    ratio)``: ``C / ring_channels`` on every path at least the flagship's; ranges of one
    share merged, in increasing size. What rests on what: the channel's copy rate on the
    generation's ``ring_channels`` and ``flagship_bandwidth`` (its ``flagship_gpu``'s
    NVLink count times ``nvlink_bandwidth``) with ``scaleup_efficiency``, which cancels (the path's
    rate carries it too); ``C`` on ``p2p_channels_per_peer`` alone, not on the path: NCCL
    gives a peer at most two channels a whole NVLink of it (:func:`p2p_path_channels`, which
    sets the LL limit, :func:`~netmodel.collectives.protocol_lines.p2p_size_range`), 2 on
    a Lite's 37.5 GB/s mesh link and 8 behind its 112.5 GB/s port, which at 15.45 GB/s a
    channel fill the link (30.9 and 92.7 GB/s: the lines are the same with that limit);
    only a path of just under two NVLinks (Hopper: 37.5 to 50 GB/s; none shipped) would
    run slower under it.
    NCCL's rule (src/enqueue.cc, addP2pToPlan, one node: parts of ``minPartSize =
    stepSize/8`` to ``maxPartSize = stepSize*32``, Simple's ``stepSize = p2pChunkSize``,
    ``p2p_chunk``): a peer's ``nChannels = min(nChannelsMin, divUp(bytes, minPartSize))``,
    doubled while a part exceeds ``maxPartSize`` and ``nChannels <= nChannelsMax/2``
    (scheduleP2pTasksToPlan: ``nChannelsMax`` = p2pnChannelsPerPeer,
    ``p2p_channels_per_peer``; ``nChannelsMin`` a peer's channels,
    :func:`p2p_sending_channels` with one peer). The send-recv's one peer: ``C`` its
    channels. The all-to-all's ``p`` peers (one a round of the schedule, the GPU itself
    one of them) take ``p x nChannels`` of the ``p2pnChannels`` (``p2p_channels_per_peer``)
    and, while ``p x nChannels`` fits in them, no two share a channel (src/include/device.h
    and channel.h: a peer's part ``k`` on channel ``(base + k) mod p2pnChannels``, the
    round's ``base`` bit-reversed, or ``k`` bit-reversed in older sources; either way
    disjoint sets): each channel then runs one peer's work with all its warps, as the
    send-recv's do, and ``C = (p - 1) x nChannels``, the channels not copying to the GPU
    itself. Once the channels double past ``nChannelsMin`` (or where ``p x nChannelsMin``
    exceeds the p2p channels: more than 32 GPUs), a channel runs several peers' works,
    its warps split among them (src/device/sendrecv.h, ``nWarpPerWork = nWarps/nWorks``),
    at a rate the source does not give: the links' rate there (``share`` 1, the bound). A
    peer's bytes below ``nChannelsMin`` parts of ``minPartSize`` (LL's sizes, 192 KiB a
    peer on 8 GPUs) take fewer channels: not modelled for the all-to-all, as under LL
    (:func:`p2p_sending_channels`). ``[]`` where the calibration lacks ``p2p_chunk``,
    ``p2p_channels_per_peer`` or ``ring_channels``, or ``p`` < 2; for the all-to-all also
    where every size has share 1 (28 channels or more than the ring's: Hopper, Ampere).
    8 B200 (4 to 32 channels, 32 ring channels, chunks of 512 KiB), send-recv: 4 channels
    to 64 MiB, 8 to 128 MiB, 16 to 256 MiB, 32 above; all-to-all: 28 channels up to 512
    MiB (64 MiB a peer), the links' rate above. 2 Lites on a 37.5 GB/s mesh link (Hopper:
    chunks of 512 KiB, 24 ring channels, the H100's 450 GB/s, ratio 12): one channel to
    64 KiB at 12 / 24 = half the link, two or more above: all of it.

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> cal = default_calibration().for_gpu("B200-HGX")   # 512 KiB chunks, 4 to 32 channels
    >>> [(s, lo / 2**20, hi / 2**20) for s, lo, hi in p2p_simple_channels(8, cal)]
    [(0.03125, 0.0, 0.0625), (0.0625, 0.0625, 0.125), (0.09375, 0.125, 0.1875), (0.125, 0.1875, 64.0), (0.25, 64.0, 128.0), (0.5, 128.0, 256.0), (1.0, 256.0, inf)]
    >>> [(s, lo / 2**20, hi / 2**20) for s, lo, hi in p2p_simple_channels(8, cal, 0)]
    [(0.875, 0.0, 512.0), (1.0, 512.0, inf)]
    >>> lite = default_calibration().for_gpu("Lite")
    >>> [(s, lo / 2**10, hi / 2**10) for s, lo, hi in p2p_simple_channels(2, lite, 1, 37.5e9)]
    [(0.5, 0.0, 64.0), (1.0, 64.0, inf)]
    """
    chunk, most, ring = cal.p2p_chunk, int(cal.p2p_channels_per_peer), cal.ring_channels
    if chunk <= 0 or most < 1 or ring <= 0 or p < 2:
        return []
    ratio = p2p_channel_ratio(cal, path_rate)
    least = int(p2p_sending_channels(p, cal, 1))
    small, large = chunk / 8, chunk * 32
    rows = [(c, (c - 1) * small, c * small) for c in range(1, least)]
    c, lo = least, (least - 1) * small
    while c * 2 <= most:          # doubled while c <= nChannelsMax/2
        rows.append((c, lo, c * large))
        c, lo = c * 2, c * large
    rows.append((c, lo, math.inf))
    if peers <= 0:   # the all-to-all: p peers' channels, disjoint only up to nChannelsMin
        if p * least > most:
            return []
        rows = [(least * (p - 1), 0.0, least * large * p), (math.inf, least * large * p,
                                                             math.inf)]
    out: list[tuple[float, float, float]] = []
    for c, lo, hi in rows:
        share = min(1.0, c / ring * ratio)
        if out and out[-1][0] == share:
            out[-1] = (share, out[-1][1], hi)
        else:
            out.append((share, lo, hi))
    return [] if peers <= 0 and len(out) == 1 else out


def p2p_ll_share(p: Any, cal: Calibration, peers: Any = 0, path_rate: Any = 0.0) -> Any:
    """The fraction of the generation's LL rate at which NCCL's grouped send/recv of ``p``
    GPUs (array or scalar) inside one NVLink domain moves its LL lines, each GPU sending
    to ``peers`` of them (0: the all-to-all's every other GPU; 1: send-recv's next one):
    the warps that send them over the warps of an LL ring collective, whose rate the LL
    factor is (NCCL's ``llMaxBws``, a ring's LL busbw), at most 1; 1 where the calibration
    lacks a count (``p2p_threads``, ``ll_ring_threads``, ``ring_channels``) or ``p`` < 2.
    The all-to-all and the send-recv run the same kernel (RunWorkBatch<ncclFuncSendRecv>,
    a work a peer pair, its warps split alike); only their sending channels differ.

    A ring channel runs ``ll_ring_threads`` threads (NCCL_LL_MAX_NTHREADS 512), each taking a
    line in, storing it to the next GPU and to the output. A send/recv channel runs
    ``p2p_threads`` (NCCL_MAX_NTHREADS 640; src/enqueue.cc, scheduleP2pTasksToPlan:
    ``threadPerBlock = max(threadPerBlock, NCCL_MAX_NTHREADS)``) split between the send and
    the receive of its work (src/device/sendrecv.h: ``nRecvWarpPerWork = nWarpPerWork/2;
    nSendWarpPerWork = nWarpPerWork - nRecvWarpPerWork``): a line is stored remotely by a
    send thread and taken in by a receive thread, so the channel moves lines at its send
    warps' rate. A peer's bytes go through ``c`` channels (``p2p_channels_per_peer``
    halved while ``c x p`` exceeds it), one work a channel at a time
    (rounds of a batch land on distinct channels; rounds of different batches of
    ``p2p_peers_per_batch`` run one after another), so ``min(C, peers x c)`` channels send
    (:func:`p2p_sending_channels`).
    On a path of ``path_rate`` (bytes/s, line rate, as NCCL's topology sees it; array
    broadcast with ``p``, or scalar; 0: unknown) a peer gets the channels NCCL gives that
    path (:func:`p2p_path_channels`: two a whole NVLink) before the halving, and each
    channel sends its lines at its own rate, set by its warps and the GPU, not the link:
    the share is times :func:`p2p_channel_ratio` (1 on every path at least the
    generation's flagship's, so there a flagship GPU's share is as without a path), at
    most 1 (the path's LL rate). 2 Lites on a 37.5 GB/s mesh link (Hopper, the H100's 450
    GB/s): 2 channels, not 16, at ratio 12: 2 x 10 / (24 x 16) x 12 = 0.625 of its LL rate,
    where 16 x 10 / (24 x 16) = 0.417 counted NCCL's 32 channels of the H100's NVLinks at
    a channel's rate shrunk with the link.
    8 GPUs of 32 p2p channels on Blackwell (32 ring channels): the all-to-all 28 x 10 warps
    / (32 x 16) = 0.547; the send-recv 4 x 10 / (32 x 16) = 0.078 (of 282 GB/s: 22 GB/s,
    where nccl-tests' sendrecv_perf on 8 B200 moves 20.5 GB/s between 128 and 512 KiB).

    >>> from netmodel.collectives.calibration_files import default_calibration
    >>> cal = default_calibration().with_(p2p_threads=640, ll_ring_threads=512,
    ...                                   ring_channels=32)
    >>> [round(float(p2p_ll_share(p, cal)), 4) for p in (2, 4, 8, 64)]
    [0.3125, 0.4688, 0.5469, 0.625]
    >>> [round(float(p2p_ll_share(p, cal, 1)), 4) for p in (2, 4, 8, 64)]
    [0.3125, 0.1562, 0.0781, 0.0195]
    >>> lite = default_calibration().for_gpu("Lite")
    >>> [float(p2p_ll_share(2, lite, 1, r)) for r in (0.0, 450e9, 37.5e9)]
    [0.4166666666666667, 0.4166666666666667, 0.625]
    """
    p = np.asarray(p, dtype=float)
    if not (cal.p2p_threads and cal.ll_ring_threads and cal.ring_channels):
        return np.ones(np.broadcast_shapes(p.shape, np.shape(peers)))
    rate = np.asarray(path_rate, dtype=float)
    per_path = np.vectorize(lambda r: float(p2p_path_channels(cal, float(r))), otypes=[float])
    ratio = np.vectorize(lambda r: p2p_channel_ratio(cal, float(r)), otypes=[float])(rate)
    sending = p2p_sending_channels(p, cal, peers, per_path(rate))
    warps = cal.p2p_threads // WARP_SIZE
    send = warps - warps // 2
    ring = cal.ring_channels * (cal.ll_ring_threads // WARP_SIZE)
    return np.where(p >= 2, np.minimum(1.0, sending * send / ring * ratio), 1.0)


def group_channels(mem_g: np.ndarray, innet: Any, scaleout: np.ndarray,
                    cal: Calibration) -> Any:
    """The channels of each collective's pipeline group ``mem_g`` (its member steps,
    ``(G, S)``): ``cal.in_network_channels`` (NCCL's NVLS channels, by generation) where a
    member step reduces in the switch and none crosses the scale-out network (NVLS inside
    one NVLink domain: a server or an MNNVL clique), else ``cal.channels``. NCCL sets the
    count once per communicator (src/transport/nvls.cc, ``ncclNvlsInit``: in v2.28.3-1
    ``NVLS_NCHANNELS_SM90`` 16, ``NVLS_NCHANNELS_SM100_NVL`` 24 on one node or MNNVL
    clique, ``NVLS_NCHANNELS_SM100`` 32 across nodes; 32 on Blackwell one node or many
    in 2.25-2.26; 16, the ``NVLS_NCHANNELS`` parameter, in the 2.17-2.2x sources before
    Blackwell: collective_generations.toml)."""
    nvls = cal.in_network_channels
    if not nvls or nvls == cal.channels:
        return cal.channels
    one_domain = (mem_g & innet).any(axis=1) & ~(mem_g & scaleout).any(axis=1)
    return np.where(one_domain, nvls, cal.channels)


def _node_column(nodes: Any) -> np.ndarray:
    """The column of NCCL's per-channel cap tables for ``nodes`` scale-up domains: 0, 1 and
    2 for 1, 2 and 3 or more nodes."""
    return np.clip(np.asarray(nodes), 1, 3).astype(np.intp) - 1


def has_tree_caps(cal: Calibration) -> bool:
    """Whether ``cal`` holds any of NCCL's per-channel tree caps."""
    return bool(cal.tree_channel_bandwidth or cal.tree_ll128_channel_bandwidth
                or cal.nvls_tree_channel_bandwidth)


def tree_channel_rate(cal: Calibration, protocol: Protocol, nodes: Any, factor: Any
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """NCCL's cap on one tree channel's busbw (bytes/s) over ``nodes`` scale-up domains
    (1, 2, 3 or more pick the rate) under ``protocol`` at bandwidth ``factor``: ``(rate,
    table, f, ll128)``, ``rate = table x f``. ``perChMaxTreeBws x factor``, under LL128 at
    most ``perChMaxTreeLL128Bws`` (NCCL caps the tree's busbw, scales it by LL128's factor,
    caps it again), which then is ``table`` with ``f`` 1 and ``ll128`` True. Each table
    applies without the other, as in NCCL's tuner: with ``cal.tree_channel_bandwidth``
    empty, LL128's own cap is left, and rate 0 (none) under the other protocols."""
    col = _node_column(nodes)
    simple = cal.tree_channel_bandwidth
    table = np.asarray(simple, dtype=float)[col] if simple else \
        np.full(np.shape(col), np.inf)
    f = np.broadcast_to(np.asarray(factor, dtype=float), np.shape(table * factor))
    ll128 = cal.tree_ll128_channel_bandwidth
    lower = np.zeros(np.shape(table), dtype=bool)
    if protocol.name == "LL128" and ll128:
        own = np.asarray(ll128, dtype=float)[col]
        lower = own < table * f
        table, f = np.where(lower, own, table), np.where(lower, 1.0, f)
    if not simple:   # no Simple table: no cap but LL128's own
        table = np.where(lower, table, 0.0)
    return table * f, table, f, lower


#: NCCL's per-channel cap tables a step's ``tree_table`` names (0: its Tree, 1: its
#: NVLSTree); under LL128 a Tree channel may meet ``perChMaxTreeLL128Bws`` instead.
TREE_TABLES = ("perChMaxTreeBws", "perChMaxNVLSTreeBws")


def channel_cap_rate(cal: Calibration, protocol: Protocol, kind: Any, nodes: Any, factor: Any
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """NCCL's cap on one channel's busbw (bytes/s; 0: none) of a step whose ``tree_table``
    is ``kind`` over ``nodes`` scale-up domains, as :func:`tree_channel_rate` gives it
    for NCCL's Tree (``kind`` 0) and ``nvls_tree_channel_bandwidth`` for its NVLSTree
    (``kind`` 1: Simple only, which NCCL does not scale after the cap, so ``f`` is 1):
    ``(rate, table, f, ll128)``."""
    kind = np.asarray(kind)
    col = _node_column(nodes)
    shape = np.broadcast_shapes(kind.shape, col.shape, np.shape(factor))
    rate, table = np.zeros(shape), np.zeros(shape)
    f, ll128 = np.ones(shape), np.zeros(shape, dtype=bool)
    if (cal.tree_channel_bandwidth or cal.tree_ll128_channel_bandwidth) and np.any(kind == 0):
        r, tb, ff, own = tree_channel_rate(cal, protocol, nodes, factor)
        tree = kind == 0
        rate, table = np.where(tree, r, rate), np.where(tree, tb, table)
        f, ll128 = np.where(tree, ff, f), tree & own
    if cal.nvls_tree_channel_bandwidth and np.any(kind == 1):
        own = np.asarray(cal.nvls_tree_channel_bandwidth, dtype=float)[col]
        rate, table = np.where(kind == 1, own, rate), np.where(kind == 1, own, table)
    return rate, table, f, ll128


def tree_least(t: dict[str, np.ndarray], mem: np.ndarray, fac: float | np.ndarray,
                cal: Calibration, protocol: Protocol) -> np.ndarray | None:
    """Per row of ``t``: the seconds per byte of ``n`` NCCL's tree channel caps allow at
    least (:func:`~netmodel.collectives.cost.combine`), or None where no step of any row is so capped."""
    if not has_tree_caps(cal):
        return None
    ch = t["tree_channels"]
    tree = mem & (ch > 0)
    if not tree.any():
        return None
    rate = channel_cap_rate(cal, protocol, t["tree_table"], t["tree_nodes"], fac)[0]
    tree &= rate > 0
    if not tree.any():
        return None
    rate = np.where(tree, rate * ch, 1.0)
    return np.where(tree, t["repeat"] * t["tree_share"] / rate, 0.0).sum(axis=1)


#: NCCL's protocols, whose tuner rules across nodes apply (:func:`ring_net_overhead`).
NCCL_PROTOCOLS = ("LL", "LL128", "Simple")


@functools.lru_cache(maxsize=1)
def net_rules() -> tuple[float, float, int]:
    """NCCL's tuner constants of a ring or tree across nodes, from the ``[nccl]`` table of
    ``netmodel/data/collective_tuner_plugins.toml`` (the emulated tuner's,
    :class:`~netmodel.collectives.tuner_plugin.NcclTuner`, each sourced there):
    ``(net_overhead, net_overhead_simple, max_ranks_per_node)``: the
    network post overhead (s) a ring's NVLink step costs at least (src/graph/tuning.cc at
    b6475625, 2.20.3, and src/tuning/ring.cc at 1fc949c5, 2026: inter-node rings launch
    each step with the network's overhead at the least, ``getNetOverhead``: 1.0 us on
    Intel's x86 and any CPU but AMD's, 2.0 on AMD's; x 3 under Simple; a ring's only), and
    the most ranks a node the tuner's formulas are taken for (a larger scale-up domain, an
    NVL72 rack, is an MNNVL clique whose node count NCCL's tuner takes otherwise: left as
    the one-node constants). LL's busbw cap across nodes (``llMaxBw``, a ring's and a
    tree's) is the tuner's own lookup (:func:`ll_cap_rate`). Fabrics carry no host CPU and
    no published log of the reference rows names an AMD host: the values of every other
    CPU."""
    from netmodel.collectives.tuner_plugin import NCCL_TUNER, get_tuner

    sp = get_tuner(NCCL_TUNER).spec
    return (float(sp["net_overhead"]), float(sp["net_overhead_simple"]),
            int(sp["max_ranks_per_node"]))


def _across_nodes(nodes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Where ``ranks`` GPUs on ``nodes`` of NCCL's nodes are priced by NCCL's tuner across
    nodes: ``nodes`` > 1 and at most ``max_ranks_per_node`` ranks a node
    (:func:`net_rules`)."""
    per_node = net_rules()[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        return (nodes > 1) & (ranks <= per_node * nodes)


def ring_net_mask(t: dict[str, np.ndarray]) -> np.ndarray | None:
    """Which steps of ``t`` (``(G, S)``) are passes of NCCL's ring across nodes that NCCL's
    tuner prices as such (:func:`_across_nodes` of ``ring_nodes`` and ``repeat + 1``
    ranks: a ring pass is ``p - 1`` steps); None where none is."""
    nodes = t["ring_nodes"]
    if not np.any(nodes > 1):
        return None
    mask = _across_nodes(nodes, t["repeat"] + 1)
    return mask if mask.any() else None


def tree_net_mask(t: dict[str, np.ndarray]) -> np.ndarray | None:
    """Which steps of ``t`` (``(G, S)``) are NCCL's tree all-reduce across nodes that NCCL's
    tuner prices as such (:func:`_across_nodes` of ``tree_nodes`` and ``tree_ranks``);
    None where none is.

    >>> t = {"tree_ranks": np.array([[16, 144, 0]]), "tree_nodes": np.array([[2, 2, 2]])}
    >>> tree_net_mask(t).tolist()   # 8 a node; an NVL72 rack's 72; no tree
    [[True, False, False]]
    """
    ranks = t["tree_ranks"]
    if not np.any(ranks > 0):
        return None
    mask = (ranks > 0) & _across_nodes(t["tree_nodes"], ranks)
    return mask if mask.any() else None


def ll_cap_rate(nodes: Any) -> np.ndarray:
    """NCCL's LL busbw cap (bytes/s) across ``nodes`` >= 2 of its nodes: ``llMaxBw``
    (``ll_max_bw_net`` of the ``[nccl]`` table), 39.0 GB/s on 2 nodes, 20.4 on 3 or more,
    looked up where the emulated tuner looks it up (:meth:`~netmodel.collectives.tuner_plugin.NcclTuner.net_ll_cap`).

    >>> (ll_cap_rate(np.array([2, 3, 40])) / 1e9).tolist()
    [39.0, 20.4, 20.4]
    """
    from netmodel.collectives.tuner_plugin import NCCL_TUNER, get_tuner

    return get_tuner(NCCL_TUNER).net_ll_cap(nodes)


def ring_net_overhead(protocol: Protocol) -> float:
    """The seconds a step of NCCL's ring across nodes costs at least under ``protocol``
    inside a node (:func:`net_rules`: 1 us, 3 us under Simple); 0 under a protocol
    that is none of NCCL's (a textbook calibration's, :meth:`Calibration.ideal`).

    >>> [ring_net_overhead(Protocol(n, 1.0, 0.0, 0.0, 0.0)) * 1e6
    ...  for n in ("LL", "LL128", "Simple", "ideal")]
    [1.0, 1.0, 3.0, 0.0]
    """
    if protocol.name not in NCCL_PROTOCOLS:
        return 0.0
    over, simple, _ = net_rules()
    return over * (simple if protocol.name == "Simple" else 1.0)


def ring_ll_least(t: dict[str, np.ndarray], mem: np.ndarray, mask: np.ndarray | None,
                  protocol: Protocol) -> np.ndarray | None:
    """Per row of ``t``: the seconds per byte of ``n`` NCCL's LL busbw cap across nodes
    allows a ring at least (:func:`ll_cap_rate`; NCCL: ``busBw = std::min(llMaxBw, busBw *
    .5)``, algbw = busbw x nRanks / nsteps): each member pass of ``p - 1`` steps moves ``(p - 1) / p`` of ``n``
    through every GPU, ``repeat / (repeat + 1) / cap``; None under another protocol or
    where ``mask`` (:func:`ring_net_mask`) holds no member step.

    >>> t = {"repeat": np.array([[15.0, 15.0]]), "ring_nodes": np.array([[2.0, 2.0]])}
    >>> on = np.array([[True, True]])
    >>> b = ring_ll_least(t, on, on, Protocol("LL", 0.5, 0.0, 0.0, 0.0))
    >>> round(float(b[0]) * 39.0e9, 6)   # an all-reduce of 16: 2 x 15/16
    1.875
    """
    if protocol.name != "LL" or mask is None:
        return None
    sel = mask & mem
    if not sel.any():
        return None
    rep = t["repeat"]
    return np.where(sel, rep / (rep + 1) / ll_cap_rate(t["ring_nodes"]), 0.0).sum(axis=1)


def tree_ll_least(t: dict[str, np.ndarray], mem: np.ndarray, mask: np.ndarray | None,
                  protocol: Protocol) -> np.ndarray | None:
    """Per row of ``t``: the seconds per byte of ``n`` NCCL's LL busbw cap across nodes
    allows its tree all-reduce at least (:func:`ll_cap_rate`; NCCL: ``busBw =
    std::min(busBw * 1.0 / 3.8, llMaxBw)``, algbw = busbw x .5): the sum, over member steps
    in ``mask`` (:func:`tree_net_mask`), of ``repeat x tree_share / cap`` (the tree's one
    step: ``tree_share`` 2); None under another protocol or where ``mask`` holds no member
    step.

    >>> t = {"repeat": np.array([[1.0]]), "tree_share": np.array([[2.0]]),
    ...      "tree_nodes": np.array([[4.0]])}
    >>> on = np.array([[True]])
    >>> b = tree_ll_least(t, on, on, Protocol("LL", 0.5, 0.0, 0.0, 0.0))
    >>> round(float(b[0]) * 20.4e9, 6)   # 4 nodes: algbw 20.4 / 2 GB/s
    2.0
    """
    if protocol.name != "LL" or mask is None:
        return None
    sel = mask & mem
    if not sel.any():
        return None
    return np.where(sel, t["repeat"] * t["tree_share"] / ll_cap_rate(t["tree_nodes"]),
                    0.0).sum(axis=1)
