"""Disaggregated serving: with an infinitely fast fabric the service is its two phases
alone; the KV transfer, its layer-by-layer overlap and the pool balance derived by hand;
workloads from files; `netmodel serve` prints a table or JSON and refuses bad input in one
line."""

import json
import math

import pytest
from click.testing import CliRunner

from compute.comm import NoCommunication, RingAlphaBeta
from compute.errors import UserError
from compute.hardware import get_gpu
from compute.phases import Workload
from compute.search import search
from netmodel.cli.main import LazyGroup
from netmodel.cli.serving import serve as serve_command
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.serving import (
    WORKLOADS,
    ServingWorkload,
    get_workload,
    kv_bytes_per_request,
    serve,
    with_rate,
)

FREE = NoCommunication()
CLI = LazyGroup(name="netmodel", commands={"serve": serve_command})


def run(*args):
    return CliRunner().invoke(CLI, ["serve", *args])


def phases_alone(model, gpu, wl, comm, **kw):
    """The two searches a disaggregated service is made of (lite-flat: 128 GPUs, pools of
    at most 64)."""
    common = dict(comm=comm, max_gpus=64, **kw)
    pre = search(model, gpu, Workload("prefill", prompt=wl.prompt), **common).best
    dec = search(model, gpu, Workload("decode", prompt=wl.prompt,
                                      context=wl.prompt + wl.output), **common).best
    return pre, dec


def by_hand(pre, dec, wl, sms, cycle=None):
    """requests/s/SM and the decode : prefill GPU ratio from the definitions."""
    r_p = pre.batch / (cycle or pre.latency)
    r_d = dec.batch / dec.latency / (wl.output - 1)
    return 1 / (pre.gpus * sms / r_p + dec.gpus * sms / r_d), (dec.gpus / r_d) / (pre.gpus / r_p)


def test_splitwise_workloads():
    assert (WORKLOADS["coding"].prompt, WORKLOADS["coding"].output) == (1500, 13)
    assert (WORKLOADS["conversation"].prompt, WORKLOADS["conversation"].output) == (1020, 129)
    assert "Splitwise" in WORKLOADS["coding"].source


@pytest.mark.parametrize("model, workload", [("Llama-3-70B", "conversation"),
                                             ("Mixtral-8x7B", "coding")])
def test_infinitely_fast_fabric_is_the_two_phases_alone(model, workload):
    wl = get_workload(workload)
    r = serve(model, "lite-flat", wl, comm=FREE)
    pre, dec = phases_alone(model, "Lite", wl, FREE, pp=(1, 2, 4, 8), attention_dp=True,
                            ep=True if model == "Mixtral-8x7B" else None)
    assert r.feasible and r.transfer_s == 0 and r.transfer_visible_s == 0
    assert r.prefill.to_dict() == pre.to_dict() and r.decode.to_dict() == dec.to_dict()
    assert (r.ttft_s, r.tbt_s) == (pre.latency, dec.latency)
    rps, ratio = by_hand(pre, dec, wl, 33)
    assert r.requests_per_s_per_sm == pytest.approx(rps, rel=1e-12)
    assert r.decode_gpus_per_prefill_gpu == pytest.approx(ratio, rel=1e-12)
    assert r.tokens_per_s_per_sm == pytest.approx((wl.prompt + wl.output) * rps, rel=1e-12)
    assert r.output_tokens_per_s_per_sm == pytest.approx(wl.output * rps, rel=1e-12)


def test_free_transfer_on_the_fabric_is_the_two_fabric_searches():
    wl = WORKLOADS["coding"]
    coll = ScenarioCollectives("lite-flat")
    r = serve("Llama-3-8B", "lite-flat", wl, transfer=FREE, dimensions="tp",
              collectives={"lite-flat@Lite": coll})
    pre, dec = phases_alone("Llama-3-8B", "Lite", wl, coll)
    assert r.prefill.to_dict() == pre.to_dict() and r.decode.to_dict() == dec.to_dict()
    assert r.ttft_s == pre.latency


