"""DP attention with attention groups of several GPUs (``tp / a > 1``), as SGLang runs it
(compute.dp_collectives): no all-reduce within the group before the gather; ``SUM_LEN``
one all-reduce of the ``n`` rows among the whole TP group; ``MAX_LEN`` a reduce-scatter
of the group's ``n_a`` rows among its ``tp / a`` GPUs, an all-gather of the ``a n_a``
rows among ``tp``, and after the MLP's reduce-scatter among ``tp`` an all-gather of the
group's rows among its GPUs. Figures by hand on H100s with the ring (RingAlphaBeta: 1.9 us a
step, 0.92 x 450 GB/s) at TP 16 x DP-attention 4 (groups of 4 GPUs).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.comm import RingAlphaBeta
from compute.evaluate_one import evaluate
from compute.parallel import Parallelism
from compute.phases import Workload
from compute.roofline import evaluate_grid

BW, STEP = 0.92 * 450e9, 1.9e-6
ROW = 7168 * 2                     # DeepSeek-V3: hidden 7,168 in bf16, bytes a token


def _ring(op, size, p):
    """The ring's time (compute.comm.RingAlphaBeta, passed by name) of ``op`` on ``size`` bytes
    among ``p`` GPUs, by hand."""
    if op == "all-reduce":
        return 2 * (p - 1) * STEP + 2 * (p - 1) / p * size / BW
    return (p - 1) * STEP + (p - 1) / p * size / BW


def _stages(batch, phase):
    """DeepSeek-V3 on 16 H100s, TP 16 x EP 16 x DP-attention 4: its 3 dense layers' MLPs
    tensor-parallel among the 16, its 58 MoE layers' experts by EP."""
    r = evaluate("DeepSeek-V3", "H100-SXM", tp=16, batch=batch, phase=phase, ep=16,
                 attention_dp=4, comm=RingAlphaBeta(bandwidth=450e9))
    return {s.name: s for s in r.stages}


def test_decode_sum_len_one_all_reduce_among_the_tp_group():
    # batch 1: one group of 4 holds the sequence (2 x 1 < 4 x 1: SUM_LEN). Each dense layer:
    # no all-reduce within the group; dp_gather all-reduces the 1 row (14,336 B) among the
    # 16, 2 x 15 x 1.9 us + 2 x 15/16 x 14,336 B / 414 GB/s = 57.07 us; the MLP's own
    # all-reduce of it (dp_scatter) the same; nothing after (each GPU copies its rows)
    st_ = _stages(1, "decode")
    assert "allreduce_attn" not in st_ and "attn_gather" not in st_
    t = _ring("all-reduce", ROW, 16)
    assert t == pytest.approx(57.07e-6, rel=1e-3)
    for name in ("dp_gather", "dp_scatter"):
        x = st_[name]
        assert (x.count, x.collective, x.collective_bytes) == (3, "all-reduce", ROW)
        assert x.network_time == pytest.approx(t, rel=1e-12)
    # the 58 EP layers: reduce-scatter among the 4 before the dispatch, all-gather after
    x = st_["dp_regather"]
    assert (x.count, x.collective, x.collective_bytes) == (58, "all-gather", ROW)
    assert x.network_time == pytest.approx(_ring("all-gather", ROW, 4), rel=1e-12)


def test_decode_max_len_reduce_scatter_then_gather_among_the_tp_group():
    # batch 64 (16 a group; 2 x 64 >= 4 x 16: MAX_LEN). Each dense layer: reduce-scatter
    # of the group's 16 rows (229,376 B) among its 4, 3 x 1.9 + 3/4 x 229,376 / 414 GB/s =
    # 6.12 us; all-gather of the 64 rows (917,504 B: each GPU's 4) among the 16, 15 x 1.9 +
    # 15/16 x 917,504 / 414 GB/s = 30.58 us; after the MLP a reduce-scatter of them among
    # the 16 (30.58 us) and an all-gather of the group's 16 among its 4 (6.12 us)
    st_ = _stages(64, "decode")
    want = {"allreduce_attn": ("reduce-scatter", 16 * ROW, 4, 6.12e-6),
            "dp_gather": ("all-gather", 64 * ROW, 16, 30.58e-6),
            "dp_scatter": ("reduce-scatter", 64 * ROW, 16, 30.58e-6),
            "attn_gather": ("all-gather", 16 * ROW, 4, 6.12e-6)}
    for name, (op, size, p, us) in want.items():
        x = st_[name]
        assert (x.count, x.collective, x.collective_bytes) == (3, op, size)
        assert x.network_time == pytest.approx(_ring(op, size, p), rel=1e-12)
        assert x.network_time == pytest.approx(us, rel=1e-3)
    assert st_["dp_regather"].count == 58


