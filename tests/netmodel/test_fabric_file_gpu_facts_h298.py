"""A fabric built from a spec naming a GPU file and the same fabric saved with ``netmodel
topology export`` cost the same in a fresh process: the GPU file's die table (with its
list price), its ``host_power_W`` and its ``derive_from`` chain travel in the file (h298).

compute.hardware keeps what a GPU file says beside the GpuSpec by GPU name (derivations,
die tables, host power rows, the specs read). 4a9a068 carried the derivations; the die
table and the host power row were still lost, so with ``half.toml`` below (half a B200, a
die table of 2 x 400 mm^2 N3 dies listed at $21,000, a 300 W host) ``cost_summary`` of
``rail-optimized:domains=2`` (16 GPUs) in a fresh process read from the saved file priced
the GPU at the B200's margin ($18,156.53, not the list $21,000), charged the host by the
TDP rule (16 x 381.43 W x 0.75 = 4,577 W, not 16 x 300 x 0.75 = 3,600 W), so capex
$437,270 vs $482,766 and tokens/s/W 4.52 vs 4.97; a GPU deriving from another GPU of the
file (``quarter``) was refused outright (its base unknown). Now the builder records graph
attribute ``gpu_file_facts`` (compute.gpu_facts.GPU_FILE_FACTS) and the GPUs it derives from
in ``gpu_types``; a fabric file read notes them as its GPU file would have, checked as a GPU
file's entry is."""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import run_python

ROW = '{{value = {v}, unit = "{u}", source = "test", ref = "", confidence = "assumption"}}'
DIE = "\n".join(f"{k} = {ROW.format(v=v, u=u)}" for k, v, u in (
    ("area", 400, "mm^2"), ("dies", 2, "1"), ("sms_physical", 40, "1"),
    ("sms_enabled", 37, "1"), ("process", '"N3"', "name"), ("hbm_sites", 4, "1"),
    ("packaging", '"CoWoS-L"', "name"), ("list_price", 21000, "USD")))
HALF = f'''[gpu."H298Half"]
derive_from = "B200-HGX"
fraction = 0.5
max_instance = 8
source = "test: half a B200 with a die of its own and a 300 W host"
host_power_W = {{value = 300, unit = "W", source = "test", confidence = "assumption"}}

[gpu."H298Half".die]
{DIE}
'''
GPUS = HALF + '''
[gpu."H298Quarter"]
derive_from = "H298Half"
fraction = 0.5
max_instance = 8
source = "test: half of H298Half"
'''
#: One process: cost_summary of Llama-3-70B decode on the fabric argv[1] names, as JSON.
COST = ("import json, sys\n"
        "from netmodel.study.cost import cost_summary\n"
        "from netmodel.study.scenarios import fabric_scenario\n"
        "from netmodel.study.fabric_ref import resolve_fabric\n"
        "s = fabric_scenario(resolve_fabric(sys.argv[1]).graph, 'fab')\n"
        "print(json.dumps(cost_summary(s, 'Llama-3-70B', 'decode').to_dict(), "
        "sort_keys=True))\n")
#: Then ``netmodel topology export argv[1] -o T`` for each T of argv[2:], in that process.
EXPORT = ("from netmodel.cli.main import main\n"
          "for target in sys.argv[2:]:\n"
          "    try:\n"
          "        main(['topology', 'export', sys.argv[1], '-o', target])\n"
          "    except SystemExit as done:\n"
          "        if done.code not in (None, 0):\n"
          "            raise\n")


def _run(folder, *args: str) -> str:
    return run_python(folder, *args, timeout=300)


SPEC = "rail-optimized:domains=2,gpu=half.toml"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("h298")
    (path / "half.toml").write_text(HALF)     # one GPU: gpu=FILE in a spec
    (path / "gpus.toml").write_text(GPUS)
    return path


