"""In-network reduction (NVLS on NVSwitch, SHARP on packet switches) as algorithm steps.

The switches that reduce are those with ``in_network_reduction``. Three shapes:

* **One level.** One or more capable switches are wired to every GPU of the group (an
  NVSwitch domain, or its several switch chips as parallel planes; a SHARP leaf): each GPU
  splits its traffic over those switches in proportion to its link bandwidth. All-reduce
  runs as NCCL's NVLS does, in two phases that pipeline over slices of the message: each
  GPU pushes its buffer into the switch, which reduces slice ``i`` for its owner GPU ``i``
  (``n`` up, ``n/p`` down), and each owner multicasts its reduced slice back (``n/p`` up,
  ``n`` down): ``(1 + 1/p) n`` each way on every GPU link once the pipeline is full, the
  two phases one after the other while it fills.
* **Scale-up domains chained into the network** (NVLS + SHARP, NCCL's NVLS with CollNet):
  the group spans several scale-up domains of ``m`` GPUs, each with its own reducing
  switches. In-switch reduce-scatter inside each domain leaves each GPU ``1/m`` of the
  domain's sum; GPUs of the same position in their domains (one per rail) all-reduce their
  slice through the reducing switches above the domains (SHARP: each sends its slice up
  once and gets the result once); in-switch all-gather inside each domain. The three
  phases pipeline; the slowest sets the steady rate.
* **NCCL's CollNet** (:func:`collnet_steps`, the ``collnet-direct`` and ``collnet-chain``
  algorithms): as the chain above, but the GPUs of each domain reduce among themselves
  over point-to-point links (directly, or along a chain per rail) rather than in their
  switch; only the switches above the domains reduce.
* **A multi-level tree** (SHARP on a fat tree): each GPU reduces through its own capable
  switches and those reduce again one tier up, until a level of switches common to all, or
  one where every switch has reduced its slice over the whole group (a multi-level SHARP
  tree: in a fat tree the cores of group ``a`` finish the slice every pod's spine ``a``
  holds); a GPU without a capable switch makes it inapplicable. One pipelined step.

The route latency is the whole tree's: the slowest climb from a GPU to a top switch (links
and the switches crossed), that switch's traversal, and the way back down. In-switch phases
inside a scale-up domain carry a floor: the in-switch all-reduce's busbw cannot exceed the
calibration's ceiling times a GPU's link rate into its domain switches (published
large-domain figures sit far below the ``2(p-1)/(p+1)`` times the link rate that the link
loads alone allow).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.steps import NotApplicable, Pairs, Step, union_of

if TYPE_CHECKING:
    import networkx as nx

    #: One edge of a reduction tree: ``(child, switch, share, size)``.
    Edge = tuple[Hashable, Hashable, float, float]
    #: A transfer ``(src, dst, fraction of n)``.
    Transfer = tuple[Hashable, Hashable, float]

__all__ = ["COLLNET_MAX_LOCAL", "collnet_steps", "domain_planes", "has_in_network",
           "in_network_plan", "in_network_steps", "nvls_phases", "tree_transfers"]


def _capable_switches(graph) -> frozenset:
    """The switches of ``graph`` that reduce in the network (found once per graph)."""
    hit = _CAPABLE.get(graph)
    if hit is None:
        hit = _CAPABLE[graph] = frozenset(
            n for n, d in graph._node.items()
            if d.get("kind") == "switch" and d.get("in_network_reduction"))
    return hit


def _up(graph, x, above, capable) -> set:
    """Capable switches adjacent to ``x`` of tier > ``above`` (in adjacency order)."""
    data = graph._node
    return {s for s in graph._adj[x] if s in capable and data[s].get("tier", 0) > above}


def _planes(graph, nodes, above=-1):
    """Capable switches adjacent to every node of ``nodes`` (tier > ``above``)."""
    common = None
    capable = _capable_switches(graph)
    for x in nodes:
        adj = _up(graph, x, above, capable)
        common = adj if common is None else common & adj
        if not common:
            return set()
    return common or set()


def _switch_latency(graph, node) -> float:
    d = graph.nodes[node]
    return float(d.get("latency", 0.0)) if d.get("kind") == "switch" else 0.0


def _split(graph, node, targets):
    """Shares of ``node``'s traffic over ``targets``, in proportion to link bandwidth."""
    adj = graph._adj[node]
    bw = {t: adj[t]["bandwidth"] for t in sorted(targets, key=str)}
    total = sum(bw.values())
    return {t: b / total for t, b in bw.items()}


