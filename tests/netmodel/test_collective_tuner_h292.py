"""A tuner plugin as a first-class setting (h292, issue 11 item 2): ``netmodel collective
--tuner``, a scenario's ``[collective] tuner`` and FabricCostModel's ``tuner`` cost one way,
and every command charges a scenario's all-reduce the same.

The expected choices are read by hand from the aws-ofi-nccl p5 vertices in
netmodel/data/collective_tuner_plugins.toml (log2 of bytes, log2 of ranks); the expected
times are the model's own for the chosen (algorithm, protocol): its fastest line of that pair.
"""

from __future__ import annotations

import json
import math

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import efa_tuned_toml

MIB = 2 ** 20
SPEC = "rail-optimized:domains=8"      # 8 x 8 H100: a group of 64 spans 8 nodes
TUNER = "aws-ofi-nccl:p5"


@pytest.fixture(scope="module")
def plain():
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    return FabricCostModel(build(SPEC), validated=True)


def _pair_time(model, nbytes, group, pair):
    """The model's time of one (algorithm, protocol): its fastest line at ``nbytes``."""
    import numpy as np

    g = model.group(group)
    cands = model.candidates("all-reduce", g, "auto")
    times = list(model.candidate_times(cands, np.array([float(nbytes)])))
    return min(float(t[0]) for c, t in zip(cands, times, strict=True) if c[:2] == pair)


