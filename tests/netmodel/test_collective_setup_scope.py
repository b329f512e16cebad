"""`collective --scenario X --algorithm Y` on a scenario whose instances run all at once
(issue 11: the same configuration gets the same collective time from every command).

The group alone (CollectiveSetup.model) costs the caller's own --algorithm on every op
(scope "every-op": an op it does not implement is refused), but CollectiveSetup.at_once_time
built compare's ScenarioCollectives with the scenario's scope ("collectives", NCCL_ALGO's:
all-to-all and send-recv choose as auto). With --algorithm ring, h100-dgx's all-to-all of
1 MiB on 8 GPUs was refused alone and charged 13.88 us at once (auto's direct). Where the
named algorithm implements the op both scopes agree, so no time moves; these tests fail on
the old code (at_once_time returned a time, ScenarioCollectives took no scope).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from compute.errors import UserError
from netmodel.study.collective_setup import collective_setup
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

MiB = 2.0**20


def _all(base: str, algorithm: str = "auto"):
    return replace(get_scenario(base), name=f"{base}-all-{algorithm}", instances="all",
                   algorithm=algorithm)


@pytest.mark.parametrize("base", ["h100-dgx", "lite-hier"])
@pytest.mark.parametrize("algorithm, op", [("ring", "all-to-all"), ("tree", "send-recv"),
                                           ("pairwise", "send-recv")])
def test_a_named_algorithm_refuses_the_op_at_once_as_alone(base, algorithm, op):
    """The caller's algorithm that has no ``op``: refused at once with the line the group
    alone gives."""
    setup = collective_setup(scenario=_all(base), algorithm=algorithm)
    m = setup.model(8)
    with pytest.raises(UserError) as alone:
        m.cost(op, MiB, m.group(8))
    with pytest.raises(UserError) as at_once:
        setup.at_once_time(op, MiB, 8)
    assert str(at_once.value) == str(alone.value) == (
        f"algorithm {algorithm!r} does not implement {op!r}; algorithms for {op!r}: "
        + ("'direct', 'pairwise'" if op == "all-to-all" else "'direct'"))


@pytest.mark.parametrize("base", ["h100-dgx", "lite-hier"])
def test_a_named_algorithm_that_has_the_op_costs_it_at_once(base):
    """--algorithm pairwise for all-to-all: alone and at once both pairwise's (compare's
    charge of the scenario with algorithm pairwise governing every op), and every instance
    at once is never faster than one alone."""
    setup = collective_setup(scenario=_all(base), algorithm="pairwise")
    for g in (8, 16):
        m = setup.model(g)
        alone = m.cost("all-to-all", MiB, m.group(g))
        at_once = setup.at_once_time("all-to-all", MiB, g)
        assert alone.algorithm == "pairwise"
        assert at_once >= alone.time
        own = ScenarioCollectives(replace(_all(base), algorithm="pairwise"), scope="every-op")
        assert at_once == float(own.collective_time("all-to-all", MiB, g))


def test_the_scenarios_own_algorithm_keeps_its_scope():
    """A scenario of algorithm ring (no --algorithm given): all-to-all chooses as auto, alone
    and at once, the same seconds as the auto scenario's, bit for bit."""
    ring, auto = collective_setup(scenario=_all("h100-dgx", "ring")), \
        collective_setup(scenario=_all("h100-dgx"))
    for g in (8, 16):
        m, a = ring.model(g), auto.model(g)
        assert m.cost("all-to-all", MiB, m.group(g)).time == \
            a.cost("all-to-all", MiB, a.group(g)).time
        assert ring.at_once_time("all-to-all", MiB, g) == auto.at_once_time("all-to-all",
                                                                            MiB, g)


def test_scope_is_checked():
    with pytest.raises(UserError, match="scope must be one of 'collectives', 'every-op', "
                                        "got 'all'"):
        ScenarioCollectives("lite-flat", scope="all")
    assert repr(ScenarioCollectives("lite-flat", scope="every-op")) == \
        "ScenarioCollectives('lite-flat@Lite', scope='every-op')"


@pytest.mark.parametrize("op", ["all-to-all", "send-recv"])
def test_all_groups_keeps_the_scenarios_scope(tmp_path, op):
    """`collective OP --scenario X --all-groups` on a scenario of algorithm ring (instances
    = all): --all-groups charges the makespan the group's at-once line gives, bit for bit,
    where it said "algorithm 'ring' does not implement ..." (exit 2) and the same command
    without --all-groups costed it as auto (fails on the old code)."""
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli
    from netmodel.study.scenario_files import save_scenario

    path = str(save_scenario(_all("lite-hier", "ring"), tmp_path / "ring.toml"))
    r = CliRunner().invoke(cli, ["collective", op, "--scenario", path, "--group", "8",
                                 "--size", "1MiB", "--all-groups", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["all_groups"]["makespan"] == doc["instances_all"]["time"]
    assert doc["algorithm"] == doc["all_groups"]["algorithm"] == "direct"
