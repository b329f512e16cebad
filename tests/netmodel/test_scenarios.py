"""Cluster scenarios: the shipped TOML files, their round trip, GPU swaps and bad files."""

from dataclasses import replace

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from netmodel.study.scenario_catalog import get_scenario, scenario_names, shipped_scenarios
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_fabric import build_fabric, instance_graph, scenario_calibration
from netmodel.study.scenario_files import load_scenario, load_scenario_text, save_scenario
from netmodel.study.scenarios import Adjust
from topologies.schema import gpu_nodes

LITE = get_gpu("Lite")


def test_the_six_scenarios_ship_with_sources():
    assert scenario_names() == ("h100-dgx", "lite-direct", "lite-flat", "lite-flat-inr",
                                "lite-hier", "lite-ocs")
    for s in shipped_scenarios().values():
        assert s.sources["bandwidth"] and s.sources["latency"]
        assert s.gpu == ("H100-SXM" if s.name == "h100-dgx" else "Lite")


@pytest.mark.parametrize("name", scenario_names())
def test_toml_round_trip(name, tmp_path):
    s = shipped_scenarios()[name]
    assert load_scenario_text(s.to_toml()) == s
    changed = s.with_gpu("Lite+BW").with_param("adjust.hop_latency", 2e-6)
    path = save_scenario(changed, tmp_path / f"{name}.toml")
    back = load_scenario(path)
    assert back == changed and back.adjust == Adjust(hop_latency=2e-6)
    assert back.fabric_spec() == changed.fabric_spec()


def test_shipped_fabrics_have_the_described_shape():
    h100 = build_fabric("h100-dgx")
    assert h100.graph["gpus"] == 32
    nvs = [n for n, d in h100.nodes(data=True) if d["kind"] == "switch" and d["tier"] == 0]
    assert len(nvs) == 4 and all(h100.nodes[n]["in_network_reduction"] for n in nvs)
    assert h100.edges["gpu0", "nvs0"]["bandwidth"] == 450e9
    for name in scenario_names()[1:]:
        g = build_fabric(name)
        assert g.graph["gpus"] == 128  # the silicon of h100-dgx's 32 H100s
        assert {g.nodes[n]["gpu"] for n in gpu_nodes(g)} == {"Lite"}


@pytest.mark.parametrize("gpu, factor", [("Lite", 1), ("Lite+NetBW", 2), ("Lite+BW", 2),
                                         ("Lite+MemBW", 1)])
def test_link_bandwidth_follows_the_gpu(gpu, factor):
    # lite-flat: the Lite's scale-up bandwidth over 4 planes (112.5 GB/s / 4 for a Lite)
    flat = build_fabric(f"lite-flat@{gpu}")
    assert flat.edges["gpu0", "plane0"]["bandwidth"] == pytest.approx(factor * 112.5e9 / 4)
    # lite-direct: a quarter of 4 Lites' NVSwitch links and NICs each, plus the mesh
    direct = build_fabric(f"lite-direct@{gpu}")
    assert direct.edges["gpu5", "nvs0"]["bandwidth"] == pytest.approx(factor * 112.5e9)
    nic = [d["bandwidth"] for u, v, d in direct.edges("gpu5", data=True) if "leaf" in u + v]
    assert nic == [pytest.approx(factor * 12.5e9)]
    assert direct.edges["gpu4", "gpu5"]["bandwidth"] == pytest.approx(factor * 112.5e9 / 3)
    hier = build_fabric(f"lite-hier@{gpu}")
    assert hier.edges["gpu0", "leaf0"]["bandwidth"] == pytest.approx(factor * 112.5e9)


