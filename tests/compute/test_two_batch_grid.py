"""Two-batch overlap as a roofline option (``RooflineOptions.two_batch_overlap``): the grid
times every cell's step as two micro-batches at once (compute.micro_batches), the same
numbers as compute.two_batch.evaluate_two_batch cell by cell, and each cell takes the lesser
of the serial and the overlapped step (the operator turns SGLang's flag on or off per
deployment). The old code had no such option (RooflineOptions took no two_batch_overlap)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.parallel import Parallelism
from compute.roofline import evaluate_grid, make_workload
from compute.roofline_options import RooflineOptions
from compute.two_batch import evaluate_two_batch

TBO = RooflineOptions(two_batch_overlap=True)
BATCHES = [1, 2, 3, 5, 8, 33]


@pytest.mark.parametrize("model,configs", [
    ("DeepSeek-V3", [Parallelism(8, 1, 8, 8), Parallelism(8, 1, 8, 1), Parallelism(8, 1, 4, 2)]),
    ("Mixtral-8x7B", [Parallelism(4, 1, 4, 1), Parallelism(2)]),
    ("Llama-3-70B", [Parallelism(8), Parallelism(4)]),
])
@pytest.mark.parametrize("phase", ["decode", "prefill"])
def test_every_cell_is_evaluate_two_batch(model, configs, phase):
    wl = make_workload(phase)
    g = evaluate_grid(model, "H100-SXM", configs, BATCHES, wl, options=TBO)
    serial = evaluate_grid(model, "H100-SXM", configs, BATCHES, wl)
    assert np.array_equal(g.stage_time, serial.stage_time)      # the stages: the serial step's
    for i, c in enumerate(configs):
        for j, b in enumerate(BATCHES):
            # nothing to split (batch 1, a decode rank of one sequence): the serial step
            if b == 1 or (phase == "decode" and b < 2 * c.attention_dp):
                assert math.isnan(g.two_batch_latency[i, j])
                assert g.latency[i, j] == serial.latency[i, j] and g.two_batch_hidden[i, j] == 0
                continue
            want = evaluate_two_batch(model, "H100-SXM", c.tp, b, phase, ep=c.ep,
                                      attention_dp=c.attention_dp)
            assert g.two_batch_latency[i, j] == pytest.approx(want.latency, rel=1e-12, abs=0)
            best = min(serial.latency[i, j], g.two_batch_latency[i, j])
            assert g.latency[i, j] == best
            assert g.two_batch_hidden[i, j] == pytest.approx(serial.latency[i, j] - best,
                                                              rel=1e-12, abs=1e-18)
            # one configuration through evaluate: the same cell
            r = evaluate(model, "H100-SXM", c.tp, b, phase, ep=c.ep,
                         attention_dp=c.attention_dp, options=TBO)
            assert r.latency == pytest.approx(g.latency[i, j], rel=1e-12)
            assert sum(r.time_split().values()) == pytest.approx(r.latency, rel=1e-12)
    split = g.time_split()
    assert np.allclose(sum(split.values()), g.latency, rtol=1e-12)


def test_the_overlapped_step_is_taken_where_it_is_faster():
    """DeepSeek-V3 prefill at EP 8: the all-to-alls hide behind the compute, so the
    overlapped step is taken; Llama-3-70B decode at TP 8 is memory-bound and two half
    batches read the weights twice (11.50 -> 13.30 ms, compute.two_batch's test), so the
    serial step is kept."""
    r = evaluate("DeepSeek-V3", "H100-SXM", 8, 16, "prefill", ep=8, attention_dp=8,
                 options=TBO)
    tb = evaluate_two_batch("DeepSeek-V3", "H100-SXM", 8, 16, "prefill", ep=8, attention_dp=8)
    assert tb.latency < tb.serial.latency
    assert r.latency == pytest.approx(tb.latency, rel=1e-12)
    assert r.two_batch_hidden == pytest.approx(tb.serial.latency - tb.latency, rel=1e-12)
    d = r.to_dict()["two_batch_overlap"]
    assert d["used"] and d["serial_latency_s"] == pytest.approx(tb.serial.latency, rel=1e-12)
    r = evaluate("Llama-3-70B", "H100-SXM", 8, 64, options=TBO)
    assert r.latency == evaluate("Llama-3-70B", "H100-SXM", 8, 64).latency
    assert r.two_batch_hidden == 0.0 and not r.to_dict()["two_batch_overlap"]["used"]


def test_off_by_default_and_left_out_of_the_settings():
    assert RooflineOptions().two_batch_overlap is False
    assert "two_batch_overlap" not in RooflineOptions().to_dict()
    assert TBO.to_dict()["two_batch_overlap"] is True
    r = evaluate("Llama-3-70B", "H100-SXM", 8, 64)
    assert r.two_batch_hidden is None and "two_batch_overlap" not in r.to_dict()
    g = evaluate_grid("Llama-3-70B", "H100-SXM", [8], [4], "decode")
    assert g.two_batch_latency is None and "two_batch_hidden" not in g.time_split()


@pytest.mark.parametrize("call,says", [
    (lambda: RooflineOptions(two_batch_overlap="yes"), "two_batch_overlap must be true or false"),
    (lambda: evaluate_grid("Llama-3-70B", "H100-SXM", [Parallelism(4, 2)], [4], "decode",
                           options=TBO), "models one pipeline stage; got PP 2"),
    (lambda: evaluate("Llama-3-70B", "H100-SXM", 4, 4, pp=2, options=TBO),
     "models one pipeline stage; got PP 2"),
])
def test_refused(call, says):
    with pytest.raises(UserError, match=says):
        call()


def test_refused_with_a_profile():
    from compute.profiles import get_profile

    with pytest.raises(UserError, match="modelled on the roofline; give no profile"):
        RooflineOptions(two_batch_overlap=True, profile=get_profile("vllm-dgx-h100"))
