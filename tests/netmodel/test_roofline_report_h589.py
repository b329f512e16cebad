"""netmodel.study.roofline_report: what ``netmodel infer`` and ``netmodel search`` print,
made by one library call each (infer_report, search_report), checked against compute's own
results and hand-derived figures; a fabric's size bounds the instances; the commands print
exactly the report objects' ``to_dict()`` and ``table()``."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import get_model
from compute.roofline import make_workload
from compute.roofline_options import RooflineOptions
from compute.search import search
from compute.two_batch import evaluate_two_batch
from netmodel.cli.refusals import flag_of
from netmodel.study.roofline_report import (
    check_fits,
    infer_report,
    search_report,
    stage_table,
    summary_lines,
)
from netmodel.study.run_words import default_description, describe_collectives, parameters_named_by
from tests.netmodel.cli_helpers import run_cli

H100 = get_gpu("H100-SXM")
LLAMA = get_model("Llama-3-70B")
PREFILL = make_workload("prefill", 1500, 1513)


def _infer(**kw):
    return infer_report(LLAMA, H100, 8, 8, PREFILL, options=RooflineOptions(),
                        collectives=default_description(H100), **kw)


def test_infer_report_is_computes_result():
    rep = _infer()
    want = evaluate(LLAMA, H100, 8, 8, PREFILL, options=RooflineOptions())
    assert rep.result.latency == want.latency and rep.two_batch is None
    doc = rep.to_dict()
    assert doc == {**want.to_dict(), "collectives": default_description(H100)}
    assert rep.csv() == want.to_csv()


def test_infer_text_by_hand():
    rep = _infer()
    lines = rep.table().splitlines()
    # bf16 weights on TP 8: 141.1 GB / 8 = 17.64 GB a GPU
    assert lines[2].startswith("memory per GPU: weights 17.64 + ")
    assert lines[:4] == summary_lines(rep.result)
    assert lines[4] == "collectives: " + describe_collectives(default_description(H100))
    assert lines[4].startswith("collectives: lower bound over scale-up switch algorithms (the "
                               "least of ring, one-shot, two-shot and in-switch all-reduce")
    assert lines[5] == ""
    table = stage_table(rep.result)
    assert lines[6:] == table and len(table) == 1 + len(rep.result.stages)
    # overlap mode: a stage's share is its time over the step's, and they add up to the step
    shares = [float(row.split()[-2].rstrip("%")) for row in table[1:]]
    assert sum(shares) == pytest.approx(100, abs=0.05 * len(shares))


def test_infer_two_batch_beside_the_serial_step():
    deepseek = get_model("DeepSeek-V3")
    work = make_workload("prefill", 4096, 1513)
    kw = dict(ep=32, attention_dp=32, options=RooflineOptions())
    rep = infer_report(deepseek, H100, 32, 128, work, collectives=default_description(H100),
                       two_batch=True, **kw)
    want = evaluate_two_batch(deepseek, H100, 32, 128, work, **kw)
    assert rep.two_batch.latency == want.latency
    assert rep.result.latency == want.serial.latency
    doc = rep.to_dict()
    assert doc["two_batch_overlap"] == want.to_dict()
    assert doc["two_batch_schedule"] == want.schedule_dict()
    line = next(ln for ln in rep.table().splitlines() if ln.startswith("two-batch overlap: TTFT"))
    assert f"({want.latency / want.serial.latency:.1%} of the serial step)" in line


def test_a_skew_past_what_ep_allows_is_noted():
    mixtral = get_model("Mixtral-8x7B")   # 8 experts, 2 a token: EP 8's busiest gets at most 4x
    rep = infer_report(mixtral, H100, 8, 64, make_workload("decode", 1500, 1513), ep=8,
                       expert_skew=100, options=RooflineOptions(),
                       collectives=default_description(H100))
    assert rep.notes == ("note: expert_skew 100 exceeds what EP 8 allows for Mixtral-8x7B "
                         "(the busiest of 8 groups receives at most every routed copy it "
                         "holds an expert for: 4x the mean); costed at 4",)
    assert rep.notes[0] in rep.table().splitlines()
    # the library names the parameter, the command line its flag
    with parameters_named_by(flag_of):
        rep = infer_report(mixtral, H100, 8, 64, make_workload("decode", 1500, 1513), ep=8,
                           expert_skew=100, options=RooflineOptions(),
                           collectives=default_description(H100))
    assert rep.notes[0].startswith("note: --expert-skew 100 exceeds what EP 8 allows")


def test_dense_mlp_tp_on_plain_tp_is_refused():
    with pytest.raises(UserError, match="dense MLP TP degree"):
        infer_report(LLAMA, H100, 8, 8, PREFILL, options=RooflineOptions(dense_mlp_tp=4),
                     collectives=default_description(H100))


def test_an_instance_past_the_fabric_is_refused():
    desc = {"model": "scenario", "scenario": "lite-flat@Lite"}
    check_fits(128, 128, desc)   # the whole fabric fits
    with pytest.raises(UserError, match=r"an instance of 129 GPUs does not fit scenario "
                                        r"'lite-flat@Lite' \(128 GPUs\)"):
        check_fits(129, 128, desc)
    with pytest.raises(UserError, match="an instance of 16 GPUs does not fit"):
        _infer(fabric_gpus=8, pp=2)   # TP 8 x PP 2
    with pytest.raises(UserError, match="an instance of 16 GPUs"):
        search_report(LLAMA, H100, PREFILL, options=RooflineOptions(), tp=[8, 16],
                      collectives=default_description(H100) | desc, fabric_gpus=8)


def test_search_report_is_computes_search():
    rep = search_report(LLAMA, H100, PREFILL, options=RooflineOptions(), max_batch=64,
                        collectives=default_description(H100))
    want = search(LLAMA, H100, PREFILL, options=RooflineOptions(), max_batch=64)
    assert rep.result.best.to_dict() == want.best.to_dict()
    assert rep.to_dict()["best"] == want.best.to_dict()
    assert rep.space() == "TP 1, 2, 4, 8"   # the degrees dividing 64 heads, up to 8 GPUs
    assert rep.plain_moe is None   # a dense model
    lines = rep.table().splitlines()
    assert lines[0].startswith(f"searched {want.evaluated} configurations (TP 1, 2, 4, 8 x "
                               f"batch 1..64): {want.fitting} fit in memory")
    rows = lines[lines.index("best per TP degree:") + 2:]
    assert [int(r.split()[0]) for r in rows] == [p.tp for p in want.by_tp]
    front = rep.table(front=True).splitlines()
    assert f"Pareto front ({len(want.front)} points):" in front


def test_a_fabric_caps_the_instances():
    rep = search_report(LLAMA, H100, PREFILL, options=RooflineOptions(), max_batch=8,
                        collectives=default_description(H100), fabric_gpus=4)
    assert tuple(rep.result.tp_degrees) == (1, 2, 4)   # 8 would not fit 4 GPUs


def test_a_moe_searched_by_plain_tp_says_what_else():
    rep = search_report(get_model("Mixtral-8x7B"), H100, PREFILL, options=RooflineOptions(),
                        tp=[8], max_batch=8, collectives=default_description(H100))
    assert rep.plain_moe == "Mixtral-8x7B"
    assert rep.table().splitlines()[-1].startswith("note: plain tensor parallelism only; "
                                                   "Mixtral-8x7B is a mixture of experts")
    rep = search_report(get_model("Mixtral-8x7B"), H100, PREFILL, options=RooflineOptions(),
                        tp=[8], ep=[1, 8], max_batch=8, collectives=default_description(H100))
    assert rep.plain_moe is None
    assert rep.space() == "2 configurations of TP 8, PP 1, EP 1, 8, DP-attention 1"


def test_the_commands_print_exactly_the_reports():
    # the reports as the command line has them say the run's parameters: by its flags
    argv = ["--model", "Llama-3-70B", "--gpu", "H100-SXM", "--phase", "prefill"]
    with parameters_named_by(flag_of):
        table = _infer().table()
    assert run_cli(["infer", *argv, "--tp", 8, "--batch", 8]).output == table + "\n"
    assert "; --scenario or --fabric for a fabric)" in table
    assert "; scenario or fabric for a fabric)" in _infer().table()
    out = run_cli(["infer", *argv, "--tp", 8, "--batch", 8, "--json"])
    assert json.loads(out.output) == json.loads(json.dumps(_infer().to_dict()))
    rep = search_report(LLAMA, H100, PREFILL, options=RooflineOptions(), max_batch=64,
                        collectives=default_description(H100), tp=[4, 8])
    out = run_cli(["search", *argv, "--max-batch", 64, "--tp", "4,8", "--front"])
    with parameters_named_by(flag_of):
        table = rep.table(front=True)
    assert out.exit_code == 0 and out.output == table + "\n"
