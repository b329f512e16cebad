"""The 15 multi-node all-reduce rows that miss issue 11's target (within 25% at >= 64 MiB),
each a strict xfail naming its cause (docs/accuracy.md, 'The multi-node misses, row by row').

Each row is costed as ``scripts/accuracy_collectives.py`` costs it (its tuner plugin, NCCL
release and NCCL_BUFFSIZE), so the worst error asserted here is the report's. A row that
starts to meet the target fails its xfail: the cause named is then to be revisited, and the
row moved to ``test_collective_accuracy.py``'s met rows.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MIB = 2 ** 20

#: What is not modelled, by cause, each published source named in docs/accuracy.md.
EFA_LL128 = ("EFA (p5.48xlarge, AWS's tuner plugin): the runs' ring/LL128 and tree/LL128 "
             "move 15-30% fewer bytes than NCCL's LL128 factor (0.92 of Simple) gives, and "
             "NVLSTree on 32 nodes a ~2.8 ms fixed cost; AWS publishes neither an LL128 "
             "rate nor a per-message cost for EFA")
EFA_TWO_NODES = ("EFA, 2 nodes: the measured ring/LL128 is ~160 us above the model's at 32 "
                 "and 64 MiB; aws-ofi-nccl's 75 us 'internode latency' for p5 is a hint to "
                 "NCCL's tuner (platform-aws.cpp), and does not fit 4 and 8 nodes")
TCPXO = ("GPUDirect-TCPXO: a ~1 ms fixed cost (0.99 ms + n / 184 GB/s from 1 to 8 GiB) "
         "from a closed-source plugin and tuner; InfiniBand's alpha in the model")
NVLSTREE_PAST_TWO = ("NVLSTree from 4 nodes on NCCL 2.29.7 measures at or below the "
                     "cluster's own ring; the release's perChMaxNVLSTreeBws for Blackwell "
                     "on 3+ nodes is not pinned (43.1, 43.8 and 80.0 in the copies read) and "
                     "NVIDIA/nccl issue 2035 reports an NVLSTree drop past 2 nodes on 2.29.7")
NVLSTREE_CHUNK_COST = ("NVLSTree's mid-size ramp: NCCL's small NVLSTree chunk (64-128 KiB) "
                       "fills its pipeline sooner than the model's slice but costs per "
                       "chunk, which the model lacks; either alone moves other rows over")
TWENTY_RACKS = ("1,440 GPUs with NVLS off: 4.5-5 ms of fixed cost and 410-430 GB/s "
                "marginal; NCCL's ring/tree choice and its channel count at init unknown")

MISSES = {
    "h100-p5-2x8-efa": EFA_TWO_NODES,
    "h100-p5-4x8-efa": EFA_LL128,
    "h100-p5-8x8-efa": EFA_LL128,
    "h100-p5-16x8-efa": EFA_LL128,
    "h100-p5-32x8-efa": EFA_LL128,
    "h100-a3mega-2x8": TCPXO,
    "gb200-20racks": TWENTY_RACKS,
    "gb300-oci-2racks": NVLSTREE_CHUNK_COST,
    "h100-4x8-ib-vp": NVLSTREE_CHUNK_COST,
    "b200-dgxc-4x8-nvlstree": NVLSTREE_PAST_TWO,
    "b200-dgxc-8x8-nvlstree": NVLSTREE_PAST_TWO,
    "b200-dgxc-16x8-nvlstree": NVLSTREE_PAST_TWO,
    "b200-dgxc-32x8-nvlstree": NVLSTREE_PAST_TWO,
    "b200-dgxc-46x8-nvlstree": NVLSTREE_PAST_TWO,
    "b200-dgxc-46x8-nvls": NVLSTREE_PAST_TWO,
}


@cache
def _curves() -> dict:
    spec = importlib.util.spec_from_file_location(
        "acc_h529", ROOT / "scripts" / "accuracy_collectives.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {c.key: c for c in mod.cited_curves()}


def _worst(key: str) -> float:
    c = _curves()[key]
    if c.model is None:
        c.run()
    return c.worst(64 * MIB, float("inf"), "rel")


def test_the_misses_are_the_target_rows_that_miss():
    # every multi-node target row (>= 16 GPUs, sizes >= 64 MiB) not listed meets the target,
    # and every listed one is such a row: 63 of 78 met (b200-dgxc-32x8-ring-64m, the ring
    # all-reduce at 64 MiB of Together's send-recv report, -22%, added and met)
    rows = {k: c for k, c in _curves().items()
            if c.target and c.gpus >= 16 and max(c.sizes) >= 64 * MIB}
    assert set(MISSES) <= set(rows)
    met = [k for k in rows if k not in MISSES and _worst(k) < 0.25]
    assert (len(rows), len(met)) == (78, 63)


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.xfail(
    strict=True, raises=AssertionError, reason=cause)) for k, cause in MISSES.items()])
def test_multinode_row_within_25_percent_at_64_mib(key):
    assert _worst(key) < 0.25
