"""Costing of a collective from its steps' costs.

A step of transfers (see :mod:`netmodel.collectives.algorithms`) is routed and costed once,
whatever the size (:mod:`netmodel.collectives.step_cost`): every transfer's route (ECMP
fractions over directed links) is scaled by its fraction of ``n`` and summed into per-link
loads. Its bandwidth term is ``n * max_link(load_coefficient / achievable_bandwidth) / f``
(at least the step's in-switch floor), with ``f`` the protocol's bandwidth factor (the
in-network one for a step the switches reduce) and ``achievable_bandwidth`` the link's line
rate times its side's efficiency
(:class:`~netmodel.collectives.calibration.Calibration`). Its latency is what NCCL counts:
each scale-up payment costs the protocol's scale-up alpha plus the longest scale-up route,
each network payment the alpha of the step's network plus the longest route.

A collective (:func:`combine`) is the protocol's base latency plus its steps' latencies plus
``n`` times the sum of its steps' bandwidth terms, except that the phases of a pipeline
overlap (their steady time per byte is the slowest bound's) and every pipeline and chain
fills over its first slice: ``f * min(n, slice)``. The time is concave and piecewise linear
in ``n``: the smallest of a few lines ``a + b * n``, one per size range (one line when
nothing fills), so any array of message sizes costs a few multiply-adds. NCCL's own fills
and per-channel caps (send/recv's double copy, NVLS's channels, the tree caps) are
:mod:`netmodel.collectives.pipeline_fill`'s; which protocols a collective runs, at which
sizes NCCL's send/recv runs LL or Simple, and Simple send/recv's lines by channel,
:mod:`netmodel.collectives.protocol_lines`'.

What a costed collective reports (its steps' timings, its time and bandwidths) is
:mod:`netmodel.collectives.results`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from netmodel.collectives.algorithms import Step
from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.pipeline_fill import (
    TREE_TABLES,
    channel_cap_rate,
    group_channels,
    has_tree_caps,
    ll_cap_rate,
    p2p_fills,
    p2p_ll_share,
    ring_ll_least,
    ring_net_mask,
    ring_net_overhead,
    tree_least,
    tree_ll_least,
    tree_net_mask,
)
from netmodel.collectives.protocol_lines import (
    channel_lines,
    lines_within,
    p2p_size_range,
    step_protocols,
)
from netmodel.collectives.results import InSwitchCeiling, StepTiming, TreeCap
from netmodel.collectives.routing import NoPath as GroupCut
from netmodel.collectives.routing import Router
from netmodel.collectives.step_cost import FROM_STEP, StepCost, cost_step, group_nic
from netmodel.collectives.steps import unique

if TYPE_CHECKING:
    from netmodel.collectives.route_policies import RoutePolicy

__all__ = ["STEP_FIELDS", "CompiledCollective", "GroupCut", "SEND_RECV", "combine",
           "compile_steps", "least_lines", "lines_time", "step_shape", "step_table"]

# GroupCut (re-exported): no path joins two members of a group (a cut fabric).




#: Per-step fields :func:`combine` reads, each an array of shape ``(G, S)``: ``on`` (the
#: step runs), then :data:`FROM_STEP` in order but the ``name``, with ``latencies`` as its
#: two counts, ``intra`` and ``inter``.
STEP_FIELDS = ("on",) + tuple(
    x for k in FROM_STEP if k != "name"
    for x in (("intra", "inter") if k == "latencies" else (k,)))


def step_table(steps: Sequence[StepCost | Step], G: int = 1) -> dict[str, np.ndarray]:
    """:data:`STEP_FIELDS` of ``steps`` (StepCosts or Steps) as arrays of shape ``(G, S)``
    (the same steps on every row)."""
    lat = [(0, s.repeat * s.stages) if s.latencies is None else s.latencies for s in steps]
    cols = {k: [getattr(s, k) for s in steps] for k in _ATTR_FIELDS}
    cols.update(on=[True] * len(steps), intra=[x[0] for x in lat], inter=[x[1] for x in lat])
    # each column converted as assigning a step's values into the arrays converts them
    # (to float or to bool), all of one type in one array (each field a contiguous block)
    out = {}
    for names, dtype in ((_FLOAT_FIELDS, float), (_BOOL_FIELDS, bool)):
        block = np.array([cols[k] for k in names], dtype=dtype)[:, None, :]
        if G != 1:
            block = np.repeat(block, G, axis=1)
        out.update(zip(names, block, strict=True))
    return {k: out[k] for k in STEP_FIELDS}


#: Of :data:`STEP_FIELDS`, the flags (a Step's ``bool`` fields, and ``on``).
_BOOL_FIELDS = ("on",) + tuple(f.name for f in fields(Step)
                               if f.type in ("bool", bool) and f.name in STEP_FIELDS)
# a Step without bool fields found would turn its flags into floats unnoticed (an
# annotation spelled otherwise, or steps.py without postponed annotations)
assert len(_BOOL_FIELDS) > 1, "Step's bool fields not found by their annotation"
#: Of :data:`STEP_FIELDS`, those that are a step's attribute of the same name (the others:
#: ``on``, and ``intra``/``inter`` from its ``latencies``).
_ATTR_FIELDS = tuple(k for k in STEP_FIELDS if k not in ("on", "intra", "inter"))
_FLOAT_FIELDS = tuple(k for k in STEP_FIELDS if k not in _BOOL_FIELDS)


#: (op, algorithm) pairs that are grouped ncclSend/ncclRecv when NCCL runs them (nccl-tests'
#: alltoall_perf and sendrecv_perf; a pairwise all-to-all is the same sends in rounds).
SEND_RECV = frozenset({("all-to-all", "direct"), ("all-to-all", "pairwise"),
                       ("send-recv", "direct")})


def combine(t: dict[str, np.ndarray], beta: np.ndarray, lat_all: np.ndarray,
            lat_up: np.ndarray, scaleout: np.ndarray, protocol: Protocol,
            cal: Calibration, shape: tuple | None = None, *, split: bool = False,
            share: np.ndarray | None = None, path: Any = None
            ) -> list[tuple[np.ndarray, ...]]:
    """The time of steps as lines ``a + b n``: their minimum at each ``n`` is the time.

    ``t``: the :data:`STEP_FIELDS` of the steps (arrays ``(G, S)``: ``G`` groups or
    collectives of ``S`` steps each); ``beta``, ``lat_all``, ``lat_up``, ``scaleout``: each
    step's bottleneck seconds per byte of ``n`` (at factor 1), longest route latency,
    longest scale-up route latency and whether it crosses the scale-out network, shape
    ``(G, S)``; ``protocol`` the point-to-point protocol (in-network steps use
    ``cal.in_network``).

    Under LL, a step of NCCL's grouped send/recv (``p2p_ranks``: the all-to-all, the
    send-recv) inside one NVLink domain runs at LL's factor times
    :func:`~netmodel.collectives.pipeline_fill.p2p_ll_share` (the warps that send its
    lines, on the channels its ``p2p_peers`` get, on each collective's slowest path at
    ``path``: bytes/s as NCCL's topology sees it, shape ``(G,)`` or a scalar; None: unknown,
    :meth:`CompiledCollective.path_rate`). ``share``: each collective's fraction
    of its point-to-point protocol's rate, shape ``(G,)`` (Simple send-recv's channels by
    size, :func:`~netmodel.collectives.protocol_lines.channel_lines`; None: 1).

    Time = start-up + latency payments + ``n`` x (steady seconds per byte) + the fill of
    every pipeline, ``f x min(n, slice)``: a pipeline of phases whose steady time per byte
    is ``b_p`` (its slowest bound) and whose phases one after another take ``sum b_i``
    fills for ``sum b_i - b_p`` over one slice (``heads x channels x chunk`` bytes); a
    chain of ``stages`` fills for ``stages - 1`` stages. The fills make the time concave
    and piecewise linear: one line per distinct slice, plus one. Returns ``[(a, b,
    a_fill)]``, arrays of shape ``(G,)``, from the smallest sizes' line to the largest's;
    ``a_fill`` is the part of ``a`` that is pipeline fill (seconds bound by bandwidth, as
    ``b`` less its reduction part is). ``shape``: :func:`step_shape` of ``t``, if already
    worked out (it depends on the steps only, not on the protocol or the loads).

    A pass of NCCL's ring across nodes (``ring_nodes``,
    :func:`~netmodel.collectives.pipeline_fill.ring_net_mask`) pays each scale-up latency
    payment at least the network's post overhead
    (:func:`~netmodel.collectives.pipeline_fill.ring_net_overhead`) and, under LL, its
    line's ``b`` is at least NCCL's LL busbw cap across nodes allows
    (:func:`~netmodel.collectives.pipeline_fill.ring_ll_least`), as ``b_least`` below; NCCL's
    tree across nodes (``tree_ranks``, :func:`~netmodel.collectives.pipeline_fill.tree_net_mask`)
    has that LL cap too (:func:`~netmodel.collectives.pipeline_fill.tree_ll_least`).

    NCCL's tree channel cap (steps with ``tree_channels``, under a calibration with
    ``tree_channel_bandwidth`` or, under LL128, ``tree_ll128_channel_bandwidth``, or for
    NVLSTree's, ``tree_table`` 1, ``nvls_tree_channel_bandwidth``): every line's ``b`` is
    at least ``b_least``, the sum over such member steps of ``repeat x tree_share /
    (tree_channels x rate)`` (:func:`channel_cap_rate`: the per-channel cap for
    ``tree_nodes`` nodes, for Tree times the step's bandwidth factor, as NCCL caps the
    tree's busbw, then scales it by its protocol), before the reduction part is added:
    ``b = max(b_link, b_least) + b_reduce``. The fill is left bound by the links. ``split``:
    each line is ``(a, b, a_fill, b_link, b_least)`` (``b_link`` the line's ``b`` without
    its reduction part and without the cap; ``b_least`` 0 where nothing caps), as
    :meth:`~netmodel.collectives.model.FabricCostModel.candidate_parts` re-scores them.
    """
    net = cal.in_network
    if shape is None:
        shape = step_shape(t)
    (on, mem, innet, any_net, plain, chain, red_sum, groups, ringnet, treenet, some_net,
     p2p, tree) = shape
    if some_net:
        fac = np.where(innet, net.bandwidth_factor, protocol.bandwidth_factor)
        up = np.where(innet, net.step_latency_scaleup, protocol.step_latency_scaleup)
        slow = np.where(innet, np.where(scaleout, net.step_latency_scaleout,
                                        net.step_latency_scaleup),
                        np.where(scaleout, protocol.step_latency_scaleout,
                                 protocol.step_latency_scaleup))
        base = np.where(any_net, net.base_latency, protocol.base_latency)
    else:  # no step reduced in the network: the protocol's constants as scalars (same values)
        fac, up = protocol.bandwidth_factor, protocol.step_latency_scaleup
        slow = np.where(scaleout, protocol.step_latency_scaleout, protocol.step_latency_scaleup)
        base = protocol.base_latency
    if share is not None:
        fac = np.where(innet, fac, fac * np.asarray(share, dtype=float)[:, None])
    if ringnet is not None:   # NCCL's ring across nodes: each NVLink step at least the post
        up = np.where(ringnet, np.maximum(up, ring_net_overhead(protocol)), up)
    if protocol.name == "LL" and p2p:   # send/recv's LL inside one NVLink domain: its send warps
        ranks = np.where(np.asarray(scaleout, dtype=bool), 0.0, t["p2p_ranks"])
        if np.any(ranks > 1):
            rates = 0.0 if path is None else np.asarray(path, dtype=float).reshape(-1, 1)
            fac = fac * p2p_ll_share(ranks, cal, t["p2p_peers"], rates)
    ceiling = cal.in_network_ceiling
    floor = t["floor"] / ceiling if ceiling > 0 else 0.0
    with np.errstate(invalid="ignore"):
        bl = np.where(on, t["repeat"] * np.maximum(beta / fac, floor), 0.0)
    lat = t["intra"] * (up + lat_up) + t["inter"] * (slow + lat_all)
    a = base + np.where(mem, lat, 0.0).sum(axis=1)
    gamma = cal.reduction_rate
    red = (red_sum / gamma) if gamma > 0 else 0.0
    least = tree_least(t, mem, fac, cal, protocol) if tree else None
    if ringnet is not None or treenet is not None:   # (None without a pass across nodes)
        for ll_least in (ring_ll_least(t, mem, ringnet, protocol),
                         tree_ll_least(t, mem, treenet, protocol)):
            if ll_least is not None:   # NCCL's LL busbw cap across nodes
                least = ll_least if least is None else np.maximum(least, ll_least)
    # each step's slice, where a chain or a pipeline group reads it
    chunk = np.where(innet, net.chunk, protocol.chunk) if chain is not None or groups else None
    b = np.where(plain, bl, 0.0).sum(axis=1)
    fills = []  # (coefficient (G,), slice (G,))
    if chain is not None and np.any(chunk[chain] > 0):
        for s in unique(chunk[chain]).tolist():
            if s > 0:
                sel = chain & (chunk == s)
                fills.append((np.where(sel, (t["stages"] - 1) * bl, 0.0).sum(axis=1),
                              np.full(len(a), s * cal.channels)))
    if p2p:
        fills += p2p_fills(t, plain, scaleout, bl, protocol, cal)
    for mem_g, ks, heads in groups:
        bl_g = np.where(mem_g, bl, 0.0)
        sum_m = bl_g.sum(axis=1)
        bg = bl_g.max(axis=1)
        for sel in ks:
            bg = np.maximum(bg, np.where(sel, bl, 0.0).sum(axis=1))
        b = b + bg
        ch = np.where(mem_g, chunk, 0.0).max(axis=1)
        fills.append((np.maximum(sum_m - bg, 0.0),
                      heads * ch * group_channels(mem_g, innet, scaleout, cal)))
    b_link = b
    b = b + red
    if not fills:  # one line (what the general case below gives with no sizes)
        zero = np.zeros(a.shape, a.dtype)
        return [_capped(a + zero, b + zero, zero, b_link + zero, least, red, split)]
    sizes = sorted({float(x) for f, s in fills for x in unique(s) if x > 0})
    coef = [sum(np.where(s == x, f, 0.0) for f, s in fills) for x in sizes]
    lines = []
    fill = np.zeros(a.shape, a.dtype)   # the sizes' fills below line j, added from 0.0 up
    for j in range(len(sizes) + 1):
        if j:
            fill = fill + coef[j - 1] * sizes[j - 1]
        rest = sum((coef[k] for k in range(j, len(sizes))), np.zeros(a.shape, a.dtype))
        lines.append(_capped(a + fill, b + rest, fill, b_link + rest, least, red, split))
    return lines


def _capped(a, b, fill, b_link, least, red, split: bool) -> tuple[np.ndarray, ...]:
    """One line of :func:`combine`: ``b`` (links and reduction) raised to ``max(b_link,
    least) + red`` where the tree channel cap ``least`` is set (rows with none keep
    ``b`` as it is, to the last bit)."""
    if least is not None:
        b = np.where(least > 0, np.maximum(b_link, least) + red, b)
    if split:
        return a, b, fill, b_link, np.zeros(a.shape, a.dtype) if least is None else least.copy()
    return a, b, fill


def lines_time(a: np.ndarray, b: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None,
               n: np.ndarray) -> np.ndarray:
    """The smallest ``a[c] + b[c] n`` over the candidates ``c`` that run at each size ``n``
    (``lo[c] < n <= hi[c]``; None: every candidate at every size), ``n`` of any shape.

    >>> lines_time(np.array([1.0, 3.0]), np.array([2.0, 1.0]), np.array([0.0, 4.0]),
    ...            np.array([4.0, np.inf]), np.array([1.0, 4.0, 5.0])).tolist()
    [3.0, 9.0, 8.0]
    """
    shape = (-1,) + (1,) * np.ndim(n)
    t = a.reshape(shape) + b.reshape(shape) * n
    if lo is not None and hi is not None and (np.any(lo > 0) or np.any(hi < math.inf)):
        t = np.where((n > lo.reshape(shape)) & (n <= hi.reshape(shape)), t, np.inf)
    return t.min(0)


def least_lines(a: np.ndarray, b: np.ndarray, lo: np.ndarray | None = None,
                hi: np.ndarray | None = None) -> tuple:
    """``(a, b, lo, hi)`` of the lines that can be the least somewhere: a line another one
    is at most at every size (``a' <= a`` and ``b' <= b``; of equal lines the first is
    kept) is left out, so that :func:`lines_time` over what is left gives what it gives
    over every line at any sizes ``n >= 0``, to the last bit (a product and a sum round
    monotonically: ``a' + b' n <= a + b n`` holds in floating point too, so the least
    line at each size, or one as small, is kept). Lines run at sizes of their own
    (``lo``/``hi`` restrict one) are kept as they are. A candidate set of a fabric's
    collective is tens of lines of which a few are the least anywhere: a grid's sizes
    are timed against those few.

    >>> a, b, _, _ = least_lines(np.array([1.0, 2.0, 0.5, 1.0]), np.array([2.0, 2.0, 3.0, 2.0]))
    >>> a.tolist(), b.tolist()
    ([1.0, 0.5], [2.0, 3.0])
    """
    if lo is not None and hi is not None and (np.any(lo > 0) or np.any(hi < math.inf)):
        return a, b, lo, hi   # lines_time masks each by its sizes (n = 0 too): kept whole
    count = len(a)
    if count < 2:
        return a, b, lo, hi
    at_most = (a[:, None] <= a[None, :]) & (b[:, None] <= b[None, :])   # [d, c]: d <= c
    equal = (a[:, None] == a[None, :]) & (b[:, None] == b[None, :])
    earlier = np.arange(count)[:, None] < np.arange(count)[None, :]
    keep = ~(at_most & (~equal | earlier)).any(axis=0)   # NaN compares false: kept
    if keep.all():
        return a, b, lo, hi
    return a[keep], b[keep], *(None if x is None else x[keep] for x in (lo, hi))


def step_shape(t: dict[str, np.ndarray]) -> tuple:
    """What :func:`combine` reads of the steps ``t`` alone (not of the protocol, the
    calibration or the loads), worked out once for every protocol: masks of the steps that
    run, count, are reduced in the network, fill no pipeline (and those that chain stages;
    None when none does), the reduction bytes per byte of ``n``, per pipeline group
    (in increasing number) its counted steps, its bound groups' masks and its heads, the
    passes of NCCL's ring and its tree across nodes (:func:`~netmodel.collectives.
    pipeline_fill.ring_net_mask`, :func:`~netmodel.collectives.pipeline_fill.
    tree_net_mask`), whether any step is reduced in the network, whether any is NCCL's
    grouped send/recv of more than one GPU (``p2p_ranks``: :func:`~netmodel.collectives.
    pipeline_fill.p2p_fills`, LL's share) and whether any counted step is on NCCL's tree
    channels (``tree_channels``: :func:`~netmodel.collectives.pipeline_fill.tree_least`);
    where none is, those give nothing under any protocol and are not asked."""
    on, mem, innet = t["on"], t["member"] & t["on"], t["in_network"]
    any_net = (on & innet).any(axis=1)
    red_sum = np.where(mem, t["repeat"] * t["reduce"], 0.0).sum(axis=1)
    pipe = t["pipeline"]
    plain = mem & (pipe == 0)
    chain = plain & (t["stages"] > 1)
    groups = []
    bounds = t["bound"]
    for g in unique(pipe[on & (pipe > 0)]).tolist():
        in_g = on & (pipe == g)
        mem_g = in_g & mem
        ks = [in_g & (bounds == k) for k in unique(bounds[in_g & (bounds > 0)]).tolist()]
        groups.append((mem_g, ks, np.where(in_g, t["heads"], 0).max(axis=1)))
    return (on, mem, innet, any_net, plain, chain if chain.any() else None, red_sum, groups,
            ring_net_mask(t), tree_net_mask(t), bool(innet.any()),
            bool((t["p2p_ranks"] > 1).any()), bool((mem & (t["tree_channels"] > 0)).any()))


@dataclass(frozen=True)
class CompiledCollective:
    """An algorithm's steps for one op and group, costed independently of the size."""

    op: str
    algorithm: str
    group: tuple[Hashable, ...]
    steps: tuple[StepCost, ...]
    #: the NICs of the group's slowest member (:func:`group_nic`; send/recv only)
    nic: tuple[float, int] | None = None
    #: the routing policy its steps were routed under
    #: (:data:`~netmodel.collectives.route_policies.ROUTINGS`)
    routing: str = "shortest"

    @property
    def in_network(self) -> bool:
        """Whether every phase of the algorithm is reduced in the network."""
        member = [s for s in self.steps if s.member]
        return bool(member) and all(s.in_network for s in member)

    def protocols(self, cal: Calibration) -> tuple[Protocol, ...]:
        """The protocols this algorithm can run with."""
        return step_protocols(any(s.in_network for s in self.steps),
                              any(not s.in_network for s in self.steps if s.member), cal,
                              (self.op, self.algorithm) in SEND_RECV)

    def size_range(self, protocol: Protocol | str, cal: Calibration, scale: float = 1.0,
                   b: float | None = None) -> tuple[float, float]:
        """``(lo, hi)``: the sizes ``lo < n <= hi`` at which this algorithm runs ``protocol``
        (a :class:`Protocol` or its name): every size, ``(0, inf)``, except for NCCL's
        send/recv (:data:`SEND_RECV`) under a calibration with ``p2p_ll_threshold`` and both
        an LL and a Simple protocol: NCCL picks its protocol by size there (src/enqueue.cc,
        addP2pToPlan; :func:`~netmodel.collectives.protocol_lines.p2p_size_range`), LL
        while one peer's bytes are at most ``p2p_ll_threshold`` times the channels a peer
        may use (:func:`~netmodel.collectives.protocol_lines.net_peer_channels` when a step
        crosses the scale-out network and the calibration is not ``scaleup_everywhere``,
        else ``p2p_channels_per_peer``, at most two per NVLink of the slowest link the
        group's transfers cross, at its rate as NCCL sees its path,
        :func:`~netmodel.collectives.step_cost.link_path_rates`: one count for every peer, rounded up to a power of 2),
        Simple above. A peer's bytes are ``n / p`` in an all-to-all of ``p`` GPUs, ``n`` in
        a send-recv. ``scale``: every link's
        bandwidth multiplied by it (as ``adjust.bandwidth_scale`` builds the fabric), so
        that a re-scored collective (:mod:`netmodel.study.adjusted_comm`) runs its protocols
        at the sizes the rebuilt fabric would. ``b``: one of :meth:`lines`' slopes under
        ``protocol``, whose own sizes are then kept too: Simple send-recv inside one NVLink
        domain has a line per channel count, each over its own sizes
        (:meth:`channel_shares`) at the links' own rate, which a re-scoring at another
        ``scale`` takes from :meth:`scaled_line_parts` instead."""
        name = protocol if isinstance(protocol, str) else protocol.name
        if (self.op, self.algorithm) not in SEND_RECV:
            return 0.0, math.inf
        if b is not None and self.channel_shares(name, cal):
            lo, hi = self.size_range(name, cal, scale)
            parts = self.line_parts(cal.protocol(name), cal)
            own = self.__dict__["_own_ranges"][id(cal)]
            i = next((i for i, x in enumerate(parts) if x[1] == b), None)
            if i is not None:   # else no line of this slope: the protocol's sizes
                return max(lo, own[i][0]), min(hi, own[i][1])
            return lo, hi
        cache = self.__dict__.setdefault("_range_cache", {})
        hit = cache.get((name, id(cal), scale))
        if hit is not None and hit[0] is cal:
            return hit[1]
        out = p2p_size_range(name, self.op, len(self.group),
                             any(s.scaleout for s in self.steps),
                             [s.path_bandwidth or s.bottleneck_bandwidth for s in self.steps],
                             cal, scale, self.nic)
        cache[(name, id(cal), scale)] = (cal, out)  # cal kept: its id stays its own
        return out

    def _arrays(self):
        """The steps as :func:`combine`'s arrays (built once; read-only)."""
        hit = self.__dict__.get("_arrays_cache")
        if hit is None:
            st = self.steps
            row = lambda xs: np.array([xs], dtype=float)  # noqa: E731
            lat_up = [s.latency if s.latency_up is None else s.latency_up for s in st]
            hit = (step_table(st), row([s.beta for s in st]), row([s.latency for s in st]),
                   row(lat_up), np.array([[s.scaleout for s in st]], dtype=bool))
            for x in (*hit[0].values(), *hit[1:]):
                x.flags.writeable = False
            hit = (*hit, step_shape(hit[0]))
            self.__dict__["_arrays_cache"] = hit  # frozen: not through setattr
        return hit

    def lines(self, protocol: Protocol, cal: Calibration) -> list[tuple[float, float]]:
        """``[(a, b)]``: the time under ``protocol`` is the smallest ``a + b * n`` (one line
        per size range of the pipeline fill; one line when nothing fills)."""
        return [(x[0], x[1]) for x in self.line_parts(protocol, cal)]

    def line_parts(self, protocol: Protocol, cal: Calibration
                   ) -> list[tuple[float, float, float, float, float]]:
        """``[(a, b, a_fill, b_link, b_least)]``: :meth:`lines` with the part of each ``a``
        that is pipeline fill (bound by link bandwidth, so it scales as ``1/k`` when every
        link's bandwidth is multiplied by ``k``), the line's ``b`` bound by the links alone
        (without its reduction part and NCCL's tree channel cap; it scales as ``1/k`` too)
        and the cap's least ``b`` (0: none), which the links do not move: ``b = max(b_link,
        b_least) + b_reduce`` (:func:`combine`)."""
        cache = self.__dict__.setdefault("_line_cache", {})
        hit = cache.get((id(protocol), id(cal)))
        if hit is not None and hit[0] is protocol and hit[1] is cal:
            return list(hit[2])
        t, beta, lat_all, lat_up, so, shape = self._arrays()
        shares = self.channel_shares(protocol.name, cal)
        out, own = [], []
        for share, lo, hi in shares or [(None, 0.0, math.inf)]:
            lines = [tuple(float(x[0]) for x in line)
                     for line in combine(t, beta, lat_all, lat_up, so, protocol, cal, shape,
                                         split=True, share=share, path=self.path_rate())]
            if shares:   # each share's lines that are the least somewhere in its sizes
                lines = lines_within(lines, float(lo[0]), float(hi[0]))
            out += lines
            own += [(float(lo[0]), float(hi[0])) if shares else (lo, hi)] * len(lines)
        if shares:
            self.__dict__.setdefault("_own_ranges", {})[id(cal)] = own
        cache[(id(protocol), id(cal))] = (protocol, cal, tuple(out))  # both kept: ids stay
        return out

    def scaled_line_parts(self, protocol: Protocol, cal: Calibration, scale: float
                          ) -> list[tuple[float, ...]]:
        """``[(a, b, a_fill, b_link, b_least, lo, hi)]``: :meth:`line_parts` of NCCL's
        send/recv (:data:`SEND_RECV`) with every link's bandwidth multiplied by ``scale``
        as far as NCCL's channels see it, its bandwidth parts still at the links' own rate
        (a re-scoring divides ``a_fill`` and ``b_link`` by ``scale``,
        :func:`~netmodel.study.adjusted_comm.adjusted_lines`): its path at ``scale`` times
        :meth:`path_rate` gives a peer its channels and a channel its ratio
        (:func:`~netmodel.collectives.pipeline_fill.p2p_path_channels`,
        :func:`~netmodel.collectives.pipeline_fill.p2p_channel_ratio`), so Simple's lines by
        channel (:meth:`channel_shares`) and LL's share
        (:func:`~netmodel.collectives.pipeline_fill.p2p_ll_share`) are the rebuilt fabric's.
        Each line runs at ``lo < n <= hi`` (its share's sizes, at the protocol's sizes at
        that scale, :meth:`size_range`); every line of a share is kept (the least of them
        at each size is the time: which are least moves with the scale)."""
        cache = self.__dict__.setdefault("_scaled_cache", {})
        key = (id(protocol), id(cal), scale)
        hit = cache.get(key)
        if hit is not None and hit[0] is protocol and hit[1] is cal:
            return hit[2]
        t, beta, lat_all, lat_up, so, shape = self._arrays()
        lo_p, hi_p = self.size_range(protocol.name, cal, scale)
        path = self.path_rate() * scale
        out = []
        for share, lo, hi in self.channel_shares(protocol.name, cal, scale) \
                or [(None, np.zeros(1), np.full(1, math.inf))]:
            lo, hi = max(lo_p, float(lo[0])), min(hi_p, float(hi[0]))
            out += [(*(float(x[0]) for x in line), lo, hi)
                    for line in combine(t, beta, lat_all, lat_up, so, protocol, cal, shape,
                                        split=True, share=share, path=path)]
        cache[key] = (protocol, cal, out)   # both kept: their ids stay theirs
        return out

    def channel_shares(self, protocol: str, cal: Calibration, scale: float = 1.0
                       ) -> list[tuple[np.ndarray, ...]]:
        """:func:`~netmodel.collectives.protocol_lines.channel_lines` of this collective
        alone (arrays of one value): a
        send-recv whose steps stay inside one NVLink domain has under Simple a line per
        share of the links' rate, on the channels NCCL gives a peer's bytes by size;
        :meth:`line_parts` holds them, each at its own sizes (:meth:`size_range` with its
        ``b``), on its slowest path (:meth:`path_rate`, times ``scale``: every link's
        bandwidth multiplied by it, :meth:`scaled_line_parts`)."""
        cache = self.__dict__.setdefault("_share_cache", {})
        hit = cache.get((protocol, id(cal), scale))
        if hit is not None and hit[0] is cal:
            return hit[1]
        out = channel_lines(self.op, self.algorithm, protocol, [len(self.group)],
                            any(s.scaleout for s in self.steps), cal, self.path_rate() * scale)
        cache[(protocol, id(cal), scale)] = (cal, out)   # cal kept: its id stays its own
        return out

    def path_rate(self) -> float:
        """The slowest rate, as NCCL's topology sees its path, of any link its steps'
        transfers cross (:attr:`StepCost.path_bandwidth`, else the bottleneck's line rate;
        :func:`~netmodel.collectives.step_cost.link_path_rates`): the path NCCL gives a send/recv peer its channels by and
        whose rate a channel's share is of; 0 where no step moves bytes."""
        rates = [r for r in (s.path_bandwidth or s.bottleneck_bandwidth for s in self.steps)
                 if r > 0]
        return min(rates) if rates else 0.0

    def linear(self, protocol: Protocol, cal: Calibration) -> tuple[float, float]:
        """``(a, b)`` of the large-message line: ``time = a + b * n`` once every pipeline
        is full (exact at every size when nothing fills; see :meth:`lines`)."""
        return self.lines(protocol, cal)[-1]

    def _ceilings(self, protocol: Protocol, cal: Calibration) -> dict[int, InSwitchCeiling]:
        """The pipelines whose steady time per byte the in-switch reduction ceiling sets (as
        :func:`combine` takes it: the slowest member, or the largest sum over a bound, each
        step at least its floor over the ceiling), each with its :class:`InSwitchCeiling`
        (``slowdown``: that time over the links' alone)."""
        net, ceiling = cal.in_network, cal.in_network_ceiling
        terms: dict[int, dict] = {}
        for s in self.steps:
            if s.pipeline == 0:
                continue
            fac = (net if s.in_network else protocol).bandwidth_factor
            wire = s.repeat * s.beta / fac
            both = s.repeat * max(s.beta / fac, s.floor / ceiling)
            key = ("m", id(s)) if s.member and not s.bound else ("b", s.bound)
            if s.member or s.bound:
                w, b = terms.setdefault(s.pipeline, {}).get(key, (0.0, 0.0))
                terms[s.pipeline][key] = (w + wire, b + both)
        out = {}
        for pipe, ts in terms.items():
            links = max(w for w, _ in ts.values())
            steady = max(b for _, b in ts.values())
            phase = next((x for x in self.steps if x.pipeline == pipe and x.member
                          and x.floor > 0), None)
            if steady > links and phase is not None:
                out[pipe] = InSwitchCeiling.of(phase.heads, phase.floor, ceiling,
                                               steady / links if links > 0 else math.inf,
                                               steady)
        return out

    def _ceiling_costs(self, protocol: Protocol, cal: Calibration, nbytes: float) -> bool:
        """Whether the in-switch reduction ceiling adds time at ``nbytes``: the time with it
        over the time without it (:func:`combine`'s lines at a ceiling of 0, none). Below a
        pipeline's slice its phases run one after another, each at its links' rate where
        that is the slower, and the ceiling on their pipeline's steady rate sets nothing."""
        at = lambda c: min(a + b * nbytes for a, b in self.lines(protocol, c))  # noqa: E731
        return at(cal) > at(_without_ceiling(cal)) * (1 + 1e-12)

    def timings(self, protocol: Protocol, cal: Calibration, nbytes: float
                ) -> tuple[StepTiming, ...]:
        """Per-step :class:`StepTiming` at one size (the algorithm's phases; a pipeline's
        phases overlap, so their times add up to more than the pipeline takes). A phase of
        NCCL's tree or NVLSTree takes at least its share of their channel cap
        (:func:`combine`). Where the cap binds a step, or the in-switch ceiling binds it or
        its pipeline's steady rate (:meth:`_ceilings`), that, not a link, is its
        bottleneck."""
        out = []
        for share, lo, hi in self.channel_shares(protocol.name, cal):  # as line_parts
            if lo[0] < nbytes <= hi[0]:
                protocol = replace(protocol,
                                   bandwidth_factor=protocol.bandwidth_factor * share[0])
                break
        caps = has_tree_caps(cal)
        gamma = cal.reduction_rate
        net = cal.in_network
        ceiling = cal.in_network_ceiling
        # the ceiling named only where it adds time at this size
        binds = ceiling > 0 and self._ceiling_costs(protocol, cal, nbytes)
        tops = self._ceilings(protocol, cal) if binds else {}
        # the cap's share a phase of NCCL's two (reduce, broadcast), whether one step runs
        # both (Tree) or each its own (NVLSTree): TreeCap.algbw
        phase_share = sum(s.tree_share for s in self.steps
                          if s.member and s.tree_channels > 0) / 2
        t = self._arrays()[0]
        ringnet, treenet = ring_net_mask(t), tree_net_mask(t)
        ll = protocol.name == "LL"   # NCCL's LL cap across nodes, as combine takes it
        for i, s in enumerate(self.steps):
            if not s.member:
                continue
            pr = net if s.in_network else protocol
            if s.latencies is None:
                intra, inter = 0, s.repeat * s.stages
            else:
                intra, inter = s.latencies
            lat_up = s.latency if s.latency_up is None else s.latency_up
            up = pr.step_latency_scaleup
            if ringnet is not None and ringnet[0, i]:
                up = max(up, ring_net_overhead(protocol))
            total = intra * (up + lat_up) \
                + inter * (pr.step_latency(s.scaleout) + s.latency)
            lat = total / s.repeat
            floor = s.floor / ceiling if ceiling > 0 else 0.0
            rate, table, f, own = channel_cap_rate(cal, pr, s.tree_table, s.tree_nodes,
                                                   pr.bandwidth_factor) \
                if caps and s.tree_channels > 0 else (0.0, 0.0, 0.0, False)
            least = s.tree_share / (s.tree_channels * float(rate)) if rate else 0.0
            # NCCL's LL cap across nodes, a repeat's share (its link stays named)
            ll_cap = 0.0
            if ll and ringnet is not None and ringnet[0, i]:
                ll_cap = 1 / ((s.repeat + 1) * float(ll_cap_rate(s.ring_nodes)))
            elif ll and treenet is not None and treenet[0, i]:
                ll_cap = s.tree_share / float(ll_cap_rate(s.tree_nodes))
            wire = s.beta / pr.bandwidth_factor
            if pr.name == "LL" and s.p2p_ranks > 1 and not s.scaleout:
                wire /= float(p2p_ll_share(s.p2p_ranks, cal, s.p2p_peers,   # as combine
                                           self.path_rate()))
            links = max(wire, floor)
            ser = nbytes * max(links, least, ll_cap)
            red = nbytes * s.reduce / gamma if gamma > 0 else 0.0
            cap = top = None
            if least > links and least >= ll_cap:   # the tree cap, not a link, binds
                cap = TreeCap(s.tree_channels, float(table), s.tree_nodes, float(f),
                              least / links if links > 0 else math.inf,
                              "perChMaxTreeLL128Bws" if own else TREE_TABLES[s.tree_table],
                              phase_share)
            elif s.pipeline in tops and s.floor > 0:   # its pipeline's rate: the ceiling's
                top = tops[s.pipeline]
            elif binds and s.pipeline == 0 and floor > wire:   # the ceiling binds it
                top = InSwitchCeiling.of(s.heads, s.floor, ceiling,
                                          floor / wire if wire > 0 else math.inf,
                                          s.repeat * floor)
            bneck, bbw = ((), 0.0) if cap or top else (s.bottleneck, s.bottleneck_bandwidth)
            out.append(StepTiming(s.name, s.repeat, s.stages, s.transfers, lat, ser, red,
                                  s.repeat * (lat + ser + red), bneck, bbw, s.scaleout, cap,
                                  top))
        return tuple(out)


@functools.lru_cache(maxsize=16)
def _without_ceiling(cal: Calibration) -> Calibration:
    """``cal`` with no in-switch reduction ceiling (one object per calibration, so that the
    lines cached by calibration stay few)."""
    return replace(cal, in_network_ceiling=0.0)


def compile_steps(router: Router, op: str, algorithm: str, group: Iterable[Hashable],
                  steps: Iterable[Step], cal: Calibration, cache: dict | None = None,
                  routing: RoutePolicy | None = None) -> CompiledCollective:
    """Cost every step once (steps with identical transfers share one routing), routed
    hop-shortest or under ``routing`` (:mod:`~netmodel.collectives.route_policies`)."""
    group = tuple(group)
    return CompiledCollective(op, algorithm, group,
                              tuple(cost_step(router, s, cal, cache, routing) for s in steps),
                              group_nic(router, group) if (op, algorithm) in SEND_RECV
                              else None, "shortest" if routing is None else routing.name)
