"""Hostile-input round 29, on what rounds 15-28 (scripts/hostile_round15.py .. 28.py) left
least tried: a fabric's graph attribute ``module_ports`` (0, 3, 2.5, 'two', NaN, true,
null, 2.0 and numpy's 2, on fabrics whose builder takes it and those that cannot) through a
fabric spec, a saved fabric (JSON and GraphML), a scenario file, ``sweep --param`` and
:func:`netmodel.build_fabric`; saved fabrics edited by hand (a self loop, a GPU cut off, a
node or an attribute missing, a node twice, negative or textual bandwidths, media in
look-alike letters); every option of ``serve`` at and past its ends (``--kv-ports``,
``--rate``, ``--load``, the SLOs, ``--dense-mlp-tp``, MTP, the pools' GPUs);
``availability`` and ``blast-radius`` options (trials, horizon, spares, seeds, rates,
repair and detection times, cluster sizes and the work a Monte Carlo would do, estimated
before it is drawn); ``yield`` at the edges of its wafer, die and defect ranges; ``cost``
and ``costs`` (sizes of a billion rows, factors of 1, empty lists); ``sweep --param``
ranges of huge step counts; ``calibrate`` rows of odd values; scenario files of wrong types;
and the library (docs/api.md's functions, the serving workload, availability, blast radius
and die yield) called with NaN, negatives, wrong types, look-alike letters and arrays past
what memory holds.

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target); a library refusal is a UserError naming the parameter.

Usage: ``python scripts/hostile_round29.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner), a
minute or two on two cores.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round28 import HEADER, ROW, SCENARIO, _fabric, _folder, _link  # noqa: E402
from hostile_tally import (  # noqa: E402
    Case,
    Made,
    invoke_in,
    refusal_case,
    run_round,
    taken_case,
)

NAN = float("nan")
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8",
         "-q", "--trials", "5", "--horizon", "1h"]
AVAIL_BARE = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch",
              "8", "-q"]
BLAST = ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8",
         "--tp-only"]
SERVE_OCS = ["serve", "--scenario", "lite-ocs", "--model", "Llama-3-8B", "--max-batch", "8",
             "--tp-only"]
YIELD = ["yield", "--area", "814"]
COST = ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
COSTS = ["costs", "--fabric", "ring:n=8"]
SWEEP = ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
         "--max-batch", "8"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml"]
PORTS_RULE = "1 or 2 (the optical cable ends one pluggable module serves)"
MEDIA = "'board', 'co-packaged-optics', 'copper', 'fibre', 'ocs-circuit', 'on-package'"


def _superpod(change: Callable[[str], str], name: str = "s.json") -> dict[str, Made]:
    """superpod:sus=1 saved as ``name`` (JSON or GraphML by its suffix), its text through
    ``change``."""
    def made(d: Path) -> None:
        tmp = "x" + Path(name).suffix
        invoke_in(["topology", "export", "superpod:sus=1", "-o", tmp], d)
        text = (d / tmp).read_text()
        (d / tmp).unlink()
        (d / name).write_text(change(text))
    return {name: made}


def _ring_ports(value: str) -> Callable[[str], str]:
    """ring:n=8's saved JSON with a graph attribute module_ports ``value`` (JSON text)."""
    return lambda t: t.replace('"gpus": 8,', f'"gpus": 8, "module_ports": {value},')


def _doc(change: Callable[[dict], None]) -> Callable[[str], str]:
    """A saved fabric's JSON text through ``change`` of its document."""
    def edit(text: str) -> str:
        doc = json.loads(text)
        change(doc)
        return json.dumps(doc)
    return edit


def _cut_two(doc: dict) -> None:
    """ring:n=8 cut in two (its links gpu0-gpu7 and gpu3-gpu4 removed)."""
    cut = ({"gpu0", "gpu7"}, {"gpu3", "gpu4"})
    doc["edges"] = [e for e in doc["edges"] if {e["source"], e["target"]} not in cut]


def _scenario(old: str, new: str) -> str:
    assert old in SCENARIO, old
    return SCENARIO.replace(old, new)


PORTS_LINE = "module_ports = 2 "
LLAMA_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}

