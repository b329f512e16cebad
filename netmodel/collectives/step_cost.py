"""One step of a collective costed over its routed link loads, independently of the size.

A step's transfers (see :mod:`netmodel.collectives.algorithms`) are routed once
(:meth:`Router.link_loads <netmodel.collectives.route_plans.PlannedRoutes.link_loads>`, or
under a routing policy): every transfer's route scaled by its fraction of ``n`` and summed
into per-link loads. :func:`cost_step` keeps of them what the size does not change
(:class:`StepCost`): the seconds per byte of ``n`` at protocol factor 1 (the bottleneck
link's load coefficient over its line rate times its side's efficiency,
:class:`~netmodel.collectives.calibration.Calibration`), that link, the longest route
latencies, and the slowest path rate NCCL's topology sees (:func:`link_path_rates`). The
fabric's rates as NCCL reads them are here too: a GPU's path through each link
(:func:`link_path_rates`) and its NICs (:func:`gpu_nics`, :func:`group_nic`). How the
steps' costs make a collective's time is :mod:`netmodel.collectives.cost`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from netmodel.collectives.algorithms import Step
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.route_types import KIND_GPU, KIND_SWITCH
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import StepShape, unique

if TYPE_CHECKING:
    from netmodel.collectives.route_policies import RoutePolicy

__all__ = ["FROM_STEP", "LOADS_OF", "ROUTED_BY", "StepCost", "cost_step", "gpu_nics", "group_nic",
           "link_path_rates", "path_rates_of"]


@dataclass(frozen=True)
class StepCost(StepShape):
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
    latency_up : float or None
        Longest route latency among the transfers that stay on the scale-up network (s);
        None: ``latency``.
    latencies, pipeline, bound, ... (:class:`~netmodel.collectives.steps.StepShape`'s fields)
        The step's own, as :class:`~netmodel.collectives.steps.Step` documents them.
    path_bandwidth : float
        The slowest rate, as NCCL's topology sees its path (:func:`link_path_rates`: a
        GPU's links to parallel switch planes together), of every link the step's
        transfers cross; 0: ``bottleneck_bandwidth``.
    """

    name: str
    repeat: int
    stages: int
    transfers: int
    latency: float
    scaleout: bool
    beta: float
    bottleneck: tuple[Hashable, ...]
    bottleneck_bandwidth: float
    reduce: float
    in_network: bool
    latency_up: float | None = None
    path_bandwidth: float = 0.0

    @classmethod
    def of(cls, step: Step, **measured: Any) -> StepCost:
        """``step``'s structure (every field of :data:`FROM_STEP`) with what routing it
        measured (the other fields: ``transfers`` its count, ``latency``, ``beta``, ...)."""
        return cls(**dict(zip(FROM_STEP, _from_step(step), strict=True)), **measured)


#: The fields a :class:`StepCost` copies from its :class:`~netmodel.collectives.steps.Step`:
#: every field the two share but ``transfers`` (a Step's transfers, a StepCost's count).
FROM_STEP = tuple(f.name for f in fields(StepCost)
                  if f.name in {g.name for g in fields(Step)} and f.name != "transfers")
_from_step = attrgetter(*FROM_STEP)


def link_path_rates(router: Router) -> np.ndarray:
    """The rate NCCL's topology gives the path through each directed link of ``router``
    (indexed by link id), worked out once per router with arrays: where the link joins a
    GPU to a switch, the GPU's links to every switch of that switch's tier together (NCCL
    joins a GPU's NVLinks to all its NVSwitch chips into one link to one NVSwitch node:
    NVIDIA/nccl src/graph/topo.cc, ncclTopoAddNvLinks and ncclTopoConnectNodes, "Aggregate
    links into higher bw for NVLink"; so a Lite on ``lite-flat``'s 4 planes of 28.125 GB/s
    has one path of 112.5 GB/s); any other link its own rate. Send/recv's channels a peer
    follow it (:func:`~netmodel.collectives.protocol_lines.p2p_size_range`).

    >>> from topologies import build
    >>> from netmodel.collectives.routing import Router
    >>> r = Router(build("flat:n=8,planes=4,radix=8,gpu=Lite"))
    >>> rates = link_path_rates(r)
    >>> sorted(set((rates / 1e9).round(3).tolist()))
    [112.5]
    """
    return _per_bandwidth(router, "_path_rates", _link_path_rates)