_CAPABLE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def has_in_network(graph: nx.Graph) -> bool:
    """Whether any switch of ``graph`` reduces in the network (cached per graph)."""
    return bool(_capable_switches(graph))


def in_network_plan(graph: nx.Graph, group: Collection[Hashable], above: int = -1
                    ) -> list[list[Edge]]:
    """Reduction tree: a list of levels, each a list of ``(child, switch, share, size)``;
    ``size`` is the fraction of ``n`` the child holds. Only switches of tier > ``above``
    take part. Raises NotApplicable."""
    if not has_in_network(graph):
        raise NotApplicable("no switch in the fabric has in_network_reduction")
    levels = []
    current = {g: 1.0 for g in group}
    covers = {g: frozenset((g,)) for g in group}  # the members each holder has reduced
    everyone = frozenset(group)
    while True:
        roots = _planes(graph, current, above)
        targets = {}
        if roots:
            for x in current:
                targets[x] = roots
        else:
            for x in current:
                up = _up(graph, x, above, _capable_switches(graph))
                if not up:
                    raise NotApplicable(f"{x!r} has no adjacent switch with "
                                        "in_network_reduction to reduce its data")
                targets[x] = up
        nxt: dict[Hashable, float]
        # the members each switch has reduced, as the sets of its children, joined once:
        # a union per child copied the set so far (quadratic: 100,000 GPUs on one switch
        # took minutes)
        parts: dict[Hashable, list[frozenset[Hashable]]]
        level, nxt, parts = [], {}, {}
        for x, size in current.items():
            for s, share in _split(graph, x, targets[x]).items():
                level.append((x, s, share, size))
                nxt[s] = max(nxt.get(s, 0.0), size * share)
                parts.setdefault(s, []).append(covers[x])
        reach = {s: frozenset().union(*p) for s, p in parts.items()}
        levels.append(level)
        if roots or all(r == everyone for r in reach.values()):
            # every top switch holds its slice reduced over the whole group (in a fat tree
            # each core reduces the slice its spines hold, with no single common root)
            return levels
        above = min(graph.nodes[s].get("tier", 0) for s in nxt)
        if len(levels) > 8:
            raise NotApplicable("no common switch with in_network_reduction above the group")
        current, covers = nxt, reach


def _path_latency(graph, levels) -> float:
    """The slowest climb to a top switch (links plus the switches crossed below it), its
    traversal, and the same way back down."""
    arrive: dict = {}
    for level in levels:
        for child, sw, _, _ in level:
            t = arrive.get(child, 0.0) + _switch_latency(graph, child) \
                + graph._adj[child][sw]["latency"]
            arrive[sw] = max(arrive.get(sw, 0.0), t)
    return max(2 * arrive[sw] + _switch_latency(graph, sw) for _, sw, _, _ in levels[-1])


def tree_transfers(op: str, levels: Iterable[Iterable[Edge]], root: Hashable,
                   first_up: float, first_down: float, scale: float = 1.0
                   ) -> list[Transfer]:
    """The transfers of ``op`` through the reduction tree ``levels``: at the first level
    each child sends ``first_up`` and receives ``first_down`` (per byte it holds, times its
    share of each switch), above it each child sends its partial up and gets the result
    once; all times ``scale``."""
    transfers = []
    for depth, level in enumerate(levels):
        for child, sw, share, size in level:
            k = size * share * scale
            first = depth == 0
            up = k * (first_up if first else 1.0)
            down = k * (first_down if first else 1.0)
            if first and op == "broadcast" and child != root:
                up = 0.0
            if first and op == "reduce" and child != root:
                down = 0.0
            if first and op == "broadcast" and child == root:
                down = 0.0
            if up:
                transfers.append((child, sw, up))
            if down:
                transfers.append((sw, child, down))
    return transfers


