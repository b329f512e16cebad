"""Hostile input, round 10: what changed on 2026-12-02 (board links, two-shot and torus,
sweep cost units, run records, breakout failure domains) attacked through the CLI and API.
Each test fails on the code before its fix."""

from __future__ import annotations

import networkx as nx
import pytest

from compute.errors import UserError


def _switch_and_ocs(ocs_medium: str = "fibre") -> nx.Graph:
    """4 GPUs on one board switch, gpu0 and gpu1 also cabled to an OCS (a user's file)."""
    g = nx.Graph(name="hybrid", spec="", gpus=4)
    g.add_node("nvs0", kind="switch", tier=0, radix=4, latency=1.5e-7,
               in_network_reduction=True)
    g.add_node("ocs0", kind="ocs", ports=8, reconfiguration_time=0.01, latency=0.0)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        g.add_edge("nvs0", f"gpu{i}", bandwidth=450e9, latency=1e-8, medium="board", lanes=36)
    for i in range(2):
        g.add_edge("ocs0", f"gpu{i}", bandwidth=50e9, latency=5e-8, medium=ocs_medium, lanes=4)
    return g


def test_draw_a_fabric_with_switches_and_an_ocs():
    # was: KeyError 'nvs0' (a traceback from 'netmodel topology plot FILE'): the layout
    # put GPUs and OCS on two rows and left the switches out
    from topologies.draw import figure, layout

    g = _switch_and_ocs()
    pos, how = layout(g)
    assert how == "tiers"
    assert set(pos) == set(g)
    assert pos["gpu0"][1] < pos["nvs0"][1] < pos["ocs0"][1]
    figure(g)   # draws


@pytest.mark.parametrize("medium", ["board", "copper", "on-package"])
def test_an_ocs_takes_only_optical_links(medium):
    # was: accepted; 'topology show' counted board traces into an OCS's ports, and the ocs
    # builder's medium=board with logical=ring listed 'cables: board 16' (its ocs_cabling)
    from topologies.schema import validate
    from topologies.specs import build

    with pytest.raises(UserError, match=f"medium '{medium}' ends on an OCS, which switches "
                                        f"light: allowed 'co-packaged-optics', 'fibre'"):
        validate(_switch_and_ocs(medium))
    for spec in (f"ocs:gpus=4,medium={medium}", f"ocs:gpus=4,medium={medium},logical=ring"):
        with pytest.raises(UserError, match=f"medium '{medium}' is not allowed here: an OCS "
                                            f"switches light"):
            build(spec)
    g = build("ocs:gpus=4,logical=ring")
    g.graph["ocs_cabling"] = dict(g.graph["ocs_cabling"], medium=medium)
    with pytest.raises(UserError, match="'ocs_cabling' must be {'medium': an optical medium"):
        validate(g)


def test_an_ocs_circuit_joins_two_gpus_through_an_ocs():
    # was: a builder's medium=ocs-circuit ('full-mesh:n=4,medium=ocs-circuit' showed
    # 'OCS 12 of 0 used') and a file's switch-GPU circuit without via were accepted
    from topologies.schema import validate
    from topologies.specs import build

    for spec in ("full-mesh:n=4,medium=ocs-circuit", "single-switch:medium=ocs-circuit"):
        with pytest.raises(UserError, match="medium 'ocs-circuit' is not allowed here: a "
                                            "circuit is set up through an OCS"):
            build(spec)
    g = _switch_and_ocs()
    g.edges["nvs0", "gpu2"]["medium"] = "ocs-circuit"
    with pytest.raises(UserError, match="circuit 'nvs0'-'gpu2' ends on switch 'nvs0'"):
        validate(g)
    g = _switch_and_ocs()
    g.add_edge("gpu2", "gpu3", bandwidth=1e9, latency=0.0, medium="ocs-circuit", lanes=1)
    validate(g)   # via is optional (a costing drops it), but there is an OCS to pass
    h = g.copy()
    h.remove_node("ocs0")
    with pytest.raises(UserError, match="circuit 'gpu2'-'gpu3' is an ocs-circuit but the "
                                        "graph has no OCS node"):
        validate(h)
    g.edges["gpu2", "gpu3"]["via"] = ""
    with pytest.raises(UserError, match="'via' must name the OCS node"):
        validate(g)
    g.edges["gpu2", "gpu3"]["via"] = "nvs0"
    with pytest.raises(UserError, match="'nvs0' is not an OCS of the graph"):
        validate(g)
    g.edges["gpu2", "gpu3"]["via"] = "ocs0"
    validate(g)
    g.edges["gpu2", "gpu3"]["optics"] = "board"
    with pytest.raises(UserError, match="optics 'board' must be the GPU ports' optical"):
        validate(g)
    r = build("ocs:gpus=8,ports=2,logical=ring")   # what realize makes still passes
    assert validate(r) is r


