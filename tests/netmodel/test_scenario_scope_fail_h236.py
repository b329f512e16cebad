"""``collective --scenario ... --fail`` costs with the scenario's scope (120d36b: a
scenario's [collective] algorithm governs NCCL's collectives; all-to-all and send-recv
choose as auto). The healthy and degraded sides (collectives.degraded.degraded_cost) were
built without it: under a scenario of algorithm = "ring", 'collective all-to-all --fail
leaf0' said "algorithm 'ring' does not implement 'all-to-all'" (exit 2) where the same
command without --fail costed it as auto (h236's review of 120d36b). Now both sides choose
as auto: the times equal the auto scenario's to the bit; the all-reduce stays the ring's;
the caller's own --algorithm ring still governs every op (refused for all-to-all)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.scenario_catalog import get_scenario


def _scenario(tmp_path, algorithm: str) -> str:
    s = get_scenario("h100-dgx")
    path = tmp_path / f"h236-{algorithm}.toml"
    path.write_text(s.to_toml().replace('algorithm = "auto"', f'algorithm = "{algorithm}"')
                    .replace('name = "h100-dgx"', f'name = "h236-{algorithm}"'))
    return str(path)


def _run(*args: str):
    return CliRunner().invoke(cli, ["collective", *args, "--group", "16", "--size", "1MiB",
                                    "--fail", "leaf0", "--json"])


def test_a_failure_under_a_ring_scenario_costs_sends_as_auto(tmp_path):
    ring, auto = _scenario(tmp_path, "ring"), _scenario(tmp_path, "auto")
    for op in ("all-to-all", "send-recv"):
        r, a = _run(op, "--scenario", ring), _run(op, "--scenario", auto)
        assert r.exit_code == 0, r.output
        assert a.exit_code == 0, a.output
        dr, da = json.loads(r.output), json.loads(a.output)
        assert dr["failures"]["healthy_time"] == da["failures"]["healthy_time"]
        assert dr["failures"]["slowdown"] == da["failures"]["slowdown"]
        assert dr["failures"]["healthy_algorithm"] != "ring"


def test_the_all_reduce_stays_the_rings_and_the_callers_algorithm_every_op(tmp_path):
    ring = _scenario(tmp_path, "ring")
    r = _run("all-reduce", "--scenario", ring)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["failures"]["healthy_algorithm"] == "ring"
    r = _run("all-to-all", "--scenario", "h100-dgx", "--algorithm", "ring")
    assert r.exit_code == 2
    assert "algorithm 'ring' does not implement 'all-to-all'" in r.output