def _link_rate(graph, gpu, planes) -> float:
    adj = graph._adj[gpu]
    return float(sum(adj[s]["bandwidth"] for s in planes))


def domain_planes(graph: nx.Graph, domains: Iterable[Collection[Hashable]]
                  ) -> list[set[Hashable]] | None:
    """For each domain (a list of GPUs), the capable scale-up (tier-0) switches wired to all
    its GPUs; None if a domain has none, or if two domains share one (then they are one
    in-switch domain)."""
    if not has_in_network(graph):
        return None
    seen: set[Hashable]
    out, seen = [], set()
    for d in domains:
        planes = {s for s in _planes(graph, d) if graph.nodes[s].get("tier", 0) == 0}
        if not planes or planes & seen:
            return None
        seen |= planes
        out.append(planes)
    return out


def nvls_phases(graph: nx.Graph, domains: Sequence[Sequence[Hashable]],
                planes: Sequence[Collection[Hashable]], *, pipeline: int = 1,
                in_bound: int = 1) -> tuple[Step, Step, Step]:
    """NCCL's NVLS reduce-scatter and all-gather inside each domain (GPU lists of one size
    ``m``, with their reducing switches ``planes``): ``(reduce-scatter, all-gather,
    union)`` steps of pipeline ``pipeline``, the union in bound ``in_bound``. Each phase
    carries the floor of the in-switch ceiling: ``(m-1)/m`` over the slowest GPU's link
    rate into its switches, per byte of ``n``."""
    m = len(domains[0])
    rs, ag = [], []
    slowest = min(_link_rate(graph, g, pl) for d, pl in zip(domains, planes, strict=True)
                  for g in d)
    path = 0.0
    for d, pl in zip(domains, planes, strict=True):
        for g in d:
            for s, share in _split(graph, g, pl).items():
                rs += [(g, s, share), (s, g, share / m)]
                ag += [(g, s, share / m), (s, g, share)]
                lat = graph._adj[g][s]["latency"]
                path = max(path, 2 * lat + _switch_latency(graph, s))
    floor = (m - 1) / m / slowest
    rs_step = Step("in-switch reduce-scatter", tuple(rs), in_network=True,
                   route_latency=path, latencies=(0, 1), pipeline=pipeline, heads=m,
                   floor=floor)
    ag_step = Step("in-switch all-gather", tuple(ag), in_network=True,
                   route_latency=path, latencies=(0, 0), pipeline=pipeline, heads=m,
                   floor=floor)
    both = union_of("in-switch phases together", [rs_step, ag_step], pipeline=pipeline,
                    bound=in_bound, heads=m, floor=2 * floor, route_latency=path)
    return rs_step, ag_step, both


def _first_flow(graph, levels, op: str, p: int) -> tuple[float, float]:
    """Bytes a GPU sends up and receives at the first level, per byte it holds: NVLS's flow
    (the owners' multicast on top of the push, ``1 + 1/p`` each way) on scale-up switches,
    SHARP's (its data up, the result down) on the scale-out network."""
    nvls = all(graph.nodes[sw].get("tier", 0) == 0 for _, sw, _, _ in levels[0])
    if op == "all-reduce":
        x = 1 + 1 / p if nvls else 1.0
        return x, x
    return {"reduce-scatter": (1.0, 1 / p), "all-gather": (1 / p, 1.0), "broadcast": (1.0, 1.0),
            "reduce": (1.0, 1.0)}[op]


