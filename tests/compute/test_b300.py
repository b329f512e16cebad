"""Blackwell Ultra in the catalog (compute/data/gpus.toml): B300-HGX (the HGX B300 baseboard's
GPU) and GB300-NVL72 (the GPU of a GB300 superchip in a GB300 NVL72 rack), checked against
the published figures they were read from and by hand through every path a GPU name takes:
the roofline (decode of Llama-3-70B at batch 1 is the weights over the HBM bandwidth), the
memory fit of DeepSeek-V3 fp8, an NVFP4 checkpoint at the fp4 rate, the cut INT8 rate, the
collective model's generation constants, die yield and price, power.

Hand values (each from the datasheet or a closed form, not from a run):
- HGX B300 datasheet rates are for 8 GPUs with 2:4 sparsity: bf16 36 PFLOPS, fp8 72, fp4
  144 sparse / 105 dense; dense per GPU = / 8 (/ 2 where sparse). GB300 NVL72: for 72 GPUs,
  bf16 360 sparse, fp8 720 sparse, fp4 1,080 dense, HBM 576 TB/s, NVLink 130 TB/s.
- nvidia-smi totals: B300 SXM6 AC 275040 MiB, GB300 284208 MiB.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.gpu_facts import logic_dies
from compute.hardware import get_gpu
from compute.hf_config import load_hf_config
from compute.models import get_model
from compute.power import gpu_power
from compute.stage_peaks import stage_peaks
from compute.stages import STAGES
from compute.yield_model import gpu_die_cost, gpu_price, package_cost, parameter, price_basis

DATA = Path(__file__).parent / "data" / "hf_quantized"
MIB = 2 ** 20
B300, GB300 = "B300-HGX", "GB300-NVL72"


def test_b300_figures_are_the_datasheets():
    g = get_gpu(B300)
    assert g.flops_bf16 == 36e15 / 8 / 2 == 2250e12
    assert g.flops_fp8 == 72e15 / 8 / 2
    assert g.flops_fp4 == 105e15 / 8 == 13125e12
    # Blackwell Ultra cut INT8: a fifteenth of the bf16 rate (B200: twice it)
    assert g.flops_int8 == 150e12 and g.flops_int8 < g.flops_bf16 / 10
    assert get_gpu("B200-HGX").flops_int8 == 2 * get_gpu("B200-HGX").flops_bf16
    assert g.hbm_capacity == 275040 * MIB          # 288 GiB of HBM3E less the driver's share
    assert g.hbm_capacity < 288 * 2 ** 30
    assert g.hbm_bandwidth == 8e12
    assert g.scaleup_bandwidth == 18 * 50e9        # NVLink5, per direction
    assert g.scaleout_bandwidth == 800e9 / 8       # one ConnectX-8 per GPU
    assert (g.sms, g.tdp, g.max_instance, g.scaleup_reduction) == (148, 1100, 8, True)


def test_gb300_figures_are_the_nvl72_datasheet():
    g = get_gpu(GB300)
    assert g.flops_bf16 == pytest.approx(360e15 / 72 / 2, rel=1e-12)
    assert g.flops_fp8 == pytest.approx(720e15 / 72 / 2, rel=1e-12)
    assert g.flops_fp4 == pytest.approx(1080e15 / 72, rel=1e-12)
    assert g.flops_int8 == pytest.approx(24e15 / 72 / 2, rel=0.01)
    assert g.hbm_capacity == 284208 * MIB
    assert g.hbm_bandwidth == pytest.approx(576e12 / 72, rel=1e-12)
    assert 2 * g.scaleup_bandwidth == pytest.approx(130e12 / 72, rel=0.02)
    assert (g.tdp, g.max_instance) == (1400, 72)
    # the same package as B300-HGX at a higher power: every rate above it, by 2500/2250
    b = get_gpu(B300)
    assert g.flops_bf16 / b.flops_bf16 == pytest.approx(2500 / 2250)
    assert g.flops_fp8 / b.flops_fp8 == pytest.approx(2500 / 2250)


@pytest.mark.parametrize("gpu", [B300, GB300])
def test_die_data_is_two_reticle_dies_of_74_of_80_sms(gpu):
    d = logic_dies(gpu)
    assert (d.dies, d.sms_physical, d.sms_enabled, d.hbm_sites) == (2, 80, 74, 8)
    assert d.dies * d.sms_enabled == get_gpu(gpu).sms
    assert d.process == "N4" and d.packaging == "CoWoS-L"


def _decode_bytes_llama3_70b(context: int) -> float:
    """HBM bytes of one batch-1 decode step of Llama-3-70B in bf16, by hand: every layer's
    weights, the LM head, one embedding row, the norms, and the KV cache of ``context``
    tokens (K and V, 8 heads of 128, 80 layers, 2 bytes)."""
    h, kv, f, v, layers = 8192, 8 * 128, 28672, 128256, 80
    per_layer = h * h + 2 * h * kv + h * h + 3 * h * f + 2 * h
    weights = layers * per_layer + v * h + h + h      # LM head, embedding row, final norm
    return 2 * weights + context * 2 * layers * kv * 2


def test_llama3_70b_decode_at_batch_1_is_weights_over_hbm_bandwidth():
    r = evaluate("Llama-3-70B", B300, 1, 1)
    want = _decode_bytes_llama3_70b(1513) / 8e12
    assert want == pytest.approx(17.44e-3, rel=1e-3)
    assert r.latency == pytest.approx(want, rel=1e-3)
    assert r.memory.fits
    # the same HBM bandwidth as B200: the same step
    assert evaluate("Llama-3-70B", "B200-HGX", 1, 1).latency == pytest.approx(r.latency)
    # memory: 90% of 275040 MiB usable, 141 GB of weights
    assert r.memory.usable == pytest.approx(0.9 * 275040 * MIB, rel=1e-12)


def test_deepseek_v3_fp8_needs_four_b300s_and_runs_its_gemms_at_the_fp8_rate():
    m = get_model("DeepSeek-V3")
    two, four = evaluate(m, B300, 2, 1), evaluate(m, B300, 4, 1)
    # ~671 B fp8 parameters (plus bf16 embedding and head): more than 2 x 259.6 GB usable
    assert not two.memory.fits and four.memory.fits
    assert 2 * 0.9 * 275040 * MIB < m.weight_storage_bytes < 4 * 0.9 * 275040 * MIB
    peaks = dict(zip(("qkv", "mlp_up", "lm_head"),
                     stage_peaks(m, get_gpu(B300), ("qkv", "mlp_up", "lm_head")), strict=True))
    assert peaks["mlp_up"] == 4500e12 and peaks["lm_head"] == 2250e12
    assert stage_peaks(m, get_gpu(GB300), ("mlp_up",)) == (5000e12,)


def _nvfp4_llama8(tmp_path):
    cfg = json.loads((DATA / "llama-3.1-8b-instruct-quantized.w4a16.json").read_text())
    cfg["quantization_config"] = {"quant_method": "modelopt", "quant_algo": "NVFP4",
                                  "group_size": 16, "kv_cache_quant_algo": None,
                                  "exclude_modules": ["lm_head"]}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return load_hf_config(tmp_path / "config.json")


def test_nvfp4_runs_at_the_blackwell_ultra_fp4_rate(tmp_path):
    m = _nvfp4_llama8(tmp_path)
    assert m.compute_dtype == "fp4"
    for gpu, fp4 in ((B300, 13125e12), (GB300, 15000e12), ("B200-HGX", 9000e12)):
        peaks = dict(zip(STAGES, stage_peaks(m, get_gpu(gpu), STAGES), strict=True))
        assert peaks["mlp_up"] == peaks["qkv"] == fp4
        assert peaks["lm_head"] == get_gpu(gpu).flops_bf16   # excluded: bf16


def test_int8_w8a8_runs_at_the_cut_int8_rate():
    # an int8 GEMM on B300 runs at its 150 TOPS, 15x under bf16: the model says so, and
    # asking for int8 explicitly gives that rate; a GPU file may still set its own
    w8a8 = replace(get_model("Llama-3-70B"), weight_dtype="int8", embedding_dtype="bf16",
                   compute_dtype="int8")
    g = get_gpu(B300)
    assert stage_peaks(w8a8, g, ("qkv", "lm_head")) == (150e12, 2250e12)
    assert g.peak_flops("int8") == 150e12
    # prefill of a compute-bound batch is slower in int8 than the same model in bf16
    bf16 = replace(w8a8, weight_dtype="bf16", compute_dtype="bf16", embedding_dtype="bf16")
    assert evaluate(w8a8, B300, 8, 8, "prefill").latency > \
        evaluate(bf16, B300, 8, 8, "prefill").latency


def test_no_fp64_or_unknown_dtype_is_refused_in_one_line():
    with pytest.raises(UserError, match="unknown compute dtype 'fp64'"):
        get_gpu(B300).peak_flops("fp64")


@pytest.mark.parametrize("gpu", [B300, GB300])
def test_collectives_take_blackwell_constants(gpu):
    from netmodel.collectives.calibration_files import default_calibration
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    cal = default_calibration().for_gpu(gpu)
    assert cal.generation == "blackwell" and cal.scaleup_efficiency == 0.802
    assert cal.in_network.bandwidth_factor == 0.74
    # a ring all-reduce of 8 GiB on 8 GPUs: 2 (p-1)/p S over NCCL's 40.1 of 50 GB/s per
    # NVLink5 link, 18 links (latency under 0.2% at this size)
    size = 2.0 ** 33
    ring = FabricCostModel(build(f"single-switch:n=8,gpu={gpu}"), algorithm="ring",
                           validated=True).cost("all-reduce", size, 8)
    assert ring.time == pytest.approx(2 * 7 / 8 * size / (0.802 * 900e9), rel=0.005)
    b200 = FabricCostModel(build("single-switch:n=8,gpu=B200-HGX"), algorithm="ring",
                           validated=True).cost("all-reduce", size, 8)
    assert ring.time == b200.time


def test_b300_and_gb300_prices_are_the_blackwell_ultra_estimate():
    # an estimate (gpus.toml: confidence read-estimate; NVIDIA publishes no B300 price):
    # said so, not "list price" (the cost table printed "list price" before)
    assert (gpu_price(B300), price_basis(B300)) == (45000, "estimated price")
    # GB300 is the same GPU, sold only in racks: B300's estimate, not the package-cost
    # rule, which would price it at the H100's margin over a larger package cost
    assert (gpu_price(GB300), price_basis(GB300)) == (45000, "estimated price")
    ratio = parameter("reference_price") / package_cost("H100-SXM").total
    assert package_cost(GB300).total * ratio > 60000   # the rule's $67.3k, not taken
    # HBM cost scales with capacity from the H100's $1,400 for 81559 MiB
    assert package_cost(B300).hbm == pytest.approx(1400 * 275040 / 81559, rel=1e-12)
    # the same logic dies as B200: two 800 mm^2 dies, 64.8 gross a wafer, yield 1/1.4^2
    c = gpu_die_cost(B300)
    assert c.gross_dies == pytest.approx(3.141592653589793 * 150 ** 2 / 800
                                         - 3.141592653589793 * 300 / 1600 ** 0.5, rel=1e-9)
    assert c.defect_free_yield == pytest.approx(1 / 1.4 ** 2, rel=1e-12)
    assert c.cost_per_good_die == gpu_die_cost("B200-HGX").cost_per_good_die


def test_decode_power_at_batch_1_is_idle_plus_the_memory_share():
    # memory-bound: idle 11.5% of TDP plus, of the rest, 0.354 (HBM streaming the whole
    # step) and the tensor cores' busy share over 0.7 (economics.toml). A bf16 weight is 2
    # bytes and 2 FLOPs a token, so at batch 1 the tensor cores are busy 8 TB/s / 2,250
    # TFLOP/s of the step
    r = evaluate("Llama-3-70B", B300, 1, 1)
    want = 0.115 * 1100 + 0.885 * 1100 * (0.354 + 8e12 / 2250e12 / 0.7)
    assert want == pytest.approx(476.1, abs=0.1)
    assert gpu_power(B300, "decode", r) == pytest.approx(want, rel=0.002)
    assert gpu_power(B300, "idle") == pytest.approx(0.115 * 1100)
    assert gpu_power(GB300, "idle") == pytest.approx(0.115 * 1400)


def test_hosts_of_eight():
    from netmodel.study.reliability_catalog import catalog

    assert catalog().gpus_per_host(B300) == 8


@pytest.mark.parametrize("confidence, basis", [
    ("read-primary", "list price"), ("read-secondary", "list price"),
    ("vendor-claim", "list price"), ("read-estimate", "estimated price"),
    ("derived", "estimated price"), ("assumption", "estimated price")])
def test_a_die_tables_price_is_said_an_estimate_by_its_rows_confidence(confidence, basis):
    # compute.dies.ESTIMATED: the confidence tags under which a list_price row is no
    # published price; the price itself is the row's value either way
    from compute.dies import check_die_table
    from compute.gpu_facts import die_table

    table = {k: dict(v) for k, v in die_table(B300)[0].items()}
    table["list_price"] = {**table["list_price"], "confidence": confidence}
    dies = check_die_table(B300, table, "t", get_gpu(B300).sms)
    assert dies.list_price == 45000
    assert dies.price_estimated is (basis == "estimated price")