def test_kv_transfer_and_its_layer_by_layer_overlap_by_hand():
    # Llama-3-70B, coding: 80 layers x 2 x 8 KV heads x 128 x 2 B x 1500 tokens per request
    wl = WORKLOADS["coding"]
    kv = 80 * 2 * 8 * 128 * 2 * 1500
    assert kv_bytes_per_request("Llama-3-70B", 1500) == kv == 491_520_000
    link = RingAlphaBeta(bandwidth=10e9, step_latency=5e-6, efficiency=1.0)
    r = serve("Llama-3-70B", "lite-flat", wl, comm=FREE, transfer=link, dimensions="tp")
    pre = r.prefill
    # streams: the decode and prefill instances' distinct KV shards (KV heads split at most
    # 8 ways), the fewer of the two
    shards = lambda gpus, tp: gpus // max(1, tp // 8)  # noqa: E731
    assert r.transfer_streams == min(shards(pre.gpus, pre.tp), shards(r.decode.gpus, r.decode.tp))
    t = 5e-6 + pre.batch * kv / r.transfer_streams / 10e9
    assert r.transfer_s == pytest.approx(t, rel=1e-12)
    visible = max(t / 80, t - pre.latency * 79 / 80)
    assert r.transfer_visible_s == pytest.approx(visible, rel=1e-12)
    assert r.ttft_s == pytest.approx(pre.latency + visible, rel=1e-12)
    assert r.prefill_rate == pytest.approx(pre.batch / max(pre.latency, t), rel=1e-12)
    rps, ratio = by_hand(pre, r.decode, wl, 33, cycle=max(pre.latency, t))
    assert r.requests_per_s_per_sm == pytest.approx(rps, rel=1e-12)
    assert r.decode_gpus_per_prefill_gpu == pytest.approx(ratio, rel=1e-12)
    # a fast link hides all but the last layer's share
    fast = serve("Llama-3-70B", "lite-flat", wl, comm=FREE, dimensions="tp",
                 transfer=RingAlphaBeta(bandwidth=1e12, step_latency=0.0, efficiency=1.0))
    assert fast.transfer_visible_s == pytest.approx(fast.transfer_s / 80, rel=1e-12)
    # a slow one limits the prefill pool and the TTFT
    slow = serve("Llama-3-70B", "lite-flat", wl, comm=FREE, dimensions="tp",
                 transfer=RingAlphaBeta(bandwidth=0.5e9, step_latency=0.0, efficiency=1.0))
    assert slow.transfer_s > slow.prefill.latency
    assert slow.prefill_rate == pytest.approx(slow.prefill.batch / slow.transfer_s, rel=1e-12)
    assert slow.ttft_s <= 1.0 and slow.requests_per_s_per_sm < r.requests_per_s_per_sm


def test_the_fabric_prices_the_transfer_h100_servers_apart_lites_one_hop():
    wl = WORKLOADS["coding"]
    dgx = serve("Llama-3-70B", "h100-dgx", wl, dimensions="tp")
    flat = serve("Llama-3-70B", "lite-flat", wl, dimensions="tp")
    # per stream: H100 pools two servers apart cross the 50 GB/s NICs (scale-out link
    # efficiency); Lites one switch hop apart at their 112.5 GB/s (scale-up efficiency: the
    # CPO fabric is their scale-up domain)
    from netmodel.collectives.calibration_files import default_calibration

    cal = default_calibration()
    per_stream = lambda r: r.prefill.batch * r.kv_bytes_per_request / r.transfer_streams  # noqa: E731
    assert per_stream(dgx) / dgx.transfer_s == pytest.approx(50e9 * cal.scaleout_efficiency,
                                                             rel=0.01)
    assert per_stream(flat) / flat.transfer_s == pytest.approx(
        112.5e9 * cal.scaleup_efficiency, rel=0.01)
    for r in (dgx, flat):
        assert r.feasible and r.ttft_s <= 1.0 and r.tbt_s <= 0.050


