"""What a user of Lite-GPUs on a switch of their own, or on a torus, sees of the tier-0
class ``nvswitch`` (h256): the class is every tier-0 switch, whoever makes it, and says so
in its description (the JSON's and CSV's ``description``: it said "NVSwitch" alone); a
torus has no switch and so no such class, and without server labels its 32 Lites are one
host (docs/reliability.md, Failure domains).
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import run_cli
from tests.netmodel.scenario_helpers import write_scenario


def _rows(tmp_path, name, builder, **args):
    path = write_scenario(tmp_path, name, "Lite", {"builder": builder, **args, "gpu": "$gpu"},
                          description="a user's fabric of Lites", links="as-built")
    r = run_cli(["blast-radius", "--scenario", str(path), "--model", "Llama-3-8B", "--json",
                 "--no-plot"])
    assert r.exit_code == 0, r.output
    return {row["cls"]: row for row in json.loads(r.output)["rows"]}


def test_a_switch_of_lites_is_class_nvswitch_described_as_any_tier0_switch(tmp_path):
    rows = _rows(tmp_path, "ss-lite", "single-switch", n=32)
    sw = rows["nvswitch"]
    assert sw["description"].startswith("scale-up switch (any tier-0 switch; NVSwitch on "
                                        "NVIDIA systems")
    assert (sw["count"], sw["gpus_mean"]) == (1, 32)
    assert sw["tokens_lost_pct_mean"] == pytest.approx(100, rel=1e-12)


def test_a_torus_of_lites_has_no_switch_class_and_one_host(tmp_path):
    rows = _rows(tmp_path, "torus-lite", "torus", dims="4x4x2")
    assert "nvswitch" not in rows and "leaf" not in rows
    assert rows["copper-end"]["instances_down_mean"] == 0
    # 96 cables, 2 ends each: every Lite has 2 cables per dimension (a side of 2 wires its
    # pair twice, around and back), 32 x 6 / 2
    assert rows["copper-end"]["count"] == 192
    assert (rows["host"]["count"], rows["host"]["gpus_mean"]) == (1, 32)
    assert rows["host"]["tokens_lost_pct_mean"] == pytest.approx(100, rel=1e-12)
