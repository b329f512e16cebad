"""A GPU run at another clock keeps its nominal TDP (a published constant) whatever idle share
a caller sweeps: compute.power.nominal_tdp once undid the clocked spec's rated power with the
swept idle share, not the one the spec was made with."""

from __future__ import annotations

import pytest

from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.power import activity, gpu_at_clock, gpu_power, nominal_tdp


def test_a_clocked_gpu_keeps_its_nominal_tdp_under_an_idle_share_sweep():
    lite = get_gpu("Lite")
    fast = gpu_at_clock("Lite", 1.2)
    # the clock-power law at the defaults (clock_core_share 0.75, voltage floor 0.7):
    # 0.75 x 1.2 x 1.2^2 + 0.25 = 1.546 of the above-idle draw
    scale = 0.75 * 1.2 * 1.2 ** 2 + 0.25
    assert fast.tdp == pytest.approx(lite.tdp * (0.115 + 0.885 * scale), rel=1e-12)
    for idle in (0.05, 0.115, 0.5):
        assert nominal_tdp(fast, idle_fraction=idle) == lite.tdp
        # idle draws the share of the nominal TDP (the old code: 0.5 x 1.165 x TDP at 0.5)
        assert gpu_power(fast, "idle", idle_fraction=idle) == pytest.approx(idle * lite.tdp,
                                                                            rel=1e-12)
    step = evaluate("Llama-3-8B", fast, 1, 8)
    a = activity(step)
    want = 0.5 * lite.tdp + 0.5 * lite.tdp * a * scale
    assert gpu_power(fast, "decode", step, idle_fraction=0.5) == pytest.approx(want, rel=1e-12)
