"""One rule for a tuner plugin beside a named algorithm (h309): a scenario file naming both
is refused (netmodel.study.scenarios), and so are ``netmodel collective`` / ``costs`` given
``--tuner`` with ``--algorithm`` (they ran, the tuner silently unused); ``chosen_by`` is the
model's own answer (FabricCostModel.tuner_choice), not the text's wording.

Regions read by hand from netmodel/data/collective_tuner_plugins.toml (aws-ofi-nccl p5, log2
of bytes and ranks), as tests/netmodel/test_collective_tuner_h292.py derives them.
"""

from __future__ import annotations

import json

import pytest

from netmodel.collectives.tuner_plugin import tuner_refusal
from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import efa_tuned_toml

SPEC = "rail-optimized:domains=8"      # 8 x 8 H100: a group of 64 spans 8 nodes
TUNER = "aws-ofi-nccl:p5"


@pytest.mark.parametrize("command", [
    ["collective", "all-reduce", "--group", "64", "--size", "512MiB"],
    ["costs", "--ops", "all-reduce", "--group", "64", "--sizes", "512MiB"],
])
def test_tuner_beside_a_named_algorithm_is_refused_on_the_command_line(command):
    r = run_cli([*command, "--fabric", SPEC, "--tuner", TUNER, "--algorithm", "ring"])
    one_line_error(r, f"--tuner {TUNER} with --algorithm ring",
                   tuner_refusal(TUNER, "ring"), "--tuner none")


def test_the_same_combination_in_a_scenario_file_is_refused(tmp_path):
    path = tmp_path / "ring.toml"
    path.write_text(efa_tuned_toml(TUNER).replace('algorithm = "auto"', 'algorithm = "ring"'))
    r = run_cli(["collective", "all-reduce", "--scenario", path, "--group", "32"])
    one_line_error(r, "[collective]", tuner_refusal(TUNER, "ring"))
    # a tuned scenario overridden with a named algorithm is that same combination
    path.write_text(efa_tuned_toml(TUNER))
    r = run_cli(["collective", "all-reduce", "--scenario", path, "--group", "32",
                 "--algorithm", "ring"])
    one_line_error(r, f"tuner {TUNER} with --algorithm ring", tuner_refusal(TUNER, "ring"),
                   "--tuner none")
    # ... and --tuner none with it runs ring
    r = run_cli(["collective", "all-reduce", "--scenario", path, "--group", "32",
                 "--algorithm", "ring", "--tuner", "none", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["algorithm"] == "ring"


@pytest.mark.parametrize("group, size, chosen_by", [
    # 512 MiB on 64 ranks = (29, 6): inside ring/LL128 (26.81 .. 31 at y = 6)
    (64, "512MiB", "tuner"),
    # 1500 MiB on 32 ranks = (30.55, 5): right of ring/LL128's edge (1 GiB, 17) -> (2 GiB,
    # 64), which crosses y = 5 at 2^30.48, left of ring/Simple's: NCCL's own choice
    (32, "1500MiB", "auto"),
])
def test_chosen_by_is_the_models_answer(group, size, chosen_by):
    r = run_cli(["collective", "all-reduce", "--fabric", SPEC, "--group", group, "--size",
                 size, "--tuner", TUNER, "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["chosen_by"] == chosen_by
