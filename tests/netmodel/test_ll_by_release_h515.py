"""NCCL's ring LL busbw on one node by release (issue 11; netmodel/data/
collective_generations.toml, the release audit's "LL's busbw on one node").

Through NCCL 2.20 a ring's LL busbw is ``min(llMaxBw, busBw / 4)`` for all-reduce with
llMaxBws[Hopper] 87.7 (NVIDIA/nccl src/graph/tuning.cc at b6475625, 2.20.3, and a copy of
2.18.3); from 2.21 ``min(llMaxBw, busBw x .5)`` with Hopper's 141.0 (ab2b89c4, 2.21.5). On
an A100 node (NCCL's 12 x 20.0 = 240 GB/s) that is 60 GB/s through 2.20 and 87.7 after; on
Hopper (18 x 20.6 = 370.8) 87.7 and 141. Every number below is derived by hand from those
constants; the accuracy rows are the runs of those releases (Azure's 8xA100 and 8xH100 on
2.18.5, 8xH200 on 2.20.5, host 'dkh' on 2.19.3)."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.tuner_plugin import NcclGraph, get_tuner
from tests.netmodel.test_collective_accuracy import MIB, _accuracy_script
from topologies import single_switch

A100_BUS = 12 * 20.0e9     # NCCL's SM80 NVLink 20.0 GB/s x 12 links (0.8 x 12 x 25 GB/s)
H100_BUS = 18 * 20.6e9     # SM90 20.6 GB/s x 18 links = 370.8 GB/s


def _ll(gpu, release):
    return default_calibration().with_(nccl_release=release).for_gpu(gpu).protocol("LL")


@pytest.mark.parametrize(("gpu", "release", "busbw"), [
    ("A100-SXM-80GB", "2.17", 60.0e9), ("A100-SXM-80GB", "2.18.5", 60.0e9),
    ("A100-SXM-80GB", "2.20", 60.0e9), ("A100-SXM-80GB", "2.21", 87.7e9),
    ("A100-SXM-80GB", "2.30", 87.7e9),
    ("H100-SXM", "2.18", 87.7e9), ("H200-SXM", "2.20.5", 87.7e9),
    ("H100-SXM", "2.21", 141.0e9), ("H200-SXM", "2.30", 141.0e9)])
def test_ll_busbw_on_one_node_by_release(gpu, release, busbw):
    # A100 through 2.20: min(87.7, 240 / 4) = 60; after: min(87.7, 240 x .5) = 87.7.
    # Hopper through 2.20: min(87.7, 370.8 / 4 = 92.7) = 87.7; after: min(141, 185.4) = 141
    link = A100_BUS if gpu.startswith("A100") else H100_BUS
    assert _ll(gpu, release).bandwidth_factor * link == pytest.approx(busbw, rel=2e-3)


def test_the_other_protocols_and_generations_do_not_move():
    new, old = (default_calibration().with_(nccl_release=r) for r in ("2.30", "2.20"))
    for gpu in ("A100-SXM-80GB", "H100-SXM"):
        for name in ("LL128", "Simple"):
            assert new.for_gpu(gpu).protocol(name) == old.for_gpu(gpu).protocol(name)
    # Blackwell (from 2.25) has no release of the old rule
    b = default_calibration().with_(nccl_release="2.25").for_gpu("B200-HGX")
    assert b.protocol("LL").bandwidth_factor == 0.391


@pytest.mark.parametrize(("gpu", "old", "new"), [("A100-SXM-80GB", 60.0e9, 87.7e9),
                                                 ("H200-SXM", 87.7e9, 141.0e9)])
def test_ring_ll_on_8_gpus_pays_the_slower_line_by_hand(gpu, old, new):
    # a ring all-reduce moves 2 x 7/8 of n through each GPU; at a size where both releases
    # run ring/LL the difference of their times is that volume over the two LL busbw lines
    # alone (latencies are the same tables): 1 MiB on A100 -> 1,835,008 B x (1/60 - 1/87.7)
    # GB/s = 9.66 us; 256 KiB on H200 -> 458,752 B x (1/87.7 - 1/141) = 1.98 us
    n = MIB if gpu.startswith("A100") else 256 * 1024
    times = {}
    for release in ("2.18", "2.30"):
        cal = default_calibration().with_(nccl_release=release)
        model = FabricCostModel(single_switch(8, gpu=gpu, in_network_reduction=False),
                                calibration=cal)
        sw = model.sweep("all-reduce", np.array([float(n)]), 8, "ring")
        assert sw.protocol[0] == "LL", (release, sw.protocol)
        times[release] = sw.time[0]
    volume = 2 * 7 / 8 * n
    assert times["2.18"] - times["2.30"] == pytest.approx(volume * (1 / old - 1 / new),
                                                          rel=3e-3)


def test_nccl_2_18_tuner_on_a100_takes_ll128_from_2_mib():
    # NCCL 2.18's own prices on 8 A100: ring/LL 6.6 + 14 x 0.6 = 15.0 us + busbw bytes at
    # 60 GB/s; ring/LL128 14 + 14 x 1.9 = 40.6 us + at 220.8 GB/s. 1 MiB: LL 15.0 + 30.58 =
    # 45.58 us, LL128 40.6 + 8.31 = 48.91 us -> LL; 2 MiB: LL 76.17 us, LL128 57.22 -> LL128
    # (with 2.21's 87.7 GB/s LL stays to 2 MiB: 15.0 + 41.85 = 56.85 us < 57.22)
    t = get_tuner("nccl")
    for ll, at_2mib in ((60.0e9, "LL128"), (87.7e9, "LL")):
        g = NcclGraph(busbw=A100_BUS, channels=24, ll_cap=ll, ring_ll128_cap=A100_BUS)
        assert t.choose("all-reduce", MIB, 8, 1, graph=g) == ("ring", "LL")
        assert t.choose("all-reduce", 2 * MIB, 8, 1, graph=g) == ("ring", at_2mib)
        assert t.predicted_time("ring", "LL", MIB, 8, 1, g) == pytest.approx(
            15.0e-6 + 2 * 7 / 8 * MIB / ll, rel=1e-6)
    # the graph the model hands NCCL's tuner holds that cap: 0.25 x 240 = 60 GB/s under
    # 2.18.5, 0.365 x 240 = 87.6 under 2.30; on 8 H200 0.2365 x 370.8 = 87.69 and 0.380 x
    # 370.8 = 140.9 (the graph's busbw 360: NCCL's 12 x 30 GB/s)
    for gpu, release, cap in (("A100-SXM-80GB", "2.18.5", 60.0e9),
                              ("A100-SXM-80GB", "2.30", 87.6e9),
                              ("H200-SXM", "2.20.5", 87.6942e9), ("H200-SXM", "2.30", 140.904e9)):
        m = FabricCostModel(single_switch(8, gpu=gpu, in_network_reduction=False),
                            calibration=default_calibration().with_(nccl_release=release))
        assert m.nccl_graph(m.group(8)).ll_cap == pytest.approx(cap, rel=1e-9), (gpu, release)
    # the model's own auto under 2.18.5 runs the same protocols at 1 and 2 MiB
    cal = default_calibration().with_(nccl_release="2.18.5")
    model = FabricCostModel(single_switch(8, gpu="A100-SXM-80GB", in_network_reduction=False),
                            calibration=cal, algorithms="nccl")
    sw = model.sweep("all-reduce", np.array([MIB, 2.0 * MIB]), 8)
    assert [f"{a}/{p}" for a, p in zip(sw.algorithm, sw.protocol, strict=True)] == \
        ["ring/LL", "ring/LL128"]


def _curves(keys):
    acc = _accuracy_script()
    return {c.key: c.run() for c in acc.shared_curves() + acc.cited_curves()
            if c.key in keys}


def test_accuracy_rows_of_the_old_releases(reference_dir):
    # 1-128 MiB, the plain model (no launch floor): H200 (2.20.5) 14% -> 9%, Azure's H100
    # (2.18.5) 38% -> 32%, host 'dkh' (2.19.3) 76% -> 55%; Azure's A100 (2.18.5) stays 53%,
    # at 16 MiB under LL128, which this does not touch; its 1 MiB point +32% -> +6%
    c = _curves({"h200-8", "h100-8", "a100-8-dkh", "a100-8"})
    lo, hi = MIB, 256 * MIB
    for key, worst in (("h200-8", 0.089), ("h100-8", 0.319), ("a100-8-dkh", 0.554),
                       ("a100-8", 0.528)):
        assert c[key].worst(lo, hi, "rel") == pytest.approx(worst, abs=0.002), key
    a100 = c["a100-8"]
    one = list(a100.sizes).index(MIB)
    assert a100.choice[one] == "ring/LL"
    assert a100.model[one] / a100.measured[one] - 1 == pytest.approx(0.056, abs=0.002)
    # below 1 MiB the A100 curve's worst factor is its 1 KiB latency floor, unchanged
    assert a100.worst(0, MIB, "factor") == pytest.approx(2.57, abs=0.01)


@pytest.mark.xfail(strict=True, reason=(
    "known miss (issue 11): Azure's 8xA100 (NCCL 2.18.5, one process driving 8 GPUs) is "
    "+35%, +49%, +53%, +46%, +29%, +30% at 4-128 MiB. NCCL 2.18's own tuner predicts what "
    "the model does there (ring/LL128 to 16 MiB, ring/Simple from 32 MiB, the same crossover "
    "at 23.2 MiB); the measured slope at 4-16 MiB is 0.70 of the 240 GB/s link on the same "
    "NCCL run as 8 MPI ranks (host 'thanos') and 0.55-0.59 with one process (Azure, 'thanos', "
    "'dkh'), against LL128's 0.92; one process costs 22-379 us more than 8 MPI ranks at "
    "4-512 MiB on 'thanos'. No NCCL constant of any release read gives either "
    "(docs/accuracy.md, 'A100 at 1-128 MiB, checked again')"))
def test_azure_a100_meets_the_mid_range_target(reference_dir):
    c = _curves({"a100-8"})["a100-8"]
    assert c.worst(MIB, 256 * MIB, "rel") <= 0.25