def test_prefill_sum_len_by_hand():
    # prefill, 2 prompts of 1,500 tokens on 2 of the 4 groups: SUM_LEN always. The 3,000
    # rows (43,008,000 B) all-reduced among the 16, 2 x 15 x 1.9 us + 2 x 15/16 x 43.008 MB
    # / 414 GB/s = 251.78 us, before and after the MLP; no stage within the groups
    st_ = _stages(2, "prefill")
    assert "allreduce_attn" not in st_ and "attn_gather" not in st_
    for name in ("dp_gather", "dp_scatter"):
        x = st_[name]
        assert (x.count, x.collective, x.collective_bytes) == (3, "all-reduce", 3000 * ROW)
        assert x.network_time == pytest.approx(_ring("all-reduce", 3000 * ROW, 16), rel=1e-12)
        assert x.network_time == pytest.approx(251.78e-6, rel=1e-4)


def _wire(op, size, p):
    """A ring without latency: the time of the bytes a GPU sends (1 B/s)."""
    return (2.0 if op == "all-reduce" else 1.0) * (p - 1) / p * np.asarray(size, float)


@pytest.mark.parametrize("w, batch, summed", [(Workload("prefill", prompt=100), 4, True),
                                               (Workload("decode", context=1000), 64, False)])
def test_bytes_as_the_decomposition_before(w, batch, summed):
    # the bytes a GPU sends before the MLP equal the previous decomposition's (an
    # all-reduce among the group's 4, then the gather among the 4 groups) where every group
    # holds batch / 4 sequences: SUM_LEN (a prefill of 4 prompts of 100 tokens, n = 400
    # rows) 2 x 3/4 x n/4 + 2 x 3/4 x n = 2 x 15/16 x n; MAX_LEN (decode, n_a = 16 rows)
    # 2 x 3/4 x n_a + 3 n_a = (4 + 1 - 2/4) n_a = 3/4 n_a + 15/16 x 4 n_a
    g = evaluate_grid("DeepSeek-V3", "H100-SXM", [Parallelism(16, ep=16, attention_dp=4)],
                      [batch], w, comm=_wire)
    r = {s.name: s for s in g.result(0, 0).stages}
    n = batch * w.tokens_per_sequence * ROW
    n_a = n // 4
    new = r["dp_gather"].network_time + (0.0 if summed else r["allreduce_attn"].network_time)
    if summed:
        before = float(_wire("all-reduce", n_a, 4) + _wire("all-reduce", n, 4))
    else:
        before = float(_wire("all-reduce", n_a, 4) + _wire("all-gather", 4 * n_a, 4))
    assert new == pytest.approx(before, rel=1e-12)
    assert new == pytest.approx(2 * 15 / 16 * n if summed else (4 + 1 - 2 / 4) * n_a,
                                rel=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["decode", "prefill"]),
       st.lists(st.integers(1, 70), min_size=1, max_size=5, unique=True),
       st.sampled_from([("Mixtral-8x7B", 8, (1, 8), (2, 4)), ("Llama-3-70B", 8, (1, 8), (2, 4)),
                        ("DeepSeek-V3", 32, (1, 32), (4, 8, 16))]))
def test_groups_of_one_gpu_and_no_dp_unchanged(phase, batches, case):
    # rows with a = 1 (no DP attention) or a = tp (groups of one GPU) run as before: in a
    # grid beside rows with groups of several GPUs every array of theirs equals, bit for
    # bit, that of a grid without such rows (which takes the previous collectives'
    # path: compute.dp_collectives.attn_tp_ops gives the plain names); and every cell of
    # a row with groups of several GPUs equals its own one-cell grid
    model, tp, same, split = case
    ep = tp if model == "DeepSeek-V3" else 1
    old = [Parallelism(tp, ep=ep, attention_dp=a) for a in same]
    new = [Parallelism(tp, ep=ep, attention_dp=a) for a in split]
    mixed = evaluate_grid(model, "H100-SXM", old + new, batches, phase)
    alone = evaluate_grid(model, "H100-SXM", old, batches, phase)
    both = set(mixed.stages) & set(alone.stages)
    for i in range(len(old)):
        assert mixed.latency[i].tobytes() == alone.latency[i].tobytes()
        for name in both:
            k, ka = mixed.stages.index(name), alone.stages.index(name)
            for f in ("network_time", "stage_time", "net_bytes"):
                assert getattr(mixed, f)[k, i].tobytes() == getattr(alone, f)[ka, i].tobytes()
        for name in set(mixed.stages) - both:   # run only by the rows with larger groups
            assert mixed.counts[mixed.stages.index(name), i] == 0
    for i, c in enumerate(new, start=len(old)):
        for j, b in enumerate(batches):
            one = evaluate_grid(model, "H100-SXM", [c], [b], phase)
            assert mixed.latency[i, j] == one.latency[0, 0]
            cell = {s.name: s for s in mixed.result(i, j).stages if s.count}
            ref = {s.name: s for s in one.result(0, 0).stages if s.count}
            for name, x in ref.items():
                assert cell[name] == x
