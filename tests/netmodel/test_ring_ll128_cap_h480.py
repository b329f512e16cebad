"""The tuner ``nccl`` holds a ring's LL128 busbw to NCCL's per-channel cap,
``nChannels x perChMaxRingLL128Bw`` (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel:
``busBw = std::min(busBw * 0.92, graphs[a]->nChannels*perChMaxRingLL128Bw)``), with the
generation's published rows (netmodel/data/collective_generations.toml). Every expected value
below is NCCL's constant or its formula worked by hand, not the model's output."""

import pytest

from netmodel.collectives.calibration import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.tuner_plugin import NcclGraph, get_tuner
from topologies.registry import build


def _generation(name):
    return next(g for g in default_calibration().generations if g.name == name)


def test_generations_hold_nccls_ring_ll128_rows():
    # perChMaxRingLL128Bws (GB/s, 1 / 2 / 3+ nodes): Ampere {20.0 x 3}, Hopper {36.7 x 3};
    # Blackwell 2 x 36.7 through 2.28 (v2.28.3-1), 40.0 in the 2026 source
    assert _generation("ampere").ring_ll128_channel_bandwidth == (20.0e9,) * 3
    assert _generation("hopper").ring_ll128_channel_bandwidth == (36.7e9,) * 3
    bw = _generation("blackwell")
    assert bw.ring_ll128_channel_bandwidth == (40.0e9,) * 3
    assert bw.at((2, 28)).ring_ll128_channel_bandwidth == pytest.approx((2 * 36.7e9,) * 3)
    assert bw.at((2, 29)).ring_ll128_channel_bandwidth == (40.0e9,) * 3


# 2 nodes of 8 H100: NCCL's graph bandwidth 18 NVLinks x 20.6 GB/s = 370.8 GB/s, 8 channels
# (one a NIC), tree caps 8 x 41.4 and 8 x 36.7 (perChMaxTreeBws / perChMaxTreeLL128Bws, 2
# nodes), ring LL128 cap 8 x 36.7 = 293.6 GB/s.
BUS = 18 * 20.6e9
CAPPED = NcclGraph(busbw=BUS, channels=16, tree_cap=8 * 41.4e9, tree_ll128_cap=8 * 36.7e9,
                   ring_ll128_cap=8 * 36.7e9)
UNCAPPED = NcclGraph(busbw=BUS, channels=16, tree_cap=8 * 41.4e9, tree_ll128_cap=8 * 36.7e9)


def test_ring_ll128_algbw_is_the_channels_cap():
    t = get_tuner("nccl")
    # min(0.92 x 370.8, 293.6) = 293.6 GB/s busbw; algbw x 16 / (2 x 15)
    assert t.bandwidth("ring", "LL128", 16, 2, CAPPED) == pytest.approx(293.6e9 * 16 / 30)
    assert t.bandwidth("ring", "LL128", 16, 2, UNCAPPED) == pytest.approx(
        0.92 * BUS * 16 / 30)
    # the cap is LL128's alone
    for p in ("LL", "Simple"):
        assert t.bandwidth("ring", p, 16, 2, CAPPED) == t.bandwidth("ring", p, 16, 2, UNCAPPED)


def test_cap_moves_nccls_choice_at_128_mib_on_2_h100_nodes():
    t, n = get_tuner("nccl"), 2.0 ** 27
    # ring LL128: 14 us base + 28 NVLink steps x 1.9 + 2 network steps x 4.0 = 75.2 us,
    # + 128 MiB / (293.6 GB/s x 16/30) = 857.1 us -> 932.3 us
    assert t.predicted_time("ring", "LL128", n, 16, 2, CAPPED) == pytest.approx(
        75.2e-6 + n / (293.6e9 * 16 / 30))
    # ring Simple: (8.4 + 28 x 3.4 + 2 x 14.0) us x 1.4 (plateau) + n / (370.8 GB/s x 16/30)
    simple = (8.4e-6 + 28 * 3.4e-6 + 2 * 14.0e-6) * 1.4 + n / (BUS * 16 / 30)
    assert t.predicted_time("ring", "Simple", n, 16, 2, CAPPED) == pytest.approx(simple)
    assert simple == pytest.approx(862.9e-6, rel=1e-4)
    # uncapped LL128 was 75.2 + 737.7 = 812.9 us, below Simple: the cap flips the choice
    assert t.choose("all-reduce", n, 16, 2, graph=UNCAPPED) == ("ring", "LL128")
    assert t.choose("all-reduce", n, 16, 2, graph=CAPPED) == ("ring", "Simple")


@pytest.mark.parametrize("gpu, per_channel", [("A100-SXM-80GB", 20.0e9),
                                              ("H100-SXM", 36.7e9)])
def test_model_graph_caps_one_channel_a_rail(gpu, per_channel):
    # 2 servers of 8 GPUs, a NIC a GPU: 8 rails, NCCL's 8 ring channels across nodes
    m = FabricCostModel(build(f"rail-optimized:domains=2,gpu={gpu}"), validated=True,
                        tuner="nccl", algorithms=("ring", "tree"))
    assert m.nccl_graph(m.group(16)).ring_ll128_cap == pytest.approx(8 * per_channel)
    # one server: no rails, no channel count held, no cap (NCCL's 12 ring channels put it
    # above LL128's 0.92 of the node anyway: 240 > 220.8 GB/s, 440 > 341.1)
    one = FabricCostModel(build(f"single-switch:n=8,gpu={gpu}"), validated=True,
                          tuner="nccl", algorithms=("ring", "tree"))
    assert one.nccl_graph(one.group(8)).ring_ll128_cap == 0.0
