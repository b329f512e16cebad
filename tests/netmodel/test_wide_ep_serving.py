"""Wide expert parallelism end to end (helper 79): the KV transfer of a batch that does not
split evenly over the attention groups, and the MoE all-to-all against DeepEP's published
low-latency kernel figures."""

import math

import pytest

from compute.comm import NoCommunication, RingAlphaBeta
from netmodel.study.serving import WORKLOADS, kv_bytes_per_request, serve

FREE = NoCommunication()


def test_kv_transfer_of_an_uneven_batch_waits_for_the_busiest_attention_group():
    # DeepSeek-V3 (MLA: 61 layers x (512 + 64) latent x 2 B per token) at TP 16 x EP 16 x
    # DP-attention 8: a request's latent is whole on each GPU of its attention group (2
    # GPUs holding the same copy: one KV shard a group). A prefill batch of b requests over
    # 8 groups puts ceil(b / 8) of them on the busiest group, which sends them on its one
    # pair: with b = 12 that is 2 caches, not the 12 / 8 = 1.5 an even split of the bytes
    # over the 8 pairs gives (the old count: 10.76 ms where 14.34 ms is due).
    wl = WORKLOADS["conversation"]
    kv = 61 * (512 + 64) * 2 * 1020
    assert kv_bytes_per_request("DeepSeek-V3", 1020) == kv == 71_677_440
    link = RingAlphaBeta(bandwidth=10e9, step_latency=5e-6, efficiency=1.0)
    r = serve("DeepSeek-V3", "h100-dgx", wl, comm=FREE, transfer=link, tp=(16,), pp=(1,),
              ep=(16,), attention_dp=(8,), max_batch=12)
    pre = r.prefill
    assert (pre.tp, pre.ep, pre.attention_dp, pre.batch) == (16, 16, 8, 12)
    assert r.decode.attention_dp == 8
    assert r.transfer_streams == 8
    busiest = math.ceil(12 / 8)                # 2 requests on the busiest group
    assert r.transfer_s == pytest.approx(5e-6 + busiest * kv / 10e9, rel=1e-12)
