"""NCCL's tree across three scale-up domains (NVIDIA/nccl issue 1801: three GB200 NVL
partitions on three racks, InfiniBand between them, NVLS off, NCCL 2.27.3, 16 GiB): the
ring NCCL chose is within 5%, the forced tree a known gap of the model (docs/accuracy.md),
pinned here with the hand-derived loads that explain it.

NCCL's double binary tree on 3 nodes (src/graph/trees.cc): ncclGetBtree(3, r) makes node 0
the root with the one child 2, and 2 the parent of 1 (a chain 0 <- 2 <- 1); the second tree
is the first shifted by one rank (nranks odd): 1 <- 0 <- 2. Each tree carries half the
message S. Reduce (child to parent) and broadcast (parent to child) run at once, on opposite
directions of each link, so a node's NICs carry, each way, the sum over both trees and both
phases: node 0 sends S/2 (tree 0, down to 2) + S/2 (tree 1, up to 1) + S/2 (tree 1, down to
2) = 1.5 S; nodes 1 and 2 likewise at most 1.5 S. The model's double tree is two binary
heaps (a root with two children) costed phase after phase: 2 S through the busiest node.
With k NICs of 50 GB/s at the model's 0.94 a partition, busbw = 2 (n - 1) / n x k x 47 GB/s
/ load: 229.8 (NVL4, n = 12) and 480.4 (NVL8, n = 24) for 1.5 S; 172.3 and 360.3 for 2 S.
Measured: 234.43 and 485.68."""

import csv
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.calibration import default_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_allreduce_published.csv"
NIC = 50e9 * 0.94   # a GB200 NIC (400 Gb/s) at the model's scale-out efficiency


def _row(case):
    with open(PUBLISHED) as fh:
        rows = [r for r in csv.DictReader(line for line in fh if not line.startswith("#"))
                if r["case"] == case]
    assert len(rows) == 1, case
    return rows[0]


def _busbw(case, algorithm):
    r = _row(case)
    cal = default_calibration().with_(nccl_release=r["nccl"])
    model = FabricCostModel(build(r["fabric"]), algorithms="nccl", validated=True,
                            calibration=cal)
    res = model.sweep("all-reduce", np.array([float(r["bytes"])]), int(r["gpus"]), algorithm)
    return float(res.busbw[0]), float(r["busbw_GBps"]) * 1e9, int(r["gpus"])


def _nccl_tree_load(nodes):
    """Per-node bytes each way (in units of S) of NCCL's two 3-node chains, both phases at
    once: trees as child -> parent maps, each on half the message."""
    trees = ({1: 2, 2: 0}, {0: 1, 2: 0})    # 0 <- 2 <- 1 and 1 <- 0 <- 2
    send, recv = np.zeros(nodes), np.zeros(nodes)
    for parent in trees:
        for child, up in parent.items():
            send[child] += 0.5    # reduce: child to parent
            recv[up] += 0.5
            send[up] += 0.5       # broadcast: parent to child
            recv[child] += 0.5
    return max(send.max(), recv.max())


@pytest.mark.parametrize("k", [4, 8])
def test_ring_nccl_chose_within_5_percent(k):
    bus, meas, _ = _busbw(f"gb200-3x{k}-ring", "ring")
    assert abs(bus / meas - 1) < 0.06, (bus, meas)


@pytest.mark.parametrize("k", [4, 8])
def test_auto_without_nvls_picks_the_ring_as_nccl_did(k):
    r = _row(f"gb200-3x{k}-ring")
    cal = default_calibration().with_(nccl_release=r["nccl"])
    model = FabricCostModel(build(r["fabric"]), algorithms=("ring", "tree"), validated=True,
                            calibration=cal)
    res = model.sweep("all-reduce", np.array([float(r["bytes"])]), int(r["gpus"]))
    assert list(res.algorithm) == ["ring"]


def test_nccl_three_node_tree_loads_one_and_a_half_messages():
    assert _nccl_tree_load(3) == 1.5


@pytest.mark.parametrize("k", [4, 8])
def test_forced_tree_known_gap_is_the_phases_one_after_the_other(k):
    bus, meas, n = _busbw(f"gb200-3x{k}-tree", "tree")
    factor = 2 * (n - 1) / n
    # NCCL's structure (1.5 S each way) explains the measurement within 3%
    assert abs(factor * k * NIC / _nccl_tree_load(3) / meas - 1) < 0.03
    # the model puts 2 S through the busiest node: within 1% of that bound (its fill at
    # 16 GiB is the rest), 26-27% under the measurement
    assert bus == pytest.approx(factor * k * NIC / 2.0, rel=0.01)
    assert 0.70 < bus / meas < 0.78, bus / meas
