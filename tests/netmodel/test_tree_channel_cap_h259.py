"""NCCL's per-channel tree cap (perChMaxTreeBws) in the collective model (h259).

NCCL's tuner takes a tree all-reduce's busbw as at most nChannels x perChMaxTreeBws[generation]
[1 / 2 / 3+ nodes] and its algbw as half of that (NVIDIA/nccl src/graph/tuning.cc); the tree
has a channel per NIC rail across domains. The numbers below are derived by hand from
netmodel/data/collective_generations.toml's rows (Ampere 24.0 / 23.6 / 17.8, Hopper 38.7 /
41.4 / 36.0, Blackwell 70.0 / 42.8 / 24.0 GB/s).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.collectives.calibration_files import load_generations
from netmodel.collectives.concurrent import concurrent_linear
from netmodel.collectives.model import FabricCostModel
from netmodel.study.adjusted_comm import AdjustedComm
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from topologies import build, rail_optimized

AR = "all-reduce"


def _tree_lines(m, group, proto="Simple"):
    return [(a, b) for name, p, a, b, _ in m.candidates(AR, group, "tree") if p == proto]


@pytest.mark.parametrize(("domains", "gpu", "algbw", "ll128"), [
    # LL128 (h264): min(perChMaxTreeBws x 0.92, perChMaxTreeLL128Bws) a channel
    (2, "B200-HGX", 8 * 42.8e9 / 2, 31.67e9),       # Blackwell, 2 nodes: 171.2 GB/s
    (4, "B200-HGX", 8 * 24.0e9 / 2, 20.0e9),        # Blackwell, 3+ nodes: 96.0
    (64, "B200-HGX", 8 * 24.0e9 / 2, 20.0e9),
    (2, "A100-SXM-80GB", 8 * 23.6e9 / 2, 20.0e9),   # Ampere, 2 nodes: 94.4
    (3, "H100-SXM", 8 * 36.0e9 / 2, 29.0e9),        # Hopper, 3+ nodes: 144.0
])
def test_tree_steady_rate_is_the_cap(domains, gpu, algbw, ll128):
    # 8 rails of 400 Gb/s (50 GB/s) a GPU: the links alone would run the tree near the NIC
    # rate; the cap, rails x perChMaxTreeBws / 2, is below it on every case here
    m = FabricCostModel(rail_optimized(domains=domains, gpu=gpu), algorithms="nccl")
    group = m.group(8 * domains)
    a, b = _tree_lines(m, group)[-1]              # the large-message line
    assert b == pytest.approx(1 / algbw, rel=1e-12)
    parts = m.candidate_parts(AR, group, "tree")
    large = parts[1] > 0                          # each protocol's large-message line
    assert large.sum() == 3 and np.all(parts[4][large] > parts[2][large])  # cap, not links
    # the protocols scale the capped busbw after the cap (LL128: 0.92 of it), and LL128
    # has its own per-channel cap, lower here (h264)
    _, b128 = _tree_lines(m, group, "LL128")[-1]
    assert ll128 < algbw * 2 / 8 * 0.92
    assert b128 == pytest.approx(1 / (8 * ll128 / 2), rel=1e-12)
    # the cost's per-step breakdown shows it: reduce and broadcast run at once, one step
    # taking the cap's whole time (both phases' halves)
    r = m.cost(AR, 2.0 ** 34, group, algorithm="tree")
    assert r.protocol == "Simple" and r.time == pytest.approx(a + b * 2.0 ** 34, rel=1e-12)
    assert len(r.steps) == 1
    assert r.steps[0].serialization == pytest.approx(2.0 ** 34 / algbw, rel=1e-12)


def test_only_nccls_tree_is_capped():
    # NCCL applies perChMaxTreeBws to NCCL_ALGO_TREE alone: not to its ring, CollNet,
    # NVLS or NVLSTree (the model's in-network-tree), nor to a tree inside one domain,
    # whose channels are the NVLink graph's (unknown to the model); the ring across nodes
    # has its LL line's cap (llMaxBw across nodes, test_ring_net_rules_h528.py) alone
    m = FabricCostModel(build("rail-optimized:domains=4,gpu=B200-HGX,sharp=true"),
                        algorithms="nccl")
    group = m.group(32)
    for name in m.algorithm_names(AR, "auto"):
        try:
            least = m.candidate_parts(AR, group, name)[4]
        except UserError:
            continue
        if name == "ring":
            ll = np.array([c[1] == "LL" for c in m.candidates(AR, group, name)])
            assert np.all(least[ll] > 0) and np.all(least[~ll] == 0)
            continue
        assert np.all(least > 0) if name == "tree" else np.all(least == 0), name
    one = FabricCostModel(build("single-switch:n=8,gpu=B200-HGX"), algorithms="nccl")
    assert np.all(one.candidate_parts(AR, one.group(8), "tree")[4] == 0)


def test_concurrent_groups_see_the_cap():
    # every tree of 4 groups (of 2 domains each) at once: their lines are the tree's alone
    # or slower, never faster than the cap (the concurrent path combines the same steps)
    m = FabricCostModel(rail_optimized(domains=8, gpu="B200-HGX"), algorithms="nccl")
    groups = [tuple(m.group(64)[16 * k:16 * (k + 1)]) for k in range(4)]
    choices, _, b = concurrent_linear(m, groups, AR, algorithm="tree")
    simple = [i for i, c in enumerate(choices) if c[1] == "Simple"]
    assert simple and np.all(b[simple] >= 1 / (8 * 42.8e9 / 2) * (1 - 1e-12))


def test_rescoring_crosses_the_cap_as_recompiling_does():
    # h100-dgx, 16 GPUs (2 DGX): the tree's links would run it at 4.7e-12 s/B, the cap
    # (8 x 41.4 GB/s / 2) at 6.04e-12: capped at the scenario's own links, link-bound at a
    # quarter of them; re-scoring each candidate line equals recompiling the scaled fabric
    s = get_scenario("h100-dgx")
    c = ScenarioCollectives(s)
    a_fixed, a_fill, b_link, b_red, b_least = c.parts(AR, 16)
    cands = c.model(16).candidates(AR, c.model(16).group(16))
    names, protos = np.array([w[0] for w in cands]), np.array([w[1] for w in cands])
    # the LL tree's is NCCL's LL cap across 2 nodes instead, algbw 39.0 / 2 GB/s
    # (test_tree_net_rules_h534), above the channel cap
    ll = (names == "tree") & (protos == "LL")
    assert ll.any() and np.all(b_least[ll] == pytest.approx(2 / 39.0e9, rel=1e-12))
    tree = (b_least > 0) & (names == "tree") & ~ll
    assert tree.any() and b_least[tree].min() == pytest.approx(2 / (8 * 41.4e9), rel=1e-12)
    # (h268) in-network-tree's lines meet NVLSTree's cap: 8 heads x 57.7 GB/s of busbw,
    # counted as a ring's, 2 x 15/16 / (8 x 57.7e9) s/B
    nvls = names == "in-network-tree"
    assert nvls.any() and b_least[nvls] == pytest.approx(2 * 15 / 16 / (8 * 57.7e9), rel=1e-12)
    assert np.any(b_link[tree] < b_least[tree]) and np.all(b_link[tree] / 0.25 > b_least[tree])
    for scale in (0.25, 0.5, 1.0, 4.0):
        exact = ScenarioCollectives(s.with_param("adjust.bandwidth_scale", scale))
        m = exact.model(16)
        want = m.candidates(AR, m.group(16))
        a, b = AdjustedComm(c, scale).lines(AR, 16)
        np.testing.assert_allclose(a, [w[2] for w in want], rtol=1e-12, atol=0)
        np.testing.assert_allclose(b, [w[3] for w in want], rtol=1e-12, atol=0)
    # at the scenario's own links, to the last bit (the grid scorer's requirement)
    a, b = AdjustedComm(c, 1.0).lines(AR, 16)
    own = c.model(16).candidates(AR, c.model(16).group(16))
    assert np.array_equal(b, [w[3] for w in own]) and np.array_equal(a, [w[2] for w in own])


@settings(max_examples=25, deadline=None)
@given(rate=st.floats(1e9, 1e12), n=st.floats(1e3, 1e11))
def test_a_cap_only_slows_the_tree(rate, n):
    # any per-channel rate: the tree is never faster than without the cap, never faster
    # than n bytes at rails x rate / 2, and a cap far above the links changes nothing
    g = rail_optimized(domains=4, gpu="B200-HGX")
    free = FabricCostModel(g, algorithms="nccl")
    cal = free.calibration
    capped = FabricCostModel(g, algorithms="nccl",
                             calibration=cal.with_(tree_channel_bandwidth=(rate,) * 3))
    none = FabricCostModel(g, algorithms="nccl",
                           calibration=cal.with_(tree_channel_bandwidth=()))
    huge = FabricCostModel(g, algorithms="nccl",
                           calibration=cal.with_(tree_channel_bandwidth=(1e18,) * 3))
    x = np.array([n])
    t_cap = capped.sweep(AR, x, 32, algorithm="tree").time[0]
    t_none = none.sweep(AR, x, 32, algorithm="tree").time[0]
    assert t_cap >= t_none * (1 - 1e-12)
    assert t_cap >= n / (8 * rate / 2) * (1 - 1e-12)
    assert huge.sweep(AR, x, 32, algorithm="tree").time[0] == t_none


@pytest.mark.parametrize("value", ["[24e9, 23.6e9]", "[24e9, -1.0, 17.8e9]", '"fast"',
                                   "[24e9, true, 17.8e9]", "[24e9, nan, 17.8e9]"])
def test_bad_tree_cap_is_refused_in_one_line(tmp_path, value):
    f = tmp_path / "gens.toml"
    f.write_text(f'default = "a"\n[generation.a]\n'
                 f"tree_channel_bandwidth = {value}\n")
    with pytest.raises(UserError) as e:
        load_generations(f)
    msg = str(e.value)
    assert "\n" not in msg and "[generation.a]: tree_channel_bandwidth must be three finite " \
        "numbers >= 1 bytes/s" in msg, msg


def test_a_generation_reads_its_tree_cap(tmp_path):
    f = tmp_path / "gens.toml"
    f.write_text('default = "a"\n[generation.a]\n'
                 "tree_channel_bandwidth = [24e9, 23.6e9, 17.8e9]\n")
    (gen,), _ = load_generations(f)
    assert gen.tree_channel_bandwidth == (24e9, 23.6e9, 17.8e9)
