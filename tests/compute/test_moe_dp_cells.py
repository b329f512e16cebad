"""SGLang's DP-attention gather's cells are formed from the all-to-all grid's own stage times
(compute.moe_dp_cells) instead of a grid of its rows evaluated again: every field of the
grid, every stage and cell, must be what evaluating those rows whole under
``Shards.ep_dp_gather`` gives (compute.moe_exchange.cheaper_exchange with no ``subset``),
bit for bit, with rows of one pipeline stage and pipelined ones, where the exchange is
taken and where not, and where it fits in memory but the all-to-alls do not (the grid's
collectives untimed there: those cells evaluated whole)."""

from __future__ import annotations

import pickle
from dataclasses import fields

import numpy as np
import pytest

import compute.moe_dp_cells as moe_dp_cells
import compute.roofline as roofline
from compute.comm import RingAlphaBeta
from compute.dp_collectives import CellOps
from compute.parallel import Parallelism
from compute.roofline_options import RooflineOptions

PARS = [Parallelism(tp, pp=pp, ep=ep, attention_dp=a) for tp in (8, 16) for pp in (1, 2)
        for ep in (1, 8) for a in (1, 8) if ep <= tp]
BATCHES = [1, 7, 64, 256, 1024, 2048, 3040]


def _both(monkeypatch, model, gpu, phase, **kw):
    """The grid as evaluated (the formed cells) and with SGLang's rows evaluated whole, and
    how many cells the first formed and left to be evaluated whole."""
    seen = {"formed": 0, "extra": 0}
    real = moe_dp_cells.dp_gather_cells

    def spy(*a, **k):
        alt, stages, extra = real(*a, **k)
        seen["formed"] += alt.latency.size
        seen["extra"] += 0 if extra is None else int(extra.sum())
        return alt, stages, extra

    monkeypatch.setattr("compute.moe_exchange.dp_gather_cells", spy)
    formed = roofline.evaluate_grid(model, gpu, PARS, BATCHES, phase, **kw)
    real_choice = roofline.cheaper_exchange

    def whole(*a, **k):   # SGLang's rows evaluated whole
        return real_choice(*a, **{**k, "subset": None})

    monkeypatch.setattr(roofline, "cheaper_exchange", whole)
    whole = roofline.evaluate_grid(model, gpu, PARS, BATCHES, phase, **kw)
    return formed, whole, seen


def _per_cell(op, shape) -> list:
    """A stage's collective in each cell of ``shape``, by name."""
    if isinstance(op, CellOps):
        return np.asarray(op.ops)[np.broadcast_to(op.which, shape).astype(int)].tolist()
    return np.full(shape, op).tolist()


def _same(a, b) -> list:
    """The Grid fields in which ``a`` and ``b`` differ (arrays: bit for bit, NaN equal)."""
    bad = []
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "ops":   # each cell's collective, by name
            if [_per_cell(o, a.latency.shape) for o in x] != [_per_cell(o, a.latency.shape)
                                                            for o in y]:
                bad.append(f.name)
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (np.shape(x) == np.shape(y) and np.array_equal(x, y, equal_nan=True)):
                bad.append(f.name)
        elif pickle.dumps(x) != pickle.dumps(y):
            bad.append(f.name)
    return bad


@pytest.mark.parametrize(("model", "gpu", "phase", "kw"), [
    ("DeepSeek-V3", "H100-SXM", "decode", {"time_unfit": False}),
    ("DeepSeek-V3", "H200-SXM", "decode", {"time_unfit": True}),
    ("DeepSeek-V3", "H100-SXM", "prefill", {"time_unfit": False}),
    ("Mixtral-8x7B", "H100-SXM", "decode", {"time_unfit": False}),
    ("DeepSeek-V3", "H200-SXM", "decode",
     {"comm": RingAlphaBeta(bandwidth=450e9), "expert_skew": 1.5, "time_unfit": False}),
    ("DeepSeek-V3", "H100-SXM", "decode",
     {"options": RooflineOptions(mode="serial"), "time_unfit": False}),
])
def test_formed_cells_are_the_rows_evaluated_whole(monkeypatch, model, gpu, phase, kw):
    formed, whole, seen = _both(monkeypatch, model, gpu, phase, **kw)
    assert _same(formed, whole) == []
    assert seen["formed"] > 0
    if model == "DeepSeek-V3" and phase == "decode":   # its shared expert split: taken
        assert (formed.exchange == 3).any()


def test_cells_fitting_only_under_sglangs_gather_are_evaluated_whole(monkeypatch):
    # DeepSeek-V3 on H100: SGLang's shared expert split over TP leaves more of a GPU to
    # the KV cache (TP 16: 58.73 -> 56.33 GB of weights), so batches the all-to-alls
    # cannot hold fit (as batch 3040 at TP 16 x EP 16 x DP-attention 16 on h100-dgx,
    # docs/study.md's MTP paragraph)
    formed, whole, seen = _both(monkeypatch, "DeepSeek-V3", "H100-SXM", "decode",
                                time_unfit=False)
    assert seen["extra"] > 0
    assert _same(formed, whole) == []