#: Refusals: name -> (argv, files, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- module_ports in a fabric spec -----------------------------------------------------
    **{f"topology show superpod module_ports={v}": (
        ["topology", "show", f"superpod:sus=1,module_ports={v}"], {},
        (f"fabric 'superpod:sus=1,module_ports={v}'", *words))
       for v, words in (("0", (PORTS_RULE, "got 0")), ("3", (PORTS_RULE, "got 3")),
                        ("-1", (PORTS_RULE,)), ("2.5", ("module_ports must be an integer",
                                                        "'2.5'")),
                        ("two", ("module_ports", "'two'")), ("nan", ("module_ports", "'nan'")),
                        ("true", ("module_ports", "'true'")),
                        ("1e309", (PORTS_RULE, "310 digits")))},
    **{f"topology show {b} module_ports=2 (a builder that cannot take it)": (
        ["topology", "show", f"{b}:module_ports=2"], {},
        (f"unknown key 'module_ports' for fabric '{b}'", "known:"))
       for b in ("ring", "fat-tree", "leaf-spine", "flat", "ocs", "torus")},
    "topology show superpod module_port=2 (a near miss)": (
        ["topology", "show", "superpod:sus=1,module_port=2"], {},
        ("unknown key 'module_port'", "'module_ports'")),
    "topology show rail-optimized module_ports=3": (
        ["topology", "show", "rail-optimized:domains=2,module_ports=3"], {},
        ("rail-optimized: module_ports must be", PORTS_RULE)),
    "topology show lite-groups over superpod module_ports=3": (
        ["topology", "show", "lite-groups:base=[superpod:sus=1,module_ports=3]"], {},
        ("lite-groups: superpod: module_ports must be", PORTS_RULE)),
    # -- module_ports in a saved fabric: JSON and GraphML ----------------------------------
    **{f"topology show JSON module_ports {v}": (
        ["topology", "show", "f.json"], _fabric(_ring_ports(v)), ("f.json", *words))
       for v, words in (("0", (PORTS_RULE, "got 0")), ("3", (PORTS_RULE, "got 3")),
                        ("-1", (PORTS_RULE,)), ("2.5", ("'module_ports'", "2.5")),
                        ('"two"', ("'module_ports'", "'two'")), ("NaN", ("'module_ports'",
                                                                          "nan")),
                        ("Infinity", ("'module_ports'", "inf")), ("true", ("'module_ports'",
                                                                           "True")),
                        ("null", ("'module_ports'", "null")), ('"2"', ("'module_ports'",
                                                                       "'2'")),
                        ("[2]", ("'module_ports'", "[2]")),
                        ("1e309", ("holds the number 1e309", "module_ports")))},
    **{f"topology show GraphML superpod module_ports {v}": (
        ["topology", "show", "s.graphml"],
        _superpod(lambda t, v=v: t.replace('<data key="d3">2</data>', f'<data key="d3">{v}</data>'),
                  "s.graphml"), ("s.graphml", *words))
       for v, words in (("3", (PORTS_RULE, "got 3")), ("0", (PORTS_RULE,)),
                        ("two", ("module_ports",)), ("2.5", ("module_ports",)))},
    "availability --fabric a saved superpod of module_ports 3": (
        ["availability", "--fabric", "s.json", *AVAIL[3:]],
        _superpod(lambda t: t.replace('"module_ports": 2', '"module_ports": 3', 1)),
        ("s.json", PORTS_RULE, "got 3")),
    "blast-radius --fabric a saved superpod of module_ports 'two'": (
        ["blast-radius", "--fabric", "s.json", *BLAST[3:]],
        _superpod(lambda t: t.replace('"module_ports": 2', '"module_ports": "two"', 1)),
        ("s.json", "'module_ports'", "'two'")),
    # -- module_ports in a scenario file ---------------------------------------------------
    **{f"cost scenario module_ports = {v}": (
        ["cost", "--scenario", "s.toml", *COST[3:]],
        {"s.toml": _scenario(PORTS_LINE, f"module_ports = {v} ")}, ("s.toml", *words))
       for v, words in (("3", ("[fabric]", PORTS_RULE, "got 3")), ("0", (PORTS_RULE,)),
                        ("2.5", (PORTS_RULE, "got 2.5")), ('"two"', ("module_ports", "'two'")),
                        ("nan", ("module_ports", "nan")), ("true", (PORTS_RULE, "got True")),
                        ("-inf", ("module_ports",)), ("[2]", ("module_ports",)))},
    "cost scenario module_ports on fat-tree": (
        ["cost", "--scenario", "s.toml", *COST[3:]],
        {"s.toml": _scenario('builder = "rail-optimized"', 'builder = "fat-tree"')
         .replace("domains = 4", "k = 4").replace("domain_size = 8\n", "")
         .replace("gpus_per_server = 8\n", "")},
        ("s.toml", "unknown key(s)", "module_ports", "for builder 'fat-tree'")),
    # -- module_ports through sweep --param ------------------------------------------------
    # said 'no point of the sweep can be built: rail-optimized: module_ports must be ...',
    # naming no flag
    "sweep --param fabric.module_ports=3": (
        [*SWEEP, "--param", "fabric.module_ports=3"], {},
        ("--param 'fabric.module_ports=3'", PORTS_RULE, "got 3")),
    "sweep --param fabric.module_ports=3,4": (
        [*SWEEP, "--param", "fabric.module_ports=3,4"], {},
        ("--param 'fabric.module_ports=3,4'", PORTS_RULE)),
    "sweep --param fabric.module_ports=two": (
        [*SWEEP, "--param", "fabric.module_ports=two"], {}, ("--param", "'two'")),
    # -- saved fabrics edited by hand ------------------------------------------------------
    **{f"topology show JSON {what}": (["topology", "show", "f.json"], _fabric(change),
                                      ("f.json", *words))
       for what, change, words in (
           ("a self loop", _doc(lambda d: d["edges"].append(
               {**d["edges"][0], "target": d["edges"][0]["source"]})),
            ("joins a node to itself",)),
           ("a GPU without its gpu", _doc(lambda d: d["nodes"][0].pop("gpu")),
            ("gpu node 'gpu0' must name its GPU type",)),
           ("a GPU cut off", _doc(lambda d: d["nodes"].append({**d["nodes"][0], "id": "g9"})),
            ("'gpus' is 8 but it has 9 GPU nodes",)),
           ("an edge without bandwidth", _doc(lambda d: d["edges"][0].pop("bandwidth")),
            ("lacks attribute(s) bandwidth",)),
           ("a node without kind", _doc(lambda d: d["nodes"][0].pop("kind")),
            ("has no attribute 'kind'", "allowed: 'gpu', 'ocs', 'switch'")),
           ("cut in two", _doc(_cut_two), ("cannot reach GPU", "disconnected")),
           ("a node twice", _doc(lambda d: d["nodes"].append(dict(d["nodes"][0]))),
            ("node 'gpu0' is listed twice",)),
           ("an edge to no node", _doc(lambda d: d["edges"].append(
               {**d["edges"][0], "target": "nope"})), ("names node 'nope'",)),
           ("a null node", _doc(lambda d: d["nodes"].append(None)),
            ("every node must be an object",)),
           ("no nodes", _doc(lambda d: d.update(nodes=[], edges=[])), ("no GPU nodes",)),
           ("nodes an object", _doc(lambda d: d.update(nodes={})), ("'nodes' must be a JSON "
                                                                    "array",)),
           ("bandwidth negative", lambda t: t.replace('"bandwidth": 225000000000.0',
                                                      '"bandwidth": -225000000000.0', 1),
            ("bandwidth must be finite and > 0 bytes/s", "-225000000000.0")),
           ("bandwidth 0", lambda t: t.replace('"bandwidth": 225000000000.0', '"bandwidth": 0',
                                               1), ("bandwidth must be finite and > 0",)),
           ("bandwidth text", lambda t: t.replace('"bandwidth": 225000000000.0',
                                                  '"bandwidth": "fast"', 1),
            ("got the text 'fast', not a number",)),
           ("bandwidth NaN", lambda t: t.replace('"bandwidth": 225000000000.0',
                                                 '"bandwidth": NaN', 1),
            ("bandwidth must be finite", "nan")),
           ("latency -1e-08", lambda t: t.replace('"latency": 1e-08', '"latency": -1e-08', 1),
            ("latency must be finite and >= 0 s",)),
           ("latency Infinity", lambda t: t.replace('"latency": 1e-08', '"latency": Infinity',
                                                    1), ("latency must be finite",)),
           ("medium Copper", lambda t: t.replace('"medium": "copper"', '"medium": "Copper"', 1),
            ("medium 'Copper' is not one of", MEDIA)),
           # said only the list, where the medium printed as one in it
           ("medium in a Cyrillic o", lambda t: t.replace('"medium": "copper"',
                                                          '"medium": "c\u043epper"', 1),
            ("medium 'c\u043epper'", "did you mean 'copper'? (it has",
             "CYRILLIC SMALL LETTER O")),
           ("medium in a fullwidth c", lambda t: t.replace('"medium": "copper"',
                                                           '"medium": "\uff43opper"', 1),
            ("did you mean 'copper'? (it has",)),
           ("gpus 8.0", lambda t: t.replace('"gpus": 8,', '"gpus": 8.0,'),
            ("graph attribute 'gpus'", "8.0")),
           ("a top-level list", lambda t: "[]", ("node-link JSON object",)))},
    **{f"topology show saved superpod {what}": (["topology", "show", "s.json"],
                                                _superpod(change), ("s.json", *words))
       for what, change, words in (
           ("radix -64", lambda t: t.replace('"radix": 64', '"radix": -64', 1),
            ("switch 'leaf0' radix", "-64")),
           ("radix 1e12", lambda t: t.replace('"radix": 64', '"radix": 1e12', 1),
            ("switch 'leaf0' radix",)),
           ("tier -2", lambda t: t.replace('"tier": 2', '"tier": -2', 1),
            ("tier must be a whole number >= 0", "-2")),
           ("tier 'two'", lambda t: t.replace('"tier": 2', '"tier": "two"', 1),
            ("tier must be a whole number", "'two'")),
           ("in_network_reduction 0", lambda t: t.replace('"in_network_reduction": false',
                                                          '"in_network_reduction": 0', 1),
            ("in_network_reduction must be true or false", "got 0")),
           ("in_network_reduction 'false'", lambda t: t.replace(
               '"in_network_reduction": false', '"in_network_reduction": "false"', 1),
            ("in_network_reduction must be true or false", "'false'")),
           ("switch latency negative", lambda t: t.replace('"latency": 3.3e-07',
                                                           '"latency": -3.3e-07', 1),
            ("latency must be finite and >= 0 s",)))},
    # a builder's medium in look-alike letters: said only the list before
    "topology show ring medium in a Cyrillic o": (
        ["topology", "show", "ring:n=4,medium=c\u043epper"], {},
        ("medium 'c\u043epper'", "did you mean 'copper'? (it has")),
    "topology show superpod medium pluggable optics": (
        ["topology", "show", "superpod:sus=1,medium=pluggable optics"], {},
        ("medium 'pluggable optics' is not a known medium", "'pluggable-optics'")),
    # -- serve: every option at and past its ends -----------------------------------------
    **{f"serve --kv-ports {v} (not an OCS scenario)": (
        [*SERVE, "--kv-ports", v], {}, (f"--kv-ports '{v}'", "not optical circuit-switched"))
       for v in ("0", "-1", "1e9", "nan")},
    **{f"serve lite-ocs --kv-ports {v}": (
        [*SERVE_OCS, "--kv-ports", v], {}, (f"--kv-ports '{v}'", "whole number from 1 to 3"))
       for v in ("0", "4", "1e9", "3.5", "-1")},
    **{f"serve --ttft {v}": ([*SERVE, "--ttft", v], {}, ("--ttft", "1 us to 600 s"))
       for v in ("0", "-1s", "nan", "inf", "1e309s", "1e-30")},
    **{f"serve --tbt {v}": ([*SERVE, "--tbt", v], {}, ("--tbt", "1 us to 10 s"))
       for v in ("0", "1e-30", "11s")},
    **{f"serve --rate {v}": ([*SERVE, "--rate", v], {},
                             (f"--rate '{v}'", "rate must be a number from 1e-09 to "
                              "1,000,000,000 requests/s"))
       for v in ("nan", "inf", "-5", "1e300", "0")},
    **{f"serve --load {v}": ([*SERVE, "--load", v], {},
                             (f"--load '{v}'", "load must be a number from 1e-06 to 1, "
                              "1 excluded"))
       for v in ("0", "1", "1.5", "nan", "50%", "-0.5")},
    **{f"serve --dense-mlp-tp {v}": ([*SERVE, "--dense-mlp-tp", v], {},
                                     ("--dense-mlp-tp", "must be 1", f"got {v}"))
       for v in ("0", "3", "1024")},
    **{f"serve --mtp-tokens {v}": ([*SERVE, "--mtp-tokens", v], {},
                                   ("--mtp-tokens", "from 0 (off) to 16"))
       for v in ("-1", "17", "1000")},
    **{f"serve --mtp-acceptance {v}": ([*SERVE, "--mtp-tokens", "1", "--mtp-acceptance", v],
                                       {}, ("--mtp-acceptance", "probability from 0 to 1"))
       for v in ("1.5", "nan", "-0.1")},
    "serve --max-batch 1e9 (estimated before the search)": (
        [*SERVE[:6], "1000000000", "--tp-only"], {},
        ("about 4,000,000,000 configurations", "over the limit of 2,000,000", "--max-batch")),
    **{f"serve --max-batch {v}": ([*SERVE[:6], v, "--tp-only"], {},
                                  ("--max-batch", "whole number"))
       for v in ("0", "-1", "2.5", "nan")},
    "serve --workload ''": ([*SERVE, "--workload", ""], {},
                            ("--workload ''", "known: 'coding', 'conversation'")),
    "serve --workload in a Cyrillic o": ([*SERVE, "--workload", "c\u043eding"], {},
                                         ("did you mean 'coding'?",)),
    "serve --prefill-gpu ''": ([*SERVE, "--prefill-gpu", ""], {}, ("--prefill-gpu ''",
                                                                    "unknown GPU")),
    "serve --decode-gpu H100": ([*SERVE, "--decode-gpu", "H100"], {}, ("unknown GPU 'H100'",
                                                                       "'H100-SXM'")),
    "serve --decode-gpu a file of no GPU": ([*SERVE, "--decode-gpu", "g.toml"],
                                            {"g.toml": "x = 1\n"},
                                            ("g.toml", "top-level table 'gpu'")),
    "serve --workload file prompt 'ten'": ([*SERVE, "--workload", "w.toml"],
                                           {"w.toml": 'prompt = "ten"\noutput = 10\n'},
                                           ("w.toml", "prompt", "'ten'")),
    "serve --workload file rate true": ([*SERVE, "--workload", "w.toml"],
                                        {"w.toml": "prompt = 10\noutput = 10\nrate = true\n"},
                                        ("w.toml", "rate", "True")),
    "serve --workload file load [0.5]": ([*SERVE, "--workload", "w.json"],
                                         {"w.json": '{"prompt": 10, "output": 10, "load": '
                                                    '[0.5]}'}, ("w.json", "load")),
    "serve --workload file a top-level list": ([*SERVE, "--workload", "w.json"],
                                               {"w.json": "[1, 2]"}, ("w.json",)),
    # -- availability and blast-radius: options at and past their ends ----------------------
    **{f"availability --trials {v}": ([*AVAIL_BARE, "--horizon", "1h", "--trials", v], {},
                                      ("--trials", "whole number from 1 to 100,000", f"'{v}'"))
       for v in ("0", "-1", "1e12", "2.5", "nan", "100000000")},
    **{f"availability --horizon {v}": ([*AVAIL_BARE, "--trials", "5", "--horizon", v], {},
                                       ("--horizon", "1 h to 100 y"))
       for v in ("0", "1e9y", "nan", "-1h", "30min", "101y")},
    "availability 131,072 GPUs x 100,000 trials x 10 y (estimated before drawing)": (
        [*AVAIL_BARE, "--cluster-gpus", "131072", "--trials", "100000", "--horizon", "10y",
         "--spares", "1%"], {},
        ("failure events to simulate (100,000 trials)", "at most 2e+07", "--trials",
         "--horizon")),
    **{f"availability --spares {v}": ([*AVAIL, "--spares", v], {},
                                      (f"--spares '{v}'", "allowed: 0 to 32 (100%)"))
       for v in ("-1", "nan%", "inf", "", "1e400%", "2.5%x")},
    **{f"availability --seed {v}": ([*AVAIL, "--seed", v], {}, (f"--seed '{v}'",
                                                               "whole number"))
       for v in ("-1", "1.5", "abc", "nan", str(2 ** 63))},
    **{f"availability --threshold {v}": ([*AVAIL, "--threshold", v], {},
                                         (f"--threshold '{v}'", "(0, 100%]"))
       for v in ("nan", "1.5", "-0.1", "101%", "0%")},
    **{f"{c[0]} --detection {v}": ([*c, "--detection", v], {}, ("--detection", "100 y"))
       for c in (AVAIL, BLAST) for v in ("-1s", "nan", "1e9y")},
    **{f"availability --warmup {v}": ([*AVAIL, "--warmup", v], {}, ("--warmup",
                                                                    "from 0 to 100 y"))
       for v in ("inf", "-1")},
    **{f"{c[0]} --repair-time {v}": ([*c, "--repair-time", v], {}, ("--repair-time", *w))
       for c in (AVAIL, BLAST)
       for v, w in (("gpu-die=-1d", ("from 0 to 100 y",)), ("gpu-die=nan", ("'nan'",)),
                    ("gpu-die=1e9y", ("100 y",)), ("gpu-die", ("CLASS=VALUE",)),
                    ("GPU-DIE=1d", ("'GPU-DIE'", "known:")))},
    **{f"{c[0]} --rate {v}": ([*c, "--rate", v], {}, ("--rate", *w))
       for c in (AVAIL, BLAST)
       for v, w in (("gpu=-1e-3", (">= 0 per hour",)), ("gpu=nan", ("'nan'",)),
                    ("gpu=inf", ("'inf'",)), ("gpu=1e3", ("from 0 to 1 per hour",)))},
    **{f"{c[0]} --area-share {v}": ([*c, "--area-share", v], {}, ("--area-share",
                                                                  "[0.269, 1]"))
       for c in (AVAIL, BLAST) for v in ("nan", "-0", "inf", "0.1")},
    **{f"{c[0]} --cluster-gpus {v}": ([*c, "--cluster-gpus", v], {}, (f"'{v}'", *w))
       for c in (AVAIL, BLAST)
       for v, w in (("0", ("at least 1 GPU",)), ("-32", ("whole number of GPUs",)),
                    ("1e15", ("largest cluster modelled (131,072 GPUs)",)),
                    ("3200000000", ("131,072",)), ("nan", ("whole number of GPUs",)))},
    "availability --cluster-gpus 12 over ring:n=8": (
        ["availability", "--fabric", "ring:n=8", *AVAIL[3:], "--cluster-gpus", "12"], {},
        ("--cluster-gpus 12", "fabric of 8 GPUs", "use 8 or 16")),
    # said only the list, where 'grоup' (a Cyrillic o) printed as one in it
    **{f"{c[0]} --spare-placement in a Cyrillic o": (
        [*c, "--spare-placement", "gr\u043eup", *(["--spares", "1"] if c is AVAIL else [])],
        {}, ("--spare-placement 'gr\u043eup'", "did you mean 'group'? (it has",
             "known: 'global', 'group', 'pod'"))
       for c in (AVAIL, BLAST)},
    **{f"{c[0]} --spare-placement rack": ([*c, "--spare-placement", "rack"], {},
                                          ("--spare-placement 'rack'", "known: 'global'"))
       for c in (AVAIL, BLAST)},
    "availability --out /proc/x": ([*AVAIL, "--out", "/proc/x"], {}, ("'/proc/x'",
                                                                      "cannot write")),
    "availability --out a file": ([*AVAIL, "--out", "f"], {"f": "mine\n"}, ("'f'",)),
    "blast-radius --out ''": ([*BLAST, "--out", ""], {}, ("--out", "must not be empty")),
    # -- yield at the edges ----------------------------------------------------------------
    **{f"yield --wafer-diameter {v}": ([*YIELD, "--wafer-diameter", v], {},
                                       ("--wafer-diameter", *w))
       for v, w in (("0", ("> 0 and at most 1000 mm",)), ("-300mm", ("> 0",)),
                    ("nan", ("finite",)), ("1e9mm", ("above 1000 mm",)),
                    ("12in", ("unknown unit 'in'", "mm, cm, m")))},
    **{f"yield --wafer-price {v}": ([*YIELD, "--wafer-price", v], {}, ("--wafer-price", *w))
       for v, w in (("-1", (">= 0 and <= 1e+07",)), ("nan", ("finite",)),
                    ("1e300", ("<= 1e+07",)), ("$18000", ("not a number",)),
                    ("18,000", ("unknown unit",)))},
    **{f"yield --defect-density {v}": ([*YIELD, "--defect-density", v], {},
                                       ("--defect-density", "from 0 to 100 per cm^2"))
       for v in ("-0.1", "nan", "inf")},
    "yield --defect-density 101": ([*YIELD, "--defect-density", "101"], {},
                                   ("--defect-density 101 per cm^2", "above 100 per cm^2")),
    # said 'unknown yield model 'pоisson'; known: ...' beside a list showing it alike
    "yield --model in a Cyrillic o": ([*YIELD, "--model", "p\u043eisson"], {},
                                      ("unknown yield model 'p\u043eisson'",
                                       "did you mean 'poisson'? (it has")),
    "yield --model Poison": ([*YIELD, "--model", "Poison"], {},
                             ("'Poison'", "known: 'murphy', 'negative-binomial', 'poisson'")),
    "yield --model ''": ([*YIELD, "--model", ""], {}, ("--model ''", "unknown yield model")),
    **{f"yield --sms {v}": ([*YIELD, "--sms", v], {}, (f"--sms '{v}'", *w))
       for v, w in (("144", ("PHYSICAL/ENABLED",)), ("144/145", ("1 <= enabled <= physical",)),
                    ("1e9/1", ("from 1 to 100,000",)), ("144/132/1", ("PHYSICAL/ENABLED",)))},
    "yield --critical-fraction nan": ([*YIELD, "--sms", "144/132", "--critical-fraction", "nan"],
                                      {}, ("--critical-fraction", ">= 0 and <= 1")),
    "yield --critical-fraction 1.5": ([*YIELD, "--sms", "144/132", "--critical-fraction", "1.5"],
                                      {}, ("--critical-fraction", ">= 0 and <= 1")),
    **{f"yield --area {v}": (["yield", "--area", v], {}, ("--area", *w))
       for v, w in (("1e9", ("larger than the usable wafer",)), ("nan", ("finite",)),
                    ("", ("not a number with a unit",)), ("-1", ("> 0",)),
                    ("814in2", ("unit",)))},
    # -- cost and costs --------------------------------------------------------------------
    **{f"cost --clock {v}": ([*COST, "--clock", v], {}, ("--clock", "[0.05, 1.5]"))
       for v in ("nan", "inf", "1.6", "0")},
    "cost --share used": ([*COST, "--share", "used"], {}, ("--share 'used'",
                                                           "known: 'as-built', 'ports-used'")),
    # said 'unknown phase 'bоth'; known: 'decode', 'prefill' or 'both'' (a Cyrillic o)
    "cost --phase in a Cyrillic o": ([*COST, "--phase", "b\u043eth"], {},
                                     ("--phase 'b\u043eth'", "did you mean 'both'? (it has")),
    "cost --phase dеcode": ([*COST, "--phase", "d\u0435code"], {},
                            ("did you mean 'decode'? (it has",)),
    **{f"costs --sizes {v}": ([*COSTS, "--sizes", v], {}, ("--sizes", *w))
       for v, w in (("1:1e30", ("1 PiB",)),
                    ("1B:1PB:1.0000001", ("1,036,163,346 rows", "limit of 200,000")),
                    ("1B:1GB:1", ("factor must be > 1",)), ("1B:1GB:0.5", ("> 1",)),
                    ("1B:1GB:nan", ("'nan'",)), ("0", ("from 1 B",)), ("-1", ("from 1 B",)),
                    ("1GB:1B", ("is empty",)), ("1MB,1MB", ("twice",)),
                    ("1MB,2MB,", ("empty item",)), ("1e400", ("from 1 B",)))},
    **{f"costs --groups {v!r}": ([*COSTS, "--groups", v], {}, ("--groups", *w))
       for v, w in (("0", (">= 2",)), ("1000000", ("larger than the fabric's 8 GPUs",)),
                    ("2,2", ("more than once",)), ("", ("is empty",)), ("2.5", ("2.5",)))},
    "costs --max-rows 0": ([*COSTS, "--max-rows", "0"], {}, ("--max-rows", ">= 1")),
    "costs --max-transfers -1": ([*COSTS, "--max-transfers", "-1"], {}, ("--max-transfers",
                                                                          ">= 1")),
    "costs --nccl-buffsize 1e30": ([*COSTS, "--nccl-buffsize", "1e30"], {},
                                   ("--nccl-buffsize", "8 B to 1 TiB")),
    "costs --ops in a Cyrillic a": ([*COSTS, "--ops", "\u0430ll-reduce"], {},
                                    ("did you mean 'all-reduce'?",)),
    "costs --plot x.txt": ([*COSTS, "--plot", "x.txt"], {}, ("--plot 'x.txt'",
                                                             ".png, .svg, .pdf")),
    "costs -o a folder": ([*COSTS, "-o", "d"], {"d": _folder("d")}, ("'d'", "folder")),
    "costs -o a link to /dev/null": ([*COSTS, "-o", "x.csv"], {"x.csv": _link("x.csv",
                                                                              "/dev/null")},
                                     ("x.csv",)),
    # -- sweep --param ranges --------------------------------------------------------------
    "sweep --points 1e9": ([*SWEEP, "--param", "adjust.hop_latency=1us:1ms", "--points",
                            "1000000000"], {}, ("--points '1000000000'", "over the limit of "
                                                "1,000")),
    "sweep 5,000 values": ([*SWEEP, "--param", "adjust.hop_latency=" + ",".join(
        f"{i}ns" for i in range(1, 5001))], {}, ("--param", "about 5,000 values")),
    **{f"sweep --points {v}": ([*SWEEP, "--param", "adjust.hop_latency=1us:1ms", "--points", v],
                               {}, ("--points", "whole number"))
       for v in ("0", "nan", "-1", "2.5")},
    **{f"sweep --param {v}": ([*SWEEP, "--param", v], {}, (f"--param '{v}'", *w))
       for v, w in (("adjust.hop_latency=1us:1ms:1", ("would sweep its LO alone",)),
                    ("adjust.hop_latency=1ms:1us", ("HI is below LO",)),
                    ("adjust.hop_latency=nan", ("finite",)),
                    ("adjust.hop_latency=-1us", (">= 0",)),
                    ("fabric.domains=1e15", ("outside what can be built",)),
                    ("fabric.domains=0:1000000000", ("must be positive",)),
                    ("cost.pue=0.5", ("from 1 to",)), ("cost.pue=nan", ("'nan'",)),
                    ("", ("PATH=LO:HI",)), ("=", ("PATH=LO:HI",)),
                    ("adjust.hop_latency=", ("PATH=LO:HI",)))},
    # -- calibrate rows of odd values ------------------------------------------------------
    **{f"calibrate row {what}": (CALIBRATE, {"m.csv": f"{HEADER}\n{row}\n"},
                                 ("m.csv: row 2", *w))
       for what, row, w in (
           ("tp 0", ROW.replace(",1,8,", ",0,8,"), ("tp must be a whole number from 1",)),
           ("tp nan", ROW.replace(",1,8,", ",nan,8,"), ("tp", "nan")),
           ("batch 0", ROW.replace(",1,8,", ",1,0,"), ("batch",)),
           ("batch 1e12", ROW.replace(",1,8,", ",1,1e12,"), ("batch", "10,000,000")),
           ("context -96", ROW.replace(",96,", ",-96,"), ("context",)),
           ("context 1e12", ROW.replace(",96,", ",1e12,"), ("context",)),
           ("model in a Cyrillic a", ROW.replace("Llama-3-8B", "Llam\u0430-3-8B"),
            ("did you mean 'Llama-3-8B'?",)),
           ("gpu in a Cyrillic EN", ROW.replace("H100-SXM", "\u041d100-SXM"),
            ("did you mean 'H100-SXM'?",)),
           ("a cell too many", ROW + ",extra", ("more cells than the header",)),
           ("decode with a prompt", ROW.replace(",,96", ",100,96"), ("takes context, not "
                                                                      "prompt",)),
           ("prefill without a prompt", ROW.replace("decode,,96", "prefill,,"),
            ("needs prompt",)),
           ("latency 7.8ms", ROW.replace("0.0078", "7.8ms"), ("latency_s", "'7.8ms'")),
           ("latency inf", ROW.replace("0.0078", "inf"), ("latency_s", "inf")),
           ("latency empty", ROW.replace("0.0078", ""), ("latency_s is empty",)),
           ("a BOM inside", "\ufeff" + ROW, ("model name",)))},
    "calibrate a row of fewer cells": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW[:20]}\n"},
                                       ("m.csv: row 2", "fewer cells")),
    "calibrate an empty file": (CALIBRATE, {"m.csv": ""}, ("m.csv holds no measurements",)),
    "calibrate a header alone": (CALIBRATE, {"m.csv": f"{HEADER}\n"}, ("no measurements",)),
    "calibrate latency_s twice": (CALIBRATE, {"m.csv": f"{HEADER},latency_s\n{ROW},1\n"},
                                  ("latency_s given twice",)),
    "calibrate UTF-16": (CALIBRATE, {"m.csv": b"\xff\xfe" + HEADER.encode("utf-16-le")},
                         ("'m.csv'", "not a UTF-8 text file")),
    "calibrate a non-UTF-8 byte": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW}\n".encode() + b"\xff"},
                                   ("'m.csv'", "UTF-8")),
    # -- a HuggingFace config's choices in look-alike letters: said only the list before --
    **{f"models --hf-config {k} {v!r}": (
        ["models", "--hf-config", "config.json"],
        {"config.json": json.dumps({**LLAMA_CONFIG, k: v})}, (f"did you mean '{meant}'?",))
       for k, v, meant in (("torch_dtype", "bflo\u0430t16", "bfloat16"),
                           ("torch_dtype", "torch.bflo\u0430t16", "bfloat16"),
                           ("position_embedding_type", "r\u043epe", "rope"))},
    "models --hf-config hidden_size 0": (
        ["models", "--hf-config", "config.json"],
        {"config.json": json.dumps({**LLAMA_CONFIG, "hidden_size": 0})},
        ("config.json", "hidden_size must be a whole number from 1")),
    # a name from a user's file in look-alike letters: said only the list before
    "infer --gpu in a non-breaking hyphen --gpu-file": (
        ["infer", "--model", "Llama-3-8B", "--gpu", "Mine\u2011X", "--gpu-file", "g.toml", "--tp",
         "1", "--batch", "1"],
        {"g.toml": '[gpu."Mine-X"]\nderive_from = "H100-SXM"\nfraction = 1\nsource = "x"\n'},
        ("did you mean 'Mine-X'? (it has",)),
    # -- scenario files of wrong types -----------------------------------------------------
    **{f"cost scenario {what}": (["cost", "--scenario", "s.toml", *COST[3:]],
                                 {"s.toml": text}, ("s.toml", *w))
       for what, text, w in (
           ("sharp = 0", _scenario("sharp = false", "sharp = 0"), ("sharp must be true or "
                                                                  "false",)),
           ("placement = 5", _scenario('placement = "contiguous"', "placement = 5"),
            ("placement 5 is unknown",)),
           ("algorithm = ['auto']", _scenario('algorithm = "auto"', 'algorithm = ["auto"]'),
            ("algorithm ['auto'] is unknown",)),
           ("links = 'as_built'", _scenario('links = "as-built"', 'links = "as_built"'),
            ("links 'as_built' is unknown", "'as-built'")),
           ("gpu = 5", _scenario('gpu = "H100-SXM"', "gpu = 5"), ("gpu name 5",)),
           ("name = 5", _scenario('name = "mine"', "name = 5"), ("scenario name 5",)),
           ("description = 5", _scenario('description = "', 'description = 5 # "'),
            ("description must be text",)),
           ("[sources] foo", _scenario("[sources]", "[sources]\nfoo = 1"),
            ("[sources]", "unknown key(s) foo")),
           ("[fabrik]", _scenario("[fabric]", "[fabrik]"), ("unknown key(s) fabrik",)),
           ("calibration in a Cyrillic e", _scenario('calibration = "default"',
                                                     'calibration = "d\u0435fault"'),
            ("did you mean 'default'?",)),
           ("domain_size = 8.5", _scenario("domain_size = 8", "domain_size = 8.5"),
            ("domain_size must be an integer >= 1", "8.5")),
           ("domain_size = -8", _scenario("domain_size = 8", "domain_size = -8"),
            ("domain_size",)),
           ("medium 'pluggable optics'", _scenario('medium = "pluggable-optics"',
                                                   'medium = "pluggable optics"'),
            ("medium 'pluggable optics' is not a known medium",)),
           ("medium in a Cyrillic o", _scenario('medium = "pluggable-optics"',
                                                'medium = "pluggable-\u043eptics"'),
            ("did you mean 'pluggable-optics'? (it has",)),
           ("[adjust] hop_latency = -1", SCENARIO + "\n[adjust]\nhop_latency = -1\n",
            ("[adjust]", "hop_latency must be a number from 0 to 0.001 s",)),
           ("[adjust] bandwidth_scale = nan", SCENARIO + "\n[adjust]\nbandwidth_scale = nan\n",
            ("bandwidth_scale", "nan")),
           ("[cost] pue", SCENARIO + "\n[cost]\npue = 0.5\n", ("unknown key(s) cost",)),
           # said only the list, where the builder printed as one in it
           ("builder in a Cyrillic a", _scenario('builder = "rail-optimized"',
                                                 'builder = "r\u0430il-optimized"'),
            ("did you mean 'rail-optimized'? (it has",)))},
}

