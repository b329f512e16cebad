"""GPU power: phase draws against the published figures they rest on, the clock-power law
by hand, and invariants."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.hardware import get_gpu
from compute.power import (
    POWER_STATES,
    ClockPowerLaw,
    clock_of,
    clock_sweep,
    gpu_at_clock,
    gpu_power,
    nominal_tdp,
    overclocked_lite,
)

CSV = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "power_cost_yield.csv"


def _rows():
    if not CSV.exists():
        pytest.skip(f"reference data absent: {CSV}")
    with CSV.open() as fh:
        return {r["id"]: r for r in csv.DictReader(x for x in fh if not x.startswith("#"))}


def test_h200_phase_draws_match_published_measurements():
    rows = _rows()
    h200 = get_gpu("H200-SXM")
    # H200 idles at 80.3 W (P64); decode draws 137-300 W (P63)
    assert "80.3 W" in rows["P64"]["what"]
    assert gpu_power(h200, "idle") == pytest.approx(80.3, abs=0.5)
    low, high = (float(v) for v in rows["P63"]["value"].split("-"))
    assert low <= gpu_power(h200, "decode") <= high
    # decode far below TDP, prefill near it
    assert gpu_power(h200, "decode") < 0.5 * h200.tdp < gpu_power(h200, "prefill") <= h200.tdp


def test_clock_power_law_by_hand():
    law = ClockPowerLaw(core_share=0.75, voltage_floor=0.7)
    # r = 0.8: V = 0.8, core 0.8^3 = 0.512 -> 0.75 * 0.512 + 0.25 = 0.634
    assert law.scale(0.8) == pytest.approx(0.634)
    # r = 0.5: V at the floor 0.7 -> core 0.5 * 0.49 = 0.245 -> 0.43375
    assert law.scale(0.5) == pytest.approx(0.43375)
    # r = 1.2: 1.2^3 = 1.728 -> 1.546
    assert law.scale(1.2) == pytest.approx(1.546)
    # H100 decode at 0.8: idle 80.5 W + (299.6 - 80.5) x 0.634
    assert gpu_power("H100-SXM", "decode", clock=0.8, law=law) == \
        pytest.approx(80.5 + (299.6 - 80.5) * 0.634)


def test_gpu_at_clock_scales_flops_not_memory_or_network():
    base = get_gpu("Lite")
    g = gpu_at_clock(base, 0.8)
    assert g.name == "Lite@0.8x" and clock_of(g) == 0.8
    assert g.flops_bf16 == pytest.approx(0.8 * base.flops_bf16)
    assert g.flops_fp8 == pytest.approx(0.8 * base.flops_fp8)
    assert (g.hbm_bandwidth, g.scaleup_bandwidth, g.scaleout_bandwidth, g.sms) == \
        (base.hbm_bandwidth, base.scaleup_bandwidth, base.scaleout_bandwidth, base.sms)
    assert g.tdp == pytest.approx(175 * (0.115 + 0.885 * ClockPowerLaw().scale(0.8)))
    assert nominal_tdp(g) == pytest.approx(175)
    # a clocked spec carries its clock: same draw as the nominal spec with clock=
    assert gpu_power(g, "decode") == pytest.approx(gpu_power(base, "decode", clock=0.8))
    assert gpu_at_clock(base, 1.0) is base


def test_overclocked_lite_costs_power():
    lite = overclocked_lite(1.2)
    assert lite.flops_bf16 == pytest.approx(1.2 * get_gpu("Lite").flops_bf16)
    assert lite.tdp > get_gpu("Lite").tdp * 1.2  # superlinear: V rises with f
    assert gpu_power(lite, "prefill") > gpu_power("Lite", "prefill")


def test_clock_sweep_on_memory_bound_decode_prefers_a_lower_clock():
    pts = clock_sweep("Llama-3-70B", "H100-SXM", "decode", clocks=(0.5, 0.7, 1.0))
    assert all(p.best is not None for p in pts)
    # decode is memory-bound: 0.7x clock keeps most of the throughput for far less power
    assert pts[1].best.tokens_per_s > 0.8 * pts[2].best.tokens_per_s
    assert pts[1].tokens_per_joule > pts[2].tokens_per_joule
    d = pts[2].to_dict()
    assert d["tokens_per_joule"] == pytest.approx(d["tokens_per_s"] / (d["tp"] * 299.6))


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.05, max_value=1.5), st.floats(min_value=0.05, max_value=1.5),
       st.sampled_from(sorted(POWER_STATES)), st.sampled_from(["H100-SXM", "Lite", "B200-HGX"]))
def test_power_grows_with_clock_and_never_below_idle(r1, r2, state, gpu):
    lo, hi = sorted((r1, r2))
    idle = gpu_power(gpu, "idle")
    p_lo, p_hi = gpu_power(gpu, state, clock=lo), gpu_power(gpu, state, clock=hi)
    assert idle - 1e-9 <= p_lo <= p_hi + 1e-9
    assert gpu_power(gpu, "idle", clock=hi) == pytest.approx(idle)


@pytest.mark.parametrize("call, fragment", [
    (lambda: gpu_power("H100-SXM", "training"), "unknown power state 'training'"),
    (lambda: gpu_power("H100-SXM", "decode", clock=3.0), "outside the modelled range"),
    (lambda: gpu_power("H100-SXM", "decode", clock=float("nan")), "clock must be a finite"),
    (lambda: gpu_power("H100-SXM", "decode", clock=-1), "clock must be a finite"),
    (lambda: gpu_power("H100-SXM", "decode", decode_fraction=-0.1), "decode_fraction must be"),
    (lambda: ClockPowerLaw(core_share=2.0), "core_share must be <= 1"),
    (lambda: ClockPowerLaw(ratio_min=1.2), "clock ratios need"),
    (lambda: overclocked_lite(0.9), "clock ratio > 1"),
    (lambda: gpu_at_clock(gpu_at_clock("Lite", 0.8), 0.9), "already runs at another clock"),
])
def test_bad_input(call, fragment):
    with pytest.raises(UserError, match=fragment):
        call()
