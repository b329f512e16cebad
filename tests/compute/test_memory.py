"""Memory fit: weights, KV cache and activations per GPU against HBM less the reserve."""

import pytest

from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import get_model, model_names
from compute.roofline_options import DEFAULT_RESERVE, RooflineOptions


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


#: nvidia-smi memory totals, MiB (what vLLM's gpu_memory_utilization applies to): H100 80GB
#: HBM3 81559 (github.com/NVIDIA/nccl/issues/1264), A100-SXM4-80GB 81920
#: (github.com/modal-labs/modal-client/pull/2797), H200 143771, B200 183359
#: (github.com/NVIDIA/TensorRT-LLM/issues/10278).
NVIDIA_SMI_MIB = {"H100-SXM": 81559, "A100-SXM-80GB": 81920, "H200-SXM": 143771,
                  "B200-HGX": 183359}


@pytest.mark.parametrize("gpu", sorted(NVIDIA_SMI_MIB))
def test_capacity_is_the_total_cuda_reports_not_the_marketing_gigabytes(gpu):
    # "80 GB" is binary: an H100 holds 81559 MiB = 85.52 GB, not 80e9 bytes (the catalog
    # held 80e9 and understated every KV budget by 5.5 GB per GPU).
    assert get_gpu(gpu).hbm_capacity == NVIDIA_SMI_MIB[gpu] * 2**20


def test_usable_is_capacity_less_the_documented_reserve():
    r = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="decode")
    assert DEFAULT_RESERVE == 0.10
    assert r.memory.usable == pytest.approx(81559 * 2**20 * 0.9)
    r0 = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="decode",
                  options=RooflineOptions(memory_reserve=0.0))
    assert r0.memory.usable == 81559 * 2**20


def test_weights_that_do_not_fit_say_so():
    # Llama-3-70B in bf16 (141 GB) on one H100 (85.5 GB, 77.0 usable).
    r = evaluate("Llama-3-70B", "H100-SXM", tp=1, batch=1, phase="decode")
    assert not r.memory.fits and not r.feasible
    assert "weights alone need 141.1 GB per GPU at TP 1 > 77.0 GB usable" in r.reason


def test_llama3_70b_on_two_and_four_h100s():
    # bf16 weights 141.1 GB: 70.55 GB per GPU at TP 2 leave 6.4 GB of 77.0 usable, a KV
    # cache of 6.4e9 / (80 x 2 x 4 x 128 x 2 B = 163,840 B per token per GPU) ~ 39k tokens
    # (vLLM runs it so, short of its 8k x many-sequence batches); TP 4 leaves 41.7 GB each.
    two = evaluate("Llama-3-70B", "H100-SXM", tp=2, batch=1, phase="decode", context=8192)
    assert two.memory.kv_cache == 80 * 2 * 4 * 128 * 2 * 8192
    room = two.memory.usable - two.memory.weights
    assert room / 1e9 == pytest.approx(6.42, abs=0.01)
    assert two.memory.fits
    assert not evaluate("Llama-3-70B", "H100-SXM", tp=2, batch=5, phase="decode",
                        context=8192).memory.fits
    four = evaluate("Llama-3-70B", "H100-SXM", tp=4, batch=1, phase="decode")
    assert (four.memory.usable - four.memory.weights) / 1e9 == pytest.approx(41.69, abs=0.01)


def test_kv_cache_overflow_names_each_part():
    r = evaluate("Llama-3-70B", "H100-SXM", tp=8, batch=1024, phase="decode")
    assert not r.memory.fits
    assert "KV cache" in r.reason and "batch 1024" in r.reason
    # the fit is exactly where weights + KV + activations cross the usable bytes
    assert r.memory.total > get_gpu("H100-SXM").hbm_capacity * 0.9
