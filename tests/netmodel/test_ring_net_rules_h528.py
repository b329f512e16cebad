"""What NCCL's tuner charges a ring across nodes, in the model (issue 11).

NVIDIA/nccl src/tuning/ring.cc at 1fc949c5 (2026; src/graph/tuning.cc at b6475625, 2.20.3,
alike), ncclTuningRingModelInit, for all-reduce, reduce-scatter and all-gather:
"Inter-node rings still have to launch nsteps * net overhead": with ``nNodes > 1``,
``netOverhead = getNetOverhead(comm)`` (1.0 us on Intel's x86 and on every CPU but AMD's,
2.0 on AMD's; NCCL_NET_OVERHEAD unset), ``if (proto == NCCL_PROTO_SIMPLE) netOverhead *= 3``,
``intraLat = std::max(intraLat, netOverhead)``; and LL's busbw ``std::min(llMaxBw, busBw *
.5)`` with llMaxBw = llMaxBws[index1][index2], index1 the host CPU's row across nodes
(every CPU but AMD's: {39.0, 39.0, 20.4} GB/s), index2 ``nNodes <= 2 ? nNodes - 1 : 2``.
The model takes the row of every CPU but AMD's (fabrics carry no host CPU; no published
log of the reference rows names an AMD host).

Hand derivations on ``rail-optimized:domains=2,gpu=B200-HGX`` (2 HGX B200 servers, one
400G NIC a GPU): a ring all-gather of 16 is one pass of 15 steps, 14 inside a server and 1
across (NCCL's nInterSteps nNodes - 1); a step's route inside a server 0.17 us, across 0.53
us (the fabric's cables and switches); NCCL's ring constants (collective_defaults.toml):
LL 6.6 us once, 0.6 us an NVLink step, 2.7 us a network step; LL128 14, 1.9, 4.0; Simple
8.4, 3.4, 14.0.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.algorithms import generate
from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.pipeline_fill import ring_ll_least, ring_net_mask, ring_net_overhead
from topologies import build

UP, ACROSS = 0.17e-6, 0.53e-6


@pytest.fixture(scope="module")
def two_b200():
    return FabricCostModel(build("rail-optimized:domains=2,gpu=B200-HGX"), algorithms="nccl",
                           validated=True)


def _lines(model, op, p, algorithm="ring"):
    return {c[1]: (c[2], c[3]) for c in model.candidates(op, model.group(p), algorithm)}


def test_ring_all_gather_across_two_servers_by_hand(two_b200):
    lines = _lines(two_b200, "all-gather", 16)
    # LL: each NVLink step at least the 1 us post overhead (NCCL's own 0.6 us is less)
    assert lines["LL"][0] == pytest.approx(6.6e-6 + 14 * (1.0e-6 + UP) + (2.7e-6 + ACROSS),
                                           rel=1e-12)
    # LL's busbw at most 39.0 GB/s on 2 nodes: algbw = busbw x 16/15
    assert lines["LL"][1] == pytest.approx(15 / 16 / 39.0e9, rel=1e-12)
    # LL128 (1.9 us) and Simple (3.4 us) NVLink steps already cost more than the overhead
    # (1 us; 3 x 1 us under Simple): NCCL's own constants stand
    assert lines["LL128"][0] == pytest.approx(14e-6 + 14 * (1.9e-6 + UP) + (4.0e-6 + ACROSS),
                                              rel=1e-12)
    assert lines["Simple"][0] == pytest.approx(8.4e-6 + 14 * (3.4e-6 + UP)
                                               + (14.0e-6 + ACROSS), rel=1e-12)


def test_ring_all_reduce_ll_cap_on_two_and_four_servers_by_hand():
    # all-reduce: two passes, algbw = busbw x p / (2 (p - 1)); 3 or more nodes: 20.4 GB/s
    for domains, cap in ((2, 39.0e9), (4, 20.4e9)):
        m = FabricCostModel(build(f"rail-optimized:domains={domains},gpu=B200-HGX"),
                            algorithms="nccl", validated=True)
        p = 8 * domains
        b = _lines(m, "all-reduce", p)["LL"][1]
        assert b == pytest.approx(2 * (p - 1) / p / cap, rel=1e-12)


def test_inside_one_server_nothing_changes():
    # one node: NCCL's 0.6 us an LL NVLink step and no cap across nodes (8 B200: 7 steps)
    m = FabricCostModel(build("single-switch:n=8,gpu=B200-HGX"), algorithms="nccl",
                        validated=True)
    a, b = _lines(m, "all-gather", 8)["LL"]
    assert a == pytest.approx(6.6e-6 + 7 * (0.6e-6 + UP), rel=1e-12)
    assert b < 7 / 8 / 39.0e9 / 5     # the GPU generation's LL rate, far above the net cap


def test_which_rings_are_nccls_across_nodes():
    # ring steps across 2 servers of 8: ring_nodes 2; a torus (every GPU its own domain)
    # is no set of NCCL nodes: 0
    g = build("rail-optimized:domains=2,gpu=B200-HGX")
    (step,) = generate("ring", "all-gather", tuple(f"gpu{i}" for i in range(16)), g)
    assert step.ring_nodes == 2
    t = build("torus:dims=4x4")
    gpus = tuple(n for n, d in t.nodes(data=True) if d.get("kind") == "gpu")
    assert all(s.ring_nodes == 0 for s in generate("ring", "all-reduce", gpus, t))
    # more than 8 ranks a node (an NVL72 rack: an MNNVL clique): left to the one-node rules
    tab = {"repeat": np.array([[127.0, 15.0]]), "ring_nodes": np.array([[2.0, 2.0]])}
    assert ring_net_mask(tab).tolist() == [[False, True]]
    # the overhead by protocol, none under a textbook calibration's
    over = [ring_net_overhead(p) for p in Calibration.ideal().protocols]
    assert over == [0.0]
    ll = Protocol("LL", 0.5, 0.0, 0.0, 0.0)
    assert ring_ll_least(tab, np.ones((1, 2), bool), ring_net_mask(tab), ll)[0] == \
        pytest.approx(15 / 16 / 39.0e9, rel=1e-12)


def test_two_server_all_gather_ll_sizes_nearer_the_measurement(two_b200):
    # Vultr's 2 HGX B200 (nccl_ops_published.csv b200-2x8-sweep): at 1 MiB the measured
    # all-gather takes 77.6 us (12.67 GB/s busbw); on 400G NICs NCCL's LL line is
    # 26.2 us + 1 MiB x 15/16 / 39.0 GB/s = 51.4 us, the ring LL at the generation's rate
    # was 28.4 us; the model's fastest line is now LL128 (47.5 us + n x 2.71e-12)
    a, b = _lines(two_b200, "all-gather", 16)["LL"]
    n = 2.0 ** 20
    assert (a + b * n) * 1e6 == pytest.approx(51.42, abs=0.01)
    r = two_b200.cost("all-gather", n, 16)
    assert r.protocol == "LL128" and r.time * 1e6 == pytest.approx(50.35, abs=0.02)