def test_ocs_instances_get_rings_using_every_port():
    s = replace(get_scenario("lite-ocs"), circuits="ring")   # shipped: the faster layout
    g = build_fabric(s)
    ring8 = instance_graph(s, g, 8)
    # 4 ports: 2 parallel circuits to each ring neighbour, a quarter of 112.5 GB/s each
    assert ring8.edges["gpu0", "gpu1"]["links"] == 2
    assert ring8.edges["gpu0", "gpu1"]["bandwidth"] == pytest.approx(112.5e9 / 2)
    assert ring8.has_edge("gpu7", "gpu0") and not ring8.has_edge("gpu7", "gpu8")
    assert ring8.graph["reconfiguration_time"] == 0.010
    # an odd ring cannot be coloured twice onto 4 OCS planes: one circuit per neighbour
    ring3 = instance_graph(s, g, 3)
    assert ring3.edges["gpu0", "gpu1"]["bandwidth"] == pytest.approx(112.5e9 / 4)
    torus = s.__class__(**{**s.__dict__, "circuits": "torus"})
    t16 = instance_graph(torus, g, 16)
    assert sorted(t16.neighbors("gpu0")) == ["gpu1", "gpu12", "gpu3", "gpu4"]
    assert ScenarioCollectives(s).reconfiguration_time(8) == 0.010
    assert ScenarioCollectives("lite-flat").reconfiguration_time(8) == 0.0


def test_scale_up_links_use_nvlink_step_latencies():
    cal = scenario_calibration(get_scenario("lite-flat"))
    for p in cal.protocols:
        assert p.step_latency_scaleout == p.step_latency_scaleup
    assert cal.scaleout_efficiency == cal.scaleup_efficiency
    as_built = scenario_calibration(get_scenario("h100-dgx"))
    assert as_built.protocol("LL128").step_latency_scaleout == 4.0e-6  # NCCL's "net" figure


def _edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


GOOD = shipped_scenarios()["lite-flat"].to_toml()


@pytest.mark.parametrize("text, needle", [
    (_edit(GOOD, 'gpu = "Lite"', 'gpu = "Lite"\ncolour = "red"'), "unknown key(s) colour"),
    (_edit(GOOD, 'n = 128', 'n = 128\nwidth = 3'), "unknown key(s) width for builder 'flat'"),
    (_edit(GOOD, 'placement = "contiguous"', 'placement = "contiguous"\nspeed = 1'),
     "unknown key(s) speed"),
    (_edit(GOOD, 'links = "scale-up"\n', ''), "missing key(s) links"),
    (_edit(GOOD, 'description = ', 'x = 1\ndescription = ').replace('description = "all',
                                                                      'y = "all', 1),
     "unknown key(s)"),
    (GOOD.split("[sources]")[0], "missing key(s) sources"),
    (_edit(GOOD, 'builder = "flat"', 'builder = "hypercube"'), "known: 'fat-tree'"),
    (_edit(GOOD, 'placement = "contiguous"', 'placement = "diagonal"'),
     "placement 'diagonal' is unknown; known: 'contiguous'"),
    (_edit(GOOD, '"$scaleup"', '"$scaledown"'), "is not one of the tokens"),
    (_edit(GOOD, 'name = "lite-flat"', 'name = "a@b"'), "must not contain '@'"),
    (_edit(GOOD, 'gpu = "Lite"', 'gpu = "Lite9"'), "unknown GPU 'Lite9'"),
    ("name = ", "malformed TOML"),
])
def test_bad_scenario_files(text, needle):
    with pytest.raises(UserError, match=None) as err:
        load_scenario_text(text)
    assert needle in str(err.value)


def test_ocs_needs_circuits_and_others_refuse_them():
    ocs = shipped_scenarios()["lite-ocs"].to_toml()
    without = ocs.replace('circuits = "best"\n', '')   # its circuits, the faster layout
    assert without != ocs
    with pytest.raises(UserError, match="needs \\[collective\\] circuits"):
        load_scenario_text(without)
    with pytest.raises(UserError, match="applies only to an 'ocs' fabric"):
        load_scenario_text(GOOD.replace('calibration = "default"',
                                        'calibration = "default"\ncircuits = "ring"'))


