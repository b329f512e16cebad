"""Unusual but valid inputs through the study-level commands (found by fuzzing)."""
from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli

TINY = """\
[model."Tiny-1B"]
layers = 16
hidden = 2048
heads = 16
kv_heads = 4
ffn = 8192
vocab = 32000
gated_mlp = true
source = "a made-up model, for the test"
"""


def test_study_with_a_model_file_runs_its_reliability_cost_and_serving_parts(tmp_path):
    # before: 'unknown model 'Tiny-1B'' (exit 2) from the blast-radius and serving parts,
    # which looked the first model up in the catalog by name
    model = tmp_path / "tiny.toml"
    model.write_text(TINY)
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, [
        "study", "lite-gpu", "--out", str(out), "--models", str(model),
        "--scenarios", "lite-flat,h100-dgx", "--gpus", "Lite", "--no-crossovers",
        "--no-sweep", "--no-paper", "--no-packed", "--moe-model", "none", "--no-plot", "-q"])
    assert r.exit_code == 0, r.output
    with open(out / "serving.csv") as f:
        serving = list(csv.DictReader(f))
    # 2 workloads x 2 scenarios, every row the file's model and feasible
    assert [(s["model"], s["scenario"], s["workload"]) for s in serving] == [
        ("Tiny-1B", sc, w) for w in ("coding", "conversation")
        for sc in ("lite-flat@Lite", "h100-dgx@H100-SXM")]
    with open(out / "reliability.csv") as f:
        rel = list(csv.DictReader(f))
    assert {(x["model"], x["scenario"]) for x in rel} == {
        ("Tiny-1B", "lite-flat@Lite"), ("Tiny-1B", "h100-dgx@H100-SXM")}
    # a Lite has 33 SMs and an H100 132: one GPU failure at TP 1 takes down its own SMs
    assert sorted(float(x["sms_down_per_gpu_failure_hw"]) for x in rel) == [33.0, 132.0]


def test_study_with_a_model_file_finds_its_crossovers(tmp_path):
    """The co-design crossovers re-run each row's search with its model: a model file's
    name is not in the catalog (before: 'unknown model 'Tiny-1B'', exit 2, unless
    --no-crossovers was given)."""
    model = tmp_path / "tiny.toml"
    model.write_text(TINY)
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, [
        "study", "lite-gpu", "--out", str(out), "--models", str(model),
        "--scenarios", "lite-flat,h100-dgx", "--gpus", "Lite", "--phases", "decode",
        "--no-sweep", "--no-paper", "--no-packed", "--no-reliability", "--no-cost",
        "--no-serving", "--moe-model", "none", "--no-plot", "-q"])
    assert r.exit_code == 0, r.output
    with open(out / "crossovers.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(x["model"], x["fabric"], x["gpu"], x["phase"]) for x in rows] == [
        ("Tiny-1B", "lite-flat", "Lite", "decode")]
    # the Lite's own bandwidth is 1x the plain Lite's; a match, if any, is a multiple > 0
    assert float(rows[0]["own_bandwidth"]) == 1.0


LEAF_SPINE = """\
name = "h200-ls"
description = "H200 on an oversubscribed leaf-spine"
gpu = "H200-SXM"

[fabric]
builder = "leaf-spine"
leaves = 4
radix = 8
oversubscription = 2
gpu = "$gpu"
bandwidth = "$scaleup"

[collective]
placement = "random"
algorithm = "auto"
links = "scale-up"
calibration = "default"

[sources]
bandwidth = "test"
latency = "test"
"""


def test_availability_json_writes_no_negative_spare_count(tmp_path):
    # before: a leaf failure, which no reachable spare can recover, was written as
    # "units": -1 (an internal sentinel) in availability --json; now null
    import json

    scen = tmp_path / "ls.toml"
    scen.write_text(LEAF_SPINE)
    r = CliRunner().invoke(cli, ["availability", "--scenario", str(scen), "--model",
                                 "Llama-3-70B", "--trials", "20", "--spares", "5%", "-q",
                                 "--json"])
    assert r.exit_code == 0, r.output
    kinds = json.loads(r.output)["kinds"]
    units: dict = {}
    for k in kinds:
        units.setdefault(k["cls"], []).append(k["units"])
    assert all(u is None or u >= 1 for us in units.values() for u in us), units
    assert set(units["gpu-die"]) == {1}     # one GPU lost, one spare substitutes it
    # a leaf cuts off its 4 GPUs and the 2 spare sites on it; spares on the other leaves
    # serve (this said no spare helps: the cut-off member was not the one replaced on an
    # even split, and the sites on the failed leaf were counted)
    assert None not in units["leaf"]
    # where no spare helps (no free port on h100-dgx), units are null, not -1
    r = CliRunner().invoke(cli, ["availability", "--scenario", "h100-dgx", "--model",
                                 "Llama-3-70B", "--trials", "20", "--spares", "2", "-q",
                                 "--json"])
    assert r.exit_code == 0, r.output
    assert {k["units"] for k in json.loads(r.output)["kinds"]} == {None}