#: Taken as they are: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    # a choice is read with case aside (compute.errors.chosen): refused before 01b00252's rule
    "yield --model Poisson": ([*YIELD, "--model", "Poisson"], {}),
    "topology show superpod module_ports=2.0": (["topology", "show",
                                                 "superpod:sus=1,module_ports=2.0"], {}),
    "topology show superpod module_ports= 2": (["topology", "show",
                                                "superpod:sus=1,module_ports= 2"], {}),
    "topology show superpod medium=copper module_ports=2 (no optics to pair)": (
        ["topology", "show", "superpod:sus=1,medium=copper,module_ports=2"], {}),
    # a whole number in a scenario's TOML read as domain_size = 8.0 is: refused before
    # ('module_ports must be 1 or 2 (...), got 2.0')
    "cost scenario module_ports = 2.0": (["cost", "--scenario", "s.toml", *COST[3:]],
                                         {"s.toml": _scenario(PORTS_LINE,
                                                              "module_ports = 2.0 ")}),
    "cost scenario module_ports = 1": (["cost", "--scenario", "s.toml", *COST[3:]],
                                       {"s.toml": _scenario(PORTS_LINE, "module_ports = 1 ")}),
    "cost scenario domain_size = 8.0": (["cost", "--scenario", "s.toml", *COST[3:]],
                                        {"s.toml": _scenario("domain_size = 8",
                                                             "domain_size = 8.0")}),
    "sweep --param fabric.module_ports=1,2": ([*SWEEP, "--param", "fabric.module_ports=1,2"],
                                              {}),
    "availability --fabric superpod module_ports=2": (
        ["availability", "--fabric", "superpod:sus=1,module_ports=2", *AVAIL[3:]], {}),
    "topology show JSON lanes 18.0": (["topology", "show", "f.json"],
                                      _fabric(lambda t: t.replace('"lanes": 18', '"lanes": 18.0',
                                                                  1))),
    "topology show saved superpod module_ports 1": (
        ["topology", "show", "s.json"],
        _superpod(lambda t: t.replace('"module_ports": 2', '"module_ports": 1', 1))),
    "availability --spares -0%": ([*AVAIL, "--spares", "-0%"], {}),
    "availability --horizon 100y --trials 5": ([*AVAIL_BARE, "--horizon", "100y", "--trials",
                                               "5"], {}),
    "availability --seed 2**63 - 1": ([*AVAIL, "--seed", str(2 ** 63 - 1)], {}),
    "blast-radius --cluster-gpus 131072": ([*BLAST, "--cluster-gpus", "131072"], {}),
    "yield --wafer-diameter '300 mm'": ([*YIELD, "--wafer-diameter", "300 mm"], {}),
    "yield --defect-density 0.1/cm2": ([*YIELD, "--defect-density", "0.1/cm2"], {}),
    "yield --area 2cm2": (["yield", "--area", "2cm2"], {}),
    "yield --model ' poisson '": ([*YIELD, "--model", " poisson "], {}),
    "cost --phase ' both '": ([*COST, "--phase", " both "], {}),
    "costs --max-transfers 1e15": ([*COSTS, "--max-transfers", "1e15"], {}),
    "serve --decode-gpu h100-sxm": ([*SERVE, "--decode-gpu", "h100-sxm"], {}),
}


