"""The Monte Carlo's event limit names the warm-up when that is what runs past it (h256).

The draws start one repair time before the horizon, so the cluster begins in its steady
state. With a 100-year host repair a one-day run drew a century of failures and was told
to "give fewer trials or a shorter horizon" (4.8e+09 events at 5 trials); no horizon helps
there. Now the line says the span comes from the repair time.
"""

from __future__ import annotations

from tests.netmodel.cli_helpers import one_line_error, run_cli

BASE = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B", "-q",
        "--no-plot", "--rate", "gpu=1", "--rate", "host=1", "--rate", "cpo-engine=1"]


def test_a_long_repair_is_named_not_the_horizon():
    line = one_line_error(run_cli([*BASE, "--trials", "5", "--horizon", "1d",
                                   "--repair-time", "host=100y"]))
    assert line == ("error: 4.8e+09 failure events to simulate (5 trials); at most 2e+07: "
                    "the draws start one repair time (100 y) before the horizon (1 d) to "
                    "begin in the steady state; give fewer --trials or shorter --repair-time; "
                    "a smaller --cluster-gpus lowers the work too")   # flags (h502)


def test_a_long_horizon_is_still_named():
    # 24 h host repairs, a 10-year horizon: the horizon is the longer span
    line = one_line_error(run_cli([*BASE, "--trials", "5", "--horizon", "10y"]))
    assert line.endswith("; at most 2e+07: give fewer --trials or a shorter --horizon; a "
                         "smaller --cluster-gpus lowers the work too")   # flags (h502)