def test_a_rate_sizes_whole_pools():
    wl = with_rate("conversation", 100.0)
    r = serve("Llama-3-8B", "lite-flat", wl, dimensions="tp", max_batch=256)
    assert r.prefill_instances == math.ceil(100.0 / r.prefill_rate)
    assert r.decode_instances == math.ceil(100.0 / r.decode_rate)
    assert r.gpus_used == r.prefill_instances * r.prefill.gpus + r.decode_instances * r.decode.gpus
    assert r.fits_fabric == (r.gpus_used <= 128)
    d = json.loads(r.to_json())
    assert d["workload"]["rate_per_s"] == 100.0 and d["gpus_used"] == r.gpus_used


def test_a_pool_on_another_gpu_type():
    r = serve("Llama-3-8B", "lite-flat", "coding", decode_gpu="Lite+MemBW", dimensions="tp",
              max_batch=128)
    assert r.prefill.gpu == "Lite" and r.decode.gpu == "Lite+MemBW"
    assert r.settings["decode_gpu"] == "Lite+MemBW"


def test_pools_of_two_gpu_types_send_each_side_at_its_own_links_rate():
    # Llama-3-70B on h100-dgx, an H100 prefill pool at TP 1 x PP 2 and a Lite decode pool at
    # TP 8 x PP 2: each H100 sends its stage's 245.76 MB through its own 50 GB/s NIC, and
    # each of the 8 Lites of the matching decode stage takes an eighth of it, 30.72 MB,
    # through its 12.5 GB/s quarter NIC. The H100's side is the slower: T = 245.76 MB at
    # 50 GB/s (4.9 ms and the link efficiency), not 245.76 MB at a Lite's 12.5 GB/s (20.9 ms)
    from netmodel.collectives.calibration_files import default_calibration

    eff = default_calibration().scaleout_efficiency
    r = serve("Llama-3-70B", "h100-dgx", WORKLOADS["coding"], decode_gpu="Lite", tp=(1, 8),
              pp=(2,), max_batch=1024)
    assert (r.prefill.gpu, r.prefill.tp, r.prefill.pp, r.prefill.batch) == ("H100-SXM", 1, 2, 1)
    assert (r.decode.gpu, r.decode.tp, r.decode.pp) == ("Lite", 8, 2)
    assert r.transfer_streams == 2
    assert r.transfer_s == pytest.approx(245.76e6 / (50e9 * eff), rel=0.01)   # 5.25 ms
    # the last prompt's last layer, 6.144 MB, from the last stage's H100: T x 2 / 80
    assert r.transfer_visible_s == pytest.approx(r.transfer_s * 2 / 80, rel=1e-12)
    # a Lite prefill pool sending to H100s is limited by the Lites' quarter NICs
    back = serve("Llama-3-70B", "h100-dgx@Lite", WORKLOADS["coding"], decode_gpu="H100-SXM",
                 tp=(8,), pp=(2,), max_batch=1024)
    assert (back.prefill.tp, back.prefill.pp, back.decode.tp, back.decode.pp) == (8, 2, 8, 2)
    per_lite = back.prefill.batch * 491.52e6 / 16
    assert back.transfer_s == pytest.approx(per_lite / (12.5e9 * eff), rel=0.01)


def test_one_output_token_needs_no_decode_pool():
    r = serve("Llama-3-8B", "lite-flat", ServingWorkload("one", 500, 1), dimensions="tp",
              max_batch=32)
    assert r.decode is None and r.tbt_s is None and r.decode_gpus_per_prefill_gpu == 0
    assert r.requests_per_s_per_sm == pytest.approx(r.prefill_rate / (r.prefill.gpus * 33))
    # no decode pool: no cache is sent, the TTFT is the prefill's alone (Llama-3-70B on
    # h100-dgx at TP 1 x PP 2 charged 5.25 ms of transfer, 0.131 ms of it in the TTFT)
    assert (r.transfer_streams, r.transfer_s, r.transfer_visible_s) == (0, 0.0, 0.0)
    assert r.ttft_s == r.prefill.latency
    assert r.prefill_rate == pytest.approx(r.prefill.batch / r.prefill.latency, rel=1e-12)
    assert "not sent (no decode pool)" in r.table()
    p = serve("Llama-3-70B", "h100-dgx", ServingWorkload("one", 1500, 1), tp=(1,), pp=(2,),
              max_batch=1)
    assert (p.prefill.pp, p.transfer_s, p.ttft_s) == (2, 0.0, p.prefill.latency)


