"""compute.comm.ScaleUpLowerBound, the least time of the algorithms engines run on a GPU's
scale-up switch (compute.roofline.default_comm, the default when no fabric is given):
hand-derived costs, never above the ring (compute.roofline.ring_comm), below every measured
all-reduce in ../shared/reference, the same number through infer's scalar path as through
the grid, and the study's ``bound`` network.

Costs are ``fixed + share * n / B`` with the step latency 0.6 us (NCCL's LL NVLink step) and
B the GPU's scale-up bandwidth at efficiency 1.0."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from compute.comm import OPERATIONS, RingAlphaBeta, ScaleUpLowerBound
from compute.errors import UserError
from compute.hardware import get_gpu
from compute.roofline import bound_comm, default_comm, ring_comm

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"
A = 0.6e-6


def test_h100_small_all_reduce_is_one_step_and_the_bytes_in_the_switch():
    """H100's NVSwitch reduces (NVLS): 16 KiB among 8 costs 0.6 us + 16,384 B / 450 GB/s =
    0.6364089 us, against the ring's 2 x 7 x 1.9 us + 1.75 x 16,384 / (0.92 x 450e9) =
    26.669 us."""
    gpu = get_gpu("H100-SXM")
    t = float(bound_comm(gpu).collective_time("all-reduce", 16384.0, 8))
    assert t == pytest.approx(0.6e-6 + 16384 / 450e9, rel=1e-12)
    assert t * 1e6 == pytest.approx(0.6364089, abs=1e-7)
    assert default_comm(gpu) == bound_comm(gpu)
    assert float(ring_comm(gpu).collective_time("all-reduce", 16384.0, 8)) * 1e6 == \
        pytest.approx(26.6 + 1.75 * 16384 / (0.92 * 450e9) * 1e6, rel=1e-9)


def test_a100_takes_one_shot_then_two_shot():
    """A100's NVSwitch gen 2 does not reduce: one-shot 0.6 us + 7 n / 300 GB/s below
    n = 0.6 us x 300 GB/s / 5.25 = 34,285.7 B, two-shot 1.2 us + 1.75 n / 300 GB/s above."""
    b = bound_comm(get_gpu("A100-SXM-80GB"))
    assert b.in_switch is False
    assert float(b.collective_time("all-reduce", 16384.0, 8)) == \
        pytest.approx(A + 7 * 16384 / 300e9, rel=1e-12)   # 0.98229 us
    assert float(b.collective_time("all-reduce", 2.0**20, 8)) == \
        pytest.approx(2 * A + 1.75 * 2**20 / 300e9, rel=1e-12)   # 7.3167 us
    cross = A * 300e9 / 5.25
    for n in (0.99 * cross, 1.01 * cross):
        one, two = A + 7 * n / 300e9, 2 * A + 1.75 * n / 300e9
        assert float(b.collective_time("all-reduce", n, 8)) == pytest.approx(min(one, two))


@pytest.mark.parametrize("op,want", [
    ("reduce-scatter", A + 7 / 8 * 1e6 / 100e9),
    ("all-gather", A + 7 / 8 * 1e6 / 100e9),
    ("all-to-all", A + 7 / 8 * 1e6 / 100e9),
    ("send-recv", A + 1e6 / 100e9),
    # no in-switch multicast: the pipelined ring's 7 x 0.6 + 10 = 14.2 us, direct's
    # 0.6 + 70 us and scatter + all-gather's 1.2 + 17.5 us: the ring
    ("broadcast", 7 * A + 1e6 / 100e9),
    ("reduce", 7 * A + 1e6 / 100e9),
])
def test_other_operations_by_hand(op, want):
    """1 MB among 8 at 100 GB/s without in-switch reduction."""
    b = ScaleUpLowerBound(bandwidth=100e9, in_switch=False)
    assert float(b.collective_time(op, 1e6, 8)) == pytest.approx(want, rel=1e-12)


def test_broadcast_of_a_few_bytes_takes_the_direct_send():
    """8 B among 8: direct 0.6 us + 7 x 8 B / 100 GB/s beats the ring's 4.2 us."""
    b = ScaleUpLowerBound(bandwidth=100e9, in_switch=False)
    assert float(b.collective_time("broadcast", 8.0, 8)) == pytest.approx(A + 56 / 100e9)


@pytest.mark.parametrize("in_switch", [False, True])
def test_never_above_the_ring_at_its_own_constants(in_switch):
    """Every algorithm the ring is among, at the ring's latency and efficiency: the bound is
    the ring's time or less, for every operation, group and size."""
    ring = RingAlphaBeta(bandwidth=450e9, step_latency=1.9e-6, efficiency=0.92)
    bound = ScaleUpLowerBound(bandwidth=450e9, step_latency=1.9e-6, efficiency=0.92,
                              in_switch=in_switch)
    n = np.logspace(0, 11, 45)
    for op in OPERATIONS:
        for p in (2, 3, 4, 8, 16, 72):
            assert np.all(bound.collective_time(op, n, p) <= ring.collective_time(op, n, p))


def test_one_gpu_costs_nothing_and_bad_input_is_refused():
    b = ScaleUpLowerBound(bandwidth=450e9)
    assert float(b.collective_time("all-reduce", 1e9, 1)) == 0.0
    with pytest.raises(UserError, match=r"^in_switch must be true or false, got 'yes'"):
        ScaleUpLowerBound(bandwidth=450e9, in_switch="yes")
    with pytest.raises(UserError, match=r"^bandwidth must be a number from 125,000 to "):
        ScaleUpLowerBound(bandwidth=0.0)


