"""NVLSTree's heads: NCCL gives one domain at most NCCL_MAX_NVLS_ARITY = 32 heads
(src/include/device.h; src/graph/search.cc caps the NVLS graph at it), so an NVL72 rack
(one MNNVL node of 72 GPUs) sends its tree across racks through 32 NICs, not 72."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.algo_hierarchical import NVLS_MAX_HEADS
from netmodel.collectives.algorithms import generate
from topologies import build


def _tree_up(fabric):
    g = build(fabric)
    gpus = [n for n, d in g.nodes(data=True) if d.get("kind") == "gpu"]
    steps = generate("in-network-tree", "all-reduce", gpus, g)
    (up,) = [s for s in steps if s.name == "reduce across (tree)"]
    return up


def test_cap_is_ncclmax_nvls_arity():
    assert NVLS_MAX_HEADS == 32


@pytest.mark.parametrize(("fabric", "heads"), [("nvl72:racks=2", 32),
                                               ("rail-optimized:domains=2", 8)])
def test_two_domains_heads_and_shares(fabric, heads):
    # two domains: the double binary tree is one edge each way, each tree on half the
    # data, so every head sends 1/(2h) of the vector up; h = min(m, 32)
    up = _tree_up(fabric)
    assert up.heads == heads
    senders = np.unique(np.asarray(up.transfers.src))
    assert len(senders) == 2 * heads  # h heads in each of the two domains
    np.testing.assert_allclose(np.asarray(up.transfers.frac), 1 / (2 * heads))
    # each domain sends half the vector in all: h heads x 1/(2h)
    assert np.asarray(up.transfers.frac).sum() == pytest.approx(1.0)
