"""A GPU figure of -0.0 (h244: ``scaleout_Gbps = -0.0`` in a GPU file) is 0, "none", as its
key's rule allows (``or_zero`` in compute/data/limits.toml): it was kept as -0.0, and
``netmodel hardware --gpu-file`` printed ``-0`` in the scale-out column (and ``--json``
-0.0). Normalized where every GpuSpec is checked (compute.hardware._check_fields), so a GPU
file, a hand-made GpuSpec and a saved fabric's gpu_types all read 0.0."""

from __future__ import annotations

import math
from dataclasses import replace

from compute.hardware import get_gpu, load_gpu_file
from tests.netmodel.cli_helpers import run_cli

ENTRY = ('[gpu.G]\nsms = 132\nbf16_dense_TFLOPs = 989.4\nfp8_dense_TFLOPs = -0.0\n'
         'hbm_capacity_GB = 80\nhbm_bandwidth_TBps = 3.35\nscaleup_GBps_per_direction = 450\n'
         'scaleout_Gbps = -0.0\ntdp_W = 700\nmax_instance = 8\nsource = "what-if: h247"\n')


def _plus_zero(x: float) -> bool:
    return x == 0 and math.copysign(1.0, x) == 1.0


def test_a_gpu_file_minus_zero_is_read_as_zero(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text(ENTRY)
    g = load_gpu_file(path)["G"]
    assert _plus_zero(g.scaleout_bandwidth) and _plus_zero(g.flops_fp8)


def test_hardware_table_prints_0_not_minus_0(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text(ENTRY)
    r = run_cli(["hardware", "--gpu-file", path])
    assert r.exit_code == 0, r.output
    row = next(line for line in r.output.splitlines() if line.startswith("G "))
    # name, SMs, BF16, FP8, HBM GB, TB/s, scale-up GB/s, scale-out Gb/s, TDP, max instance
    assert row.split() == ["G", "132", "989.4", "0.0", "80.0", "3.350", "450.0", "0", "700", "8"]


def test_a_hand_made_gpuspec_minus_zero_is_zero():
    g = replace(get_gpu("H100-SXM"), name="NoNic", scaleout_bandwidth=-0.0)
    assert _plus_zero(g.scaleout_bandwidth)
