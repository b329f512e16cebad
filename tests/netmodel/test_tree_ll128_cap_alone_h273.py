"""NCCL's LL128 tree cap (perChMaxTreeLL128Bws) applies without the Simple one (h273).

NCCL's tuner caps an LL128 tree's busbw at nChannels x perChMaxTreeLL128Bw whatever the
perChMaxTreeBws line did (src/graph/tuning.cc, the two clamps are separate statements); a
calibration holding ``tree_ll128_channel_bandwidth`` but an empty
``tree_channel_bandwidth`` had its LL128 table silently dropped (every tree line
uncapped, even at 1 GB/s a channel).
"""

from __future__ import annotations

import pytest

from netmodel.collectives.model import FabricCostModel
from topologies import build

AR = "all-reduce"


def _least(cal_changes: dict) -> dict[str, float]:
    g = build("rail-optimized:domains=4")   # 4 x 8 H100: 3+ nodes, 8 rails
    base = FabricCostModel(g).calibration
    cal = base.with_(**cal_changes)
    m = FabricCostModel(g, calibration=cal)
    comp = m.compiled(AR, "tree", m.group(32))
    return {p.name: comp.line_parts(p, cal)[-1][4] for p in comp.protocols(cal)}


def test_ll128_table_alone_caps_the_ll128_tree():
    # Hopper's perChMaxTreeLL128Bws on 3+ nodes, 29.0 GB/s: two phases of 1 / (8 x 29e9)
    least = _least({"tree_channel_bandwidth": ()})
    assert least["LL128"] == pytest.approx(2 / (8 * 29.0e9), rel=1e-12)
    assert least["Simple"] == 0.0   # no Simple table: no cap there
    # LL's is no channel table's but NCCL's LL cap across 3+ nodes, algbw 20.4 / 2 GB/s
    # (test_tree_net_rules_h534)
    assert least["LL"] == pytest.approx(2 / 20.4e9, rel=1e-12)


def test_a_binding_ll128_table_alone_slows_the_collective():
    # 1 GB/s a channel, 8 channels: 1 GiB under LL128 takes at least 2 x 2^30 / 8e9 s
    g = build("rail-optimized:domains=4")
    cal = FabricCostModel(g).calibration.with_(tree_channel_bandwidth=(),
                                               tree_ll128_channel_bandwidth=(1e9,) * 3)
    m = FabricCostModel(g, calibration=cal)
    comp = m.compiled(AR, "tree", m.group(32))
    ll128 = next(p for p in comp.protocols(cal) if p.name == "LL128")
    a, b = comp.lines(ll128, cal)[-1]
    assert b >= 2 / 8e9
    t = comp.timings(ll128, cal, 2 ** 30)
    assert all(s.tree_cap is not None and s.tree_cap.table == "perChMaxTreeLL128Bws"
               and s.tree_cap.channel_bandwidth == 1e9 and s.tree_cap.busbw == 8e9
               for s in t)


def test_with_both_tables_nothing_changes():
    # the shipped case: LL128 min(36.0 x 0.92, 29.0) = 29.0, Simple 36.0 (Hopper, 3+)
    least = _least({})
    assert least["LL128"] == pytest.approx(2 / (8 * 29.0e9), rel=1e-12)
    assert least["Simple"] == pytest.approx(2 / (8 * 36.0e9), rel=1e-12)