def test_infeasible_service_says_why():
    from compute.phases import Slo

    r = serve("Llama-3-70B", "lite-flat", "coding", slo=Slo(ttft=0.001), dimensions="tp")
    assert not r.feasible and r.reason.startswith("prefill:")
    assert "infeasible" in r.table()


def test_workload_files(tmp_path):
    f = tmp_path / "chat.toml"
    f.write_text('prompt = 800\noutput = 200\nrate = 12.5\nsource = "our logs"\n')
    w = get_workload(str(f))
    assert (w.name, w.prompt, w.output, w.rate) == ("chat", 800, 200, 12.5)
    j = tmp_path / "w.json"
    j.write_text('{"name": "j", "prompt": 100, "output": 10}')
    assert get_workload(str(j)).rate is None


@pytest.mark.parametrize("body, needle", [
    ("prompt = -5\noutput = 10\n", "prompt must be a whole number from 1"),
    ("prompt = 100\noutput = 10\nrate = nan\n", "rate must be a number from"),
    ("prompt = 100\noutput = 10\nrate = -1.0\n", "rate must be a number from"),
    ("prompt = 100\noutput = 0\n", "output must be a whole number from 1"),
    ("prompt = 100.5\noutput = 10\n", "prompt must be a whole number"),
    ("prompt = 100\noutput = 10\ncolour = 1\n", "unknown key(s) colour"),
    ("output = 10\n", "missing key(s) prompt"),
])
def test_bad_workload_file_is_one_line(tmp_path, body, needle):
    f = tmp_path / "w.toml"
    f.write_text(body)
    with pytest.raises(UserError) as e:
        get_workload(str(f))
    assert needle in str(e.value) and "\n" not in str(e.value)
    r = run("--scenario", "lite-flat", "--model", "Llama-3-8B", "--workload", str(f))
    assert r.exit_code == 2 and r.output.count("\n") == 1 and needle in r.output


def test_cli_table_and_json():
    r = run("--scenario", "lite-flat", "--model", "Llama-3-8B", "--tp-only", "--max-batch", "64")
    assert r.exit_code == 0, r.output
    assert "prefill" in r.output and "decode GPUs per prefill GPU" in r.output
    j = run("--scenario", "lite-flat", "--model", "Llama-3-8B", "--workload", "conversation",
            "--tp-only", "--max-batch", "64", "--rate", "20", "--json")
    assert j.exit_code == 0, j.output
    d = json.loads(j.output)
    assert d["workload"]["name"] == "conversation" and d["workload"]["rate_per_s"] == 20.0
    assert d["feasible"] and d["ttft_s"] <= 1.0 and d["prefill"]["tp"] >= 1
    assert {"tokens_per_s_per_sm", "decode_gpus_per_prefill_gpu", "transfer_s"} <= set(d)


@pytest.mark.parametrize("args, needle", [
    (("--workload", "chatty"), "unknown workload 'chatty'"),
    (("--rate", "nan"), "--rate 'nan': workload 'coding': rate must be a number"),
    (("--rate", "-3"), "--rate '-3': workload 'coding': rate must be a number"),
    (("--decode-gpu", "Lite9"), "unknown GPU 'Lite9'"),
    (("--ttft", "0"), "--ttft"),
    (("--profile", "no-such-profile"), "no-such-profile"),
])
def test_cli_bad_input_is_one_line(args, needle):
    r = run("--scenario", "lite-flat", "--model", "Llama-3-8B", *args)
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and r.output.startswith("error: ") and needle in r.output


