"""A derived GPU's TDP follows from the clock-power law: Lite+BW+FLOPS's 1.2x clock is rated,
and the docs say so with the figures it gives (docs/economics.md, docs/compute.md, README).

The catalog rated every Lite variant at the plain Lite's 175 W, so Lite+BW+FLOPS took its
1.2x clock (FLOP/s x 1.2) at no power and led the H100 cluster per watt in Llama-3-70B
prefill by 4%. Its SMs are the Lite's, so its flops_multiplier is a clock ratio, rated by
the law `netmodel cost --clock` uses. Hand-derived from the rows of
compute/data/economics.toml (idle_fraction 0.115, clock_core_share 0.75, voltage with the
clock above the 0.7 floor): 175 x (0.115 + 0.885 x (0.75 x 1.2^3 + 0.25)) = 259.56 W.
"""

import re
import tomllib
from pathlib import Path

import pytest

from compute.evaluate_one import evaluate
from compute.hardware import derive_gpu, get_gpu
from compute.power import activity, gpu_at_clock, gpu_power, hbm_share
from compute.yield_model import parameter
from netmodel.study.cost import cost_summary

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
COMPUTE = ROOT / "docs" / "compute.md"
ECONOMICS = ROOT / "docs" / "economics.md"
GPUS = ROOT / "compute" / "data" / "gpus.toml"
HAND_TDP = 175 * (0.115 + 0.885 * (0.75 * 1.2 ** 3 + 0.25))   # 259.56 W


def _text(path: Path) -> str:
    return " ".join(path.read_text().split())


def test_the_clock_is_rated_by_the_law():
    flops, bw, lite = get_gpu("Lite+BW+FLOPS"), get_gpu("Lite+BW"), get_gpu("Lite")
    # the hand figure's inputs are the data files' rows: Lite+BW+FLOPS's fraction of the
    # H100 (700 W) and clock (gpus.toml), idle_fraction and clock_core_share, the clock above
    # the voltage floor (V follows it) (economics.toml)
    entry = tomllib.loads(GPUS.read_text())["gpu"]["Lite+BW+FLOPS"]
    r, i, c = entry["flops_multiplier"], parameter("idle_fraction"), parameter("clock_core_share")
    assert r > parameter("clock_voltage_floor")
    assert HAND_TDP == pytest.approx(get_gpu(entry["derive_from"]).tdp * entry["fraction"]
                                     * (i + (1 - i) * (c * r ** 3 + 1 - c)), rel=1e-12)
    assert flops.tdp == pytest.approx(HAND_TDP, abs=1e-9)
    # the bandwidth multipliers add no TDP: a quarter of the H100's 700 W
    assert bw.tdp == lite.tdp == get_gpu("Lite+NetBW").tdp == get_gpu("Lite+MemBW").tdp == 175.0
    # the same rating as the clock knob on Lite+BW: one law
    clocked = gpu_at_clock("Lite+BW", 1.2)
    assert clocked.flops_bf16 == pytest.approx(flops.flops_bf16)
    assert clocked.tdp == pytest.approx(flops.tdp, rel=1e-12)


def test_a_slower_clock_is_rated_below_its_fraction():
    # 0.8x, V at 0.8 (above the 0.7 floor): 350 x (0.115 + 0.885 x (0.75 x 0.512 + 0.25))
    slow = derive_gpu(get_gpu("H100-SXM"), "Slow", fraction=0.5, flops_multiplier=0.8)
    assert slow.tdp == pytest.approx(350 * (0.115 + 0.885 * (0.75 * 0.8 ** 3 + 0.25)),
                                     rel=1e-12)
    assert round(slow.tdp, 1) == 236.6


def test_every_lite_moves_an_hbm_byte_at_the_h100s_energy():
    # the draw of a stream at peak HBM rate over the bytes/s: m x (1 - i) x TDP / bandwidth
    m, i = 0.354, 0.115
    h100 = get_gpu("H100-SXM")
    joules = m * (1 - i) * h100.tdp / h100.hbm_bandwidth
    assert joules == pytest.approx(65.5e-12, rel=1e-3)   # 219.3 W / 3.35 TB/s
    entries = tomllib.loads(GPUS.read_text())["gpu"]
    c = parameter("clock_core_share")
    for name in ("Lite", "Lite+NetBW", "Lite+MemBW", "Lite+BW", "Lite+BW+FLOPS"):
        g = get_gpu(name)
        # above idle, which is its fraction of the H100's TDP's (a clock raised under load
        # does not raise it): Lite+BW+FLOPS 259.56 - 0.115 x 0.25 x 700 = 239.435 W; at its
        # fraction's clock the H100's energy a byte, at a raised one the law's share of it
        # (clock_core_share, the SMs issuing the loads) x r^3: 1.546x at 1.2x
        r = entries[name].get("flops_multiplier", 1.0)
        idle = i * entries[name]["fraction"] * h100.tdp
        assert hbm_share(g, m) * (g.tdp - idle) / g.hbm_bandwidth \
            == pytest.approx(joules * (c * r ** 3 + 1 - c), rel=1e-12), name
    assert hbm_share("Lite+MemBW", m) == pytest.approx(2 * m, rel=1e-12)
    # Lite+BW's 0.354 x 2, of a range the law scales as it scales the stream (0.458 while
    # its stream was charged by bytes at no clock)
    assert hbm_share("Lite+BW+FLOPS", m) == pytest.approx(2 * m, rel=1e-12)
    assert (HAND_TDP - i * 175) == pytest.approx(175 * (1 - i) * (c * 1.2 ** 3 + 1 - c))
    assert hbm_share("H100-SXM", m) == m


