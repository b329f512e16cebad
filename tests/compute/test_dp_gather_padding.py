"""The gather of the attention groups' tokens before a tensor-parallel MLP (``dp_gather``) and
its scatter back (``dp_scatter``), sized and costed as SGLang's DP attention moves them
(python/sglang/srt/layers/dp_attention.py, ``DpPaddingMode.get_dp_padding_mode``):

* decode: every group padded to the busiest group's rows and all-gathered (``MAX_LEN``,
  ``a x max`` rows, reduce-scattered back) where ``2 sum >= a max``, else an all-reduce of
  the ``sum`` rows among the groups (``SUM_LEN``), the MLP's all-reduce returning them,
  costed as the all-reduces they are (``2 (a - 1)`` ring steps), cell by cell of a grid;
* prefill (``is_extend_in_batch``): always ``SUM_LEN``, an all-reduce of the ``sum`` rows,
  unpadded, whatever the split, costed as the all-reduce it is (``2 (a - 1)`` ring steps,
  not an all-gather's ``a - 1``); the MLP's own all-reduce returns them.

Where ``a`` divides a decode batch, ``a max = sum``: the unpadded all-gather, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.comm import RingAlphaBeta
from compute.dp_collectives import CellOps
from compute.evaluate_one import evaluate
from compute.models import get_model
from compute.parallel import Parallelism, layout
from compute.phases import Workload
from compute.roofline import evaluate_grid
from compute.stages import stage_work

#: The ring the by-hand figures take (RingAlphaBeta at H100's 450 GB/s: 1.9 us a step,
#: 0.92 link efficiency), passed by name, whatever the default collectives are.
RING = RingAlphaBeta(bandwidth=450e9)

ROW = 7168 * 2               # DeepSeek-V3: a token's hidden state in bf16, bytes
DECODE = Workload("decode", context=1000)


def _work(tp, ep, a, batch, w=DECODE, name="DeepSeek-V3"):
    m = get_model(name)
    sh = layout(m, [Parallelism(tp, ep=ep, attention_dp=a)])
    return m, {x[0]: x for x in stage_work(m, sh, np.array([[float(batch)]]), w)}


def _gather(tp, ep, a, batch, w=DECODE, name="DeepSeek-V3"):
    """(dp_gather bytes, dp_scatter bytes, the unpadded n x hidden bytes) of one cell."""
    m, work = _work(tp, ep, a, batch, w, name)
    g, s = (float(np.ravel(work[k][5])[0]) for k in ("dp_gather", "dp_scatter"))
    return g, s, batch * w.tokens_per_sequence * m.hidden * m.act_bytes


@pytest.mark.parametrize("batch, a, rows, ops", [
    # groups of 1, 1, 1 and 29 empty: padded 32 rows > 2 x 3: an all-reduce of the 3
    (3, 32, 3, ("all-reduce", "all-reduce")),
    (9, 32, 9, ("all-reduce", "all-reduce")),         # padded 32 > 18
    # 8 groups of 2, 24 of 1: padded 32 x 2 = 64 <= 80: all-gather, 64
    (40, 32, 64, ("all-gather", "reduce-scatter")),
    (64, 32, 64, ("all-gather", "reduce-scatter")),   # 2 a group: nothing padded
    (33, 8, 40, ("all-gather", "reduce-scatter")),    # 1 group of 5, 7 of 4: 40 <= 66
    (9, 8, 16, ("all-gather", "reduce-scatter")),     # 1 group of 2, 7 of 1: 16 <= 18
    (5, 8, 8, ("all-gather", "reduce-scatter")),      # 1 a group, 3 empty: 8 <= 10
    (3, 8, 3, ("all-reduce", "all-reduce")),          # 8 > 6
])
def test_decode_by_hand(batch, a, rows, ops):
    g, s, unpadded = _gather(32, 32, a, batch)
    assert g == s == rows * ROW
    assert unpadded == batch * ROW
    work = _work(32, 32, a, batch)[1]
    assert (work["dp_gather"][4], work["dp_scatter"][4]) == ops


def test_gb300_decode_1024_at_144():
    # docs/compute.md's GB300 sample: 1024 sequences over 144 groups, 16 of 8 and 128 of 7:
    # padded 144 x 8 = 1152 rows (16.52 MB), not 1024 (14.68 MB); 2 x 1024 is more
    g, s, unpadded = _gather(144, 144, 144, 1024)
    assert (g, unpadded) == (1152 * ROW, 1024 * ROW)
    assert g == pytest.approx(16.52e6, rel=1e-3)


@pytest.mark.parametrize("batch", [3, 32, 64])
def test_prefill_all_reduces_unpadded(batch):
    # a prefill step takes SUM_LEN whatever the split, even or not: an all-reduce of the
    # prompts' 1500 x batch rows among the 32 groups, and the MLP's all-reduce of them
    # among the 32 GPUs (nccl-tests' all-reduce size: the rows each GPU holds)
    w = Workload("prefill", prompt=1500)
    g, s, unpadded = _gather(32, 32, 32, batch, w)
    assert unpadded == 1500 * batch * ROW
    assert g == s == unpadded
    work = _work(32, 32, 32, batch, w)[1]
    assert [(work[k][4], float(np.ravel(work[k][6])[0])) for k in ("dp_gather", "dp_scatter")] \
        == [("all-reduce", 32.0), ("all-reduce", 32.0)]
    # decode at 1 or 2 a group all-gathers among the groups, reduce-scatters among the GPUs
    if batch > 16:
        work = _work(32, 32, 32, batch)[1]
        assert (work["dp_gather"][4], work["dp_scatter"][4]) == ("all-gather",
                                                                 "reduce-scatter")


def test_prefill_gather_latency_by_hand():
    # DeepSeek-V3 prefill 4096 at TP = EP = DP-attention 32, batch 32, H100-SXM, the
    # ring (1.9 us a step, 0.92 x 450 GB/s): each dense layer's gather is a ring all-reduce
    # of 131,072 x 7168 x 2 B = 1.879 GB among 32: 2 x 31 steps + 2 x 31/32 of the bytes,
    # 8.912 ms; charged as an all-gather of twice the rows it was 31 steps, 8.853 ms
    r = evaluate("DeepSeek-V3", "H100-SXM", tp=32, ep=32, attention_dp=32, batch=32,
                 phase="prefill", prompt=4096, comm=RING)
    st_ = {x.name: x for x in r.stages}
    n = 131072 * ROW
    bw = 0.92 * 450e9
    ring = 2 * 31 * 1.9e-6 + 2 * (31 / 32) * n / bw
    assert ring == pytest.approx(8.9117e-3, rel=1e-4)
    assert ring - (31 * 1.9e-6 + (31 / 32) * 2 * n / bw) == pytest.approx(31 * 1.9e-6)
    for name in ("dp_gather", "dp_scatter"):
        assert st_[name].collective_bytes == n
        assert st_[name].time == pytest.approx(ring, rel=1e-12)


def test_step_reads_the_padded_bytes():
    # evaluate's stage reports the same bytes as the stage table (and a divisible batch
    # the unpadded ones)
    def coll(batch):
        r = evaluate("DeepSeek-V3", "H100-SXM", tp=32, ep=32, attention_dp=32, batch=batch,
                     phase="decode")
        st_ = {x.name: x for x in r.stages}
        return st_["dp_gather"].collective_bytes, st_["dp_scatter"].collective_bytes
    assert coll(40) == (64 * ROW, 64 * ROW)
    assert coll(64) == (64 * ROW, 64 * ROW)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 32]), st.integers(1, 300),
       st.sampled_from(["decode", "prefill"]))
def test_never_below_unpadded_equal_where_a_divides(a, batch, phase):
    w = DECODE if phase == "decode" else Workload("prefill", prompt=64)
    g, s, unpadded = _gather(32, 32, a, batch, w)
    assert g == s
    assert unpadded <= g <= 2 * unpadded
    per = -(-batch // a) * w.tokens_per_sequence
    if phase == "prefill" or 2 * batch < a * per:     # SUM_LEN: the rows, all-reduced
        assert g == unpadded
    else:                                              # MAX_LEN: padded, all-gathered
        assert g == a * per * ROW
        if batch % a == 0:
            assert g == unpadded


def test_decode_sum_len_latency_by_hand():
    # DeepSeek-V3 decode at TP = EP = DP-attention 32, batch 3, H100-SXM, the ring
    # (1.9 us a step, 0.92 x 450 GB/s): padded to 32 rows > 2 x 3, SGLang all-reduces the 3
    # rows (3 x 7168 x 2 B = 43,008 B) among the 32 groups, and the MLP's all-reduce returns
    # them among the 32 GPUs: 2 x 31 steps + 2 x 31/32 of the bytes each, 118.0 us; charged
    # as an all-gather of twice the rows it was 31 steps + 31/32 of 86,016 B, 59.1 us
    r = evaluate("DeepSeek-V3", "H100-SXM", tp=32, ep=32, attention_dp=32, batch=3,
                 phase="decode", comm=RING)
    st_ = {x.name: x for x in r.stages}
    bw = 0.92 * 450e9
    ring = 2 * 31 * 1.9e-6 + 2 * (31 / 32) * 43008 / bw
    assert ring == pytest.approx(118.0e-6, rel=1e-3)
    assert 31 * 1.9e-6 + (31 / 32) * 86016 / bw == pytest.approx(59.1e-6, rel=1e-3)
    for name in ("dp_gather", "dp_scatter"):
        assert (st_[name].collective, st_[name].collective_bytes) == ("all-reduce", 43008)
        assert st_[name].time == pytest.approx(ring, rel=1e-12)
        assert st_[name].count == 3    # the dense layers


def test_small_moe_decode_at_8_groups_by_hand():
    # Mixtral-8x7B decode on 8 H100-SXM, TP 8, experts split by TP, DP-attention 8, batch 3:
    # every layer gathers (32), 3 rows of 4096 x 2 B = 24,576 B, all-reduced among the 8
    # groups and back among the 8 GPUs: 2 x 7 x 1.9 us + 2 x 7/8 x 24,576 B / 414 GB/s,
    # 26.70 us; batch 64 (8 a group) all-gathers its 64 rows: 7 x 1.9 us + 7/8 x 64 rows
    def stages(batch):
        r = evaluate("Mixtral-8x7B", "H100-SXM", tp=8, attention_dp=8, batch=batch,
                     phase="decode", comm=RING)
        return {x.name: x for x in r.stages}
    bw = 0.92 * 450e9
    ring = 2 * 7 * 1.9e-6 + 2 * (7 / 8) * 24576 / bw
    assert ring == pytest.approx(26.70e-6, rel=1e-3)
    three, full = stages(3), stages(64)
    for name, op in (("dp_gather", "all-gather"), ("dp_scatter", "reduce-scatter")):
        assert (three[name].collective, three[name].count) == ("all-reduce", 32)
        assert three[name].collective_bytes == 3 * 4096 * 2
        assert three[name].time == pytest.approx(ring, rel=1e-12)
        assert (full[name].collective, full[name].collective_bytes) == (op, 64 * 4096 * 2)
        assert full[name].time == pytest.approx(7 * 1.9e-6 + (7 / 8) * 64 * 8192 / bw,
                                                rel=1e-12)


def _toy(op, n, p):
    """A collective engine whose all-reduce is not a ring's (one-shot-like: one step, every
    peer's bytes), so an all-reduce of n is not an all-gather of 2 n."""
    n = np.asarray(n, dtype=float)
    return {"all-reduce": 3e-6 + (p - 1) * n / 100e9, "all-gather": 1e-6 + n / 200e9,
            "reduce-scatter": 2e-6 + n / 300e9}.get(op, 5e-6 + n / 50e9)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.lists(st.integers(1, 80), min_size=1, max_size=6,
                                                 unique=True))
