"""NCCL's trees are cached per rank count (``functools.lru_cache``), so the arrays
:func:`nccl_tree_parents` returns are shared by every later caller: one caller writing into
them changed the trees of every later all-reduce on that many domains (h443). They are
now read-only; writing raises and the next call still gives ncclGetBtree's tree.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.algo_tree import nccl_tree_parents


def test_the_cached_trees_cannot_be_written():
    first, second = nccl_tree_parents(6)
    with pytest.raises(ValueError, match="read-only"):
        first[1] = 5
    with pytest.raises(ValueError, match="read-only"):
        second[0] = 0
    # 6 ranks (ncclGetBtree by hand): 0 <- 4 <- {2 <- {1, 3}, 5}; the second its mirror
    # (rank r as 5 - r): 5 <- 1 <- {3 <- {4, 2}, 0}
    assert nccl_tree_parents(6)[0].tolist() == [-1, 2, 4, 2, 0, 4]
    assert nccl_tree_parents(6)[1].tolist() == [1, 5, 3, 1, 3, -1]
    assert not np.shares_memory(*nccl_tree_parents(6))