def path_rates_of(router: Router, links: np.ndarray) -> np.ndarray:
    """:func:`link_path_rates` of ``links`` (link ids), worked out only for the GPUs whose
    switch links are among them, each GPU once per router and bandwidth array (a 64-GPU
    all-reduce's steps read those of its 64 GPUs, not the whole fabric's 98,304 links on a
    16,384-GPU fat tree): each GPU's links to the switches of a tier summed in the order
    the whole fabric's are (link by link, ascending), so the same rates to the last bit.
    Once the links asked of a router and bandwidth array add up to its links (a pairwise
    all-to-all's 4,095 steps of 24,576 links each), the whole table (:func:`link_path_rates`)
    answers: never more than twice its work in all.

    >>> from topologies import build
    >>> from netmodel.collectives.routing import Router
    >>> r = Router(build("flat:n=8,planes=4,radix=8,gpu=Lite"))
    >>> links = np.array([r.link_id("gpu0", "plane0"), r.link_id("plane1", "gpu3")])
    >>> (path_rates_of(r, links) / 1e9).round(3).tolist()
    [112.5, 112.5]
    >>> bool((path_rates_of(r, np.arange(r.n_links)) == link_path_rates(r)).all())
    True
    """
    rates, done, asked = _per_bandwidth(router, "_path_rates_of", _unfilled_path_rates)
    asked[0] += len(links)
    if asked[0] > len(rates):
        return link_path_rates(router)[links]
    code, src, dst = router._code, router._src[links], router._dst[links]
    cs, cd = code[src], code[dst]
    gpu = router._gidx[np.concatenate([src[(cs == KIND_GPU) & (cd == KIND_SWITCH)],
                                       dst[(cd == KIND_GPU) & (cs == KIND_SWITCH)]])]
    gpu = unique(gpu[~done[gpu]])   # (np.unique imports numpy.ma on its first call)
    if len(gpu):
        ptr = router._gport_ptr   # each GPU's links up to its switches, ascending
        count = ptr[gpu + 1] - ptr[gpu]
        up = router._gport_link[np.repeat(ptr[gpu] - (np.cumsum(count) - count), count)
                                + np.arange(int(count.sum()))]
        tier = router._tier_arr[router._dst[up]]
        tiers = unique(tier)
        t_of = np.searchsorted(tiers, tier)
        key = np.repeat(np.arange(len(gpu)), count) * len(tiers) + t_of
        total = np.bincount(key, weights=router.bandwidth[up],
                            minlength=len(gpu) * len(tiers))[key]
        rates[up] = total
        rates[up ^ 1] = total   # the links down from those switches to the GPU
        done[gpu] = True
    return rates[links]


