"""collective --fail: the alternatives, --all-groups and --plot read the failed fabric in
the ring order that gave the degraded time, so the chosen algorithm's alternative is that
time (they read the group's order, where a greedy one had won: the chosen algorithm's own
alternative slower than the time printed beside it)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli

CASES = [
    # (op, fabric, group, placement args, failed link)
    ("send-recv", "torus:dims=3x5", "15", [], "gpu4/gpu9"),
    ("broadcast", "ring:n=8", "6", ["--placement", "random", "--seed", "6"], "gpu0/gpu1"),
    ("all-reduce", "torus:dims=3x4", "5", ["--placement", "random", "--seed", "30"],
     "gpu0/gpu3"),
    ("reduce-scatter", "ring:n=8", "5", ["--placement", "random", "--seed", "36"],
     "gpu1/gpu2"),
]


@pytest.mark.parametrize(("op", "fabric", "group", "place", "failed"), CASES)
def test_the_chosen_algorithms_alternative_is_the_degraded_time(op, fabric, group, place,
                                                                 failed):
    res = CliRunner().invoke(cli, ["collective", op, "--fabric", fabric, "--group", group,
                                   *place, "--size", "64MiB", "--fail", failed,
                                   "--all-groups", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    time = doc["time"]
    assert doc["alternatives"][doc["algorithm"]] == pytest.approx(time, rel=1e-12)
    assert min(doc["alternatives"].values()) == pytest.approx(time, rel=1e-12)
    # one group of the whole fabric or one instance alone: every group at once is it
    if doc["all_groups"]["groups"] == 1:
        assert doc["all_groups"]["makespan"] == pytest.approx(time, rel=1e-12)
