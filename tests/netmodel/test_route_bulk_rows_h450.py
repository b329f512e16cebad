"""An all-pairs step over a fabric whose every GPU is signed apart (a SuperPOD: each GPU's
own rail leaves), so that the table of signature pairs has a row per transfer: its pieces
are read per transfer from the two piece lists side by side, not worked out per row of the
table and kept (``route_bulk.BulkRoutes._hops_and_pieces_rows``). Checked against the
per-row way (reached by leaving no room for padded pieces, ``_PADDED_PIECES = 0``): the same
plan, entry for entry, and the same link loads to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import route_bulk
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import Pairs
from topologies import build


def _all_pairs(r: Router, p: int) -> Pairs:
    gpus = r.gpu_list[:p]
    src, dst = (x.ravel() for x in np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))
    keep = src != dst
    return Pairs(tuple(gpus), src[keep], dst[keep], np.full(int(keep.sum()), 1.0 / p))


@pytest.mark.parametrize("spec,p", [("superpod:sus=1", 248), ("superpod:sus=1", 100),
                                    ("superpod:sus=2", 300)])
def test_pieces_per_transfer_equal_the_per_row_pieces(spec, p, monkeypatch):
    g = build(spec)
    fast = Router(g)
    plan = fast.plan(_all_pairs(fast, p))
    loads = fast.link_loads(_all_pairs(fast, p))
    assert fast._row_pieces is None   # nothing kept per row of the table
    monkeypatch.setattr(route_bulk, "_PADDED_PIECES", 0)
    slow = Router(g)
    ref = slow.plan(_all_pairs(slow, p))
    ref_loads = slow.link_loads(_all_pairs(slow, p))
    assert slow._row_pieces is not None   # the per-row way was the one taken
    assert len(plan.pieces) >= len(plan.frac)   # a piece a transfer at least
    for name in ("template", "pieces", "piece_of", "hop_index", "hop_links", "hop_weights",
                 "latency", "scaleout"):
        a, b = getattr(plan, name), getattr(ref, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    for a, b in zip(loads, ref_loads, strict=True):
        assert np.array_equal(a, b)
