"""The roofline (the default mode) is an upper bound on every throughput NVIDIA publishes for
TensorRT-LLM that ``published_serving.csv`` does not hold
(``tests/compute/data/published_serving_trtllm.csv``: 0.6.1's static batches of Llama-2-70B on
H100 FP8 and A100 FP16; the v1.0 overview's Llama-3.1-405B NVFP4 on 4 B200 and 4 GB200,
Llama-3.3-70B NVFP4 on one GB200 and one B200, and its FP8 H100/H200 lengths; the DeepSeek-R1
guide's five 8-GPU runs, B200 NVFP4 and H200 FP8, at minimum latency with MTP speculative
decoding and at maximum throughput with expert and attention data parallelism; MLPerf
Inference v4.1 Offline: Llama-2-70B on 8 H200 and one B200, Mixtral-8x7B on 8 H100 and 8
H200), each converted as the data file's header says, one source per row.

The rows are costed through the accuracy report's own function
(scripts/inference_reports/trtllm.py, ``trtllm_prediction``), which calls
``compute.evaluate_one.evaluate`` with the row's TP, EP, attention-DP degrees and fabric.

No test holds the calibrated profile (vllm-dgx-h100) to an error here: it was fitted on 2023
vLLM FP16 serving Llama-2-70B on one DGX-H100, and every row here is another engine (most on
other GPUs or models), so the issue's target (30% on a held-out model on the fitted system)
applies to none; the report shows its error as an extrapolation. What holds for every row is
that the calibrated mode, which only adds time to the roofline, stays below it.
"""

from __future__ import annotations

import pytest

from tests.compute.report_helpers import inference_reports

trt = inference_reports("trtllm")[0]
ROWS = trt.trtllm_rows()
USED = [r for r in ROWS if r["status"] == "used"]
COLUMNS = ("id", "status", "phase", "model", "overrides", "gpu", "gpu_measured", "fabric",
           "tp", "ep", "attention_dp", "emitted", "batch", "prompt", "context", "output",
           "measured", "engine", "source", "note")


def margin(row: dict) -> float:
    """Roofline / measured output tokens/s: above 1 where the bound holds."""
    return trt.trtllm_prediction(row) / float(row["measured"])


def by_id(name: str) -> dict:
    return next(r for r in ROWS if r["id"] == name)


def test_the_data_file_is_well_formed():
    assert tuple(ROWS[0]) == COLUMNS
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids))
    for r in ROWS:
        assert r["status"] in ("used", "excluded"), r["id"]
        assert r["phase"] in trt.PHASES, r["id"]
        assert r["source"] and r["note"] and r["engine"], r["id"]
        assert float(r["measured"]) > 0, r["id"]
        if r["status"] == "excluded":
            assert r["note"].startswith("excluded: "), r["id"]
        need = ("context",) if r["phase"] == "decode_rate" else ("prompt", "output")
        assert all(int(r[k]) > 0 for k in need), r["id"]
        # speculative decoding is said where a step may emit more than one token
        assert (int(r["emitted"]) > 1) == ("SPECULATIVE" in r["note"]), r["id"]
    # none of these configurations is in published_serving.csv from TensorRT-LLM's own
    # pages (another version's figure for the same system, model, dtypes, lengths and TP
    # would be a repeat, not a new point; Azure's independent runs of some are kept)
    pub = inference_reports("published")[0].published_rows()

    def key(r):
        return r["gpu"], r["model"], r["tp"], r["prompt"], r["output"], r["overrides"]

    assert not {key(r) for r in USED if r["phase"] != "decode_rate"} & \
        {key(r) for r in pub if r["source"].startswith(("TensorRT-LLM", "NVIDIA/TensorRT-LLM"))}
    assert {r["gpu"] for r in USED} == {"H100-SXM", "H200-SXM", "A100-SXM-80GB", "B200-HGX",
                                        "GB200-NVL72"}
    assert {r["model"] for r in USED} == {"Llama-2-70B", "Llama-3-8B", "Llama-3-70B",
                                          "Llama-3.1-405B", "DeepSeek-V3", "Mixtral-8x7B"}
    # a length the source does not publish is a 1-token floor, said so
    for r in USED:
        if "a floor" in r["note"]:
            assert r["prompt"] == "1", r["id"]


