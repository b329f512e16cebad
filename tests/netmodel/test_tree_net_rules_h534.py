"""What NCCL's tuner charges a tree across nodes, in the model (issue 11).

NVIDIA/nccl src/tuning/tree.cc at 1fc949c5 (2026; src/graph/tuning.cc at b6475625, 2.20.3,
alike), ncclTuningTreeModelInit, all-reduce only: ``busBw = std::min(busBw * .92,
nChannels * perChMaxTreeBw)``, then under LL ``busBw = std::min(busBw * 1.0 / 3.8,
llMaxBw)``, algbw = busbw x .5; llMaxBw = llMaxBws[index1][index2] with index1 the host
CPU's row across nodes (every CPU but AMD's: {39.0, 39.0, 20.4} GB/s), index2 ``nNodes <= 2
? nNodes - 1 : 2`` (the ring's cap, test_ring_net_rules_h528.py). The tree's latency,
``2 * ((nRanks / nNodes - 1) * intraLat + log2i(nNodes) * interLat)``, takes no network
post overhead: that is the ring's alone ("Inter-node rings still have to launch nsteps *
net overhead").

Hand derivations on ``rail-optimized:domains=D,gpu=B200-HGX`` (HGX B200 servers, one 400G
NIC a GPU): NCCL's tree all-reduce is one step of 8 channels (one a rail) across D nodes,
its latency payments 2 x 7 inside a server (0.17 us a route) and 2 x log2(D) across (0.53
us a route on 2 servers); the calibration's constants (collective_defaults.toml,
collective_generations.toml): LL 6.6 us once, 0.6 us a scale-up step, 2.7 us a scale-out
step, bandwidth factor 0.391; perChMaxTreeBws 42.8 GB/s on 2 nodes, LL128's own 31.67.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.algorithms import generate
from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.pipeline_fill import tree_ll_least, tree_net_mask
from topologies import build

UP, ACROSS = 0.17e-6, 0.53e-6
GIB = 2.0 ** 30


def _model(domains: int) -> FabricCostModel:
    return FabricCostModel(build(f"rail-optimized:domains={domains},gpu=B200-HGX"),
                           algorithms="nccl", validated=True)


def _lines(model, p):
    """Each protocol's lines (a, b) of the tree all-reduce, smallest sizes' first."""
    out: dict[str, list] = {}
    for c in model.candidates("all-reduce", model.group(p), "tree"):
        out.setdefault(c[1], []).append((c[2], c[3]))
    return out


@pytest.mark.parametrize(("domains", "cap"), [(2, 39.0e9), (4, 20.4e9)])
def test_tree_ll_held_to_nccls_cap_across_nodes(domains, cap):
    # algbw = busbw x .5: at least 2 / llMaxBw seconds a byte at large sizes; the channel
    # cap under LL (8 rails x perChMaxTreeBw of the node count x LL's bandwidth factor, the
    # generation's rows: 8 x 42.8 GB/s x 0.391 on 2 nodes, 2 / 133.9 GB/s) is below it, so
    # llMaxBw is the one that binds
    model = _model(domains)
    cal = model.calibration
    channels = 8 * cal.tree_channel_bandwidth[min(domains, 3) - 1] \
        * cal.protocol("LL").bandwidth_factor
    if domains == 2:   # the figures above are the calibration's
        assert channels == pytest.approx(8 * 42.8e9 * 0.391, rel=1e-12)
    assert 2 / channels < 2 / cap
    lines = _lines(model, 8 * domains)
    assert lines["LL"][-1][1] == pytest.approx(2 / cap, rel=1e-12)
    # the line's start-up takes no post overhead (the ring's alone): on 2 servers 6.6 us
    # + 14 x (0.6 + 0.17) + 2 x (2.7 + 0.53) us
    if domains == 2:
        assert lines["LL"][0][0] == pytest.approx(
            6.6e-6 + 14 * (0.6e-6 + UP) + 2 * (2.7e-6 + ACROSS), rel=1e-12)


def test_tree_ll128_and_simple_keep_their_channel_caps():
    # NCCL's LL cap is LL's only: LL128 at 8 x 31.67 GB/s (perChMaxTreeLL128Bws, below
    # 42.8 x 0.92), Simple at 8 x 42.8 GB/s, algbw half each
    lines = _lines(_model(2), 16)
    assert lines["LL128"][-1][1] == pytest.approx(2 / (8 * 31.67e9), rel=1e-12)
    assert lines["Simple"][-1][1] == pytest.approx(2 / (8 * 42.8e9), rel=1e-12)


def test_tree_ll_at_one_gib_by_hand():
    # forced tree at 1 GiB, step by step under LL: the tree step's serial time is the cap's
    # 2 / 39.0 GB/s a byte (its link stays the named bottleneck, no channel cap)
    m = _model(2)
    comp = m.compiled("all-reduce", "tree", m.group(16))
    (step,) = comp.timings(m.calibration.protocol("LL"), m.calibration, GIB)
    assert step.serialization == pytest.approx(GIB * 2 / 39.0e9, rel=1e-12)
    assert step.tree_cap is None


def test_which_trees_are_nccls_across_nodes():
    # 2 servers of 8: tree_nodes 2, tree_ranks 16; one server: no node count; a torus
    # (every GPU its own domain) is no set of NCCL nodes
    g = build("rail-optimized:domains=2,gpu=B200-HGX")
    (step,) = generate("tree", "all-reduce", tuple(f"gpu{i}" for i in range(16)), g)
    assert (step.tree_nodes, step.tree_ranks) == (2, 16)
    one = build("single-switch:n=8,gpu=B200-HGX")
    gpus = tuple(n for n, d in one.nodes(data=True) if d.get("kind") == "gpu")
    assert generate("tree", "all-reduce", gpus, one)[0].tree_ranks == 0
    t = build("torus:dims=4x4")
    gpus = tuple(n for n, d in t.nodes(data=True) if d.get("kind") == "gpu")
    assert all(s.tree_ranks == 0 for s in generate("tree", "all-reduce", gpus, t))
    # more than 8 ranks a node (NVL72 racks: MNNVL cliques) left to the one-node rules
    tab = {"tree_ranks": np.array([[144, 16]]), "tree_nodes": np.array([[2, 2]]),
           "repeat": np.array([[1.0, 1.0]]), "tree_share": np.array([[2.0, 2.0]])}
    mask = tree_net_mask(tab)
    assert mask.tolist() == [[False, True]]
    on = np.ones((1, 2), dtype=bool)
    ll = Protocol("LL", 0.5, 0.0, 0.0, 0.0)
    assert tree_ll_least(tab, on, mask, ll)[0] == pytest.approx(2 / 39.0e9, rel=1e-12)
    # LL only, none under a textbook calibration's protocol
    assert tree_ll_least(tab, on, mask, Protocol("LL128", 0.9, 0.0, 0.0, 0.0)) is None
    assert all(tree_ll_least(tab, on, mask, p) is None for p in Calibration.ideal().protocols)
