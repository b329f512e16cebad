"""NCCL's own tuner, emulated (tuner ``nccl``, netmodel/collectives/tuner_plugin.py
NcclTuner): NCCL's predicted times (NVIDIA/nccl src/graph/tuning.cc) derived here by hand,
its choice on NVIDIA/nccl issue 1801's configuration (NCCL chose the ring, which the model's
own auto does not), and where it leaves the choice to the model's auto. Every test fails
before the tuner existed (get_tuner('nccl'): unknown tuner)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.tuner_plugin import NcclGraph, get_tuner, tuner_names
from topologies import build

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT.parent / "shared" / "reference" / "nccl_tuning_constants.csv"
PUBLISHED = ROOT / "tests" / "netmodel" / "data" / "nccl_allreduce_published.csv"
US = 1e-6


def _tuner():
    return get_tuner("nccl")


def test_the_name_is_listed_and_loads():
    assert "nccl" in tuner_names()
    assert _tuner().label == "nccl"


def test_two_nodes_64_mib_ring_simple_beats_tree_simple_by_hand():
    # 2 nodes x 8 ranks, graph busbw 400 GB/s, 16 channels, tree cap 8 x 41.4 GB/s (Hopper,
    # 2 nodes); 64 MiB = 2^26 B
    g = NcclGraph(busbw=400e9, channels=16, tree_cap=8 * 41.4e9)
    n = 2.0 ** 26
    # ring Simple: algbw 400 x 16 / 30; latency 8.4 + (30 - 2) x 3.4 + 2 x 14 = 131.6 us,
    # x 1.4 (Simple across nodes, 2^26 / (16 x 16) >= 64 B): 184.24 us
    ring = 184.24 * US + n / (400e9 * 16 / 30)
    # tree Simple: busbw min(0.92 x 400, 331.2) = 331.2, algbw half: 165.6, x
    # treeCorrectionFactor[Simple][log2(2^26 >> 6) = 20] = 0.8; latency 8.4 + 2 (7 x 4.0 +
    # log2(2) x 14) = 92.4 us
    tree = 92.4 * US + n / (165.6e9 * 0.8)
    t = _tuner()
    assert t.predicted_time("ring", "Simple", n, 16, 2, g) == pytest.approx(ring, rel=1e-12)
    assert t.predicted_time("tree", "Simple", n, 16, 2, g) == pytest.approx(tree, rel=1e-12)
    assert ring == pytest.approx(498.81 * US, abs=0.01 * US)
    assert tree == pytest.approx(598.96 * US, abs=0.01 * US)
    assert t.choose("all-reduce", n, 16, 2, graph=g, pairs={("ring", "Simple"),
                                                            ("tree", "Simple")},
                    available=lambda a, p: p == "Simple") == ("ring", "Simple")


def test_thirty_two_nodes_1_mib_tree_ll128_beats_tree_ll_and_ring_ll_by_hand():
    # 32 nodes x 8 ranks (256), busbw 400 GB/s, tree cap 8 x 36.0 GB/s (Hopper, 3+ nodes);
    # across 3 or more nodes LL's busbw is at most llMaxBw 20.4 GB/s (a host not AMD's)
    g = NcclGraph(busbw=400e9, channels=16, tree_cap=8 * 36.0e9)
    n = 2.0 ** 20
    # ring LL: busbw min(0.5 x 400, 20.4) = 20.4, algbw x 256 / 510; latency 6.6 + (510 -
    # 62) x max(0.6, 1.0 net overhead) + 62 x 2.7 = 622.0 us (no plateau: LL)
    ring = 622.0 * US + n / (20.4e9 * 256 / 510)
    # tree LL: min(min(368, 288) / 3.8, 20.4) = 20.4, half, x treeCorrectionFactor[LL][14]
    # = 0.5; latency 6.8 + 2 (7 x 0.6 + log2(32) x 5.0) = 65.2 us
    tree = 65.2 * US + n / (20.4e9 * 0.5 * 0.5)
    # tree LL128: 288 x 120/128 = 270 (no LL128 cap here), half, x
    # treeCorrectionFactor[LL128][14] = 0.6; latency 14.0 + 2 (7 x 1.25 + 5 x 8.5) = 116.5 us
    tree128 = 116.5 * US + n / (270e9 * 0.5 * 0.6)
    t = _tuner()
    assert t.predicted_time("ring", "LL", n, 256, 32, g) == pytest.approx(ring, rel=1e-12)
    assert t.predicted_time("tree", "LL", n, 256, 32, g) == pytest.approx(tree, rel=1e-12)
    assert t.predicted_time("tree", "LL128", n, 256, 32, g) == pytest.approx(tree128,
                                                                               rel=1e-12)
    assert (ring / US, tree / US, tree128 / US) == pytest.approx((724.4, 270.803, 129.445),
                                                                 abs=1e-3)
    assert t.choose("all-reduce", n, 256, 32, graph=g) == ("tree", "LL128")


def test_large_messages_take_the_ring_on_any_node_count():
    # at >= 512 MiB no correction: the tree's algbw is at most 0.46 busbw, the ring's
    # n / (2 (n - 1)) >= 0.5 busbw, so only latency could favour the tree
    t = _tuner()
    g = NcclGraph(busbw=400e9, channels=16)
    for nodes in (2, 3, 4, 5, 16, 64):
        assert t.choose("all-reduce", 2.0 ** 34, 8 * nodes, nodes, graph=g)[0] == "ring"


def _row(case):
    with open(PUBLISHED) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    return next(r for r in rows if r["case"] == case)


@pytest.mark.parametrize("k", [4, 8])
def test_issue_1801_nccl_chose_ring_and_the_emulation_does(k):
    r = _row(f"gb200-3x{k}-ring")
    gpus, n = int(r["gpus"]), float(r["bytes"])
    cal = default_calibration().with_(nccl_release=r["nccl"])
    kw = {"algorithms": ("ring", "tree"), "validated": True, "calibration": cal}
    tuned = FabricCostModel(build(r["fabric"]), tuner="nccl", **kw)
    plain = FabricCostModel(build(r["fabric"]), **kw)
    assert tuned.tuner_choice("all-reduce", n, gpus) == ("ring", "Simple")
    # the model's own auto takes its tree (1.5 S on 3 nodes), NCCL's choice the ring
    assert plain.cost("all-reduce", n, gpus).algorithm == "tree"
    res = tuned.cost("all-reduce", n, gpus)
    ring = plain.cost("all-reduce", n, gpus, "ring")
    assert (res.algorithm, res.protocol) == ("ring", "Simple")
    assert res.time == ring.time       # the chosen pair costed by the model's own costing
    assert abs(res.busbw / 1e9 / float(r["busbw_GBps"]) - 1) < 0.06
    # the graph NCCL's tuner reads: the model's ring busbw, k NICs of 47 GB/s; tree caps
    # of k channels x 2.27's Blackwell 72.0 / 58.0 GB/s (3+ nodes)
    g = tuned.nccl_graph(tuned.group(gpus))
    assert g.busbw == pytest.approx(k * 47e9, rel=1e-9)
    assert (g.tree_cap, g.tree_ll128_cap) == pytest.approx((k * 72.0e9, k * 58.0e9))
    # NCCL's algbw at 16 GiB per unit of busbw: ring n / (2 (n - 1)) over the tree's 0.46
    t = tuned.tuner
    ratio = t.bandwidth("ring", "Simple", gpus, 3, g) / t.bandwidth("tree", "Simple", gpus, 3, g)
    assert ratio == pytest.approx(gpus / (2 * (gpus - 1)) / 0.46, rel=1e-12)


def test_leaves_the_choice_to_auto_where_collnet_can_run_and_on_big_domains():
    # NVLS and NVLSTree are priced since issue 11 (test_nccl_nvls_h499.py); NVLS across
    # nodes (NVLS with CollNet) and CollNet are not
    t = _tuner()
    g = NcclGraph(busbw=400e9, channels=16)
    pairs = {("ring", "Simple"), ("in-network", "Simple")}
    assert t.choose("all-reduce", 2.0 ** 30, 16, 2, graph=g, pairs=pairs) is None
    assert t.choose("all-reduce", 2.0 ** 30, 16, 2, graph=g,
                    pairs={("ring", "Simple"), ("collnet-chain", "Simple")}) is None
    assert t.choose("all-gather", 2.0 ** 30, 16, 2, graph=g) is None
    assert t.choose("all-reduce", 2.0 ** 30, 128, 2, graph=g) is None   # 64 a node
    # on a fabric: 2 x 8 H100 with SHARP (CollNet runs): the model's auto, as without it
    spec = "rail-optimized:domains=2,sharp=true"
    m = FabricCostModel(build(spec), algorithms="nccl", tuner="nccl", validated=True)
    assert m.tuner_choice("all-reduce", 2.0 ** 30, 16) is None
    plain = FabricCostModel(build(spec), algorithms="nccl", validated=True)
    sizes = 2.0 ** np.arange(10, 34, 3)
    assert np.array_equal(m.sweep("all-reduce", sizes, 16).time,
                          plain.sweep("all-reduce", sizes, 16).time)


def test_a_tuner_beside_a_named_algorithm_is_refused():
    with pytest.raises(UserError, match="tuner 'nccl' chooses under algorithm 'auto'"):
        FabricCostModel(build("rail-optimized:domains=2"), algorithm="ring", tuner="nccl")


@pytest.mark.skipif(not CSV.is_file(), reason="../shared/reference absent")
def test_constants_are_the_reference_csv():
    with open(CSV) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    sp = _tuner().spec
    seen = 0
    for r in rows:
        alg, proto, link, v = r["algorithm"], r["protocol"], r["link_or_factor"], r["value"]
        if r["kind"] == "base_latency":
            assert sp["base_latency"][alg][proto] == pytest.approx(float(v) * US)
        elif r["kind"] == "hw_latency_per_step" and link in ("nvlink", "net"):
            assert sp[f"step_latency_{link}"][alg][proto] == pytest.approx(float(v) * US)
        elif r["kind"] == "bandwidth_factor" and alg == "ring":
            assert sp["ring_factor"][proto] == float(v)
        elif r["kind"] == "bandwidth_factor" and alg == "tree":
            assert sp["tree_factor"] == float(v)
        else:
            continue
        seen += 1
    assert seen == 6 + 12 + 2 + 1
