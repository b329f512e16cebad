"""The names the collective engine takes, known without loading it: its algorithms, those
NCCL itself chooses from per operation, and the placements of a group's GPUs.

This module imports nothing, so the command line lists them in its help without numpy and
networkx (``netmodel collective --help`` loaded both through the algorithm registry and the
placement module). Each list is declared here once: the registry
:data:`netmodel.collectives.algorithms.ALGORITHMS` maps each of :data:`ALGORITHM_NAMES` to
its step generators, in this order (checked when it is built), and
:func:`netmodel.collectives.placement.place` takes :data:`PLACEMENTS`.

>>> ALGORITHM_NAMES[:3], PLACEMENTS[0]
(('ring', 'bidirectional-ring', 'tree'), 'contiguous')
>>> NCCL_ALGORITHMS
('ring', 'tree', 'in-network', 'in-network-tree', 'collnet-direct', 'collnet-chain', 'direct')
"""

from __future__ import annotations

__all__ = ["ALGORITHM_NAMES", "NCCL_ALGORITHMS", "NCCL_OPS", "PLACEMENTS"]

#: Every algorithm of the engine, in listing order (help, ``costs --algorithm all``);
#: what each is: :mod:`netmodel.collectives.algorithms`.
ALGORITHM_NAMES: tuple[str, ...] = (
    "ring", "bidirectional-ring", "tree", "halving-doubling", "recursive-doubling", "direct",
    "two-shot", "torus", "pairwise", "hierarchical", "in-network", "in-network-tree",
    "collnet-direct", "collnet-chain")

#: op -> the algorithms NCCL itself chooses from for it: use these to compare with
#: nccl-tests. NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel, 2.23+) skips every
#: algorithm but Ring for Broadcast and Reduce, and all but Ring, NVLS, CollNetDirect (and
#: PAT, one GPU per node, not modelled) for ReduceScatter and AllGather; AllReduce has Ring,
#: Tree, NVLS, NVLS + CollNet, NVLSTree, CollNetDirect and CollNetChain (src/enqueue.cc,
#: updateCollCostTable: the two CollNets wherever CollNet is supported, NVLS on or off; the
#: model's CollNet, a switch above the domains that reduces, is ``sharp=true``). The model's
#: CollNetDirect is all-reduce only (NCCL's reduce-scatter and all-gather CollNetDirect, one
#: GPU per NIC, is not modelled). All-to-all and send-recv are no NCCL collective:
#: nccl-tests' alltoall_perf and sendrecv_perf post every ncclSend/ncclRecv in one group
#: (NVIDIA/nccl-tests src/alltoall.cu, src/sendrecv.cu), which run at once: ``direct``.
NCCL_OPS: dict[str, tuple[str, ...]] = {
    "all-reduce": ("ring", "tree", "in-network", "in-network-tree", "collnet-direct",
                   "collnet-chain"),
    "reduce-scatter": ("ring", "in-network"),
    "all-gather": ("ring", "in-network"),
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "all-to-all": ("direct",),
    "send-recv": ("direct",),
}

#: Every algorithm NCCL has for some op (:data:`NCCL_OPS`).
NCCL_ALGORITHMS = tuple(dict.fromkeys(a for names in NCCL_OPS.values() for a in names))

#: Placement policies of a group's GPUs (what each takes:
#: :mod:`netmodel.collectives.placement`).
PLACEMENTS = ("contiguous", "rail-aligned", "spread", "random")
