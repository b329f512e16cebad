"""The tuner plugin rule, enforced once in the library (h329): a tuner beside a named algorithm
is refused by FabricCostModel and collective_setup (both took it silently, the tuner unused),
their messages naming parameters; the command line reports the same refusal with its flags.
A tuner now chooses per communicator on every path that costs an instance under auto: one
group alone, the survivors after ``--fail``, and each group of ``--all-groups`` (both were
refused), as AWS's plugin chooses per communicator from (collective, size, ranks, nodes).

Hand-derived from netmodel/data/collective_tuner_plugins.toml (aws-ofi-nccl p5, log2 of
bytes and ranks; 8 ranks a node, 3 nodes or more): 512 MiB on 32 ranks is (29, 5).
tree/LL128's right edge runs (31457280, 16) -> (37748736, 32), x = 25.17 at y = 5: outside.
ring/LL128's left edge meets y = 5 at its vertex (37748736, 32), x = 25.17; its right edge
(1 GiB, 17) -> (2 GiB, 64), (30, 4.087) -> (31, 6), meets y = 5 at 30 + 0.913 / 1.913 =
30.48. 25.17 < 29 < 30.48: ring/LL128. NCCL's own choice there (no tuner) is another
(hierarchical/Simple), so the plugin's is visibly applied. On 31 ranks (a GPU failed) ranks
!= 8 x nodes: the plugin leaves the choice to NCCL.

``rail-optimized:domains=8`` is 8 nodes of 8 H100; groups of 32 are nodes 0-3 and 4-7,
whose rings share no link (every hot link of the pair carries 1 group): together each runs
as alone, so the makespan of both equals one group's time with the plugin.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.degraded import degraded_cost
from netmodel.collectives.model import FabricCostModel
from netmodel.study.collective_setup import collective_setup
from netmodel.study.fabric_ref import resolve_fabric
from tests.netmodel.cli_helpers import one_line_error, run_cli

SPEC = "rail-optimized:domains=8"
TUNER = "aws-ofi-nccl:p5"
SIZE = 2 ** 29     # 512 MiB


def _graph():
    return resolve_fabric(SPEC).graph


def test_the_model_refuses_a_tuner_beside_a_named_algorithm():
    with pytest.raises(UserError) as exc:
        FabricCostModel(_graph(), algorithm="ring", tuner=TUNER, validated=True)
    msg = str(exc.value)
    assert f"tuner {TUNER!r} chooses under algorithm 'auto'" in msg and "'ring'" in msg
    assert "--" not in msg            # parameters, not flags
    # NCCL's own tuner beside it, or the plugin under auto, are taken
    assert FabricCostModel(_graph(), algorithm="ring", tuner="none", validated=True).tuner is None
    assert FabricCostModel(_graph(), tuner=TUNER, validated=True).tuner.label == TUNER


def test_collective_setup_refuses_it_naming_parameters():
    with pytest.raises(UserError) as exc:
        collective_setup(fabric=SPEC, algorithm="ring", tuner=TUNER)
    msg = str(exc.value)
    assert msg.startswith(f"tuner='{TUNER}' with algorithm='ring': ")
    assert msg.endswith("drop one, or give tuner='none'") and "--" not in msg


def test_the_command_line_says_it_with_its_flags():
    r = run_cli(["collective", "all-reduce", "--fabric", SPEC, "--group", "32", "--tuner",
                 TUNER, "--algorithm", "ring"])
    one_line_error(r, f"--tuner {TUNER} with --algorithm ring: tuner '{TUNER}' chooses under "
                   "algorithm 'auto'", "give --tuner none")


def test_every_group_at_once_takes_the_plugins_choice_per_group():
    tuned = FabricCostModel(_graph(), tuner=TUNER, validated=True)
    alone = tuned.cost("all-reduce", SIZE, 32)
    assert (alone.algorithm, alone.protocol) == ("ring", "LL128")
    conc = concurrent_cost(tuned, 32, "all-reduce", SIZE)
    assert len(conc.groups) == 2
    assert all(users == 1 for _, users in conc.hotspots)    # no link shared
    assert (conc.algorithm[0], conc.protocol[0]) == ("ring", "LL128")
    assert float(conc.makespan[0]) == pytest.approx(alone.time, rel=1e-12)
    assert conc.slowdown[:, 0].tolist() == pytest.approx([1.0, 1.0])
    # NCCL's own choice is another: the plugin's is the one applied
    own = concurrent_cost(FabricCostModel(_graph(), validated=True), 32, "all-reduce", SIZE)
    assert (own.algorithm[0], own.protocol[0]) != ("ring", "LL128")


def test_all_groups_on_the_command_line():
    def run(tuner):
        r = run_cli(["collective", "all-reduce", "--fabric", SPEC, "--group", "32", "--size",
                     "512MiB", "--tuner", tuner, "--all-groups", "--json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    doc = run(TUNER)
    assert doc["chosen_by"] == "tuner" and (doc["algorithm"], doc["protocol"]) == \
        ("ring", "LL128")
    both = doc["all_groups"]
    assert (both["groups"], both["algorithm"], both["protocol"]) == (2, "ring", "LL128")
    assert both["makespan"] == pytest.approx(doc["time"], rel=1e-12)
    assert both["slowdown_max"] == pytest.approx(1.0)
    assert run("none")["all_groups"]["algorithm"] != "ring"


def test_after_a_failure_the_plugin_chooses_for_the_survivors():
    # a failed GPU of the other group: 32 ranks on 4 nodes still, the plugin's ring/LL128
    deg = degraded_cost(_graph(), "all-reduce", SIZE, 32, nodes=["gpu40"], tuner=TUNER)
    assert (deg.healthy.algorithm, deg.healthy.protocol) == ("ring", "LL128")
    assert (deg.degraded.algorithm, deg.degraded.protocol) == ("ring", "LL128")
    assert deg.degraded.time == pytest.approx(deg.healthy.time, rel=1e-12)
    # gpu0 of the group fails: 31 ranks on 4 nodes, not 8 a node: NCCL's own choice, the
    # same as without the plugin
    deg = degraded_cost(_graph(), "all-reduce", SIZE, 32, nodes=["gpu0"], tuner=TUNER)
    untuned = degraded_cost(_graph(), "all-reduce", SIZE, 32, nodes=["gpu0"])
    assert len(deg.degraded.group) == 31
    assert deg.degraded.time == untuned.degraded.time
    assert (deg.degraded.algorithm, deg.degraded.protocol) == \
        (untuned.degraded.algorithm, untuned.degraded.protocol)


@pytest.mark.parametrize("failed, chosen_by, pair", [
    ("gpu40", "tuner", ("ring", "LL128")),
    ("gpu0", "auto", None),
])
def test_fail_on_the_command_line(failed, chosen_by, pair):
    r = run_cli(["collective", "all-reduce", "--fabric", SPEC, "--group", "32", "--size",
                 "512MiB", "--tuner", TUNER, "--fail", failed, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["chosen_by"] == chosen_by
    if pair is not None:
        assert (doc["algorithm"], doc["protocol"]) == pair