def in_network_steps(op: str, group: Sequence[Hashable], graph: nx.Graph,
                     rails: Callable[[], np.ndarray | None] | None = None) -> list[Step]:
    """The steps of in-network ``op`` over ``group`` (raises NotApplicable). ``rails``: a
    callable giving the group's ``(domains, m)`` table of positions when it spans several
    scale-up domains of one size, else None
    (:func:`~netmodel.collectives.group_domains.rail_table`); asked only when no switch is
    wired to every GPU of the group."""
    p = len(group)
    if not has_in_network(graph):
        raise NotApplicable("no switch in the fabric has in_network_reduction")
    if not _planes(graph, group):
        table = None if rails is None else rails()
        doms = None if table is None else [[group[i] for i in row] for row in table.tolist()]
        planes = None if doms is None else domain_planes(graph, doms)
        if planes is not None:
            return _across_domains(op, group, graph, doms, planes)
    levels = in_network_plan(graph, group)
    path = _path_latency(graph, levels)
    if len(levels) == 1 and op == "all-reduce":
        nvls = all(graph.nodes[sw].get("tier", 0) == 0 for _, sw, _, _ in levels[0])
        planes = {sw for _, sw, _, _ in levels[0]}
        if nvls:
            return list(nvls_phases(graph, [list(group)], [planes]))
        x = 1.0  # SHARP under one switch: each GPU's data up, the result down
        rs = tuple(t for g in group for sw, sh in _split(graph, g, planes).items()
                   for t in ((g, sw, sh * x), (sw, g, sh / p)))
        ag = tuple(t for g in group for sw, sh in _split(graph, g, planes).items()
                   for t in ((g, sw, sh / p), (sw, g, sh * x)))
        rs_step = Step("reduce-scatter (in-switch)", rs, in_network=True, route_latency=path,
                       latencies=(0, 1), pipeline=1, heads=p)
        ag_step = Step("all-gather (in-switch)", ag, in_network=True, route_latency=path,
                       latencies=(0, 0), pipeline=1, heads=p)
        return [rs_step, ag_step, union_of("in-switch phases together", [rs_step, ag_step],
                                           pipeline=1, bound=1, heads=p, route_latency=path)]
    up_first, down_first = _first_flow(graph, levels, op, p)
    transfers = tree_transfers(op, levels, group[0], up_first, down_first)
    return [Step("in-network", tuple(transfers), stages=len(levels), in_network=True,
                 route_latency=path / len(levels))]


def _across_domains(op, group, graph, doms, planes) -> list:
    """NVLS inside each scale-up domain chained into in-network reduction above them."""
    if op != "all-reduce":
        raise NotApplicable(f"in-network {op} across scale-up domains is not modelled (NCCL "
                            "runs it as a ring)")
    rs, ag, both = nvls_phases(graph, doms, planes)
    across = _across_switch(graph, doms, "in-network-tree runs a tree across them", len(doms[0]))
    return [rs, across, ag, both]


def _across_switch(graph, doms, otherwise: str, heads: int) -> Step:
    """The all-reduce across scale-up domains (lists of ``m`` GPUs) in the reducing switches
    above them: the GPUs of each position (a rail) all-reduce their ``1/m`` slice through
    their own ports, each sending it up once and getting the result once (SHARP). Raises
    NotApplicable, ending with ``otherwise``, where no switch above the domains reduces."""
    m = len(doms[0])
    transfers, path = [], 0.0
    for r in range(m):
        rail = [d[r] for d in doms]
        try:
            levels = in_network_plan(graph, rail, above=0)
        except NotApplicable as exc:
            raise NotApplicable("no switch above the scale-up domains reduces in the network "
                                f"({exc}); {otherwise}") from None
        transfers += tree_transfers("all-reduce", levels, rail[0], 1.0, 1.0, scale=1 / m)
        path = max(path, _path_latency(graph, levels))
    return Step("all-reduce across (switch)", tuple(transfers), in_network=True,
                route_latency=path, latencies=(0, 1), pipeline=1, bound=2, heads=heads)


