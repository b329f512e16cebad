"""``netmodel infer --two-batch-overlap``: the step also timed as two micro-batches, each
one's collectives behind the other's compute (compute.two_batch); off by default, so the
serial result is unchanged. The old code had no such flag (click: 'No such option')."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from compute.two_batch import evaluate_two_batch
from netmodel.cli.main import cli

ARGS = ("infer", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--tp", 32, "--ep", 32,
        "--attention-dp", 32, "--batch", 128, "--phase", "prefill", "--prompt", 4096)


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="netmodel")


def test_infer_adds_the_overlapped_step_and_keeps_the_serial_one():
    plain = _run(*ARGS)
    r = _run(*ARGS, "--two-batch-overlap")
    assert plain.exit_code == 0 and r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("two-batch overlap: "))
    assert "micro-batches of 64 + 64" in line and "TTFT " in line
    # everything else is the serial step's, as without the flag
    assert [x for x in r.output.splitlines() if x != line] == plain.output.splitlines()
    doc = json.loads(_run(*ARGS, "--two-batch-overlap", "--json").output)
    base = json.loads(_run(*ARGS, "--json").output)
    tbo, sched = doc.pop("two_batch_overlap"), doc.pop("two_batch_schedule")
    assert doc == base
    want = evaluate_two_batch("DeepSeek-V3", "H100-SXM", 32, 128, "prefill", ep=32,
                              attention_dp=32, prompt=4096)
    assert sched["latency_s"] == pytest.approx(want.latency, rel=1e-12)
    assert tbo["serial_latency_s"] == pytest.approx(base["latency_s"], rel=1e-15)
    assert tbo["used"] and tbo["hidden_s"] == pytest.approx(
        base["latency_s"] - sched["latency_s"], rel=1e-12)
    assert sched["micro_batches"] == [64, 64]
    assert sched["fill_s"] == pytest.approx(
        sched["latency_s"] - max(sched["compute_stream_s"], sched["network_stream_s"]),
        abs=1e-15)


def test_infer_and_search_say_the_overlap_in_one_shape():
    # infer's entry was {latency_s, serial_latency_s, micro_batches, compute_stream_s,
    # network_stream_s, fill_s, tokens_per_s}, search's best's {used, serial_latency_s,
    # hidden_s}: now one shape (InferenceResult.two_batch_summary), equal at one configuration
    cfg = ("--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--tp", 32, "--ep", 32,
           "--attention-dp", 32, "--phase", "prefill", "--prompt", 4096, "--two-batch-overlap")
    best = json.loads(_run("search", *cfg, "--max-batch", 64, "--json").output)["best"]
    doc = json.loads(_run("infer", *cfg, "--batch", best["batch"], "--json").output)
    found, said = best["two_batch_overlap"], doc["two_batch_overlap"]
    assert list(said) == list(found) == ["used", "serial_latency_s", "hidden_s"]
    assert said["used"] is found["used"] is True
    for k in ("serial_latency_s", "hidden_s"):
        assert said[k] == pytest.approx(found[k], rel=1e-12)
    # the step the search took is the serial one less what the overlap hid, as infer says
    assert best["latency_s"] == pytest.approx(doc["two_batch_schedule"]["latency_s"],
                                              rel=1e-12)


def test_search_text_says_the_hidden_share_in_words():
    # its time split printed the raw key: '..., network 71.6%, two_batch_hidden -63.6%'
    r = _run("search", "--model", "DeepSeek-V3", "--scenario", "h100-dgx", "--phase",
             "prefill", "--ep", "all", "--attention-dp", "all", "--two-batch-overlap")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "time split: " in x)
    assert "two_batch_hidden" not in r.output
    assert ", hidden by two-batch overlap -" in line


@pytest.mark.parametrize("extra,says", [
    (("--batch", 1), "needs a batch of at least 2"),
    (("--pp", 2), "models one pipeline stage"),
    (("--csv",), "--csv prints the serial step's stages only"),
])
def test_refused_in_one_line(extra, says):
    batch = () if "--batch" in extra else ("--batch", 4)   # an option is given once
    args = ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", 8, *batch,
            "--two-batch-overlap", *extra]
    r = _run(*args)
    assert r.exit_code == 2, r.output
    assert says in r.output and len(r.output.strip().splitlines()) == 1
