"""Two-level collective algorithms across scale-up domains: the hierarchical all-reduce
(inside each domain, rings across per rail) and NCCL's NVLSTree (in-switch inside, double
binary trees across).

Each generator takes the group and the fabric graph and returns a list of
:class:`~netmodel.collectives.steps.Step` (the interface of
:mod:`netmodel.collectives.algorithms`, whose table gives their costs).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.algo_ring import nic_lanes, ring_indices
from netmodel.collectives.algo_tree import double_tree, tree_depth
from netmodel.collectives.group_domains import domain_indices
from netmodel.collectives.in_network import domain_planes, has_in_network, nvls_phases
from netmodel.collectives.steps import NotApplicable, Pairs, Step, union_of

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["NVLS_MAX_HEADS", "hierarchical_all_reduce", "in_network_tree_all_reduce"]


def rails_or_refuse(graph, group, what: str) -> np.ndarray:
    """The group as a ``(domains, m)`` table of positions in ``group``, as
    :func:`~netmodel.collectives.group_domains.rail_table`; NotApplicable, naming ``what``,
    unless it spans at least two scale-up domains of the same size ``m >= 2``."""
    members, sizes = domain_indices(graph, group)
    if len(sizes) < 2:
        raise NotApplicable(f"{what} needs GPUs in at least two scale-up domains")
    if sizes[0] < 2:
        raise NotApplicable(f"{what} needs at least two GPUs per scale-up domain")
    if (sizes != sizes[0]).any():
        raise NotApplicable(f"{what} needs the same number of GPUs in every domain, got "
                            + "/".join(str(x) for x in sizes.tolist()))
    return members.reshape(len(sizes), int(sizes[0]))


def _in_domain_planes(graph, group, table):
    doms = [[group[i] for i in row] for row in table.tolist()]
    return doms, domain_planes(graph, doms)


def hierarchical_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    table = rails_or_refuse(graph, group, "hierarchical")
    n_dom, m = table.shape
    doms, planes = _in_domain_planes(graph, group, table)
    a, b = ring_indices(n_dom)
    across = Pairs(group, table[a, :].T.ravel(), table[b, :].T.ravel(), 1 / (m * n_dom))
    out_rs = Step("reduce-scatter across", across, n_dom - 1, reduce=1 / (m * n_dom),
                  latencies=(0, n_dom - 1), pipeline=1, heads=m)
    out_ag = Step("all-gather across", across, n_dom - 1, latencies=(0, n_dom - 1),
                  pipeline=1, heads=m)
    across_bound = union_of("across together", [out_rs, out_ag], pipeline=1, bound=2,
                            heads=m)
    if planes is not None:  # the domains' switches reduce: NVLS inside
        rs, ag, inside = nvls_phases(graph, doms, planes)
        return [rs, out_rs, out_ag, ag, inside, across_bound]
    a, b = ring_indices(m)
    inner = Pairs(group, table[:, a].ravel(), table[:, b].ravel(), 1 / m)
    rs = Step("reduce-scatter in domain", inner, m - 1, reduce=1 / m, latencies=(m - 1, 0),
              pipeline=1, heads=m)
    ag = Step("all-gather in domain", inner, m - 1, latencies=(m - 1, 0), pipeline=1,
              heads=m)
    inside = union_of("in-domain phases together", [rs, ag], pipeline=1, bound=1, heads=m)
    # the phases overlap only on links they do not share: where a domain has no links of its
    # own (GPUs of one server label wired through the network), all four load the same ones
    shared = union_of("every phase together", [rs, out_rs, out_ag, ag], pipeline=1, bound=3,
                      heads=m)
    return [rs, out_rs, out_ag, ag, inside, across_bound, shared]


#: The most NVLS heads (GPUs whose NIC carries NVLSTree's tree across domains) NCCL gives
#: one domain: ``NCCL_MAX_NVLS_ARITY`` is 32 in src/include/device.h (NCCL > 2.20; 8
#: before), and src/graph/search.cc caps the NVLS graph at it ("NVLS and COLLNET_DIRECT
#: search must have ngpus heads at most": ``maxChannels = min(NCCL_MAX_NVLS_ARITY,
#: ngpus)``). With MNNVL (an NVL72 rack) the whole clique is one node (topo.cc fuses the
#: clique's topology), so 72 GPUs still get at most 32 heads.
NVLS_MAX_HEADS = 32


def in_network_tree_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """NCCL's NVLSTree: in-switch reduce-scatter inside each domain, one double binary tree
    per head across the domains, in-switch all-gather. The heads are the first
    ``h = min(m, NVLS_MAX_HEADS)`` rails of each domain, each tree on ``1/h`` of the data
    (with a NIC down, ``min(k, NVLS_MAX_HEADS)`` heads, ``k`` the fewest NICs up at any
    domain, on the GPUs whose NICs are up, :func:`~netmodel.collectives.algo_ring.nic_lanes`;
    the cap's channels the same)."""
    if not has_in_network(graph):
        raise NotApplicable("no switch in the fabric has in_network_reduction")
    table = rails_or_refuse(graph, group, "in-network-tree")
    doms, planes = _in_domain_planes(graph, group, table)
    if planes is None:
        raise NotApplicable("in-network-tree needs the switches of every scale-up domain to "
                            "reduce (in_network_reduction), each domain its own")
    n_dom, m = table.shape
    rs, ag, inside = nvls_phases(graph, doms, planes)
    # with a NIC down, the heads on the GPUs whose NICs are up (as the tree's:
    # algo_ring.nic_lanes, the fewest NICs up at any domain)
    lanes = nic_lanes(graph, group, table)
    heads = (table if lanes is None else lanes)[:, :NVLS_MAX_HEADS]
    h = heads.shape[1]
    src, dst, frac = [], [], []
    for c in range(h):
        a, b, f = double_tree(group, heads[:, c], 1 / h)
        src.append(a)
        dst.append(b)
        frac.append(f)
    up = Pairs(group, np.concatenate(src), np.concatenate(dst), np.concatenate(frac))
    depth = tree_depth(n_dom)
    # NCCL's tuner caps NVLSTree's busbw at its channels (one per NVLS head) times
    # perChMaxNVLSTreeBws of the generation and node count, busbw counted as a ring's
    # (src/graph/tuning.cc): per byte, (n - 1) / n of the cap's time in each tree phase;
    # with NICs down, the heads NCCL finds: the fewest NICs up at any domain
    # (algo_ring.nic_channels)
    p = len(group)
    cap = {"tree_channels": h, "tree_nodes": n_dom, "tree_table": 1,
           "tree_share": (p - 1) / p}
    tree_up = Step("reduce across (tree)", up, stages=depth, reduce=up.incoming(),
                   latencies=(0, depth), pipeline=1, bound=2, heads=h, **cap)
    tree_down = Step("broadcast across (tree)", up.reversed(), stages=depth,
                     latencies=(0, depth), pipeline=1, bound=2, heads=h, **cap)
    return [rs, tree_up, tree_down, ag, inside]