def test_unknown_names():
    with pytest.raises(UserError, match="unknown scenario 'lite-fast'; known: 'h100-dgx'"):
        get_scenario("lite-fast")
    with pytest.raises(UserError, match="unknown GPU 'Tiny'"):
        get_scenario("lite-flat@Tiny")
    with pytest.raises(UserError, match="scenario file .* does not exist"):
        get_scenario("/nonexistent/x.toml")
    with pytest.raises(UserError, match="unknown parameter 'fabric.colour'"):
        get_scenario("lite-flat").with_param("fabric.colour", 1)
    with pytest.raises(UserError, match="unknown parameter 'adjust.speed'"):
        get_scenario("lite-flat").with_param("adjust.speed", 1)


def test_fabric_gpu_must_be_the_scenario_gpu():
    text = GOOD.replace('gpu = "$gpu"', 'gpu = "H100-SXM"')
    with pytest.raises(UserError, match="fabric's GPUs are 'H100-SXM'"):
        build_fabric(load_scenario_text(text))


def test_adjust_refuses_negative_values():
    with pytest.raises(UserError, match=r"adjust.bandwidth_scale must be a number from 1e-09 to"):
        Adjust(bandwidth_scale=0.0)
    with pytest.raises(UserError, match="adjust.hop_latency"):
        get_scenario("lite-flat").with_param("adjust.hop_latency", -1e-6)


def test_two_different_scenarios_of_one_label_are_refused(tmp_path):
    """Hostile pass 219: a scenario file named as a shipped scenario, on its GPU, shares its
    label; compare keyed the results by label and printed one row where two were asked
    (compare --scenarios h100-dgx,FILE: one decode row, exit 0)."""
    from click.testing import CliRunner

    from netmodel.cli.main import cli
    from netmodel.study.scenario_catalog import expand_scenarios, get_scenario
    from tests.netmodel.cli_helpers import one_line_error

    shipped = get_scenario("h100-dgx")
    other = tmp_path / "other.toml"
    other.write_text(shipped.to_toml().replace('placement = "contiguous"',
                                               'placement = "spread"'))
    same = tmp_path / "same.toml"
    same.write_text(shipped.to_toml())
    with pytest.raises(UserError, match=r"^scenarios 'h100-dgx' and '.+' differ but are "
                                        r"both h100-dgx@H100-SXM; give each scenario its own "
                                        r"name$"):
        expand_scenarios(["h100-dgx", str(other)])
    # the same scenario twice (a file equal to the shipped one) is still one scenario
    assert expand_scenarios(["h100-dgx", str(same)]) == [shipped]
    r = CliRunner().invoke(cli, ["compare", "--scenarios", f"h100-dgx,{other}", "--models",
                                 "Llama-3-8B", "-q", "--no-plot", "--out",
                                 str(tmp_path / "out")], prog_name="netmodel")
    one_line_error(r, "differ but are both h100-dgx@H100-SXM")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("typed, says", [
    ("nvls", "('nvls' is NCCL's name; netmodel calls it 'in-network')"),
    ("Two_Shot", "(netmodel spells it 'two-shot')"),   # 'Ring' is 'ring' (chosen, h728)
])
def test_a_scenarios_algorithm_in_another_name_says_netmodels(typed, says):
    # the [collective] algorithm of a scenario file gets the hint the command line gives
    # (collectives.algorithms.unknown_algorithm): it said only "algorithm 'nvls' is unknown"
    from tests.netmodel.scenario_helpers import scenario_toml

    text = scenario_toml("x", "H100-SXM", {"builder": "ring", "n": 8, "gpu": "$gpu"})
    text = text.replace('algorithm = "auto"', f'algorithm = "{typed}"')
    assert f'algorithm = "{typed}"' in text
    with pytest.raises(UserError) as exc:
        load_scenario_text(text)
    assert says in str(exc.value) and "known: 'auto', 'bidirectional-ring'" in str(exc.value)
