"""The A100 1-128 MiB miss checked against NCCL's published constants (docs/accuracy.md,
"A100 at 1-128 MiB, checked again"): each check derives NCCL's figure by hand from its
tuning constants (tuning.cc, as the data files hold them) and compares it with the model's
choice or with the measured curves, never with a value fitted to them."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.tuner_plugin import NcclGraph, get_tuner
from tests.netmodel.test_collective_accuracy import MIB, _cited
from tests.netmodel.test_mid_range_line_fit_h383 import _line, _mid
from topologies import single_switch

# NCCL's ring graph on an A100 NVSwitch node: 12 channels x 20.0 GB/s (6 x 40 doubled;
# docs/accuracy.md, "Per-channel ceilings"), busbw 240 GB/s, LL's cap llMaxBws 87.7
A100 = NcclGraph(busbw=12 * 20.0e9, channels=24, ll_cap=87.7e9,
                 ring_ll128_cap=12 * 20.0e9)


def test_nccls_own_protocol_crossover_is_where_the_model_switches():
    # ring/LL128: 14 + 14 x 1.9 = 40.6 us, busbw 0.92 x 240 = 220.8 GB/s;
    # ring/Simple: 8.4 + 14 x 3.4 = 56.0 us, busbw 240 GB/s: equal at 24.3 MB of message
    ll128_bw, simple_bw = 220.8e9 * 8 / 14, 240e9 * 8 / 14
    cross = (56.0e-6 - 40.6e-6) / (1 / ll128_bw - 1 / simple_bw)
    assert cross == pytest.approx(24.3e6, rel=2e-3)
    assert 16 * MIB < cross < 32 * MIB
    t = get_tuner("nccl")
    assert t.predicted_time("ring", "LL128", 16 * MIB, 8, 1, A100) == pytest.approx(
        40.6e-6 + 16 * MIB / ll128_bw)
    assert t.choose("all-reduce", 16 * MIB, 8, 1, graph=A100) == ("ring", "LL128")
    assert t.choose("all-reduce", 32 * MIB, 8, 1, graph=A100) == ("ring", "Simple")
    # the model's auto over NCCL's algorithms runs the same protocol at every size of the
    # 1-128 MiB range
    model = FabricCostModel(single_switch(8, gpu="A100-SXM-80GB", in_network_reduction=False),
                            algorithms="nccl")
    sizes = 2.0 ** np.arange(20, 28)
    sweep = model.sweep("all-reduce", sizes, 8)
    for n, alg, proto in zip(sizes, sweep.algorithm, sweep.protocol, strict=True):
        assert (alg, proto) == t.choose("all-reduce", n, 8, 1, graph=A100), n


def test_ring_ll128_cap_cannot_make_the_measured_slope():
    # perChMaxRingLL128Bws Ampere 20.0 GB/s a channel: with NCCL's 12 ring channels, 240 GB/s,
    # above LL128's 220.8, so it does not bind on one node; to bind at the measured LL128
    # slopes (4-16 MiB) it would take at most 8.4 (MPI run) and 6.7 (one process, -g 8)
    per_channel = default_calibration().for_gpu("A100-SXM-80GB").ring_ll128_channel_bandwidth
    assert per_channel[0] == 20.0e9
    t = get_tuner("nccl")
    assert t.bandwidth("ring", "LL128", 8, 1, A100) == pytest.approx(0.92 * 240e9 * 8 / 14)
    for case, most in (("a100-8-mpi", 8.5), ("a100-8-1proc", 7.2)):
        _, slope = _line(*_mid(*_cited(case)[3:]))
        assert slope / per_channel[0] < most < 12, (case, slope)


def _times(case):
    sizes, busbw = _cited(case)[3:]
    return dict(zip(sizes.tolist(), (sizes * 14 / 8 / busbw).tolist(), strict=True))


def test_one_process_costs_more_than_the_launch_floor_and_grows_with_size():
    # host 'thanos', same NCCL: one process driving 8 GPUs (-g 8) against 8 MPI ranks. The
    # launch floor (8 launches of 5 us, hidden once the collective is longer) is at most
    # 40 us; the measured difference grows from 22 us at 4 MiB to 379 us at 512 MiB and
    # vanishes at 1 GiB.
    one, mpi = _times("a100-8-1proc"), _times("a100-8-mpi")
    extra = {n: one[n] - mpi[n] for n in one if n in mpi}
    mid = [extra[2.0 ** e * MIB] for e in range(2, 10)]   # 4 MiB .. 512 MiB
    assert mid == sorted(mid)
    assert mid[0] == pytest.approx(22.2e-6, abs=0.5e-6)
    assert mid[-1] == pytest.approx(378.8e-6, abs=1e-6)
    assert all(x > 40e-6 for x in mid[2:])                   # from 16 MiB
    assert abs(extra[1024 * MIB]) < 5e-6