@pytest.mark.parametrize("row", USED, ids=[r["id"] for r in USED])
def test_the_roofline_stays_above_every_published_throughput(row):
    assert margin(row) > 1.0


def test_the_margins_are_those_reported():
    """Measured 2026-12: 1.41x (TensorRT-LLM 1.0's Llama-3.1-8B on one H100 at 128 / 2048,
    no collectives; 0.6.1's static batch of 120 Llama-2-70B prompts of 2048 tokens on 4
    A100 in FP16 was the least, 1.39x, while the default collectives were NCCL's ring) to
    11.55x (DeepSeek-R1 on 8 H200 at TP 8 x EP 4,
    batch 1 with 3 MTP drafts: the bound credits all 4 tokens a step and a step of one
    token's weights and all-reduces, where the engine runs the draft passes and a verification
    of 4 tokens, at the latency of 61 layers of small kernels; 7.31x before its EP layers
    took the all-reduce exchange, compute.moe_exchange: the step of one token 3.46 -> 2.19 ms,
    that of --ep 1). Without speculative decoding
    the rows stay within 1.41x-4.29x (the widest: 0.6.1's static batch of 480 at 128/2048 on
    4 H100, 3.60x with the ring's all-reduces); a lower bound 10x below every measurement
    would be useless. The MLPerf rows,
    whose prompt length is a 1-token floor, check the bound only (up to 10.45x, Mixtral on 8
    H100 as 8 instances of TP 1) and are left out of the ceilings."""
    margins = {r["id"]: margin(r) for r in USED if "a floor" not in r["note"]}
    assert 1.3 < min(margins.values()) and max(margins.values()) < 12.0
    mtp = {i: m for i, m in margins.items() if "mtp" in i}
    assert mtp == pytest.approx({"trtds-r1-b200-minlat-mtp3": 9.69,
                                 "trtds-r1-h200-minlat-mtp3": 11.55}, abs=0.01)
    plain = [m for i, m in margins.items() if int(by_id(i)["emitted"]) == 1]
    assert max(plain) == pytest.approx(4.29, abs=0.005)
    assert min(margins, key=margins.get) == "trt10-l31-8b-h100-tp1-128-2048"


