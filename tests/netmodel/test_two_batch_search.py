"""Two-batch overlap in the search and on the command line (``search`` and ``serve``
``--two-batch-overlap``; RooflineOptions.two_batch_overlap): each (configuration, batch) takes
the lesser of the serial and the overlapped step, so the search finds an answer at least as
fast, and on an expert-parallel case (DeepSeek-V3 on 4 H100 servers, the configurations of
tests/netmodel/data/published_serving_multinode.csv's SGLang prefill rows) a faster one. The old
code had neither the option nor the flags (search/serve: 'No such option')."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from compute.evaluate_one import evaluate
from compute.phases import Slo
from compute.roofline import make_workload
from compute.roofline_options import RooflineOptions, option_help
from compute.search import search
from compute.two_batch import evaluate_two_batch
from netmodel.cli.main import cli
from tests.netmodel.test_published_multinode import USED, comm_of

TBO = RooflineOptions(two_batch_overlap=True)
ROW = next(r for r in USED if r["id"] == "sglang-h100-prefill-4k")


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="netmodel")


def test_search_with_overlap_is_at_least_as_fast_and_here_faster():
    comm = comm_of(ROW["fabric"])              # rail-optimized:domains=4, 32 H100
    n = int(ROW["gpus"])
    wl = make_workload("prefill", int(ROW["prompt"]))
    space = dict(tp=[n // 2, n], ep=[8, 16, n], attention_dp=[8, 16, n], comm=comm,
                 max_batch=int(ROW["batch"]), slo=Slo(ttft=2.0))
    serial = search("DeepSeek-V3", "H100-SXM", wl, **space)
    tbo = search("DeepSeek-V3", "H100-SXM", wl, options=TBO, **space)
    # every cell is the lesser of its serial and overlapped step: nothing feasible is lost
    assert np.all(tbo.grid.latency[serial.grid.fits] <= serial.grid.latency[serial.grid.fits])
    assert tbo.feasible >= serial.feasible
    assert tbo.best.tokens_per_s_per_sm >= serial.best.tokens_per_s_per_sm
    # the all-to-alls (61% of the SGLang 4K row's serial step) hide: much faster here
    assert tbo.best.tokens_per_s_per_sm > 1.4 * serial.best.tokens_per_s_per_sm
    b = tbo.best
    want = evaluate_two_batch("DeepSeek-V3", "H100-SXM", b.tp, b.batch, wl, ep=b.ep,
                              attention_dp=b.attention_dp, comm=comm)
    assert b.two_batch_hidden > 0
    assert b.latency == pytest.approx(min(want.latency, want.serial.latency), rel=1e-12)
    again = evaluate("DeepSeek-V3", "H100-SXM", b.tp, b.batch, wl, ep=b.ep,
                     attention_dp=b.attention_dp, comm=comm, options=TBO)
    assert again.latency == pytest.approx(b.latency, rel=1e-12)


SEARCH = ("search", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--phase", "prefill",
          "--prompt", 4096, "--fabric", "rail-optimized:domains=4", "--tp", 32, "--ep", 32,
          "--attention-dp", 32, "--max-batch", 32)


def test_search_flag():
    plain = json.loads(_run(*SEARCH, "--json").output)
    r = _run(*SEARCH, "--json", "--two-batch-overlap")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    best = doc["best"]
    assert "two_batch_overlap" not in plain["best"]
    assert best["two_batch_overlap"]["used"]
    assert best["latency_s"] < plain["best"]["latency_s"]
    split = best["time_split_s"]
    assert split["two_batch_hidden"] == -best["two_batch_overlap"]["hidden_s"]
    assert sum(split.values()) == pytest.approx(best["latency_s"], rel=1e-12)
    # the help is the option's own (declared once on RooflineOptions); whitespace dropped,
    # as click may wrap it at a hyphen (micro-|batches) where its column is narrow
    text = "".join(_run("search", "--help").output.split())
    assert "".join(option_help("two_batch_overlap").split()) in text


@pytest.mark.parametrize("extra,says", [
    (("--pp", "1,2"), "two-batch overlap models one pipeline stage; got PP 2"),
    (("--profile", "vllm-dgx-h100"), "two-batch overlap is modelled on the roofline"),
])
def test_search_refusals_in_one_line(extra, says):
    r = _run("search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--max-batch", 8,
             "--two-batch-overlap", *extra)
    assert r.exit_code == 2, r.output
    assert says in r.output and len(r.output.strip().splitlines()) == 1


def test_serve_flag():
    args = ("serve", "--scenario", "h100-dgx", "--model", "DeepSeek-V3", "--max-batch", 64,
            "--json")
    plain = json.loads(_run(*args).output)
    r = _run(*args, "--two-batch-overlap")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert "two_batch_overlap" not in plain["settings"]["options"]
    assert doc["settings"]["options"]["two_batch_overlap"] is True
    assert doc["prefill"]["pp"] == 1 and doc["decode"]["pp"] == 1   # PP 1 searched
    # the plain search pipelines the prefill pool (TP 8 x PP 2 x EP 8 x DP-attention 8, each
    # stage's all-to-alls inside one server, a prompt an attention group a micro-batch),
    # which the overlap's one-stage search cannot; against the plain one-stage pool the
    # overlap shortens the TTFT
    assert plain["prefill"]["pp"] == 2 and doc["ttft_s"] > plain["ttft_s"]
    from netmodel.study.serving import serve
    assert doc["ttft_s"] < serve("DeepSeek-V3", "h100-dgx", max_batch=64, pp=1).ttft_s
