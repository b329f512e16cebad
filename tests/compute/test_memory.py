"""Memory fit: weights, KV cache and activations per GPU against HBM less the reserve."""

import pytest

from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.memory import DEFAULT_RESERVE
from compute.models import get_model, model_names
from compute.roofline import RooflineOptions


@pytest.mark.parametrize("name", model_names())
def test_weights_at_tp1_are_every_parameter_once(name):
    m = get_model(name)
    r = evaluate(m, "B200-HGX", tp=1, batch=1, phase="decode")
    assert r.memory.weights == m.weight_storage_bytes  # MLPs may have a dtype of their own


def test_weights_split_over_tp_without_replication():
    # Llama-3-70B at TP 8: 8 KV heads, one per GPU; every matrix splits evenly
    # (vocab 128256 = 8 x 16032), norms are replicated (161 RMSNorms of 8192).
    m = get_model("Llama-3-70B")
    r = evaluate(m, "H100-SXM", tp=8, batch=1, phase="decode")
    norms = (2 * 80 + 1) * 8192
    assert r.memory.weights == pytest.approx(((m.parameters - norms) / 8 + norms) * 2)


def test_replicated_kv_heads_cost_weights_too():
    m = get_model("Llama-3-70B")
    w16 = evaluate(m, "Lite", tp=16, batch=1, phase="decode").memory.weights
    w8 = evaluate(m, "Lite", tp=8, batch=1, phase="decode").memory.weights
    # K and V projections (8192 x 128 each per layer) are not split further past TP 8.
    kv_proj = 80 * 2 * 8192 * 128 * 2
    assert w16 > w8 / 2
    assert w16 - (w8 - kv_proj) / 2 == pytest.approx(kv_proj, rel=0.01)


def test_kv_cache_is_batch_times_context_times_per_token_bytes():
    r = evaluate("Llama-3-8B", "H100-SXM", tp=2, batch=10, phase="decode", context=4000)
    assert r.memory.kv_cache == 10 * 4000 * 32 * 2 * 4 * 128 * 2
    p = evaluate("Llama-3-8B", "H100-SXM", tp=2, batch=10, phase="prefill", prompt=3000)
    assert p.memory.kv_cache == 10 * 3000 * 32 * 2 * 4 * 128 * 2


def test_usable_is_capacity_less_the_documented_reserve():
    r = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="decode")
    assert DEFAULT_RESERVE == 0.10
    assert r.memory.usable == pytest.approx(80e9 * 0.9)
    r0 = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="decode",
                  options=RooflineOptions(memory_reserve=0.0))
    assert r0.memory.usable == 80e9


def test_weights_that_do_not_fit_say_so():
    # Llama-3-70B in bf16 (141 GB) on one 80 GB H100.
    r = evaluate("Llama-3-70B", "H100-SXM", tp=1, batch=1, phase="decode")
    assert not r.memory.fits and not r.feasible
    assert "weights alone need 141.1 GB per GPU at TP 1 > 72.0 GB usable" in r.reason


def test_kv_cache_overflow_names_each_part():
    r = evaluate("Llama-3-70B", "H100-SXM", tp=8, batch=1024, phase="decode")
    assert not r.memory.fits
    assert "KV cache" in r.reason and "batch 1024" in r.reason
    # the fit is exactly where weights + KV + activations cross the usable bytes
    assert r.memory.total > get_gpu("H100-SXM").hbm_capacity * 0.9
