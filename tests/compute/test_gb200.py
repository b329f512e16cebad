"""GB200-NVL72 in the catalog (compute/data/gpus.toml): the Blackwell GPU of a GB200 superchip
in a GB200 NVL72 rack (B200's two dies at up to 1,200 W, a 72-GPU NVLink domain), checked
against the published figures it was read from and by hand through the paths a GPU name
takes: the roofline (decode of Llama-3-70B at batch 1 is the weights over the HBM
bandwidth), tensor parallelism wider than an HGX board, the collective model's generation
constants and the ``collective`` command on ``nvl72:gpu=GB200-NVL72``, price, power.

Hand values (each from the datasheet or a closed form, not from a run):
- GB200 NVL72 datasheet rates are for 72 GPUs with 2:4 sparsity: FP4 1,440 PFLOPS, FP8/FP6
  720, INT8 720 POPS, FP16/BF16 360; dense per GPU = / 72 / 2. HBM3E 576 TB/s for 72,
  NVLink 130 TB/s for 72 (1.8 TB/s bidirectional per GPU), TDP configurable up to 1,200 W.
- nvidia-smi total of an 'NVIDIA GB200': 189471 MiB; CUDA: 152 SMs.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.gpu_facts import logic_dies
from compute.hardware import get_gpu
from compute.power import gpu_power
from compute.yield_model import gpu_price, price_basis
from tests.compute.test_b300 import _decode_bytes_llama3_70b  # the bytes by hand, said once

MIB = 2 ** 20
GB200, B200 = "GB200-NVL72", "B200-HGX"


def test_gb200_figures_are_the_nvl72_datasheet():
    g = get_gpu(GB200)
    assert g.flops_fp4 == pytest.approx(1440e15 / 72 / 2, rel=1e-12)      # 10,000 TFLOPS
    assert g.flops_fp8 == pytest.approx(720e15 / 72 / 2, rel=1e-12)       # 5,000
    assert g.flops_int8 == pytest.approx(720e15 / 72 / 2, rel=1e-12)      # 5,000 TOPS
    assert g.flops_bf16 == pytest.approx(360e15 / 72 / 2, rel=1e-12)      # 2,500
    assert g.hbm_capacity == 189471 * MIB
    assert 186e9 < g.hbm_capacity < 186 * 2 ** 30       # NVIDIA's '186 GB', less the reservation
    assert g.hbm_bandwidth == pytest.approx(576e12 / 72, rel=1e-12)
    assert g.scaleup_bandwidth == 18 * 50e9                              # NVLink5 per direction
    assert 2 * g.scaleup_bandwidth == pytest.approx(130e12 / 72, rel=0.01)
    assert g.scaleout_bandwidth == 400e9 / 8                             # one ConnectX-7 per GPU
    assert (g.sms, g.tdp, g.max_instance, g.scaleup_reduction) == (152, 1200, 72, True)
    # B200's GPU at 1,200 W instead of the HGX board's 1,000: every rate above it by 2500/2250,
    # the same NVLink and HBM bandwidth, INT8 not cut (unlike Blackwell Ultra's GB300)
    b = get_gpu(B200)
    for rate in ("flops_bf16", "flops_fp8", "flops_int8"):
        assert getattr(g, rate) / getattr(b, rate) == pytest.approx(2500 / 2250)
    assert g.flops_fp4 / b.flops_fp4 == pytest.approx(10000 / 9000)
    assert (g.hbm_bandwidth, g.scaleup_bandwidth) == (b.hbm_bandwidth, b.scaleup_bandwidth)
    assert g.flops_int8 > 25 * get_gpu("GB300-NVL72").flops_int8


def test_die_data_is_b200s_two_dies_with_76_of_80_sms_each():
    d, b = logic_dies(GB200), logic_dies(B200)
    assert (d.dies, d.sms_physical, d.sms_enabled, d.hbm_sites) == (2, 80, 76, 8)
    assert d.dies * d.sms_enabled == get_gpu(GB200).sms
    assert (d.area, d.process, d.packaging) == (b.area, b.process, b.packaging)


def test_llama3_70b_decode_at_batch_1_is_weights_over_hbm_bandwidth():
    r = evaluate("Llama-3-70B", GB200, 1, 1)
    want = _decode_bytes_llama3_70b(1513) / 8e12
    assert want == pytest.approx(17.44e-3, rel=1e-3)
    assert r.latency == pytest.approx(want, rel=1e-3)
    assert r.memory.fits
    assert r.memory.usable == pytest.approx(0.9 * 189471 * MIB, rel=1e-12)
    # the same HBM bandwidth as the HGX B200: the same memory-bound step
    assert evaluate("Llama-3-70B", B200, 1, 1).latency == pytest.approx(r.latency)


def test_tp_16_fits_the_nvl72_domain_not_an_hgx_board():
    # Llama-3-70B has 64 heads: TP 16 divides them; the HGX B200's domain is 8 GPUs
    r = evaluate("Llama-3-70B", GB200, 16, 1)
    assert r.tp == 16 and r.memory.fits
    # each GPU streams a sixteenth of the step's bytes at least; the all-reduces over NVLink
    # come on top (at batch 1 they make TP 16 slower than TP 8: latency-bound)
    assert r.latency > _decode_bytes_llama3_70b(1513) / 16 / 8e12
    with pytest.raises(UserError, match=r"TP degree 16 exceeds the largest instance of this "
                                        r"GPU \(8\); allowed: 1..8 dividing 64"):
        evaluate("Llama-3-70B", B200, 16, 1)
    with pytest.raises(UserError, match=r"TP degree 128 exceeds the largest instance of this "
                                        r"GPU \(72\)"):
        evaluate("Llama-3.1-405B", GB200, 128, 1)


def test_collectives_take_blackwell_constants():
    from netmodel.collectives.calibration_files import default_calibration

    cal = default_calibration().for_gpu(GB200)
    assert cal.generation == "blackwell" and cal.scaleup_efficiency == 0.802
    assert cal.in_network.bandwidth_factor == 0.74


def test_collective_command_runs_on_a_gb200_rack():
    from netmodel.cli.main import cli

    def ring(fabric):
        r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", fabric,
                                     "--group", "72", "--size", "8GiB", "--algorithm", "ring",
                                     "--json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    out = ring("nvl72:racks=1,gpu=GB200-NVL72")
    assert out["group_size"] == 72 and "GB200-NVL72" in out["fabric"]
    # ring all-reduce of 8 GiB on 72 GPUs: 2 (p-1)/p S over NCCL's 40.1 of 50 GB/s per NVLink5
    # link, 18 links; 142 latency steps add ~2%
    size = 2.0 ** 33
    bandwidth_term = 2 * 71 / 72 * size / (0.802 * 900e9)
    assert bandwidth_term == pytest.approx(23.47e-3, rel=1e-3)
    assert bandwidth_term < out["time"] < 1.03 * bandwidth_term
    # the same NVLink as the B200 the builder defaults to: the same time
    assert out["time"] == ring("nvl72:racks=1")["time"]


def test_price_is_b200s_estimate_and_power_is_of_1200_w():
    # B200-HGX's figure taken for the GB200 (confidence read-estimate): an estimated price
    assert (gpu_price(GB200), price_basis(GB200)) == (35000, "estimated price")
    assert gpu_price(GB200) == gpu_price(B200)
    assert gpu_power(GB200, "idle") == pytest.approx(0.115 * 1200)
    # memory-bound decode at batch 1: idle 11.5% of TDP plus, of the rest, 0.354 (HBM
    # streaming the whole step) and the tensor cores' busy share over 0.7; a bf16 weight is 2
    # bytes and 2 FLOPs a token, so they are busy 8 TB/s / 2,500 TFLOP/s of the step
    r = evaluate("Llama-3-70B", GB200, 1, 1)
    want = 0.115 * 1200 + 0.885 * 1200 * (0.354 + 8e12 / 2500e12 / 0.7)
    assert want == pytest.approx(518.8, abs=0.1)
    assert gpu_power(GB200, "decode", r) == pytest.approx(want, rel=0.002)
