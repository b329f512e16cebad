"""The unit of every collective algorithm: a :class:`Step` of transfers that run together,
:class:`Pairs` (those transfers as index arrays over a group) and :class:`NotApplicable`,
raised when an algorithm cannot run on a group or fabric.

>>> Step("exchange", (("gpu0", "gpu1", 0.5),), repeat=3).repeat
3
>>> t = Pairs(("a", "b", "c"), [0, 1, 2], [1, 2, 0], 1 / 3)
>>> len(t), t[2], t.incoming()
(3, ('c', 'a', 0.3333333333333333), 0.3333333333333333)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["NotApplicable", "Pairs", "Step", "StepShape", "union_of", "unique"]


def unique(a: ArrayLike) -> np.ndarray:
    """``np.unique(a)`` (the sorted distinct values, NaNs as one) by sorting: numpy's own
    imports ``numpy.ma`` on its first plain call (about 15 ms).

    >>> unique([3, 1, 3, 2]).tolist(), unique([2.0, float("nan"), 1.0, float("nan")]).tolist()
    ([1, 2, 3], [1.0, 2.0, nan])
    """
    aux = np.sort(np.asarray(a).ravel())
    if not len(aux):
        return aux
    keep = np.empty(len(aux), dtype=bool)
    keep[0] = True
    np.not_equal(aux[1:], aux[:-1], out=keep[1:])
    if aux.dtype.kind in "fc" and np.isnan(aux[-1]):
        first = int(np.searchsorted(np.isnan(aux), True)) if aux.dtype.kind == "c" \
            else int(np.searchsorted(aux, aux[-1]))
        keep[first + 1:] = False
        keep[first] = True
    return aux[keep]


class NotApplicable(Exception):
    """The algorithm cannot run this op on this group and fabric (the message says why)."""


class Pairs:
    """Transfers among the members of a group, held as index arrays.

    Transfer ``i`` moves ``frac[i] * n`` bytes (``frac``: one number for all, or an array)
    from ``nodes[src[i]]`` to ``nodes[dst[i]]``. It behaves as the tuple of
    ``(src, dst, fraction)`` triples it stands for (``len``, iteration, indexing), is
    hashable and compares equal to another :class:`Pairs` with the same transfers held the
    same way (so that steps with the same transfers share one routing; tuples and other
    representations never compare equal, which costs a cache miss, never a wrong hit); the router reads the arrays directly,
    so a step of a whole cluster never builds a Python tuple per transfer.
    """

    __slots__ = ("_hash", "dst", "frac", "nodes", "p2p", "src")

    def __init__(self, nodes: Iterable[Hashable], src: ArrayLike, dst: ArrayLike,
                 frac: float | ArrayLike, *, p2p: bool = False) -> None:
        self.nodes = nodes if isinstance(nodes, tuple) else tuple(nodes)
        #: NCCL's send/recv (ncclSend/ncclRecv: its all-to-all and send-recv), which NCCL's
        #: PXN sends through the NIC on the peer's rail
        #: (:meth:`~netmodel.collectives.route_pxn.PxnRoutes.pxn_proxies`). Not part
        #: of the hash and equality: a router's caches add it where PXN applies
        #: (:meth:`~netmodel.collectives.route_pxn.PxnRoutes.pxn_applies`).
        self.p2p = bool(p2p)
        self.frac: float | np.ndarray
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        if np.ndim(frac) == 0:
            self.frac = float(frac)  # type: ignore[arg-type]  # a 0-d array-like
        else:
            self.frac = np.asarray(frac, dtype=float)
            if self.frac.shape != self.src.shape:
                raise ValueError("frac must be a number or one value per transfer")
        if self.src.shape != self.dst.shape or self.src.ndim != 1:
            raise ValueError("src and dst must be 1-d index arrays of one length")
        self._hash: int | None = None

    def fractions(self) -> np.ndarray:
        """The fraction of every transfer, as an array."""
        if isinstance(self.frac, float):
            return np.full(len(self.src), self.frac)
        return self.frac

    def reversed(self) -> Pairs:
        """The same transfers in the opposite direction."""
        return Pairs(self.nodes, self.dst, self.src, self.frac, p2p=self.p2p)

    def incoming(self) -> float:
        """The most bytes (per byte of ``n``) any member receives."""
        if not len(self.src):
            return 0.0
        return float(np.bincount(self.dst, self.fractions()).max())

    def __len__(self) -> int:
        return len(self.src)

    def __iter__(self) -> Iterator[tuple[Hashable, Hashable, float]]:
        n = self.nodes
        src, dst = self.src.tolist(), self.dst.tolist()
        if isinstance(self.frac, float):
            f = self.frac
            return ((n[a], n[b], f) for a, b in zip(src, dst, strict=True))
        return ((n[a], n[b], f) for a, b, f in zip(src, dst, self.frac.tolist(), strict=True))

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return tuple(self)[i]
        i = range(len(self.src))[i]
        f = self.frac if isinstance(self.frac, float) else float(self.frac[i])
        return (self.nodes[self.src[i]], self.nodes[self.dst[i]], f)

    def __hash__(self) -> int:
        if self._hash is None:
            f = self.frac if isinstance(self.frac, float) else self.frac.tobytes()
            self._hash = hash((self.nodes, self.src.tobytes(), self.dst.tobytes(), f))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pairs):
            return NotImplemented
        if self is other:
            return True
        if len(self.src) != len(other.src) or hash(self) != hash(other):
            return False
        if isinstance(self.frac, float) != isinstance(other.frac, float):
            return False  # one fraction for all vs one each: another representation
        if isinstance(self.frac, float):
            same_frac = self.frac == other.frac
        else:
            same_frac = np.array_equal(self.frac, other.frac)
        return bool(same_frac and (self.nodes is other.nodes or self.nodes == other.nodes)
                    and np.array_equal(self.src, other.src)
                    and np.array_equal(self.dst, other.dst))

    def __repr__(self) -> str:
        return f"Pairs({len(self)} transfers among {len(self.nodes)} nodes)"


@dataclass(frozen=True, kw_only=True)
class StepShape:
    """How a step's time is put together beyond its transfers: its latency payments, the
    pipeline and bound it runs in, whether it is a phase of its own, its heads, floor,
    NCCL tree cap and grouped send/recv fill (each field as :class:`Step` documents it).
    A :class:`Step` has them and its cost (:class:`~netmodel.collectives.step_cost.StepCost`)
    keeps them; keyword-only, after each one's own fields."""

    latencies: tuple[int, int] | None = None
    pipeline: int = 0
    bound: int = 0
    member: bool = True
    heads: int = 1
    floor: float = 0.0
    tree_channels: int = 0
    tree_nodes: int = 0
    tree_table: int = 0
    tree_share: float = 1.0
    p2p_ranks: int = 0
    p2p_peers: int = 0
    ring_nodes: int = 0
    tree_ranks: int = 0


