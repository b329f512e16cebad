"""Collective algorithms as sequences of steps of point-to-point transfers.

Every generator takes the group (GPU nodes, in ring order) and returns a list of
:class:`Step`. A step is a set of transfers that run at the same time; each transfer moves a
fixed *fraction* of the message size ``n`` (nccl-tests convention: the full buffer on each
rank), so a step's structure does not depend on ``n`` and is costed once for every size.

A step may be *pipelined* (``stages > 1``): a chain or tree through which the whole message
streams in small chunks; it pays its latency once per stage and its link loads once (the
steady state of the pipeline), the textbook pipelined cost ``stages * alpha + n * beta``, plus
the fill of its first slice (:func:`~netmodel.collectives.cost.combine`). Steps may also form
a *pipeline* of phases (``Step.pipeline``: hierarchical and in-switch algorithms), whose steady
time is its slowest phase's, not their sum.

Across scale-up domains the algorithms follow NCCL's channels: across ``D`` domains of ``m``
GPUs the ring and the tree run one instance per rail (GPU ``c`` of every domain, each with its
own NIC), each on ``1/m`` of the data, and count NCCL's latencies (a ring pass pays the
network latency on its ``D - 1`` hops between domains and the scale-up one on the rest; a
tree pays ``m - 1`` scale-up and ``lg D`` network latencies each way).

Algorithms (``p`` GPUs; on one ideal switch with per-step latency alpha and per-byte time
beta = 1/B the costs are):

=====================  =========================================================
``ring``               all-reduce ``2(p-1) alpha + 2(p-1)/p n beta``; reduce-scatter,
                       all-gather ``(p-1) alpha + (p-1)/p n beta``; broadcast, reduce
                       (pipelined chain) ``(p-1) alpha + n beta``; across domains one ring
                       per rail (NCCL's channels, PXN at the domain's edge)
``bidirectional-ring`` the ring's steps with half the data going each way round (two
                       counter-rotating rings): the same cost as ``ring`` on a switch, where
                       each GPU port carries the same bytes, but each link of a physical ring
                       or torus carries half, so it halves the transfer time there
``tree``               all-reduce: NCCL's shape, a chain inside each scale-up domain and a
                       double binary tree across domains (NCCL's two trees), pipelined, its
                       reduce and broadcast at once on opposite directions of each link (as
                       NCCL runs them), ``2 d alpha + 2 n beta`` (``d`` = chain length + tree
                       depth; ``floor(lg p)`` when every GPU is its own domain, ``p - 1``
                       inside one domain; ``n beta`` on 2 GPUs, a ring's bytes, and ``1.5 n
                       beta`` across 3 domains, NCCL's two chains; its fill over the chain
                       and NCCL's trees' ``ceil(lg D)`` hops, their root having one child),
                       one tree per rail across domains; broadcast, reduce: one pipelined
                       binary tree ``floor(lg p) alpha + 2 n beta``
``halving-doubling``   Rabenseifner all-reduce ``2 lg p alpha + 2(p-1)/p n beta`` (plus
                       ``2(alpha + n beta)`` to fold in the ranks beyond a power of two);
                       recursive halving reduce-scatter / doubling all-gather
                       ``lg p alpha + (p-1)/p n beta`` (powers of two only)
``recursive-doubling`` all-reduce exchanging whole vectors ``lg p (alpha + n beta)`` (+ fold)
``direct``             one step, everyone to everyone: all-reduce (one-shot)
                       ``alpha + (p-1) n beta``; reduce-scatter, all-gather, all-to-all
                       ``alpha + (p-1)/p n beta``; broadcast, reduce ``alpha + (p-1) n beta``;
                       send-recv (each rank to the next) ``alpha + n beta``
``two-shot``           all-reduce as a direct reduce-scatter then a direct all-gather
                       ``2 alpha + 2(p-1)/p n beta`` (vLLM's custom all-reduce, two-stage);
                       only where every two GPUs of the group share a cable (full meshes),
                       where each GPU sends on all its ``p-1`` links at once: ``beta`` is
                       then one over the GPU's whole injection bandwidth
``torus``              all-reduce on a ``k``-dimensional torus (the ``torus`` builder's, or a
                       sub-torus of it): bidirectional rings along every dimension at once,
                       the data in ``k`` chunks each taking the dimensions in a rotated
                       order; equal sides ``s``, ports of ``b``:
                       ``2 k (s-1) alpha + 2 (p-1)/p n / (2 k b)``; reduce-scatter,
                       all-gather (its halves) ``k (s-1) alpha + (p-1)/p n / (2 k b)``;
                       unequal sides weight the chunks (``w_j`` proportional to
                       ``r_j s_j/(s_j-1)``, ``r_j`` a GPU's rate along dimension ``j``, where
                       no side is 2)
``pairwise``           all-to-all in ``p-1`` shifted exchanges ``(p-1) alpha + (p-1)/p n beta``
``hierarchical``       all-reduce in two levels over ``D`` domains of ``m`` GPUs, pipelined:
                       reduce-scatter inside (in the switch where it reduces, else a ring),
                       ``m`` rings across on ``n/m``, all-gather inside:
                       ``2(m-1) alpha + 2(D-1) alpha + max(2(m-1)/m n beta_in,
                       2(D-1)/(D m) n beta_out)``; on links the two levels share, the
                       loads of all four phases add up
``in-network``         the switch reduces (NVLS, SHARP): all-reduce ``alpha + (1+1/p) n beta``
                       on NVSwitch (``alpha + n beta`` under one SHARP switch), reduce-scatter,
                       all-gather, broadcast, reduce ``alpha + n beta``; across scale-up
                       domains, NVLS inside each chained into SHARP across (NVLS + CollNet)
``in-network-tree``    all-reduce across scale-up domains (NCCL's NVLSTree): NVLS inside each
                       domain, a double binary tree per rail across, pipelined
``collnet-direct``     all-reduce across scale-up domains of at most 8 GPUs (NCCL's
                       CollNetDirect): direct reduce-scatter inside each domain over
                       point-to-point links, each GPU's ``1/m`` share reduced in the switches
                       above (SHARP) through its own NIC, direct all-gather inside, pipelined:
                       ``2 alpha_in + alpha_out + max(2(m-1)/m n beta_in, n/m beta_out)``
``collnet-chain``      the same across a chain of each domain's GPUs per rail (NCCL's
                       CollNetChain): the same bytes per port, ``2(m-1)`` scale-up latencies
=====================  =========================================================

This module is the interface: the registry (:data:`ALGORITHMS`), :func:`generate` and
:func:`precheck`. The generators live one shape to a module:
:mod:`~netmodel.collectives.algo_ring` (``ring``, ``bidirectional-ring``),
:mod:`~netmodel.collectives.algo_tree`, :mod:`~netmodel.collectives.algo_recursive`
(``halving-doubling``, ``recursive-doubling``), :mod:`~netmodel.collectives.algo_direct`
(``direct``, ``two-shot``, ``pairwise``), :mod:`~netmodel.collectives.algo_torus`,
:mod:`~netmodel.collectives.algo_hierarchical` (``hierarchical``, ``in-network-tree``) and
:mod:`~netmodel.collectives.in_network` (``in-network``, ``collnet-*``); the group's
scale-up domains and rails they read are :mod:`~netmodel.collectives.group_domains`'s.

>>> ring_allreduce = generate("ring", "all-reduce", ("a", "b", "c", "d"), None)
>>> [(s.name, s.repeat, len(s.transfers), s.transfers[0]) for s in ring_allreduce]
[('reduce-scatter', 3, 4, ('a', 'b', 0.25)), ('all-gather', 3, 4, ('a', 'b', 0.25))]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING

from compute.comm import OPERATIONS
from compute.errors import UserError, known, lookalike
from compute.validate import MAX_WHOLE, describe, number
from netmodel.collectives.algo_direct import (
    direct_all_gather,
    direct_all_reduce,
    direct_all_to_all,
    direct_broadcast,
    direct_reduce,
    direct_reduce_scatter,
    direct_send_recv,
    pairwise_all_to_all,
    pairwise_linked,
    two_shot_all_reduce,
)
from netmodel.collectives.algo_hierarchical import (
    hierarchical_all_reduce,
    in_network_tree_all_reduce,
    rails_or_refuse,
)
from netmodel.collectives.algo_recursive import (
    doubling_all_gather,
    halving_doubling_all_reduce,
    halving_reduce_scatter,
    recursive_doubling_all_reduce,
)
from netmodel.collectives.algo_ring import (
    bidirectional_ring_all_gather,
    bidirectional_ring_all_reduce,
    bidirectional_ring_reduce_scatter,
    ring_all_gather,
    ring_all_reduce,
    ring_broadcast,
    ring_reduce,
    ring_reduce_scatter,
)
from netmodel.collectives.algo_torus import (
    torus_all_gather,
    torus_all_reduce,
    torus_reduce_scatter,
)
from netmodel.collectives.algo_tree import tree_all_reduce, tree_broadcast, tree_reduce
from netmodel.collectives.group_domains import domain_labels, rail_table
from netmodel.collectives.in_network import collnet_steps, in_network_steps
from netmodel.collectives.names import ALGORITHM_NAMES, NCCL_OPS
from netmodel.collectives.steps import NotApplicable, Pairs, Step

if TYPE_CHECKING:
    import networkx as nx

# domain_labels is re-exported: netmodel.collectives.concurrent_groups imports it from here
__all__ = ["ALGORITHMS", "ALGORITHM_ALIASES", "SEND_RECV_OPS", "NotApplicable", "Pairs", "Step", "algorithms_for",
           "domain_labels", "generate", "precheck", "quadratic", "transfer_count",
           "unknown_algorithm"]


def quadratic(algorithm: str, op: str) -> bool:
    """Whether ``algorithm`` routes ``p (p - 1)`` transfers for ``op`` on ``p`` GPUs (every
    GPU to every other), the work that is counted and bounded before it is built.

    >>> quadratic("direct", "all-reduce"), quadratic("direct", "broadcast")
    (True, False)
    """
    return (algorithm == "direct" and op in ("all-reduce", "reduce-scatter", "all-gather",
                                             "all-to-all")) \
        or (algorithm == "pairwise" and op == "all-to-all") \
        or (algorithm == "two-shot" and op == "all-reduce")


def transfer_count(algorithm: str, op: str, p: int) -> int:
    """Transfers ``algorithm`` routes for ``op`` on ``p`` GPUs, counted without building
    them: exact, ``p (p - 1)``, for the :func:`quadratic` ones, else an upper bound of
    ``4 p log2 p`` (steps times transfers of the logarithmic algorithms).

    >>> transfer_count("direct", "all-reduce", 4), transfer_count("pairwise", "all-to-all", 4)
    (12, 12)
    """
    p = number("transfer_count", "p", p, minimum=1, maximum=MAX_WHOLE, integer=True)
    if quadratic(algorithm, op):   # an int: a float had no bit_length (AttributeError)
        return p * (p - 1)
    return 4 * p * max(1, p.bit_length())


def _collnet(kind: str) -> Generator:
    def generate_collnet(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
        return collnet_steps(kind, group, graph,
                             rails_or_refuse(graph, group, f"collnet-{kind}"))
    return generate_collnet


# ------------------------------------------------------------------ registry

def _innet(op):
    return lambda group, graph: in_network_steps(op, group, graph,
                                                 lambda: rail_table(graph, group))


Generator = Callable[[tuple[Hashable, ...], "nx.Graph | None"], list[Step]]

#: algorithm -> op -> generator: each of :data:`netmodel.collectives.names.ALGORITHM_NAMES`
#: with its steps (:data:`ALGORITHMS` is built from it, in the names' order).
_STEPS: dict[str, dict[str, Generator]] = {
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
    "two-shot": {"all-reduce": two_shot_all_reduce},
    "torus": {"all-reduce": torus_all_reduce, "reduce-scatter": torus_reduce_scatter,
              "all-gather": torus_all_gather},
    "pairwise": {"all-to-all": pairwise_all_to_all},
    "hierarchical": {"all-reduce": hierarchical_all_reduce},
    "in-network": {op: _innet(op) for op in ("all-reduce", "reduce-scatter", "all-gather",
                                             "broadcast", "reduce")},
    "in-network-tree": {"all-reduce": in_network_tree_all_reduce},
    "collnet-direct": {"all-reduce": _collnet("direct")},
    "collnet-chain": {"all-reduce": _collnet("chain")},
}


def _by_name(steps: dict[str, dict[str, Generator]]) -> dict[str, dict[str, Generator]]:
    """``steps`` in the order of :data:`~netmodel.collectives.names.ALGORITHM_NAMES`, the
    algorithms' one list (help texts read it without loading this module); ImportError
    naming the file where the two disagree (raised, not asserted: ``python -O`` too)."""
    missing = [a for a in ALGORITHM_NAMES if a not in steps]
    extra = [a for a in steps if a not in ALGORITHM_NAMES]
    if missing or extra:
        raise ImportError(
            "ALGORITHM_NAMES in netmodel/collectives/names.py and the algorithms' steps in "
            "netmodel/collectives/algorithms.py disagree: "
            + "; ".join(f"{what} {', '.join(map(repr, names))}" for what, names in
                        (("no steps for", missing), ("not in ALGORITHM_NAMES:", extra))
                        if names))
    return {a: steps[a] for a in ALGORITHM_NAMES}


#: algorithm -> op -> generator(group, graph) -> list[Step], in the order of
#: :data:`netmodel.collectives.names.ALGORITHM_NAMES` (their one list, read without loading
#: this module).
ALGORITHMS: dict[str, dict[str, Generator]] = _by_name(_STEPS)

#: Ops NCCL runs as a group of ncclSend/ncclRecv, no collective of its own (nccl-tests'
#: alltoall_perf and sendrecv_perf): NCCL_ALGO, which names the algorithms of NCCL's
#: collectives, leaves them alone (a :class:`~netmodel.collectives.model.FabricCostModel`
#: with ``scope="collectives"`` does the same).
SEND_RECV_OPS: tuple[str, ...] = ("all-to-all", "send-recv")

#: Names users type from elsewhere for what :data:`ALGORITHMS` holds under its own name:
#: name -> (whose name it is, netmodel's names for it; none: not modelled). Only for a
#: refusal (:func:`unknown_algorithm`), never taken in place of netmodel's. NCCL_ALGO takes
#: Ring, Tree, CollnetDirect, CollnetChain, NVLS, NVLSTree and PAT (NCCL's user guide,
#: Environment Variables, NCCL_ALGO; CollNet alone before CollnetDirect/CollnetChain split
#: it); a spelling of netmodel's own name (Ring, CollnetDirect) is found without a row.
#: SHARP is the switches' reduction CollNet runs on (``in-network`` across domains).
ALGORITHM_ALIASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "nvls": ("NCCL's", ("in-network",)),
    "nvlstree": ("NCCL's", ("in-network-tree",)),
    "collnet": ("NCCL's", ("collnet-direct", "collnet-chain")),
    "pat": ("NCCL's", ()),
    "sharp": ("NVIDIA's", ("in-network",)),
}


def _squeezed(name: str) -> str:
    """``name`` lower case without '-', '_', ' ' and '+': how :func:`unknown_algorithm`
    matches a name typed from elsewhere (NVLSTree, nvls_tree, CollNet-Direct)."""
    return "".join(ch for ch in name.lower() if ch not in "-_ +")


def unknown_algorithm(name: object, choices: Iterable[str] = ALGORITHMS) -> UserError:
    """The refusal of an algorithm ``name`` not among ``choices`` (netmodel's names; with
    'auto' where it is taken): where ``name`` is another's name for one of
    :data:`ALGORITHMS` (:data:`ALGORITHM_ALIASES`, or netmodel's own spelt otherwise), it
    says what netmodel calls it.

    >>> str(unknown_algorithm("nvls", ("ring", "in-network")))
    "unknown algorithm 'nvls' ('nvls' is NCCL's name; netmodel calls it 'in-network'); known: 'in-network', 'ring'"
    >>> str(unknown_algorithm("Ring", ("ring",)))
    "unknown algorithm 'Ring' (netmodel spells it 'ring'); known: 'ring'"
    >>> str(unknown_algorithm("PAT", ("ring",)))
    "unknown algorithm 'PAT' ('PAT' is NCCL's name for an algorithm netmodel does not model); known: 'ring'"
    """
    hint = ""
    if isinstance(name, str):
        key = _squeezed(name)
        own = [a for a in ALGORITHMS if _squeezed(a) == key]
        whose, ours = ALGORITHM_ALIASES.get(key, ("", ()))
        if own:
            hint = f" (netmodel spells it {own[0]!r})"
        elif ours:
            hint = (f" ({name!r} is {whose} name; netmodel calls it "
                    + " or ".join(repr(a) for a in ours) + ")")
        elif whose:
            hint = f" ({name!r} is {whose} name for an algorithm netmodel does not model)"
    hint = hint or lookalike(name, choices)   # 'trеe', a Cyrillic e: prints as 'tree'
    return UserError(f"unknown algorithm {describe(name)}{hint}; known: {known(choices)}")

assert all(op in OPERATIONS for table in ALGORITHMS.values() for op in table)
assert set(NCCL_OPS) == set(OPERATIONS)
assert all(NCCL_OPS[op] == ("direct",) for op in SEND_RECV_OPS)
assert all(op in ALGORITHMS[a] for op, names in NCCL_OPS.items() for a in names)
assert all(a in ALGORITHMS for _, names in ALGORITHM_ALIASES.values() for a in names)
assert not {_squeezed(a) for a in ALGORITHMS} & set(ALGORITHM_ALIASES)


def algorithms_for(op: str) -> tuple[str, ...]:
    """Names of the algorithms that implement ``op``."""
    return tuple(name for name, table in ALGORITHMS.items() if op in table)


#: (algorithm, op) -> a check of the group and fabric, raising :class:`NotApplicable`,
#: cheaper than building the steps: run before the work of a :func:`quadratic` algorithm is
#: counted (64 GPUs of a fat tree are no full mesh, whatever two-shot would route there).
PRECHECKS: dict[tuple[str, str], Callable[..., None]] = {
    ("two-shot", "all-reduce"): lambda group, graph: pairwise_linked(graph, group),
}


def precheck(algorithm: str, op: str, group: Iterable[Hashable], graph: nx.Graph | None
             ) -> None:
    """Raise :class:`NotApplicable` where a cheap look at ``group`` and ``graph`` rules
    ``algorithm`` out for ``op`` (see :data:`PRECHECKS`); else nothing."""
    check = PRECHECKS.get((algorithm, op))
    if check is not None:
        check(tuple(group), graph)


def generate(algorithm: str, op: str, group: Iterable[Hashable], graph: nx.Graph | None
             ) -> list[Step]:
    """The steps of ``algorithm`` for ``op`` over ``group`` (>= 2 GPUs) on ``graph``.

    Raises :class:`~compute.errors.UserError` for an unknown algorithm or one that does not
    implement ``op``, :class:`NotApplicable` when the fabric or group rules it out.
    """
    if algorithm not in ALGORITHMS:
        raise unknown_algorithm(algorithm)
    table = ALGORITHMS[algorithm]
    if op not in table:
        raise UserError(f"algorithm {algorithm!r} does not implement {op!r}; algorithms for "
                        f"{op!r}: {known(algorithms_for(op))}")
    return table[op](tuple(group), graph)
