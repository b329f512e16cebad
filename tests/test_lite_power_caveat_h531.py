"""The customized Lites are rated at the plain Lite's 175 W, and the docs say so, with the
figures the clock-power law gives the 1.2x clock (docs/economics.md, docs/compute.md).

The README's per-watt sentence named `lite-ocs@Lite+BW+FLOPS` leading the H100 cluster
per watt in Llama-3-70B prefill without saying that the catalog's Lite+BW+FLOPS takes its
1.2x clock (FLOP/s x 1.2) at the Lite's 175 W, while `netmodel cost --clock 1.2` on the
same Lite+BW charges the clock-power law's rated power. Hand-derived from the rows of
compute/data/economics.toml (idle_fraction 0.115, clock_core_share 0.75, voltage with the
clock above the 0.7 floor): 175 x (0.115 + 0.885 x (0.75 x 1.2^3 + 0.25)) = 259.56 W.
"""

import math
import re
from pathlib import Path

import pytest

from compute.hardware import get_gpu
from compute.power import gpu_at_clock
from netmodel.study.cost import cost_summary

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
COMPUTE = ROOT / "docs" / "compute.md"
ECONOMICS = ROOT / "docs" / "economics.md"
HAND_TDP = 175 * (0.115 + 0.885 * (0.75 * 1.2 ** 3 + 0.25))   # 259.56 W


def _text(path: Path) -> str:
    return " ".join(path.read_text().split())


def test_catalog_takes_the_clock_at_no_power():
    flops, bw = get_gpu("Lite+BW+FLOPS"), get_gpu("Lite+BW")
    clocked = gpu_at_clock("Lite+BW", 1.2)
    assert flops.tdp == bw.tdp == get_gpu("Lite").tdp == pytest.approx(175.0)
    assert clocked.flops_bf16 == pytest.approx(flops.flops_bf16)   # the same GPU ...
    assert clocked.hbm_bandwidth == flops.hbm_bandwidth
    assert clocked.tdp == pytest.approx(HAND_TDP, abs=1e-9)           # ... but rated 259.56 W
    assert HAND_TDP == pytest.approx(259.56, abs=0.005)


def test_docs_state_the_caveat():
    for path in (ECONOMICS, COMPUTE):
        text = _text(path)
        assert "175 W" in text and f"{HAND_TDP:.1f} W" in text, path
    # the README's per-watt sentence says the lead it names takes its clock at no power
    readme = _text(README)
    assert "`lite-ocs@Lite+BW+FLOPS` in Llama-3-70B prefill, by 4%, its circuits drawing " \
           "little and its 1.2x clock nothing)" in readme
    assert "[economics](docs/economics.md#gpu-power)" in readme


def test_economics_figures_of_the_clocked_cluster():
    text = _text(ECONOMICS)
    said = re.search(r"on GPUs rated ([\d.]+) W, and its cluster draws ([\d.]+) kW of IT power, "
                     r"not ([\d.]+): ([\d.]+)x the `h100-dgx` cluster's tokens/s/W where the "
                     r"catalog's variant leads it by (\d+)%", text)
    assert said, "docs/economics.md no longer gives the clocked cluster's figures"
    tdp, clocked_kw, catalog_kw, ratio, lead = map(float, said.groups())
    assert tdp == round(HAND_TDP, 1)
    clocked = cost_summary("lite-ocs@Lite+BW", "Llama-3-70B", "prefill", clock=1.2)
    catalog = cost_summary("lite-ocs@Lite+BW+FLOPS", "Llama-3-70B", "prefill")
    base = cost_summary("h100-dgx", "Llama-3-70B", "prefill")
    # the same configuration and tokens/s: only the power differs
    assert clocked.tokens_per_s == pytest.approx(catalog.tokens_per_s, rel=1e-9)
    assert round(clocked.power_it / 1e3, 1) == clocked_kw
    assert round(catalog.power_it / 1e3, 1) == catalog_kw
    assert round(clocked.tokens_per_s_per_w / base.tokens_per_s_per_w, 2) == ratio
    assert catalog.tokens_per_s_per_w > base.tokens_per_s_per_w > clocked.tokens_per_s_per_w
    assert math.floor(100 * (catalog.tokens_per_s_per_w / base.tokens_per_s_per_w - 1) + 0.5) \
        == lead
