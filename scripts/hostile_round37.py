"""Hostile-input round 37, on what rounds 15-36 (scripts/hostile_round15.py .. 36.py) tried
least: the library's lower layers, which a user imports beside ``netmodel``'s API, given a
numpy scalar or array, a Fraction, a Decimal, a huge integer, text or a subnormal where a
number is wanted (``compute.comm.RingAlphaBeta``, ``compute.roofline.evaluate_grid``,
``netmodel.study.cost.cost_summary``, ``netmodel.study.availability.spares_needed`` and
``spare_curve``, ``topologies.analysis.bisection_maxflow``, ``topologies.spares``,
``topologies.degrade``), the dataclasses a user builds directly given fields of another
type (a ``Scenario`` copied by ``dataclasses.replace`` with a GPU name for ``gpu_spec``, a
``Measurement`` with text for ``latency_s``, ``ScenarioCollectives(concurrent='no')``);
and on the command line numbers no count is written as (``∞``, ``½``, an Arabic-Indic
``٨``), data files with a key in capitals, a value with its unit where a number is wanted
(``hbm_capacity = "80 GB"``, ``latency_s`` ``9.8ms``, a workload's ``rate = "5/s"``, a
fabric edge's ``"225 GB/s"``), a 10 MB model source, a truncated GraphML, outputs through
a symlink to /dev/null, and the limits' environment variables no round set. At the HEAD
before 3a1dea85: 95 invocations, 41 failed (all library; one ran past a minute); the fixes are in
tests/netmodel/test_hostile_round37.py's (a)-(p).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed, no traceback, nothing written in the
case's folder; a value taken is exit 0; a library refusal is a UserError (a ValueError)
holding the words listed; a library value taken gives the result it shows.

Usage: ``python scripts/hostile_round37.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner); about
a minute on two cores.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_round32 import env_case  # noqa: E402
from hostile_tally import Case, Made, refusal_case, run_round, taken_case  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
E = "Llama-3-8B"
INFER = ["infer", "--model", E, "--gpu", "H100-SXM", "--tp", "1", "--batch", "8"]
COLLECTIVE = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "1M"]
COSTS = ["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8"]
COMPARE = ["compare", "--models", E, "--scenarios", "lite-flat", "--phases", "decode",
           "--max-batch", "8", "-q", "--no-plot"]
MINE = ["infer", "--model", E, "--gpu", "Mine", "--tp", "1", "--batch", "8", "--gpu-file",
        "g.toml"]
MODEL = ["infer", "--model", "M", "--model-file", "m.toml", "--gpu", "H100-SXM", "--tp", "1",
         "--batch", "8"]
SCEN = [*COMPARE[:3], *COMPARE[5:], "--scenarios", "s.toml"]
WORKLOAD = ["serve", "--scenario", "h100-dgx", "--model", E, "--max-batch", "16",
            "--workload", "w.toml"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml", "--fit",
             "layer_overhead_s"]

#: The shipped texts the files of the cases are edited from.
_LITE_FLAT = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text().replace(
    'name = "lite-flat"', 'name = "mine"', 1)
_MODEL = ('[model."M"]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n'
          'ffn = 14336\nvocab = 128256\ngated_mlp = true\nmax_context = 8192\nsource = "x"\n')
_GPU = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "x"\n'
_HEADER = "model,gpu,tp,batch,phase,context,latency_s"
_ROW = "Llama-3-8B,H100-SXM,1,8,decode,1000,0.0098"
_STEPS = f"{_HEADER}\n{_ROW}\n"
#: Two H100s joined by one NVLink-class link, as ``topology export`` writes a fabric.
_PAIR = {
    "directed": False, "multigraph": False, "graph": {"name": "pair", "gpus": 2},
    "nodes": [{"id": f"gpu{i}", "kind": "gpu", "gpu": "H100-SXM"} for i in range(2)],
    "edges": [{"source": "gpu0", "target": "gpu1", "bandwidth": 225e9, "latency": 1e-8,
               "medium": "copper", "lanes": 18}],
}


def _edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _pair(key: str, value: object, new_key: str | None = None) -> dict[str, Made]:
    doc = json.loads(json.dumps(_PAIR))
    edge = doc["edges"][0]
    del edge[key]
    edge[new_key or key] = value
    return {"f.json": json.dumps(doc)}


def _to_dev_null(name: str) -> Made:
    return lambda d: os.symlink("/dev/null", d / name)


#: Command lines refused: name -> (argv, files, words the line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- numbers no count is written as ----------------------------------------------------
    "infer --batch ∞": ([*INFER[:-1], "∞"], {}, ("--batch", "'∞'")),
    "yield --area ½ (a vulgar fraction)": (["yield", "--area", "½"], {},
                                          ("--area '½'", "not a number with a unit")),
    "infer --tp ٨ (an Arabic-Indic eight)": ([*INFER[:5], "--tp", "٨", "--batch", "8"], {},
                                             ("--tp", "'٨'")),
    "collective --size 1e-400 (below a float)": (
        [*COLLECTIVE[:-1], "1e-400"], {}, ("--size '1e-400'", "below the smallest number")),
    "infer --context 1E9 (past the model's context)": (
        [*INFER, "--context", "1E9"], {}, ("--context '1E9'", "max_context of 8,192")),
    # -- a GPU file ----------------------------------------------------------------------
    "GPU key SMS in capitals": (MINE, {"g.toml": _GPU + "SMS = 132\n"},
                                ("g.toml", "unknown key(s) SMS")),
    "GPU hbm_capacity '80 GB' on a derived GPU": (
        MINE, {"g.toml": _GPU + 'hbm_capacity = "80 GB"\n'},
        ("unknown key(s) hbm_capacity", "hbm_capacity_multiplier")),
    "GPU table a list": (MINE, {"g.toml": "gpu = [1, 2]\n"},
                         ("top-level table 'gpu'", "got gpu [1, 2]")),
    "GPU file truncated mid-token": (MINE, {"g.toml": _GPU[:-8]},
                                     ("g.toml is malformed TOML",)),
    # -- a model file --------------------------------------------------------------------
    "model key Layers in capitals": (MODEL, {"m.toml": _edited(_MODEL, "layers", "Layers")},
                                     ("unknown key(s) Layers",)),
    "model layers as text '32'": (MODEL, {"m.toml": _edited(_MODEL, "= 32\n", '= "32"\n')},
                                  ("layers must be a whole number", "got '32'")),
    "model hidden '4k'": (MODEL, {"m.toml": _edited(_MODEL, "hidden = 4096", 'hidden = "4k"')},
                          ("hidden must be a whole number", "'4k'")),
    "model source of 10 MB": (MODEL, {"m.toml": _edited(_MODEL, 'source = "x"',
                                                         f'source = "{"x" * 10**7}"')},
                              ("source must be text of at most 10,000 characters",)),
    # -- a scenario file -------------------------------------------------------------------
    "scenario [Fabric] in capitals": (SCEN, {"s.toml": _edited(_LITE_FLAT, "[fabric]",
                                                               "[Fabric]")},
                                      ("unknown key(s) Fabric",)),
    "scenario nccl_buffsize '4MiB' (a unit in a number's place)": (
        SCEN, {"s.toml": _edited(_LITE_FLAT, "[collective]",
                                 '[collective]\nnccl_buffsize = "4MiB"')},
        ("nccl_buffsize must be a whole number of bytes", "got '4MiB'")),
    "scenario description empty": (SCEN, {"s.toml": _edited(_LITE_FLAT, 'description = "',
                                                            'description = "" #')},
                                   ("description must be non-empty text",)),
    # -- a workload file -------------------------------------------------------------------
    "workload key Prompt in capitals": (WORKLOAD, {"w.toml": "Prompt = 1500\noutput = 13\n"},
                                        ("unknown key(s) Prompt",)),
    "workload rate '5/s'": (WORKLOAD, {"w.toml": 'prompt = 1500\noutput = 13\nrate = "5/s"\n'},
                            ("rate must be a number", "got '5/s'")),
    "workload prompt '1.5k'": (WORKLOAD, {"w.toml": 'prompt = "1.5k"\noutput = 13\n'},
                               ("prompt must be a whole number", "got '1.5k'")),
    # -- a measurements CSV ----------------------------------------------------------------
    "measurement latency_s 9.8ms": (CALIBRATE, {"m.csv": _STEPS.replace("0.0098", "9.8ms")},
                                    ("row 2: latency_s must be a number", "'9.8ms'")),
    "measurements with a 10 MB line": (
        CALIBRATE, {"m.csv": f"{_HEADER}\n{_ROW},{'x' * 10**7}\n"},
        ("measurements file 'm.csv'", "4,194,304-byte limit")),
    # -- a fabric file ---------------------------------------------------------------------
    "fabric edge key Bandwidth in capitals": (["topology", "show", "f.json"],
                                              _pair("bandwidth", 225e9, "Bandwidth"),
                                              ("lacks attribute(s) bandwidth",)),
    "fabric edge bandwidth '225 GB/s'": (["topology", "show", "f.json"],
                                         _pair("bandwidth", "225 GB/s"),
                                         ("bandwidth", "the text '225 GB/s'")),
    "GraphML truncated mid-tag": (
        ["topology", "show", "f.graphml"],
        {"f.graphml": '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/'
                      'xmlns"><graph edgedefault="undirected"><node id="gpu0"/><no'},
        ("f.graphml is not a readable graphml fabric",)),
    # -- outputs ---------------------------------------------------------------------------
    "calibrate -o through a symlink to /dev/null": (
        CALIBRATE, {"m.csv": _STEPS, "p.toml": _to_dev_null("p.toml")},
        ("--out 'p.toml'", "not a regular file")),
    "calibrate -o a folder": (CALIBRATE, {"m.csv": _STEPS, "p.toml/x": "x"},
                              ("--out 'p.toml'", "is an existing folder")),
    "costs --plot through a symlink to /dev/null": (
        [*COSTS, "--plot", "p.png"], {"p.png": _to_dev_null("p.png")},
        ("--plot 'p.png'", "not a regular file")),
    "topology export -o over a costs table (.csv)": (
        ["topology", "export", "ring:n=4", "-o", "t.csv"], {"t.csv": "op,algorithm\n"},
        ("--output 't.csv'", "unknown fabric file type '.csv'")),
    "compare --out a file": ([*COMPARE, "--out", "o"], {"o": "x"}, ("'o' is a file",)),
}

#: Command lines taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "infer --batch 8. (a trailing point)": ([*INFER[:-1], "8."], {}),
    "collective --group ' 8' (a blank before)": ([*COLLECTIVE, "--group", " 8"], {}),
}

#: Settings: name -> (argv, env, words of the refusal or None where taken).
#: (A fabric of its own for each: one built in the process before is not built again.)
ENV: dict[str, tuple[list[str], dict[str, str], tuple[str, ...] | None]] = {
    "NETMODEL_MAX_FABRIC_EDGES=∞": (["topology", "show", "ring:n=13"],
                                    {"NETMODEL_MAX_FABRIC_EDGES": "∞"},
                                    ("NETMODEL_MAX_FABRIC_EDGES='∞'", "1 to 1e30")),
    "NETMODEL_MAX_FABRIC_EDGES=7 under a ring of 8 edges": (
        ["topology", "show", "ring:n=8,bandwidth=100GB/s"], {"NETMODEL_MAX_FABRIC_EDGES": "7"},
        ("8 edges, over the limit of", "7 edges", "NETMODEL_MAX_FABRIC_EDGES")),
    "NETMODEL_MAX_YIELD_AREAS=0x10": (["yield", "--area", "814"],
                                      {"NETMODEL_MAX_YIELD_AREAS": "0x10"}, None),
    "NETMODEL_MAX_PORT_CELLS=nan": (COLLECTIVE, {"NETMODEL_MAX_PORT_CELLS": "nan"},
                                    ("NETMODEL_MAX_PORT_CELLS='nan'", "whole number")),
    "NETMODEL_MAX_COMPARE_LINKS=-0": (
        ["topology", "compare", "ring:n=8", "torus:dims=2x4"],
        {"NETMODEL_MAX_COMPARE_LINKS": "-0"}, ("NETMODEL_MAX_COMPARE_LINKS", "'-0'")),
}


def _lib(module: str, name: str, *args, **kw) -> Callable[[], object]:
    def call() -> object:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kw)
    return call


def _api(name: str, *args, **kw) -> Callable[[], object]:
    return _lib("netmodel", name, *args, **kw)


def _comm(cls: str, **kw) -> Callable[[], object]:
    """A closed-form model made and asked one all-reduce of 1 MB among 4 GPUs."""
    return lambda: _lib("compute.comm", cls, **kw)().collective_time("all-reduce", 1e6, 4)


def _scenario(**kw) -> Callable[[], object]:
    """A copy of lite-flat with ``kw`` (dataclasses.replace), costed at TP 4."""
    def call() -> object:
        import netmodel

        s = dataclasses.replace(netmodel.get_scenario("lite-flat"), **kw)
        return netmodel.evaluate(E, tp=4, batch=8, scenario=s)
    return call


_STEP = {"model": E, "gpu": "H100-SXM", "tp": 1, "phase": "decode", "batch": 8,
         "latency_s": 0.01, "context": 100}


def _fit(**kw) -> Callable[[], object]:
    """A profile fitted to four steps, the first made in code with ``kw``."""
    def call() -> object:
        from compute.measurements import Measurement
        from compute.profile_fit import fit_profile

        rest = [Measurement(**{**_STEP, "batch": b, "latency_s": 0.005 + b * 1e-4})
                for b in (16, 32, 64)]
        return fit_profile([Measurement(**{**_STEP, **kw}), *rest])
    return call


def _cluster():
    from netmodel.study.reliability_cluster import build_cluster

    return build_cluster("lite-flat", E, max_batch=8)


def _spares_needed(**kw) -> Callable[[], object]:
    return lambda: _lib("netmodel.study.availability", "spares_needed", _cluster(),
                        horizon="1d", trials=5, **kw)()


def _graph(spec: str):
    from topologies import build

    return build(spec)


def _bisection(side: object) -> Callable[[], object]:
    return lambda: _lib("topologies.analysis", "bisection_maxflow", _graph("fat-tree:k=4"),
                        side)()


def _degrade(failed: object, **kw) -> Callable[[], object]:
    def call() -> object:
        from topologies.degrade import degrade
        from topologies.failure_domains import components

        g = _graph("ring:n=8")
        return degrade(g, components(g)["gpu-die"][:1] if failed is None else failed, **kw)
    return call


def _spares(**kw) -> Callable[[], object]:
    return lambda: _lib("topologies.spares", "add_spares",
                        _graph("flat:n=6,planes=2,radix=8"), 5, **kw)()


def _fab():
    """A comparison whose prefill crossover is searched (Llama-3-70B, lite-flat ~7.3x)."""
    import netmodel

    return netmodel.compare(["Llama-3-70B"], ["h100-dgx", "lite-flat"], ["decode", "prefill"],
                            max_batch=64)


BW = "bandwidth must be a number from 125,000 to 1,000,000,000,000,000 B/s"
KW = {"max_batch": 8}
#: Library calls refused: name -> (call, words of the UserError).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    # (a) TypeError from numpy's isfinite; inf seconds; 1 B/s
    "RingAlphaBeta(bandwidth=Decimal('1e11'))": (_comm("RingAlphaBeta",
                                                       bandwidth=Decimal("1e11")), (BW,)),
    "RingAlphaBeta(bandwidth=10**30)": (_comm("RingAlphaBeta", bandwidth=10**30),
                                        (BW, "31 digits")),
    "RingAlphaBeta(bandwidth=np.array([1e11, 2e11]))": (
        _comm("RingAlphaBeta", bandwidth=np.array([1e11, 2e11])), (BW, "shape (2,)")),
    "RingAlphaBeta(bandwidth=5e-324)": (_comm("RingAlphaBeta", bandwidth=5e-324),
                                        (BW, "5e-324")),
    "RingAlphaBeta(bandwidth=True)": (_comm("RingAlphaBeta", bandwidth=True), (BW, "True")),
    "ScaleUpLowerBound(bandwidth=1e11, efficiency=5e-324)": (
        _comm("ScaleUpLowerBound", bandwidth=1e11, efficiency=5e-324),
        ("efficiency must be a number from 0.0001 to 1",)),
    "ScaleUpLowerBound(bandwidth='450e9')": (_comm("ScaleUpLowerBound", bandwidth="450e9"),
                                             (BW, "'450e9'")),
    # (b) AttributeError, TypeError (unhashable)
    "replace(lite-flat, gpu_spec='H100-SXM')": (_scenario(gpu_spec="H100-SXM"),
                                                ("gpu_spec must be a compute.hardware.GpuSpec",)),
    "replace(lite-flat, graph='ring:n=8')": (_scenario(graph="ring:n=8"),
                                             ("graph must be a networkx.Graph",)),
    "replace(lite-flat, fabric_file=['f.json'])": (_scenario(fabric_file=["f.json"]),
                                                   ("fabric_file must be text or None",)),
    "replace(lite-flat, sources=5)": (_scenario(sources=5), ("sources must be a table",)),
    # (c) taken by their truth; ValueError
    "ScenarioCollectives('lite-flat', concurrent='no')": (
        _lib("netmodel.study.scenario_collectives", "ScenarioCollectives", "lite-flat", "no"),
        ("concurrent must be true or false", "'no'")),
    "ScenarioCollectives('lite-flat', concurrent=np.array([1, 0]))": (
        _lib("netmodel.study.scenario_collectives", "ScenarioCollectives", "lite-flat",
             np.array([1, 0])), ("concurrent must be true or false", "shape (2,)")),
    # (d) TypeError: iteration over a 0-d array
    "evaluate_grid(tps=np.array(4))": (
        _lib("compute.roofline", "evaluate_grid", E, "H100-SXM", np.array(4), [8], "decode"),
        ("tps must be a list of TP degrees", "array(4)")),
    # (e) ValueError: ambiguous truth
    "cost_summary(clock=np.array([1.0, 0.5]))": (
        _lib("netmodel.study.cost", "cost_summary", "lite-flat", E, clock=np.array([1.0, 0.5]),
             **KW), ("clock must be a number", "shape (2,)")),
    # (f) TypeError in the fit; unhashable; a prompt never read
    "fit_profile(Measurement(latency_s='0.01'))": (
        _fit(latency_s="0.01"), ("Measurement: latency_s must be a number", "'0.01'")),
    "fit_profile(Measurement(batch=np.array([1, 2])))": (
        _fit(batch=np.array([1, 2])), ("Measurement: batch must be a whole number",)),
    "Measurement(decode, prompt=100)": (
        _lib("compute.measurements", "Measurement", **_STEP, prompt=100),
        ("a decode measurement takes context, not prompt",)),
    # (g) 0.0 B/s returned as the bisection
    "bisection_maxflow(side=['nope'])": (_bisection(["nope"]), ("side must be a list of GPU",
                                                                "'nope'")),
    "bisection_maxflow(side='gpu0')": (_bisection("gpu0"), ("side must be a list of GPU",)),
    # (h) AttributeError: 'str' object has no attribute 'handed'; copy='no' copied
    "degrade(ring, 'gpu0')": (_degrade("gpu0"), ("failed must be a list of topologies.",)),
    "degrade(ring, [('gpu0', 'gpu1')])": (_degrade([("gpu0", "gpu1")]),
                                          ("('gpu0', 'gpu1') in it", "by name")),
    "degrade(ring, [gpu0's die], copy='no')": (_degrade(None, copy="no"),
                                               ("copy must be true or false",)),
    # (i) spares named '50', '0'; 'gpu0' read letter by letter; no spare for []
    "add_spares(prefix=5)": (_spares(prefix=5), ("spare prefix name 5",)),
    "add_spares(prefix='')": (_spares(prefix=""), ("spare prefix name ''",)),
    "add_spares(like='gpu0')": (_spares(like="gpu0"), ("like must be a non-empty list",)),
    "add_spares(like=[])": (_spares(like=[]), ("like must be a non-empty list", "got []")),
    # (j) a pool of at most -1 GPUs; TypeError after the run
    "spares_needed(limit=-1)": (_spares_needed(limit=-1), ("limit must be a whole number",)),
    "spares_needed(limit=nan)": (_spares_needed(limit=float("nan")), ("limit", "got nan")),
    "spares_needed(limit='4')": (_spares_needed(limit="4"), ("limit", "got '4'")),
    "spare_curve(counts=np.array(4))": (
        lambda: _lib("netmodel.study.availability", "spare_curve", _cluster(), "pod",
                     np.array(4))(), ("counts must be a list of spare counts",)),
    # (k) TypeError: 'int' object is not callable, after the healthy cost
    "degraded_cost(circuits=5)": (
        lambda: _lib("netmodel.collectives.degraded", "degraded_cost", _graph("ring:n=8"),
                     "all-reduce", 1e6, 4, circuits=5)(), ("circuits must be a function",)),
    # (l) a search without end; NaN stopped at the first guess; AttributeError
    "find_crossovers(tolerance=0)": (
        lambda: _lib("netmodel.study.crossovers", "find_crossovers", _fab(), tolerance=0)(),
        ("tolerance must be a number from 1e-09 to 1", "got 0")),
    "find_crossovers(tolerance=nan)": (
        lambda: _lib("netmodel.study.crossovers", "find_crossovers", _fab(),
                     tolerance=float("nan"))(), ("tolerance", "got nan")),
    "find_crossovers(5)": (_lib("netmodel.study.crossovers", "find_crossovers", 5),
                           ("fab must be a netmodel.study.compare.CompareResult",)),
    # (m) TypeError blaming search(); (n) "unknown phase 'd'"
    "clock_sweep(bogus=1)": (_lib("compute.power", "clock_sweep", E, "H100-SXM", bogus=1),
                             ("clock_sweep() takes no keyword 'bogus'",)),
    "run_compare([E], ['lite-flat'], 'decode')": (
        _lib("netmodel.study.compare", "run_compare", [E], ["lite-flat"], "decode", **KW),
        ("phases must be a list of phases", "'decode'")),
    "run_compare(E, ['lite-flat'])": (
        _lib("netmodel.study.compare", "run_compare", E, ["lite-flat"], ["decode"], **KW),
        ("models must be a list", "'Llama-3-8B'")),
    # (o) ValueError: an array compared with () elementwise
    "EngineProfile(moe_exchanges=np.array(['all-to-all']))": (
        lambda: dataclasses.replace(_lib("compute.profiles", "get_profile", "vllm-dgx-h100")(),
                                    moe_exchanges=np.array(["all-to-all"])),
        ("moe_exchanges must be a list of", "shape (1,)")),
    # -- held before this round ------------------------------------------------------------
    "evaluate(batch=Decimal(8))": (_api("evaluate", E, "H100-SXM", tp=1, batch=Decimal(8)),
                                   ("batch", "a Decimal is not read as a number")),
    "evaluate(expert_skew=np.array([1.5]))": (
        _api("evaluate", E, "H100-SXM", tp=1, batch=8, expert_skew=np.array([1.5])),
        ("expert_skew", "shape (1,)")),
    "evaluate(context=np.float64(nan))": (
        _api("evaluate", E, "H100-SXM", tp=1, batch=8, context=np.float64("nan")),
        ("context must be a whole number", "nan")),
    "search(max_batch=np.float64(8.5))": (_api("search", E, "H100-SXM",
                                               max_batch=np.float64(8.5)),
                                          ("max_batch must be a whole number", "8.5")),
    "collective_time(sizes=1+1j)": (_api("collective_time", "ring:n=8", "all-reduce", 1e6 + 1j),
                                    ("message size", "(1000000+1j)")),
    "collective_time(group=Fraction(4))": (
        _api("collective_time", "ring:n=8", "all-reduce", 1e6, Fraction(4)),
        ("group must be a size", "4.0")),
    "build_fabric('ring', {'n': Decimal(8)})": (_api("build_fabric", "ring", {"n": Decimal(8)}),
                                                ("ring: n", "Decimal('8')")),
    "build_fabric('ring', {'bandwidth': 5e-324})": (
        _api("build_fabric", "ring", {"n": 8, "bandwidth": 5e-324}),
        ("ring: bandwidth", "125 kB/s to 1 PB/s")),
    "build_fabric('torus', {'dims': np.array([4, 4])})": (
        _api("build_fabric", "torus", {"dims": np.array([4, 4])}), ("torus: dims",)),
    "compare(reliability='no')": (_api("compare", [E], ["lite-flat"], "decode",
                                       reliability="no", **KW),
                                  ("reliability must be true or false",)),
    "FabricCostModel(max_transfers=2.5) by collective_report": (
        lambda: _lib("netmodel.study.collective_report", "collective_report",
                     _lib("netmodel.study.collective_setup", "collective_setup", "ring:n=8",
                          max_transfers=2.5)(), "all-reduce", 1e6, 4)(),
        ("max_transfers must be a whole number", "2.5")),
    "path_diversity(ring, 5, 'gpu1')": (
        lambda: _lib("topologies.analysis", "path_diversity", _graph("ring:n=8"), 5, "gpu1")(),
        ("5 is not a GPU of the fabric",)),
    "write_graph(ring, 5)": (lambda: _lib("topologies", "write_graph", _graph("ring:n=8"), 5)(),
                             ("fabric file must be a path", "got 5")),
}

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    # a numpy float in range: the float's times (8 GB among 8 GPUs: 14 us + 0.14 s)
    "RingAlphaBeta(np.float64(100e9), 1e-6, 1)": (
        lambda: _lib("compute.comm", "RingAlphaBeta", np.float64(100e9), 1e-6, 1)()
        .collective_time("all-reduce", 8e9, 8),
        lambda t: round(float(t), 9) == 0.140014),
    "ScenarioCollectives('lite-flat', np.True_)": (
        _lib("netmodel.study.scenario_collectives", "ScenarioCollectives", "lite-flat",
             np.True_), lambda c: c.scenario.instances == "all"),
    "Measurement(batch=np.int64(8), phase='Decode')": (
        _lib("compute.measurements", "Measurement", **{**_STEP, "batch": np.int64(8),
                                                       "phase": "Decode"}),
        lambda m: type(m.batch) is int and m.phase == "decode"),
    "add_spares(like=np.array(['gpu1']), prefix='hot')": (
        _spares(like=np.array(["gpu1"]), prefix="hot"), lambda r: r[1] == ("hot0", "hot1")),
    "evaluate(gpu=np.str_('H100-SXM'))": (
        _api("evaluate", E, np.str_("H100-SXM"), tp=1, batch=8), lambda r: r.gpu == "H100-SXM"),
    "collective_time(group=np.int64(4))": (
        _api("collective_time", "ring:n=8", "all-reduce", 1e6, np.int64(4)),
        lambda t: float(t) > 0),
    # (p) ValueError: zero-size array to reduction operation maximum
    "harvested_yield([], 144, 132)": (_lib("compute.die_yield", "harvested_yield", [], 144, 132),
                                      lambda y: y.shape == (0,)),
}


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (env_case(n, a, e, w) for n, (a, e, w) in ENV.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    os.environ.pop("NETMODEL_JOBS", None)   # the cases' own settings alone
    return run_round(cases(), "hostile37-")


if __name__ == "__main__":
    sys.exit(main())
