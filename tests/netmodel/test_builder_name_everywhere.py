"""A fabric builder's name is read the same way wherever a user names it, as a spec string
reads it (topologies.registry.canonical_name: case-insensitive, '_' for '-'), and kept as
the registry spells it: ``netmodel topology show 'Ring:n=4'`` built while a scenario file's
``[fabric] builder = "Rail-Optimized"`` was refused ("needs 'builder' naming a fabric
builder, got 'Rail-Optimized'"), and a saved fabric whose builder read "Ring" lost its
claim to be the ring builder's (analysed as a hand-made graph). Unknown names keep their
refusals."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from netmodel.study.scenario_files import load_scenario_text
from netmodel.study.scenarios import Scenario
from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import scenario_toml
from topologies.registry import build

WRITTEN = ["Rail-Optimized", "RAIL_OPTIMIZED", " rail_Optimized "]
ARGS = {"domains": 2, "domain_size": 16}
TABLE = {"builder": "rail-optimized", "domains": 2, "domain_size": 16, "gpu": "$gpu"}


def _graph_facts(g) -> tuple:
    return (g.graph["builder"], g.graph["spec"], g.graph["args"], sorted(g.nodes(data=True)),
            sorted((u, v, sorted(d.items())) for u, v, d in g.edges(data=True)))


ENTRY_POINTS = {
    "spec string": lambda name: build(f"{name}:domains=2,domain_size=16"),
    "build(name, params)": lambda name: build(name, ARGS),
    "build((name, params))": lambda name: build((name, ARGS)),
    "build({'builder': name})": lambda name: build({"builder": name, **ARGS}),
}


@pytest.mark.parametrize("name", WRITTEN)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_the_library_reads_a_builder_name_as_a_spec_string_does(entry, name):
    ours = ENTRY_POINTS[entry](name)
    theirs = build("rail-optimized:domains=2,domain_size=16")
    assert ours.graph["builder"] == "rail-optimized"
    assert ours.graph["spec"] == "rail-optimized:domains=2,domain_size=16"
    assert _graph_facts(ours) == _graph_facts(theirs)


def _scenario(builder: str, **base) -> Scenario:
    table = {**TABLE, "builder": builder, **base}
    return load_scenario_text(scenario_toml("mine", "H100-SXM", table), "s.toml")


@pytest.mark.parametrize("name", WRITTEN)
@pytest.mark.parametrize("entry", ["scenario file", "Scenario in code", "with_param copy"])
def test_a_scenario_keeps_the_builder_as_the_registry_spells_it(entry, name):
    canonical = _scenario("rail-optimized")
    if entry == "scenario file":
        ours = _scenario(name)
    elif entry == "Scenario in code":
        ours = Scenario(name="mine", description="mine", gpu="H100-SXM",
                        fabric={**TABLE, "builder": name})
        canonical = Scenario(name="mine", description="mine", gpu="H100-SXM", fabric=TABLE)
    else:   # a swept copy is checked again: its name stays as the registry spells it
        ours = _scenario(name).with_param("fabric.domains", 2)
    assert ours.builder == ours.fabric["builder"] == "rail-optimized"
    assert ours.fabric_spec() == canonical.fabric_spec() == \
        "rail-optimized:domains=2,domain_size=16,gpu=H100-SXM"
    assert ours.fabric_params() == canonical.fabric_params()   # the cache key
    assert 'builder = "rail-optimized"' in ours.to_toml()
    assert _graph_facts(build(ours.fabric_spec())) == _graph_facts(build(canonical.fabric_spec()))


def test_a_nested_tables_builder_is_read_alike():
    text = scenario_toml("mine", "Lite", {"builder": "Lite_Groups", "lites": 2})
    text += '\n[fabric.base]\nbuilder = "FAT-TREE"\nk = 4\ngpu = "$gpu"\n'
    ours = load_scenario_text(text, "s.toml")
    assert ours.fabric["builder"] == "lite-groups" and ours.fabric["base"]["builder"] == "fat-tree"
    assert ours.fabric_spec() == "lite-groups:lites=2,base=[fat-tree:k=4,gpu=Lite]"


def test_a_saved_fabrics_builder_field_is_read_alike(tmp_path):
    path = tmp_path / "ring.json"
    assert run_cli(["topology", "export", "ring:n=4", "--output", str(path)]).exit_code == 0
    data = json.loads(path.read_text())
    data["graph"]["builder"] = "Ring"
    path.write_text(json.dumps(data))
    g = build(str(path))
    assert g.graph["builder"] == "ring" and g.graph["args"] == {"n": 4}   # still as built
    assert _graph_facts(g)[2:] == _graph_facts(build("ring:n=4"))[2:]


def test_the_command_line_shows_a_scenario_files_builder_as_the_registry_spells_it(tmp_path):
    shown = {}
    for name in ("rail-optimized", "Rail-Optimized"):
        path = tmp_path / f"{name}.toml"
        path.write_text(scenario_toml("mine", "H100-SXM", {**TABLE, "builder": name}))
        r = run_cli(["topology", "show", str(path)], cwd=tmp_path)
        assert r.exit_code == 0, r.output
        shown[name] = r.output
        r = run_cli(["compare", "--show", str(path)], cwd=tmp_path)
        assert r.exit_code == 0 and 'builder = "rail-optimized"' in r.output, r.output
    assert shown["Rail-Optimized"] == shown["rail-optimized"]
    assert "[rail-optimized:domains=2,domain_size=16]" in shown["rail-optimized"]


@pytest.mark.parametrize("written", ["Rail Optimized", "rail-optimised", "r\u0430il-optimized"])
def test_an_unknown_name_is_refused_as_before_naming_what_was_written(tmp_path, written):
    path = tmp_path / "s.toml"
    path.write_text(scenario_toml("mine", "H100-SXM", {**TABLE, "builder": written}))
    one_line_error(run_cli(["topology", "show", str(path)], cwd=tmp_path),
                   f"[fabric] needs 'builder' naming a fabric builder, got {written!r}")
    with pytest.raises(UserError, match=r"^unknown fabric builder 'Rail Optimized'; known: "):
        build("Rail Optimized", ARGS)
