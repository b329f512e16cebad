"""Hostile-input round 36, on what rounds 15-35 (scripts/hostile_round15.py .. 35.py) tried
least: values at their exact bounds and one past them (``--kv-ports`` 3 and 4 on lite-ocs,
``--nccl-buffsize`` 7 B and 1 TiB, ``--mtp-tokens 17``, ``--seed 2**63``, a die of the
wafer's usable area, ``NETMODEL_JOBS`` 999,999 and 1,000,000), numbers written as no count is
(``0x8``, ``1e3``, ``-0.0``, ``5e-324``, ``1e308``, fullwidth digits), options that contradict
each other (``--tuner nccl --algorithm ring``, ``--list`` with a comparison's options,
``--no-fabric`` with a fabric part's), data files with odd but plausible content (a model's
key given in two cases, a fabric JSON whose node id is a number or whose edge is listed
twice, a GraphML with a DOCTYPE, a scenario's ``nccl_release`` as a number, a workload's
count as a float, a GPU file's unused GPU wrong); and the Python API given one thing twice
or the wrong type: a model, scenario, phase, GPU or network listed twice
(``netmodel.compare``, ``sweep``, ``run_study``: merged into one row or doubled without a
word, where the command line refuses ``--models A,A``), a collective candidate listed twice
(``FabricCostModel(algorithms=['ring', 'RING'])``), a GPU laid twice into an OCS's logical
topology (``circuits_for('ring', [0, 0, 1])``: a circuit from a GPU to itself), a flag given
as ``'yes'`` (``FabricCostModel(validated='yes')``: the graph left unchecked), a fabric
spec where a cost model is meant (``concurrent_cost('ring:n=8', ...)``: AttributeError),
and a keyword ``degraded_cost`` passes to no one (TypeError blaming
``FabricCostModel.__init__``; ``ring_order`` dropped without a word), a ``collectives``
of another type for ``fabric_search`` (AttributeError), a negative binomial's ``alpha``
with a yield model that reads none (``die_yield(model='poisson', alpha=2)``, taken), a
``setup`` of another type for ``collective_report`` (AttributeError), ``blast_radius`` of no
class, and 10^7 pairs for ``compute.evaluate_many`` (two minutes, no estimate). At the HEAD
before a747aae2: 134 invocations, 24 failed (all library); the fixes are in
tests/netmodel/test_hostile_round36.py's (a)-(i).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed, no traceback, nothing written in the
case's folder; a value taken is exit 0 (or 3, an unmet target); a library refusal is a
UserError (a ValueError) holding the words listed; a library value taken gives the result it
shows.

Usage: ``python scripts/hostile_round36.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner); about
half a minute on two cores.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_round32 import env_case  # noqa: E402
from hostile_tally import Case, Made, refusal_case, run_round, taken_case  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
E = "Llama-3-8B"
INFER = ["infer", "--model", E, "--gpu", "H100-SXM", "--tp", "1", "--batch", "8"]
SEARCH = ["search", "--model", E, "--gpu", "H100-SXM", "--max-batch", "8"]
YIELD = ["yield", "--area", "814"]
COST = ["cost", "--scenario", "lite-flat", "--model", E, "--max-batch", "8"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", E, "--max-batch", "16"]
OCS = ["serve", "--scenario", "lite-ocs", "--model", E, "--max-batch", "16"]
COLLECTIVE = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "1M"]
COSTS = ["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8"]
COMPARE = ["compare", "--models", E, "--scenarios", "lite-flat", "--phases", "decode",
           "--max-batch", "8", "-q", "--no-plot"]
SWEEP = ["sweep", "--scenarios", "lite-flat", "--models", E, "--phases", "decode",
         "--max-batch", "8", "-q", "--no-plot", "--param"]
AVAIL = ["availability", "--scenario", "lite-flat", "--model", E, "--max-batch", "8", "-q",
         "--no-plot", "--trials", "10"]
BLAST = ["blast-radius", "--scenario", "lite-flat", "--model", E, "--max-batch", "8",
         "--no-plot"]
STUDY = ["study", "lite-gpu", "--out", "o", "-q", "--no-plot"]
MODEL = ["infer", "--model", "M", "--model-file", "m.toml", "--gpu", "H100-SXM", "--tp", "1",
         "--batch", "8"]
MINE = ["infer", "--model", E, "--gpu", "Mine", "--tp", "1", "--batch", "8", "--gpu-file",
        "g.toml"]
FABRIC = ["collective", "all-reduce", "--fabric", "f.json", "--group", "3", "--size", "1M"]
SCEN = ["compare", "--models", E, "--phases", "decode", "--max-batch", "8", "-q", "--no-plot",
        "--scenarios", "s.toml"]
SCEN_COLLECTIVE = ["collective", "all-reduce", "--scenario", "s.toml"]
WORKLOAD = [*SERVE, "--workload", "w.toml"]

#: The shipped texts the files of the cases are edited from.
_LITE_FLAT = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text().replace(
    'name = "lite-flat"', 'name = "mine"', 1)
_MODEL = ('[model."M"]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n'
          'ffn = 14336\nvocab = 128256\ngated_mlp = true\nmax_context = 8192\nsource = "x"\n')
_GPU = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "x"\n'
#: A ring of 3 H100s, as ``topology export ring:n=3`` writes it.
_RING3 = {
    "directed": False, "multigraph": False,
    "graph": {"name": "ring of 3", "gpus": 3},
    "nodes": [{"id": f"gpu{i}", "kind": "gpu", "gpu": "H100-SXM"} for i in range(3)],
    "edges": [{"source": f"gpu{u}", "target": f"gpu{v}", "bandwidth": 225e9, "latency": 1e-8,
               "medium": "copper", "lanes": 18} for u, v in ((0, 1), (1, 2), (0, 2))],
}


def _edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _scenario(old: str, new: str) -> dict[str, Made]:
    return {"s.toml": _edited(_LITE_FLAT, old, new)}


def _model(old: str, new: str) -> dict[str, Made]:
    return {"m.toml": _edited(_MODEL, old, new)}


def _fabric(change: Callable[[dict], None]) -> dict[str, Made]:
    doc = json.loads(json.dumps(_RING3))
    change(doc)
    return {"f.json": json.dumps(doc)}


def _edge(key: str, value: object) -> Callable[[dict], None]:
    return lambda doc: doc["edges"][0].__setitem__(key, value)


def _folder(name: str) -> Made:
    return lambda d: (d / name).mkdir()


_ENTITIES = "".join(f'<!ENTITY {b} "{("&" + a + ";") * 10}">'
                    for a, b in zip("abcdef", "bcdefg", strict=True))
#: A GraphML whose DOCTYPE would expand one node's id to 10^7 characters ('a billion laughs').
_LAUGHS = (f'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">{_ENTITIES}]>'
           '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"><graph '
           'edgedefault="undirected"><node id="&g;"/></graph></graphml>')

#: Command lines refused: name -> (argv, files, words the line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- numbers at and past their bounds, written as no count is ------------------------
    "infer --mtp-acceptance 5e-324 (a subnormal)": (
        [*INFER, "--mtp-acceptance", "5e-324"], {},
        ("--mtp-acceptance '5e-324'", "below the smallest number")),
    "infer --tbt -0.0": ([*INFER, "--tbt", "-0.0"], {}, ("--tbt", "1 us to 10 s", "'-0.0'")),
    "infer --context 1e308": ([*INFER, "--context", "1e308"], {},
                              ("--context", "1,000,000,000", "'1e308'")),
    "search --tp 1e3": ([*SEARCH, "--tp", "1e3"], {}, ("--tp '1e3'", "TP degree 1000")),
    "search --pp up to 1024": ([*SEARCH, "--pp", "1,2,4,8,16,32,64,128,256,512,1024"], {},
                               ("PP degree 64 exceeds the 32 layers",)),
    "yield --area 5e-324": (["yield", "--area", "5e-324"], {},
                            ("--area '5e-324'", "may not be 0")),
    "yield --area 70686 (past the usable wafer by 0.17 mm^2)": (
        ["yield", "--area", "70686"], {}, ("--area '70686'", "70685.83 mm^2")),
    "yield --wafer-diameter 1e308mm": ([*YIELD, "--wafer-diameter", "1e308mm"], {},
                                       ("--wafer-diameter", "1000 mm")),
    "yield --sms 0x90/132": ([*YIELD, "--sms", "0x90/132"], {},
                             ("--sms '0x90/132'", "PHYSICAL/ENABLED")),
    "cost --clock -0.0": ([*COST, "--clock", "-0.0"], {}, ("--clock", "[0.05, 1.5]", "'-0.0'")),
    "cost --phase both --ttft 1e308": ([*COST, "--phase", "both", "--ttft", "1e308"], {},
                                       ("--ttft 1e308", "1 us to 600 s")),
    "serve --rate 5e-324": ([*SERVE, "--rate", "5e-324"], {},
                            ("--rate '5e-324'", "may not be 0")),
    "serve --load -0.0": ([*SERVE, "--load", "-0.0"], {}, ("--load '-0.0'", "1 excluded")),
    "serve --kv-ports 4 on lite-ocs (its most, 3, + 1)": (
        [*OCS, "--kv-ports", "4"], {}, ("--kv-ports '4'", "from 1 to 3")),
    "serve --mtp-tokens 17 (its most, 16, + 1)": ([*SERVE, "--mtp-tokens", "17"], {},
                                                  ("--mtp-tokens", "0 (off) to 16", "17")),
    "collective --group 0x8": ([*COLLECTIVE, "--group", "0x8"], {},
                               ("--group '0x8'", "not a node")),
    "collective torus dims 8x-0": (["collective", "all-reduce", "--fabric", "torus:dims=8x-0"],
                                   {}, ("torus:dims=8x-0", "integer >= 2")),
    "collective torus dims 1e308": (["collective", "all-reduce", "--fabric",
                                     "torus:dims=1e308"], {},
                                    ("torus:dims=1e308", "10^308 nodes", "NETMODEL_MAX")),
    "collective --nccl-buffsize 7 (its least, 8 B, - 1)": (
        [*COLLECTIVE, "--nccl-buffsize", "7"], {}, ("--nccl-buffsize", "8 B to 1 TiB", "'7'")),
    "collective --max-transfers 0": ([*COLLECTIVE, "--max-transfers", "0"], {},
                                     ("--max-transfers", ">= 1")),
    "costs --sizes 1:1e30": (["costs", "--fabric", "ring:n=8", "--sizes", "1:1e30", "--groups",
                              "8"], {}, ("--sizes '1e30'", "1 PiB")),
    "availability --spares 1e308%": ([*AVAIL, "--spares", "1e308%"], {},
                                     ("--spares '1e308%'", "0 to 128")),
    "availability --seed 2**63 (its most + 1)": ([*AVAIL, "--seed", str(2**63)], {},
                                                 ("--seed", "2**63 - 1")),
    "availability --threshold 1.0000001": ([*AVAIL, "--threshold", "1.0000001"], {},
                                           ("--threshold '1.0000001'", "(0, 100%]")),
    "availability --horizon 59min": ([*AVAIL, "--horizon", "59min"], {},
                                     ("--horizon '59min'", "1 h to 100 y")),
    "blast-radius --cluster-gpus 100 (no multiple of 128)": (
        [*BLAST, "--cluster-gpus", "100"], {}, ("--cluster-gpus 100", "128 or 256")),
    "blast-radius --area-share 1.0000001": ([*BLAST, "--area-share", "1.0000001"], {},
                                            ("--area-share", "1.0000001")),
    "blast-radius --detection 1e308": ([*BLAST, "--detection", "1e308"], {},
                                       ("--detection '1e308'", "100 y")),
    "blast-radius --rate gpu=1e-6,nic=": ([*BLAST, "--rate", "gpu=1e-6,nic="], {},
                                          ("--rate", "per part per hour")),
    "sweep values 128 and 128.0": ([*SWEEP, "fabric.n=128,128.0"], {},
                                   ("--param 'fabric.n=128,128.0'", "give each value once")),
    "sweep adjust.bandwidth_scale -0.0": ([*SWEEP, "adjust.bandwidth_scale=-0.0,1"], {},
                                          ("--param", "bandwidth_scale", "got 0.0")),
    "sweep a range of 0x4 points": ([*SWEEP, "fabric.latency=1us:2us:0x4"], {},
                                    ("--param 'fabric.latency=1us:2us:0x4'", "whole number")),
    # -- options that contradict each other ----------------------------------------------
    "infer --csv --json": ([*INFER, "--csv", "--json"], {}, ("--json or --csv",)),
    "search --tp 8 --max-gpus 4": ([*SEARCH, "--tp", "8", "--max-gpus", "4"], {},
                                   ("--max-gpus 4 is below TP 8",)),
    "yield --alpha with --model poisson": ([*YIELD, "--alpha", "1", "--model", "poisson"], {},
                                           ("--alpha applies only", "negative-binomial")),
    "yield --critical-fraction without --sms": ([*YIELD, "--critical-fraction", "0.5"], {},
                                                ("--critical-fraction", "--sms")),
    "serve --kv-ports on a fabric not optical": ([*SERVE, "--kv-ports", "2"], {},
                                                 ("--kv-ports '2'", "not optical")),
    "serve --mtp-acceptance without --mtp-tokens": ([*SERVE, "--mtp-acceptance", "0.5"], {},
                                                    ("--mtp-acceptance", "--mtp-tokens")),
    "collective --all-groups of a group of nodes": (
        [*COLLECTIVE, "--group", "gpu0,gpu1", "--all-groups"], {},
        ("--all-groups", "--group 'gpu0,gpu1'", "give --group a size")),
    "collective --tuner nccl --algorithm ring": (
        [*COLLECTIVE, "--tuner", "nccl", "--algorithm", "ring"], {},
        ("--tuner nccl", "--algorithm ring", "drop one")),
    "collective --algorithms ring,RING": ([*COLLECTIVE, "--algorithms", "ring,RING"], {},
                                          ("--algorithms 'ring,RING'", "give each once")),
    "costs --groups 8,8": ([*COSTS[:-1], "8,8"], {}, ("--groups '8,8'", "give each once")),
    "compare --list with --models": (["compare", "--list", "--json", "--models", E], {},
                                     ("--list", "--models", "drop it")),
    "compare --show with --out": (["compare", "--show", "lite-flat", "--out", "o"], {},
                                  ("--show", "--out", "drop it")),
    "compare --workers and --scheduler": ([*COMPARE, "--workers", "2", "--scheduler",
                                           "tcp://127.0.0.1:1"], {},
                                          ("--workers N", "--scheduler ADDRESS", "not both")),
    "study --no-fabric --scenarios": ([*STUDY, "--no-fabric", "--scenarios", "lite-flat"], {},
                                      ("--scenarios lite-flat with --no-fabric",)),
    "study --no-fabric --moe-model": ([*STUDY, "--no-fabric", "--moe-model", "DeepSeek-V3"], {},
                                      ("--moe-model DeepSeek-V3 with --no-fabric",)),
    "study --phases decode --ttft --no-serving": (
        [*STUDY, "--phases", "decode", "--ttft", "1s", "--no-serving"], {},
        ("--ttft '1s'", "--no-serving")),
    "topology export --format astra-sim to .json": (
        ["topology", "export", "ring:n=4", "--format", "astra-sim", "-o", "f.json"], {},
        ("--output 'f.json'", ".yml")),
    "topology compare ring: and ring:n=8 (one fabric)": (
        ["topology", "compare", "ring:", "ring:n=8"], {}, ("'ring:' and 'ring:n=8'",)),
    # -- paths -----------------------------------------------------------------------------
    "study --out /proc/self": (["study", "lite-gpu", "--out", "/proc/self", "-q", "--no-plot"],
                               {}, ("--out '/proc/self'",)),
    "scenario file a folder": (SCEN, {"s.toml": _folder("s.toml")}, ("s.toml", "folder")),
    # -- a model file ------------------------------------------------------------------------
    "model kv_heads above heads": (MODEL, _model("kv_heads = 8", "kv_heads = 64"),
                                   ("heads (32) must be a multiple of kv_heads (64)",)),
    "model layers and Layers": (MODEL, _model("layers = 32", "layers = 32\nLayers = 32"),
                                ("unknown key(s) Layers",)),
    "model name holding a newline": (
        ["infer", "--model", "M\nX", "--model-file", "m.toml", "--gpu", "H100-SXM", "--tp", "1",
         "--batch", "8"], {"m.toml": _MODEL.replace('"M"', '"M\\nX"', 1)},
        ("model name 'M\\nX'", "control")),
    "model layer_norms 1e3": (MODEL, _model('source = "x"', 'source = "x"\nlayer_norms = 1e3'),
                              ("layer_norms must be a whole number from 1 to 8",)),
    "model file in UTF-16": (MODEL, {"m.toml": _MODEL.encode("utf-16")},
                             ("not a UTF-8 text file",)),
    # -- a fabric file ---------------------------------------------------------------------
    "fabric edge bandwidth 5e-324": (FABRIC, _fabric(_edge("bandwidth", 5e-324)),
                                     ("5e-324", "below the smallest number")),
    "fabric edge bandwidth as text": (FABRIC, _fabric(_edge("bandwidth", "225GB/s")),
                                      ("the text '225GB/s'", "give the number itself")),
    "fabric edge lanes 0": (FABRIC, _fabric(_edge("lanes", 0)), ("lanes", ">= 1", "got 0")),
    "fabric an edge listed twice": (FABRIC, _fabric(lambda d: d["edges"].append(
        dict(d["edges"][0]))), ("listed twice", "edges[0] and edges[3]")),
    "fabric a node id a number": (FABRIC, _fabric(lambda d: d["nodes"][0].__setitem__("id", 5)),
                                  ("'gpu0'", "not in 'nodes'")),
    "fabric directed": (FABRIC, _fabric(lambda d: d.__setitem__("directed", True)),
                        ("undirected", "directed must be false")),
    "fabric no nodes": (FABRIC, _fabric(lambda d: d.update(nodes=[], edges=[])),
                        ("no GPU nodes",)),
    "fabric GraphML with a DOCTYPE": (["topology", "show", "f.graphml"], {"f.graphml": _LAUGHS},
                                      ("DOCTYPE is not allowed",)),
    # -- a scenario file -------------------------------------------------------------------
    "scenario nccl_release 2.17 (a number)": (
        SCEN_COLLECTIVE, _scenario('calibration = "default"',
                                   'calibration = "default"\nnccl_release = 2.17'),
        ("nccl_release must be a string", "2.17")),
    "scenario [[collective]] (a list)": (SCEN_COLLECTIVE, {"s.toml": _LITE_FLAT.replace(
        "[collective]", "[[collective]]")}, ("[collective] must be a table",)),
    "scenario [adjust] latency_scale '1e3'": (
        SCEN, _scenario("[collective]", "[adjust]\nlatency_scale = '1e3'\n\n[collective]"),
        ("latency_scale", "'1e3'")),
    "scenario bandwidth $scaleup$scaleup": (
        SCEN, _scenario('bandwidth = "$scaleup"', 'bandwidth = "$scaleup$scaleup"'),
        ("'$scaleup$scaleup'", "is not one of the tokens")),
    "scenario planes 0": (SCEN, _scenario("planes = 4", "planes = 0"),
                          ("planes must be an integer >= 1",)),
    "scenario description 20,000 characters": (
        SCEN, {"s.toml": _LITE_FLAT.replace('description = "', 'description = "' + "x" * 20000)},
        ("description", "at most 2,000 characters")),
    # -- a GPU file --------------------------------------------------------------------------
    "GPU compute_capability in fullwidth digits": (
        MINE, {"g.toml": _GPU + 'compute_capability = "９.0"\n'},
        ("compute_capability", "'９.0'")),
    "GPU name with a blank at its end": (MINE, {"g.toml": _GPU.replace('"Mine"', '"Mine "')},
                                         ("'Mine '", "no blank at either end")),
    "GPU file whose other GPU is wrong": (
        MINE, {"g.toml": _GPU + '[gpu."Other"]\nderive_from = "H100-SXM"\nsms = -5\n'
               'source = "z"\n'}, ("GPU 'Other'", "unknown key(s) sms")),
    # -- a workload file ---------------------------------------------------------------------
    "workload output 1e3 (a float)": (WORKLOAD, {"w.toml": "prompt = 1500\noutput = 1e3\n"},
                                      ("output must be a whole number", "a float")),
    "workload in a [workload] table": (WORKLOAD, {"w.toml": "[workload]\nprompt = 1500\n"
                                                  "output = 13\n"},
                                       ("unknown key(s) workload",)),
    "workload an empty file": (WORKLOAD, {"w.toml": ""}, ("missing key(s) prompt, output",)),
    "workload past the model's context": (WORKLOAD, {"w.toml": "prompt = 100000\noutput = 13\n"},
                                          ("--workload 'w.toml'", "max_context of 8192")),
}

#: Command lines taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "infer --batch 1e3": ([*INFER[:-1], "1e3"], {}),
    "infer --reserve -0.0": ([*INFER, "--reserve", "-0.0"], {}),
    "yield --wafer-price -0.0": ([*YIELD, "--wafer-price", "-0.0"], {}),
    "collective --size 1 (its least)": ([*COLLECTIVE[:-1], "1"], {}),
    "collective --nccl-buffsize 1TiB (its most)": ([*COLLECTIVE, "--nccl-buffsize", "1TiB"], {}),
    "serve --kv-ports 3 on lite-ocs (its most)": ([*OCS, "--kv-ports", "3"], {}),
    "availability --trials 1 --seed 1e3": ([*AVAIL[:-1], "1", "--seed", "1e3"], {}),
    "fabric JSON with a byte-order mark": (
        ["topology", "show", "f.json"], {"f.json": b"\xef\xbb\xbf" + json.dumps(_RING3).encode()}),
    "scenario with CRLF and a byte-order mark": (
        SCEN, {"s.toml": b"\xef\xbb\xbf" + _LITE_FLAT.replace("\n", "\r\n").encode()}),
    "model file with CRLF": (MODEL, {"m.toml": _MODEL.replace("\n", "\r\n")}),
}

#: Settings: name -> (argv, env, words of the refusal or None where taken).
OUT = [*COMPARE, "--out", "o"]
ENV: dict[str, tuple[list[str], dict[str, str], tuple[str, ...] | None]] = {
    "NETMODEL_JOBS='１' (fullwidth)": (OUT, {"NETMODEL_JOBS": "１"},
                                      ("NETMODEL_JOBS", "FULLWIDTH DIGIT ONE")),
    "NETMODEL_JOBS=1_000": (OUT, {"NETMODEL_JOBS": "1_000"}, ("NETMODEL_JOBS", "'1_000'")),
    "NETMODEL_JOBS=1000000 (its most + 1)": (OUT, {"NETMODEL_JOBS": "1000000"},
                                             ("NETMODEL_JOBS='1000000'", "1 to 999,999")),
    "NETMODEL_JOBS=-0": (OUT, {"NETMODEL_JOBS": "-0"}, ("NETMODEL_JOBS='-0'",)),
    "NETMODEL_JOBS=999999 (its most)": (OUT, {"NETMODEL_JOBS": "999999"}, None),
    "NETMODEL_MAX_SWEEP_POINTS=1 under 2 values": (
        [*SWEEP, "fabric.latency=1us,2us"], {"NETMODEL_MAX_SWEEP_POINTS": "1"},
        ("about 2 values, over the limit of 1", "NETMODEL_MAX_SWEEP_POINTS")),
    "NETMODEL_MAX_SEARCH_CONFIGURATIONS=1": (
        SEARCH, {"NETMODEL_MAX_SEARCH_CONFIGURATIONS": "1"},
        ("over the limit of 1", "NETMODEL_MAX_SEARCH_CONFIGURATIONS")),
}


def _api(name: str, *args, **kw) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        return getattr(netmodel, name)(*args, **kw)
    return call


def _lib(module: str, name: str, *args, **kw) -> Callable[[], object]:
    def call() -> object:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kw)
    return call


def _ring8():
    from topologies import build

    return build("ring:n=8")


def _cost_model(**kw) -> Callable[[], object]:
    def call() -> object:
        from netmodel.collectives.model import FabricCostModel

        return FabricCostModel(_ring8(), **kw)
    return call


def _degraded(**kw) -> Callable[[], object]:
    def call() -> object:
        from netmodel.collectives.degraded import degraded_cost

        return degraded_cost(_ring8(), "all-reduce", 1e6, 4, **kw)
    return call


def _realize(gpus: list[int]) -> Callable[[], object]:
    def call() -> object:
        from topologies import build, gpu_nodes, realize

        g = build("ocs")
        nodes = gpu_nodes(g)
        return realize(g, "ring", [nodes[i] for i in gpus])
    return call


KW = {"max_batch": 8}
STUDY_KW = {"networks": ["ring"], "fabric": False, "max_batch": 8, "quiet": True,
            "plot": False}
#: Library calls refused: name -> (call, words of the UserError).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    # one thing listed twice: merged into one row (a model), doubled (a phase, a scenario)
    "compare(models=[E, 'llama-3-8b'])": (
        _api("compare", [E, "llama-3-8b"], ["lite-flat"], "decode", **KW),
        ("models 'Llama-3-8B,Llama-3-8B' names Llama-3-8B more than once",)),
    "compare(scenarios=['lite-flat', 'LITE-FLAT'])": (
        _api("compare", [E], ["lite-flat", "LITE-FLAT"], "decode", **KW),
        ("scenarios", "names lite-flat@Lite more than once")),
    "compare(phases=['decode', 'decode'])": (
        _api("compare", [E], ["lite-flat"], ["decode", "decode"], **KW),
        ("phases 'decode,decode' names decode more than once",)),
    "compare(gpus=['Lite', 'Lite'])": (
        _api("compare", [E], ["lite-flat"], "decode", gpus=["Lite", "Lite"], **KW),
        ("gpus 'Lite,Lite' names Lite more than once",)),
    "sweep(models=[E, E])": (_api("sweep", ["lite-flat"], ["fabric.latency=1us,2us"], [E, E],
                                  **KW), ("models", "names Llama-3-8B more than once")),
    "sweep(scenarios=['lite-flat'] * 2)": (
        _api("sweep", ["lite-flat", "lite-flat"], ["fabric.latency=1us,2us"], [E], **KW),
        ("scenarios", "names lite-flat@Lite more than once")),
    "sweep(phases=['decode', 'Decode'])": (
        _api("sweep", ["lite-flat"], ["fabric.latency=1us,2us"], [E], ["decode", "Decode"],
             **KW), ("phases 'decode,Decode'", "('decode' and 'Decode')")),
    "run_study(gpus=['Lite', 'Lite'])": (_api("run_study", [E], ["Lite", "Lite"], ["decode"],
                                              **STUDY_KW), ("gpus 'Lite,Lite'",)),
    "run_study(networks=['ring', 'ring'])": (
        _api("run_study", [E], ["Lite"], ["decode"], **{**STUDY_KW, "networks": ["ring"] * 2}),
        ("networks 'ring,ring' names ring more than once",)),
    "collective_time(algorithms=['ring', 'ring'])": (
        _api("collective_time", "ring:n=8", "all-reduce", 1e6, algorithms=["ring", "ring"]),
        ("algorithms 'ring,ring' names ring more than once",)),
    "FabricCostModel(algorithms=['ring', 'RING'])": (
        _cost_model(algorithms=["ring", "RING"]), ("algorithms 'ring,RING'", "give each once")),
    # a GPU laid twice into a logical topology: a circuit from it to itself
    "circuits_for('ring', [0, 0, 1])": (_lib("topologies", "circuits_for", "ring", [0, 0, 1]),
                                        ("members names 0 more than once (at 0 and 1)",)),
    "circuits_for('full-mesh', ['a', 'a'])": (
        _lib("topologies", "circuits_for", "full-mesh", ["a", "a"]), ("members names 'a'",)),
    "realize(ocs, 'ring', [gpu0, gpu0, gpu1])": (_realize([0, 0, 1]),
                                                  ("gpus names 'gpu0' more than once",)),
    # a flag given as text: the graph left unchecked
    "FabricCostModel(validated='yes')": (_cost_model(validated="yes"),
                                         ("validated must be true or false", "'yes'")),
    # AttributeError: 'str' object has no attribute 'graph'
    "concurrent_cost('ring:n=8', ...)": (
        _lib("netmodel.collectives.concurrent", "concurrent_cost", "ring:n=8", 8, "all-reduce",
             1e6), ("model must be a netmodel.collectives.model.FabricCostModel",
                    "got 'ring:n=8'")),
    # TypeError: FabricCostModel.__init__() got an unexpected keyword argument 'bogus'
    "degraded_cost(bogus=1)": (_degraded(bogus=1), ("degraded_cost() takes no keyword 'bogus'",
                                                     "placement")),
    # dropped without a word
    "degraded_cost(ring_order='greedy')": (_degraded(ring_order="greedy"),
                                           ("no keyword 'ring_order'", "greedy one")),
    # AttributeError: 'int' object has no attribute 'scenario'
    "fabric_search(collectives=5)": (
        _lib("netmodel.study.fabric_search", "fabric_search", E, "lite-flat", collectives=5,
             **KW), ("collectives must be a netmodel.study.scenario_collectives", "got 5")),
    # taken and read by no model but the negative binomial (yield --alpha is refused so)
    "die_yield(model='poisson', alpha=2)": (
        _lib("compute.die_yield", "die_yield", 814e-6, model="poisson", alpha=2),
        ("alpha", "applies only with the 'negative-binomial' yield model", "'poisson'")),
    "cost_summary(yield_model='poisson', alpha=3.0)": (
        _lib("netmodel.study.cost", "cost_summary", "lite-flat", E, yield_model="poisson",
             alpha=3.0, **KW), ("alpha", "not 'poisson'")),
    # AttributeError: 'int' object has no attribute 'placement'
    "collective_report(setup=5)": (
        _lib("netmodel.study.collective_report", "collective_report", 5, "all-reduce", 1e6, 4),
        ("setup must be a netmodel.study.collective_setup.CollectiveSetup", "got 5")),
    # a blast radius of nothing
    "blast_radius(classes=[])": (_lib("netmodel.study.blast_radius", "blast_radius",
                                      "lite-flat", E, classes=[], **KW),
                                 ("classes is empty", "or None for all")),
    # ran for two minutes: no estimate, where evaluate_grid has one
    "evaluate_many(10^7 pairs)": (
        lambda: __import__("compute.evaluate_many", fromlist=["x"]).evaluate_many(
            E, "H100-SXM", np.ones(10**7, dtype=int), 8),
        ("evaluate_many: about 10,000,000 configuration-batch pairs", "2,000,000")),
    # -- held before this round ------------------------------------------------------------
    "evaluate(pp=2**63)": (_api("evaluate", E, "H100-SXM", tp=1, batch=8, pp=2**63),
                           ("PP degree 9223372036854775808", "32 layers")),
    "collective_time(sizes=True)": (_api("collective_time", "ring:n=8", "all-reduce", True),
                                    ("message size", "got True")),
    "collective_time(group=True)": (_api("collective_time", "ring:n=8", "all-reduce", 1e6, True),
                                    ("group must be a size", "got True")),
    "search(tp={1, 2})": (_api("search", E, "H100-SXM", tp={1, 2}), ("TP degree", "{1, 2}")),
    "compare(workers=2.0)": (_api("compare", [E], ["lite-flat"], "decode", workers=2.0, **KW),
                             ("workers=2.0", "1 to")),
    "sweep(points=True)": (_api("sweep", ["lite-flat"], ["fabric.latency=1us:2us"], [E],
                                points=True, **KW), ("points must be", "got True")),
    "build_fabric('ring', [('n', 8)])": (_api("build_fabric", "ring", [("n", 8)]),
                                         ("params must be a mapping",)),
    "Slo(tbt=1e308)": (_lib("compute.phases", "Slo", tbt=1e308), ("tbt", "1 us to 10 s")),
    "RooflineOptions(mtp_tokens=2.0)": (_lib("compute.roofline_options", "RooflineOptions",
                                             mtp_tokens=2.0), ("mtp_tokens", "(an int)")),
    "summary(ring, pair=('gpu0', 'gpu0'))": (
        lambda: __import__("topologies").summary(_ring8(), pair=("gpu0", "gpu0")),
        ("two different GPUs", "'gpu0' twice")),
    "read_graph('x.json', raw='{}')": (_lib("topologies", "read_graph", "x.json", raw="{}"),
                                       ("raw", "must be bytes")),
}

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    # two scenarios, each once; the baseline also on its own H100
    "compare(two scenarios, gpus=['Lite'])": (
        _api("compare", [E], ["lite-flat", "h100-dgx"], "decode", gpus=["Lite"], **KW),
        lambda r: [(x.scenario, x.gpu) for x in r.rows] == [
            ("lite-flat", "Lite"), ("h100-dgx", "H100-SXM"), ("h100-dgx", "Lite")]),
    # one scenario on two GPUs is two scenarios (refused by a747aae2 as one name twice)
    "compare(['lite-flat', 'lite-flat@H100-SXM'])": (
        _api("compare", [E], ["lite-flat", "lite-flat@H100-SXM"], "decode", **KW),
        lambda r: [(x.scenario, x.gpu) for x in r.rows] == [("lite-flat", "Lite"),
                                                            ("lite-flat", "H100-SXM")]),
    "FabricCostModel(validated=np.True_)": (_cost_model(validated=np.True_),
                                            lambda m: m.gpus == 8),
    # a torus side of 2 is two parallel circuits: a pair repeated on purpose
    "circuits_for('torus:2x2', 4 GPUs)": (
        _lib("topologies", "circuits_for", "torus:2x2", ["a", "b", "c", "d"]),
        lambda pairs: len(pairs) == 8 and len(set(pairs)) == 4),
    "degraded_cost(placement='contiguous', nodes=['gpu7'])": (
        _degraded(placement="contiguous", nodes=["gpu7"]),
        lambda r: r.degraded.time >= r.healthy.time > 0),
}


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (env_case(n, a, e, w) for n, (a, e, w) in ENV.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    os.environ.pop("NETMODEL_JOBS", None)   # the cases' own settings alone
    return run_round(cases(), "hostile36-")


if __name__ == "__main__":
    sys.exit(main())