def test_cli_nothing_feasible_exits_3():
    r = run("--scenario", "lite-flat", "--model", "Llama-3-70B", "--ttft", "1ms", "--tp-only")
    assert r.exit_code == 3 and "infeasible" in r.output


def test_gpus_from_the_catalog_are_checked():
    assert get_gpu("Lite").sms == 33


def test_a_pipelined_prefill_takes_a_new_batch_every_b_periods():
    # TP 8 x PP 2 prefill with a free network: a batch of b prompts (one micro-batch each)
    # takes (b - 1) periods + a pass (fill and drain) to its last first token, but in a
    # stream of batches each stage takes a prompt every period: b prompts every b periods
    # (GPipe's (m + p - 1) periods once, m each in steady state), the period the slowest
    # stage's (40 layers and the larger of the embedding and the LM head), so R_p = 1 /
    # period, not b / TTFT. Every batch then streams one prompt a period (equal rates but
    # for rounding), so the shortest TTFT wins: batch 1.
    wl = WORKLOADS["conversation"]
    r = serve("Llama-3-70B", "lite-flat", wl, comm=FREE, tp=(8,), pp=(2,), attention_dp=(1,))
    pre = r.prefill
    b = pre.batch
    assert (pre.tp, pre.pp) == (8, 2) and b == 1
    r4 = serve("Llama-3-70B", "lite-flat", wl, comm=FREE, tp=(8,), pp=(2,), attention_dp=(1,),
               max_batch=4)
    assert r4.prefill.batch == 1
    split = {st.name: st.total_time for st in pre.stages}
    ends = (split["embedding"], split["lm_head"])
    period = (pre.latency - sum(ends)) / 2 + max(ends)
    assert r.prefill_rate == pytest.approx(b / (b * period), rel=1e-12)
    assert 1.9 < r.prefill_rate * pre.latency < 2   # balanced stages: 2 / TTFT
    assert r.ttft_s == pre.latency          # the TTFT keeps the fill and drain
    rps, ratio = by_hand(pre, r.decode, wl, 33, cycle=b * period)
    assert r.requests_per_s_per_sm == pytest.approx(rps, rel=1e-12)
    assert r.decode_gpus_per_prefill_gpu == pytest.approx(ratio, rel=1e-12)


def test_one_request_under_attention_dp_moves_on_its_own_group_only():
    # TP 8 x DP-attention 8 (one GPU per attention group) at batch 1: the request's whole
    # KV cache is on one GPU, so it moves on one pair, not on the instance's 8 GPUs
    wl = WORKLOADS["coding"]
    link = RingAlphaBeta(bandwidth=10e9, step_latency=5e-6, efficiency=1.0)
    r = serve("Llama-3-70B", "h100-dgx", wl, comm=FREE, transfer=link, tp=(8,), pp=(1,),
              attention_dp=(8,), max_batch=1)
    assert (r.prefill.attention_dp, r.prefill.batch) == (8, 1)
    assert r.transfer_streams == 1
    assert r.transfer_s == pytest.approx(5e-6 + 491_520_000 / 10e9, rel=1e-12)


