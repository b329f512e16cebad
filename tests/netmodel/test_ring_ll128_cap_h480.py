"""The tuner ``nccl`` holds a ring's LL128 busbw to NCCL's per-channel cap,
``nChannels x perChMaxRingLL128Bw`` (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel:
``busBw = std::min(busBw * 0.92, graphs[a]->nChannels*perChMaxRingLL128Bw)``), with the
generation's published rows (netmodel/data/collective_generations.toml). Every expected value
below is NCCL's constant or its formula worked by hand, not the model's output."""

from dataclasses import replace

import pytest

from netmodel.collectives.calibration_files import default_calibration
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


# ---------------------------------------------------------------- LL128 by compute capability
# NCCL enables LL128 by default per compute capability: sm_70/80/90 in 2.19/2.20, sm_100
# and sm_120 added in a 2.25+ copy (not B300's sm_103), any from sm_70 in v2.28.3-1
# (collective_generations.toml, ll128_off_capabilities, by each GPU's compute_capability).

@pytest.mark.parametrize("gpu, release, on", [
    ("A100-SXM-80GB", "2.17", True), ("H100-SXM", "2.17", True),
    ("B200-HGX", "2.25", True), ("GB200-NVL72", "2.27", True),
    ("B300-HGX", "2.25", False), ("B300-HGX", "2.27", False),
    ("GB300-NVL72", "2.27", False), ("B300-HGX", "2.28", True),
    ("GB300-NVL72", "2.30", True), ("Lite", "2.17", True)])
def test_ll128_enabled_by_compute_capability_and_release(gpu, release, on):
    cal = default_calibration().with_(nccl_release=release).for_gpu(gpu)
    assert cal.ll128_enabled is on


def test_tuner_never_picks_ll128_where_nccl_leaves_it_off():
    t, off = get_tuner("nccl"), replace(CAPPED, ll128=False)
    # 16 MiB on 2 H100 nodes: tree/LL128 with it (the cheapest of the six pairs) ...
    assert t.choose("all-reduce", 2 ** 24, 16, 2, graph=CAPPED) == ("tree", "LL128")
    # ... and the cheapest of the four LL and Simple pairs without it
    for e in range(10, 35):
        pick = t.choose("all-reduce", 2 ** e, 16, 2, graph=off)
        assert pick[1] != "LL128"
        times = {(a, p): t.predicted_time(a, p, 2.0 ** e, 16, 2, off)
                 for a in ("tree", "ring") for p in ("LL", "Simple")}
        assert times[pick] == min(times.values())


def test_b300_across_nodes_runs_no_ll128_before_nccl_2_28():
    def model(release):
        return FabricCostModel(build("rail-optimized:domains=2,gpu=B300-HGX"), validated=True,
                               tuner="nccl", algorithms=("ring", "tree"),
                               calibration=default_calibration().with_(nccl_release=release))
    old, new = model("2.27"), model("2.28")
    assert old.nccl_graph(old.group(16)).ll128 is False
    assert new.nccl_graph(new.group(16)).ll128 is True
    protocols = {e: (old.cost("all-reduce", 2 ** e, old.group(16)).protocol,
                     new.cost("all-reduce", 2 ** e, new.group(16)).protocol)
                 for e in range(16, 31, 2)}
    assert all(p27 != "LL128" for p27, _ in protocols.values())
    assert any(p28 == "LL128" for _, p28 in protocols.values())


@pytest.mark.parametrize("entry, message", [
    ('ll128_off_capabilities = "10.3"', "ll128_off_capabilities must be a list of compute "
                                        "capabilities"),
    ('ll128_off_capabilities = [10.3]', r"ll128_off_capabilities item must be CUDA's compute "
                                        r"capability MAJOR\.MINOR as text .*got 10\.3"),
    ('ll128_off_gpus = ["B300-HGX"]', r"ll128_off_gpus is no longer read: NCCL leaves LL128 "
                                      r"off by compute capability"),
    ('gpus = ["B300-HGX"]', r"gpus is no longer read: a GPU names its generation in its own "
                            r"entry \(collective_generation"),
])
def test_ll128_off_capabilities_refused_when_wrong(tmp_path, entry, message):
    from compute.errors import UserError
    from netmodel.collectives.calibration_files import load_generations

    path = tmp_path / "gens.toml"
    path.write_text('default = "b"\n[generation.b]\n' + entry + "\n")
    with pytest.raises(UserError, match=message) as err:
        load_generations(path)
    assert "\n" not in str(err.value)
