"""concurrent_options._useless leaves out a costly algorithm (everyone to everyone over more than
256 GPUs) by a lower bound on its time against the other options' lines; those lines count
only at the sizes their protocol runs at (NCCL's send/recv: LL or Simple by size), so that
a line cheaper than the protocol that runs there never prunes a group's best."""

from __future__ import annotations

import networkx as nx
import numpy as np

from netmodel.collectives.algorithms import ALGORITHMS, quadratic, transfer_count
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.concurrent_options import _useless
from netmodel.collectives.cost import SEND_RECV
from netmodel.collectives.model import COSTLY_TRANSFERS, FabricCostModel


def _pair_model() -> FabricCostModel:
    g = nx.Graph(name="pair", spec="", gpus=2)
    g.add_node("sw", kind="switch", tier=0, radix=2, latency=0.0, in_network_reduction=False)
    for i in range(2):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    return FabricCostModel(g, calibration=Calibration.ideal())


def test_an_option_counts_only_where_its_protocol_runs():
    # direct all-to-all of 2 GPUs at 1 GB/s: each sends n/2, lower bound 0.5 s at n = 1 GB.
    # Two options of a send/recv algorithm: LL at 0.1 ns/B (0.1 s) running up to 1 MB,
    # Simple at 1 ns/B (1 s) above it. At 1 GB only Simple runs: the best is 1 s, above the
    # bound, so direct may be the group's best and must be kept; at 1 kB LL runs (0.1 us),
    # under the bound's 0.5 us: direct can be left out. The old bound took LL's line at 1 GB
    # too (0.1 s < 0.5 s) and pruned direct.
    m = _pair_model()
    groups = (("gpu0", "gpu1"),)
    one = np.ones(1)
    ll = ("x", "LL", 0 * one, 1e-10 * one, 0 * one, 1e-10 * one, [], one > 0)
    simple = ("x", "Simple", 0 * one, 1e-9 * one, 0 * one, 1e-9 * one, [], one > 0)
    lo, hi = np.array([[0.0], [1e6]]), np.array([[1e6], [np.inf]])
    args = (m, groups, "all-to-all", "direct")
    assert not _useless(*args, np.array([1e9]), [ll, simple], lo, hi)
    assert _useless(*args, np.array([1e3]), [ll, simple], lo, hi)
    # a size either side: kept (one size where it may be the best is enough)
    assert not _useless(*args, np.array([1e3, 1e9]), [ll, simple], lo, hi)


def test_no_ranged_option_was_ever_a_cheap_one():
    # why the old bound (ranges left aside) chose right on the shipped algorithms: ranges
    # exist only for SEND_RECV's algorithms, and wherever an op has a costly algorithm
    # (quadratic, more than 65,536 transfers), each of its SEND_RECV algorithms is costly
    # too (all-to-all: direct and pairwise, p(p - 1) each; send-recv's direct is not
    # quadratic), so never among the cheap options the bound is taken against
    ops = {op for ops in ALGORITHMS.values() for op in ops}
    for op in sorted(ops):
        names = [a for a, o in ALGORITHMS.items() if op in o]
        ranged = [a for a in names if (op, a) in SEND_RECV]
        for p in (2, 64, 256, 257, 1024, 4096):
            costly = {a for a in names
                      if quadratic(a, op) and transfer_count(a, op, p) > COSTLY_TRANSFERS}
            if costly:
                assert set(ranged) <= costly, (op, p, ranged, costly)