def test_a_pipelined_prefill_sends_its_last_prompts_last_layer_from_its_last_stage():
    # Llama-3-70B at TP 1 x PP 2 in both pools, batch 1: each stage's GPU holds 40 layers'
    # KV cache, 245.76 MB, and the two stages send at once on 2 pairs: T = 5 us + 245.76
    # MB / 10 GB/s = 24.581 ms. The last layer's 6.144 MB is on the last stage's GPU alone,
    # so it moves on 1 pair, a 40th of that pair's T: 0.6145 ms after the prefill, not the
    # T / 80 = 0.3073 ms of a layer spread over both pairs.
    wl = WORKLOADS["coding"]
    link = RingAlphaBeta(bandwidth=10e9, step_latency=5e-6, efficiency=1.0)
    r = serve("Llama-3-70B", "h100-dgx", wl, comm=FREE, transfer=link, tp=(1,), pp=(2,),
              max_batch=1)
    assert (r.prefill.tp, r.prefill.pp, r.prefill.batch) == (1, 2, 1)
    assert (r.decode.tp, r.decode.pp) == (1, 2)
    assert r.transfer_streams == 2
    t = 5e-6 + 491_520_000 / 2 / 10e9
    assert r.transfer_s == pytest.approx(t, rel=1e-12)
    assert r.transfer_visible_s == pytest.approx(t / 40, rel=1e-12)   # 0.6145 ms
    assert r.ttft_s == pytest.approx(r.prefill.latency + t / 40, rel=1e-12)
    # with the shipped profile the prefill takes 4 prompts (its fixed overhead paid once a
    # batch), one after the other through the stages: when the last one ends, only its own
    # last layer is left, 6.144 MB on one pair (decode TP 4 holds it on 4): T = 5 us + 4 x
    # 245.76 MB / 10 GB/s = 98.309 ms, and T / 160 = 0.6144 ms shows, not the batch's
    # last layer (T / 40 = 2.458 ms) nor T / 80
    from compute.profiles import get_profile
    from compute.roofline_options import RooflineOptions

    p = serve("Llama-3-70B", "h100-dgx", wl, transfer=link, tp=(1, 4), pp=(1, 2),
              options=RooflineOptions(profile=get_profile("vllm-dgx-h100")))
    assert (p.prefill.tp, p.prefill.pp, p.prefill.batch) == (1, 2, 4)
    assert (p.decode.tp, p.decode.pp, p.transfer_streams) == (4, 1, 2)
    t = 5e-6 + 4 * 491_520_000 / 2 / 10e9
    assert p.transfer_s == pytest.approx(t, rel=1e-12)
    assert p.transfer_visible_s == pytest.approx(t / 160, rel=1e-12)
    # over a 0.5 GB/s link each stage's pair needs T = 5 us + 245.76 MB / 0.5 GB/s =
    # 491.525 ms, and the second stage's pair gets its first layer only when the prompt
    # reaches that stage, half the TTFT in (its 40 layers balanced against the first's,
    # the network free): it starts one of its layers later and ends at TTFT / 2 + TTFT / 80
    # + T, so T - TTFT / 2 x 39 / 40 shows, not T - TTFT x 79 / 80 (105.6 ms less)
    slow = RingAlphaBeta(bandwidth=0.5e9, step_latency=5e-6, efficiency=1.0)
    s = serve("Llama-3-70B", "h100-dgx", wl, comm=FREE, transfer=slow, tp=(1,), pp=(2,),
              max_batch=1)
    ttft, t = s.prefill.latency, 5e-6 + 491_520_000 / 2 / 0.5e9
    assert (s.prefill.pp, s.prefill.batch, s.transfer_s) == (2, 1, pytest.approx(t, rel=1e-12))
    assert s.transfer_visible_s == pytest.approx(t - ttft / 2 * 39 / 40, rel=1e-12)
    assert s.ttft_s == pytest.approx(ttft / 2 + ttft / 80 + t, rel=1e-12)   # 599.75 ms


def test_a_windowed_model_moves_only_the_kv_its_windowed_layers_keep():
    # Gemma-2-9B's shape (42 layers, 21 of them windowed at 4,096 tokens; 8 KV heads of 256
    # dims, bf16): after an 8,192-token prompt the windowed layers hold 4,096 tokens each,
    # so the request moves 21 x 8192 + 21 x 4096 token-layers of 2 x 8 x 256 x 2 bytes.
    from compute.models import ModelSpec

    m = ModelSpec("g", 42, 3584, 16, 8, 256, 14336, 256000, sliding_window=4096,
                  sliding_layers=21)
    per_token_layer = 2 * 8 * 256 * 2
    assert kv_bytes_per_request(m, 8192) == (21 * 8192 + 21 * 4096) * per_token_layer
    assert kv_bytes_per_request(m, 4000) == 42 * 4000 * per_token_layer   # inside the window


