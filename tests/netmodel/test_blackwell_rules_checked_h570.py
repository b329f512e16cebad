"""Blackwell rules read against the Vultr 8xB200 and 2 x 8 B200 sweeps and the 4-GPU
Grace-hosted GB200 host (docs/accuracy.md, 'Blackwell's other rules, per op and across 2
nodes'): each check pins why the rule moves no row, by hand or from the published data.

Measured: tests/netmodel/data/nccl_ops_published.csv, case b200-8-sweep (Vultr, one node).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_ops_published.csv"
GIB = 2.0 ** 30


def _measured(case: str, op: str) -> dict[float, float]:
    """busbw (bytes/s) of the measured sweep ``case``/``op``, by size."""
    with open(PUBLISHED) as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {float(r["bytes"]): float(r["busbw_GBps"]) * 1e9 for r in rows
                if r["case"] == case and r["op"] == op and r["kind"] == "measured"}


def _model(fabric: str, **cal) -> FabricCostModel:
    calibration = default_calibration().with_(**cal) if cal else None
    return FabricCostModel(build(fabric), validated=True, algorithms="nccl",
                           calibration=calibration)


@pytest.mark.parametrize("fabric, op, n", [
    ("single-switch:n=4,gpu=B200-HGX", "all-reduce", 4),       # the 4-GPU GB200 host's ring
    ("single-switch:n=8,gpu=B200-HGX", "all-gather", 8),       # Vultr's 8xB200
    ("single-switch:n=8,gpu=B200-HGX", "reduce-scatter", 8),
])
def test_arm_simple_buffer_moves_no_one_node_ring(fabric, op, n):
    # NCCL's 1 MiB Simple buffer on Arm hosts (DEFAULT_BUFFSIZE_ARM, older src/init.cc) against
    # the x86 default of 4 MiB: the model's ring on one node has no per-step term, so the
    # busbw is the same at every size from 1 KiB to 8 GiB, whatever the buffer
    sizes = 2.0 ** np.arange(10, 34)
    x86 = _model(fabric, simple_buffer=4 * 2 ** 20).sweep(op, sizes, n, "ring")
    arm = _model(fabric, simple_buffer=2 ** 20).sweep(op, sizes, n, "ring")
    assert arm.busbw == pytest.approx(x86.busbw, rel=1e-12)
    # and it is the ring's line: between 4 and 8 GiB the bus bytes move at 18 x 40.1 GB/s
    # (NCCL's per-NVLink figure on SM100 times the B200's 18 links)
    bus = 2 * (n - 1) / n if op == "all-reduce" else (n - 1) / n
    rate = (sizes[-1] - sizes[-2]) * bus / (x86.time[-1] - x86.time[-2])
    assert rate == pytest.approx(18 * 40.1e9, rel=1e-6)


def test_tuners_ring_across_two_nodes_is_already_nic_bound():
    # NCCL's 2026 ring cost takes a 2-node Blackwell ring at its inter-node graph speed; the
    # tuner emulation's ring across nodes is the model's own, bound by the 8 NICs as built:
    # 8 x 43.1e9 x scaleout_efficiency 0.94 = 324.112 GB/s (by hand), not the NVLink side
    model = _model("rail-optimized:domains=2,gpu=B200-HGX,nic_bandwidth=43.1e9")
    graph = model.nccl_graph(tuple(model.group(16)))
    assert graph.busbw == pytest.approx(8 * 43.1e9 * 0.94, rel=1e-9)
    # on one node of 8 B200 it is the NVLink graph's 16 x 45 GB/s
    one = _model("single-switch:n=8,gpu=B200-HGX")
    assert one.nccl_graph(tuple(one.group(8))).busbw == pytest.approx(720e9, rel=1e-9)


def test_all_gather_below_reduce_scatter_at_16gib_where_the_model_has_one_rate():
    # measured on Vultr's 8xB200: all-gather 672.38 GB/s, reduce-scatter 694.98 at 16 GiB
    # (an op difference NCCL's maintainer put down to the compiler, NVIDIA/nccl issue 1281);
    # NCCL's tuner and the model give both the ring's one busbw
    ag = _measured("b200-8-sweep", "all-gather")[16 * GIB]
    rs = _measured("b200-8-sweep", "reduce-scatter")[16 * GIB]
    assert (ag, rs) == (672.38e9, 694.98e9)
    model = _model("single-switch:n=8,gpu=B200-HGX")
    got = [model.cost(op, 16 * GIB, 8).busbw for op in ("all-gather", "reduce-scatter")]
    assert got[0] == pytest.approx(got[1], rel=1e-12)
    assert got[0] / ag - 1 == pytest.approx(0.072, abs=0.002)
    assert got[1] / rs - 1 == pytest.approx(0.037, abs=0.002)