def test_sweep_bounds_a_cost_parameter_whose_default_is_zero():
    # was: cost.copper_energy (shipped 0 pJ/bit) took any finite value: 1e20pJ/bit swept
    # the GB300 example to 1.48e16 USD per million tokens, where 1e20pJ/bit of
    # cost.pluggable_energy (21.25) is refused over 1e6 times its default
    from netmodel.study.sweep import parse_param

    with pytest.raises(UserError, match=r"cost.copper_energy value '1e20pJ/bit' is outside "
                                        r"the range a sweep takes, from 0 to 2.125e\+07pJ/bit "
                                        r"\(at most 1,000,000 times the largest shipped "
                                        r"default in pJ/bit \(cost.pluggable_energy "
                                        r"21.25pJ/bit; this one's is 0\)"):
        parse_param("cost.copper_energy=0,1e20pJ/bit", ["h100-dgx"])
    p = parse_param("cost.copper_energy=0,2e7pJ/bit", ["h100-dgx"])
    assert p.values == (0.0, pytest.approx(2e7 * 1e-12)) and p.unit == "J/bit"


def test_manifest_names_a_scenario_file_whose_name_is_not_utf8(tmp_path):
    # was: 'compare --scenarios bad<0xff>.toml --out D' wrote "scenarios": "bad\udcff.toml",
    # a lone surrogate escape: no character (jq read it as U+FFFD, strict readers refuse)
    import json
    import os
    import shutil
    from pathlib import Path

    from click.testing import CliRunner

    from netmodel.cli.main import cli

    src = Path(__file__).resolve().parents[2] / "netmodel/data/scenarios/h100-dgx.toml"
    name = os.fsdecode(b"bad\xff.toml")
    shutil.copy(src, tmp_path / name)
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["compare", "--scenarios", str(tmp_path / name), "--models",
                                 "Llama-3-8B", "--phase", "decode", "--out", str(out), "-q",
                                 "--no-plot"])
    assert r.exit_code == 0, r.output
    raw = (out / "netmodel-manifest.json").read_bytes()
    assert b"\\udcff" not in raw
    run = json.loads(raw)["run"]
    assert run["scenarios"] == str(tmp_path / "bad") + "\\xff.toml"
    json.dumps(run, ensure_ascii=False).encode("utf-8")   # every string is text


@pytest.mark.parametrize(("dims", "message"), [
    ("2x8", "edge 'gpu0'-'gpu12' does not join neighbours of the 2x8 torus"),
    ("1x16", "'dims' must be 1 to 3 torus sides >= 2 joined by 'x'"),
    ("0x-1", "'dims' must be 1 to 3 torus sides >= 2"),
    ("99999999999x99999999999", "is a torus of 1e\\+22 GPUs"),
])
def test_a_fabric_file_s_torus_dims_must_be_its_shape(dims, message):
    # was: a file's dims was trusted: a 4x4 torus saved with dims '2x8' (or '1x16', a side
    # the builder refuses) ran '--algorithm torus' on a shape it is not (986.5 us and
    # 866.9 us against the true 388.7 us), and 99999999999x99999999999 printed a wrapped
    # int64 product (1864711849423024129) in the refusal
    from topologies.schema import validate
    from topologies.specs import build

    g = build("torus:dims=4x4")
    g.graph["dims"] = dims
    with pytest.raises(UserError, match=message):
        validate(g)


def test_a_ring_labelled_a_torus_is_refused_and_degraded_tori_pass():
    from topologies.degrade import degrade
    from topologies.failure_domains import components
    from topologies.schema import validate
    from topologies.specs import build

    ring = build("ring:n=4")
    ring.graph["dims"] = "2x2"
    with pytest.raises(UserError, match="edge 'gpu0'-'gpu3' does not join neighbours of "
                                        "the 2x2 torus"):
        validate(ring)
    for spec in ("torus:dims=2x2", "torus:dims=2", "torus:dims=3", "torus:dims=2x3x4"):
        validate(build(spec))
    g = build("torus:dims=4x4")
    gpu = next(c for c in components(g)["gpu-die"] if c.name == "gpu5")
    h = degrade(g, [gpu])   # a torus that lost a GPU keeps its dims
    assert h.graph["dims"] == "4x4" and validate(h) is h
    g.remove_edge("gpu0", "gpu1")   # or a cable
    validate(g)