def test_a_windowed_models_last_layer_sends_a_whole_prompt():
    # gpt-oss-120b, coding: 36 layers alternating 128-token sliding windows and full
    # attention, the last one full; 2 x 8 KV heads x 64 dims x 2 B = 2,048 B a token-layer.
    # A request moves (18 x 1500 + 18 x 128) x 2,048 = 60.01 MB; the last layer's part is
    # 1500 / 29,304 = 5.12% of it, not 1/36 = 2.78%. On a fast link the TTFT sees that part
    # (the old T / 36 hid 4.8 ms of a 202 ms transfer on h100-dgx@B200-HGX, TTFT 995.6 ms
    # at batch 159 where the last layer's part gives 1000.4 ms > the 1 s SLO).
    assert kv_bytes_per_request("gpt-oss-120b", 1500) == (18 * 1500 + 18 * 128) * 2048
    fast = serve("gpt-oss-120b", "lite-flat", "coding", comm=FREE, dimensions="tp",
                 transfer=RingAlphaBeta(bandwidth=1e12, step_latency=0.0, efficiency=1.0))
    assert fast.transfer_visible_s == pytest.approx(fast.transfer_s * 1500 / 29_304,
                                                    rel=1e-12)
    assert fast.ttft_s == pytest.approx(fast.prefill.latency + fast.transfer_visible_s,
                                        rel=1e-12)
    r = serve("gpt-oss-120b", "h100-dgx@B200-HGX", "coding", dimensions="tp")
    assert r.transfer_visible_s == pytest.approx(r.transfer_s * 1500 / 29_304, rel=1e-12)
    assert r.ttft_s <= 1.0 and r.prefill.batch == 158


@pytest.mark.parametrize("prompt, kv", [
    (4_000, 48 * 4_000 * 4_096),                       # inside the first chunk: every layer
    (8_192, 12 * 8_192 * 4_096),                       # ends on a chunk boundary: none kept
    (10_000, (12 * 10_000 + 36 * 1_808) * 4_096),      # 10,000 - 8,192 in the current chunk
    (20_000, (12 * 20_000 + 36 * 3_616) * 4_096),      # 20,000 - 2 x 8,192
])
def test_a_chunked_model_moves_only_the_current_chunk(prompt, kv):
    # Llama-4-Scout's config.json: 48 layers, 36 of them chunked at 8,192 tokens, 8 KV heads
    # of 128 dims in bf16 (4,096 bytes a token-layer). The next token (position `prompt`)
    # attends to its own chunk only, so decode needs the prompt's tokens since the last
    # chunk boundary: 758 MB at 10,000 tokens (was 1,699 MB, a whole chunk of 8,192 held).
    from pathlib import Path

    from compute.hf_config import load_hf_config

    path = (Path(__file__).parents[1] / "compute" / "data" / "hf_families"
            / "llama-4-scout-17b-16e-instruct.json")
    assert kv_bytes_per_request(load_hf_config(path), prompt) == kv


# ---- the calibrated mode (--profile) and a rate that does not fit the fabric ------------

#: The shipped profile's overheads (compute/data/profiles/vllm-dgx-h100.toml)
LAYER_S, SEQUENCE_S, TOKEN_S = 0.0002675556089174325, 0.00026158738199509867, 5.008205883724498e-11