@dataclass(frozen=True)
class Step(StepShape):
    """Transfers that run together.

    Attributes
    ----------
    name : str
        What the step does (for the breakdown).
    transfers : tuple of (src, dst, fraction), or Pairs
        Each moves ``fraction * n`` bytes from node ``src`` to node ``dst``.
    repeat : int
        How many identical steps in a row.
    stages : int
        Pipeline stages of a chain or tree the message streams through (latency paid
        ``stages`` times unless ``latencies`` says otherwise; the pipeline fills over them).
    reduce : float
        Bytes (per byte of ``n``) the busiest GPU reduces in this step.
    in_network : bool
        Whether the switches reduce (in-network constants apply).
    route_latency : float or None
        Seconds of route latency per latency payment when the transfers' own routes do not
        show it (in-network reduction: each transfer ends at a switch, but the data climbs
        the tree, is reduced in every switch on the way and comes back down); None: the
        routes' own.
    latencies : tuple of (int, int) or None
        Latency payments of the whole step (all repeats), as NCCL counts them:
        ``(scale-up, slowest)``. A scale-up payment costs the scale-up alpha plus the
        longest route latency among the transfers that stay on the scale-up network; a
        slowest payment costs the alpha of the step's network (scale-out if any transfer
        crosses it) plus the longest route latency of all. None: ``repeat * stages``
        slowest payments.
    pipeline : int
        Steps with the same non-zero ``pipeline`` run as one pipeline: their phases overlap
        on successive slices of the message (see ``bound``); 0: the step runs alone.
    bound : int
        Within a pipeline, steps with the same non-zero ``bound`` take turns on the same
        resources: the pipeline's steady time per byte is the largest sum over a bound.
        Without bounds it is the slowest step's.
    member : bool
        Whether the step is one of the algorithm's phases (its latency and its time alone
        count); False for a pipeline's bound that only stands for several phases at once
        (their transfers together, as they share links).
    heads : int
        GPUs that each own a part of the message in a pipeline (a slice is ``heads x
        channels x chunk`` bytes).
    floor : float
        Seconds per byte of ``n`` the step takes at least, at an in-switch reduction ceiling
        of 1x a GPU's scale-up line rate (the calibration's ceiling divides it); 0: none.
    tree_channels : int
        The step is a phase of NCCL's tree all-reduce run on this many channels (one per
        NIC rail; NVLSTree's, one per NVLS head) across ``tree_nodes`` scale-up domains:
        NCCL caps the tree's busbw at its channels times the calibration's per-channel rate
        for that many nodes (:func:`~netmodel.collectives.pipeline_fill.channel_cap_rate`: for Tree
        :attr:`~netmodel.collectives.calibration.Calibration.tree_channel_bandwidth` times
        the protocol's bandwidth factor, under LL128 at most ``tree_ll128_channel_bandwidth``;
        for NVLSTree ``nvls_tree_channel_bandwidth``), so the collective's steady time per
        byte is at least the sum, over such phases, of ``repeat x tree_share /
        (tree_channels x rate)``, whatever the links' bandwidth
        (:func:`~netmodel.collectives.cost.combine`); 0: no such cap.
    tree_nodes : int
        Scale-up domains the tree spans (NCCL's nodes: 1, 2, or 3 and more pick the rate).
    tree_table : int
        Which of NCCL's per-channel caps: 0 its Tree's (``tree_channel_bandwidth``), 1 its
        NVLSTree's (``nvls_tree_channel_bandwidth``: a channel per NVLS head).
    tree_share : float
        The step's part of the cap's seconds per byte: 2 for Tree's one step, its reduce
        and broadcast at once (NCCL's algbw half its busbw); (n - 1) / n for each of
        NVLSTree's two phases
        across domains on ``n`` GPUs (NCCL counts its busbw as a ring's, algbw = busbw x
        n / (2 (n - 1))).
    p2p_ranks : int
        The step is NCCL's grouped send/recv all-to-all among this many ranks (every peer
        gets ``n / p2p_ranks``), which moves each chunk twice in turn inside one NVLink
        domain under Simple (into the peer's buffer, then out of it): the step fills over
        one chunk a channel (:func:`~netmodel.collectives.cost.combine`); 0: no such fill.
    p2p_peers : int
        The peers each of the ``p2p_ranks`` ranks sends to: 0 for the all-to-all (every
        other rank), 1 for NCCL's send-recv (``n`` to the next rank). NCCL runs a peer's
        bytes on a few channels, so the peers set how many send
        (:func:`~netmodel.collectives.pipeline_fill.p2p_sending_channels`: its LL rate,
        :func:`~netmodel.collectives.pipeline_fill.p2p_ll_share`); the Simple fill above
        is the all-to-all's only.
    ring_nodes : int
        The step is a pass of NCCL's ring (all-reduce, reduce-scatter, all-gather: ``repeat``
        = ``p - 1`` steps) across this many scale-up domains, NCCL's nodes; 0: not. Across
        nodes NCCL's tuner charges each of the ring's NVLink steps at least the network's
        post overhead and caps its LL busbw
        (:func:`~netmodel.collectives.pipeline_fill.ring_net_mask`).
    tree_ranks : int
        The step is NCCL's tree all-reduce on this many GPUs (its ``nRanks``) across
        ``tree_nodes`` scale-up domains, NCCL's nodes; 0: not. Across nodes NCCL's tuner
        caps the tree's LL busbw as the ring's
        (:func:`~netmodel.collectives.pipeline_fill.tree_net_mask`).
    """

    name: str
    transfers: tuple | Pairs
    repeat: int = 1
    stages: int = 1
    reduce: float = 0.0
    in_network: bool = False
    route_latency: float | None = None


