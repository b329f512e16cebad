"""A scenario file may name a saved fabric instead of a [fabric] table: ``fabric = "FILE"``
(a .json/.graphml of ``netmodel topology export``), read relative to the scenario file's own
folder, with --fabric's intake (size caps before parsing, one-line refusals, exit 2) and the
scenario's GPU checked against the file's. Before, such a file was refused ("[fabric] must be
a table").

The check of the whole path: the shipped h100-dgx scenario exported to JSON and named by a
copy of h100-dgx.toml gives byte-identical blast-radius, availability and sweep JSON, and the
same compare JSON but for the fabric column, which names the file."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_files import load_scenario, load_scenario_text
from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import gpu_file_text

SHIPPED = resources.files("netmodel").joinpath("data/scenarios/h100-dgx.toml").read_text()


def _with_file(text: str, fabric: str, gpu: str | None = None) -> str:
    """h100-dgx.toml with its [fabric] table replaced by ``fabric = "FABRIC"``."""
    head, rest = text.split("[fabric]\n", 1)
    tail = rest.split("[collective]", 1)[1]
    line = 'gpu = "H100-SXM"\n'
    assert line in head
    new = (f'gpu = "{gpu}"\n' if gpu else line) + f"fabric = {json.dumps(fabric)}\n"
    return head.replace(line, new) + "[collective]" + tail


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``(scenario file, fabric file, a folder that is neither's)``: h100-dgx exported to
    ``fab/h100.json`` and ``fab/mine.toml`` naming it by a path relative to ``fab``."""
    root = tmp_path_factory.mktemp("h288")
    fab = root / "fab"
    fab.mkdir()
    r = run_cli(["topology", "export", "h100-dgx", "-o", fab / "h100.json"])
    assert r.exit_code == 0, r.output
    (fab / "mine.toml").write_text(_with_file(SHIPPED, "h100.json"))
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    return fab / "mine.toml", fab / "h100.json", elsewhere


def _json(args, cwd) -> str:
    r = run_cli(args, cwd=cwd)
    assert r.exit_code == 0, (r.output, r.exception)
    return r.output


def test_blast_radius_and_availability_json_are_the_shipped_scenarios(files):
    toml, _, elsewhere = files   # run from another folder: the path is the scenario file's
    for cmd, extra in (("blast-radius", []), ("availability", ["--trials", 40, "--seed", 3])):
        args = [cmd, "--model", "Llama-3-70B", "--json", *extra]
        shipped = _json([*args, "--scenario", "h100-dgx"], elsewhere)
        mine = _json([*args, "--scenario", toml], elsewhere)
        assert mine == shipped, cmd
    doc = json.loads(mine if cmd == "blast-radius" else _json(
        ["blast-radius", "--model", "Llama-3-70B", "--json", "--scenario", toml], elsewhere))
    # by hand: 4 servers x 8 H100 = 32 GPUs; Llama-3-70B decode at TP 4 makes 32 / 4 = 8
    # instances, so a GPU die takes down one of 8: 1/8 = 12.5% of the tokens
    die = next(r for r in doc["rows"] if r["cls"] == "gpu-die")
    assert (doc["gpus"], doc["tp"], doc["instances"]) == (32, 4, 8)
    assert die["count"] == 32 and die["tokens_lost_pct_mean"] == pytest.approx(12.5)
    assert doc["tokens_per_s"] == pytest.approx(8 * doc["instance_tokens_per_s"], rel=1e-12)


def test_compare_json_is_the_shipped_scenarios_but_the_fabric_names_the_file(files, tmp_path):
    toml, _, elsewhere = files
    shipped_spec = get_scenario("h100-dgx").fabric_spec()
    out = {}
    for name, ref in (("shipped", "h100-dgx"), ("mine", toml)):
        r = run_cli(["compare", "--scenarios", ref, "--models", "Llama-3-8B", "--out",
                     tmp_path / name], cwd=elsewhere)
        assert r.exit_code == 0, (r.output, r.exception)
        out[name] = (tmp_path / name / "compare.json").read_text()
    assert out["mine"].count('"fabric": "h100.json"') == out["shipped"].count(
        f'"fabric": {json.dumps(shipped_spec)}') >= 2   # prefill and decode rows at least
    assert out["mine"].replace('"fabric": "h100.json"', f'"fabric": {json.dumps(shipped_spec)}') \
        == out["shipped"]


