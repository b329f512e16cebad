"""topology compare costs a scenario's all-reduce with the scenario's own collective model
(issue 11: the same configuration gets the same collective time from every command).

Before, `topology compare` built its own cost model for a scenario: the scenario's
calibration on its physical fabric, placed contiguously, every algorithm a candidate, so a
scenario with an ``[adjust]``, its own algorithm or its own placement got another all-reduce
time than `collective --scenario`, compare and the study charge (lite-hier with
bandwidth_scale 0.5: 20.30 ms at 1 GiB on 8 GPUs against 40.58 ms; with algorithm ring, 1 MiB
on 32 GPUs: 64.7 us against 208.7 us). Every shipped scenario's numbers were the same both
ways (all contiguous, auto, no [adjust]); the variants here fail on the old code (the
torus and instances = "all" ones guard the OCS circuits and the group alone).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.collective_setup import collective_setup
from netmodel.study.scenario_catalog import get_scenario, scenario_names
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_files import save_scenario
from netmodel.study.scenarios import Adjust
from netmodel.study.topology_compare import SIZES, compare_topologies


def _variants():
    hier, ocs = get_scenario("lite-hier"), get_scenario("lite-ocs")
    return {
        "adjusted": replace(hier, name="hier-adjusted",
                            adjust=Adjust(latency_scale=2.0, bandwidth_scale=0.5)),
        "ring": replace(hier, name="hier-ring", algorithm="ring"),
        "spread": replace(hier, name="hier-spread", placement="spread"),
        "torus": replace(ocs, name="ocs-torus", circuits="torus"),
        "all-at-once": replace(hier, name="hier-all", instances="all",
                               adjust=Adjust(hop_latency=1e-6)),
    }


VARIANTS = _variants()


def _saved(tmp_path, scenario):
    return str(save_scenario(scenario, tmp_path / f"{scenario.name}.toml"))


@pytest.mark.parametrize("key", list(VARIANTS))
@pytest.mark.parametrize("group", [8, 32])
def test_topology_compare_charges_the_scenarios_own_all_reduce(tmp_path, key, group):
    """The all-reduce rows of a scenario equal, bit for bit, what compare's
    ScenarioCollectives charges (the group alone) and what `collective --scenario` costs
    (CollectiveSetup.model), for every size of the rows."""
    s = VARIANTS[key]
    path = _saved(tmp_path, s)
    row = compare_topologies([path, "ring:n=64"], group=group).rows[0]
    alone = ScenarioCollectives(s.with_instances("alone"))
    setup = collective_setup(scenario=path)
    model = setup.model(group)
    assert [a.bytes for a in row.all_reduce] == list(SIZES)
    for a in row.all_reduce:
        want = float(alone.collective_time("all-reduce", float(a.bytes), group))
        assert a.time == want, (key, group, a.bytes)
        assert model.cost("all-reduce", a.bytes, model.group(group)).time == want
    assert any(n.startswith("collectives: the scenario's own model") for n in row.notes)


def test_adjust_moves_the_rows_by_its_bandwidth_scale(tmp_path):
    """bandwidth_scale 0.5 halves every link's bandwidth: 1 GiB on 8 GPUs is bandwidth-bound,
    so its busbw in the row halves (the latency terms, doubled by latency_scale 2, are under
    0.2 % of 20 ms); the physical rows (injection) stay as built."""
    adjusted = _saved(tmp_path, VARIANTS["adjusted"])
    plain, half = compare_topologies(["lite-hier", adjusted], group=8).rows
    assert plain.all_reduce[-1].busbw / half.all_reduce[-1].busbw == pytest.approx(2.0,
                                                                                  rel=2e-3)
    assert half.injection_per_gpu == plain.injection_per_gpu == 112.5e9


def test_cli_topology_compare_and_collective_scenario_agree(tmp_path):
    """One CLI run of each: `topology compare FILE ring:n=64 --group 32 --json` and
    `collective all-reduce --scenario FILE --group 32 --size N --json` give the same
    seconds for a scenario with an [adjust] and its own algorithm."""
    s = replace(VARIANTS["ring"], name="hier-ring-adjusted",
                adjust=Adjust(latency_scale=2.0, bandwidth_scale=0.5))
    path = _saved(tmp_path, s)
    runner = CliRunner()
    r = runner.invoke(cli, ["topology", "compare", path, "ring:n=64", "--group", "32",
                            "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["rows"]
    assert rows[0]["source"] == "scenario"
    for a in rows[0]["all_reduce"]:
        c = runner.invoke(cli, ["collective", "all-reduce", "--scenario", path, "--group",
                                "32", "--size", str(a["bytes"]), "--json"])
        assert c.exit_code == 0, c.output
        doc = json.loads(c.output)
        assert a["time"] == doc["time"] and a["algorithm"] == doc["algorithm"] == "ring"
    assert ("collectives: the scenario's own model, as collective --scenario and compare "
            "cost it (links scale-up; algorithm ring; its [adjust]: latency_scale 2, "
            "bandwidth_scale 0.5)") in rows[0]["notes"]


@pytest.mark.parametrize("name", scenario_names())
def test_shipped_scenarios_unchanged(name):
    """The shipped scenarios (contiguous, auto, no [adjust]) cost as before: their rows are
    compare's charge at every size on 8 GPUs."""
    row = compare_topologies([name, "ring:n=8"]).rows[0]
    c = ScenarioCollectives(name)
    for a in row.all_reduce:
        assert a.time == float(c.collective_time("all-reduce", float(a.bytes), 8))


def test_a_scenario_algorithm_without_all_reduce_is_refused_as_compare_refuses_it(tmp_path):
    """A scenario whose algorithm has no all-reduce (pairwise): refused in compare's line
    naming the scenario, exit 2 from the CLI (before 0f80206 it was costed as auto; at
    0f80206 refused in the cost model's line, which names no scenario)."""
    from compute.errors import UserError

    path = _saved(tmp_path, replace(get_scenario("lite-hier"), name="pw",
                                    algorithm="pairwise"))
    with pytest.raises(UserError, match=r"^scenario 'pw@Lite' runs every collective with "
                                        r"algorithm 'pairwise', which has no all-reduce"):
        compare_topologies([path, "ring:n=8"])
    r = CliRunner().invoke(cli, ["topology", "compare", path, "ring:n=8"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.startswith("error: scenario 'pw@Lite' runs every collective")
