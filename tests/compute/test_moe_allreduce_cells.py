"""The all-reduce exchange's cells are formed from the all-to-all grid's own stages
(compute.moe_dp_cells.dp_gather_cells with compute.grid_parts.exchange_subset: its six
stages' work from the functions compute.stages.stage_work calls for them, the grid's fit
where the exchange leaves it, compute.memory.splits_shared) instead of a grid of those rows
evaluated again: every field of the grid, every stage and cell, must be what evaluating
those rows whole under ``Shards.ep_allreduce`` gives (compute.moe_exchange.cheaper_exchange
without ``subset``'s third function, the code before), bit for bit (``==``, NaN equal), over models with and
without shared experts and dense layers, pipelines, skews, phases, collective models, modes,
an engine profile and cells that fit under one exchange only."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import compute.grid_parts as grid_parts
import compute.roofline as roofline
from compute.comm import RingAlphaBeta
from compute.errors import UserError
from compute.models import get_model
from compute.parallel import Parallelism
from compute.profiles import get_profile
from compute.roofline_options import RooflineOptions
from tests.compute.test_moe_dp_cells import _same

_STEPPED = dataclasses.replace(get_model("Qwen1.5-MoE-A2.7B"), name="Qwen-stepped",
                               moe_layer_step=2, dense_layers=12, dense_ffn=5632)
#: shared experts and dense layers (DeepSeek-V3), neither (Mixtral, gpt-oss), both
#: interleaved (the stepped Qwen)
_MODELS = ["DeepSeek-V3", "Mixtral-8x7B", "gpt-oss-20b", _STEPPED]
_OPTIONS = [RooflineOptions(), RooflineOptions(mode="serial"),
            RooflineOptions(flops_efficiency=0.6, memory_efficiency=0.8),
            RooflineOptions(profile=get_profile("vllm-dgx-h100")),
            RooflineOptions(mtp_tokens=2)]
_COMMS = [None, RingAlphaBeta(bandwidth=450e9), RingAlphaBeta(bandwidth=50e9)]


@st.composite
def _configs(draw, model):
    """EP rows without DP attention (the exchange's), beside others of the same grid."""
    out = []
    for _ in range(draw(st.integers(1, 5))):
        tp = draw(st.sampled_from([2, 4, 8, 16]))
        ep = draw(st.sampled_from([d for d in (1, 2, 4, 8, 16) if tp % d == 0]))
        adp = draw(st.sampled_from([1, 1, 2]))
        pp = draw(st.sampled_from(sorted({1, 2, 3, model.layers})))
        out.append(Parallelism(tp, pp, ep, adp))
    out.append(Parallelism(draw(st.sampled_from([2, 4, 8])), draw(st.sampled_from([1, 2])),
                           2, 1))   # at least one of the exchange's rows
    return list(dict.fromkeys(out))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_MODELS), st.sampled_from(["H200-SXM", "H100-SXM", "Lite"]),
       st.sampled_from(["prefill", "decode"]), st.sampled_from(_OPTIONS),
       st.sampled_from(_COMMS), st.sampled_from([1.0, 1.7]), st.booleans(), st.data())
def test_formed_allreduce_cells_are_the_rows_evaluated_whole(model, gpu, phase, options, comm,
                                                            skew, time_unfit, data):
    m = get_model(model) if isinstance(model, str) else model
    configs = data.draw(_configs(m))
    batches = data.draw(st.lists(st.sampled_from([1, 2, 3, 7, 37, 256, 1024, 3000]),
                                 min_size=1, max_size=4, unique=True))
    kw = {"comm": comm, "options": options, "expert_skew": skew, "time_unfit": time_unfit}
    formed_rows = []
    real_subset, real_choice = grid_parts.exchange_subset, roofline.cheaper_exchange

    def spy(*a, **k):
        if np.any(a[3].ep_allreduce):
            formed_rows.append(len(a[2]))
        return real_subset(*a, **k)

    def whole(*a, **k):   # the all-reduce exchange's rows evaluated whole, as before
        return real_choice(*a, **{**k, "subset": k["subset"][:2]})

    try:
        roofline.exchange_subset = spy
        try:
            formed = roofline.evaluate_grid(m, gpu, configs, batches, phase, **kw)
        except UserError:   # a configuration the GPU or model does not take
            event("refused")
            return
        roofline.cheaper_exchange = whole
        evaluated = roofline.evaluate_grid(m, gpu, configs, batches, phase, **kw)
    finally:
        roofline.exchange_subset, roofline.cheaper_exchange = real_subset, real_choice
    assert _same(formed, evaluated) == []
    taken = formed.exchange is not None and bool((formed.exchange == 1).any())
    event(f"formed {bool(formed_rows)}, taken {taken}")
    if not options.mtp_tokens or phase == "prefill":   # MTP decode: its own grid's rows
        assert formed_rows, "no cell was formed"


def test_cells_fitting_under_the_exchange_only_are_evaluated_whole(monkeypatch):
    """DeepSeek-V3 on H100, decode, collectives timed where a cell fits (a search's grid):
    the all-reduce exchange splits the shared expert over TP, so its weights are smaller
    and batches the all-to-alls cannot hold fit; the grid did not time those cells, which
    are evaluated whole (``extra``). Its rows are formed, some cells take it, and the grid is
    the rows evaluated whole, bit for bit."""
    import compute.moe_dp_cells as moe_dp_cells

    configs = [Parallelism(16, 1, 16, 1), Parallelism(16, 2, 8, 1), Parallelism(8, 1, 8, 8)]
    batches = list(range(1, 1100, 7))
    extra = []
    real = moe_dp_cells.dp_gather_cells

    def spy(*a, **k):
        alt, stages, left = real(*a, **k)
        if np.any(a[4].ep_allreduce):
            extra.append(0 if left is None else int(left.sum()))
        return alt, stages, left

    monkeypatch.setattr("compute.moe_exchange.dp_gather_cells", spy)
    kw = {"time_unfit": False}
    formed = roofline.evaluate_grid("DeepSeek-V3", "H100-SXM", configs, batches, "decode", **kw)
    real_choice = roofline.cheaper_exchange
    monkeypatch.setattr(roofline, "cheaper_exchange", lambda *a, **k: real_choice(
        *a, **{**k, "subset": k["subset"][:2]}))
    whole = roofline.evaluate_grid("DeepSeek-V3", "H100-SXM", configs, batches, "decode", **kw)
    assert _same(formed, whole) == []
    assert extra and extra[0] > 0
    assert (formed.exchange[:2] == 1).any() and not (formed.exchange[2] == 1).any()