def test_api_algorithms_as_one_string_is_a_comma_list():
    # was: collective_time(..., algorithms="two-shot") iterated the string's characters:
    # "unknown algorithm 't'"; algorithms=5 and algorithm=['x'] raised TypeError
    import netmodel

    one = netmodel.collective_time("full-mesh:n=4", "all-reduce", 1e6, 4,
                                   algorithms=["two-shot"])
    assert netmodel.collective_time("full-mesh:n=4", "all-reduce", 1e6, 4,
                                    algorithms="two-shot") == one
    assert netmodel.collective_time("full-mesh:n=4", "all-reduce", 1e6, 4,
                                    algorithms="two-shot, direct") <= one
    with pytest.raises(UserError, match="algorithms must be 'nccl', a comma list or a "
                                        "sequence of algorithm names, got 5"):
        netmodel.collective_time("full-mesh:n=4", "all-reduce", 1e6, 4, algorithms=5)
    with pytest.raises(UserError, match=r"unknown algorithm \['x'\]; known: "):
        netmodel.collective_time("full-mesh:n=4", "all-reduce", 1e6, 4, algorithm=["x"])
    with pytest.raises(UserError, match=r"unknown algorithm \['x'\]; known: "):
        netmodel.collective_time("full-mesh:n=4", "all-reduce", 1e6, 4,
                                 algorithms=["ring", ["x"]])


@pytest.mark.parametrize("spec", ["rail-optimized:medium=board", "superpod:medium=on-package",
                                  "nvl72:medium=board", "leaf-spine:medium=board",
                                  "fat-tree:medium=on-package"])
def test_a_switched_scale_out_is_not_board_traces(spec):
    # was: 'rail-optimized:medium=board' built 864 'board traces' of 20 m NIC cables and
    # 50 m leaf-spine links: no transceiver in the bill, none to fail, no optics priced
    from topologies.specs import build

    with pytest.raises(UserError, match="is not allowed here: a scale-out's links run 20 m "
                                        "from a NIC to its leaf and 50 m or more between "
                                        "switches"):
        build(spec)
    for ok in ("single-switch:medium=board", "full-mesh:medium=board", "flat:medium=board",
               "rail-optimized:medium=copper", "lite-groups:medium=on-package"):
        build(ok)


def test_sweep_shows_a_per_year_cost_value_as_it_reads_back():
    # was: the table heading and the figure's legend of a second parameter
    # cost.maintenance_fraction=0.05/year read 'cost.maintenance_fraction=0.051/year'
    # (value 0.05 glued to the unit '1/year'): 0.051 a year, not 0.05
    from netmodel.study.sweep import parse_param

    p = parse_param("cost.maintenance_fraction=0.05/year,0.1/year", ["h100-dgx"])
    assert [p.show(v) for v in p.values] == ["cost.maintenance_fraction=0.05/year",
                                             "cost.maintenance_fraction=0.1/year"]
    assert parse_param(p.show(p.values[0]), ["h100-dgx"]).values == p.values[:1]
    u = parse_param("cost.utilization=50%", ["h100-dgx"])
    assert u.show(u.values[0]) == "cost.utilization=0.5"


def test_graphml_boolean_value_that_is_not_a_boolean(tmp_path):
    # was: a <key attr.type="boolean"> whose value is not true/false/1/0 (an edited file:
    # lanes declared boolean) said "data refers to key '3', which no <key> declares"
    from topologies.io import read_graph, write_graph
    from topologies.specs import build

    path = tmp_path / "t.graphml"
    write_graph(build("ring:n=4"), path)
    raw = path.read_text().replace('attr.name="lanes" attr.type="long"',
                                   'attr.name="lanes" attr.type="boolean"')
    path.write_text(raw)
    with pytest.raises(UserError, match="a value of a boolean <key> is '18', not true, false, "
                                        "1 or 0"):
        read_graph(path)


@pytest.mark.parametrize("args", [
    ["--fabric", "torus:dims=4x4", "--group", "16",
     "--fail", "gpu0/gpu1,gpu0/gpu3,gpu0/gpu4,gpu0/gpu12"],
    ["--fabric", "full-mesh:n=8", "--group", "1"],
])
def test_collective_plot_of_nothing_writes_no_empty_figure(tmp_path, args):
    # was: a cut group (--fail isolating gpu0) or a one-GPU group with --plot wrote an empty
    # figure without a word (matplotlib's 'No artists with labels' warning on stderr)
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli

    png = tmp_path / "p.png"
    r = CliRunner().invoke(cli, ["collective", "all-reduce", *args, "--plot", str(png),
                                 "--json"])
    assert r.exit_code == 0, r.output
    assert not png.exists()
    assert "No artists" not in r.stderr
    assert f"note: {png} not written: " in r.stderr
    assert json.loads(r.stdout)["plot"] is None