def test_grid_chooses_per_cell_through_the_engine(a, batches):
    # every cell of a decode grid (Mixtral-8x7B, TP 8, DP-attention a) runs its own
    # collective through the engine: an all-reduce of the n rows where SGLang takes SUM_LEN
    # (2 n < a ceil(n / a)), else the all-gather (reduce-scatter) of the a ceil(n / a) padded
    # rows, as before; without attention DP, or where a divides the batch, the all-gather of
    # the n rows; both among the whole TP group (8 GPUs), as SGLang runs them; with groups
    # of 8 / a > 1 GPUs, before the gather a reduce-scatter of the group's padded rows
    # among them and after the scatter an all-gather of them (MAX_LEN), neither under
    # SUM_LEN; and each cell as its own one-cell grid, bit for bit
    m = get_model("Mixtral-8x7B")
    row = m.hidden * m.act_bytes
    g = evaluate_grid(m, "H100-SXM", [Parallelism(8, attention_dp=a)], batches, DECODE,
                      comm=_toy)
    assert not any(isinstance(o, CellOps) for o in g.ops) or a > 1
    for j, b in enumerate(batches):
        padded = a * -(-b // a)
        sum_len = 2 * b < padded
        cell = {x.name: x for x in g.result(0, j).stages}
        one = {x.name: x for x in evaluate_grid(m, "H100-SXM", [Parallelism(8, attention_dp=a)],
                                                [b], DECODE, comm=_toy).result(0, 0).stages}
        for name, op in (("dp_gather", "all-gather"), ("dp_scatter", "reduce-scatter")):
            if a == 1:
                assert name not in cell
                continue
            group = 8
            want_op, rows = ("all-reduce", b) if sum_len else (op, padded)
            assert (cell[name].collective, cell[name].collective_bytes) == (want_op, rows * row)
            assert cell[name].network_time == float(_toy(want_op, rows * row, group))
            assert cell[name] == one[name]
            if b % a == 0:
                assert (want_op, rows) == (op, b)
        k = 8 // a
        for name, op in (("allreduce_attn", "reduce-scatter"), ("attn_gather", "all-gather")):
            if a == 1 or k == 1 or (sum_len and name not in cell):
                assert a == 1 or name not in cell   # a = 8: groups of one GPU
                continue
            x = cell[name]
            if sum_len:   # in a grid whose other cells run it
                assert (x.collective, x.collective_bytes, x.network_time) == ("", 0.0, 0.0)
                continue
            n_a = -(-b // a)
            assert (x.collective, x.collective_bytes) == (op, n_a * row)
            assert x.network_time == float(_toy(op, n_a * row, k))
            assert x == one[name]