def test_half_cost_json_spec_and_files_bit_identical(folder):
    spec = SPEC
    # one process: the spec's cost first (as a fresh process gives it), then both exports
    out = _run(folder, "-c", COST + EXPORT, spec, "half.json", "half.graphml").splitlines()
    runs = {spec: out[0]}
    runs |= {ref: _run(folder, "-c", COST, ref) for ref in ("half.json", "half.graphml")}
    assert set(runs.values()) == {runs[spec]}, runs
    cost = json.loads(runs[spec])
    # the die table's list price (its row's confidence 'assumption': an estimated price),
    # and 16 GPUs' hosts at the file's 300 W at the default
    # host load fraction 0.75 (the TDP rule would give 534 x 500 / 700 = 381.43 W each)
    assert (cost["gpu_price_usd"], cost["gpu_price_basis"]) == (21000.0, "estimated price")
    assert cost["capex_usd"]["gpu"] == 16 * 21000.0
    assert cost["power_w"]["host"] == 16 * 300 * 0.75


def test_a_gpu_deriving_from_another_of_its_file_costs_the_same(folder):
    # H298Quarter's dies are half of H298Half's (its table): the file carries H298Half's
    # spec and facts though no node is one. One process builds the fabric, saves it both
    # ways, then costs the fabric it built.
    here = ("import json, sys\n"
            "from compute.hardware import load_gpu_file\n"
            "from netmodel.study.cost import cost_summary\n"
            "from netmodel.study.scenarios import fabric_scenario\n"
            "from topologies.io import write_graph\n"
            "from topologies.specs import build\n"
            "g = build(('rail-optimized', {'domains': 2, "
            "'gpu': load_gpu_file('gpus.toml')['H298Quarter']}))\n"
            "for target in sys.argv[1:]:\n"
            "    write_graph(g, target)\n"
            "s = fabric_scenario(g, 'fab')\n"
            "print(json.dumps(cost_summary(s, 'Llama-3-70B', 'decode').to_dict(), "
            "sort_keys=True))\n")
    built = _run(folder, "-c", here, "quarter.json", "quarter.graphml")
    saved = json.loads((folder / "quarter.json").read_text())["graph"]
    assert list(saved["gpu_types"]) == ["H298Quarter", "H298Half"]
    assert saved["gpu_file_facts"]["H298Quarter"] == {"derive_from": "H298Half",
                                                     "fraction": 0.5}
    fresh = {ref: _run(folder, "-c", COST, ref) for ref in ("quarter.json", "quarter.graphml")}
    assert set(fresh.values()) == {built}, (fresh, built)
    cost = json.loads(built)
    assert cost["gpu_price_basis"] != "list price"   # a derived die carries no list price


def _hostile(folder, name: str, change) -> str:
    doc = json.loads((folder / "half.json").read_text())
    change(doc["graph"]["gpu_file_facts"])
    (folder / name).write_text(json.dumps(doc))
    return name


@pytest.mark.parametrize("change, needles", [
    (lambda f: f["H298Half"]["die"]["sms_enabled"].update(value=36),
     ["gpu_file_facts", "2 dies x 36 enabled SMs = 72, but GPU 'H298Half' has 74 SMs"]),
    (lambda f: f["H298Half"]["host_power_W"].update(value=-1),
     ["host_power_W must be a finite number >= 0"]),
    (lambda f: f["H298Half"].update(derive_from="MI999"),
     ["derives from unknown GPU 'MI999'"]),
    (lambda f: f["H298Half"].update(fraction=float("inf")), ["fraction"]),
    (lambda f: f["H298Half"].update(price=1), ["unknown key(s) price"]),
    (lambda f: f.update(Lite={}), ["'Lite' names a catalog GPU"]),
    (lambda f: f.update(Ghost={}), ["'Ghost' is not one of the GPU types given"]),
    (lambda f: f["H298Half"].update(derive_from="H298Half"),
     ["'H298Half' derives from itself"]),
], ids=["die-sms", "host-negative", "unknown-base", "fraction-inf", "unknown-key",
        "catalog-name", "no-spec", "cycle"])
def test_hostile_facts_refused_in_one_line(folder, change, needles):
    if not (folder / "half.json").exists():
        _run(folder, "-m", "netmodel", "topology", "export", SPEC, "-o", "half.json")
    bad = _hostile(folder, "bad.json", change)
    r = run_cli(["topology", "show", bad], cwd=folder)
    one_line_error(r, "bad.json", *needles)
