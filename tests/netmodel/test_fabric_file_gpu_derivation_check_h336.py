"""A saved fabric's ``gpu_file_facts`` derivation must be the one its GPU spec was derived
by (h336).

A fabric file carries its GPU types' specs (``gpu_types``) and, beside them, what their GPU
file said (``gpu_file_facts``: ``derive_from`` and ``fraction``). The derivation prices the
GPU (the dies of a GPU without a die table of its own are its base's, scaled by the
fraction) but was not checked against the spec it describes: half a B200 (74 SMs, 500 W)
exported with its facts edited to fraction 0.25 priced at $14.9k, 1.0 at $25.3k, derived
from H100-SXM at $24.9k, instead of $18.2k. Now the spec is re-derived from the facts
(compute.hardware.derive_gpu of the base at the fraction, with the multipliers the spec's
own fields give and the fields a derived entry may set itself) and a field the derivation
sets that differs is refused in one line."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu
from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import run_python, write_scenario
from topologies.io import read_graph

HALF = ('[gpu."H336Half"]\nderive_from = "B200-HGX"\nfraction = 0.5\nmax_instance = 8\n'
        'source = "test: half a B200"\n')
#: Every key a derived entry may set beside derive_from and fraction (compute.hardware's
#: GPU-file reader): the multipliers, max_instance, nvlinks, the flag; and a die table.
OWN = ('[gpu."H336Own"]\nderive_from = "B200-HGX"\nfraction = 0.5\nflops_multiplier = 1.2\n'
       'hbm_bandwidth_multiplier = 1.5\nnetwork_bandwidth_multiplier = 2\n'
       'hbm_capacity_multiplier = 0.75\nmax_instance = 4\nnvlinks = 9\n'
       'scaleup_reduction = false\nsource = "test: half a B200, its own multipliers"\n')
#: One process: cost_summary of Llama-3-8B decode on the fabric argv[1] names, as JSON.
COST = ("import json, sys\n"
        "from netmodel.study.cost import cost_summary\n"
        "from netmodel.study.scenarios import fabric_scenario\n"
        "from netmodel.study.fabric_ref import resolve_fabric\n"
        "s = fabric_scenario(resolve_fabric(sys.argv[1]).graph, 'fab')\n"
        "print(json.dumps(cost_summary(s, 'Llama-3-8B', 'decode').to_dict(), "
        "sort_keys=True))\n")
#: One process: ``netmodel topology export SPEC -o TARGET`` for each pair SPEC TARGET of
#: argv[1:] (as ``python -m netmodel`` runs it).
EXPORTS = ("import sys\n"
           "from netmodel.cli.main import main\n"
           "for spec, target in zip(sys.argv[1::2], sys.argv[2::2]):\n"
           "    try:\n"
           "        main(['topology', 'export', spec, '-o', target])\n"
           "    except SystemExit as done:\n"
           "        if done.code not in (None, 0):\n"
           "            raise\n")


def _run(folder, *args: str) -> str:
    return run_python(folder, *args, timeout=300)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("h336")
    (path / "half.toml").write_text(HALF)
    (path / "own.toml").write_text(OWN)
    # every export the tests read, in one process (the costs read back are each a fresh one)
    _run(path, "-c", EXPORTS, *(a for gpu in ("half", "own") for suffix in ("json", "graphml")
                                for a in (f"rail-optimized:domains=2,gpu={gpu}.toml",
                                          f"{gpu}.{suffix}")))
    return path


def _edited(folder, name: str, table: str, gpu: str, change: dict) -> str:
    doc = json.loads((folder / f"{name.split('-')[0]}.json").read_text())
    doc["graph"][table][gpu].update(change)
    (folder / f"{name}.json").write_text(json.dumps(doc))
    return f"{name}.json"


#: (file, graph table, GPU, its edit, the refusal's words: GPU, field, file's, re-derived)
EDITS = [
    ("half-quarter", "gpu_file_facts", "H336Half", {"fraction": 0.25},
     "GPU 'H336Half' has sms 74, but derive_from 'B200-HGX' at fraction 0.25 gives 37"),
    ("half-whole", "gpu_file_facts", "H336Half", {"fraction": 1.0},
     "GPU 'H336Half' has sms 74, but derive_from 'B200-HGX' at fraction 1 gives 148"),
    ("half-h100", "gpu_file_facts", "H336Half", {"derive_from": "H100-SXM"},
     "GPU 'H336Half' has sms 74, but derive_from 'H100-SXM' at fraction 0.5 gives 66"),
    # the same SMs (round(148 x 0.501) = 74): the TDP tells, 1,000 W x 0.501 at the clock
    # its FLOP/s read back give, 0.5 / 0.501 (compute.hardware.rated_at_clock):
    # 501 x (0.115 + 0.885 x (0.75 r^3 + 0.25)) = 499.0127...
    ("half-near", "gpu_file_facts", "H336Half", {"fraction": 0.501},
     "GPU 'H336Half' has tdp 500.0, but derive_from 'B200-HGX' at fraction 0.501 gives "
     f"{501 * (0.115 + 0.885 * (0.75 * (0.5 / 0.501) ** 3 + 0.25))!r}"),
    # the spec edited instead: scale-out is the network multiplier's (2, from scale-up),
    # 2 x 0.5 x 400 Gb/s = 50 GB/s
    ("own-scaleout", "gpu_types", "H336Own", {"scaleout_bandwidth": 25e9},
     "GPU 'H336Own' has scaleout_bandwidth 25000000000.0, but derive_from 'B200-HGX' at "
     "fraction 0.5 gives 50000000000.0"),
]


@pytest.mark.parametrize("name, table, gpu, change, words", EDITS, ids=[e[0] for e in EDITS])
def test_an_edited_derivation_is_refused_library_and_cli(folder, name, table, gpu, change,
                                                         words):
    bad = _edited(folder, name, table, gpu, change)
    with pytest.raises(UserError, match="gpu_file_facts: " + words.replace(".", r"\.")):
        read_graph(folder / bad)
    toml = "half.toml" if gpu == "H336Half" else "own.toml"
    write_scenario(folder, name, toml, bad)
    r = run_cli(["cost", "--scenario", f"{name}.toml", "--model", "Llama-3-8B", "--phase",
                 "decode"], cwd=folder)
    one_line_error(r, f"{name}.json", words)
    r = run_cli(["topology", "show", bad], cwd=folder)
    one_line_error(r, f"{name}.json", words)


@pytest.mark.parametrize("gpu", ["half", "own"])
def test_an_untouched_export_costs_bit_identical(folder, gpu):
    spec = f"rail-optimized:domains=2,gpu={gpu}.toml"
    runs = {ref: _run(folder, "-c", COST, ref) for ref in (spec, f"{gpu}.json",
                                                           f"{gpu}.graphml")}
    assert set(runs.values()) == {runs[spec]}, runs
    cost = json.loads(runs[spec])
    if gpu == "half":   # the margin of a B200 on half its package cost ($18,156.53 before
        # a wafer's good dies were its whole dies x the yield)
        assert round(cost["gpu_price_usd"], 2) == 18140.11
    saved = json.loads((folder / f"{gpu}.json").read_text())["graph"]["gpu_types"]
    if gpu == "own":   # its own fields kept: 0.5 x 1.2 x 2,250 TFLOP/s, 9 links, no SHARP
        own = saved["H336Own"]
        assert (own["nvlinks"], own["scaleup_reduction"], own["max_instance"]) == (9, False, 4)
        assert own["flops_bf16"] == pytest.approx(0.5 * 1.2 * 2250e12, rel=1e-12)


def test_check_derivation_closed_forms():
    from compute.gpu_facts import check_derivation  # new in h336

    b200 = get_gpu("B200-HGX")
    own = derive_gpu(b200, "Mine", fraction=0.5, flops_multiplier=3, hbm_capacity_multiplier=2,
                     max_instance=2)
    check_derivation(own, b200, 0.5, "f.json")   # its own multipliers read back
    with pytest.raises(UserError, match=r"^f\.json: GPU 'Mine' has sms 74, but derive_from "
                                        r"'H100-SXM' at fraction 0\.5 gives 66$"):
        check_derivation(own, get_gpu("H100-SXM"), 0.5, "f.json")
    # fp8 over bf16 as the base's (2x): 3 x bf16 but fp8 unscaled is no derivation
    from dataclasses import replace
    odd = replace(own, flops_fp8=0.5 * b200.flops_fp8)
    with pytest.raises(UserError, match="has flops_fp8 "):
        check_derivation(odd, b200, 0.5, "f.json")
