"""``--repair-time CLASS=T``: a bare number is seconds (SI, as --detection and --warmup take
it), where a bare ``--rate`` is per hour and the catalog and tables speak of repairs in hours
(failures.toml ``repair_local_h = 24``). ``gpu-die=24`` is 24 s, not a day: the help says so,
and the outage the blast radius prints is detection + repair + reload + warm-up, by hand."""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import run_cli

ARGV = ["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--no-plot",
        "--json"]


def _gpu_die_outage(repair: str) -> tuple[float, float]:
    r = run_cli([*ARGV, "--repair-time", f"gpu-die={repair}"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    row = next(x for x in out["rows"] if x["cls"] == "gpu-die")
    return row["recovery_without_spares_s"], out["swap_s"]


@pytest.mark.parametrize("repair, seconds", [("24", 24.0), ("24s", 24.0), ("24h", 86_400.0),
                                             ("1d", 86_400.0), ("90min", 5_400.0)])
def test_repair_time_units_by_hand(repair, seconds):
    # without a spare the instance is down for detection (30 s) + the repair + the shard's
    # reload + warm-up (60 s); the swap is detection + reload + warm-up, so the reload is
    # swap - 90 s (failures.toml [recovery]: detection_s 30, warmup_s 60)
    down, swap = _gpu_die_outage(repair)
    reload = swap - 90.0
    assert 0 < reload < 1                  # 8.99 GB of Llama-3-70B at TP 16 over 92.7 GB/s
    assert down == pytest.approx(30.0 + seconds + reload + 60.0, rel=1e-12)


def test_help_says_a_bare_repair_time_is_seconds():
    for command in ("blast-radius", "availability"):
        r = run_cli([command, "--help"])
        assert r.exit_code == 0
        text = " ".join(r.output.split())
        start = text.index("--repair-time CLASS=T")
        assert "a bare number is seconds" in text[start:text.index("--detection", start)]
