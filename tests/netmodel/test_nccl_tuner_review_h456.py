"""NCCL's own tuner, emulated (tuner ``nccl``): the refinements of NCCL's ring and LL model
that the first form left out, each derived here by hand from NVIDIA/nccl's source
(src/tuning/ring.cc and tree.cc of 2026, src/graph/tuning.cc of the 2.19-2.2x releases):

- across nodes LL's busbw is at most ``llMaxBw``, by host CPU: 39.0 GB/s on 2 nodes, 20.4 on
  3 or more (the row of every CPU but AMD's), for ring LL and tree LL alike;
- across nodes a ring's NVLink step costs at least the network's post overhead (1 us, 3 us
  under Simple);
- at one rank a node a ring's network step is the tree's network latency, and ring LL128
  keeps its 0.92 (the 0.7 of 2.19's source is gone).
"""

from __future__ import annotations

import pytest

from netmodel.collectives.tuner_plugin import NcclGraph, get_tuner

US = 1e-6
G = NcclGraph(busbw=400e9, channels=16, tree_cap=8 * 41.4e9)   # Hopper, 2 nodes


def _t():
    return get_tuner("nccl")


def test_two_nodes_ring_ll_capped_at_39_gbs_and_steps_at_the_net_overhead():
    n = 2.0 ** 16
    # busbw min(0.5 x 400, 39.0) = 39.0, algbw x 16 / 30 = 20.8 GB/s; latency 6.6 + 28 x
    # max(0.6, 1.0) + 2 x 2.7 = 40.0 us
    assert _t().predicted_time("ring", "LL", n, 16, 2, G) == pytest.approx(
        40.0 * US + n / 20.8e9, rel=1e-12)
    assert _t().bandwidth("ring", "LL", 16, 2, G) == pytest.approx(20.8e9, rel=1e-12)


def test_two_nodes_tree_ll_capped_at_39_gbs():
    n = 2.0 ** 16
    # min(min(368, 331.2) / 3.8 = 87.2, 39.0) = 39.0, half = 19.5, x
    # treeCorrectionFactor[LL][log2i(2^10) = 10] = 0.6 -> 11.7 GB/s; latency 6.8 + 2 (7 x 0.6
    # + 5.0) = 25.2 us
    assert _t().predicted_time("tree", "LL", n, 16, 2, G) == pytest.approx(
        25.2 * US + n / 11.7e9, rel=1e-12)


def test_one_node_ll_cap_stays_the_graphs():
    g = NcclGraph(busbw=370e9, channels=16, ll_cap=141e9)
    # one node: min(0.5 x 370, 141) = 141, x 8 / 14; no net overhead (0.6 us steps)
    assert _t().bandwidth("ring", "LL", 8, 1, g) == pytest.approx(141e9 * 8 / 14, rel=1e-12)
    assert _t().latency("ring", "LL", 8, 1) == pytest.approx((6.6 + 14 * 0.6) * US,
                                                             rel=1e-12)


def test_simple_ring_step_across_nodes_is_max_of_nvlink_and_three_overheads():
    # Simple: max(3.4, 3 x 1.0) = 3.4 us: 2 x 8 ranks 8.4 + 28 x 3.4 + 2 x 14 = 131.6 us
    assert _t().latency("ring", "Simple", 16, 2) == pytest.approx(131.6 * US, rel=1e-12)
    # LL128: max(1.9, 1.0) = 1.9: 14 + 28 x 1.9 + 2 x 4.0 = 75.2 us
    assert _t().latency("ring", "LL128", 16, 2) == pytest.approx(75.2 * US, rel=1e-12)


def test_one_rank_a_node_ring_ll128_keeps_0_92_and_takes_the_trees_net_latency():
    g = NcclGraph(busbw=50e9, channels=16)
    n = 2.0 ** 20
    # 16 nodes x 1 rank: busbw 0.92 x 50 = 46, algbw x 16 / 30; 30 steps all across nodes,
    # each the tree's LL128 network latency 8.5 us: 14.0 + 30 x 8.5 = 269.0 us
    assert _t().bandwidth("ring", "LL128", 16, 16, g) == pytest.approx(46e9 * 16 / 30,
                                                                        rel=1e-12)
    assert _t().predicted_time("ring", "LL128", n, 16, 16, g) == pytest.approx(
        269.0 * US + n / (46e9 * 16 / 30), rel=1e-12)
    # Simple: the tree's 14 us as the ring's: 8.4 + 30 x 14 = 428.4 us
    assert _t().latency("ring", "Simple", 16, 16) == pytest.approx(428.4 * US, rel=1e-12)
