"""The gather exchange's pipelined rows (compute.moe_exchange._piped_gather) are formed
from the all-to-all grid's own stage times instead of a grid evaluated again: each cell, its
step, the pipeline's wait and the two slots must be those of the rows evaluated whole under
``Shards.ep_gather`` (compute.roofline._one_exchange), bit for bit, where the gather is
taken, and the all-to-alls' elsewhere."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import compute.moe_exchange as moe_exchange
from compute.comm import RingAlphaBeta
from compute.hardware import get_gpu
from compute.models import get_model
from compute.parallel import Parallelism, layout
from compute.roofline import _one_exchange, check_options, evaluate_grid, make_workload

#: NCCL's ring over NVLink (450 GB/s a GPU)
RING = RingAlphaBeta(bandwidth=450e9)


def _model(name):
    """``name``'s model, DeepSeek-V3 without its shared expert: with it SGLang's
    DP-attention gather (which splits it over TP) takes the decode cells these tests
    need the vLLM gather to take (tests/compute/test_moe_dp_gather.py)."""
    m = get_model(name)
    return replace(m, shared_ffn=0) if m.shared_ffn else m


def _whole(model, gpu, par, batches, phase, gather):
    """``par``'s row of batches evaluated whole under one exchange."""
    m = _model(model)
    sh = layout(m, [par])
    if gather:
        sh = replace(sh, ep_gather=1.0)
    b = np.asarray(batches, dtype=np.int64)
    return _one_exchange(m, get_gpu(gpu), (par,), sh, False, b,
                         b.astype(float).reshape(1, -1), make_workload(phase), RING,
                         check_options(None), 1.0, float("inf"))


@pytest.mark.parametrize("model,gpu,par", [
    ("DeepSeek-V3", "H200-SXM", Parallelism(8, pp=2, ep=4, attention_dp=8)),
    ("DeepSeek-V3", "H100-SXM", Parallelism(8, pp=4, ep=2, attention_dp=4)),
    ("Mixtral-8x7B", "H100-SXM", Parallelism(8, pp=2, ep=8, attention_dp=8))])
@pytest.mark.parametrize("phase,batches", [("decode", [1, 9, 64, 256, 1024]),
                                           ("prefill", [1, 8, 64])])
def test_pipelined_rows_are_those_evaluated_whole(model, gpu, par, phase, batches,
                                                  monkeypatch):
    calls = []
    piped = moe_exchange._piped_gather

    def spy(*args, **kw):
        calls.append(1)
        return piped(*args, **kw)

    monkeypatch.setattr(moe_exchange, "_piped_gather", spy)
    grid = evaluate_grid(_model(model), gpu, [Parallelism(8, ep=4, attention_dp=8), par],
                         batches, phase, comm=RING)
    a2a = _whole(model, gpu, par, batches, phase, False)
    gather = _whole(model, gpu, par, batches, phase, True)
    taken = gather.latency[0] < a2a.latency[0]
    if model == "DeepSeek-V3":        # top-8 above EP: the gather, in every batch
        assert taken.all()
    elif phase == "decode":           # Mixtral's top-2 at EP 8: a quarter of the rows
        assert not taken.any()
    else:   # a micro-batch holds one prompt an attention group (compute.parallel.
        # micro_batch): batch 1, one prompt in one group, its 2n copies sent, the gather;
        # batches 8 and 64, a prompt in each of the 8 groups: the all-to-alls, as decode
        assert taken.tolist() == [True, False, False]
    # formed from the grid's own stages where cells of several batches may gain; a
    # single batch's cells (prefill's batch 1) are evaluated whole (moe_exchange: body)
    assert bool(calls) == (taken.sum() > 1)
    assert np.array_equal(grid.latency[1], np.where(taken, gather.latency[0],
                                                    a2a.latency[0]))
    if phase == "prefill":
        assert np.array_equal(grid.interval[1], np.where(taken, gather.interval[0],
                                                         a2a.interval[0]))
    assert np.array_equal(grid.activations[1], np.where(
        taken, np.broadcast_to(gather.activations, gather.latency.shape)[0],
        np.broadcast_to(a2a.activations, a2a.latency.shape)[0]))
    for stage in ("moe_dispatch", "moe_combine", "pipeline_wait", "attention"):
        k, ka, kg = (x.stages.index(stage) for x in (grid, a2a, gather))
        for field in ("stage_time", "network_time", "compute_time", "memory_time", "bound",
                      "net_bytes"):
            want = np.where(taken, getattr(gather, field)[kg][0], getattr(a2a, field)[ka][0])
            assert np.array_equal(getattr(grid, field)[k][1], want), (stage, field)