def test_a_memory_bound_step_draws_its_hbm_bytes():
    # batch-1 decode: the HBM stream is the step; Lite+MemBW streams twice the bytes a
    # second as the Lite, at the same energy a byte: above idle, twice the Lite's draw
    step = evaluate("Llama-3-8B", "Lite+MemBW", 1, 1)
    lite = evaluate("Llama-3-8B", "Lite", 1, 1)
    above = gpu_power("Lite+MemBW", "decode", step) - 0.115 * 175
    plain = activity(step) * 0.885 * 175   # the draw with the Lite's 0.354
    assert above == pytest.approx(activity(step, hbm_power_share=0.708) * 0.885 * 175,
                                  rel=1e-12)
    assert 1.8 < above / plain < 2.0   # the compute and collectives share keep theirs
    assert step.latency < lite.latency


def test_docs_give_the_rating():
    for path in (ECONOMICS, COMPUTE):
        text = _text(path)
        assert "175 W" in text and f"{HAND_TDP:.1f} W" in text, path
    readme = _text(README)
    assert "its 1.2x clock nothing" not in readme
    assert "`Lite+BW+FLOPS`'s 1.2x clock by the clock-power law" in readme
    assert "[economics](docs/economics.md#gpu-power)" in readme


def test_economics_figures_of_the_rated_cluster():
    text = _text(ECONOMICS)
    said = re.search(r"lite-ocs@Lite\+BW\+FLOPS --model Llama-3-70B --phase prefill` draws "
                     r"([\d.]+) kW of IT power, not the ([\d.]+) kW of a 175 W rating: "
                     r"([\d.]+)x the `h100-dgx` cluster's tokens/s/W, where at 175 W it led it "
                     r"by (\d+)%\. `--clock 1\.2` on `lite-ocs@Lite\+BW` serves the same "
                     r"configuration \(same tokens/s\) with the same GPU power but hosts sized "
                     r"for the nominal 175 W: ([\d.]+) kW, ([\d.]+)x", text)
    assert said, "docs/economics.md no longer gives the rated cluster's figures"
    rated_kw, flat_kw, ratio, lead, clocked_kw, clocked_ratio = map(float, said.groups())
    rated = cost_summary("lite-ocs@Lite+BW+FLOPS", "Llama-3-70B", "prefill")
    clocked = cost_summary("lite-ocs@Lite+BW", "Llama-3-70B", "prefill", clock=1.2)
    base = cost_summary("h100-dgx", "Llama-3-70B", "prefill")
    assert clocked.tokens_per_s == pytest.approx(rated.tokens_per_s, rel=1e-9)
    assert clocked.power_gpu == pytest.approx(rated.power_gpu, rel=0.02)
    assert round(rated.power_it / 1e3, 1) == rated_kw
    assert round(clocked.power_it / 1e3, 1) == clocked_kw
    assert round(rated.tokens_per_s_per_w / base.tokens_per_s_per_w, 2) == ratio
    assert round(clocked.tokens_per_s_per_w / base.tokens_per_s_per_w, 2) == clocked_ratio
    # the hosts are what differ: scaled by the rated TDP, not the nominal one
    assert rated.power_host / clocked.power_host == pytest.approx(HAND_TDP / 175, rel=0.01)
    # at 175 W: the GPUs' and hosts' draws (both linear in the TDP) scaled back to it
    at_175 = rated.power_it - (rated.power_gpu + rated.power_host) * (1 - 175 / HAND_TDP)
    assert round(at_175 / 1e3, 1) == flat_kw
    led = rated.tokens_per_s / at_175 / base.tokens_per_s_per_w
    assert round(100 * (led - 1)) == lead > 0
    assert rated.tokens_per_s_per_w < clocked.tokens_per_s_per_w < base.tokens_per_s_per_w
