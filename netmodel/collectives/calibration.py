"""The collective model's parameters: link efficiencies, protocols and their latencies, the
pipeline's chunks and channels, and the constants that differ by GPU generation.

The defaults live in ``netmodel/data/collective_defaults.toml`` and, per GPU generation,
``netmodel/data/collective_generations.toml``, every number with its source: NCCL's own
tuning constants and buffer sizes (``src/graph/tuning.cc``, ``src/graph/topo.h``,
``src/include/device.h``, tabulated in ``../shared/reference/nccl_tuning_constants.csv``)
and published achieved link rates. They are taken once, not fitted to any measurement the
accuracy tests compare against.

How they enter the cost of a step (see :mod:`netmodel.collectives.cost`): a link of line
rate ``B`` moves ``B * efficiency * factor`` bytes/s of payload (``efficiency`` is
``scaleup_efficiency`` or ``scaleout_efficiency`` by the link's side of the fabric,
``factor`` the protocol's, or the in-network one for a step the switches reduce); every
latency payment of a step costs the protocol's ``step_latency_scaleup`` (or
``_scaleout`` for a payment on a route that crosses the scale-out network) plus the route
latency; a collective pays ``base_latency`` once. Pipelined steps stream the message in
slices of ``channels x chunk`` bytes (times the GPUs that each own a part of it), which
sets the fill and drain of the pipeline.

A calibration with ``generations`` (the shipped defaults) is *resolved* against a fabric
before use (:meth:`Calibration.resolve`): the generation of the fabric's GPUs supplies the
scale-up link efficiency, the in-switch reduction factor and ceiling and the LL protocol's
bandwidth factor (:class:`~netmodel.collectives.calibration_generations.Generation`, and the
NCCL releases the constants cover,
:class:`~netmodel.collectives.calibration_generations.Releases`). The files are read by
:mod:`netmodel.collectives.calibration_files`.

>>> from netmodel.collectives.calibration_files import default_calibration
>>> cal = default_calibration()
>>> [p.name for p in cal.protocols], cal.scaleup_efficiency
(['LL', 'LL128', 'Simple'], 0.824)
>>> a100 = cal.for_gpu("A100-SXM-80GB")
>>> a100.generation, a100.scaleup_efficiency, round(a100.protocol("LL").bandwidth_factor, 3)
('ampere', 0.8, 0.365)
>>> cal.for_gpu("B200-HGX").in_network.bandwidth_factor, cal.for_gpu("Lite").generation
(0.74, 'hopper')
>>> ideal = Calibration.ideal(alpha=1e-6)
>>> ideal.protocols[0].step_latency_scaleup, ideal.scaleup_efficiency, ideal.channels
(1e-06, 1.0, 1)
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, fields, replace
from operator import methodcaller
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compute.config_files import read_table
from compute.errors import UserError, chosen, known, lookalike
from compute.gpu_facts import named_fact, nvlink_count
from compute.hardware import get_gpu
from compute.validate import describe, flag, is_finite, is_whole
from netmodel.collectives.calibration_generations import (
    Generation,
    Releases,
    _values_at,
    parse_release,
    release_text,
)
from topologies.limits import PHYSICAL_MIN

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["DEFAULTS_PATH", "GENERATIONS_PATH", "NCCL_STEPS", "WARP_SIZE", "Calibration", "Protocol",
           "check_simple_buffer"]

DEFAULTS_PATH = Path(__file__).resolve().parent.parent / "data" / "collective_defaults.toml"
GENERATIONS_PATH = Path(__file__).resolve().parent.parent / "data" / \
    "collective_generations.toml"

_PROTOCOL_KEYS = ("bandwidth_factor", "base_latency", "step_latency_scaleup",
                  "step_latency_scaleout")


def _as_floats(obj: object) -> None:
    """Each checked float field of dataclass ``obj`` as Python's float (numpy's float32,
    an int, a Fraction given): a calibration's numbers reach every result's ``as_dict``,
    whose JSON refused numpy's ('Object of type float32 is not JSON serializable')."""
    for f in fields(obj):
        v = getattr(obj, f.name)
        if f.type in (float, "float") and type(v) is not float and is_finite(v):
            object.__setattr__(obj, f.name, float(v))


def _finite(where: str, key: str, v: object, unit: str, *, positive: bool = False) -> None:
    # an integer past a float's range is refused here, not where arithmetic overflows
    ok = is_finite(v) and (v > 0 if positive else v >= 0) \
        and not (is_whole(v) and v > sys.float_info.max)
    if not ok:
        raise UserError(f"{where}: {key} must be a finite number {'>' if positive else '>='} 0"
                        f"{' ' + unit if unit else ''}, got {describe(v)}")