def _build_fabric(spec: str, params: dict) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        return netmodel.build_fabric(spec, params)
    return call


def _lib(module: str, function: str, *args: object, **kw: object) -> Callable[[], object]:
    """A call of ``module.function(*args, **kw)``, imported when run."""
    def call() -> object:
        import importlib

        return getattr(importlib.import_module(module), function)(*args, **kw)
    return call


AV = dict(max_batch=8, trials=5, horizon="1h")


def _edited_ports(function: str, value: object) -> Callable[[], object]:
    """``function`` (of the bill or the optics) on superpod:sus=1 of module_ports ``value``
    set in code."""
    def call() -> object:
        import importlib

        from topologies import superpod

        g = superpod(1)
        g.graph["module_ports"] = value
        module = "topologies.inventory" if function == "bill_of_materials" else \
            "topologies.optic_modules"
        return getattr(importlib.import_module(module), function)(g)
    return call


def _spares(function: str, **kw: object) -> Callable[[], object]:
    """``function`` of netmodel.study.availability on h100-dgx's cluster (Llama-3-8B)."""
    def call() -> object:
        from netmodel.study import availability
        from netmodel.study.reliability_cluster import build_cluster

        c = build_cluster("h100-dgx", "Llama-3-8B", max_batch=8)
        return getattr(availability, function)(c, "pod", **kw)
    return call