def test_sweep_json_is_the_shipped_scenarios(files, tmp_path):
    toml, _, elsewhere = files
    docs = []
    for name, ref in (("shipped", "h100-dgx"), ("mine", toml)):
        r = run_cli(["sweep", "--scenarios", ref, "--param", "adjust.hop_latency=0,2us",
                     "--models", "Llama-3-8B", "--phases", "decode", "--out", tmp_path / name],
                    cwd=elsewhere)
        assert r.exit_code == 0, (r.output, r.exception)
        docs.append((tmp_path / name / "sweep.json").read_text())
    assert docs[0] == docs[1]


def test_the_scenario_holds_the_files_graph_and_writes_the_file_back(files):
    toml, fabric, _ = files
    s = load_scenario(toml)
    assert s.fabric_spec() == "h100.json" and s.fabric_file == "h100.json" and s.fabric == {}
    assert s.graph.number_of_nodes() == 48 and s.builder == "rail-optimized"  # as built
    # read once per file content: a second load is equal (shares the graph)
    again = load_scenario(toml)
    assert again == s and again.graph is s.graph
    text = s.to_toml()
    assert 'fabric = "h100.json"\n' in text and "[fabric]" not in text
    assert load_scenario_text(text, str(toml), toml.parent) == s
    # the adjust parameters still apply; the file has no builder parameters to sweep
    assert s.with_param("adjust.hop_latency", 1e-6).adjust.hop_latency == 1e-6


def test_an_edited_file_is_read_again_not_served_from_the_cache(tmp_path):
    r = run_cli(["topology", "export", "h100-dgx", "-o", tmp_path / "f.json"])
    assert r.exit_code == 0, r.output
    toml = tmp_path / "s.toml"
    toml.write_text(_with_file(SHIPPED, "f.json"))
    before = load_scenario(toml)
    doc = json.loads((tmp_path / "f.json").read_text())
    edited = [e for e in doc["edges"] if e["bandwidth"] == 50e9]   # the 400G NIC links
    assert len(edited) == 32
    for e in edited:
        e["bandwidth"] = 25e9
    (tmp_path / "f.json").write_text(json.dumps(doc))   # same path, new content
    after = load_scenario(toml)
    assert after != before and after.graph is not before.graph
    assert after.fabric_params() != before.fabric_params()   # the cache key: the content
    nic = [d["bandwidth"] for *_, d in after.graph.edges(data=True)
           if d["bandwidth"] in (25e9, 50e9)]
    assert nic == [25e9] * 32


def _error_case(tmp_path: Path, name: str):
    """(scenario file, text its one-line error must hold) of refusal ``name``."""
    fabric, gpu = {"missing": ("nothere.json", None), "directory": ("d.json", None),
                   "malformed": ("bad.json", None), "deep": ("deep.json", None),
                   "suffix": ("h100.toml", None), "gpu": ("h100.json", "Lite"),
                   "big": ("h100.json", None), "ocs": ("ocs.json", "Lite"),
                   "graphml": ("bad.graphml", None)}[name]
    (tmp_path / "d.json").mkdir()
    (tmp_path / "bad.json").write_text('{"nodes": [')
    (tmp_path / "bad.graphml").write_text("<graphml><graph")
    (tmp_path / "deep.json").write_text("[" * 100_000)
    for ref, out in (("h100-dgx", "h100.json"), ("lite-ocs", "ocs.json")):
        r = run_cli(["topology", "export", ref, "-o", tmp_path / out])
        assert r.exit_code == 0, r.output
    toml = tmp_path / f"{name}.toml"
    toml.write_text(_with_file(SHIPPED, fabric, gpu))
    needle = {"missing": f"fabric file {str(tmp_path / 'nothere.json')!r} does not exist",
              "directory": f"fabric file {str(tmp_path / 'd.json')!r} is not a file",
              "malformed": "bad.json is not a readable json fabric",
              "deep": "JSON nested 100000 deep; at most 32",
              "suffix": "fabric must be a [fabric] table or a saved fabric file",
              "gpu": "holds H100-SXM GPUs, not the scenario's gpu 'Lite'",
              "big": "bytes, over the limit of 1,000",
              "ocs": "optical circuit switch",
              "graphml": "bad.graphml"}[name]
    return toml, needle


