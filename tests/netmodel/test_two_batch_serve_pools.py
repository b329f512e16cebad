"""``serve --two-batch-overlap`` says, per pool, whether the overlapped step was taken. Its
pools were the searches' answers (the lesser of the serial and the overlapped step), but
neither the text nor --json said which, nor the serial step's time, so docs/study.md's
'the decode step stays serial' could not be read from the tool. The old code's pools had
no ``two_batch_overlap``."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import netmodel
from netmodel.cli.main import cli

ARGS = ["serve", "--scenario", "h100-dgx", "--model", "DeepSeek-V3", "--max-batch", "64"]


@pytest.fixture(scope="module")
def served():
    r = CliRunner().invoke(cli, ARGS + ["--two-batch-overlap", "--json"], prog_name="netmodel")
    assert r.exit_code == 0, r.output
    text = CliRunner().invoke(cli, ARGS + ["--two-batch-overlap"], prog_name="netmodel")
    assert text.exit_code == 0, text.output
    return json.loads(r.output), text.output


def test_prefill_pool_says_overlap_taken_with_the_serial_step(served):
    doc, text = served
    pre = doc["prefill"]
    tbo = pre["two_batch_overlap"]
    assert tbo["used"] is True and tbo["hidden_s"] > 0
    # the serial step is the roofline of the same configuration without the option
    serial = netmodel.evaluate("DeepSeek-V3", phase="prefill", scenario="h100-dgx",
                               prompt=doc["workload"]["prompt_tokens"], tp=pre["tp"],
                               ep=pre["ep"], attention_dp=pre["attention_dp"],
                               batch=pre["batch"]).latency
    assert tbo["serial_latency_s"] == pytest.approx(serial, rel=1e-12)
    assert tbo["serial_latency_s"] - tbo["hidden_s"] == pytest.approx(pre["latency_s"],
                                                                       rel=1e-12)
    assert (f"TTFT {pre['latency_s'] * 1e3:.2f} ms (two-batch overlap taken: serial step "
            f"{serial * 1e3:.2f} ms)") in text


def test_decode_pool_says_serial(served):
    doc, text = served
    dec = doc["decode"]["two_batch_overlap"]
    assert dec == {"used": False, "serial_latency_s": doc["decode"]["latency_s"],
                   "hidden_s": 0.0}
    assert "(two-batch overlap not taken: serial step" in text


def test_without_the_option_pools_unchanged():
    r = CliRunner().invoke(cli, ARGS + ["--json"], prog_name="netmodel")
    doc = json.loads(r.output)
    assert "two_batch_overlap" not in doc["prefill"] and "two_batch_overlap" not in doc["decode"]
