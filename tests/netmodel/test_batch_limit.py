"""A best configuration found at the largest batch searched is said to be at the limit
(compare's table, search's summary), the limit is an option of compare and sweep as of
search and serve, and `search --scenario` with expert parallelism tries stages wider than
one server as compare does (found by the wide-EP audit: DeepSeek-V3 on h100-dgx searched
with --ep all --max-gpus 32 said nothing fits "up to 8 GPUs", while compare found TP 16 x
EP 16 x DP-attention 16)."""

import json

from click.testing import CliRunner

from compute.search import DEFAULT_MAX_BATCH
from netmodel.cli import options as cli_options
from netmodel.cli.main import cli


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_cli_default_is_the_searches_default():
    assert cli_options.DEFAULT_MAX_BATCH == DEFAULT_MAX_BATCH == 1024


def test_search_on_a_scenario_tries_wide_expert_parallel_stages():
    r = run("search", "--model", "DeepSeek-V3", "--scenario", "h100-dgx", "--phase", "decode",
            "--ep", "all", "--attention-dp", "all", "--max-gpus", "32", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    # DeepSeek-V3's fp8 weights (~673 GB) need more than one 8-GPU server: 16 GPUs at the
    # least power of two of whole servers; 32 is the largest the fabric cap allows
    assert max(c["tp"] for c in d["configurations"]) == 32
    assert d["best"]["tp"] == 16 and d["best"]["ep"] == 16
    # the best sits at the largest batch searched: said under it
    text = run("search", "--model", "DeepSeek-V3", "--scenario", "h100-dgx", "--phase",
               "decode", "--ep", "all", "--attention-dp", "all", "--max-gpus", "32").output
    assert "batch at the search's limit (1024)" in text


def test_compare_says_a_batch_at_the_limit_and_takes_a_larger_one(tmp_path):
    args = ("compare", "--models", "DeepSeek-V3", "--scenarios", "h100-dgx", "--phase",
            "decode", "--parallelism", "all", "--no-plot", "-q")
    capped = run(*args)
    assert capped.exit_code == 0, capped.output
    assert ("batch at the search's limit (1024; a larger max batch may do better): "
            "h100-dgx@H100-SXM DeepSeek-V3 decode") in capped.output
    # one run for the table and the JSON: --out's compare.json is what --json prints
    # (both CompareResult.to_json())
    wider = run(*args, "--max-batch", "4096", "--out", str(tmp_path / "wider"))
    assert wider.exit_code == 0, wider.output
    d = json.loads((tmp_path / "wider" / "compare.json").read_text())
    assert d["settings"]["max_batch"] == 4096
    (row,) = d["rows"]
    # the 1024 cap held the batch down: with room, the best batch is past it, under 4096
    assert 1024 < row["batch"] < 4096 and "batch at the search's limit" not in wider.output


def test_max_batch_is_checked_on_compare_and_sweep():
    for cmd in (("compare", "--models", "Llama-3-8B"),
                ("sweep", "--scenario", "lite-flat", "--param", "adjust.hop_latency=1us")):
        r = run(*cmd, "--max-batch", "0")
        assert r.exit_code == 2 and r.output.strip().splitlines() == [
            "error: --max-batch must be a whole number from 1 to 1,000,000,000, got '0'"], r.output


def test_serve_says_a_pool_at_the_limit():
    capped = run("serve", "--scenario", "lite-flat", "--model", "Llama-3-70B",
                 "--max-batch", "64")
    assert capped.exit_code == 0, capped.output
    decode = [ln for ln in capped.output.splitlines() if ln.strip().startswith("decode")]
    assert "batch 64 (the search's largest batch" in decode[0]
    free = run("serve", "--scenario", "lite-flat", "--model", "Llama-3-70B")
    assert "the search's largest batch" not in free.output


def test_sweep_says_points_at_the_limit():
    args = ("sweep", "--scenario", "h100-dgx", "--param", "adjust.hop_latency=1us,2us",
            "--models", "Llama-3-8B", "--no-plot", "-q")
    capped = run(*args, "--max-batch", "64")
    assert capped.exit_code == 0, capped.output
    assert ("batch at the search's limit (64; a larger max batch may do better) at some "
            "points: h100-dgx@H100-SXM Llama-3-8B decode") in capped.output
    assert "search's limit" not in run(*args).output
