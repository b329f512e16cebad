"""Review of the CLI's parsers declared once (ReadAs) and its library refusals said with the
flag (h457).

- A --detection, --warmup or --repair-time past the catalog's longest time (a century) was
  refused in the catalog's seconds: ``--detection '1e30y': detection time must be a number
  of seconds from 0 to 3.156e+09 (a century), got 3.15576e+37`` for a time typed in years
  (at 39b7ada the CLI said 'allowed: 0 to 100y'). The check is still the catalog's alone;
  the refusal now gives the longest time taken in the unit typed. Expected limits worked by
  hand: 100 y = 100 x 365.25 d = 36,525 d = 876,600 h = 52,596,000 min = 3,155,760,000 s
  = 5,217.857 w.
- ``--rate gpu=5`` was refused as ``gpu_rate_per_hour must be a number from 0 to 1 per
  hour``: the library's parameter, no flag of the command line (39b7ada: '--rate gpu '5' is
  above 1 per hour'). Now the class as typed: ``rate of gpu (the reference GPU's whole
  rate) must be ...``, as ``--rate nic=2`` reads ``rate of nic must be ...``.
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

AVAIL = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B", "-q"]
TAIL = "is longer than 100 y, the longest time taken; allowed: 0 to "


@pytest.mark.parametrize("args, line", [
    (["--detection", "1e30y"], "--detection '1e30y': detection time {}100y"),
    (["--detection=200Y"], "--detection '200Y': detection time {}100Y"),
    (["--warmup", "1e10"], "--warmup '1e10': warm-up time {}3.15576e+09s"),
    (["--warmup", "3.2e9s"], "--warmup '3.2e9s': warm-up time {}3.15576e+09s"),
    (["--detection", "1e6h"], "--detection '1e6h': detection time {}876600h"),
    (["--warmup", "6e7min"], "--warmup '6e7min': warm-up time {}5.2596e+07min"),
    (["--detection", "6000w"], "--detection '6000w': detection time {}5217.86w"),
    (["--repair-time", "gpu-die=1e30d"],
     "--repair-time 'gpu-die=1e30d': repair time of gpu-die {}36525d"),
    (["--repair-time", "nic=101y"], "--repair-time 'nic=101y': repair time of nic {}100y"),
])
def test_a_time_past_a_century_is_refused_in_the_unit_typed(tmp_path, args, line):
    out = tmp_path / "o"
    got = one_line_error(run_cli([*AVAIL, *args, "--out", out]))
    assert got == "error: " + line.format(TAIL)
    assert not out.exists()


@pytest.mark.parametrize("typed, taken", [
    ("36525d", True), ("36526d", False), ("876600h", True), ("876601h", False),
    ("3155760000", True), ("3155760001", False), ("100y", True), ("100.001y", False),
])
def test_the_century_is_the_catalog_s_in_every_unit(typed, taken):
    """What the CLI takes is what the catalog takes: the CLI says the limit, never checks it."""
    from compute.errors import UserError
    from netmodel.cli.reliability_inputs import _seconds, _time_refused_as
    from netmodel.study.reliability_catalog import catalog

    try:
        with _time_refused_as("--warmup", typed, "warm-up time"):
            cat = catalog().with_(warmup_s=_seconds(typed, "--warmup"))
    except UserError as exc:
        assert not taken, exc
        assert str(exc).startswith(f"--warmup '{typed}': warm-up time {TAIL}")
    else:
        assert taken
        assert cat.warmup_s == pytest.approx(3155760000)   # each taken one is the century


@pytest.mark.parametrize("typed, got", [("gpu=5", "5.0"), ("gpu=1e300", "1e+300")])
def test_the_gpu_s_rate_is_refused_as_the_class_typed(tmp_path, typed, got):
    line = one_line_error(run_cli([*AVAIL, "--rate", typed, "--out", tmp_path / "o"]))
    assert line == (f"error: --rate '{typed}': rate of gpu (the reference GPU's whole rate) "
                    f"must be a number from 0 to 1 per hour, got {got}")
    assert "gpu_rate_per_hour" not in line


def test_a_gpu_rate_of_one_per_hour_is_taken():
    """The bound is the catalog's, taken at it (1 per hour), as before."""
    from netmodel.cli.reliability_inputs import _gpu_rate
    from netmodel.study.reliability_catalog import catalog

    assert _gpu_rate(catalog(), 1.0).gpu_rate_per_hour == 1.0
    assert _gpu_rate(catalog(), 0.0).gpu_rate_per_hour == 0.0
