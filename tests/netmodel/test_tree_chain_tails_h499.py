"""The chains of NCCL's all-reduce trees inside a domain when NICs are down (fewer channels
than GPUs): each ends at its lane, and its tail goes to a GPU that ends the fewest chains
(netmodel/collectives/algo_tree.py, chain_paths), derived here by hand. Before, every tail
was the GPU after its lane, so with lanes laid unevenly a GPU could end no chain and carry
both its chain edges whole (tests/netmodel/test_nccl_double_tree_h434.py: one more NIC down
ran faster). Fails before: no chain_paths."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.algo_tree import chain_paths


def test_chain_tails_spread_so_every_gpu_ends_a_chain():
    # 8 GPUs, 4 channels leaving through GPUs 5, 0, 2, 4 (NICs down on rails 1, 3, 6, 7).
    # Tails after each lane, 6, 1, 3, 5, leave GPU 5 two ends and GPU 7 none, so the chain
    # of lane 4 starts at 7 instead: 7 -> 0 -> 1 -> 2 -> 3 -> 5 -> 6 -> 4. A GPU sends, each
    # way, 1/4 for every chain edge it has: 2 a chain, 1 where it ends one: 7/4 on every GPU
    # (before: GPU 7 2, GPU 5 6/4)
    table = np.arange(8)[None, :]
    a, b, f = chain_paths(table, np.array([[5, 0, 2, 4]]))
    load = np.bincount(a, f, minlength=8) + np.bincount(b, f, minlength=8)
    assert load.tolist() == [1.75] * 8
    assert float(f.sum()) == 4 * 7 / 4                     # 4 chains of 7 edges, 1/4 each
    edges = {(int(x), int(y)): float(z) for x, y, z in zip(a, b, f, strict=True)}
    # the moved chain's two edges off the ring, and the ring edge 4 -> 5 it no longer has
    assert edges[(3, 5)] == edges[(6, 4)] == 0.25
    assert edges[(4, 5)] == 0.75 and edges[(7, 0)] == 1.0


def test_lanes_already_even_keep_the_rings_edges():
    # 7 channels through GPUs 1-7 (GPU 0's NIC down): tails 2..7, 0 give GPU 0 and GPU 1 one
    # end each and the others two, as even as 14 ends on 8 GPUs go, so nothing moves: the
    # ring's 8 edges, edge j -> j + 1 in every chain but the one ending at j (6/7 for j a
    # lane, 7/7 for 0 -> 1), as before
    table = np.arange(8)[None, :]
    a, b, f = chain_paths(table, np.arange(1, 8)[None, :])
    assert list(zip(a.tolist(), b.tolist(), strict=True)) == [(j, (j + 1) % 8)
                                                              for j in range(8)]
    on = [j in range(1, 8) for j in range(8)]
    assert f.tolist() == pytest.approx([(7 - x) / 7 for x in on], rel=1e-15)
