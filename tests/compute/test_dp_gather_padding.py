"""The gather of the attention groups' tokens before a tensor-parallel MLP (``dp_gather``) and
its scatter back (``dp_scatter``), sized as SGLang's DP attention moves them
(python/sglang/srt/layers/dp_attention.py, ``DpPaddingMode.get_dp_padding_mode``):

* decode: every group padded to the busiest group's rows and all-gathered (``MAX_LEN``,
  ``a x max`` rows, reduce-scattered back) where ``2 sum >= a max``, else an all-reduce of
  the ``sum`` rows (``SUM_LEN``), which moves on a ring what an all-gather of ``2 sum`` does:
  ``min(a max, 2 sum)`` rows in all-gather bytes;
* prefill (``is_extend_in_batch``): always ``SUM_LEN``, an all-reduce of the ``sum`` rows,
  unpadded, whatever the split, costed as the all-reduce it is (``2 (a - 1)`` ring steps,
  not an all-gather's ``a - 1``); the MLP's own all-reduce returns them.

Where ``a`` divides a decode batch, ``a max = sum``: the unpadded figure, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.evaluate_one import evaluate
from compute.models import get_model
from compute.parallel import Parallelism, layout
from compute.phases import Workload
from compute.stages import stage_work

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


@pytest.mark.parametrize("batch, a, rows", [
    (3, 32, 6),      # groups of 1, 1, 1 and 29 empty: padded 32 rows > 2 x 3: all-reduce, 6
    (40, 32, 64),    # 8 groups of 2, 24 of 1: padded 32 x 2 = 64 <= 80: all-gather, 64
    (64, 32, 64),    # 2 a group: nothing padded
    (33, 8, 40),     # 1 group of 5, 7 of 4: padded 8 x 5 = 40 <= 66
    (9, 8, 16),      # 1 group of 2, 7 of 1: padded 16 <= 18
    (5, 8, 8),       # 1 a group, 3 empty: padded 8 <= 10
])
def test_decode_by_hand(batch, a, rows):
    g, s, unpadded = _gather(32, 32, a, batch)
    assert g == s == rows * ROW
    assert unpadded == batch * ROW


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
    # decode keeps the all-gather among the groups and the reduce-scatter among the GPUs
    work = _work(32, 32, 32, batch)[1]
    assert (work["dp_gather"][4], work["dp_scatter"][4]) == ("all-gather", "reduce-scatter")


def test_prefill_gather_latency_by_hand():
    # DeepSeek-V3 prefill 4096 at TP = EP = DP-attention 32, batch 32, H100-SXM, the default
    # ring (1.9 us a step, 0.92 x 450 GB/s): each dense layer's gather is a ring all-reduce
    # of 131,072 x 7168 x 2 B = 1.879 GB among 32: 2 x 31 steps + 2 x 31/32 of the bytes,
    # 8.912 ms; charged as an all-gather of twice the rows it was 31 steps, 8.853 ms
    r = evaluate("DeepSeek-V3", "H100-SXM", tp=32, ep=32, attention_dp=32, batch=32,
                 phase="prefill", prompt=4096)
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
    if phase == "prefill":
        assert g == unpadded
    elif batch % a == 0:
        assert g == unpadded
    else:
        per = -(-batch // a) * w.tokens_per_sequence
        assert g == min(a * per, 2 * batch * w.tokens_per_sequence) * ROW