def test_cli_profile_sets_both_pools_step_times_as_compare_does():
    """serve --profile: the decode pool's step is compare's with the same scenario, model,
    batch and profile (Llama-3-70B coding decode on h100-dgx: TP 4, batch 46), its fixed
    overheads by hand: 80 layers x LAYER_S + 46 sequences x SEQUENCE_S + 46 tokens x 80
    layers x 8192 hidden x TOKEN_S = 21.404 + 12.033 + 1.510 = 34.947 ms."""
    from netmodel.cli.study import compare as compare_command

    args = ("--scenario", "h100-dgx", "--model", "Llama-3-70B", "--profile", "vllm-dgx-h100")
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    dec = d["decode"]
    assert (dec["tp"], dec["pp"], dec["ep"], dec["attention_dp"], dec["batch"]) == (4, 1, 1, 1, 46)
    c = CliRunner().invoke(LazyGroup(name="netmodel", commands={"compare": compare_command}),
                           ["compare", "--models", "Llama-3-70B", "--scenarios", "h100-dgx",
                            "--phase", "decode", "--profile", "vllm-dgx-h100", "--json"])
    assert c.exit_code == 0, c.output
    row = json.loads(c.output)["rows"][0]
    assert (row["tp"], row["batch"]) == (4, 46)
    assert dec["latency_s"] == row["latency_s"]
    assert row["overhead_s"] == pytest.approx(80 * LAYER_S + 46 * SEQUENCE_S
                                              + 46 * 80 * 8192 * TOKEN_S, rel=1e-12)
    assert row["overhead_s"] == pytest.approx(0.034947, abs=1e-6)
    assert d["settings"]["options"]["profile"]["name"] == "vllm-dgx-h100"
    # the roofline's (no --profile) is another answer, and its settings name no profile
    plain = json.loads(run("--scenario", "h100-dgx", "--model", "Llama-3-70B", "--json").output)
    assert "profile" not in plain["settings"]["options"]
    assert plain["decode"]["batch"] != 46 or plain["decode"]["latency_s"] != dec["latency_s"]


def test_cli_profile_note_when_fitted_on_other_collectives():
    """The shipped profile was fitted with scenario h100-dgx's collectives: serve on
    h100-dgx says the calibrated mode only; on lite-flat it adds infer's note."""
    same = run("--scenario", "h100-dgx", "--model", "Llama-3-8B", "--tp-only",
               "--profile", "vllm-dgx-h100")
    assert same.exit_code == 0, same.output
    assert "calibrated mode: engine profile vllm-dgx-h100" in same.output
    # fitted on Llama-2-70B: the model alone is noted, not the collectives
    assert [x for x in same.output.splitlines() if x.startswith("note:")] == [
        "note: profile vllm-dgx-h100 was fitted on model Llama-2-70B on GPU H100-SXM; this is "
        "model Llama-3-8B on GPU H100-SXM: an extrapolation"]
    other = run("--scenario", "lite-flat", "--model", "Llama-3-8B", "--tp-only",
                "--max-batch", "64", "--profile", "vllm-dgx-h100")
    assert other.exit_code == 0, other.output
    assert ("note: profile vllm-dgx-h100 was fitted with collectives scenario h100-dgx, not "
            "this run's scenario lite-flat@Lite") in other.output


def test_cli_a_rate_the_fabric_cannot_hold_exits_3():
    """Llama-3-8B coding on h100-dgx (32 GPUs): prefill and decode instances of 1 GPU;
    at 100,000 requests/s ceil(1e5 / prefill rate) + ceil(1e5 / decode rate) GPUs, far
    over 32: the table is printed, 'does NOT fit', exit 3 (the old code exited 0). A rate
    that fits exits 0."""
    args = ("--scenario", "h100-dgx", "--model", "Llama-3-8B")
    r = run(*args, "--rate", "100000", "--json")
    assert r.exit_code == 3, r.output
    d = json.loads(r.stdout)
    n_p = math.ceil(1e5 / d["prefill_rate_per_s"])
    n_d = math.ceil(1e5 / d["decode_rate_per_s"])
    assert (d["prefill"]["gpus"], d["decode"]["gpus"]) == (1, 1)
    assert (d["prefill_instances"], d["decode_instances"]) == (n_p, n_d)
    assert d["gpus_used"] == n_p + n_d > 32 and d["fits_fabric"] is False
    assert d["feasible"]          # each pool's answer stands; the fabric is too small
    assert r.stderr == (f"nothing feasible: {n_p + n_d} GPUs serve 100000 requests/s, "
                        f"the fabric has 32 (exit status 3)\n")
    t = run(*args, "--rate", "100000")
    assert t.exit_code == 3 and "(does NOT fit the fabric)" in t.stdout
    ok = run(*args, "--rate", "10")
    assert ok.exit_code == 0 and "(fits the fabric)" in ok.output