def _scenario_with(field: str, value: object) -> Callable[[], object]:
    """h100-dgx made again in code with ``field`` set to ``value``."""
    def call() -> object:
        import dataclasses

        import netmodel

        return dataclasses.replace(netmodel.get_scenario("h100-dgx"), **{field: value})
    return call


#: Library calls refused: name -> (call, words the message holds).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    **{f"build_fabric('superpod', module_ports={v!r})": (
        _build_fabric("superpod", {"sus": 1, "module_ports": v}),
        ("superpod: module_ports must be", PORTS_RULE))
       for v in (0, 3, 2.5, NAN, True, None, -1, math.inf, [2])},
    "build_fabric('superpod', module_ports=2.0)": (
        _build_fabric("superpod", {"sus": 1, "module_ports": 2.0}),
        ("superpod: module_ports must be a whole number (an int)", "got 2.0")),
    "build_fabric('superpod', module_ports='two')": (
        _build_fabric("superpod", {"sus": 1, "module_ports": "two"}),
        ("superpod: module_ports must be", "'two'")),
    "build_fabric('ring', module_ports=2)": (_build_fabric("ring", {"n": 8, "module_ports": 2}),
                                             ("unknown key 'module_ports' for fabric 'ring'",)),
    "build_fabric('ring', {'n': nan})": (_build_fabric("ring", {"n": NAN}),
                                         ("ring: n must be an integer", "nan")),
    "build_fabric('ring', medium='cоpper')": (
        _build_fabric("ring", {"n": 4, "medium": "c\u043epper"}),
        ("did you mean 'copper'? (it has",)),
    "collective_time(group=nan)": (_lib("netmodel", "collective_time", "ring:n=8", "all-reduce",
                                        [1e6], NAN), ("group",)),
    "collective_time(sizes=[-1])": (_lib("netmodel", "collective_time", "ring:n=8",
                                         "all-reduce", [-1.0], 8),
                                    ("message size must be a finite number of bytes > 0",)),
    "collective_time(placement='spreаd')": (
        _lib("netmodel", "collective_time", "ring:n=8", "all-reduce", [1e6], 8,
             placement="spre\u0430d"), ("did you mean 'spread'?",)),
    "evaluate(phase='dеcode')": (_lib("netmodel", "evaluate", "Llama-3-8B", "H100-SXM",
                                      "d\u0435code", tp=1, batch=1),
                                 ("did you mean 'decode'?",)),
    "evaluate(batch=1e12)": (_lib("netmodel", "evaluate", "Llama-3-8B", "H100-SXM", "decode",
                                  tp=1, batch=10 ** 12), ("batch", "1,000,000,000")),
    "search(max_batch=10**15)": (_lib("netmodel", "search", "Llama-3-8B", "H100-SXM", "decode",
                                      max_batch=10 ** 15), ("over the limit of 2,000,000",)),
    # said 'parallelism 'аll' is unknown; known: 'all', 'auto', 'tp'' (a Cyrillic а)
    "search(parallelism='аll')": (_lib("netmodel", "search", "Llama-3-8B", "H100-SXM",
                                       "decode", parallelism="\u0430ll"),
                                  ("parallelism '\u0430ll' is unknown",
                                   "did you mean 'all'? (it has")),
    "sweep(parallelism='аuto')": (_lib("netmodel", "sweep", ["h100-dgx"],
                                       ["adjust.hop_latency=1us,2us"], ["Llama-3-8B"],
                                       ["decode"], parallelism="\u0430uto", max_batch=8),
                                  ("did you mean 'auto'? (it has",)),
    "compare(phases=['dеcode'])": (_lib("netmodel", "compare", ["Llama-3-8B"], ["h100-dgx"],
                                        ["d\u0435code"], max_batch=8),
                                   ("did you mean 'decode'?",)),
    "get_scenario('h100-dgх')": (_lib("netmodel", "get_scenario", "h100-dg\u0445"),
                                 ("did you mean 'h100-dgx'?",)),
    **{f"ServingWorkload({k}={v!r})": (
        _lib("netmodel.study.serving_workload", "ServingWorkload",
             **{"name": "w", "prompt": 10, "output": 10, k: v}), (f"{k}",))
       for k, v in (("prompt", NAN), ("prompt", True), ("output", 0), ("rate", -1.0),
                    ("load", 1), ("name", 5), ("source", 5))},
    "serve(kv_ports=2.5) lite-ocs": (_lib("netmodel.study.serving", "serve", "Llama-3-8B",
                                          "lite-ocs", kv_ports=2.5, max_batch=8,
                                          dimensions="tp"), ("kv_ports", "from 1 to 3")),
    "serve(dimensions='аll')": (_lib("netmodel.study.serving", "serve", "Llama-3-8B",
                                     "h100-dgx", dimensions="\u0430ll", max_batch=8),
                                ("did you mean 'all'?",)),
    "serve(slo=0.05)": (_lib("netmodel.study.serving", "serve", "Llama-3-8B", "h100-dgx",
                             slo=0.05, max_batch=8), ("slo must be a compute.phases.Slo",)),
    **{f"availability({k}={v!r})": (
        _lib("netmodel.study.availability", "availability", "h100-dgx", "Llama-3-8B",
             **{**AV, k: v}), (k,))
       for k, v in (("trials", 0), ("trials", 10 ** 9), ("trials", 2.5), ("horizon", NAN),
                    ("horizon", -1), ("horizon", "1e9y"), ("seed", -1), ("seed", NAN),
                    ("spares", -1), ("spares", NAN), ("spares", 1.5), ("spares", True),
                    ("threshold", NAN), ("gpus", 48), ("gpus", 10 ** 15))},
    # said 'unknown spare placement 'grоup'; known: ...' (a Cyrillic о)
    "availability(placement='grоup')": (
        _lib("netmodel.study.availability", "availability", "h100-dgx", "Llama-3-8B",
             placement="gr\u043eup", spares=1, **AV),
        ("unknown spare placement 'gr\u043eup'", "did you mean 'group'? (it has")),
    "availability(parallelism='аuto')": (
        _lib("netmodel.study.availability", "availability", "h100-dgx", "Llama-3-8B",
             parallelism="\u0430uto", **AV), ("did you mean 'auto'? (it has",)),
    "availability(cluster=5)": (_lib("netmodel.study.availability", "availability", None, None,
                                     cluster=5, trials=5, horizon="1h"), ("cluster must be",)),
    "blast_radius(placement='pоd')": (_lib("netmodel.study.blast_radius", "blast_radius",
                                           "h100-dgx", "Llama-3-8B", placement="p\u043ed",
                                           max_batch=8), ("did you mean 'pod'? (it has",)),
    "blast_radius(classes=['gpu-dіe'])": (_lib("netmodel.study.blast_radius", "blast_radius",
                                               "h100-dgx", "Llama-3-8B",
                                               classes=["gpu-d\u0456e"], max_batch=8),
                                          ("did you mean 'gpu-die'?",)),
    # ran the prefill at its default prompt: a prefill never reads a context
    "blast_radius(prefill, context=5)": (
        _lib("netmodel.study.blast_radius", "blast_radius", "h100-dgx", "Llama-3-8B",
             "prefill", context=5, max_batch=8), ("context 5 sets a decode step's context",)),
    "blast_radius(classes='gpu')": (_lib("netmodel.study.blast_radius", "blast_radius",
                                         "h100-dgx", "Llama-3-8B", classes="gpu",
                                         max_batch=8), ("classes must be a list",)),
    **{f"die_cost({what})": (_lib("compute.die_yield", "die_cost", *args, **kw), words)
       for what, args, kw, words in (
           ("area=nan", (NAN,), {}, ("die area",)), ("area=-1", (-1.0,), {}, ("die area",)),
           ("area='814'", ("814",), {}, ("die area must be a number",)),
           ("wafer_diameter=nan", (814e-6,), {"wafer_diameter": NAN}, ("wafer_diameter",)),
           ("wafer_price=-1", (814e-6,), {"wafer_price": -1}, ("wafer_price",)),
           ("defect_density=inf", (814e-6,), {"defect_density": math.inf},
            ("defect_density",)),
           ("alpha=0", (814e-6,), {"alpha": 0}, ("alpha",)),
           # said 'unknown yield model 'pоisson'; known: ...' (a Cyrillic о)
           ("model='pоisson'", (814e-6,), {"model": "p\u043eisson"},
            ("unknown yield model", "did you mean 'poisson'? (it has")))},
    "harvested_yield(144/145)": (_lib("compute.die_yield", "harvested_yield", 814e-6, 144, 145),
                                 ("sms_enabled 145 exceeds sms_physical 144",)),
    "harvested_yield(critical_fraction=nan)": (
        _lib("compute.die_yield", "harvested_yield", 814e-6, 144, 132, critical_fraction=NAN),
        ("critical_fraction",)),
    # taken before: the library's Monte Carlo had no bound where --seed said 2**63 - 1
    "availability(seed=2**64)": (
        _lib("netmodel.study.availability", "availability", "h100-dgx", "Llama-3-8B",
             seed=2 ** 64, **AV), ("seed must be a whole number from 0 to 2**63 - 1",)),
    # a Scenario made in code: the choices were kept (links 'as_built' ran as built), a
    # fabric of no builder raised KeyError, adjust=5 AttributeError
    **{f"Scenario({k}={v!r})": (_scenario_with(k, v), ("scenario 'h100-dgx'", *w))
       for k, v, w in (("links", "as_built", ("links 'as_built' is unknown",)),
                       ("calibration", "x", ("calibration 'x' is unknown",)),
                       ("instances", "\u0430ll", ("did you mean 'all'?",)),
                       ("instances", None, ("instances None is unknown",)),
                       ("circuits", "x", ("circuits 'x' is unknown",)),
                       ("adjust", 5, ("adjust must be",)), ("fabric", {}, ("fabric must be",)),
                       ("fabric", 5, ("fabric must be",)))},
    **{f"Scenario(name={v!r})": (_scenario_with("name", v), ("Scenario: name", w))
       for v, w in (("", "non-empty"), ("a\nb", "control character"), (5, "text"))},
    # a graph's module_ports edited in code: read as it was (3 grouped optics three a module)
    **{f"{f}(superpod module_ports={v!r})": (_edited_ports(f, v), ("graph attribute "
                                                                   "'module_ports'",))
       for f in ("bill_of_materials", "optical_modules", "module_count")
       for v in (3, "2", True, 0)},
    # spare_curve ran range(10**9) on; a cluster of 5 raised AttributeError; NaN shares ran
    **{f"spare_curve(counts={what})": (_spares("spare_curve", counts=c), w)
       for what, c, w in (("range(10**9)", range(10 ** 9), ("about 1,000,000,000 spare counts",
                                                            "NETMODEL_MAX_SPARE_COUNTS")),
                          ("[1.5]", [1.5], ("counts must be whole numbers",)),
                          ("[-1]", [-1], ("counts must be whole numbers",)))},
    "spares_needed(threshold=nan)": (_spares("spares_needed", threshold=NAN),
                                     ("capacity threshold must be a share",)),
    "spares_needed(5)": (_lib("netmodel.study.availability", "spares_needed", 5),
                         ("cluster must be a netmodel.study.reliability_cluster.Cluster",)),
    "bill_of_materials(5)": (_lib("topologies.inventory", "bill_of_materials", 5),
                             ("graph must be a networkx Graph",)),
    "ends_held(5, 10, 3)": (_lib("topologies.optic_modules", "ends_held", 5, 10, 3),
                            ("ports must be", PORTS_RULE)),
    # raised MemoryError: 'Unable to allocate 74.5 GiB' (10^10 areas, a view of one number)
    "yield_curve(10^10 areas)": (
        lambda: __import__("compute.die_yield", fromlist=["yield_curve"]).yield_curve(
            __import__("numpy").broadcast_to(814e-6, (10 ** 5, 10 ** 5))),
        ("yield_curve", "10,000,000,000 die areas", "over the limit of")),
}