#: The most GPUs a scale-up domain may have for NCCL's CollNet algorithms:
#: ``NCCL_MAX_DIRECT_ARITY + 1`` = 8. NVIDIA/nccl src/enqueue.cc (updateCollCostTable)
#: skips CollNetDirect ("CollNetDirect is only supported for up to 8 local GPUs") and
#: CollNetChain ("Disable CollNet Chain for more than 8 local GPUs") above it.
COLLNET_MAX_LOCAL = 8


def collnet_steps(kind: str, group: Sequence[Hashable], graph: nx.Graph,
                  table: np.ndarray) -> list[Step]:
    """NCCL's CollNet all-reduce across the ``D`` scale-up domains of ``m`` GPUs of
    ``table`` (positions in ``group``, :func:`~netmodel.collectives.group_domains.rail_table`),
    the domains' GPUs reducing among themselves over point-to-point links (no in-switch
    reduction inside, whether the domain's switch could or not) and the switches above
    the domains reducing across them (SHARP), each GPU's ``1/m`` share through its own
    port (NCCL's heads, one a NIC), pipelined:

    * ``kind="direct"`` (CollNetDirect, src/device/all_reduce.h): every GPU scatters
      ``1/m`` of its buffer to each other GPU of its domain, each reduces the share it
      heads and sends it into the network, receives the result and sends it to every
      other GPU of its domain: ``2(m-1)/m`` of ``n`` each way on a GPU's scale-up port,
      ``n/m`` each way on its NIC. NCCL's latency (src/graph/tuning.cc): ``2 intraLat +
      interLat`` (its ``0.4 us`` per peer of "arity serialization" is not modelled).
    * ``kind="chain"`` (CollNetChain): one channel per rail, each on ``1/m`` of the data:
      channel ``c`` reduces along a chain of the domain's GPUs ending at GPU ``c``, which
      sends it into the network, and broadcasts the result back down the chain; summed
      over the channels, the same bytes on every port as ``direct``. Latency ``2(m-1)
      intraLat + interLat``; a slice is ``channels x chunk`` bytes (NCCL's loop, no heads).

    Raises NotApplicable where a domain has more than :data:`COLLNET_MAX_LOCAL` GPUs or no
    switch above the domains reduces."""
    n_dom, m = table.shape
    name = f"collnet-{kind}"
    if m > COLLNET_MAX_LOCAL:
        raise NotApplicable(f"{name} runs on scale-up domains of at most {COLLNET_MAX_LOCAL} "
                            f"GPUs (NCCL_MAX_DIRECT_ARITY + 1), got {m}")
    if not has_in_network(graph):
        raise NotApplicable("no switch in the fabric has in_network_reduction")
    doms = [[group[i] for i in row] for row in table.tolist()]
    heads = m if kind == "direct" else 1
    across = _across_switch(graph, doms, f"{name} needs SHARP across them", heads)
    if kind == "direct":
        a, b = np.nonzero(~np.eye(m, dtype=bool))     # every ordered pair of positions
        inner = Pairs(group, table[:, a].ravel(), table[:, b].ravel(), 1 / m)
        rs = Step("reduce-scatter in domain (direct)", inner, reduce=inner.incoming(),
                  latencies=(1, 0), pipeline=1, heads=heads)
        ag = Step("all-gather in domain (direct)", inner.reversed(), latencies=(1, 0),
                  pipeline=1, heads=heads)
    else:
        i = np.arange(m)   # every hop i+1 -> i but c -> c-1 in channel c: m-1 of m channels
        up = Pairs(group, table[:, (i + 1) % m].ravel(), table[:, i].ravel(), (m - 1) / m)
        rs = Step("reduce up the chains", up, stages=m - 1, reduce=up.incoming(),
                  latencies=(m - 1, 0), pipeline=1, heads=heads)
        ag = Step("broadcast down the chains", up.reversed(), stages=m - 1,
                  latencies=(m - 1, 0), pipeline=1, heads=heads)
    inside = union_of("in-domain phases together", [rs, ag], pipeline=1, bound=1,
                      heads=heads)
    return [rs, across, ag, inside]
