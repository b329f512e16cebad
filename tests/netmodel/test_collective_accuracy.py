"""The collective model against published nccl-tests measurements (../shared/reference).

The fabric is the topologies builder's one-switch scale-up domain (8 GPUs, 450 GB/s per
direction per GPU for H100/H200, 300 GB/s for A100, one logical NVSwitch; NVLS only where
the GPU has it). The model runs with its shipped defaults (NCCL tuning constants, taken
once) and, to compare with NCCL, chooses among the algorithms NCCL has (ring, tree,
in-network reduction). No number here is fitted to these measurements.
"""

from __future__ import annotations

import csv

import numpy as np

from netmodel.collectives.model import FabricCostModel
from topologies import single_switch


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def _curve(reference_dir, system_prefix):
    rows = [r for r in _rows(reference_dir / "nccl_allreduce_busbw_8gpu.csv")
            if r["system"].startswith(system_prefix)]
    assert len(rows) == 24
    return (np.array([float(r["bytes"]) for r in rows]),
            np.array([float(r["busbw_GBps"]) * 1e9 for r in rows]))


def _model(gpu, nvls, n=8):
    return FabricCostModel(single_switch(n, gpu=gpu, in_network_reduction=nvls),
                           algorithms="nccl")


def _busbw(model, sizes, p=8, algorithm=None):
    return model.sweep("all-reduce", sizes, p, algorithm).busbw


def test_h100_ring_large_messages(reference_dir):
    rows = _rows(reference_dir / "nccl_allreduce_h100_by_gpu_count.csv")
    ring = [r for r in rows if r["algorithm"].startswith("Ring")]
    assert len(ring) == 1 and ring[0]["gpus"] == "8"
    measured = float(ring[0]["busbw_GBps"]) * 1e9  # 370 GB/s
    model = _model("H100-SXM", nvls=True)
    bus = _busbw(model, 2.0 ** np.arange(30, 34), algorithm="ring")
    assert np.all(np.abs(bus / measured - 1) < 0.10)


def test_h100_nvls_by_gpu_count(reference_dir):
    rows = [r for r in _rows(reference_dir / "nccl_allreduce_h100_by_gpu_count.csv")
            if r["algorithm"] == "NVLS"]
    assert [int(r["gpus"]) for r in rows] == [5, 6, 7, 8]
    for r in rows:
        p = int(r["gpus"])
        model = _model("H100-SXM", nvls=True, n=p)
        bus = _busbw(model, [2.0 ** 30, 2.0 ** 33], p=p, algorithm="in-network")
        # 8 GPUs: 480 GB/s measured; the issue asks for 10%
        assert np.all(np.abs(bus / (float(r["busbw_GBps"]) * 1e9) - 1) < 0.10), p


def test_nvls_busbw_exceeds_the_link_rate(reference_dir):
    # documented: with in-network reduction busbw is no link's rate (480 > 450 GB/s)
    model = _model("H100-SXM", nvls=True)
    assert _busbw(model, [2.0 ** 33], algorithm="in-network")[0] > 450e9


def test_h200_sweep(reference_dir):
    sizes, measured = _curve(reference_dir, "8xH200")
    model = _model("H200-SXM", nvls=True)
    ratio = _busbw(model, sizes) / measured
    assert np.all((ratio > 0.5) & (ratio < 2.0)), ratio
    big = sizes >= 2 ** 28
    assert np.all(np.abs(ratio[big] - 1) < 0.15), ratio[big]
    # auto follows NCCL's choice: ring/LL for small messages, NVLS for large ones
    sweep = model.sweep("all-reduce", sizes, 8)
    assert sweep.algorithm[0] == "ring" and sweep.protocol[0] == "LL"
    assert sweep.algorithm[-1] == "in-network"


def test_a100_sweep(reference_dir):
    sizes, measured = _curve(reference_dir, "8xA100")
    model = _model("A100-SXM-80GB", nvls=False)
    ratio = _busbw(model, sizes) / measured
    big = sizes >= 2 ** 28
    assert np.all(np.abs(ratio[big] - 1) < 0.15), ratio[big]
    mid = sizes >= 2 ** 19
    assert np.all((ratio[mid] > 0.5) & (ratio[mid] < 2.0)), ratio[mid]
    # Known gap (README): below 512 KiB Azure's A100 node takes ~45 us whatever the size,
    # 3x NCCL's own latency model and 3.6x the 8xH20 floor; the model (the same defaults
    # that fit H20 and H200) is 2.2-2.6x faster there. Pin it so a change is noticed.
    small = ~mid
    assert np.all((ratio[small] > 2.0) & (ratio[small] < 2.7)), ratio[small]
    assert set(model.sweep("all-reduce", sizes, 8).algorithm) == {"ring"}


def test_small_message_latency_floor(reference_dir):
    rows = _rows(reference_dir / "nccl_small_message_latency.csv")
    checked = 0
    for r in rows:
        p = int(r["gpus"])
        lo, _, hi = r["bytes"].partition("-")
        sizes = [float(lo), float(hi or lo)]
        t_lo, _, t_hi = r["time_us"].partition("-")
        measured = np.array([float(t_lo), float(t_hi or t_lo)]) * 1e-6
        # NVLink4 NVSwitch (H20 has H100's NVLink); NVLS where the row says so
        model = FabricCostModel(single_switch(p, gpu="H100-SXM"), algorithms="nccl")
        t = model.collective_time("all-reduce", sizes, p)
        ratio = t / measured
        assert np.all((ratio > 0.5) & (ratio < 2.0)), (r, t)
        checked += 1
    assert checked == 4