def library_case(name: str, call: Callable[[], object], words: tuple[str, ...]) -> Case:
    def run(d: Path) -> str | None:
        from compute.errors import UserError

        try:
            call()
        except UserError as exc:
            missing = [w for w in words if w not in str(exc)]
            return None if not missing else f"names not {missing}: said {str(exc)[:300]!r}"
        except Exception as exc:  # noqa: BLE001 - the verdict
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        return "taken"
    return f"library {name}", run


#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    # refused before: 'module_ports must be 1 or 2 (...), got 2'; a float, 2.0 too, is
    # refused since: a count given in code is an int
    "build_fabric('superpod', module_ports=np.int64(2))": (
        lambda: _build_fabric("superpod", {"sus": 1, "module_ports": __import__(
            "numpy").int64(2)})(),
        lambda g: g.graph["module_ports"] == 2 and type(g.graph["module_ports"]) is int),
    "build_fabric('superpod', module_ports=np.int64(1))": (
        lambda: _build_fabric("superpod", {"sus": 1, "module_ports": __import__(
            "numpy").int64(1)})(),
        lambda g: "module_ports" not in g.graph),
    "yield_curve([814e-6])": (_lib("compute.die_yield", "yield_curve", [814e-6]),
                              lambda c: c["sms_physical"].tolist() == [144]),
}


def library_taken_case(name: str, call: Callable[[], object],
                       holds: Callable[[object], bool]) -> Case:
    def run(d: Path) -> str | None:
        try:
            got = call()
        except Exception as exc:  # noqa: BLE001 - the verdict
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        return None if holds(got) else f"taken, but not as expected: {str(got)[:200]}"
    return f"library {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    return run_round(cases(), "hostile29-")


if __name__ == "__main__":
    sys.exit(main())