#: The largest channel or peer count a calibration takes: a bound on what is given (an
#: assumption that keeps counts sane), not an NCCL constant.
MAX_COUNT = 1024
#: Threads of a warp (NVIDIA/nccl src/include/device.h, ``WARP_SIZE 32``): a channel's
#: threads (:attr:`Calibration.p2p_threads`, :attr:`Calibration.ll_ring_threads`) come in
#: whole warps.
WARP_SIZE = 32


def _count(name: str, v: object, least: int = 1) -> int:
    """``v``, a count: a whole number in ``least..MAX_COUNT`` given as an int (not a bool,
    not a float however whole); else UserError naming ``name``, the value and the range.
    The one check of every count of a calibration and a generations file.

    >>> _count("channels", 16), _count("p2p_net_channels", 0, least=0)
    (16, 0)
    >>> _count("channels", 2.0)
    Traceback (most recent call last):
    compute.errors.UserError: channels must be a whole number in 1..1024, got 2.0
    """
    # numpy's integers too, kept as Python's (np.int64(16) was refused as 'got 16')
    if not is_whole(v) or not least <= v <= MAX_COUNT:
        raise UserError(f"{name} must be a whole number in {least}..{MAX_COUNT}, got "
                        f"{describe(v)}")
    return int(v)


@dataclass(frozen=True)
class Protocol:
    """A way of moving data between GPUs, with its bandwidth/latency trade-off.

    Attributes
    ----------
    name : str
    bandwidth_factor : float
        Fraction (0, 1] of the achievable link rate delivered as payload.
    base_latency : float
        Seconds paid once per collective.
    step_latency_scaleup, step_latency_scaleout : float
        Seconds paid per latency payment of a step (alpha): on scale-up routes only, or on
        a route that crosses the scale-out network.
    chunk : float
        Bytes one channel moves per pipeline slice and GPU (NCCL's step size); 0: the
        pipeline has no fill (textbook pipelining in infinitely small slices).
    """

    name: str
    bandwidth_factor: float
    base_latency: float
    step_latency_scaleup: float
    step_latency_scaleout: float
    chunk: float = 0.0

    def __post_init__(self) -> None:
        if not (is_finite(self.bandwidth_factor) and 0 < self.bandwidth_factor <= 1):
            raise UserError(f"protocol {self.name!r}: bandwidth_factor must be in (0, 1], got "
                            f"{describe(self.bandwidth_factor)}")
        for key in _PROTOCOL_KEYS[1:]:
            _finite(f"protocol {self.name!r}", key, getattr(self, key), "s")
        _finite(f"protocol {self.name!r}", "chunk", self.chunk, "bytes")
        _as_floats(self)

    def step_latency(self, scaleout: bool) -> float:
        """Alpha of one latency payment (s)."""
        return self.step_latency_scaleout if scaleout else self.step_latency_scaleup




