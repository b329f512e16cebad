"""One die, one draw: a derived GPU whose flops_multiplier raises its clock is costed as its
derivation without it run at that clock (compute.power.unclocked), the form gpu_power and
gpu_at_clock's rating take every GPU in.

Lite+BW+FLOPS (gpus.toml: H100-SXM x 0.25, both bandwidths x2, flops x1.2) and Lite+BW run
under --clock 1.2 are the same hardware. The first had its HBM stream charged by bytes at no
clock (hbm_share 0.458 of a 239.4 W range), the second the law's share of it scaled by the
clock (0.708 of 154.9 W, x 1.546): Llama-3-8B batch-1 decode 131.8 W against 191.7 W. The
data side with the clock (P63: SM clock locking saves up to 32% of decode energy; a stream
charged by bytes alone would save nothing, tests/compute/test_idle_unclocked_h552.py), so
both now draw by the law. Hand figures from the rows: H100-SXM 700 W; economics.toml
idle_fraction 0.115, memory_power_share 0.354, clock_core_share 0.75, clock_voltage_floor
0.7 (1.2 and 0.96 above it: V follows the clock).
"""

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.power import activity, gpu_at_clock, gpu_power, hbm_share, unclocked
from compute.yield_model import parameter

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = tomllib.loads((ROOT / "compute" / "data" / "gpus.toml").read_text())["gpu"]
_MULTIPLIERS = ("hbm_bandwidth_multiplier", "network_bandwidth_multiplier",
                "hbm_capacity_multiplier")


def _twin_name(name: str) -> str:
    """The catalog GPU that is ``name``'s derivation with flops_multiplier 1."""
    entry = ENTRIES[name]
    for other, e in ENTRIES.items():
        if e.get("derive_from") == entry["derive_from"] \
                and e.get("fraction", 1.0) == entry.get("fraction", 1.0) \
                and e.get("flops_multiplier", 1.0) == 1.0 \
                and all(e.get(k, 1.0) == entry.get(k, 1.0) for k in _MULTIPLIERS):
            return other
    raise AssertionError(f"no un-clocked twin of {name} in the catalog")


#: catalog GPUs derived at a raised (or lowered) clock -> (their un-clocked twin, the clock)
CLOCKED = {name: (_twin_name(name), e["flops_multiplier"]) for name, e in ENTRIES.items()
           if "derive_from" in e and e.get("flops_multiplier", 1.0) != 1.0}
POINTS = [("Llama-3-8B", 1), ("Llama-3-8B", 2), ("Llama-3-70B", 8), ("Llama-3-70B", 16),
          ("GPT-3-175B", 32)]


def test_the_catalog_has_a_clocked_derivation_and_its_twin():
    assert CLOCKED == {"Lite+BW+FLOPS": ("Lite+BW", 1.2)}


@pytest.mark.parametrize("name", sorted(CLOCKED))
@settings(max_examples=40, deadline=None)
@given(point=st.sampled_from(POINTS), phase=st.sampled_from(["decode", "prefill"]),
       batch=st.integers(1, 256), slower=st.sampled_from([1.0, 0.5, 0.8, 1.1]))
def test_a_derived_clock_draws_as_its_twin_at_that_clock(name, point, phase, batch, slower):
    twin, r = CLOCKED[name]
    model, tp = point
    derived = get_gpu(name) if slower == 1.0 else gpu_at_clock(name, slower)
    clocked = gpu_at_clock(twin, r * slower)
    assert unclocked(derived)[1] == pytest.approx(r * slower, rel=1e-12)
    assert derived.tdp == pytest.approx(clocked.tdp, rel=1e-12)
    assert derived.flops_bf16 == pytest.approx(clocked.flops_bf16, rel=1e-12)
    assert hbm_share(derived, 0.354) == pytest.approx(hbm_share(twin, 0.354), rel=1e-12)
    assert gpu_power(derived, "idle") == pytest.approx(gpu_power(clocked, "idle"), rel=1e-12)
    steps = [evaluate(model, g, tp, batch, phase) for g in (derived, clocked)]
    assert steps[0].latency == pytest.approx(steps[1].latency, rel=1e-9)
    watts = [gpu_power(g, phase, s) for g, s in zip((derived, clocked), steps, strict=True)]
    assert watts[0] == pytest.approx(watts[1], rel=1e-9)
    assert gpu_power("Lite", "idle") <= watts[0] <= derived.tdp * (1 + 1e-12)


def test_hand_figures_llama3_8b_batch1_decode():
    i, m, c = (parameter(k) for k in ("idle_fraction", "memory_power_share",
                                      "clock_core_share"))
    nominal = 0.25 * get_gpu("H100-SXM").tdp                 # 175 W, Lite+BW's TDP
    idle = i * nominal                                        # 20.125 W
    law = c * 1.2 ** 3 + 1 - c                                # 1.546 (V follows the clock)
    rated = idle + (nominal - idle) * law                     # 259.56 W
    fast = get_gpu("Lite+BW+FLOPS")
    assert (round(idle, 3), round(law, 3), round(rated, 2)) == (20.125, 1.546, 259.56)
    assert fast.tdp == pytest.approx(rated, rel=1e-12)
    step = evaluate("Llama-3-8B", fast, 1, 1)
    # memory-bound: HBM at Lite+BW's share, 0.354 x 2 = 0.708, of the 154.875 W range
    a = activity(step, hbm_power_share=2 * m)
    assert round(a, 3) == 0.716
    watts = gpu_power(fast, "decode", step)
    assert watts == pytest.approx(idle + (nominal - idle) * a * law, rel=1e-12)
    assert round(watts, 1) == 191.7       # 20.125 + 154.875 x 0.716 x 1.546
    # the same die as --clock 1.2 on Lite+BW
    clocked = gpu_at_clock("Lite+BW", 1.2)
    assert watts == pytest.approx(
        gpu_power(clocked, "decode", evaluate("Llama-3-8B", clocked, 1, 1)), rel=1e-12)
    # charged by its bytes at no clock (0.354 x 2 x 154.875 / 239.435 = 0.458) it was 131.8 W
    old = idle + (rated - idle) * activity(step, hbm_power_share=2 * m * (nominal - idle)
                                           / (rated - idle))
    assert round(old, 1) == 131.8
    # at 0.8x of its clock: Lite+BW at 0.96x, 20.125 + 154.875 x (0.75 x 0.96^3 + 0.25)
    assert round(gpu_at_clock(fast, 0.8).tdp, 2) == round(
        idle + (nominal - idle) * (c * 0.96 ** 3 + 1 - c), 2) == 161.61
