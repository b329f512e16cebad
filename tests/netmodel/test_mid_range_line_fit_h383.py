"""What a straight line through the measured mid-range all-reduce times says about the A100
miss (docs/accuracy.md, "Mechanisms checked"): at 4-16 MiB, where the model runs ring/LL128,
the measured fixed cost is NCCL's own latency for the case and the slope is well below
LL128's rate, so the miss is bandwidth, not latency.

Each fit is least squares of time against bytes through nccl-tests' points (time = n /
algbw, algbw = busbw x p / (2 (p - 1))). NCCL's constants are read from the model's data
files through :func:`netmodel.collectives.calibration_files.default_calibration`; the link rate is
the fabric's GPU link times the generation's payload fraction, as the model takes it.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.test_collective_accuracy import MIB, _cited, _curve
from topologies import single_switch

P = 8
STEPS = 2 * (P - 1)


def _line(sizes, busbw, p=P):
    """``(fixed cost s, busbw slope B/s)`` of the least-squares line time = fixed + n / algbw
    through all-reduce points of ``p`` GPUs."""
    steps = 2 * (p - 1)
    slope, fixed = np.polyfit(sizes, sizes / (busbw * p / steps), 1)
    return fixed, steps / p / slope


def _mid(sizes, busbw):
    keep = (sizes >= 4 * MIB) & (sizes <= 16 * MIB)
    assert keep.sum() == 3, sizes
    return sizes[keep], busbw[keep]


def _nccl(gpu):
    """``(NCCL's ring/LL128 latency on 8 GPUs of one switch (s), LL128's bandwidth factor,
    the link's payload rate (B/s))`` from the model's data files, and the model."""
    cal = default_calibration().for_gpu(gpu)
    ll128 = cal.protocol("LL128")
    graph = single_switch(P, gpu=gpu, in_network_reduction=False)
    link = graph.edges["nvs0", "gpu0"]["bandwidth"] * cal.scaleup_efficiency
    latency = ll128.base_latency + STEPS * ll128.step_latency_scaleup
    return latency, ll128.bandwidth_factor, link, FabricCostModel(graph, algorithms="nccl")


def test_line_by_hand():
    # 40 us + n / (100 GB/s of algbw): busbw slope 100 x 14 / 8 = 175 GB/s, exactly
    n = np.array([4, 8, 16]) * MIB
    busbw = n / (40e-6 + n / 100e9) * STEPS / P
    fixed, slope = _line(n, busbw)
    assert fixed == pytest.approx(40e-6, rel=1e-9) and slope == pytest.approx(175e9, rel=1e-9)


def test_the_data_files_hold_nccls_constants_for_the_case():
    # NCCL's tuning.cc: baseLat ring LL128 14 us + 2(8-1) x hwLat NVLink ring LL128 1.9 us;
    # Ampere's NVLink 20.0 GB/s of 25 x 12 links, LL128 at 120/128 rounded to 0.92
    latency, factor, link, model = _nccl("A100-SXM-80GB")
    assert latency == pytest.approx(40.6e-6) and factor == 0.92 and link == pytest.approx(240e9)
    # the model is NCCL's line there: ring/LL128 at 4-16 MiB, slope 0.92 of the link exactly,
    # fixed cost NCCL's latency plus 14 crossings of the switch and its two links
    n = np.array([4, 8, 16]) * MIB
    sweep = model.sweep("all-reduce", n, P)
    assert set(sweep.algorithm) == {"ring"} and set(sweep.protocol) == {"LL128"}
    fixed, slope = _line(n, sweep.busbw)
    assert slope / link == pytest.approx(factor, rel=1e-9)
    assert latency < fixed < latency + STEPS * 0.2e-6, fixed


def test_a100_mpi_run_pays_nccls_latency_at_070_of_the_link():
    # The 8-MPI-rank A100 run (host 'thanos'; no launch floor): 40.4 us against NCCL's 40.6,
    # and 168.7 GB/s of busbw, 0.70 of the 240 GB/s link, where LL128 takes 0.92 (220.8)
    latency, factor, link, _ = _nccl("A100-SXM-80GB")
    fixed, slope = _line(*_mid(*_cited("a100-8-mpi")[3:]))
    assert abs(fixed / latency - 1) < 0.02, fixed
    assert 0.69 < slope / link < 0.71, slope
    assert slope / link < 0.8 * factor


@pytest.mark.parametrize("case", ["a100-8-1proc", "a100-8-dkh"])
def test_a100_one_thread_runs_pay_more_and_move_less(case):
    # one process driving the 8 GPUs: 50-55 us (its launches) and 132-142 GB/s
    latency, factor, link, _ = _nccl("A100-SXM-80GB")
    fixed, slope = _line(*_mid(*_cited(case)[3:]))
    assert 1.2 < fixed / latency < 1.4, fixed
    assert 0.54 < slope / link < 0.6, slope


def test_azure_a100_shared_curve_is_bandwidth_bound_too(reference_dir):
    # Azure's 8xA100 (../shared/reference; one process driving 8 GPUs): 49.9 us and 133.5
    # GB/s of busbw, 0.56 of the link, against LL128's 0.92
    latency, factor, link, _ = _nccl("A100-SXM-80GB")
    fixed, slope = _line(*_mid(*_curve(reference_dir, "8xA100")))
    assert 1.2 < fixed / latency < 1.3, fixed
    assert 0.54 < slope / link < 0.58, slope
    assert slope / link < 0.65 * factor


def test_h100_ring_run_fits_below_nccls_latency_near_the_link():
    # Together's 8xH100 ring (NVLS not in effect): 33.2 us and 331 GB/s, 0.89 of 18 x 20.6 =
    # 370.8 GB/s, near LL128's 0.92: Hopper's ring is not short of bandwidth as Ampere's is
    latency, factor, link, _ = _nccl("H100-SXM")
    assert link == pytest.approx(370.8e9)
    fixed, slope = _line(*_mid(*_cited("h100-8-ring")[3:]))
    assert 0.8 < fixed / latency < 0.85, fixed
    assert 0.88 < slope / link < 0.9, slope
    assert slope / link > 0.95 * factor
