"""A failure time below the smallest float (``1e-320``: it underflows) is refused, told its
range (0 in it; once 'write 0 for zero'), as every reader whose value may be 0 says it: --detection, --warmup
and --repair-time took it silently as no time (blast-radius printed a swap of 60.1 s).
An --area-share, --clock or --alpha below it is told the range its reader takes, 0 being
outside it."""

from __future__ import annotations

import pytest

from netmodel.study.reliability_catalog import parse_duration
from tests.netmodel.cli_helpers import one_line_error, run_cli

HEAD = "below the smallest number netmodel reads (2.225e-308)"


@pytest.mark.parametrize("flag, value, shown", [
    ("--detection", "1e-320", "--detection '1e-320'"),
    ("--warmup", "1e-400min", "--warmup '1e-400min'"),
    ("--repair-time", "gpu-die=1e-320", "--repair-time gpu-die '1e-320'"),
])
def test_a_time_below_the_smallest_number_is_refused(flag, value, shown):
    r = run_cli(["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-70B",
                 "--no-plot", flag, value])
    assert r.exit_code == 2
    name = shown.rsplit(" '", 1)[0]   # the flag, and a --repair-time's part
    assert one_line_error(r) == f"error: {shown} is {HEAD}; {name} must be a duration from 0 to 100 y"


def test_zero_spelt_any_way_is_still_zero():
    assert [parse_duration(t, "--detection", allow_zero=True)
            for t in ("0", "0s", "0e5min", "-0")] == [0.0] * 4
    assert parse_duration("1e-300s", "--detection", allow_zero=True) == 1e-300


def test_an_area_share_below_the_smallest_number_is_told_its_range():
    # 0 is outside --area-share's range (at least the HBM share): it was told to write 0
    # for zero, which the catalog then refused
    from netmodel.study.reliability_catalog import catalog

    argv = ["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--no-plot",
            "--area-share"]
    hbm = catalog().hbm_share
    r = run_cli([*argv, "1e-320"])
    assert r.exit_code == 2
    assert one_line_error(r) == (
        "error: --area-share '1e-320' is below the smallest number netmodel reads "
        f"(2.225e-308), and --area-share may not be 0: it must be in [{hbm:g}, 1] (at least "
        "the HBM share of the GPU rate)")
    zero = run_cli([*argv, "0"])   # what 0 itself is told: the same range
    assert zero.exit_code == 2
    assert one_line_error(zero).endswith(f"must be in [{hbm:g}, 1] (at least the HBM share "
                                         "of the GPU rate), got 0.0")


def test_a_clock_below_the_smallest_number_is_told_the_law_s_range():
    # 0 is outside the clock-power law's range: the line said 'a finite number > 0'
    from compute.clock_power import ClockPowerLaw

    law = ClockPowerLaw()
    r = run_cli(["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--clock",
                 "1e-320"])
    assert r.exit_code == 2
    assert one_line_error(r) == (
        "error: --clock '1e-320' is below the smallest number netmodel reads (2.225e-308), "
        f"and --clock may not be 0: it must be in the modelled range [{law.ratio_min:g}, "
        f"{law.ratio_max:g}] x nominal")
    past = run_cli(["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--clock",
                    "2"])   # the same words the law refuses a ratio past it with
    assert one_line_error(past) == (f"error: --clock '2': clock 2.0 is outside the modelled "
                                    f"range [{law.ratio_min:g}, {law.ratio_max:g}] x nominal")


def test_an_alpha_below_the_smallest_number_is_told_its_range():
    # the negative binomial's clustering takes MIN_ALPHA to MAX_ALPHA: 0 is outside it
    from compute.die_yield import MAX_ALPHA, MIN_ALPHA

    r = run_cli(["yield", "--area", "814", "--alpha", "1e-320"])
    assert r.exit_code == 2
    assert one_line_error(r) == (
        "error: --alpha '1e-320' is below the smallest number netmodel reads (2.225e-308), "
        f"and --alpha may not be 0: it must be a finite number >= {MIN_ALPHA:g} and <= "
        f"{MAX_ALPHA:g}")
    past = run_cli(["yield", "--area", "814", "--alpha", "1000"])   # the library's words
    assert one_line_error(past) == (f"error: --alpha '1000': alpha must be a finite number "
                                    f">= {MIN_ALPHA:g} and <= {MAX_ALPHA:g}, got 1000.0")