def _measured_all_reduces():
    """(GPU, group, bytes, measured seconds) of every all-reduce curve point in
    ../shared/reference: busbw = algbw x 2(p-1)/p, so t = n x 2(p-1)/p / busbw."""
    gpus = {"8xH200-SXM NVSwitch": "H200-SXM", "8xA100-SXM-80GB NVSwitch": "A100-SXM-80GB"}
    with open(REFERENCE / "nccl_allreduce_busbw_8gpu.csv") as f:
        for r in csv.DictReader(f):
            n = float(r["bytes"])
            yield gpus[r["system"]], 8, n, n * 1.75 / (float(r["busbw_GBps"]) * 1e9)
    with open(REFERENCE / "nccl_allreduce_h100_by_gpu_count.csv") as f:
        for r in csv.DictReader(f):   # 'large (>=1 GiB)': 1 GiB, the least size it covers
            p, n = int(r["gpus"]), 2.0**30
            yield "H100-SXM", p, n, n * 2 * (p - 1) / p / (float(r["busbw_GBps"]) * 1e9)
    # 8 H20 (H100's NVLink 4 and NVSwitch): 12.5 us at 4-16 B, 16.4 us at 1 KiB, 16.7 us at
    # 4 KiB; 2 H100 with NVLS and CUDA graphs: 5.6-6 us at 128-512 B (the least of each)
    yield from (("H100-SXM", 8, 16.0, 12.5e-6), ("H100-SXM", 8, 1024.0, 16.4e-6),
                ("H100-SXM", 8, 4096.0, 16.7e-6), ("H100-SXM", 2, 512.0, 5.6e-6))


def test_below_every_measured_all_reduce_where_the_ring_is_not():
    """The bound is below each of the 55 measured points; the ring is above NCCL's NVLS at
    8 H200 from 1 GiB (busbw 468-480 GB/s, above the ring's 0.92 x 450 = 414) and at 8 H100."""
    points = list(_measured_all_reduces())
    assert len(points) == 24 * 2 + 7 + 4
    ring_above = []
    for gpu, p, n, t in points:
        g = get_gpu(gpu)
        assert float(bound_comm(g).collective_time("all-reduce", n, p)) < t, (gpu, p, n)
        if float(ring_comm(g).collective_time("all-reduce", n, p)) > t:
            ring_above.append((gpu, p, n))
    assert ("H200-SXM", 8, 2.0**33) in ring_above and ("H100-SXM", 8, 2.0**30) in ring_above
    assert not [x for x in ring_above if x[0] == "A100-SXM-80GB"]


def test_the_fast_path_gives_the_grid_number():
    """evaluate with the bound (plain floats through ScaleUpLowerBound.time) and the grid
    (numpy arrays through np.minimum) give the same latency, bit for bit, and so does the
    default (the plan's terms), where one-shot and where two-shot is the least (A100 decode
    and prefill)."""
    from compute.evaluate_one import evaluate
    from compute.roofline import evaluate_grid, make_workload

    for gpu in ("A100-SXM-80GB", "H100-SXM"):
        comm = bound_comm(get_gpu(gpu))
        for phase, batch in (("decode", 1), ("decode", 64), ("prefill", 4)):
            one = evaluate("Llama-3-70B", gpu, 8, batch, phase, comm=comm).latency
            plan = evaluate("Llama-3-70B", gpu, 8, batch, phase).latency   # the plan's terms
            grid = evaluate_grid("Llama-3-70B", gpu, [8], [batch], make_workload(phase),
                                 comm=comm)
            want = float(np.asarray(grid.latency).reshape(-1)[0])
            assert one == plan == want, (gpu, phase)


def test_gpt_oss_batch_one_on_b200_stays_below_the_published_rate():
    """TensorRT-LLM's 420 tokens/s/user for gpt-oss-120b at TP 8 on 8 B200 (batch 1): with the
    bound each of the 72 all-reduces of 5,760 B costs 0.6 us + 5,760 / 900 GB/s = 0.6064 us
    (26.61 us through the ring), and the roofline rate rises past the ring's 494 tokens/s,
    further above the measured 420."""
    from compute.evaluate_one import evaluate

    b = bound_comm(get_gpu("B200-HGX"))
    r = evaluate("gpt-oss-120b", "B200-HGX", 8, 1, "decode", context=2048, comm=b)
    ring = evaluate("gpt-oss-120b", "B200-HGX", 8, 1, "decode", context=2048,
                    comm=ring_comm(get_gpu("B200-HGX")))
    st = {s.name: s for s in r.stages}
    assert st["allreduce_mlp"].network_time == pytest.approx(0.6e-6 + 5760 / 900e9, rel=1e-12)
    assert st["allreduce_mlp"].count == 36 and st["allreduce_attn"].count == 36
    assert 1 / r.latency > 1 / ring.latency > 420
    assert ring.latency / r.latency > 10   # the ring's all-reduces were 95% of its step


def test_the_study_runs_the_bound_network():
    """``bound`` is one of the study's networks: its rows are as fast as the ring's or
    faster (the bound is never above the ring)."""
    from netmodel.study.lite_gpu import NETWORKS, run_lite_gpu_study

    kw = {"models": ["Llama-3-8B"], "gpus": ["H100-SXM", "Lite"], "phases": ["decode"]}
    bound = run_lite_gpu_study(comm_factory=NETWORKS["bound"], network="bound", **kw)
    ring = run_lite_gpu_study(comm_factory=NETWORKS["ring"], network="ring", **kw)
    assert [r.network for r in bound.rows] == ["bound", "bound"]
    for a, b in zip(bound.rows, ring.rows, strict=True):
        assert a.gpu == b.gpu and a.tokens_per_s_per_sm >= b.tokens_per_s_per_sm