@dataclass(frozen=True)
class Calibration:
    """Every parameter of the collective model.

    Attributes
    ----------
    protocols : tuple of Protocol
        Point-to-point protocols the tuner may choose from.
    in_network : Protocol
        Constants of in-network reduction (NVLS / SHARP).
    scaleup_efficiency, scaleout_efficiency : float
        Fraction of line rate achievable on scale-up / scale-out links.
    reduction_rate : float
        Gamma: bytes/s a GPU reduces; 0 leaves reduction cost out.
    channels : int
        Channels (NCCL's rings and trees, each on its own SMs) that stream a pipelined step
        side by side: a pipeline slice is ``channels x chunk`` bytes per GPU that owns part
        of the message.
    in_network_channels : int
        Channels of an in-switch reduction inside one scale-up domain (NCCL's NVLS
        channels, ``NVLS_NCHANNELS``, by GPU generation): its pipeline slice is ``heads x
        in_network_channels x chunk`` bytes; 0: ``channels``. Phases that cross the
        scale-out network (NVLSTree, NVLS with SHARP) keep ``channels``.
    in_network_ceiling : float
        In-switch all-reduce busbw cannot exceed this multiple of a GPU's scale-up line
        rate; 0: no ceiling.
    simple_buffer : float
        Bytes of a channel's Simple buffer to one peer (``NCCL_BUFFSIZE``, NCCL's
        ``buffSizes[NCCL_PROTO_SIMPLE]``, 4 MiB by default): the Simple protocol's chunk is
        ``simple_buffer // NCCL_STEPS`` (NCCL's ``stepSize``) and Simple send/recv's
        ``p2p_nvlink_chunk`` at most that; LL, LL128 and in-network chunks have their own
        buffers and do not change. 0: the Simple chunk as given (no buffer).
    p2p_ll_threshold : float
        NCCL's send/recv (grouped ncclSend/ncclRecv: all-to-all, send-recv) runs LL while
        one peer's bytes are at most this many bytes times the channels a peer may use, and
        Simple above: chosen by size, not by speed (``NCCL_P2P_LL_THRESHOLD``); 0: no
        such rule (every protocol at every size, the fastest taken).
    p2p_channels_per_peer, p2p_channels_per_net_peer : int
        Channels one peer's send/recv may use (NCCL's ``p2pnChannelsPerPeer``, the LL
        limit above is this many times ``p2p_ll_threshold``): when every peer is on the
        scale-up network at most ``p2p_channels_per_peer`` (NCCL's p2p channels, a power of
        2) and, with ``nvlink_bandwidth``, two per NVLink of the path (its line rate over
        ``nvlink_bandwidth``) rounded up to a power of 2; when some peer is across the
        scale-out network (unless ``scaleup_everywhere``) NCCL's network rule of the
        version below (:func:`netmodel.collectives.protocol_lines.net_peer_channels`),
        which starts from ``p2p_channels_per_net_peer`` (NCCL's 2).
    p2p_net_channel_bandwidth : float
        NCCL 2.29 and later (``NCCL_P2P_PER_CHANNEL_NET_BW``, bytes/s): a peer across the
        network gets ``max(NICs, ceil(NIC bandwidth / this))`` channels (the GPU's NICs to
        the scale-out network, their line rates together), rounded up to a power of 2 and
        halved while that times ``ceil(GPUs / p2p_peers_per_batch)`` exceeds
        ``p2p_net_channels``; 0: NCCL 2.20 to 2.28, ``p2p_channels_per_net_peer`` halved
        while it times the GPUs exceeds 4 x ``p2p_net_channels``, then at least one a NIC
        (with ``p2p_net_channels`` 0 too: the fixed ``p2p_channels_per_net_peer`` of NCCL
        2.19 and older).
    p2p_net_channels : int
        NCCL's p2p channels (``p2pnChannels``) of a communicator across nodes (0: no halving);
        a file's ``[p2p]`` table without ``net_channels`` takes ``channels`` rounded up to a
        power of 2, as NCCL derives them from its ring and tree channels.
    p2p_peers_per_batch : int
        Peers of one channel's work batch (``NCCL_MAX_DEV_WORK_P2P_PER_BATCH``).
    p2p_nvlink_chunk : float
        Bytes of one step of NCCL's Simple send/recv inside one NVLink domain
        (``NCCL_P2P_NVL_CHUNKSIZE``, ``p2pChunkSize``): the sender copies a chunk into the
        peer's buffer, the peer copies it out, so a channel's first chunk is copied twice in
        turn (:func:`~netmodel.collectives.cost.combine`, the fill of a step with
        ``p2p_ranks``); 0: no such fill.
    p2p_threads, ll_ring_threads : int
        Threads of a channel of NCCL's send/recv kernel (``NCCL_MAX_NTHREADS``; a send
        gets half its warps beside a receive) and of an LL ring channel
        (``NCCL_LL_MAX_NTHREADS``): send/recv under LL inside one NVLink domain moves its
        lines at the generation's LL rate times the send warps it runs over the warps of
        the ``ring_channels`` LL ring channels that rate is NCCL's for
        (:func:`~netmodel.collectives.pipeline_fill.p2p_ll_share`); 0 (either, or
        ``ring_channels``): at the LL rate itself.
    ring_channels : int
        NCCL's ring channels on one node, from the generation (0: unknown).
    p2p_net_ll_buffers : bool
        Whether NCCL's send/recv connections across the scale-out network have LL buffers
        (``NCCL_ALLOC_P2P_NET_LL_BUFFERS``, 0 by default): without them a peer across the
        network runs Simple at every size, whatever ``p2p_ll_threshold`` allows
        (:func:`~netmodel.collectives.protocol_lines.p2p_size_range`); True: LL there too,
        up to the threshold, as on the scale-up network.
    p2p_ll_per_channel : bool
        NCCL 2.29's send/recv LL rule (True; src/enqueue.cc, addP2pToPlan, "based on payload
        per channel"): LL while a peer's bytes are at most the threshold times the channels
        its Simple parts would take, one up to an eighth of ``p2p_chunk``, so one threshold
        (16 KiB) a peer; False (NCCL 2.28 and older): the threshold times all the channels
        a peer may use (:func:`~netmodel.collectives.protocol_lines.p2p_size_range`).
    pxn : bool
        NCCL's PXN for send/recv (on by default: ``NCCL_PXN_DISABLE=0``,
        ``NCCL_P2P_PXN_LEVEL=2``): a GPU sending to a peer in another server sends through
        the NIC of its own server's GPU on the peer's rail, over NVLink to it first
        (:meth:`~netmodel.collectives.route_pxn.PxnRoutes.pxn_proxies`); False: through
        its own NIC (``NCCL_PXN_DISABLE=1``).
    nvlink_bandwidth : float
        Line rate of one NVLink (bytes/s a direction), from the generation; 0: unknown.
    flagship_bandwidth : float
        The generation's flagship GPU's NVLinks together (its ``flagship_gpu``; bytes/s a
        direction, line rate: its NVLink count, :func:`compute.gpu_facts.nvlink_count`,
        times ``nvlink_bandwidth``; H100 18 x 25 GB/s, B200 18 x 50, A100 12 x 25), set by
        :meth:`for_gpu`, never
        read from a file: the path NCCL's ring of that GPU runs its ``ring_channels`` on, so
        that path's rate over them is what one channel copies
        (:func:`~netmodel.collectives.pipeline_fill.p2p_simple_channels`); 0: unknown.
    tree_channel_bandwidth : tuple of float
        NCCL's cap on one tree channel's busbw (``perChMaxTreeBws``, bytes/s) on 1, 2 and 3
        or more nodes (scale-up domains), from the generation; empty: none (under LL128,
        ``tree_ll128_channel_bandwidth`` still caps a channel). NCCL's tree all-reduce
        (the model's ``tree``) has a channel per NIC rail across domains
        (:attr:`~netmodel.collectives.steps.Step.tree_channels`), and NCCL counts a tree's
        algbw as half its busbw, so its algbw is at most ``rails x cap / 2`` (the steps'
        phases together, :func:`~netmodel.collectives.cost.combine`), a bound the links'
        bandwidth does not move.
    tree_ll128_channel_bandwidth : tuple of float
        NCCL's cap on one LL128 tree channel's busbw (``perChMaxTreeLL128Bws``, bytes/s) on
        1, 2 and 3 or more nodes, from the generation; empty: none. Under LL128 a tree
        channel runs at most the lesser of it and ``tree_channel_bandwidth`` times LL128's
        bandwidth factor (NCCL caps the tree's busbw, scales it by LL128's factor, then caps
        it again at channels x this rate).
    nvls_tree_channel_bandwidth : tuple of float
        NCCL's cap on one NVLSTree channel's busbw (``perChMaxNVLSTreeBws``, bytes/s) on 1,
        2 and 3 or more nodes, from the generation; empty, or 0 for a node count: none.
        NCCL's NVLSTree (the model's ``in-network-tree``) runs a channel per NVLS head
        (:attr:`~netmodel.collectives.steps.Step.tree_channels`) and counts its busbw as a
        ring's (algbw = busbw x n / (2 (n - 1)) on ``n`` GPUs), so its algbw is at most
        ``heads x cap x n / (2 (n - 1))``, a bound the links' bandwidth does not move.
    ring_ll128_channel_bandwidth : tuple of float
        NCCL's cap on one LL128 ring channel's busbw (``perChMaxRingLL128Bws``, bytes/s) on
        1, 2 and 3 or more nodes, from the generation; empty: none. Read by the tuner
        ``nccl`` alone (:meth:`~netmodel.collectives.model.FabricCostModel.nccl_graph`:
        NCCL's ring LL128 busbw is at most its ring channels x this); the model's own ring
        is not capped by it.
    ll128_enabled : bool
        NCCL's tuner enables LL128 by default on the GPU this calibration was resolved for
        (False where the generation's ``ll128_off_capabilities`` in :attr:`nccl_release`
        lists the GPU's compute capability, its entry's or kept from the GPU it derives
        from). Read by the tuner ``nccl`` alone: it then chooses
        among LL and Simple; the model's own protocols are not changed.
    generations : tuple of Generation
        Per-generation constants (empty: the calibration is used as it is).
    default_generation : str
        The generation of a GPU type whose lineage names none (no GPU entry of it or of
        the GPUs it derives from has a ``collective_generation``).
    generation : str
        The generation this calibration was resolved for ("" if none).
    nccl_release : str
        The NCCL release the model emulates (``MAJOR.MINOR``, ``NCCL_VERSION``'s; a run's
        ``netmodel collective --nccl-release``): on resolving (:meth:`for_gpu`) the
        constants that differ by release are taken from the generations file for it (its
        ``[release]`` table and each generation's ``until`` entries); refused unless in
        :attr:`releases`' range (:meth:`Releases.check`), and on a calibration without
        releases. The shipped defaults: the newest release whose constants the file holds;
        "" or None: the newest, spelt as it (a calibration without releases: "", the
        constants as given). A release before a generation's ``since`` (the first NCCL
        release that supports its GPUs) is refused when resolving for its GPUs.
    releases : Releases or None
        The releases the generations file covers (None: none, constants as given).
    scaleup_everywhere : bool
        Every link is a scale-up (NVLink) link to NCCL, the network switches too (a
        scenario's ``links = "scale-up"``, which also gives every link the scale-up
        efficiency and NVLink step latencies:
        :func:`netmodel.study.scenario_fabric.scenario_calibration`): send/recv gives a peer
        across them NVLink's channels (two per NVLink of the path), not
        ``p2p_channels_per_net_peer``.
    """

    protocols: tuple[Protocol, ...]
    in_network: Protocol
    scaleup_efficiency: float = 1.0
    scaleout_efficiency: float = 1.0
    reduction_rate: float = 0.0
    channels: int = 1
    in_network_channels: int = 0
    in_network_ceiling: float = 0.0
    simple_buffer: float = 0.0
    p2p_ll_threshold: float = 0.0
    p2p_channels_per_peer: int = 1
    p2p_channels_per_net_peer: int = 1
    p2p_net_channel_bandwidth: float = 0.0
    p2p_net_channels: int = 0
    p2p_peers_per_batch: int = 8
    p2p_nvlink_chunk: float = 0.0
    p2p_threads: int = 0
    ll_ring_threads: int = 0
    ring_channels: int = 0
    # the shipped collective_defaults.toml's [p2p] rules (a calibration file leaving one out
    # takes the shipped one: calibration_files.shipped_p2p_flags; a test holds them equal)
    p2p_net_ll_buffers: bool = False
    p2p_ll_per_channel: bool = True
    pxn: bool = True
    nvlink_bandwidth: float = 0.0
    flagship_bandwidth: float = 0.0
    tree_channel_bandwidth: tuple[float, ...] = ()
    tree_ll128_channel_bandwidth: tuple[float, ...] = ()
    nvls_tree_channel_bandwidth: tuple[float, ...] = ()
    ring_ll128_channel_bandwidth: tuple[float, ...] = ()
    ll128_enabled: bool = True
    generations: tuple[Generation, ...] = ()
    default_generation: str = ""
    generation: str = ""
    nccl_release: str = ""
    releases: Releases | None = None
    scaleup_everywhere: bool = False

    def __post_init__(self) -> None:
        if not self.protocols:
            raise UserError("a calibration needs at least one protocol")
        for key in ("scaleup_efficiency", "scaleout_efficiency"):
            v = getattr(self, key)
            if not (is_finite(v) and 0 < v <= 1):
                raise UserError(f"{key} must be in (0, 1], got {describe(v)}")
        _finite("calibration", "reduction_rate", self.reduction_rate, "bytes/s")
        _finite("calibration", "in_network_ceiling", self.in_network_ceiling, "")
        _finite("calibration", "p2p_ll_threshold", self.p2p_ll_threshold, "bytes")
        _finite("calibration", "nvlink_bandwidth", self.nvlink_bandwidth, "bytes/s")
        _finite("calibration", "p2p_nvlink_chunk", self.p2p_nvlink_chunk, "bytes")
        _finite("calibration", "p2p_net_channel_bandwidth", self.p2p_net_channel_bandwidth,
                "bytes/s")
        for key in CHANNEL_CAP_KEYS:   # each a tuple of floats, checked
            object.__setattr__(self, key, _tree_caps("calibration", key, getattr(self, key),
                                                     allow_empty=True))
        for key, least in (("channels", 1), ("in_network_channels", 0),
                           ("p2p_channels_per_peer", 1),
                           ("p2p_channels_per_net_peer", 1), ("p2p_net_channels", 0),
                           ("p2p_peers_per_batch", 1), ("p2p_threads", 0),
                           ("ll_ring_threads", 0), ("ring_channels", 0)):
            object.__setattr__(self, key, _count(key, getattr(self, key), least))
        for key in ("p2p_threads", "ll_ring_threads"):   # 0: not modelled
            if getattr(self, key) % WARP_SIZE:
                raise UserError(f"{key} must be 0 or a whole number of warps (a multiple of "
                                f"{WARP_SIZE}) in 0..{MAX_COUNT}, got {getattr(self, key)}")
        for f in fields(self):   # every bool field; numpy's bool kept as Python's
            if f.type in (bool, "bool"):
                object.__setattr__(self, f.name, flag("", f.name, getattr(self, f.name)))
        _as_floats(self)
        if self.simple_buffer != 0:
            check_simple_buffer(self.simple_buffer)
            object.__setattr__(self, "simple_buffer", float(self.simple_buffer))
            step = self.simple_step
            object.__setattr__(self, "protocols", tuple(
                replace(p, chunk=step) if p.name == "Simple" else p for p in self.protocols))
        if self.nccl_release is None or self.nccl_release == "":
            # None as "" (the newest), spelt as the newest where there are releases: one
            # spelling a release, so network_key and the caches keyed by the calibration
            # take a default and the newest named as one
            object.__setattr__(self, "nccl_release", "" if self.releases is None
                               else release_text(self.releases.newest))
        elif self.releases is None:
            raise UserError(f"nccl_release {describe(self.nccl_release)}: this calibration "
                            f"holds no constants by NCCL release (a generations file's "
                            f"[release] table); the shipped defaults do")
        else:
            r = self.releases.check(self.nccl_release)
            object.__setattr__(self, "nccl_release", release_text(r))
        names = [g.name for g in self.generations]
        if self.generations and self.default_generation not in names:
            default = chosen(self.default_generation, names)   # blanks at either end dropped
            if default is None:
                raise UserError(f"default generation {describe(self.default_generation)} is "
                                f"not one of the generations"
                                f"{lookalike(self.default_generation, names)}; known: "
                                f"{known(names)}")
            object.__setattr__(self, "default_generation", default)

    @classmethod
    def ideal(cls, alpha: float = 0.0, *, in_network_alpha: float | None = None,
              reduction_rate: float = 0.0) -> Calibration:
        """Textbook Hockney parameters: one protocol at full line rate, ``alpha`` seconds per
        step, no start-up latency, no pipeline fill (the model then equals the textbook
        formulas)."""
        a = float(alpha)
        b = a if in_network_alpha is None else float(in_network_alpha)
        return cls(protocols=(Protocol("ideal", 1.0, 0.0, a, a),),
                   in_network=Protocol("in-network", 1.0, 0.0, b, b),
                   reduction_rate=reduction_rate)

    def with_(self, **changes: Any) -> Calibration:
        """A copy with some fields changed."""
        return replace(self, **changes)

    @property
    def simple_step(self) -> float:
        """Bytes of one step of the Simple buffer (NCCL's ``stepSize``: ``simple_buffer //
        NCCL_STEPS``); 0 without a buffer."""
        return float(int(self.simple_buffer) // NCCL_STEPS)

    @property
    def p2p_chunk(self) -> float:
        """Bytes of one step of Simple send/recv in one NVLink domain: ``p2p_nvlink_chunk``,
        at most the Simple buffer's step (:attr:`simple_step`; NCCL's computeBuffSizes:
        "Make sure P2P chunksize is not larger than coll chunksize")."""
        if self.simple_buffer:
            return min(self.p2p_nvlink_chunk, self.simple_step)
        return self.p2p_nvlink_chunk

    @property
    def release(self) -> tuple[int, int] | None:
        """:attr:`nccl_release` as ``(major, minor)``; None where it is the newest of
        :attr:`releases` (the files' own values) or not given."""
        if not self.nccl_release:
            return None
        r = parse_release(self.nccl_release)
        return None if self.releases is not None and r == self.releases.newest else r

    def protocol(self, name: str) -> Protocol:
        """The protocol called ``name``."""
        for p in self.protocols:
            if p.name == name:
                return p
        names = [p.name for p in self.protocols]
        typed, name = name, chosen(name, names)   # blanks at either end dropped
        if name is None:
            raise UserError(f"unknown protocol {describe(typed)}{lookalike(typed, names)}; "
                            f"known: {known(names)}")
        return self.protocol(name)

    # ------------------------------------------------------------------ generations
    def generation_of(self, gpu: str, graph: nx.Graph | None = None) -> Generation | None:
        """The generation GPU type ``gpu`` belongs to: the one its entry names
        (``collective_generation``), else the one of the GPU it was derived from (a GPU
        file's ``derive_from``, the Lite family's H100: the same NVLink and NVSwitch), and
        so on (:func:`compute.gpu_facts.named_fact`; on a fabric ``graph``, as the graph
        records its GPUs' facts, :func:`topologies.schema_reads.gpu_named_fact`), else the
        default one; None without generations. A name none of :attr:`generations` has is
        refused (UserError naming the GPU and the generations there are)."""
        return self._generation_match(gpu, graph)[0]

    def ll128_off(self, gpu: str, graph: nx.Graph | None = None) -> bool:
        """Whether NCCL's tuner leaves LL128 off on GPU type ``gpu`` at this calibration's
        release: its generation's ``ll128_off_capabilities`` lists its compute capability
        (its entry's ``compute_capability``, or kept from the GPU it derives from;
        :meth:`for_gpu` sets ``ll128_enabled`` from it). Two GPUs of one generation can
        differ here (B200's 10.0 and B300's 10.3 through NCCL 2.27), so a cache of costs
        keyed by the generation keys this too
        (:func:`netmodel.study.scenario_fabric.network_key`)."""
        gen, capability = self._generation_match(gpu, graph)
        return gen is not None and capability in (gen.at(self.release).ll128_off_capabilities
                                                  or ())

    def _generation_match(self, gpu: str, graph: nx.Graph | None = None
                          ) -> tuple[Generation | None, str | None]:
        """``(generation, compute capability)``: :meth:`generation_of` and the GPU's compute
        capability as its lineage names it (None where none does, or without
        generations)."""
        if not self.generations:
            return None, None
        if graph is not None:
            from topologies.schema_reads import gpu_named_fact

            fact = functools.partial(gpu_named_fact, graph)
        else:
            fact = named_fact
        named = fact(gpu, "collective_generation")
        if named is None:
            gen = next(g for g in self.generations if g.name == self.default_generation)
        else:
            value, where = named
            gen = next((g for g in self.generations if g.name == value), None)
            if gen is None:
                names = [g.name for g in self.generations]
                whose = f"GPU {gpu!r}" + ("" if where == gpu else
                                          f" (derived from {where!r}, whose entry names it)")
                raise UserError(f"{whose}: collective_generation {describe(value)} is not a "
                                f"generation of the collective model{lookalike(value, names)}; "
                                f"known: {known(names)}")
        capability = fact(gpu, "compute_capability")
        return gen, None if capability is None else capability[0]

    def for_gpu(self, gpu: str, graph: nx.Graph | None = None) -> Calibration:
        """This calibration with the constants of ``gpu``'s generation applied (itself when
        it has no generations); ``graph``: the fabric whose GPU it is (its derivations)."""
        gen, capability = self._generation_match(gpu, graph)
        if gen is None:
            return self
        release = self.release
        if gen.since is not None and self.releases is not None and \
                (release or self.releases.newest) < gen.since:
            raise UserError(f"nccl_release {self.nccl_release!r}: NCCL supports {gen.name} "
                            f"GPUs ({gpu}) from {release_text(gen.since)} on; the data file "
                            f"holds no {gen.name} constants for an older release")
        gen = gen.at(release)
        changes: dict[str, Any] = {"generations": (), "default_generation": "",
                                   "generation": gen.name,
                                   "ll128_enabled": capability not in
                                   (gen.ll128_off_capabilities or ())}
        if self.releases is not None:   # an older release's calibration-wide values
            changes.update(_values_at(self.releases.until, release))
        for key in _SHARED_KEYS:   # a field of both, taken as it is
            if getattr(gen, key) is not None:
                changes[key] = getattr(gen, key)
        changes["flagship_bandwidth"] = _flagship_bandwidth(
            gen.flagship_gpu or "", changes.get("nvlink_bandwidth", self.nvlink_bandwidth))
        if gen.in_network_factor is not None:
            changes["in_network"] = replace(self.in_network,
                                            bandwidth_factor=gen.in_network_factor)
        if gen.ll_bandwidth_factor is not None:
            changes["protocols"] = tuple(replace(p, bandwidth_factor=gen.ll_bandwidth_factor)
                                         if p.name == "LL" else p for p in self.protocols)
        return replace(self, **changes)

    def resolve(self, graph: nx.Graph, gpus: Iterable[Hashable] | None = None) -> Calibration:
        """This calibration for the fabric ``graph``: the constants of the generation of its
        most common GPU type (itself when it has no generations). ``gpus``: its GPU nodes,
        if known."""
        if not self.generations:
            return self
        hit = _MOST_COMMON_GPU.get(graph)
        if hit is None or hit[0] != graph.number_of_nodes():
            nodes = graph._node
            if gpus is None:
                types = Counter(d.get("gpu") for d in nodes.values() if d.get("kind") == "gpu")
            else:  # C-level iteration (16k GPUs: about 1 ms)
                types = Counter(map(_GPU_TYPE, map(nodes.__getitem__, gpus)))
            hit = (graph.number_of_nodes(), str(types.most_common(1)[0][0]) if types else "")
            _MOST_COMMON_GPU[graph] = hit
        return self.for_gpu(hit[1], graph)


#: Slots of a channel's buffer (NVIDIA/nccl src/include/device.h, ``NCCL_STEPS 8``): a
#: protocol's step (its chunk) is its buffer over this many.
NCCL_STEPS = 8

#: The largest Simple buffer taken (bytes): 1 TiB, past any GPU's memory.
SIMPLE_BUFFER_MAX = 2 ** 40
#: The Simple buffers taken, as every refusal of one states them.
SIMPLE_BUFFER_RULE = (f"a whole number of bytes from {NCCL_STEPS} B to 1 TiB "
                      f"({SIMPLE_BUFFER_MAX:,} B)")


def check_simple_buffer(v: object, name: str = "simple_buffer", *, typed: object = None) -> None:
    """Refuse a Simple buffer (``NCCL_BUFFSIZE``) that is not a whole number of bytes in
    ``NCCL_STEPS..SIMPLE_BUFFER_MAX`` (below NCCL_STEPS a step holds no byte), naming
    ``name`` and the value: ``typed``, the text ``v`` was read from where there was one
    (``'7'``, not the 7.0 it was read as), else ``v``.

    >>> check_simple_buffer(7.0, "--nccl-buffsize", typed="7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --nccl-buffsize must be a whole number of bytes from 8 B to 1 TiB (1,099,511,627,776 B) (NCCL_BUFFSIZE; NCCL's default ...), got '7'
    """
    if isinstance(v, bool) or not is_finite(v) or not float(v).is_integer() \
            or not NCCL_STEPS <= v <= SIMPLE_BUFFER_MAX:
        raise UserError(f"{name} must be {SIMPLE_BUFFER_RULE} (NCCL_BUFFSIZE; NCCL's default "
                        f"{_nccl_buffer()}), got {describe(v if typed is None else typed)}")


@functools.cache
def _nccl_buffer() -> object:
    """NCCL's default Simple buffer as the shipped defaults file gives it
    (``[pipeline] simple_buffer``), for messages; read raw, so a check of that very value
    while the file is loaded does not load it again."""
    return read_table(DEFAULTS_PATH, "calibration file").get("pipeline", {}).get(
        "simple_buffer", "unset")


#: A node's GPU type (None if it has none).
_GPU_TYPE = methodcaller("get", "gpu")
#: The most common GPU type of each graph (with its node count, as a check), read once.
_MOST_COMMON_GPU: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


#: Keys of NCCL's per-channel caps (a generation's and a calibration's): Tree's Simple
#: and LL128 ones, NVLSTree's and the LL128 ring's, each three rates (1, 2 and 3 or more
#: nodes).
CHANNEL_CAP_KEYS = ("tree_channel_bandwidth", "tree_ll128_channel_bandwidth",
                    "nvls_tree_channel_bandwidth", "ring_ll128_channel_bandwidth")

#: Of :data:`CHANNEL_CAP_KEYS`, those whose rates may be 0 (no cap for that many nodes: NCCL's
#: tuner clamps a channel only where its constant is > 0).
_ZERO_MEANS_NONE = ("nvls_tree_channel_bandwidth",)


def _tree_caps(where: str, key: str, v: object, *, allow_empty: bool = False
               ) -> tuple[float, ...]:
    """``v`` as NCCL's per-channel caps ``key`` on 1, 2 and 3+ nodes: three finite
    numbers >= a link's least bandwidth (bytes/s; or 0 for a key of
    :data:`_ZERO_MEANS_NONE`), or nothing where
    ``allow_empty``; else UserError naming ``where``."""
    zero = key in _ZERO_MEANS_NONE
    floor = PHYSICAL_MIN["bandwidth"][0]   # a link's least bandwidth: below it times overflow
    if isinstance(v, list | tuple) and (len(v) == 3 or (allow_empty and not v)) and \
            all(not isinstance(x, bool) and is_finite(x) and (x >= floor or (zero and x == 0))
                and not (is_whole(x) and x > sys.float_info.max) for x in v):
        return tuple(float(x) + 0.0 for x in v)
    least = f">= {floor:g} or 0 (0: none)" if zero else f">= {floor:g}"
    raise UserError(f"{where}: {key} must be three finite numbers {least} "
                    f"bytes/s (1, 2 and 3+ nodes), got {describe(v)}")


@functools.lru_cache(maxsize=64)
def _flagship_bandwidth(gpu: str, nvlink: float) -> float:
    """:attr:`Calibration.flagship_bandwidth`: catalog GPU ``gpu``'s NVLinks times
    ``nvlink`` (one NVLink's line rate); 0 where either is unknown.

    >>> _flagship_bandwidth("H100-SXM", 25e9) / 1e9, _flagship_bandwidth("A100-SXM-80GB", 25e9) / 1e9
    (450.0, 300.0)
    """
    if not gpu or nvlink <= 0:
        return 0.0
    try:
        return nvlink_count(get_gpu(gpu)) * nvlink
    except UserError:   # a Generation built in code naming a GPU the catalog lacks
        return 0.0


#: The :class:`Generation` fields a :class:`Calibration` has by the same name, which
#: :meth:`Calibration.for_gpu` takes as they are (the others set a protocol's factor).
_SHARED_KEYS = tuple(f.name for f in fields(Generation)
                     if f.name in {g.name for g in fields(Calibration)})