def _ocs_one_port(tmp_path):
    scen = tmp_path / "ocs1.toml"
    scen.write_text(LEAF_SPINE.replace('name = "h200-ls"', 'name = "ocs1"').replace(
        'builder = "leaf-spine"\nleaves = 4\nradix = 8\noversubscription = 2',
        'builder = "ocs"\ngpus = 16\nports = 1\nocs_ports = 16').replace(
        'calibration = "default"', 'calibration = "default"\ncircuits = "ring"'))
    return scen


def test_ocs_with_one_port_per_gpu_searches_instances_of_up_to_two(tmp_path):
    # before: the whole compare failed (exit 2) with a line listing every circuit of the
    # logical topology, because a ring of 4 GPUs needs 2 ports; now TP 1 and 2 are searched
    from netmodel.study.fabric_search import fabric_search

    found = fabric_search("Llama-3-70B", str(_ocs_one_port(tmp_path)), "decode")
    assert found.best is not None and found.best.tp == 2     # 70B needs 2 H200s of HBM
    assert len(found.group) == 2


def test_ocs_with_one_port_refuses_a_larger_instance_in_one_line(tmp_path):
    from compute.errors import UserError
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from netmodel.study.scenario_fabric import build_fabric, instance_graph

    coll = ScenarioCollectives(str(_ocs_one_port(tmp_path)))
    with pytest.raises(UserError, match=r"^scenario 'ocs1': an instance of 4 GPUs needs 2 "
                                        r"optical ports per GPU .* have 1$"):
        instance_graph(coll.scenario, build_fabric(coll.scenario), 4)


@pytest.mark.parametrize("clock", [1.0, 0.8])
def test_cost_of_a_gpu_file_blames_the_missing_die_data_not_the_name(tmp_path, clock):
    # before: 'unknown GPU 'Eighth'' (the GPU looked up in the catalog by name) for a
    # scenario NAME@FILE; the GPU is known, what is missing is its die data. A GPU the
    # file derives from a catalog GPU is a slice of that GPU's die (priced as the catalog's
    # Lite family is); one given by its figures alone has no die.
    from compute.errors import UserError
    from compute.hardware import load_gpu_file
    from compute.yield_model import package_cost
    from netmodel.study.cost import cost_summary

    gpus = tmp_path / "gpus.toml"
    gpus.write_text('[gpu."Eighth"]\nderive_from = "H100-SXM"\nfraction = 0.125\n'
                    'max_instance = 64\nsource = "what-if"\n')
    s = cost_summary(f"lite-flat@{gpus}", "Llama-3-8B", "decode", clock=clock)
    eighth = load_gpu_file(gpus)["Eighth"]
    assert s.gpu_package_cost == package_cost(eighth).total
    assert package_cost(eighth).die.area == pytest.approx(814e-6 / 8, rel=1e-12)
    plain = tmp_path / "plain.toml"
    plain.write_text('[gpu."Plain"]\nsms = 33\nbf16_dense_TFLOPs = 247\n'
                     'hbm_capacity_GB = 21\nhbm_bandwidth_TBps = 0.84\n'
                     'scaleup_GBps_per_direction = 112.5\nscaleout_Gbps = 100\ntdp_W = 175\n'
                     'max_instance = 64\nsource = "what-if"\n')
    with pytest.raises(UserError, match=r"^no die data for GPU 'Plain'"):
        cost_summary(f"lite-flat@{plain}", "Llama-3-8B", "decode", clock=clock)


def test_serve_on_an_ocs_with_one_port_has_no_port_for_the_kv_cache(tmp_path):
    # before: serve failed (exit 2) on the 4-GPU ring its search tried; then each pool's
    # instance spanned the 2 GPUs one circuit joins, and the KV cache went on circuits no
    # GPU held. 70B in bf16 (141 GB) needs both H200s' HBM in each instance, whose one
    # port is its own circuit: none is free for the cache, which is said
    from netmodel.study.serving import serve

    r = serve("Llama-3-70B", str(_ocs_one_port(tmp_path)), "coding")
    assert not r.feasible
    assert "no optical port is free at both ends for the KV cache" in r.reason
