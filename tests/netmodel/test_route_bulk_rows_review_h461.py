"""Review of ``route_bulk.BulkRoutes._hops_and_pieces_rows``'s per-transfer read of the
pieces (a table of signature pairs with about a row per transfer): on fabrics and steps
where it is taken (a SuperPOD's GPUs signed apart; a fat tree's GPUs one an edge switch) and
where it nearly is (the same steps with every transfer listed 4 or 5 times, so that the table
has a row for 4 or 5 transfers; a fat tree's whole all-pairs step), the ``(transfer, piece)``
entries equal the definition: transfer by transfer in order, the pieces of its row's first
list then of its second, read one at a time from the lists' table, the padding left out."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import route_bulk
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import Pairs
from topologies import build


def _pairs(r: Router, gpus: list, times: int) -> Pairs:
    p = len(gpus)
    src, dst = (x.ravel() for x in np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))
    keep = src != dst
    src, dst = np.tile(src[keep], times), np.tile(dst[keep], times)
    return Pairs(tuple(gpus), src, dst, np.full(len(src), 1.0 / p))


def _by_definition(lists: np.ndarray, rows: dict, at: np.ndarray, on: np.ndarray):
    ti, pc = [], []
    for t, a in zip(on.tolist(), at.tolist(), strict=True):
        for col in ("l1", "l2"):
            assert rows[col][a] >= 0
            for x in lists[rows[col][a]].tolist():
                if x >= 0:
                    ti.append(t)
                    pc.append(x)
    return np.array(ti, dtype=np.int64), np.array(pc, dtype=np.int64)


@pytest.mark.parametrize("spec,pick,times,per_transfer", [
    ("superpod:sus=1", (0, 16, 1), 1, True),
    ("superpod:sus=1", (0, 16, 1), 3, True),      # a row for 3 transfers: still
    ("superpod:sus=1", (0, 16, 1), 4, False),     # 4: the per-row way
    ("superpod:sus=1", (0, 16, 1), 5, False),
    ("superpod:sus=1", (3, 248, 9), 1, True),
    ("fat-tree:k=8", (0, 128, 4), 1, True),       # one GPU an edge switch: lists of 2
    ("fat-tree:k=8", (0, 128, 4), 4, False),
    ("fat-tree:k=8", (0, 128, 1), 1, False),      # 1,024 rows for 16,256 transfers
])
def test_pieces_equal_the_definition(spec, pick, times, per_transfer, monkeypatch):
    r = Router(build(spec))
    seen = []
    real = route_bulk.BulkRoutes._hops_and_pieces_rows

    def spy(self, rows, at, gs, gd, on):
        out = real(self, rows, at, gs, gd, on)
        seen.append((rows, at.copy(), on.copy(), out, self._lists.table.copy(),
                     self._row_pieces is None))
        return out

    monkeypatch.setattr(route_bulk.BulkRoutes, "_hops_and_pieces_rows", spy)
    start, stop, step = pick
    r.plan(_pairs(r, r.gpu_list[start:stop:step], times))
    assert len(seen) == 1
    rows, at, on, out, lists, none_kept = seen[0]
    assert out is not None
    assert none_kept == per_transfer   # the branch meant
    assert (4 * len(rows["l1"]) > len(at)) == per_transfer
    ti, pc = _by_definition(lists, rows, at, on)
    assert out[3].dtype == ti.dtype and np.array_equal(out[3], ti)
    assert out[4].dtype == pc.dtype and np.array_equal(out[4], pc)
