"""In-network reduction (NVLS on NVSwitch, SHARP on packet switches) as algorithm steps.

The switches that reduce are those with ``in_network_reduction``. When one or more capable
switches are wired to every GPU of the group (an NVSwitch domain, or its several switch
chips as parallel planes) the reduction is one level: each GPU splits its traffic over those
switches in proportion to its link bandwidth. Otherwise each GPU reduces through its own
capable switches and those reduce again one tier up, until a level of switches common to all,
or one where every switch has reduced its slice over the whole group (a multi-level SHARP
tree: in a fat tree the cores of group ``a`` finish the slice every pod's spine ``a`` holds);
a GPU without a capable switch makes it inapplicable.

All-reduce follows NCCL's NVLS data flow at the GPU links: ``(1 + 1/p) n`` each way (the
whole buffer up and the result down, plus each owner's reduced slice down and back up for
the multicast); above the first level each child sends its partial up and receives the
result once. The route latency is the whole tree's: the slowest climb from a GPU to a top
switch (links and the switches crossed), that switch's traversal, and the way back down. Multi-level trees are exact for all-reduce and approximate for the other ops.
"""

from __future__ import annotations

import weakref

from netmodel.collectives.steps import NotApplicable, Step

__all__ = ["has_in_network", "in_network_plan", "in_network_steps"]


def _capable(graph, node) -> bool:
    d = graph.nodes[node]
    return d.get("kind") == "switch" and bool(d.get("in_network_reduction"))


def _planes(graph, nodes, above=-1):
    """Capable switches adjacent to every node of ``nodes`` (tier > ``above``)."""
    common = None
    for x in nodes:
        adj = {s for s in graph._adj[x] if _capable(graph, s)
               and graph.nodes[s].get("tier", 0) > above}
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


def has_in_network(graph) -> bool:
    """Whether any switch of ``graph`` reduces in the network (cached per graph)."""
    hit = _CAPABLE.get(graph)
    if hit is None:
        hit = any(d.get("kind") == "switch" and d.get("in_network_reduction")
                  for _, d in graph.nodes(data=True))
        _CAPABLE[graph] = hit
    return hit


def in_network_plan(graph, group):
    """Reduction tree: a list of levels, each a list of ``(child, switch, share, size)``;
    ``size`` is the fraction of ``n`` the child holds. Raises NotApplicable."""
    if not has_in_network(graph):
        raise NotApplicable("no switch in the fabric has in_network_reduction")
    levels = []
    current = {g: 1.0 for g in group}
    covers = {g: frozenset((g,)) for g in group}  # the members each holder has reduced
    everyone = frozenset(group)
    above = -1
    while True:
        roots = _planes(graph, current, above)
        targets = {}
        if roots:
            for x in current:
                targets[x] = roots
        else:
            for x in current:
                up = {s for s in graph._adj[x] if _capable(graph, s)
                      and graph.nodes[s].get("tier", 0) > above}
                if not up:
                    raise NotApplicable(f"{x!r} has no adjacent switch with "
                                        "in_network_reduction to reduce its data")
                targets[x] = up
        level, nxt, reach = [], {}, {}
        for x, size in current.items():
            for s, share in _split(graph, x, targets[x]).items():
                level.append((x, s, share, size))
                nxt[s] = max(nxt.get(s, 0.0), size * share)
                reach[s] = reach.get(s, frozenset()) | covers[x]
        levels.append(level)
        if roots or all(r == everyone for r in reach.values()):
            # every top switch holds its slice reduced over the whole group (in a fat tree
            # each core reduces the slice its spines hold, with no single common root)
            return levels
        above = min(graph.nodes[s].get("tier", 0) for s in nxt)
        if len(levels) > 8:
            raise NotApplicable("no common switch with in_network_reduction above the group")
        current, covers = nxt, reach


def in_network_steps(op, group, graph) -> list:
    """The one pipelined step of in-network ``op`` over ``group`` (raises NotApplicable)."""
    p = len(group)
    levels = in_network_plan(graph, group)
    root = group[0]
    up_first = {"all-reduce": 1 + 1 / p, "reduce-scatter": 1.0, "all-gather": 1 / p,
                "broadcast": 1.0, "reduce": 1.0}[op]
    down_first = {"all-reduce": 1 + 1 / p, "reduce-scatter": 1 / p, "all-gather": 1.0,
                  "broadcast": 1.0, "reduce": 1.0}[op]
    transfers = []
    # latency: the slowest climb to a top switch (links plus the switches crossed below it),
    # its traversal, and the same way back down; paid once, spread over the stages
    arrive: dict = {}
    for level in levels:
        for child, sw, _, _ in level:
            t = arrive.get(child, 0.0) + _switch_latency(graph, child) \
                + graph._adj[child][sw]["latency"]
            arrive[sw] = max(arrive.get(sw, 0.0), t)
    path = max(2 * arrive[sw] + _switch_latency(graph, sw) for _, sw, _, _ in levels[-1])
    for depth, level in enumerate(levels):
        for child, sw, share, size in level:
            k = size * share
            first = depth == 0
            up = k * (up_first if first else 1.0)
            down = k * (down_first if first else 1.0)
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
    return [Step("in-network", tuple(transfers), stages=len(levels), in_network=True,
                 route_latency=path / len(levels))]