def union_of(name: str, steps: Iterable[Step], *, pipeline: int, bound: int, heads: int = 1,
             floor: float = 0.0, in_network: bool | None = None,
             route_latency: float | None = None) -> Step:
    """A non-member step standing for ``steps`` at once: every transfer of each, its fraction
    times the step's ``repeat`` (the bytes they put on each link together), bound ``bound``
    of pipeline ``pipeline``.

    >>> a = Step("a", Pairs(("x", "y"), [0], [1], 0.5), repeat=2)
    >>> b = Step("b", Pairs(("x", "y"), [1], [0], 0.25))
    >>> u = union_of("a+b", [a, b], pipeline=1, bound=1)
    >>> list(u.transfers), u.member
    ([('x', 'y', 1.0), ('y', 'x', 0.25)], False)
    """
    steps = list(steps)
    ts: list[Any] = [s.transfers for s in steps]  # all Pairs, or not (checked below)
    if ts and all(isinstance(t, Pairs) for t in ts) and \
            all(t.nodes is ts[0].nodes or t.nodes == ts[0].nodes for t in ts):
        transfers: tuple | Pairs = Pairs(ts[0].nodes, np.concatenate([t.src for t in ts]),
                          np.concatenate([t.dst for t in ts]),
                          np.concatenate([t.fractions() * s.repeat
                                          for t, s in zip(ts, steps, strict=True)]))
    else:
        transfers = tuple((a, b, f * s.repeat) for t, s in zip(ts, steps, strict=True)
                          for a, b, f in t)
    if in_network is None:
        in_network = any(s.in_network for s in steps)
    return Step(name, transfers, in_network=in_network, route_latency=route_latency,
                latencies=(0, 0), pipeline=pipeline, bound=bound, member=False, heads=heads,
                floor=floor)