def _collective(*args):
    r = run_cli(["collective", "all-reduce", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_tuner_chooses_ring_ll128_at_512mib_on_64_gpus(plain):
    # 512 MiB on 64 ranks: (29, 6). tree/LL128's right edge at 64 ranks is its vertex
    # (112 MiB, 64): log2 = 26.81 < 29, outside; the degenerate NVLSTree line sits at 16
    # ranks; ring/LL128 spans 26.81 .. its vertex (2 GiB, 64) = 31 at y = 6: inside
    size = 512 * MIB
    tuned = _collective("--fabric", SPEC, "--group", 64, "--size", "512MiB", "--tuner", TUNER)
    assert (tuned["algorithm"], tuned["protocol"]) == ("ring", "LL128")
    assert tuned["chosen_by"] == "tuner"
    assert tuned["collectives"]["tuner"] == TUNER
    assert tuned["time"] == pytest.approx(_pair_time(plain, size, 64, ("ring", "LL128")),
                                          rel=1e-12)
    # without it: the model's own auto, which is another choice here, and faster
    own = _collective("--fabric", SPEC, "--group", 64, "--size", "512MiB")
    auto = plain.cost("all-reduce", size, 64)
    assert (own["algorithm"], own["protocol"]) == (auto.algorithm, auto.protocol) != \
        ("ring", "LL128")
    assert own["time"] == pytest.approx(auto.time, rel=1e-12)
    assert own["time"] < tuned["time"]
    assert "chosen_by" not in own and own["collectives"]["tuner"] == "none"
    text = run_cli(["collective", "all-reduce", "--fabric", SPEC, "--group", 64, "--size",
                    "512MiB", "--tuner", TUNER]).output
    assert "algorithm: ring (LL128 protocol), chosen by the aws-ofi-nccl:p5 tuner plugin" \
        in text


@pytest.mark.parametrize(("group", "nbytes"), [
    # 32 ranks (4 nodes), 1500 MiB = 2^30.55: right of ring/LL128's edge (1 GiB, 17) ->
    # (2 GiB, 64), which crosses y = 5 at 2^30.48, and left of ring/Simple's vertex
    # (1.5 GiB, 32) = 2^30.58: in no region, so NCCL's (the model's auto)
    (32, 1500 * MIB),
    # 16 ranks = 2 nodes: the plugin leaves 2 nodes or fewer to NCCL
    (16, 64 * MIB),
])
def test_tuner_falls_back_to_auto(plain, group, nbytes):
    from netmodel.collectives.model import FabricCostModel

    tuned = FabricCostModel(plain.graph, validated=True, tuner=TUNER)
    assert tuned.tuner_choice("all-reduce", nbytes, group) is None
    a, b = tuned.cost("all-reduce", nbytes, group), plain.cost("all-reduce", nbytes, group)
    assert (a.time, a.algorithm, a.protocol) == (b.time, b.algorithm, b.protocol)
    doc = _collective("--fabric", SPEC, "--group", group, "--size", int(nbytes),
                      "--tuner", TUNER)
    assert doc["chosen_by"] == "auto" and doc["time"] == pytest.approx(b.time, rel=1e-12)


def test_named_algorithm_is_not_tuned(plain):
    from netmodel.collectives.model import FabricCostModel

    tuned = FabricCostModel(plain.graph, validated=True, tuner=TUNER)
    # 64 MiB on 64 ranks is tree/LL128's (left of its edge (112 MiB, 64)); forced ring stays
    # ring with its own fastest protocol
    assert tuned.cost("all-reduce", 64 * MIB, 64).algorithm == "tree"
    assert tuned.cost("all-reduce", 64 * MIB, 64, "ring").time == \
        plain.cost("all-reduce", 64 * MIB, 64, "ring").time


def test_every_command_charges_a_tuned_scenario_the_same(tmp_path):
    """collective --scenario, infer --scenario (its all-reduce stage) and compare's model
    (ScenarioCollectives) give one time for a decode all-reduce of Llama-3-70B at TP 32,
    batch 64: 64 x 8192 x 2 B = 1 MiB on 32 ranks (4 nodes): (20, 5), inside tree/LL128
    (its left edge at 1e-6 B, its right at (36 MiB, 32) = 2^25.17)."""
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_collectives import ScenarioCollectives

    path = tmp_path / "efa.toml"
    path.write_text(efa_tuned_toml(TUNER))
    size = 64 * 8192 * 2
    coll = _collective("--scenario", path, "--group", 32, "--size", size)
    assert (coll["algorithm"], coll["protocol"], coll["chosen_by"]) == \
        ("tree", "LL128", "tuner")
    r = run_cli(["infer", "--scenario", path, "--model", "Llama-3-70B", "--tp", 32,
                 "--batch", 64, "--phase", "decode", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["collectives"]["tuner"] == TUNER
    stages = [s for s in doc["stages"] if s["collective"] == "all-reduce"]
    assert stages and all(s["collective_bytes"] == size for s in stages)
    for s in stages:
        assert s["network_time_s"] == pytest.approx(coll["time"], rel=1e-12)
    compare = float(ScenarioCollectives(get_scenario(str(path))).collective_time(
        "all-reduce", size, 32))
    assert compare == pytest.approx(coll["time"], rel=1e-12)
    # the tuner is what sets it: the same scenario without it charges auto's choice
    path.write_text(efa_tuned_toml("none"))
    own = _collective("--scenario", path, "--group", 32, "--size", size)
    assert own["algorithm"] != "tree" and not math.isclose(own["time"], coll["time"])


def test_unknown_tuner_names_refused_in_one_line(tmp_path):
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    r = run_cli(["collective", "all-reduce", "--fabric", SPEC, "--tuner", "aws"])
    one_line_error(r, "unknown tuner 'aws'", "none", TUNER)
    path = tmp_path / "bad.toml"
    # ('nccl' itself is now a tuner: NCCL's own, emulated)
    path.write_text(efa_tuned_toml("nccl:p5"))
    one_line_error(run_cli(["collective", "all-reduce", "--scenario", path]),
                   "tuner", "'nccl:p5'", TUNER)
    with pytest.raises(UserError, match=r"unknown tuner 'p5'; known: .*aws-ofi-nccl:p5"):
        FabricCostModel(build("single-switch:n=8"), tuner="p5")
    assert "aws-ofi-nccl:p5" in run_cli(["collective", "--help"]).output


@pytest.mark.parametrize(("nbytes", "match"), [
    (-5, r"message size must be a finite number of bytes > 0, got -5"),
    ("x", r"message size"),
    ([2 ** 30, 2 ** 31], r"tuner_choice takes one message size, got 2"),
])
def test_tuner_choice_checks_its_size_as_cost_does(nbytes, match):
    # (h301) -5 bytes was read as the plugin's 1e-6 and got tree/LL128; 'x' raised ValueError
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    m = FabricCostModel(build("rail-optimized:domains=8"), tuner=TUNER)
    with pytest.raises(UserError, match=match):
        m.tuner_choice("all-reduce", nbytes, 64)
    assert m.tuner_choice("all-reduce", 2 ** 30, 64) == ("ring", "LL128")
