"""Collective algorithms as sequences of steps of point-to-point transfers.

Every generator takes the group (GPU nodes, in ring order) and returns a list of
:class:`Step`. A step is a set of transfers that run at the same time; each transfer moves a
fixed *fraction* of the message size ``n`` (nccl-tests convention: the full buffer on each
rank), so a step's structure does not depend on ``n`` and is costed once for every size.

A step may be *pipelined* (``stages > 1``): a chain or tree through which the whole message
streams in small chunks; it pays its latency once per stage and its link loads once (the
steady state of the pipeline), the textbook pipelined cost ``stages * alpha + n * beta``.

Algorithms (``p`` GPUs; on one ideal switch with per-step latency alpha and per-byte time
beta = 1/B the costs are):

=====================  =========================================================
``ring``               all-reduce ``2(p-1) alpha + 2(p-1)/p n beta``; reduce-scatter,
                       all-gather ``(p-1) alpha + (p-1)/p n beta``; broadcast, reduce
                       (pipelined chain) ``(p-1) alpha + n beta``
``bidirectional-ring`` the ring's steps with half the data going each way round (two
                       counter-rotating rings): the same cost as ``ring`` on a switch, where
                       each GPU port carries the same bytes, but each link of a physical ring
                       or torus carries half, so it halves the transfer time there
``tree``               all-reduce: NCCL's shape, a chain inside each scale-up domain and a
                       double binary tree across domains, pipelined, ``2 d alpha + 2 n beta``
                       (``d`` = chain length + tree depth; ``floor(lg p)`` when every GPU is its
                       own domain, ``p - 1`` inside one domain); broadcast, reduce: one
                       pipelined binary tree ``floor(lg p) alpha + 2 n beta``
``halving-doubling``   Rabenseifner all-reduce ``2 lg p alpha + 2(p-1)/p n beta`` (plus
                       ``2(alpha + n beta)`` to fold in the ranks beyond a power of two);
                       recursive halving reduce-scatter / doubling all-gather
                       ``lg p alpha + (p-1)/p n beta`` (powers of two only)
``recursive-doubling`` all-reduce exchanging whole vectors ``lg p (alpha + n beta)`` (+ fold)
``direct``             one step, everyone to everyone: all-reduce (one-shot)
                       ``alpha + (p-1) n beta``; reduce-scatter, all-gather, all-to-all
                       ``alpha + (p-1)/p n beta``; broadcast, reduce ``alpha + (p-1) n beta``;
                       send-recv (each rank to the next) ``alpha + n beta``
``pairwise``           all-to-all in ``p-1`` shifted exchanges ``(p-1) alpha + (p-1)/p n beta``
``hierarchical``       all-reduce in two levels over ``D`` domains of ``m`` GPUs: ring
                       reduce-scatter inside, ``m`` rings across on ``n/m``, all-gather inside:
                       ``2(m-1) alpha + 2(m-1)/m n beta_in + 2(D-1) alpha + 2(D-1)/(D m) n beta_out``
``in-network``         the switch reduces (NVLS, SHARP): all-reduce ``alpha + (1+1/p) n beta``,
                       reduce-scatter, all-gather, broadcast, reduce ``alpha + n beta``
=====================  =========================================================

In-network all-reduce follows NCCL's NVLS data flow: each GPU pushes its whole buffer into
the switch, which reduces slice ``i`` for its owner GPU ``i`` (``n`` up, ``n/p`` down), and
each owner multicasts its reduced slice back through the switch (``n/p`` up, ``n`` down);
the two phases pipeline, so each GPU link carries ``(1 + 1/p) n`` per direction. busbw can
then exceed the link rate: ``2(p-1)/(p+1)`` times it.

>>> ring_allreduce = generate("ring", "all-reduce", ("a", "b", "c", "d"), None)
>>> [(s.name, s.repeat, len(s.transfers), s.transfers[0]) for s in ring_allreduce]
[('reduce-scatter', 3, 4, ('a', 'b', 0.25)), ('all-gather', 3, 4, ('a', 'b', 0.25))]
"""

from __future__ import annotations

from collections.abc import Callable

from compute.comm import OPERATIONS
from compute.errors import UserError, known
from netmodel.collectives.in_network import in_network_steps
from netmodel.collectives.steps import NotApplicable, Step

