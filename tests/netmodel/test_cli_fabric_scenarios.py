"""Every argument naming a fabric takes a scenario too (name, NAME@GPU, .toml), resolved
once by netmodel.study.fabric_ref.resolve_fabric: topology show/plot/export,
collective --fabric, costs --fabric, infer/search --fabric. Before, all but
`topology compare` said "unknown fabric builder 'lite-ocs'"."""

from __future__ import annotations

import json
import shutil
from importlib import resources

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.scenario_catalog import get_scenario, scenario_names
from topologies.specs import build, builders


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_topology_show_takes_a_scenario_name_gpu_and_toml(tmp_path):
    r = run("topology", "show", "lite-ocs")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "scenario:    lite-ocs@Lite (its fabric)"
    # lite-ocs.toml: ocs of 128 Lite GPUs, 4 ports each, 112.5 GB/s per GPU
    assert lines[1].startswith("fabric:      128 Lite x 4 ports on 4 OCS  [ocs:gpus=128,gpu=Lite")
    assert "GPUs:        128 (128 x Lite)" in r.output
    r = run("topology", "show", "lite-flat@Lite+BW", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["scenario"] == "lite-flat@Lite+BW" and doc["gpu_types"] == {"Lite+BW": 128}
    toml = tmp_path / "mine.toml"
    shutil.copy(resources.files("netmodel").joinpath("data/scenarios/h100-dgx.toml"), toml)
    r = run("topology", "show", str(toml), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["gpus"] == 32   # h100-dgx: 4 DGX of 8 H100-SXM


def test_topology_plot_and_export_take_a_scenario(tmp_path):
    png = tmp_path / "h.png"
    r = run("topology", "plot", "h100-dgx", "-o", str(png))
    assert r.exit_code == 0, r.output
    assert png.stat().st_size > 0
    out = tmp_path / "ocs.json"
    r = run("topology", "export", "lite-ocs", "-o", str(out))
    assert r.exit_code == 0, r.output
    s = get_scenario("lite-ocs")
    back, spec = build(str(out)), build(s.fabric_spec())
    assert (back.number_of_nodes(), back.number_of_edges()) == \
        (spec.number_of_nodes(), spec.number_of_edges()) == (132, 512)


def test_collective_and_costs_take_a_scenario_as_its_spec():
    s = get_scenario("h100-dgx")
    by_name = run("collective", "all-reduce", "--fabric", "h100-dgx", "--size", "1GiB", "--json")
    by_spec = run("collective", "all-reduce", "--fabric", s.fabric_spec(), "--size", "1GiB",
                  "--json")
    assert by_name.exit_code == 0, by_name.output
    a, b = json.loads(by_name.output), json.loads(by_spec.output)
    assert a["time"] == b["time"] and a["fabric"] == b["fabric"]
    assert a["fabric"].startswith("4 x 8 H100-SXM (rail-optimized)")
    r = run("costs", "--fabric", "lite-flat@Lite+BW", "--sizes", "1MiB", "--groups", "8")
    assert r.exit_code == 0, r.output
    assert "all-reduce" in r.output


def test_compute_fabric_option_takes_a_scenario():
    from netmodel.cli.resolve import resolve_collectives

    gpu, comm, desc, gpus = resolve_collectives(None, "lite-flat@Lite+BW", None, None)
    assert gpu.name == "Lite+BW" and gpus == 128 and desc["model"] == "fabric"
    assert desc["fabric"].startswith("flat:n=128")


@pytest.mark.parametrize("argv", [
    ("topology", "show", "lite-oc"),
    ("topology", "export", "lite-oc", "-o", "x.json"),
    ("collective", "all-reduce", "--fabric", "lite-oc"),
])
def test_unknown_fabric_names_builders_and_scenarios(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run(*argv)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: unknown fabric 'lite-oc'")
    for name in [b.name for b in builders()] + list(scenario_names()):
        assert repr(name) in lines[0]


@pytest.mark.parametrize("argv", [
    ("topology", "show"), ("topology", "plot"), ("topology", "export"), ("topology", "compare"),
    ("collective",), ("costs",), ("infer",), ("search",)])
def test_help_lists_builders_and_scenarios_from_the_registries(argv):
    r = CliRunner().invoke(cli, [*argv, "--help"], terminal_width=1000)
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    for name in [b.name for b in builders()] + list(scenario_names()):
        assert name in text, name
    assert "A scenario name wins over a builder of the same name." in text