def _unfilled_path_rates(router: Router, bw: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """:func:`path_rates_of`'s table: every link's own rate (a GPU's switch links' filled
    in by GPU), by GPU whether its are, and how many links were asked."""
    return np.array(bw, dtype=float), np.zeros(len(router._gpu_n), dtype=bool), [0]


def _link_path_rates(router: Router, bw: np.ndarray) -> np.ndarray:
    src, dst = router._src, router._dst
    code, tier = router._code, router._tier_arr
    out = np.array(bw, dtype=float)
    gpu_up = (code[src] == KIND_GPU) & (code[dst] == KIND_SWITCH)     # each GPU-switch edge once
    if gpu_up.any():
        tiers, t_of = np.unique(tier[dst[gpu_up]], return_inverse=True)
        key = src[gpu_up] * len(tiers) + t_of
        total = np.bincount(key, weights=bw[gpu_up], minlength=len(router._code) * len(tiers))
        out[gpu_up] = total[key]
        down = (code[dst] == KIND_GPU) & (code[src] == KIND_SWITCH)
        t_down = np.searchsorted(tiers, tier[src[down]])
        out[down] = total[dst[down] * len(tiers) + t_down]
    return out


def gpu_nics(router: Router) -> tuple[np.ndarray, np.ndarray]:
    """``(rate, count)`` per node of ``router``: a GPU's links to scale-out switches (its
    NICs, as NCCL's ``ncclTopoGetLocalNetCountByBw`` counts them: NVIDIA/nccl
    src/graph/paths.cc), their line rates together and their number; 0 for any other node
    and for a GPU with none. Worked out once per router and bandwidth array.

    >>> from topologies import build
    >>> from netmodel.collectives.routing import Router
    >>> r = Router(build("rail-optimized:domains=2,gpu=B200-HGX"))
    >>> rate, count = gpu_nics(r)
    >>> float(rate[r._nid["gpu0"]]) / 1e9, int(count[r._nid["gpu0"]])
    (50.0, 1)
    """
    return _per_bandwidth(router, "_gpu_nics", _gpu_nics)


def _gpu_nics(router: Router, bw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    src, dst, code = router._src, router._dst, router._code
    nic = (code[src] == KIND_GPU) & (code[dst] == KIND_SWITCH) & np.asarray(router.scaleout, bool)
    n = len(code)
    return (np.bincount(src[nic], weights=bw[nic], minlength=n),
            np.bincount(src[nic], minlength=n))


def _per_bandwidth(router: Router, name: str, work: Callable[[Router, np.ndarray], Any]) -> Any:
    """``work(router, router.bandwidth)``, kept in the router under ``name`` per bandwidth
    array (the last 8): routers of one shape share their ``__dict__`` (router_for), each
    with its own bandwidths."""
    bw = router.bandwidth
    kept = router.__dict__.setdefault(name, {})
    hit = kept.get(id(bw))
    if hit is not None and hit[0] is bw:
        return hit[1]
    out = work(router, bw)
    if len(kept) >= 8:
        kept.pop(next(iter(kept)))
    kept[id(bw)] = (bw, out)   # bw kept: its id stays its own
    return out


def group_nic(router: Router, group: Iterable[Hashable]) -> tuple[float, int] | None:
    """``(rate, count)`` of the NICs (:func:`gpu_nics`) of the member of ``group`` with the
    slowest, among those that have any (None: none has): NCCL gives every peer one channel
    count, the smallest (ncclTopoComputeP2pChannelsPerPeer),
    :func:`~netmodel.collectives.protocol_lines.p2p_size_range`."""
    rate, count = gpu_nics(router)
    idx = np.fromiter((router._nid[g] for g in group), np.intp)
    idx = idx[count[idx] > 0]
    if not len(idx):
        return None
    j = idx[np.argmin(rate[idx])]
    return float(rate[j]), int(count[j])


def _link_efficiency(router: Router, links: np.ndarray, cal: Calibration) -> np.ndarray:
    return np.where(router.scaleout[links], cal.scaleout_efficiency, cal.scaleup_efficiency)


#: The key of a step cache (:func:`cost_step`'s ``cache``) under which the step cache of a
#: fabric whose loads the cache's fabric shares is kept
#: (:meth:`~netmodel.collectives.model.FabricCostModel.share_loads_of`): a string, never a
#: step's key (its transfers, a tuple or :class:`~netmodel.collectives.steps.Pairs`).
LOADS_OF = "loads of"
#: The key of a step cache under which the router of its fabric is kept, where another
#: fabric's cache takes its loads (:data:`LOADS_OF`): a step neither has routed is routed
#: there, kept by both.
ROUTED_BY = "routed by"


def _routed(router: Router, transfers, cal: Calibration, routing: RoutePolicy | None
            ) -> tuple:
    """A step's ``transfers`` routed on ``router``: ``(beta, bottleneck, its bandwidth,
    latency, scaleout, latency_up, path rate)`` as :func:`cost_step` keeps them."""
    uniq, load, latency, scaleout, latency_up = router.link_loads(transfers) \
        if routing is None else routing.link_loads(router, transfers)
    if not len(uniq):
        return (0.0, (), 0.0, 0.0, False, 0.0, 0.0)
    t = load / (router.bandwidth[uniq] * _link_efficiency(router, uniq, cal))
    j = int(np.argmax(t))
    name, bbw = router.link_name(uniq[j]), float(router.bandwidth[uniq[j]])
    # the slowest path as NCCL sees it of every link the step's transfers cross
    # (not only its bottleneck): NCCL gives each peer the channels of the slowest
    # peer's path (src/graph/paths.cc, ncclTopoComputeP2pChannelsPerPeer)
    return (float(t[j]), name, bbw, latency, scaleout, latency_up,
            float(path_rates_of(router, uniq).min()))


def cost_step(router: Router, step: Step, cal: Calibration, cache: dict | None = None,
              routing: RoutePolicy | None = None) -> StepCost:
    """Route and cost one step (structure only; see :class:`StepCost`); ``routing``: a
    policy other than the hop-shortest routes (:mod:`~netmodel.collectives.route_policies`).
    Where ``cache`` holds (under :data:`LOADS_OF`) the cache of a fabric whose loads this
    one's are, a step that fabric routed in one plan takes its bottleneck, rates and path
    rate, and only its latencies are routed here (:meth:`~netmodel.collectives.route_plans.
    PlannedRoutes.step_latencies`): the same numbers as routing its loads again."""
    key = step.transfers   # as Router.link_loads names them: with PXN where it applies
    if router.pxn_applies(key):
        key = (key, "pxn")
    if routing is not None:
        key = (key, routing.name)
    hit = None if cache is None else cache.get(key)
    twin = None if cache is None else cache.get(LOADS_OF)
    if hit is None and twin is not None:
        hit, lat = twin.get(key), None
        if hit is None and routing is None and ROUTED_BY in twin:
            # routed on the twin's fabric, kept there for each fabric sharing its loads,
            # where its latencies are one plan's (else routed here, in parts; and under
            # a routing policy, whose switch paths are this router's)
            lat = router.step_latencies(step.transfers)
            if lat is not None:
                hit = twin[key] = _routed(twin[ROUTED_BY], step.transfers, cal, None)
        if hit is not None and hit[1] and lat is None:   # with links: this fabric's latencies
            lat = router.step_latencies(step.transfers) if routing is None else \
                getattr(routing, "step_latencies", lambda *_: None)(router, step.transfers)
        if hit is not None and hit[1]:
            hit = None if lat is None else (hit[0], hit[1], hit[2], *lat, hit[6])
        if hit is not None:
            cache[key] = hit
    if hit is None:
        hit = _routed(router, step.transfers, cal, routing)
        if cache is not None:
            cache[key] = hit
    beta, bneck, bbw, latency, scaleout, latency_up, path_bw = hit
    if step.route_latency is not None:
        latency = latency_up = step.route_latency
    return StepCost.of(step, transfers=len(step.transfers), latency=latency, scaleout=scaleout,
                       beta=beta, bottleneck=bneck, bottleneck_bandwidth=bbw,
                       latency_up=latency_up, path_bandwidth=path_bw)
