"""NCCL's tree across three scale-up domains (NVIDIA/nccl issue 1801: three GB200 NVL
partitions on three racks, InfiniBand between them, NVLS off, NCCL 2.27.3, 16 GiB): the
ring within 5%, the forced tree within 3%, with the hand-derived loads that explain it; the
model's auto picks the tree where NCCL's tuner took the ring (a known gap, docs/accuracy.md).

NCCL's double binary tree on 3 nodes (src/graph/trees.cc): ncclGetBtree(3, r) makes node 0
the root with the one child 2, and 2 the parent of 1 (a chain 0 <- 2 <- 1); the second tree
is the first shifted by one rank (nranks odd): 1 <- 0 <- 2. Each tree carries half the
message S. Reduce (child to parent) and broadcast (parent to child) run at once, on opposite
directions of each link, so a node's NICs carry, each way, the sum over both trees and both
phases: node 0 sends S/2 (tree 0, down to 2) + S/2 (tree 1, up to 1) + S/2 (tree 1, down to
2) = 1.5 S; nodes 1 and 2 likewise at most 1.5 S. The model builds NCCL's trees and runs
both phases at once (netmodel.collectives.algo_tree); before, two binary heaps (a root with
two children) costed phase after phase put 2 S through the busiest node. With k NICs of
50 GB/s at the model's 0.94 a partition, busbw = 2 (n - 1) / n x k x 47 GB/s / load: 229.8
(NVL4, n = 12) and 480.4 (NVL8, n = 24) for 1.5 S; 172.3 and 360.3 for 2 S. Measured:
234.43 and 485.68.

NCCL's tuner (src/graph/tuning.cc) costs a tree at algbw = busBw x 0.5 on any node count
(the phases one after the other) with busBw = channels x bw x 0.92, a ring at busBw x
nRanks / nsteps, nsteps = 2 (n - 1), busBw = channels x bw: per channel and unit bw, 0.46
for the tree against 12 / 22 = 0.545 (NVL4) and 24 / 46 = 0.522 (NVL8) for the ring, so it
takes the ring; the model's auto takes the faster of its own costs, the tree."""

import csv
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
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
def test_auto_picks_the_tree_where_nccls_tuner_took_the_ring(k):
    r = _row(f"gb200-3x{k}-ring")
    n = int(r["gpus"])
    # NCCL's tuner, per channel and unit link bandwidth: the tree 0.92 x 0.5, the ring
    # n / (2 (n - 1)): the ring
    assert n / (2 * (n - 1)) > 0.92 * 0.5
    cal = default_calibration().with_(nccl_release=r["nccl"])
    model = FabricCostModel(build(r["fabric"]), algorithms=("ring", "tree"), validated=True,
                            calibration=cal)
    res = model.sweep("all-reduce", np.array([float(r["bytes"])]), n)
    # the model's auto takes its faster line, the tree (1.5 S), over the ring it gives
    # within 6% of NCCL's: a known gap of the choice, not of either cost
    assert list(res.algorithm) == ["tree"]
    tree, _, _ = _busbw(f"gb200-3x{k}-tree", "tree")
    assert float(res.busbw[0]) == pytest.approx(tree, rel=1e-12)


def test_nccl_three_node_tree_loads_one_and_a_half_messages():
    assert _nccl_tree_load(3) == 1.5


@pytest.mark.parametrize("k", [4, 8])
def test_forced_tree_is_nccls_one_and_a_half_messages(k):
    bus, meas, n = _busbw(f"gb200-3x{k}-tree", "tree")
    factor = 2 * (n - 1) / n
    # NCCL's structure (1.5 S each way) explains the measurement within 3%
    bound = factor * k * NIC / _nccl_tree_load(3)
    assert abs(bound / meas - 1) < 0.03
    # the model puts 1.5 S through the busiest node: within 1% under that bound (its
    # fill at 16 GiB is the rest), not the 2 S (172.3 / 360.3) of the phases one after
    # the other, 26-27% under the measurement
    assert bound * 0.99 < bus <= bound
    assert abs(bus / meas - 1) < 0.03, bus / meas
