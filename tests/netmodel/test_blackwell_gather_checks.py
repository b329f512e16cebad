"""NCCL's NVLS all-gather and reduce-scatter and its ring protocols, read against Vultr's
8xB200 all-gather and reduce-scatter sweeps (docs/accuracy.md, 'NVLS for all-gather and
reduce-scatter on one Blackwell node'): each check pins why no row moves, by hand from
NCCL's source or from the published data.

NCCL's cost lines on one node (NVIDIA/nccl src/tuning/nvls.cc, ring.cc and
tuning_general.cc at commit 12df1a11): a time is ``lat + nBytes / bw`` with ``nBytes`` the
gathered size (src/enqueue.h, ``ncclFuncMaxSendRecvCount``: ``nRanks x count`` for both
ops). The ring's ``bw`` is its busbw x ``nRanks / nSteps`` (``nSteps = nRanks - 1`` for both
ops); NVLS's for all-gather and reduce-scatter is ``nvlsBw x 0.74 (nvlsEfficiency
Blackwell) x (nCh - 1) / nCh x (ppn - 1) / ppn x nCh``, taken as it is, latency the NVLink
NVLS figure, 25 us.

Measured: tests/netmodel/data/nccl_ops_published.csv, case b200-8-sweep.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.model import FabricCostModel
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_ops_published.csv"
MIB, GIB = 2.0 ** 20, 2.0 ** 30
B200_8 = "single-switch:n=8,gpu=B200-HGX"


def _measured(op: str) -> dict[float, float]:
    """busbw (bytes/s) of Vultr's one-node 8xB200 sweep of ``op``, by size."""
    with open(PUBLISHED) as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {float(r["bytes"]): float(r["busbw_GBps"]) * 1e9 for r in rows
                if r["case"] == "b200-8-sweep" and r["op"] == op and r["kind"] == "measured"}


def _model() -> FabricCostModel:
    return FabricCostModel(build(B200_8), validated=True, algorithms="nccl")


def _ring_lines() -> list[tuple[float, float]]:
    """NCCL's ring (latency s, algbw bytes/s) per protocol for all-gather or reduce-scatter
    on 8 B200, by hand: ring graph 16 channels x 45 GB/s = 720; LL min(llMaxBw 282 = 2 x
    141, 720 / 2); LL128 min(0.92 x 720, 16 x 40.0 perChMaxRingLL128Bw); latencies base +
    7 steps x NVLink step: LL 6.6 + 7 x 0.6, LL128 14.0 + 7 x 1.9, Simple 8.4 + 7 x 3.4."""
    busbw = {"LL": min(282.0, 720 / 2), "LL128": min(0.92 * 720, 16 * 40.0), "Simple": 720.0}
    lat = {"LL": 6.6 + 7 * 0.6, "LL128": 14.0 + 7 * 1.9, "Simple": 8.4 + 7 * 3.4}
    return [(lat[p] * 1e-6, busbw[p] * 1e9 * 8 / 7) for p in ("LL", "LL128", "Simple")]


def test_nccls_graph_inputs_are_the_models():
    # the figures the hand lines read: the ring graph's 720 GB/s, 8 NVLS heads (one a GPU)
    # at most sm100SpeedArrayIntra's 90 GB/s each, NVLS efficiency 0.74
    model = _model()
    graph = model.nccl_graph(tuple(model.group(8)))
    assert graph.busbw == pytest.approx(720e9, rel=1e-12)
    assert graph.nvls_channels == 8
    assert graph.nvls_bw_intra <= 90e9
    assert graph.nvls_efficiency == pytest.approx(0.74)


def test_nvls_all_gather_loses_to_the_ring_at_every_size_by_nccls_own_lines():
    # NVLS all-gather/reduce-scatter at the top speed NCCL's array has (90 GB/s a head):
    # 90 x 0.74 x 7/8 x 7/8 x 8 = 407.925 GB/s of algbw (357 busbw), 25 us; the ring's
    # Simple alone is 720 x 8/7 = 822.86 GB/s: NVLS is slower from 1 KiB to 16 GiB, by
    # 1.24x at the least (8 MiB, against ring/LL's 10.8 us + n / 322.3 GB/s)
    nvls_bw = 90e9 * 0.74 * 7 / 8 * 7 / 8 * 8
    assert nvls_bw == pytest.approx(407.925e9, rel=1e-12)
    sizes = 2.0 ** np.arange(10, 35)
    ring = np.min([lat + sizes / bw for lat, bw in _ring_lines()], axis=0)
    nvls = 25e-6 + sizes / nvls_bw
    assert np.all(nvls > 1.2 * ring)
    assert np.min(nvls / ring) == pytest.approx(1.237, abs=1e-3)
    assert nvls[-1] / ring[-1] == pytest.approx(822.857 / 407.925, rel=1e-3)


@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter"])
def test_the_model_runs_the_ring_as_nccl_does_and_the_data_is_a_ring(op):
    model = _model()
    sizes = 2.0 ** np.arange(10, 35)
    assert set(model.sweep(op, sizes, 8, None).algorithm) == {"ring"}
    # the model's own in-switch line (721.8 x 0.74 x 7/8 = 467.4 GB/s of busbw) and NCCL's
    # (at most 357) sit far below the 16 GiB measurement; the ring's 721.8 is 4-7% above it
    nvls = model.sweep(op, np.array([16 * GIB]), 8, "in-network").busbw[0]
    assert nvls == pytest.approx(18 * 40.1e9 * 0.74 * 7 / 8, rel=2e-3)
    measured = _measured(op)[16 * GIB]
    assert measured / nvls > 1.4
    assert measured / (407.925e9 * 7 / 8) > 1.8
    assert 18 * 40.1e9 / measured == pytest.approx(
        {"all-gather": 1.0735, "reduce-scatter": 1.0386}[op], abs=1e-4)


def test_nccl_gives_both_ops_one_ll_line_where_the_data_has_two():
    # ring.cc: one busbw and one latency per (algorithm, protocol) and nSteps = nRanks - 1
    # for both ops, so all-gather and reduce-scatter share NCCL's LL line (282 GB/s of
    # busbw); the measured LL slopes between 4 and 8 MiB (bus bytes 7/8 of the size over the
    # added time) are 245.4 GB/s for all-gather and 152.3 for reduce-scatter, and both
    # sweeps step to LL128 between 8 and 16 MiB, as NCCL's lines cross (9.5 MB, by hand)
    slopes = {}
    for op in ("all-gather", "reduce-scatter"):
        m = _measured(op)
        t = {n: n * 7 / 8 / m[n] for n in (4 * MIB, 8 * MIB, 16 * MIB)}
        slopes[op] = 4 * MIB * 7 / 8 / (t[8 * MIB] - t[4 * MIB])
        assert t[16 * MIB] < 1.2 * t[8 * MIB]      # 16 MiB under LL128 is hardly slower
    assert slopes["all-gather"] == pytest.approx(245.4e9, rel=2e-3)
    assert slopes["reduce-scatter"] == pytest.approx(152.3e9, rel=2e-3)
    (ll_lat, ll_bw), (l128_lat, l128_bw), _ = _ring_lines()
    cross = (l128_lat - ll_lat) / (1 / ll_bw - 1 / l128_bw)
    assert cross == pytest.approx(9.5e6, rel=0.01)
    assert 8 * MIB < cross < 16 * MIB