@pytest.mark.parametrize("name", ["missing", "directory", "malformed", "deep", "suffix",
                                  "gpu", "big", "ocs", "graphml"])
def test_a_bad_fabric_file_is_one_line_exit_2(tmp_path, name):
    toml, needle = _error_case(tmp_path, name)
    env = {"NETMODEL_MAX_FABRIC_FILE_BYTES": "1000"} if name == "big" else None
    for args in (["compare", "--scenarios", toml, "--models", "Llama-3-8B"],
                 ["blast-radius", "--scenario", toml, "--model", "Llama-3-8B"],
                 ["availability", "--scenario", toml, "--model", "Llama-3-8B"]):
        line = one_line_error(run_cli(args, env=env), needle)
        assert str(toml) in line   # whose fabric it is


def test_the_files_gpus_are_not_swapped(files):
    toml, _, elsewhere = files
    r = run_cli(["compare", "--scenarios", toml, "--gpus", "Lite", "--models", "Llama-3-8B"],
                cwd=elsewhere)
    one_line_error(r, "runs on the fabric file 'h100.json', whose GPUs are 'H100-SXM', not "
                      "'Lite'")
    r = run_cli(["sweep", "--scenarios", toml, "--param", "fabric.domains=2,4", "--models",
                 "Llama-3-8B"], cwd=elsewhere)
    one_line_error(r, "unknown parameter 'fabric.domains'")


@pytest.mark.parametrize(("spec", "label"), [
    ("torus:dims=2x2x2,gpu=Lite", "torus:dims=2x2x2,gpu=Lite"),          # was ...,gpu=Lite@Lite
    ("ring:gpu=Lite+BW,n=8", "ring:gpu=Lite+BW,n=8"),
    ("lite-groups:base=[ring:n=4],lite=Lite", "lite-groups:base=[ring:n=4],lite=Lite"),
    ("ring:n=8", "ring:n=8@H100-SXM"),                                   # the GPU said once
    ("ring:n=8,gpu=lite", "ring:n=8,gpu=lite"),   # (h293) any case: was ring:n=8,gpu=lite@Lite
])
def test_a_fabric_spec_naming_its_gpu_is_labelled_once(spec, label):
    r = run_cli(["blast-radius", "--fabric", spec, "--model", "Llama-3-8B", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.output)["scenario"] == label




def test_a_users_gpu_in_the_file_must_be_the_scenarios(tmp_path):
    """A fabric of a user's GPU carries it (gpu_types): the scenario's GPU file must give the
    same GPU, not one of that name with other figures."""
    (tmp_path / "g.toml").write_text(gpu_file_text(sms=100))
    (tmp_path / "g2.toml").write_text(gpu_file_text(sms=50))
    r = run_cli(["topology", "export", "ring:n=8,gpu=g.toml", "-o", "ring.json"], cwd=tmp_path)
    assert r.exit_code == 0, r.output
    text = _with_file(SHIPPED, "ring.json", "g.toml")
    s = load_scenario_text(text, "same.toml", tmp_path)
    assert (s.gpu, s.gpu_spec.sms, s.graph.graph["gpus"]) == ("Test-GPU", 100, 8)
    (tmp_path / "other.toml").write_text(_with_file(SHIPPED, "ring.json", "g2.toml"))
    one_line_error(run_cli(["compare", "--scenarios", tmp_path / "other.toml"]),
                   "holds its own Test-GPU GPUs (its gpu_types), not the scenario's gpu of "
                   "that name: they differ in sms")


@pytest.mark.parametrize(("value", "shown"), [(5, "5"), (["h100.json"], "['h100.json']"),
                                              (True, "True")])
def test_a_fabric_neither_table_nor_file_is_refused_naming_both(tmp_path, value, shown):
    # (h293) 'fabric = 5' was refused '[fabric] must be a table', naming neither the value
    # nor the file a fabric may also be; now the refusal a wrong suffix gets
    toml = tmp_path / "s.toml"
    toml.write_text(_with_file(SHIPPED, value))
    line = one_line_error(run_cli(["compare", "--scenarios", toml, "--models", "Llama-3-8B"]))
    assert line == (f"error: {toml}: fabric must be a [fabric] table or a saved fabric file "
                    f"(.json, .graphml: netmodel topology export), relative to the scenario "
                    f"file, got {shown}")
