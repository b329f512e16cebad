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
    tbo = doc.pop("two_batch_overlap")
    assert doc == base
    want = evaluate_two_batch("DeepSeek-V3", "H100-SXM", 32, 128, "prefill", ep=32,
                              attention_dp=32, prompt=4096)
    assert tbo["latency_s"] == pytest.approx(want.latency, rel=1e-12)
    assert tbo["serial_latency_s"] == base["latency_s"]
    assert tbo["micro_batches"] == [64, 64]
    assert tbo["fill_s"] == pytest.approx(
        tbo["latency_s"] - max(tbo["compute_stream_s"], tbo["network_stream_s"]), abs=1e-15)


@pytest.mark.parametrize("extra,says", [
    (("--batch", 1), "needs a batch of at least 2"),
    (("--pp", 2), "models one pipeline stage"),
    (("--csv",), "--csv prints the serial step's stages only"),
])
def test_refused_in_one_line(extra, says):
    args = ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", 8, "--batch", 4,
            "--two-batch-overlap", *extra]
    r = _run(*args)
    assert r.exit_code == 2, r.output
    assert says in r.output and len(r.output.strip().splitlines()) == 1