def test_maximum_load_rows_are_evaluated_where_the_batch_no_longer_matters():
    """A dense row at batch 65,536: doubling it moves the throughput under 1%. A DeepSeek-R1
    row at the source's concurrency (the most sequences in flight): half the batch gives
    less, so the figure at the concurrency bounds whatever batch ran."""
    for r in (r for r in USED if r["phase"] == "throughput"):
        b = int(r["batch"])
        if b == 65536:
            assert trt.trtllm_prediction(r, batch=2 * b) / trt.trtllm_prediction(r) - 1 < 0.01
        else:
            assert r["id"].startswith("trtds-"), r["id"]
            assert trt.trtllm_prediction(r, batch=b // 2) < trt.trtllm_prediction(r), r["id"]


def test_mlperf_rows_hold_at_every_reading():
    """The MLPerf rows' prompts are a 1-token floor; at a 300-token mean the roofline is still
    above the Llama-2-70B rows (1.63x on 8 H200 as TP 1, 2.13x on one B200 in NVFP4). The
    Mixtral rows' parallelism is not in the files found: the bound holds for the 8 GPUs as 8
    instances of TP 1, 4 of TP 2, 2 of TP 4 or one of TP 8 (TP 1 the highest roofline, the row's
    reading), also at a 300-token mean (down to 1.34x, 8 H200 as one TP-8 instance)."""
    for r in (r for r in USED if r["id"].startswith("mlperf41-")):
        assert "a floor" in r["note"] and r["prompt"] == "1", r["id"]
        at300 = dict(r, prompt="300")
        assert margin(at300) > 1.0, r["id"]
        if r["model"] != "Mixtral-8x7B":
            continue
        system = 8 * float(r["measured"])
        per_tp = {tp: trt.trtllm_prediction(dict(r, tp=str(tp))) * 8 / tp for tp in (1, 2, 4, 8)}
        assert max(per_tp, key=per_tp.get) == 1, r["id"]
        for tp in (1, 2, 4, 8):
            assert per_tp[tp] > system, (r["id"], tp)
            assert trt.trtllm_prediction(dict(at300, tp=str(tp))) * 8 / tp > system, (r["id"], tp)
    assert margin(dict(by_id("mlperf41-l2-70b-h200x8-offline"), prompt="300")) == \
        pytest.approx(1.63, abs=0.01)


def test_static_batches_are_the_published_batch_and_the_a100_reading():
    """0.6.1's static batches are evaluated at the published batch, where it still matters
    (doubling it raises the roofline by more than 1% on some row). The A100 table's column
    says 'out tok/s' where the H100 table's says 'out tok/s/GPU': the row takes the stricter
    reading (a GPU's, x 4); read as the instance's, the roofline is 4x further above."""
    static = [r for r in USED if r["phase"] == "static"]
    assert len(static) == 7
    assert any(trt.trtllm_prediction(r, batch=2 * int(r["batch"]))
               / trt.trtllm_prediction(r) - 1 > 0.01 for r in static)
    a100 = [r for r in static if r["gpu"] == "A100-SXM-80GB"]
    assert [int(r["measured"]) for r in a100] == [4 * 670, 4 * 525, 4 * 79]
    for r in a100:
        as_instance = dict(r, measured=str(int(r["measured"]) // 4))
        assert margin(as_instance) == pytest.approx(4 * margin(r))
    h100 = by_id("trt061-l2-70b-h100-tp2-b64-2048-2048")
    assert float(h100["measured"]) == 547 * 2              # 547 a GPU, TP 2


def test_speculative_rows_bound_every_acceptance():
    """With MTP a step emits at most 1 + 3 tokens: the bound takes all 4 at the step of one
    token. Costed through --mtp-tokens 3 (the verification pass and the drafts' passes counted,
    at the default acceptance) the rate is lower than the bound, and the bound is above what
    ran whatever the acceptance was. Without counting the drafts (one token a step), the
    B200 row's roofline would still be above the measured 274 tokens/s; the H200 row's too."""
    spec = [r for r in USED if int(r["emitted"]) > 1]
    assert {r["id"] for r in spec} == {"trtds-r1-b200-minlat-mtp3", "trtds-r1-h200-minlat-mtp3"}
    for r in spec:
        bound = trt.trtllm_prediction(r)
        costed = trt.mtp_rate(r)
        one = trt.trtllm_prediction(dict(r, emitted="1"))
        assert bound == pytest.approx(4 * one, rel=1e-12)
        assert float(r["measured"]) < costed < bound, r["id"]


def test_the_calibrated_mode_stays_below_the_roofline():
    """The profile (achieved efficiencies below peak, fixed overheads) only adds time: on
    every row it is costed on, its throughput is below the roofline's."""
    from compute.profiles import get_profile
    from compute.roofline_options import RooflineOptions

    options = RooflineOptions(profile=get_profile("vllm-dgx-h100"))
    for r in (r for r in USED if r["emitted"] == "1"):
        cal = trt.trtllm_prediction(r, options, trt.profile_comm(r))
        assert 0 < cal < trt.trtllm_prediction(r, None, trt.profile_comm(r)), r["id"]
        assert trt.profile_scope(r).startswith("extrapolation: engine"), r["id"]
