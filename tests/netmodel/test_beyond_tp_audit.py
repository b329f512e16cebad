"""The users of a searched best configuration count an instance as ``tp x pp`` GPUs, not
``tp`` (code written when instances were plain TP assumed the latter): ``serve``'s pools,
KV streams, pool ratio and tokens/s/SM, and ``sweep``'s packed instances, with pipelined and
mixture-of-experts configurations. Every expected value is derived by hand from the
configuration the result prints."""

import math

import pytest

from compute.hardware import get_gpu
from compute.models import get_model
from netmodel.study.serving import serve, with_rate
from netmodel.study.sweep import run_sweep


def test_serve_pipelined_pools_are_tp_times_pp_gpus():
    # Llama-3-70B pinned to TP 2 x PP 2 in both pools: 4 GPUs an instance, not 2
    r = serve("Llama-3-70B", "h100-dgx", with_rate("conversation", 500.0), tp=2, pp=2)
    assert r.feasible
    p, d = r.prefill, r.decode
    assert (p.tp, p.pp, d.tp, d.pp) == (2, 2, 2, 2)
    assert p.gpus == d.gpus == 4
    # a request's cache: 80 layers x 8 KV heads x 128 x (K, V) x 2 bytes x 1020 tokens
    assert r.kv_bytes_per_request == 80 * 8 * 128 * 2 * 2 * 1020
    # KV shards: 2 attention GPUs (8 KV heads: no copy) x 2 stages = 4, in both pools
    assert r.transfer_streams == 4
    n_p, n_d = math.ceil(500 / r.prefill_rate), math.ceil(500 / r.decode_rate)
    assert (r.prefill_instances, r.decode_instances) == (n_p, n_d)
    assert r.gpus_used == 4 * n_p + 4 * n_d
    assert r.decode_gpus_per_prefill_gpu == pytest.approx(
        (4 / r.decode_rate) / (4 / r.prefill_rate), rel=1e-12)
    sms = get_gpu("H100-SXM").sms   # 132
    rps = 1 / (4 * sms / r.prefill_rate + 4 * sms / r.decode_rate)
    assert r.requests_per_s_per_sm == pytest.approx(rps, rel=1e-12)
    assert r.tokens_per_s_per_sm == pytest.approx((1020 + 129) * rps, rel=1e-12)


def test_serve_moe_pipelined_decode_pool():
    # Mixtral-8x7B at TP 8 x EP 8 x DP-attention 8, PP 1 or 2: the decode pool is pipelined
    r = serve("Mixtral-8x7B", "lite-flat", with_rate("conversation", 500.0), tp=8, ep=8,
              attention_dp=8, pp=(1, 2))
    assert r.feasible
    p, d = r.prefill, r.decode
    assert (p.tp, p.ep, p.attention_dp) == (d.tp, d.ep, d.attention_dp) == (8, 8, 8)
    assert d.pp == 2, "the case needs a pipelined decode pool"
    gp, gd = p.tp * p.pp, d.tp * d.pp
    assert (p.gpus, d.gpus) == (gp, gd)
    m = get_model("Mixtral-8x7B")
    assert r.kv_bytes_per_request == m.layers * 8 * 128 * 2 * 2 * 1020   # 32 layers
    # one attention GPU per group (8 groups): a batch of >= 8 covers 8 groups' shards,
    # x pp stages each; the transfer runs on the smaller count
    b = p.batch
    assert b >= 8
    assert r.transfer_streams == min(p.pp * min(8, b), d.pp * min(8, b))
    n_p, n_d = math.ceil(500 / r.prefill_rate), math.ceil(500 / r.decode_rate)
    assert r.gpus_used == n_p * gp + n_d * gd
    assert r.fits_fabric == (n_p * gp + n_d * gd <= 128)
    assert r.decode_gpus_per_prefill_gpu == pytest.approx(
        (gd / r.decode_rate) / (gp / r.prefill_rate), rel=1e-12)
    sms = get_gpu("Lite").sms
    rps = 1 / (gp * sms / r.prefill_rate + gd * sms / r.decode_rate)
    assert r.tokens_per_s_per_sm == pytest.approx((1020 + 129) * rps, rel=1e-12)


def test_sweep_packs_pipelined_instances_by_their_gpus():
    # every instance at once: floor(GPUs / (tp x pp)) instances, charged over every SM
    r = run_sweep(["lite-flat", "h100-dgx"], ["adjust.hop_latency=0.1us"],
                  ["Llama-3-70B", "Mixtral-8x7B"], ["decode", "prefill"], parallelism="all",
                  instances="all")
    fabric = {"lite-flat@Lite": (128, get_gpu("Lite").sms),
              "h100-dgx@H100-SXM": (32, get_gpu("H100-SXM").sms)}
    assert any(row.pp > 1 for row in r.rows), "the case needs a pipelined best"
    for row in r.rows:
        assert row.feasible
        gpus, sms = fabric[row.label]
        assert row.instance_gpus == row.tp * row.pp
        assert row.instances == gpus // row.instance_gpus
        assert row.packed_fraction == pytest.approx(
            row.instances * row.instance_gpus / gpus, rel=1e-12)
        # tokens/s of every instance over every SM of the fabric
        assert row.tokens_per_s_per_sm == pytest.approx(row.tokens_per_s / (gpus * sms),
                                                        rel=1e-9)


def test_a_pipelined_best_instance_is_its_tp_x_pp_gpus_on_the_fabric():
    # fabric_search's group and circuit set-up time were those of tp GPUs: Mixtral-8x7B
    # prefill on lite-ocs with parallelism='all' is TP 1 x PP 8, an instance of 8 Lites
    # whose ring of circuits takes the OCS's 10 ms to set (was a group of 1 GPU and 0 s);
    # Llama-3-70B prefill TP 2 x PP 4: 8 GPUs (was 2)
    from netmodel.study.fabric_search import fabric_search

    r = fabric_search("Mixtral-8x7B", "lite-ocs", "prefill", parallelism="all")
    b = r.search.best
    assert (b.tp, b.pp) == (1, 8) and len(r.group) == 8 and r.reconfiguration_s == 0.01
    r = fabric_search("Llama-3-70B", "lite-ocs", "prefill", parallelism="all")
    assert (r.search.best.tp, r.search.best.pp, len(r.group)) == (2, 4, 8)
