"""`netmodel hardware | models | infer | search`: output shapes and one-line errors."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from tests.netmodel.cli_helpers import one_line_error


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_hardware_lists_and_shows():
    r = run("hardware")
    assert r.exit_code == 0
    for name in ("H100-SXM", "Lite", "Lite+BW+FLOPS", "B200-HGX"):
        assert name in r.output
    d = json.loads(run("hardware", "H100-SXM", "--json").output)
    assert (d["sms"], d["hbm_bandwidth"], d["scaleup_bandwidth"]) == (132, 3.35e12, 450e9)
    listing = json.loads(run("hardware", "--json").output)
    assert [g["name"] for g in listing["gpus"]][:2] == ["A100-SXM-80GB", "H100-SXM"]
    assert "largest instance  32 GPUs" in run("hardware", "Lite").output
    # 81559 MiB (what CUDA reports) in GB and GiB
    assert "85.52 GB (79.6 GiB)" in run("hardware", "H100-SXM").output
    # the GPU's scale-up link count (gpus.toml: A100 12 of 25 GB/s, Hopper 18 of 25; the
    # Lite keeps the H100's 18 at a quarter of its bandwidth)
    assert "300 GB/s per direction over 12 links" in run("hardware", "A100-SXM-80GB").output
    assert "112.5 GB/s per direction over 18 links" in run("hardware", "Lite").output


def test_models_lists_and_shows():
    r = run("models")
    assert r.exit_code == 0 and "Llama-3.1-405B" in r.output and "70.55B" in r.output
    d = json.loads(run("models", "Llama-3-70B", "--json").output)
    assert d["kv_heads"] == 8 and d["parameters"] == 70_553_706_496
    # weights in their storage dtypes: 70.55B x 2 B; 405B with 124 layers' MLPs in fp8
    assert "141 GB bf16" in r.output
    assert "487 GB bf16, MLP fp8 (124 layers)" in r.output
    assert run("models", "Llama-3.1-405B").output.splitlines()[0].endswith(
        "weights 487 GB bf16, MLP fp8 (124 layers)")


def test_infer_json_shape_and_consistency():
    r = run("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch",
            "1", "--phase", "decode", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert {"model", "gpu", "phase", "tp", "batch", "latency_s", "tokens_per_s",
            "tokens_per_s_per_sm", "time_split_s", "memory", "stages", "feasible"} <= set(d)
    assert d["tokens_per_s_per_sm"] == pytest.approx(1 / d["latency_s"] / (8 * 132))
    assert sum(s["total_time_s"] for s in d["stages"]) == pytest.approx(d["latency_s"])
    assert [s["stage"] for s in d["stages"]][0] == "embedding"


def test_infer_text_and_csv():
    r = run("infer", "--model", "Llama-3-8B", "--gpu", "Lite", "--tp", "4", "--batch", "8",
            "--phase", "prefill")
    assert r.exit_code == 0 and "TTFT" in r.output and "mlp_up" in r.output
    c = run("infer", "--model", "Llama-3-8B", "--gpu", "Lite", "--tp", "4", "--batch", "8",
            "--csv")
    assert c.output.splitlines()[0].startswith("stage,count,flops")
    assert len(c.output.splitlines()) == 1 + 9


def test_search_json_best_meets_slo():
    r = run("search", "--model", "Llama-3-70B", "--gpu", "Lite", "--phase", "decode",
            "--tbt", "40ms", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["latency_limit_s"] == pytest.approx(0.040)
    assert d["best"]["latency_s"] <= 0.040 and d["best"]["tp"] in d["tp_degrees"]
    assert d["feasible"] <= d["fitting"] <= d["evaluated"]


def test_search_text_with_front():
    r = run("search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--phase", "prefill",
            "--front", "--max-batch", "64")
    assert r.exit_code == 0 and "best per TP degree" in r.output and "Pareto front" in r.output


def test_search_infeasible_reports_reason(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('[gpu.Tiny]\nderive_from = "H100-SXM"\nfraction = 0.125\nsource = "test"\n')
    r = run("search", "--model", "GPT-3-175B", "--gpu-file", str(f), "--json")
    d = json.loads(r.stdout)    # nothing feasible: the JSON, then exit status 3
    assert r.exit_code == 3 and d["best"] is None and "nothing fits" in d["reason"]
    assert "nothing feasible" in r.stderr
    t = run("search", "--model", "GPT-3-175B", "--gpu-file", str(f))
    assert t.exit_code == 3 and "no feasible configuration" in t.stdout


def test_gpu_and_model_from_files(tmp_path):
    g = tmp_path / "gpus.json"
    g.write_text(json.dumps({"gpu": {"Fat": {"derive_from": "H100-SXM",
                                             "hbm_bandwidth_multiplier": 2.0,
                                             "source": "test"}}}))
    slow = json.loads(run("infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1",
                          "--batch", "1", "--json").output)
    fast = json.loads(run("infer", "--model", "Llama-3-8B", "--gpu-file", str(g), "--tp", "1",
                          "--batch", "1", "--json").output)
    assert fast["gpu"] == "Fat"
    assert fast["latency_s"] == pytest.approx(slow["latency_s"] / 2, rel=0.01)
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 4,
                               "num_attention_heads": 16, "num_key_value_heads": 4,
                               "intermediate_size": 8192, "vocab_size": 32000}))
    r = run("infer", "--hf-config", str(cfg), "--gpu", "H100-SXM", "--tp", "4", "--batch",
            "2", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["tp"] == 4
    shown = run("models", "--hf-config", str(cfg))
    assert shown.exit_code == 0 and "kv_heads           4" in shown.output


@pytest.mark.parametrize("args, needles", [
    (("hardware", "H900"), ("unknown GPU 'H900'", "'H100-SXM'", "'Lite'")),
    (("models", "GPT-5"), ("unknown model 'GPT-5'", "'Llama-3-70B'")),
    (("infer", "--model", "GPT-5", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"),
     ("unknown model 'GPT-5'", "'GPT-3-175B'")),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H900", "--tp", "1", "--batch", "1"),
     ("unknown GPU 'H900'",)),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "3", "--batch", "1"),
     ("TP degree 3 does not divide the 64 attention heads", "allowed: 1, 2, 4, 8")),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "0"),
     ("--batch must be a whole number from 1 to 1,000,000,000, got '0'",)),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "-3"),
     ("--batch",)),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "nan"),
     ("--batch must be a whole number from 1 to 1,000,000,000, got 'nan'",)),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "2.5"),
     ("--batch",)),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1",
      "--phase", "train"), ("unknown phase 'train'",)),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1",
      "--context", "-1"), ("--context",)),
    (("infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1",
      "--flops-efficiency", "nan"), ("--flops-efficiency",)),
    (("search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tbt", "-5ms"), ("--tbt",)),
    (("search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--max-batch", "0"),
     ("--max-batch",)),
    (("search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--mode", "fast"),
     ("unknown mode 'fast'",)),
    (("search", "--gpu", "H100-SXM"), ("give --model NAME",)),
])
def test_bad_input_is_one_line_exit_2(args, needles):
    one_line_error(run(*args), *needles)


@pytest.mark.parametrize("name, body, needle", [
    ("g.toml", "[gpu.X\nsms = 1\n", "malformed"),
    ("g.json", '{"gpu": {', "malformed"),
    ("g.toml", '[gpu.X]\nderive_from = "H100-SXM"\ncolour = 2\n', "unknown key(s) colour"),
    ("g.yaml", "gpu: {}", "unknown file type"),
])
def test_malformed_gpu_file_is_one_line(tmp_path, name, body, needle):
    f = tmp_path / name
    f.write_text(body)
    one_line_error(run("infer", "--model", "Llama-3-8B", "--gpu-file", str(f), "--tp",
                       "1", "--batch", "1"), needle)


@pytest.mark.parametrize("name, body, needle", [
    ("m.toml", "[model.X\n", "malformed"),
    ("m.json", '{"model": {"X": {"layers": 1}}}', "missing key(s) hidden, heads, ffn, vocab"),
    ("config.json", "{oops", "malformed JSON"),
    ("config.json", '{"hidden_size": 64}', "lacks"),
])
def test_malformed_model_file_is_one_line(tmp_path, name, body, needle):
    f = tmp_path / name
    f.write_text(body)
    opt = "--hf-config" if name == "config.json" else "--model-file"
    one_line_error(run("infer", opt, str(f), "--gpu", "H100-SXM", "--tp", "1",
                       "--batch", "1"), needle)


@pytest.mark.parametrize("name, body, needle", [
    ("g.json", '{"gpu": ' + "[" * 20_000 + "]" * 20_000 + "}", "nests deeper than 32 levels"),
    ("g.toml", '[gpu.X]\nderive_from = "H100-SXM"\nmax_instance = 1e30\n',
     "max_instance must be a whole number from 1 to 100,000, got 1e+30"),
    ("g.toml", "[gpu.X]\nsms = " + "9" * 6000 + "\n", "more than 4300 digits"),
    ("g.json", '{"gpu": {"X": [1, 2]}}', "GPU 'X' must be a table of keys, got [1, 2]"),
])
def test_hostile_gpu_file_is_one_line(tmp_path, name, body, needle):
    f = tmp_path / name
    f.write_text(body)
    one_line_error(run("infer", "--model", "Llama-3-8B", "--gpu-file", str(f), "--tp",
                       "1", "--batch", "1"), needle)


@pytest.mark.parametrize("name, body, needle", [
    ("m.toml", "[model.X]\nlayers = 1e30\nhidden = 64\nheads = 4\nffn = 128\nvocab = 10\n",
     "layers must be a whole number from 1 to 10,000"),
    ("m.json", '{"model": {"X": "big"}}', "model 'X' must be a table of keys, got 'big'"),
    ("config.json", '{"hidden_size": "4096", "num_hidden_layers": 2}',
     "hidden_size must be a whole number"),
    ("config.json", '{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, '
     '"vocab_size": 1e30, "intermediate_size": 128}', "vocab_size must be a whole number"),
])
def test_hostile_model_file_is_one_line(tmp_path, name, body, needle):
    f = tmp_path / name
    f.write_text(body)
    opt = "--hf-config" if name == "config.json" else "--model-file"
    one_line_error(run("infer", opt, str(f), "--gpu", "H100-SXM", "--tp", "1",
                       "--batch", "1"), needle)


def test_moe_and_mla_models_list_show_and_search():
    listing = run("models")
    assert listing.exit_code == 0
    row = next(line for line in listing.output.splitlines() if line.startswith("DeepSeek-V3"))
    assert "671.03B" in row and "37.55B" in row and "MLA" in row and "8/256" in row
    shown = run("models", "Mixtral-8x7B")
    assert "mixture of 8 experts, 2 per token" in shown.output
    assert "KV cache 131.1 kB per token" in shown.output     # 32 x 2 x 8 x 128 x 2 B
    r = run("search", "--model", "Qwen1.5-MoE-A2.7B", "--gpu", "H100-SXM", "--max-batch",
            "64", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["best"]["tp"] in (1, 2, 4, 8)
    r = run("infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--batch",
            "4", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["memory"]["fits"]


def test_qwen_moe_hf_config_runs_through_infer(tmp_path):
    # Qwen/Qwen1.5-MoE-A2.7B config.json's shape keys (num_experts used to be refused)
    cfg = {"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
           "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
           "num_experts": 60, "num_experts_per_tok": 4, "num_hidden_layers": 24,
           "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936,
           "tie_word_embeddings": False}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    r = run("infer", "--hf-config", str(tmp_path), "--gpu", "H100-SXM", "--tp", "2",
            "--batch", "8", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["memory"]["weights_bytes"] == pytest.approx(14.3e9, rel=0.02)


def test_infer_and_search_with_pipeline_expert_and_attention_parallelism():
    r = run("infer", "--model", "Llama-3-70B", "--gpu", "Lite", "--tp", "8", "--pp", "2",
            "--batch", "64", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert (d["tp"], d["pp"], d["ep"], d["attention_dp"], d["gpus"], d["micro_batch"]) == \
        (8, 2, 1, 1, 16, 32)
    assert d["sms"] == 16 * 33
    assert d["tokens_per_s_per_sm"] == pytest.approx(64 / d["latency_s"] / (16 * 33))
    assert sum(s["total_time_s"] for s in d["stages"]) == pytest.approx(d["latency_s"])
    send = next(s for s in d["stages"] if s["stage"] == "pp_send")
    assert (send["collective"], send["count"], send["collective_bytes"]) == \
        ("send-recv", 1, 32 * 8192 * 2)
    text = run("infer", "--model", "Mixtral-8x7B", "--gpu", "Lite", "--tp", "8", "--ep", "8",
               "--batch", "64")
    # the default collectives (the scale-up bound: 0.6 us and 512 KiB at 112.5 GB/s an
    # all-reduce, in the switch) make the all-reduce exchange the cheaper; the ring keeps
    # the all-to-alls
    assert "on 8 x Lite (TP 8 x EP 8)" in text.output and "allreduce_mlp_ep" in text.output
    ring = run("infer", "--model", "Mixtral-8x7B", "--gpu", "Lite", "--tp", "8", "--ep", "8",
               "--batch", "64", "--profile", "vllm-dgx-h100")
    assert "moe_dispatch" in ring.output
    s = run("search", "--model", "Mixtral-8x7B", "--gpu", "Lite", "--ep", "all",
            "--attention-dp", "1,2", "--max-batch", "64", "--json")
    assert s.exit_code == 0, s.output
    d = json.loads(s.output)
    assert {(c["ep"], c["attention_dp"]) for c in d["configurations"]} >= {(8, 2), (1, 1)}
    assert d["best"]["ep"] in (1, 2, 4, 8) and d["by_config"]
    t = run("search", "--model", "Mixtral-8x7B", "--gpu", "Lite", "--ep", "1,8",
            "--max-batch", "16")
    assert "best per configuration:" in t.output and "configurations of TP" in t.output
    # the plain search prints as before
    assert "best per TP degree:" in run("search", "--model", "Llama-3-8B", "--gpu", "Lite",
                                        "--max-batch", "8").output


@pytest.mark.parametrize("args, needle", [
    (("infer", "--model", "Llama-3-70B", "--tp", "8", "--pp", "81", "--batch", "1"),
     "PP degree 81 exceeds the 80 layers of Llama-3-70B; allowed: 1 to 80"),
    # EP 3 holds redundant experts now (test_redundant_experts_cli), but divides no TP here
    (("search", "--model", "Mixtral-8x7B", "--ep", "3"), "no configuration to search: TP 1, 2, "
     "4, 8, 16, 32, PP 1, EP 3 (EP and attention DP must divide TP)"),
    (("search", "--model", "Llama-3-70B", "--ep", "2"), "needs a mixture-of-experts model"),
    (("infer", "--model", "Mixtral-8x7B", "--tp", "8", "--ep", "8", "--batch", "1",
      "--expert-skew", "nan"), "--expert-skew must be a number from 1"),
    (("infer", "--model", "Mixtral-8x7B", "--tp", "8", "--ep", "8", "--batch", "1",
      "--expert-skew", "-2"), "--expert-skew must be a number from 1"),
    (("search", "--model", "Llama-3-70B", "--pp", "two"), "--pp must be a whole number"),
    (("search", "--model", "Llama-3-70B", "--attention-dp", "3", "--tp", "8"),
     "no configuration to search"),
])
def test_impossible_parallelism_is_one_line(args, needle):
    one_line_error(run(*args, "--gpu", "Lite"), needle)


# ---- one source of truth for collective costs (issue 11 item 2) ---------------------------

def _network(d) -> dict:
    """Per-stage collective seconds of an infer/search JSON result."""
    return {s["stage"]: s["network_time_s"] for s in d["stages"] if s["network_time_s"]}


@pytest.mark.parametrize("model,phase", [("Llama-3-70B", "decode"), ("Llama-3-70B", "prefill")])
def test_infer_search_and_compare_cost_collectives_alike(model, phase):
    """The same configuration (model, GPU, TP, batch, phase) gets the same collective times
    from compare, search --scenario (its best) and infer --scenario."""
    from netmodel import api
    from netmodel.study.scenario_collectives import ScenarioCollectives

    cmp = api.compare([model], ["h100-dgx"], [phase])
    row, best_cmp = cmp.rows[0], cmp.searches[0].best
    s = run("search", "--model", model, "--scenario", "h100-dgx", "--phase", phase, "--json")
    assert s.exit_code == 0, s.output
    best = json.loads(s.stdout)["best"]
    assert (best["tp"], best["batch"], best["gpu"]) == (row.tp, row.batch, row.gpu)
    assert best["latency_s"] == row.latency_s
    i = run("infer", "--model", model, "--scenario", "h100-dgx", "--phase", phase, "--tp",
            str(row.tp), "--batch", str(row.batch), "--json")
    assert i.exit_code == 0, i.output
    d = json.loads(i.stdout)
    want = {st.name: st.network_time for st in best_cmp.stages if st.network_time}
    assert _network(d) == _network(best) == want and want
    assert d["latency_s"] == pytest.approx(row.latency_s, rel=1e-14)
    assert d["collectives"]["model"] == "scenario" and d["collectives"]["scenario"] == \
        "h100-dgx@H100-SXM"
    # and the library's evaluate on the scenario, and the scenario's model itself
    e = api.evaluate(model, None, phase, tp=row.tp, batch=row.batch, scenario="h100-dgx")
    assert {st.name: st.network_time for st in e.stages if st.network_time} == want
    coll = ScenarioCollectives("h100-dgx")
    by = {st["stage"]: st for st in d["stages"]}
    t = coll.collective_time("all-reduce", by["allreduce_mlp"]["collective_bytes"], row.tp)
    assert float(t) == want["allreduce_mlp"]


def test_the_gpu_only_ring_is_named_and_differs_from_the_scenario():
    """Without --scenario or --fabric the collectives are the scale-up lower bound, named,
    below the scenario's; with --profile (the calibrated mode) NCCL's ring, named, above."""
    args = ("infer", "--model", "Llama-3-70B", "--tp", "8", "--batch", "1", "--json")
    low = json.loads(run(*args, "--gpu", "H100-SXM").stdout)
    ring = json.loads(run(*args, "--gpu", "H100-SXM", "--profile", "vllm-dgx-h100").stdout)
    scen = json.loads(run(*args, "--scenario", "h100-dgx").stdout)
    assert low["collectives"] == {"model": "lower bound over scale-up switch algorithms",
                                  "bandwidth_Bps": 450e9, "step_latency_s": 0.6e-6,
                                  "efficiency": 1.0, "in_switch": True}
    # one step of 0.6 us and 16 KiB over 450 GB/s: H100's switch reduces (NVLS)
    bound = _network(low)["allreduce_mlp"]
    assert bound == pytest.approx(0.6e-6 + 8192 * 2 / 450e9, rel=1e-12)
    assert ring["collectives"]["model"] == "ring alpha-beta over scale-up bandwidth"
    assert ring["collectives"]["bandwidth_Bps"] == 450e9
    # 2 x 7 steps of 1.9 us plus 2 x 7/8 x 16 KiB at 0.92 x 450 GB/s: the ring's 26.6 us
    ar = _network(ring)["allreduce_mlp"]
    assert ar == pytest.approx(14 * 1.9e-6 + 2 * 7 / 8 * 8192 * 2 / (0.92 * 450e9), rel=1e-12)
    assert bound < _network(scen)["allreduce_mlp"] < ar
    text = run(*args[:-1], "--gpu", "H100-SXM").output
    assert "collectives: lower bound over scale-up switch algorithms" in text
    assert "roofline (a lower bound)" in text
    text = run(*args[:-1], "--gpu", "H100-SXM", "--profile", "vllm-dgx-h100").output
    assert "collectives: ring alpha-beta over scale-up bandwidth" in text
    assert "collectives: scenario h100-dgx@H100-SXM" in run(*args[:-1], "--scenario",
                                                           "h100-dgx").output


def test_scenario_gpu_swap_and_fabric():
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    d = json.loads(run("infer", "--model", "Llama-3-8B", "--scenario", "lite-flat@Lite+BW",
                       "--tp", "4", "--batch", "2", "--json").stdout)
    assert d["gpu"] == "Lite+BW" and d["collectives"]["scenario"] == "lite-flat@Lite+BW"
    d2 = json.loads(run("infer", "--model", "Llama-3-8B", "--scenario", "lite-flat",
                        "--gpu", "Lite+BW", "--tp", "4", "--batch", "2", "--json").stdout)
    assert d2["latency_s"] == d["latency_s"]
    f = json.loads(run("infer", "--model", "Llama-3-70B", "--fabric", "single-switch:n=8",
                       "--tp", "8", "--batch", "3", "--json").stdout)
    assert f["gpu"] == "H100-SXM" and f["collectives"]["placement"] == "contiguous"
    model = FabricCostModel(build("single-switch:n=8"))
    by = {s["stage"]: s for s in f["stages"]}
    assert by["allreduce_attn"]["network_time_s"] == float(
        model.collective_time("all-reduce", 3 * 8192 * 2, 8))
    s = json.loads(run("search", "--model", "Llama-3-70B", "--fabric", "single-switch:n=4",
                       "--phase", "decode", "--json").stdout)
    assert s["tp_degrees"] == [1, 2, 4] and s["collectives"]["fabric_gpus"] == 4


@pytest.mark.parametrize("args,needles", [
    (("--scenario", "h100-dgx", "--fabric", "single-switch:n=8"), ("--scenario or --fabric",)),
    (("--fabric", "single-switch:n=8", "--gpu", "Lite"), ("built for GPU 'H100-SXM'",
                                                           "gpu=Lite")),
    (("--fabric", "single-switch:n=4", "--tp", "8"), ("8 GPUs does not fit", "(4 GPUs)")),
    (("--scenario", "no-such-scenario",), ("no-such-scenario",)),
    (("--fabric", "moon:n=3",), ("moon",)),
    (("--scenario", "h100-dgx", "--profile", "nope"), ("unknown profile 'nope'",)),
])
def test_collective_options_refuse_in_one_line(args, needles):
    base = ["infer", "--model", "Llama-3-70B", "--batch", "1"]
    if "--tp" not in args:
        base += ["--tp", "8"]
    one_line_error(run(*base, *args), *needles)


def test_search_exits_3_when_nothing_is_feasible_on_a_scenario():
    r = run("search", "--model", "Llama-3-70B", "--scenario", "h100-dgx", "--tbt", "1ms")
    assert r.exit_code == 3 and "no feasible configuration" in r.stdout
    assert "nothing feasible" in r.stderr
    j = run("search", "--model", "Llama-3-70B", "--scenario", "h100-dgx", "--tbt", "1ms",
            "--json")
    assert j.exit_code == 3 and json.loads(j.stdout)["best"] is None


def test_profile_on_infer_and_search():
    from compute.evaluate_one import evaluate
    from compute.profiles import get_profile
    from compute.roofline_options import RooflineOptions

    args = ("--model", "Llama-2-70B", "--gpu", "H100-SXM", "--phase", "decode")
    d = json.loads(run("infer", *args, "--tp", "8", "--batch", "32", "--profile",
                       "vllm-dgx-h100", "--json").stdout)
    want = evaluate("Llama-2-70B", "H100-SXM", 8, 32, "decode",
                    options=RooflineOptions(profile=get_profile("vllm-dgx-h100")))
    assert d["latency_s"] == want.latency and d["profile"] == "vllm-dgx-h100"
    assert d["overhead_s"] == want.overhead > 0
    roof = json.loads(run("infer", *args, "--tp", "8", "--batch", "32", "--json").stdout)
    assert roof["latency_s"] < d["latency_s"] and "profile" not in roof
    text = run("infer", *args, "--tp", "8", "--batch", "32", "--profile", "vllm-dgx-h100")
    assert "engine profile vllm-dgx-h100" in text.output and "overhead" in text.output
    s = json.loads(run("search", *args, "--profile", "vllm-dgx-h100", "--json").stdout)
    assert s["best"]["profile"] == "vllm-dgx-h100"
    one_line_error(run("infer", *args, "--tp", "8", "--batch", "1", "--profile",
                       "vllm-dgx-h100", "--flops-efficiency", "0.5"),
                   "profile 'vllm-dgx-h100' or efficiency factors (--flops-efficiency 0.5)")


def test_models_names_a_sliding_window(tmp_path):
    # Gemma-2-9B's config (tests/compute/test_sliding_window.py): every other layer of 42
    # attends to the last 4,096 tokens; the per-token KV figure is a full layer stack's
    from tests.compute.test_sliding_window import GEMMA2_9B

    path = tmp_path / "config.json"
    path.write_text(json.dumps(GEMMA2_9B))
    r = run("models", "--hf-config", str(path))
    assert r.exit_code == 0, r.output
    head = r.output.splitlines()[0]
    assert "KV cache 344.1 kB per token (sliding window of 4,096 tokens on 21 of 42 layers)" \
        in head, head   # 42 layers x 2 x 8 heads x 256 x 2 bytes = 344,064 B
    assert "sliding window" not in run("models", "Llama-3-70B").output.splitlines()[0]


def test_models_names_chunked_attention():
    # Llama-4 Scout's published config (tests/compute/data/hf_families): 36 of 48 layers
    # attend within chunks of 8,192 tokens, every 4th is global; 48 x 2 x 8 x 128 x 2 bytes
    # = 196,608 B per token of a full layer stack
    path = Path(__file__).parents[1] / "compute" / "data" / "hf_families" / \
        "llama-4-scout-17b-16e-instruct.json"
    r = run("models", "--hf-config", str(path))
    assert r.exit_code == 0, r.output
    head = r.output.splitlines()[0]
    assert "KV cache 196.6 kB per token (chunked attention, chunks of 8,192 tokens on 36 " \
        "of 48 layers)" in head and "sliding" not in head, head
