"""Outside parts as GPU files (docs/examples/outside-gpus.toml, h253): the datasheet figures
read back in SI, a peak typed in the wrong unit refused, and an N3 chiplet priced by hand."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.integrate import trapezoid

from compute.errors import UserError
from compute.hardware import DTYPES, get_gpu, load_gpu_file
from compute.power import gpu_power
from compute.yield_model import gpu_die_cost
from netmodel.cli.main import cli

FILE = Path(__file__).parents[2] / "docs" / "examples" / "outside-gpus.toml"


@pytest.fixture(scope="module")
def gpus():
    return load_gpu_file(FILE)


def test_datasheet_figures_in_si(gpus):
    mi355, gaudi, h20, mi325 = gpus["MI355X"], gpus["Gaudi3"], gpus["H20"], gpus["MI325X"]
    # AMD: 7 Infinity Fabric links, 1,075.2 GB/s both directions together
    assert mi355.scaleup_bandwidth == pytest.approx(7 * 153.6e9 / 2)
    assert mi355.nvlinks == 7 and not mi355.scaleup_reduction
    assert mi355.hbm_capacity == 288 * 2**30 and mi355.flops_fp4 == pytest.approx(10066.3e12)
    assert mi325.hbm_capacity == 256 * 2**30
    # Intel: 24 x 200 GbE, 21 to the 7 peers of an 8-card board, 3 out
    assert gaudi.scaleup_bandwidth == pytest.approx(21 * 200e9 / 8)
    assert gaudi.scaleout_bandwidth == pytest.approx(3 * 200e9 / 8)
    assert gaudi.flops_fp8 == gaudi.flops_bf16 == pytest.approx(1835e12)
    # 96 GiB less the H100's driver reservation (81920 - 81559 MiB)
    assert h20.hbm_capacity == (96 * 1024 - 361) * 2**20
    assert gpu_power(h20, "idle") == pytest.approx(0.115 * 400)
    for g in gpus.values():   # every outside part within 2x between formats
        peaks = [g.peak_flops(d) for d in ("bf16", "fp8") if getattr(g, f"flops_{d}") > 0]
        assert max(peaks) <= 2.05 * min(peaks)   # vendors round: L40S 733 vs 2 x 362.05


def test_n3_chiplet_cost_by_hand(gpus):
    # one MI355X XCD: 110 mm^2, 36 CU regions of which 32 must work, 10% critical, on an N3
    # wafer ($20,000, P12); H&P gross dies, negative binomial (alpha 2, D 0.1/cm^2)
    c = gpu_die_cost(gpus["MI355X"])
    A, D, alpha, d = 1.10, 0.1, 2.0, 30.0                     # cm^2, 1/cm^2, -, cm
    gross = math.pi * (d / 2) ** 2 / A - math.pi * d / math.sqrt(2 * A)
    assert c.gross_dies == pytest.approx(gross) and c.dies_per_wafer == 579
    assert c.defect_free_yield == pytest.approx((1 + D * A / alpha) ** -alpha)
    # harvested: E_x[exp(-x A_c) P(Binomial(36, exp(-x a)) >= 32)], x ~ Gamma(2, D/2),
    # integrated on a fine grid here (the module uses Gauss quadrature)
    x = np.linspace(0, 40 * D, 400_001)
    density = x * np.exp(-x / (D / alpha)) / (D / alpha) ** 2
    p = np.exp(-x * 0.9 * A / 36)
    good = sum(math.comb(36, k) * p**k * (1 - p) ** (36 - k) for k in range(32, 37))
    harvested = trapezoid(density * np.exp(-x * 0.1 * A) * good, x)
    assert c.yield_ == pytest.approx(harvested, rel=1e-6)
    assert c.wafer_price == 20_000 and c.process == "N3"
    # a wafer yields whole dies: the wafer price over 579 of them x the yield
    assert c.cost_per_good_die == pytest.approx(20_000 / (579 * harvested), rel=1e-6)
    assert c.cost_per_good_die == pytest.approx(34.92, abs=0.01)


BAD = """[gpu."Slip"]
sms = 78
bf16_dense_TFLOPs = 148
fp8_dense_TFLOPs = {fp8}
hbm_capacity_GB = 96
hbm_bandwidth_TBps = 4.0
scaleup_GBps_per_direction = 450
scaleout_Gbps = 400
tdp_W = 400
max_instance = 8
source = "test"
"""


@pytest.mark.parametrize("fp8, ratio", [(29600, "200x"), (2960, "20x"), (1480, "10x")])
def test_a_peak_in_the_wrong_unit_is_refused_in_one_line(tmp_path, fp8, ratio):
    # fp8 typed 100x (or 10x) its datasheet 296: a format at most 4x its wider one by
    # multiplier area, 8x allowed; the old code took it and ran fp8 GEMMs 100x too fast
    f = tmp_path / "slip.toml"
    f.write_text(BAD.format(fp8=fp8))
    out = CliRunner().invoke(cli, ["hardware", "--gpu-file", str(f)])
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.output
    assert f"{f}: GPU 'Slip': its fp8 dense peak ({fp8:,} TFLOP/s) is {ratio} its bf16" in lines[0]
    f.write_text(BAD.format(fp8=148 * 8))     # 8x its bf16: the bound itself is taken
    assert CliRunner().invoke(cli, ["hardware", "--gpu-file", str(f)]).exit_code == 0


@pytest.mark.parametrize("field, factor", [("flops_fp8", 100), ("flops_int8", 1000),
                                           ("flops_fp4", 9)])
def test_a_gpuspec_built_by_hand_is_held_to_it(field, factor):
    h100 = get_gpu("H100-SXM")
    wider = h100.flops_fp8 if field == "flops_fp4" else h100.flops_bf16
    with pytest.raises(UserError, match=r"^GPU 'X': its (fp8|int8|fp4) dense peak"):
        dataclasses.replace(h100, name="X", **{field: factor * wider})


def test_every_catalog_gpu_within_the_bound():
    for name in ("A100-SXM-80GB", "H100-SXM", "B200-HGX", "B300-HGX", "GB300-NVL72", "Lite"):
        g = get_gpu(name)
        assert all(getattr(g, f"flops_{d}") <= 8 * g.flops_bf16 for d in DTYPES)
