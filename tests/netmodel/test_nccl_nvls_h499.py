"""NCCL's own tuner, emulated (tuner ``nccl``), pricing NVLS and NVLSTree (issue 11): the
NVLS graph NCCL's search finds (NVIDIA/nccl src/graph/search.cc, ncclTopoCompute), its
tuning of NVLS and NVLSTree (src/tuning/nvls.cc of 2026, ncclTuningNvlsModelInit/Sim) and
the choices that follow, each derived here by hand from those formulas and the data file's
constants. NCCL release: the 2026 source's formulas (2.30.x constants), which the tuner
applies to every release. Every test fails before NVLS was priced (no ``nvls_search``; the
tuner left any communicator where NVLS could run to the model's auto)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.tuner_plugin import NcclGraph, get_tuner, nvls_search
from topologies import build

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT.parent / "shared" / "reference" / "nccl_tuning_constants.csv"
US = 1e-6
GB = 1e9
H100_NVLINK = 18 * 25e9 * 0.824      # 18 NVLink4 links x NCCL's 20.6 GB/s = 370.8 GB/s
B200_NVLINK = 18 * 50e9 * 0.802      # 18 NVLink5 links x NCCL's 40.1 GB/s = 721.8 GB/s


def _t():
    return get_tuner("nccl")


def _speeds(gen, which):
    return _t().spec["nvls_speeds"][gen][which]


# ------------------------------------------------------------------ the NVLS graph


def test_nvls_graph_speeds_by_hand():
    # 8 heads: a head moves 2 x, the 7 others 1 x: 9 s <= 370.8 GB/s. Hopper's intra array
    # 60, 50, 40: 540 and 450 do not fit, 360 does: bwIntra 40; pass 2 raises bwInter (read
    # by nothing inside one node) while below 2 x 40: 50, then 60, the array's top
    assert nvls_search(H100_NVLINK, 8, _speeds("hopper", "intra")) == (40 * GB, 60 * GB)
    # across nodes (inter array 48, 45, 42, 40, ...) a head's NIC of 50 GB/s carries bwInter:
    # 9 x 42 = 378 > 370.8, 9 x 40 = 360 fits; bwInter up to 48 (<= 50, the array's top)
    assert nvls_search(H100_NVLINK, 8, _speeds("hopper", "inter"), nic=50 * GB) == \
        (40 * GB, 48 * GB)
    # Blackwell, one node: 9 x 90 = 810 > 721.8, 9 x 80 = 720 fits; bwInter 90 (the top)
    assert nvls_search(B200_NVLINK, 8, _speeds("blackwell", "intra")) == (80 * GB, 90 * GB)
    # Blackwell across nodes: 48 is the first inter speed under the NIC's 50; 96 > 50 stops
    assert nvls_search(B200_NVLINK, 8, _speeds("blackwell", "inter"), nic=50 * GB) == \
        (48 * GB, 48 * GB)
    # 4 heads (a GB200 tray's 4 GPUs): 5 x 90 = 450 fits at the top: both 90
    assert nvls_search(B200_NVLINK, 4, _speeds("blackwell", "intra")) == (90 * GB, 90 * GB)
    assert nvls_search(10 * GB, 8, _speeds("hopper", "intra")) == (0.0, 0.0)   # none fits


def test_the_models_graph_of_8_h100_and_8_a100():
    m = FabricCostModel(build("single-switch:n=8,gpu=H100-SXM"), algorithms="nccl",
                        tuner="nccl", validated=True)
    g = m.nccl_graph(m.group(8))
    # ring graph: channels of one intra speed, as many as fit on 370.8 GB/s, the most
    # channels x speed: 6 x 60 = 9 x 40 = 12 x 30 = 360 (50: 7 x 50 = 350)
    assert g.busbw == pytest.approx(360 * GB, rel=1e-12)
    assert g.ll_cap == pytest.approx(0.380 * H100_NVLINK, rel=1e-12)   # llMaxBw, unchanged
    assert (g.nvls_channels, g.nvls_bw_intra, g.nvls_bw_inter) == (8, 40 * GB, 60 * GB)
    assert g.nvls_efficiency == 0.85 and not g.nvls_tree_correction
    # A100: no NVLS (nvlsEfficiency 0, no NVLS graph below sm_90), ring graph as before
    a = FabricCostModel(build("single-switch:n=8,gpu=A100-SXM-80GB"), algorithms="nccl",
                        tuner="nccl", validated=True)
    ga = a.nccl_graph(a.group(8))
    assert ga.nvls_channels == 0
    assert ga.busbw == pytest.approx(12 * 20 * GB, rel=1e-9)


# ------------------------------------------------------------------ NVLS, one node

H100_ONE = NcclGraph(busbw=360 * GB, channels=16, ll_cap=0.380 * H100_NVLINK,
                     nvls_channels=8, nvls_bw_intra=40 * GB, nvls_bw_inter=60 * GB,
                     nvls_efficiency=0.85)


def test_8_h100_nvls_priced_by_hand():
    t = _t()
    # intraBw 40 x 0.85 x 7/8 x 2 = 59.5, interBw 60: 59.5 a channel, x 8 = 476 GB/s busbw
    # (the measured NVLS plateau is 479); algbw x 8 / 14 = 272 GB/s; latency the NVLink hw
    # latency alone, 25 us
    assert t.bandwidth("in-network", "Simple", 8, 1, H100_ONE) == pytest.approx(272 * GB,
                                                                               rel=1e-12)
    n = 2.0 ** 30
    assert t.predicted_time("in-network", "Simple", n, 8, 1, H100_ONE) == pytest.approx(
        25 * US + n / (272 * GB), rel=1e-12)


def test_8_h100_switch_from_ring_ll_to_nvls_by_hand():
    # ring LL: busbw min(0.5 x 360, llMaxBw 140.904) x 8/14 = 80.5166 GB/s, latency 6.6 + 14
    # x 0.6 = 15.0 us; NVLS: 272 GB/s, 25 us. Equal at n = 10 us / (1/80.52 - 1/272) GB/s
    ll = 0.380 * H100_NVLINK * 8 / 14
    cross = 10 * US / (1 / ll - 1 / (272 * GB))
    assert cross == pytest.approx(1.1437e6, rel=1e-4)      # about 1.09 MiB
    t = _t()
    assert t.choose("all-reduce", cross * 0.99, 8, 1, graph=H100_ONE) == ("ring", "LL")
    assert t.choose("all-reduce", cross * 1.01, 8, 1, graph=H100_ONE) == ("in-network",
                                                                          "Simple")
    # the ring's algbw (360 x 8/14 = 205.7 GB/s) never reaches NVLS's 272: NVLS to any size
    for k in (24, 28, 30, 34, 36):
        assert t.choose("all-reduce", 2.0 ** k, 8, 1, graph=H100_ONE) == ("in-network",
                                                                          "Simple")


def test_8_b200_nvls_against_the_ring_by_hand():
    t = _t()
    # intraBw 80 x 0.74 x 7/8 x 2 = 103.6 > interBw 90: 90 a channel, 720 GB/s busbw, algbw
    # 720 x 8/14; the ring graph 8 x 90 = 720 too: equal algbw, NVLS's 25 us against the
    # ring's 8.4 + 14 x 3.4 = 56 us: NVLS at every large size
    g = NcclGraph(busbw=720 * GB, channels=16, ll_cap=0.391 * B200_NVLINK,
                  nvls_channels=8, nvls_bw_intra=80 * GB, nvls_bw_inter=90 * GB,
                  nvls_efficiency=0.74)
    assert t.bandwidth("in-network", "Simple", 8, 1, g) == pytest.approx(720 * GB * 8 / 14,
                                                                         rel=1e-12)
    assert t.choose("all-reduce", 2.0 ** 34, 8, 1, graph=g) == ("in-network", "Simple")
    # with the links' 721.8 GB/s as the ring graph, NCCL's formula would switch from NVLS
    # to the ring where 31 us = n (1/411.43 - 1/412.46) GB/s: n = 5.115e9 bytes (4.76 GiB)
    g2 = NcclGraph(busbw=B200_NVLINK, channels=16, ll_cap=0.391 * B200_NVLINK,
                   nvls_channels=8, nvls_bw_intra=80 * GB, nvls_bw_inter=90 * GB,
                   nvls_efficiency=0.74)
    cross = 31 * US / (1 / (720 * GB * 8 / 14) - 1 / (B200_NVLINK * 8 / 14))
    assert cross == pytest.approx(5.1147e9, rel=1e-4)
    assert t.choose("all-reduce", cross * 0.98, 8, 1, graph=g2) == ("in-network", "Simple")
    assert t.choose("all-reduce", cross * 1.02, 8, 1, graph=g2) == ("ring", "Simple")


# ------------------------------------------------------------------ NVLSTree, across nodes

H100_TWO = NcclGraph(busbw=H100_NVLINK, channels=16, tree_cap=8 * 41.4 * GB,
                     nvls_channels=8, nvls_bw_intra=40 * GB, nvls_bw_inter=48 * GB,
                     nvls_efficiency=0.85, nvls_tree_cap=57.7 * GB)


def test_2_x_8_h100_nvls_tree_by_hand():
    t = _t()
    # min(59.5, interBw 48 x 2 on 2 nodes = 96, perChMaxNVLSTreeBw 57.7) = 57.7, x 8 = 461.6
    # GB/s busbw, algbw x 16/30; latency 0 + 25 + 2 x log2i(2) x 20.9 = 66.8 us
    bw = 57.7 * GB * 8 * 16 / 30
    assert t.bandwidth("in-network-tree", "Simple", 16, 2, H100_TWO) == pytest.approx(
        bw, rel=1e-12)
    assert t.latency("in-network-tree", "Simple", 16, 2) == pytest.approx(66.8 * US,
                                                                          rel=1e-12)
    n = 2.0 ** 30
    nvlstree = 66.8 * US + n / bw
    # ring Simple: 370.8 x 16/30 = 197.76 GB/s, 131.6 us x 1.4 (plateau) = 184.24 us
    ring = 184.24 * US + n / (H100_NVLINK * 16 / 30)
    assert t.predicted_time("in-network-tree", "Simple", n, 16, 2, H100_TWO) == \
        pytest.approx(nvlstree, rel=1e-12)
    assert t.predicted_time("ring", "Simple", n, 16, 2, H100_TWO) == pytest.approx(
        ring, rel=1e-12)
    assert t.choose("all-reduce", n, 16, 2, graph=H100_TWO) == ("in-network-tree", "Simple")


def test_4_x_8_h100_nvls_tree_takes_the_3_plus_cap_and_two_log_steps():
    g = NcclGraph(busbw=H100_NVLINK, channels=16, tree_cap=8 * 36.0 * GB,
                  nvls_channels=8, nvls_bw_intra=40 * GB, nvls_bw_inter=48 * GB,
                  nvls_efficiency=0.85, nvls_tree_cap=45.5 * GB)
    t = _t()
    # min(59.5, 48 (no x 2 beyond 2 nodes), 45.5) x 8 = 364 GB/s, algbw x 32/62; latency
    # 25 + 2 x 2 x 20.9 = 108.6 us
    assert t.bandwidth("in-network-tree", "Simple", 32, 4, g) == pytest.approx(
        364 * GB * 32 / 62, rel=1e-12)
    assert t.latency("in-network-tree", "Simple", 32, 4) == pytest.approx(108.6 * US,
                                                                          rel=1e-12)


def test_blackwell_nvls_tree_size_correction_by_hand():
    g = NcclGraph(busbw=376 * GB, channels=16, nvls_channels=8, nvls_bw_intra=48 * GB,
                  nvls_bw_inter=48 * GB, nvls_efficiency=0.74, nvls_tree_correction=True)
    t = _t()
    # 4 nodes: min(48 x 0.74 x 7/8 x 2 = 62.16, 48) = 48, x 8 = 384 GB/s, x 32/62
    bw = 384 * GB * 32 / 62
    lat = 108.6 * US
    # 64 MiB: log2i(2^26 >> 6) = 20, treeCorrectionFactor[Simple][20] = 0.8
    assert t.predicted_time("in-network-tree", "Simple", 2.0 ** 26, 32, 4, g) == \
        pytest.approx(lat + 2.0 ** 26 / (bw * 0.8), rel=1e-12)
    # 1 GiB: log 24, past the table: no correction
    assert t.predicted_time("in-network-tree", "Simple", 2.0 ** 30, 32, 4, g) == \
        pytest.approx(lat + 2.0 ** 30 / bw, rel=1e-12)


# ------------------------------------------------------------------ where they run


def test_enable_conditions():
    t = _t()
    # NVLSTree never on one node, NVLS not across nodes without CollNet, Simple only
    assert t.choose("all-reduce", 2.0 ** 30, 16, 2, graph=H100_TWO)[0] != "in-network"
    assert t.choose("all-reduce", 2.0 ** 30, 8, 1, graph=H100_ONE)[0] != "in-network-tree"
    for k in range(10, 36, 2):
        pick = t.choose("all-reduce", 2.0 ** k, 8, 1, graph=H100_ONE)
        assert pick[0] != "in-network" or pick[1] == "Simple"
    # NVLS across nodes runs only with CollNet (SHARP), not priced: left to auto
    assert t.choose("all-reduce", 2.0 ** 30, 16, 2, graph=H100_TWO,
                    pairs={("ring", "Simple"), ("in-network", "Simple")}) is None
    # fewer than 2 NVLS channels: NCCL disables NVLS (bandwidth 0, never chosen)
    one = NcclGraph(busbw=360 * GB, channels=16, nvls_channels=1, nvls_bw_intra=40 * GB,
                    nvls_bw_inter=60 * GB, nvls_efficiency=0.85)
    assert t.bandwidth("in-network", "Simple", 8, 1, one) == 0.0
    assert t.choose("all-reduce", 2.0 ** 30, 8, 1, graph=one)[0] == "ring"


def test_on_fabrics_nccl_chooses_nvls_and_nvls_tree():
    m = FabricCostModel(build("single-switch:n=8,gpu=H100-SXM"), algorithms="nccl",
                        tuner="nccl", validated=True)
    assert m.tuner_choice("all-reduce", 2.0 ** 16, 8) == ("ring", "LL")
    assert m.tuner_choice("all-reduce", 2.0 ** 30, 8) == ("in-network", "Simple")
    r = FabricCostModel(build("rail-optimized:domains=2"), algorithms="nccl", tuner="nccl",
                        validated=True)
    g = r.nccl_graph(r.group(16))
    assert (g.nvls_channels, g.nvls_bw_intra, g.nvls_bw_inter) == (8, 40 * GB, 48 * GB)
    assert g.nvls_tree_cap == 57.7 * GB
    assert g.busbw == pytest.approx(H100_NVLINK, rel=1e-12)   # across nodes: unchanged
    assert r.tuner_choice("all-reduce", 2.0 ** 30, 16) == ("in-network-tree", "Simple")
    # the chosen pair is costed by the model's own costing
    res = r.cost("all-reduce", 2.0 ** 30, 16)
    assert res.time == r.cost("all-reduce", 2.0 ** 30, 16, "in-network-tree").time


@pytest.mark.skipif(not CSV.is_file(), reason="../shared/reference absent")
def test_nvls_constants_are_the_reference_csv():
    with open(CSV) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    nvls = {(r["kind"], r["link_or_factor"]): float(r["value"]) for r in rows
            if r["algorithm"] == "nvls"}
    sp = _t().spec
    assert sp["nvls_step_latency_nvlink"] == pytest.approx(nvls[("hw_latency", "nvlink")] * US)
    m = FabricCostModel(build("single-switch:n=8,gpu=H100-SXM"), tuner="nccl", validated=True)
    b = FabricCostModel(build("single-switch:n=8,gpu=B200-HGX"), tuner="nccl", validated=True)
    assert m.nccl_graph(m.group(8)).nvls_efficiency == nvls[("bandwidth_factor", "hopper")]
    assert b.nccl_graph(b.group(8)).nvls_efficiency == nvls[("bandwidth_factor",
                                                              "blackwell")]