__all__ = ["ALGORITHMS", "NCCL_ALGORITHMS", "NotApplicable", "Step", "algorithms_for",
           "domains", "generate"]


# ------------------------------------------------------------------ group structure

def _kind(graph, node):
    return graph.nodes[node].get("kind")


def domain_key(graph, node):
    """The scale-up domain of a GPU: its ``group`` label, else the tier-0 switches it is
    wired to, else its ``server`` label, else itself."""
    data = graph.nodes[node]
    if "group" in data:
        return ("group", data["group"])
    t0 = sorted(str(s) for s in graph._adj[node]
                if _kind(graph, s) == "switch" and graph.nodes[s].get("tier", 0) == 0)
    if t0:
        return ("switch", tuple(t0))
    if "server" in data:
        return ("server", data["server"])
    return ("gpu", node)


def domains(graph, group) -> list[list]:
    """The group split by scale-up domain, domains and members in group order."""
    out: dict = {}
    for g in group:
        out.setdefault(domain_key(graph, g), []).append(g)
    return list(out.values())


def _pow2_floor(p: int) -> int:
    return 1 << (p.bit_length() - 1)


def _heap_edges(members, frac):
    """Child -> parent edges of a binary heap over ``members``."""
    return [(members[i], members[(i - 1) // 2], frac) for i in range(1, len(members))]


def _depth(count: int) -> int:
    return count.bit_length() - 1


def _incoming(transfers) -> float:
    acc: dict = {}
    for _, d, f in transfers:
        acc[d] = acc.get(d, 0.0) + f
    return max(acc.values(), default=0.0)


def _reverse(transfers):
    return tuple((d, s, f) for s, d, f in transfers)


# ------------------------------------------------------------------ ring family

def _ring_pairs(group, frac):
    p = len(group)
    if p == 2:
        return ((group[0], group[1], frac), (group[1], group[0], frac))
    return tuple((group[i], group[(i + 1) % p], frac) for i in range(p))


def ring_all_reduce(group, graph):
    p = len(group)
    t = _ring_pairs(group, 1 / p)
    return [Step("reduce-scatter", t, p - 1, reduce=1 / p), Step("all-gather", t, p - 1)]


def ring_reduce_scatter(group, graph):
    p = len(group)
    return [Step("reduce-scatter", _ring_pairs(group, 1 / p), p - 1, reduce=1 / p)]


def ring_all_gather(group, graph):
    p = len(group)
    return [Step("all-gather", _ring_pairs(group, 1 / p), p - 1)]


def _bidirectional_pairs(group, frac):
    """Both directions of the ring at once, each carrying ``frac`` (two counter-rotating
    rings, each on half of the data)."""
    p = len(group)
    if p == 2:
        return _ring_pairs(group, 2 * frac)
    fwd = tuple((group[i], group[(i + 1) % p], frac) for i in range(p))
    return fwd + _reverse(fwd)


def bidirectional_ring_all_reduce(group, graph):
    p = len(group)
    t = _bidirectional_pairs(group, 1 / (2 * p))
    return [Step("reduce-scatter (both ways)", t, p - 1, reduce=1 / p),
            Step("all-gather (both ways)", t, p - 1)]


def bidirectional_ring_reduce_scatter(group, graph):
    p = len(group)
    return [Step("reduce-scatter (both ways)", _bidirectional_pairs(group, 1 / (2 * p)), p - 1,
                 reduce=1 / p)]


def bidirectional_ring_all_gather(group, graph):
    p = len(group)
    return [Step("all-gather (both ways)", _bidirectional_pairs(group, 1 / (2 * p)), p - 1)]


def _chain(group):
    return tuple((group[i], group[i + 1], 1.0) for i in range(len(group) - 1))


def ring_broadcast(group, graph):
    return [Step("pipelined chain", _chain(group), stages=len(group) - 1)]


def ring_reduce(group, graph):
    t = _reverse(_chain(group))
    return [Step("pipelined chain", t, stages=len(group) - 1, reduce=_incoming(t))]


# ------------------------------------------------------------------ trees

def tree_all_reduce(group, graph):
    doms = domains(graph, group)
    up = []
    for d in doms:  # chain towards the domain's first GPU
        up += [(d[i + 1], d[i], 1.0) for i in range(len(d) - 1)]
    leaders = [d[0] for d in doms]
    if len(leaders) > 1:
        up += _heap_edges(leaders, 0.5)
        up += _heap_edges(leaders[::-1], 0.5)
    stages = max(len(d) for d in doms) - 1 + _depth(len(leaders))
    up = tuple(up)
    return [Step("reduce (pipelined)", up, stages=stages, reduce=_incoming(up)),
            Step("broadcast (pipelined)", _reverse(up), stages=stages)]


def tree_broadcast(group, graph):
    down = _reverse(_heap_edges(list(group), 1.0))
    return [Step("broadcast (pipelined)", down, stages=_depth(len(group)))]


def tree_reduce(group, graph):
    up = tuple(_heap_edges(list(group), 1.0))
    return [Step("reduce (pipelined)", up, stages=_depth(len(group)), reduce=_incoming(up))]


# ------------------------------------------------------------------ recursive algorithms

def _fold(group):
    """Split into the power-of-two core and (extra -> partner) pairs."""
    p = len(group)
    q = _pow2_floor(p)
    return list(group[:q]), [(group[q + i], group[i]) for i in range(p - q)]


def _exchange(core, distance, frac):
    return tuple((core[i], core[i ^ distance], frac) for i in range(len(core)))


def halving_doubling_all_reduce(group, graph):
    core, extra = _fold(group)
    q = len(core)
    steps = []
    if extra:
        steps.append(Step("fold in", tuple((e, c, 1.0) for e, c in extra), reduce=1.0))
    dist, frac = q // 2, 0.5
    while dist >= 1:
        steps.append(Step(f"halving d={dist}", _exchange(core, dist, frac), reduce=frac))
        dist, frac = dist // 2, frac / 2
    dist, frac = 1, 1 / q
    while dist < q:
        steps.append(Step(f"doubling d={dist}", _exchange(core, dist, frac)))
        dist, frac = dist * 2, frac * 2
    if extra:
        steps.append(Step("fold out", tuple((c, e, 1.0) for e, c in extra)))
    return steps


def _need_pow2(group, what):
    p = len(group)
    if p & (p - 1):
        raise NotApplicable(f"{what} needs a power-of-two group, got {p} GPUs")


def halving_reduce_scatter(group, graph):
    _need_pow2(group, "recursive halving")
    q = len(group)
    steps, dist, frac = [], q // 2, 0.5
    while dist >= 1:
        steps.append(Step(f"halving d={dist}", _exchange(list(group), dist, frac), reduce=frac))
        dist, frac = dist // 2, frac / 2
    return steps


def doubling_all_gather(group, graph):
    _need_pow2(group, "recursive doubling")
    q = len(group)
    steps, dist, frac = [], 1, 1 / q
    while dist < q:
        steps.append(Step(f"doubling d={dist}", _exchange(list(group), dist, frac)))
        dist, frac = dist * 2, frac * 2
    return steps


def recursive_doubling_all_reduce(group, graph):
    core, extra = _fold(group)
    q = len(core)
    steps = []
    if extra:
        steps.append(Step("fold in", tuple((e, c, 1.0) for e, c in extra), reduce=1.0))
    dist = 1
    while dist < q:
        steps.append(Step(f"exchange d={dist}", _exchange(core, dist, 1.0), reduce=1.0))
        dist *= 2
    if extra:
        steps.append(Step("fold out", tuple((c, e, 1.0) for e, c in extra)))
    return steps


# ------------------------------------------------------------------ direct

def _all_pairs(group, frac):
    return tuple((a, b, frac) for a in group for b in group if a != b)


def direct_all_reduce(group, graph):
    p = len(group)
    return [Step("one-shot exchange", _all_pairs(group, 1.0), reduce=p - 1.0)]


def direct_reduce_scatter(group, graph):
    p = len(group)
    return [Step("exchange", _all_pairs(group, 1 / p), reduce=(p - 1) / p)]


def direct_all_gather(group, graph):
    return [Step("exchange", _all_pairs(group, 1 / len(group)))]


def direct_all_to_all(group, graph):
    return [Step("exchange", _all_pairs(group, 1 / len(group)))]


def direct_broadcast(group, graph):
    return [Step("root sends", tuple((group[0], b, 1.0) for b in group[1:]))]


def direct_reduce(group, graph):
    return [Step("all send to root", tuple((b, group[0], 1.0) for b in group[1:]),
                 reduce=len(group) - 1.0)]


def direct_send_recv(group, graph):
    return [Step("send-recv", _ring_pairs(group, 1.0))]


def pairwise_all_to_all(group, graph):
    p = len(group)
    return [Step(f"shift {k}", tuple((group[i], group[(i + k) % p], 1 / p) for i in range(p)))
            for k in range(1, p)]


# ------------------------------------------------------------------ hierarchical

def hierarchical_all_reduce(group, graph):
    doms = domains(graph, group)
    n_dom, m = len(doms), len(doms[0])
    if n_dom < 2:
        raise NotApplicable("hierarchical needs GPUs in at least two scale-up domains")
    if m < 2:
        raise NotApplicable("hierarchical needs at least two GPUs per scale-up domain")
    if any(len(d) != m for d in doms):
        raise NotApplicable("hierarchical needs the same number of GPUs in every domain, got "
                            + "/".join(str(len(d)) for d in doms))
    inner = tuple(t for d in doms for t in _ring_pairs(d, 1 / m))
    across = tuple(t for j in range(m) for t in _ring_pairs([d[j] for d in doms],
                                                              1 / (m * n_dom)))
    return [Step("reduce-scatter in domain", inner, m - 1, reduce=1 / m),
            Step("reduce-scatter across", across, n_dom - 1, reduce=1 / (m * n_dom)),
            Step("all-gather across", across, n_dom - 1),
            Step("all-gather in domain", inner, m - 1)]


# ------------------------------------------------------------------ registry

def _innet(op):
    return lambda group, graph: in_network_steps(op, group, graph)


Generator = Callable[[tuple, object], list]

#: algorithm -> op -> generator(group, graph) -> list[Step]
ALGORITHMS: dict[str, dict[str, Generator]] = {
    "ring": {"all-reduce": ring_all_reduce, "reduce-scatter": ring_reduce_scatter,
             "all-gather": ring_all_gather, "broadcast": ring_broadcast, "reduce": ring_reduce},
    "bidirectional-ring": {"all-reduce": bidirectional_ring_all_reduce,
                           "reduce-scatter": bidirectional_ring_reduce_scatter,
                           "all-gather": bidirectional_ring_all_gather},
    "tree": {"all-reduce": tree_all_reduce, "broadcast": tree_broadcast, "reduce": tree_reduce},
    "halving-doubling": {"all-reduce": halving_doubling_all_reduce,
                         "reduce-scatter": halving_reduce_scatter,
                         "all-gather": doubling_all_gather},
    "recursive-doubling": {"all-reduce": recursive_doubling_all_reduce},
    "direct": {"all-reduce": direct_all_reduce, "reduce-scatter": direct_reduce_scatter,
               "all-gather": direct_all_gather, "all-to-all": direct_all_to_all,
               "broadcast": direct_broadcast, "reduce": direct_reduce,
               "send-recv": direct_send_recv},
    "pairwise": {"all-to-all": pairwise_all_to_all},
    "hierarchical": {"all-reduce": hierarchical_all_reduce},
    "in-network": {op: _innet(op) for op in ("all-reduce", "reduce-scatter", "all-gather",
                                             "broadcast", "reduce")},
}

#: The algorithms NCCL itself chooses from (ring, tree, NVLS/CollNet): use these to compare
#: with nccl-tests measurements.
NCCL_ALGORITHMS = ("ring", "tree", "in-network")

assert all(op in OPERATIONS for table in ALGORITHMS.values() for op in table)


def algorithms_for(op: str) -> tuple[str, ...]:
    """Names of the algorithms that implement ``op``."""
    return tuple(name for name, table in ALGORITHMS.items() if op in table)


def generate(algorithm: str, op: str, group, graph) -> list[Step]:
    """The steps of ``algorithm`` for ``op`` over ``group`` (>= 2 GPUs) on ``graph``.

    Raises :class:`~compute.errors.UserError` for an unknown algorithm or one that does not
    implement ``op``, :class:`NotApplicable` when the fabric or group rules it out.
    """
    if algorithm not in ALGORITHMS:
        raise UserError(f"unknown algorithm {algorithm!r}; known: {known(ALGORITHMS)}")
    table = ALGORITHMS[algorithm]
    if op not in table:
        raise UserError(f"algorithm {algorithm!r} does not implement {op!r}; algorithms for "
                        f"{op!r}: {known(algorithms_for(op))}")
    return table[op](tuple(group), graph)
