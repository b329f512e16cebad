"""combine's masks of NCCL's ring and tree across nodes come with the steps' shape.

:func:`~netmodel.collectives.cost.step_shape` works out once per compiled collective what
:func:`~netmodel.collectives.cost.combine` reads of the steps alone; the passes of NCCL's
ring and tree across nodes (:func:`~netmodel.collectives.pipeline_fill.ring_net_mask`,
:func:`~netmodel.collectives.pipeline_fill.tree_net_mask`) are of the steps alone too, and
were worked out again for every protocol. Two HGX B200 servers (rail-optimized, 16 GPUs):
the ring's passes and the tree cross the two servers, and NCCL's LL busbw cap across 2
nodes (39.0 GB/s, ``busBw = min(llMaxBw, busBw * .5)``) sets the ring all-reduce's LL slope,
``2 (p - 1) / p / 39.0e9`` (as tests/netmodel/test_ring_net_rules_h528.py derives it).
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.cost import combine, step_shape
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.pipeline_fill import ring_net_mask, tree_net_mask
from topologies import build


@pytest.fixture(scope="module")
def two_b200():
    return FabricCostModel(build("rail-optimized:domains=2,gpu=B200-HGX"), algorithms="nccl",
                           validated=True)


def _same(x, y) -> bool:
    return (x is None and y is None) or (x is not None and y is not None
                                         and np.array_equal(x, y))


@pytest.mark.parametrize("algorithm", ["ring", "tree"])
def test_shape_carries_the_masks_across_nodes_h747(two_b200, algorithm):
    comp = two_b200.compiled("all-reduce", algorithm, two_b200.group(16))
    t, beta, lat_all, lat_up, so, shape = comp._arrays()
    ring, tree = ring_net_mask(t), tree_net_mask(t)
    # the steps cross the two servers as NCCL's ring or its tree
    assert (ring if algorithm == "ring" else tree) is not None
    assert _same(shape[8], ring) and _same(shape[9], tree)
    assert shape[10] is bool(t["in_network"].any()) and shape[10] is False
    again = step_shape(t)   # worked out again: the same
    assert _same(again[8], ring) and _same(again[9], tree) and again[10] is False
    cal = two_b200.calibration
    for proto in comp.protocols(cal):   # the shape given or worked out: the same lines
        given = combine(t, beta, lat_all, lat_up, so, proto, cal, shape)
        fresh = combine(t, beta, lat_all, lat_up, so, proto, cal)
        assert len(given) == len(fresh) >= 1
        for a, b in zip(given, fresh, strict=True):
            assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_ring_ll_slope_from_the_shape_by_hand_h747(two_b200):
    comp = two_b200.compiled("all-reduce", "ring", two_b200.group(16))
    ll = next(p for p in comp.protocols(two_b200.calibration) if p.name == "LL")
    b = comp.line_parts(ll, two_b200.calibration)[-1][1]
    assert b == pytest.approx(2 * 15 / 16 / 39.0e9, rel=1e-12)


@pytest.mark.parametrize(("op", "algorithm", "p2p", "tree"), [
    ("all-reduce", "ring", False, False), ("all-reduce", "tree", False, True),
    ("all-to-all", "direct", True, False)])
def test_shape_says_which_parts_can_apply_h747(two_b200, op, algorithm, p2p, tree):
    """Whether any step is NCCL's grouped send/recv of more than one GPU (the all-to-all's
    p2p_ranks: its Simple fills and LL share) and whether any counted step is on NCCL's
    tree channels: where neither is, combine does not ask for them, and its lines under
    every protocol are those worked out with them (p2p_fills and tree_least give nothing
    there)."""
    from netmodel.collectives.pipeline_fill import p2p_fills, tree_least

    comp = two_b200.compiled(op, algorithm, two_b200.group(16))
    t, beta, lat_all, lat_up, so, shape = comp._arrays()
    assert shape[11] is p2p and shape[12] is tree
    assert bool((t["p2p_ranks"] > 1).any()) is p2p
    cal = two_b200.calibration
    mem = t["member"] & t["on"]
    for proto in comp.protocols(cal):
        if not p2p:   # nothing to fill: what combine skips
            assert p2p_fills(t, shape[4], so, beta, proto, cal) == []
        if not tree:
            assert tree_least(t, mem, 1.0, cal, proto) is None
        lines = combine(t, beta, lat_all, lat_up, so, proto, cal, shape)
        assert lines and all(np.isfinite(x).all() for line in lines for x in line)
