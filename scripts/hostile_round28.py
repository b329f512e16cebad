"""Hostile-input round 28, on what rounds 15-27 (scripts/hostile_round15.py .. 27.py) left
untried: an engine profile's ``[profile] moe_exchanges`` list (malformed, duplicated, empty,
in look-alike letters, blanks around, null in JSON, a float past the range, a key twice,
the key in the wrong table) through every command that reads a profile (infer, search,
serve, compare and study with ``--out``, sweep, calibrate ``--base``); an
:class:`~compute.profiles.EngineProfile` made in code with the values a file's reader
refuses (a GEMM efficiency curve of efficiency 2, negative or NaN, one point, text;
``moe_exchanges`` 0, '' or []; an engine of 5); ``calibrate`` with measurements of odd
shape (two byte-order marks, NUL, semicolons, tabs, capitals, rows below the roofline with
``--json``, a cell past 128 KiB, a file past 4 MiB, a FIFO) and with GPUs whose names
together pass the 2,000 characters a profile's text holds; ``serve`` workload files (BOM,
CRLF, a key twice, 1e309, -0, 100,000 levels of nesting, a link to itself) and
``--rate``/``--load`` with the decode slot's simulation at their ends, the options that
cannot go together (a profile with two-batch overlap or MTP, MTP with two-batch overlap,
``--mtp-acceptance`` alone), ``NAME@GPU`` spelled oddly; ``availability``,
``blast-radius`` and ``cost`` over a scenario file with a BOM and CRLF, 1e309, -0, a key
twice, 10^15 domains, deep nesting, a folder, a link loop, and their failure options at
their ends; ``availability``/``blast-radius --fabric`` over a saved fabric (1e309, a key or
an edge twice, 1e15 lanes, a node's GPU blank-ended or in look-alike letters, JSON and
GraphML); ``yield`` over a GPU file alike (its die's process in a Greek Nu) and at the ends
of its ranges; the choices no round had typed in look-alike letters (a failure class of
``--rate``/``--repair-time``, a fabric spec's key, ``--tuner``, ``sweep --param``);
``study --profile``; and ``--json`` output of edge-but-legal runs, which must be strict
JSON (no NaN or Infinity).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target); a ``status`` case the status given, its ``--json`` strict JSON; a
library refusal is a UserError naming the parameter.

Usage: ``python scripts/hostile_round28.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner), a
minute or two on two cores.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_tally import (  # noqa: E402
    Case,
    Made,
    invoke_in,
    make,
    refusal_case,
    run_round,
    taken_case,
)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_CSV = str(ROOT / "compute/data/vllm_h100_2024_measurements.csv")
SHIPPED_PROFILE = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text()
PROFILE = SHIPPED_PROFILE.replace('name = "vllm-dgx-h100"', 'name = "mine"')
EXCHANGES = '["all-to-all", "all-reduce", "vllm-gather"]'
SCENARIO = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text().replace(
    'name = "h100-dgx"', 'name = "mine"')
GPU = '[gpu."Mine"]\nderive_from = "H100-SXM"\nfraction = 0.25\nmax_instance = 32\n' \
      'source = "what-if: mine"\n'
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s"
ROW = "Llama-3-8B,H100-SXM,1,8,decode,,96,0.0078"
BELOW = ("Llama-3-8B,H100-SXM,1,8,decode,,96,0.003\nLlama-3-8B,H100-SXM,1,64,decode,,96,0.004\n"
         "Llama-3-8B,H100-SXM,1,1,decode,,96,0.0035\n")
WORKLOAD = "prompt = 100\noutput = 10\n"
CYRILLIC_E_ROW = ROW.replace("decode", "d\u0435code")

INFER_V3 = ["infer", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1",
            "--profile", "p.toml"]
SEARCH_V3 = ["search", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--max-batch", "8",
             "--profile", "p.toml"]
SERVE_V3 = ["serve", "--scenario", "h100-dgx", "--model", "DeepSeek-V3", "--max-batch", "8"]
COMPARE_V3 = ["compare", "--models", "DeepSeek-V3", "--max-batch", "8", "-q", "--no-plot",
              "--scenarios", "lite-ocs", "--out", "o"]
SWEEP_V3 = ["sweep", "--scenarios", "lite-ocs", "-q", "--no-plot", "--models", "DeepSeek-V3",
            "--max-batch", "8", "--param", "adjust.hop_latency=1us", "--out", "o"]
STUDY = ["study", "lite-gpu", "--out", "o", "--models", "Llama-3-8B", "--gpus", "Lite", "-q",
         "--no-fabric", "--no-plot"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml", "--fit",
             "layer_overhead_s"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8",
         "--tp-only"]
AVAIL = ["availability", "--scenario", "s.toml", "--model", "Llama-3-8B", "--max-batch", "8",
         "-q", "--trials", "5", "--horizon", "1h"]
BLAST = ["blast-radius", "--scenario", "s.toml", "--model", "Llama-3-8B", "--max-batch", "8"]
COST = ["cost", "--scenario", "s.toml", "--model", "Llama-3-8B", "--max-batch", "8"]
AVAIL_DGX = [AVAIL[0], "--scenario", "h100-dgx", *AVAIL[3:]]
YIELD = ["yield", "--area", "814", "--json"]
ALLOWED = "moe_exchanges must be a list of 'all-reduce', 'all-to-all', 'sglang-dp-gather', " \
          "'vllm-gather', each at most once, 'all-to-all' among them"


def _fifo(name: str) -> Made:
    return lambda d: os.mkfifo(d / name)


def _link(name: str, to: str) -> Made:
    return lambda d: os.symlink(to, d / name)


def _folder(name: str) -> Made:
    return lambda d: (d / name).mkdir()


def _loop(name: str) -> Made:
    """``name`` a link to ``name.2``, a link back to it."""
    def made(d: Path) -> None:
        os.symlink(f"{name}.2", d / name)
        os.symlink(name, d / f"{name}.2")
    return made


def _exchanges(value: str) -> str:
    """The profile with its moe_exchanges line's value ``value`` (TOML)."""
    return PROFILE.replace(EXCHANGES, value)


def _json_profile(value: object) -> str:
    doc = tomllib.loads(PROFILE)
    doc["profile"]["moe_exchanges"] = value
    return json.dumps(doc)


def _ring_json(d: Path) -> str:
    """ring:n=8 exported as node-link JSON (written in ``d``, read, removed)."""
    invoke_in(["topology", "export", "ring:n=8", "-o", "r.json"], d)
    text = (d / "r.json").read_text()
    (d / "r.json").unlink()
    return text


def _fabric(change: Callable[[str], str], name: str = "f.json") -> dict[str, Made]:
    """A saved fabric ``name`` (ring:n=8 exported, its text through ``change``)."""
    def made(d: Path) -> None:
        (d / name).write_text(change(_ring_json(d)))
    return {name: made}


def _node_gpu(gpu: str) -> Callable[[str], str]:
    """A saved fabric's text with every GPU node's type ``gpu``."""
    def change(text: str) -> str:
        doc = json.loads(text)
        for node in doc["nodes"]:
            node["gpu"] = gpu
        return json.dumps(doc)
    return change


def _edge_twice(text: str) -> str:
    doc = json.loads(text)
    doc["edges"].append(dict(doc["edges"][0]))
    return json.dumps(doc)


def _die_process(process: str) -> str:
    """A GPU file of B200-HGX's figures and die, its die's process ``process``."""
    catalog = (ROOT / "compute/data/gpus.toml").read_text()
    die = catalog[catalog.index('[gpu."B200-HGX".die]'):]
    die = die[:die.index("\n\n")].replace('[gpu."B200-HGX".die]', '[gpu."Mine".die]')
    return ('[gpu."Mine"]\nderive_from = "B200-HGX"\nfraction = 1\nsource = "what-if: mine"\n\n'
            + die.replace('process = {value = "N4"', f'process = {{value = "{process}"') + "\n")


def _graphml(d: Path) -> str:
    """ring:n=4 exported as GraphML (written in ``d``, read, removed)."""
    invoke_in(["topology", "export", "ring:n=4", "-o", "r.graphml"], d)
    text = (d / "r.graphml").read_text()
    (d / "r.graphml").unlink()
    return text


def _gpu_names(count: int) -> tuple[str, str]:
    """A GPU file of ``count`` GPUs named in 193 characters each, and the measurements of
    one decode step on each (a profile's texts hold 2,000 characters)."""
    names = [f"G{i:02d}" + "x" * 190 for i in range(count)]
    gpus = "".join(f'[gpu."{n}"]\nderive_from = "H100-SXM"\nfraction = 1\n'
                   f'source = "what-if: mine"\n\n' for n in names)
    rows = "".join(f"Llama-3-8B,{n},1,8,decode,,96,0.0078\n" for n in names)
    return gpus, f"{HEADER}\n{rows}"


#: Refusals: name -> (argv, files, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- [profile] moe_exchanges malformed, through infer -----------------------------------
    **{f"infer --profile moe_exchanges = {v}": (INFER_V3, {"p.toml": _exchanges(v)},
                                                ("p.toml: [profile]", ALLOWED, f"got {got}"))
       for v, got in (('["all-to-all", "deepep"]', "['all-to-all', 'deepep']"),
                      ('[]', "[]"), ('"all-to-all"', "'all-to-all'"), ('[1]', "[1]"),
                      ('[["all-to-all"]]', "[['all-to-all']]"), ('{a = 1}', "{'a': 1}"),
                      ('true', "True"), ('["vllm-gather"]', "['vllm-gather']"),
                      ('["all-to-all", "all-to-all"]', "['all-to-all', 'all-to-all']"),
                      ('["all-to-all", " all-to-all"]', "['all-to-all', ' all-to-all']"),
                      ('["ALL_TO_ALL"]', "['ALL_TO_ALL']"), ('["all-to-all", ""]',
                                                            "['all-to-all', '']"),
                      ('["all-to-all", "sglang-dp-gather", "deepep", "all-reduce"]',
                       "['all-to-all', 'sglang-dp-gather', 'deepep', 'all-reduce']"))},
    # said only the list: the name that prints as an allowed one not asked about
    **{f"infer --profile moe_exchanges {what} (did you mean)": (
        INFER_V3, {"p.toml": _exchanges(v)}, (ALLOWED, "did you mean 'all-to-all'? (it has",
                                              letter))
       for what, v, letter in (
           ("Cyrillic a", '["\u0430ll-to-all"]', "U+0430 CYRILLIC SMALL LETTER A"),
           ("zero-width space", '["all-to-all\\u200b"]', "U+200B ZERO WIDTH SPACE"),
           ("non-breaking hyphen", '["all\u2011to-all"]', "U+2011 NON-BREAKING HYPHEN"),
           ("fullwidth a, blanks around", '[" \uff41ll-to-all "]',
            "FULLWIDTH LATIN SMALL LETTER A"))},
    "infer --profile JSON moe_exchanges null item": (
        [*INFER_V3[:-1], "p.json"], {"p.json": _json_profile(["all-to-all", None])},
        ("p.json", ALLOWED, "got ['all-to-all', None]")),
    "infer --profile JSON moe_exchanges null": (
        [*INFER_V3[:-1], "p.json"], {"p.json": _json_profile(None)}, ("p.json", "null")),
    "infer --profile moe_exchanges 1e309 item": (
        INFER_V3, {"p.toml": _exchanges('["all-to-all", 1e309]')},
        ("p.toml holds the number 1e309", "moe_exchanges", "beyond the range of a float")),
    "infer --profile moe_exchanges twice": (
        INFER_V3, {"p.toml": PROFILE.replace(f"moe_exchanges = {EXCHANGES}",
                                             f"moe_exchanges = {EXCHANGES}\n"
                                             f"moe_exchanges = {EXCHANGES}")},
        ("p.toml is malformed TOML", "line 10")),
    "infer --profile moe_exchanges in [fit]": (
        INFER_V3, {"p.toml": PROFILE.replace("[fit]\n", f"[fit]\nmoe_exchanges = {EXCHANGES}\n")},
        ("p.toml", "[fit]", "moe_exchanges")),
    "infer --profile moe_exchanges at the top": (
        INFER_V3, {"p.toml": f"moe_exchanges = {EXCHANGES}\n" + PROFILE},
        ("p.toml", "moe_exchanges")),
    "infer --profile moe_exchanges 40 lists deep": (
        INFER_V3, {"p.toml": _exchanges("[" * 40 + '"all-to-all"' + "]" * 40)},
        ("p.toml nests deeper than 32 levels",)),
    "infer --profile shipped name, moe_exchanges left out": (
        INFER_V3, {"p.toml": SHIPPED_PROFILE.replace(f"moe_exchanges = {EXCHANGES}\n", "")},
        ("p.toml", "already names the shipped profile 'vllm-dgx-h100'", "values differ")),
    # -- the same refusal by every command that reads a profile, nothing written ------------
    **{f"{argv[0]} --profile moe_exchanges deepep": (
        argv, {"p.toml": _exchanges('["all-to-all", "deepep"]')}, ("p.toml", ALLOWED))
       for argv in (SEARCH_V3, [*SERVE_V3, "--profile", "p.toml"],
                    [*COMPARE_V3, "--profile", "p.toml"], [*SWEEP_V3, "--profile", "p.toml"],
                    [*STUDY, "--profile", "p.toml"],
                    ["calibrate", "--measurements", SHIPPED_CSV, "-o", "q.toml", "--base",
                     "p.toml"])},
    # -- study --profile -------------------------------------------------------------------
    "study --profile an empty file": ([*STUDY, "--profile", "p.toml"], {"p.toml": ""},
                                      ("p.toml", "missing key(s) profile, parameters")),
    "study --profile a folder": ([*STUDY, "--profile", "p.toml"], {"p.toml": _folder("p.toml")},
                                 ("--profile 'p.toml'", "it is a folder, not a file")),
    "study --profile twice": ([*STUDY, "--profile", "vllm-dgx-h100", "--profile",
                               "vllm-h100-2024"], {}, ("--profile is given twice",)),
    "study --profile ''": ([*STUDY, "--profile", ""], {},
                           ("--profile ''", "known: 'vllm-dgx-h100', 'vllm-h100-2024'")),
    "study --profile a link loop": ([*STUDY, "--profile", "p.toml"], {"p.toml": _loop("p.toml")},
                                    ("p.toml", "Too many levels of symbolic links")),
    # -- calibrate: odd measurements --------------------------------------------------------
    "calibrate two byte-order marks": (CALIBRATE, {"m.csv": f"\ufeff\ufeff{HEADER}\n{ROW}\n"},
                                       ("'m.csv'", "2 byte-order marks")),
    "calibrate a NUL in a model": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW.replace(',', chr(0) + ',', 1)}\n"},
                                   ("'m.csv'", "NUL byte", "line 2")),
    "calibrate semicolons": (CALIBRATE, {"m.csv": f"{HEADER.replace(',', ';')}\n"
                                                  f"{ROW.replace(',', ';')}\n"},
                             ("m.csv", "missing column(s)", "latency_s")),
    "calibrate tabs": (CALIBRATE, {"m.csv": f"{HEADER.replace(',', chr(9))}\n"
                                            f"{ROW.replace(',', chr(9))}\n"},
                       ("m.csv", "missing column(s)")),
    "calibrate capital columns": (CALIBRATE, {"m.csv": f"{HEADER.upper()}\n{ROW}\n"},
                                  ("m.csv", "missing column(s) model")),
    "calibrate latency_s 1e309": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW[:-6]}1e309\n"},
                                  ("m.csv: row 2", "latency_s", "1e-09 to 1,000,000 s", "'1e309'")),
    "calibrate latency_s -0": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW[:-6]}-0\n"},
                               ("m.csv: row 2", "latency_s", "1e-09 to 1,000,000 s")),
    "calibrate latency_s 1 ns (a unit slip)": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW[:-6]}1e-9\n"},
                                               ("m.csv: row 2", "latency_s is in seconds")),
    "calibrate phase Decodes": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW.replace('decode', 'Decodes')}\n"},
                                ("m.csv: row 2", "phase 'Decodes'", "known: 'decode', 'prefill'")),
    "calibrate phase in a Cyrillic e": (CALIBRATE, {"m.csv": f"{HEADER}\n{CYRILLIC_E_ROW}\n"},
                                        ("m.csv: row 2", "did you mean 'decode'?")),
    "calibrate pp -0": (CALIBRATE, {"m.csv": f"{HEADER},pp\n{ROW},-0\n"},
                        ("m.csv: row 2", "pp must be a whole number from 1")),
    "calibrate expert_skew nan": (CALIBRATE, {"m.csv": f"{HEADER},expert_skew\n{ROW},nan\n"},
                                  ("m.csv: row 2", "expert_skew", "from 1 to 1,000,000")),
    "calibrate a row twice": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW}\n{ROW}\n"},
                              ("row 3", "repeats m.csv: row 2", "give each measurement once")),
    "calibrate a note of two lines": (CALIBRATE, {"m.csv": f'{HEADER},note\n{ROW},"a\nb"\n'},
                                      ("m.csv: row 2", "note", "control character")),
    "calibrate a cell past 128 KiB": (CALIBRATE, {"m.csv": f"{HEADER},source\n{ROW},"
                                                            + "x" * 200_000 + "\n"},
                                      ("m.csv: row 2", "131,072 characters")),
    "calibrate a file past 4 MiB": (CALIBRATE, {"m.csv": f"{HEADER}\n" + f"{ROW}\n" * 120_000},
                                    ("'m.csv'", "4,194,304-byte limit")),
    "calibrate a FIFO of measurements": (CALIBRATE, {"m.csv": _fifo("m.csv")},
                                         ("'m.csv'", "not a regular file")),
    "calibrate -o a FIFO": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW}\n", "p.toml": _fifo("p.toml")},
                            ("--out 'p.toml'", "not a regular file")),
    "calibrate -o a link to /dev/null": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW}\n",
                                                     "p.toml": _link("p.toml", "/dev/null")},
                                         ("--out 'p.toml'", "not a regular file")),
    "calibrate --base the -o file": (
        [*CALIBRATE, "--base", "p.toml"],
        {"m.csv": f"{HEADER}\n{ROW}\n", "p.toml": PROFILE.replace('name = "mine"', 'name = "p"')},
        # said 'profile file 'p.toml' is a file this command reads', after the fit
        ("--out 'p.toml' is the file --base 'p.toml' reads", "give another path")),
    "calibrate --base ./p.toml -o p.toml": (
        [*CALIBRATE, "--base", "./p.toml"],
        {"m.csv": f"{HEADER}\n{ROW}\n", "p.toml": PROFILE.replace('name = "mine"', 'name = "p"')},
        ("--out 'p.toml' is the file --base './p.toml' reads",)),
    "calibrate --measurements the -o file": (
        ["calibrate", "--measurements", "m.toml", "-o", "./m.toml"],
        {"m.toml": f"{HEADER}\n{ROW}\n"},
        ("--out './m.toml' is the file --measurements 'm.toml' reads",)),
    "calibrate --gpu-file the -o file": (
        [*CALIBRATE[:3], "--gpu-file", "p.toml", *CALIBRATE[3:]],
        {"m.csv": f"{HEADER}\n{ROW}\n", "p.toml": GPU},
        ("--out 'p.toml' is the file --gpu-file 'p.toml' reads",)),
    "calibrate --scenario the -o file @GPU": (
        [*CALIBRATE, "--scenario", "p.toml@H100-SXM"],
        {"m.csv": f"{HEADER}\n{ROW}\n", "p.toml": SCENARIO},
        ("--out 'p.toml' is the file --scenario 'p.toml@H100-SXM' reads",)),
    "calibrate --scenario and --fabric": ([*CALIBRATE, "--scenario", "h100-dgx", "--fabric",
                                           "ring:n=8"], {"m.csv": f"{HEADER}\n{ROW}\n"},
                                          ("give --scenario or --fabric, not both",)),
    "calibrate --fit ' , '": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "p.toml",
                               "--fit", " , "], {}, ("--fit ' , '", "is empty")),
    "calibrate --name in a non-breaking hyphen": (
        ["calibrate", "--measurements", SHIPPED_CSV, "-o", "p.toml", "--name",
         "vllm\u2011dgx\u2011h100"], {}, ("--name", "prints as the shipped profile 'vllm-dgx-h100'")),
    "calibrate -o VLLM-DGX-H100.toml (a shipped name by its stem)": (
        ["calibrate", "--measurements", SHIPPED_CSV, "-o", "VLLM-DGX-H100.toml"], {},
        ("--out's file stem", "already names the shipped profile 'vllm-dgx-h100'")),
    "calibrate --base in a non-breaking hyphen": (
        ["calibrate", "--measurements", SHIPPED_CSV, "-o", "p.toml", "--base",
         "vllm\u2011dgx\u2011h100"], {}, ("--base", "did you mean 'vllm-dgx-h100'?")),
    "calibrate --system a NUL": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "p.toml",
                                  "--system", "\x00"], {}, ("--system", "control character")),
    "calibrate --engine 3,000 characters": (["calibrate", "--measurements", SHIPPED_CSV, "-o",
                                             "p.toml", "--engine", "x" * 3000], {},
                                            ("--engine", "at most 2,000 characters")),
    # -- serve workload files ---------------------------------------------------------------
    "serve workload JSON rate twice": ([*SERVE, "--workload", "w.json"],
                                       {"w.json": '{"prompt": 100, "output": 10, "rate": 5, '
                                                  '"rate": 6}'},
                                       ("w.json is malformed JSON", "'rate' is given twice")),
    "serve workload TOML rate 1e309": ([*SERVE, "--workload", "w.toml"],
                                       {"w.toml": WORKLOAD + "rate = 1e309\n"},
                                       ("w.toml holds the number 1e309", "rate")),
    "serve workload JSON rate 1e309": ([*SERVE, "--workload", "w.json"],
                                       {"w.json": '{"prompt": 100, "output": 10, "rate": 1e309}'},
                                       ("w.json holds the number 1e309", "rate")),
    "serve workload JSON rate -0": ([*SERVE, "--workload", "w.json"],
                                    {"w.json": '{"prompt": 100, "output": 10, "rate": -0}'},
                                    ("w.json", "rate must be a number from 1e-09 to "
                                     "1,000,000,000 requests/s")),
    "serve workload load 1e-7": ([*SERVE, "--workload", "w.json"],
                                 {"w.json": '{"prompt": 100, "output": 10, "load": 1e-7}'},
                                 ("w.json", "load must be a number from 1e-06 to 1")),
    "serve workload prompt 100.5": ([*SERVE, "--workload", "w.json"],
                                    {"w.json": '{"prompt": 100.5, "output": 10}'},
                                    ("w.json", "prompt must be a whole number from 1 to "
                                     "100,000,000", "100.5")),
    "serve workload output 0": ([*SERVE, "--workload", "w.json"],
                                {"w.json": '{"prompt": 100, "output": 0}'},
                                ("w.json", "output must be a whole number")),
    "serve workload past the context": ([*SERVE, "--workload", "w.toml"],
                                        {"w.toml": "prompt = 1\noutput = 100000000\n"},
                                        ("--workload 'w.toml'", "max_context of 8192 tokens")),
    "serve workload JSON 100,000 deep": ([*SERVE, "--workload", "w.json"],
                                         {"w.json": "[" * 100_000 + "]" * 100_000},
                                         ("w.json nests deeper than 32 levels",)),
    "serve workload TOML 100,000 deep": ([*SERVE, "--workload", "w.toml"],
                                         {"w.toml": "a = " + "[" * 100_000 + "]" * 100_000},
                                         ("w.toml nests deeper than 32 levels",)),
    "serve workload a link to itself": ([*SERVE, "--workload", "w.toml"],
                                        {"w.toml": _link("w.toml", "w.toml")},
                                        ("--workload 'w.toml'", "symbolic links")),
    "serve workload a folder": ([*SERVE, "--workload", "w.toml"], {"w.toml": _folder("w.toml")},
                                ("'w.toml'", "folder")),
    "serve workload an unknown key": ([*SERVE, "--workload", "w.toml"],
                                      {"w.toml": WORKLOAD + "prompts = 5\n"},
                                      ("w.toml", "prompts")),
    # -- serve options that cannot go together ---------------------------------------------
    "serve --profile --two-batch-overlap": ([*SERVE_V3, "--profile", "vllm-dgx-h100",
                                             "--two-batch-overlap"], {},
                                            ("--two-batch-overlap", "profile 'vllm-dgx-h100'")),
    "serve --profile --mtp-tokens 1": ([*SERVE_V3, "--profile", "vllm-dgx-h100", "--mtp-tokens",
                                        "1"], {}, ("--mtp-tokens 1", "vllm-dgx-h100")),
    "serve --mtp-acceptance alone": ([*SERVE_V3, "--mtp-acceptance", "0.5"], {},
                                     ("--mtp-acceptance needs --mtp-tokens K >= 1",)),
    "serve --mtp-tokens 0 --mtp-acceptance": ([*SERVE_V3, "--mtp-tokens", "0", "--mtp-acceptance",
                                               "0.5"], {}, ("--mtp-acceptance needs",)),
    "serve --two-batch-overlap --mtp-tokens 1": ([*SERVE_V3, "--two-batch-overlap",
                                                  "--mtp-tokens", "1"], {},
                                                 ("--mtp-tokens", "--two-batch-overlap")),
    "search --profile --two-batch-overlap": ([*SEARCH_V3[:-1], "vllm-dgx-h100",
                                              "--two-batch-overlap"], {},
                                             ("--two-batch-overlap", "'vllm-dgx-h100'")),
    "serve --scenario '@H200-SXM'": ([*SERVE[:1], "--scenario", "@H200-SXM", *SERVE[3:]], {},
                                     ("--scenario '@H200-SXM'", "known: 'h100-dgx'")),
    # said 'scenario 'h100-dgx@' names no GPU after '@'', naming no flag (likewise a
    # fabric spec's 'spec parameter '' must be KEY=VALUE (in 'ring:n=8,')', a builder's
    # 'fabric 'ring@': '@GPU' re-types a scenario ...')
    "serve --scenario 'h100-dgx@'": ([*SERVE[:1], "--scenario", "h100-dgx@", *SERVE[3:]], {},
                                     ("--scenario 'h100-dgx@': scenario 'h100-dgx' names no "
                                      "GPU after '@'",)),
    "cost --scenario 'h100-dgx@ '": (["cost", "--scenario", "h100-dgx@ ", *COST[3:]], {},
                                     ("--scenario 'h100-dgx@ ': scenario 'h100-dgx'",)),
    "compare --scenarios 'lite-flat@,h100-dgx'": (
        [*COMPARE_V3[:-4], "--scenarios", "lite-flat@,h100-dgx", "--out", "o"], {},
        ("--scenarios 'lite-flat@,h100-dgx': scenario 'lite-flat' names no GPU",)),
    **{f"{argv[0]} --fabric {ref!r}": ([*argv, ref], {}, (f"--fabric {ref!r}: ", *words))
       for argv in (["collective", "all-reduce", "--size", "1MiB", "--fabric"],
                    [*AVAIL_DGX[:1], *AVAIL_DGX[3:], "--fabric"])
       for ref, words in (("ring:n=8,", ("ring: spec parameter '' must be KEY=VALUE",)),
                          ("ring:,n=8", ("ring: spec parameter '' must be KEY=VALUE",)),
                          ("ring:n=8,n=4", ("ring: spec parameter 'n' is given twice",)),
                          ("ring:n=8@", ("'@GPU' re-types a scenario", "(ring:n=8,gpu=GPU)")),
                          ("ring:n=8@0.5x", ("marks a GPU at another clock",)),
                          ("lite-flat@", ("scenario 'lite-flat' names no GPU after '@'",)))},
    "search --fabric 'ring:n=8,,'": (["search", "--model", "Llama-3-8B", "--max-batch", "8",
                                      "--fabric", "ring:n=8,,"], {},
                                     ("--fabric 'ring:n=8,,': ring: spec parameter ''",)),
    "serve --scenario two '@'": ([*SERVE[:1], "--scenario", "h100-dgx@H200-SXM@Lite", *SERVE[3:]],
                                 {}, ("unknown GPU 'H200-SXM@Lite'",)),
    "serve --decode-gpu in a Cyrillic EN": ([*SERVE, "--decode-gpu", "\u041d200-SXM"], {},
                                            ("did you mean 'H200-SXM'?",)),
    # -- availability, blast-radius, cost over a hostile scenario file ---------------------
    **{f"{argv[0]} scenario {what}": (argv, {"s.toml": text}, words)
       for argv in (AVAIL, BLAST, COST)
       for what, text, words in (
           ("domains 1e309", SCENARIO.replace("domains = 4", "domains = 1e309"),
            ("s.toml holds the number 1e309", "[fabric] domains")),
           ("domains -0", SCENARIO.replace("domains = 4", "domains = -0"),
            ("s.toml", "domains must be an integer >= 1")),
           ("domains twice", SCENARIO.replace("domains = 4", "domains = 4\ndomains = 4"),
            ("s.toml is malformed TOML", "line 13")),
           ("domains 1e15", SCENARIO.replace("domains = 4", "domains = 1000000000000000"),
            ("s.toml", "10^16 nodes")),
           ("50 lists deep", SCENARIO + "\n[x]\na = " + "[" * 50 + "]" * 50 + "\n",
            ("s.toml nests deeper than 32 levels",)),
           ("a folder", _folder("s.toml"), ("'s.toml'", "it is a folder, not a file")),
           ("a link loop", _loop("s.toml"), ("'s.toml'", "symbolic links")))},
    # -- their failure options at their ends -----------------------------------------------
    "availability --load-bandwidth without storage": (
        [*AVAIL_DGX, "--load-bandwidth", "10GB/s"], {},
        ("applies only with --load-from 'storage'",)),
    "availability --load-bandwidth 0": ([*AVAIL_DGX, "--load-from", "storage",
                                         "--load-bandwidth", "0"], {},
                                        ("--load-bandwidth", "from 1 MB/s to 1 PB/s", "'0'")),
    "availability --load-bandwidth 1e309GB/s": ([*AVAIL_DGX, "--load-from", "storage",
                                                 "--load-bandwidth", "1e309GB/s"], {},
                                                ("--load-bandwidth", "'1e309GB/s'")),
    "availability --rate gpu=1e309": ([*AVAIL_DGX, "--rate", "gpu=1e309"], {},
                                      ("--rate gpu", "'1e309'")),
    "availability --rate GPU=1e-3": ([*AVAIL_DGX, "--rate", "GPU=1e-3"], {},
                                     ("--rate", "'GPU'", "known: 'copper-end'")),
    "availability --rate gpu=1e-3=2": ([*AVAIL_DGX, "--rate", "gpu=1e-3=2"], {},
                                       ("--rate gpu '1e-3=2'", "failures per part per hour")),
    "availability --rate =1e-3": ([*AVAIL_DGX, "--rate", "=1e-3"], {},
                                  ("--rate '=1e-3'", "CLASS=VALUE")),
    "availability --rate gpu and gpu-die": ([*AVAIL_DGX, "--rate", "gpu=1e-3", "--rate",
                                             "gpu-die=1e-4"], {},
                                            ("--rate gpu-die", "--rate gpu=R")),
    **{f"availability --spares {v}": ([*AVAIL_DGX, "--spares", v], {},
                                      (f"--spares '{v}'", "allowed: 0 to 32 (100%)"))
       for v in ("101%", "1e3", "0.5", "33")},
    "availability --spare-placement with --spares 0": (
        [*AVAIL_DGX, "--spare-placement", "group", "--spares", "0"], {},
        ("--spare-placement 'group'", "--spares '0' holds none")),
    "availability --seed 2**64": ([*AVAIL_DGX, "--seed", str(2 ** 64)], {},
                                  ("--seed", "from 0 to 2**63 - 1")),
    "availability --cluster-gpus 48": ([*AVAIL_DGX, "--cluster-gpus", "48"], {},
                                       ("--cluster-gpus 48", "use 32 or 64")),
    "availability --area-share 1.5": ([*AVAIL_DGX, "--area-share", "1.5"], {},
                                      ("--area-share", "[0.269, 1]", "1.5")),
    "availability --phase prefill --tbt": ([*AVAIL_DGX, "--phase", "prefill", "--tbt", "10ms"],
                                           {}, ("--tbt '10ms'", "--ttft")),
    "availability --threshold 0": ([*AVAIL_DGX, "--threshold", "0"], {},
                                   ("--threshold '0'", "(0, 100%]")),
    "blast-radius --rate nothing=1": ([*BLAST[:1], "--scenario", "h100-dgx", *BLAST[3:], "--rate",
                                       "nothing=1"], {}, ("'nothing'", "known:")),
    "blast-radius --phase prefill --tbt": ([*BLAST[:1], "--scenario", "h100-dgx", *BLAST[3:],
                                            "--phase", "prefill", "--tbt", "10ms"], {},
                                           ("--tbt '10ms'", "--ttft")),
    "cost --clock 0.01": (["cost", "--scenario", "h100-dgx", *COST[3:], "--clock", "0.01"], {},
                          ("--clock '0.01'", "[0.05, 1.5]")),
    # -- yield over a hostile GPU file and at its ends --------------------------------------
    "yield GPU file fraction 1e309": (["yield", "--gpu", "g.toml"],
                                      {"g.toml": GPU.replace("0.25", "1e309")},
                                      ("g.toml holds the number 1e309", "fraction")),
    "yield GPU file fraction -0.0": (["yield", "--gpu", "g.toml"],
                                     {"g.toml": GPU.replace("0.25", "-0.0")},
                                     ("g.toml", "fraction must be a number from 1e-06 to 1")),
    "yield GPU file fraction nan": (["yield", "--gpu", "g.toml"],
                                    {"g.toml": GPU.replace("0.25", "nan")},
                                    ("g.toml", "fraction", "nan")),
    "yield GPU file a table twice": (["yield", "--gpu", "g.toml"], {"g.toml": GPU + GPU},
                                     ("g.toml is malformed TOML", "twice")),
    "yield GPU file a folder": (["yield", "--gpu", "g.toml"], {"g.toml": _folder("g.toml")},
                               ("'g.toml'", "folder")),
    "yield GPU file a link loop": (["yield", "--gpu", "g.toml"], {"g.toml": _loop("g.toml")},
                                   ("'g.toml'", "symbolic links")),
    "yield --sms 144/0": ([*YIELD, "--sms", "144/0"], {}, ("--sms '144/0'", "1 <= enabled")),
    "yield --sms -0/0": ([*YIELD, "--sms", "-0/0"], {}, ("--sms '-0/0'", "1 <= enabled")),
    "yield --alpha 1e300": ([*YIELD, "--alpha", "1e300"], {}, ("--alpha '1e300'", "<= 100")),
    "yield --alpha 1e-300": ([*YIELD, "--alpha", "1e-300"], {}, ("--alpha '1e-300'", ">= 0.01")),
    "yield --wafer-diameter 1mm": ([*YIELD, "--wafer-diameter", "1mm"], {},
                                   ("--wafer-diameter '1mm'", "larger than the usable wafer")),
    "yield --defect-density 1e6": ([*YIELD, "--defect-density", "1e6"], {},
                                   ("--defect-density", "above 100 per cm^2")),
    "yield --area 1e-300": (["yield", "--area", "1e-300"], {},
                            ("--area '1e-300'", "below 0.001 mm^2")),
    "yield --model poisson --alpha": ([*YIELD, "--model", "poisson", "--alpha", "3"], {},
                                      ("--alpha applies only with --model negative-binomial",)),
    "yield --critical-fraction without --sms": ([*YIELD, "--critical-fraction", "0.5"], {},
                                                ("--critical-fraction applies only with --sms",)),
    "yield --area and --gpu": ([*YIELD, "--gpu", "H100-SXM"], {}, ("--area", "--gpu")),
    "yield --gpu in a Cyrillic i": (["yield", "--gpu", "L\u0456te"], {},
                                    ("did you mean 'Lite'?",)),
    # said 'process 'Ν4' has no wafer price; known: ..., 'N4', ...' (a Greek Nu)
    "yield GPU file die process in a Greek Nu": (
        ["yield", "--gpu", "g.toml"], {"g.toml": _die_process("\u039d4")},
        ("g.toml", "no wafer price; did you mean 'N4'? (it has", "GREEK CAPITAL LETTER NU")),
    # said 'derives from unknown GPU 'Н100-SXM'; known: ...' (a Cyrillic EN)
    "yield GPU file derive_from in a Cyrillic EN": (
        ["yield", "--gpu", "g.toml"], {"g.toml": GPU.replace('"H100-SXM"', '"\u041d100-SXM"')},
        ("g.toml", "derives from unknown GPU", "did you mean 'H100-SXM'? (it has")),
    "yield GPU file die process N9": (["yield", "--gpu", "g.toml"], {"g.toml": _die_process("N9")},
                                      ("g.toml", "process 'N9' has no wafer price", "'N7'")),
    # -- availability and blast-radius over a hostile saved fabric -------------------------
    **{f"{cmd} --fabric {what}": ([cmd, "--fabric", "f.json", *argv[3:]], _fabric(change), words)
       for cmd, argv in (("availability", AVAIL), ("blast-radius", BLAST))
       for what, change, words in (
           ("bandwidth 1e309", lambda t: t.replace('"bandwidth": 225000000000.0',
                                                   '"bandwidth": 1e309', 1),
            ("f.json holds the number 1e309", "bandwidth")),
           ("a key twice", lambda t: t.replace('"directed": false,',
                                               '"directed": false, "directed": true,'),
            ("f.json", "'directed' is given twice")),
           ("an edge twice", _edge_twice, ("f.json", "is listed twice", "'links'")),
           ("lanes 1e15", lambda t: t.replace('"lanes": 18', '"lanes": 1e15', 1),
            ("f.json", "lanes must be at most 1e+06")),
           ("a node's GPU unknown", _node_gpu("H100"),
            ("f.json", "GPU type 'H100'", "known:")),
           # said only 'neither one of the graph's gpu_types nor in the catalog; known: ...'
           ("a node's GPU in a Cyrillic EN", _node_gpu("\u041d100-SXM"),
            ("f.json", "did you mean 'H100-SXM'? (it has", "CYRILLIC CAPITAL LETTER EN")))},
    "topology show a GraphML node's GPU in a Cyrillic EN": (
        ["topology", "show", "f.graphml"],
        {"f.graphml": lambda d: (d / "f.graphml").write_text(
            _graphml(d).replace(">H100-SXM<", ">\u041d100-SXM<"))},
        ("f.graphml", "did you mean 'H100-SXM'?")),
    # -- the last choices that did not ask about look-alike letters ------------------------
    **{f"{what} (did you mean)": (argv, {}, (f"did you mean {meant!r}? (it has",))
       for what, meant, argv in (
           ("availability --rate trаnsceiver", "transceiver",
            [*AVAIL_DGX, "--rate", "tr\u0430nsceiver=1e-5"]),
           ("availability --repair-time gpu-diе", "gpu-die",
            [*AVAIL_DGX, "--repair-time", "gpu-di\u0435=7d"]),
           ("blast-radius --rate lеaf", "leaf",
            ["blast-radius", "--scenario", "h100-dgx", *BLAST[3:], "--rate", "l\u0435af=1e-5"]),
           ("topology show ring:n=4,gрu=Lite", "gpu",
            ["topology", "show", "ring:n=4,g\u0440u=Lite"]),
           ("sweep --param cost.puе", "cost.pue",
            ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
             "--max-batch", "8", "--param", "cost.pu\u0435=1.3,1.4"]),
           ("sweep --param аdjust.hop_latency", "adjust.hop_latency",
            ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
             "--max-batch", "8", "--param", "\u0430djust.hop_latency=1us"]),
           ("sweep --param fabric.dоmains", "fabric.domains",
            ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
             "--max-batch", "8", "--param", "fabric.d\u043emains=4"]),
           ("collective --tuner nссl", "nccl",
            ["collective", "all-reduce", "--fabric", "ring:n=8", "--tuner", "n\u0441\u0441l"]))},
}

#: Taken as they are: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    # a choice read with case aside (01b00252, compute.errors.chosen): refused before it
    "infer --profile moe_exchanges = [\"ALL-TO-ALL\"]": (
        INFER_V3, {"p.toml": _exchanges('["ALL-TO-ALL"]')}),
    "calibrate phase Decode": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW.replace('decode', 'Decode')}\n"}),
    # a file's choice, blanks at either end dropped (a1650f95): refused before this round
    "infer --profile moe_exchanges [' all-to-all ']": (
        INFER_V3, {"p.toml": _exchanges('[" all-to-all ", "vllm-gather "]')}),
    "infer --profile moe_exchanges reordered": (
        INFER_V3, {"p.toml": _exchanges('["vllm-gather", "all-reduce", "all-to-all"]')}),
    "infer --profile moe_exchanges every one": (
        INFER_V3, {"p.toml": _exchanges('["all-to-all", "sglang-dp-gather", "vllm-gather", '
                                        '"all-reduce"]')}),
    "infer --profile moe_exchanges left out": (
        INFER_V3, {"p.toml": PROFILE.replace(f"moe_exchanges = {EXCHANGES}\n", "")}),
    "infer --profile JSON moe_exchanges": ([*INFER_V3[:-1], "p.json"],
                                           {"p.json": _json_profile(["all-to-all"])}),
    "infer --profile BOM and CRLF": (INFER_V3, {"p.toml": "\ufeff" + PROFILE.replace("\n", "\r\n")}),
    "infer --profile a copy of the shipped one, its exchanges reordered": (
        INFER_V3, {"p.toml": SHIPPED_PROFILE.replace(
            EXCHANGES, '["vllm-gather", "all-reduce", "all-to-all"]')}),
    "infer --profile moe_exchanges of a dense model": (
        ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1",
         "--profile", "p.toml"], {"p.toml": _exchanges('["all-to-all"]')}),
    "compare --profile moe_exchanges all-to-all only": (
        [*COMPARE_V3, "--profile", "p.toml"], {"p.toml": _exchanges('["all-to-all"]')}),
    "calibrate --base moe_exchanges all-to-all only": (
        ["calibrate", "--measurements", SHIPPED_CSV, "-o", "q.toml", "--base", "p.toml",
         "--fit", "layer_overhead_s"], {"p.toml": _exchanges('["all-to-all"]')}),
    "study --profile ' vllm-dgx-h100 '": ([*STUDY, "--profile", " vllm-dgx-h100 "], {}),
    "study --profile --networks ideal": ([*STUDY, "--profile", "vllm-dgx-h100", "--networks",
                                          "ideal"], {}),
    # -- calibrate ---------------------------------------------------------------------------
    "calibrate BOM and CRLF": (CALIBRATE, {"m.csv": "\ufeff" + f"{HEADER}\n{ROW}\n".replace(
        "\n", "\r\n")}),
    "calibrate blanks around a column": (CALIBRATE, {
        "m.csv": f"{HEADER.replace('latency_s', ' latency_s ')}\n{ROW}\n"}),
    "calibrate blanks around a phase and a batch": (CALIBRATE, {
        "m.csv": f"{HEADER}\n{ROW.replace('decode', ' decode ').replace(',8,', ', 8 ,')}\n"}),
    "calibrate batch 1e3": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW.replace(',8,', ',1e3,')}\n"}),
    "calibrate rows below the roofline": (CALIBRATE, {"m.csv": f"{HEADER}\n{BELOW}"}),
    "calibrate -o over a file of its own": (CALIBRATE, {"m.csv": f"{HEADER}\n{ROW}\n",
                                                        "p.toml": "mine\n"}),
    # -- serve ---------------------------------------------------------------------------------
    "serve workload BOM and CRLF": ([*SERVE, "--workload", "w.toml"],
                                    {"w.toml": "\ufeff" + (WORKLOAD + "rate = 5\n").replace(
                                        "\n", "\r\n")}),
    "serve workload JSON BOM": ([*SERVE, "--workload", "w.json"],
                                {"w.json": '\ufeff{"prompt": 100, "output": 10, "rate": 5}'}),
    "serve workload rate and load, --load too": ([*SERVE, "--workload", "w.toml", "--load", "0.5"],
                                                 {"w.toml": WORKLOAD + "load = 0.5\nrate = 3\n"}),
    "serve --profile --dense-mlp-tp 1": ([*SERVE_V3, "--profile", "vllm-dgx-h100",
                                          "--dense-mlp-tp", "1"], {}),
    "serve --prefill-gpu ' H200-SXM '": ([*SERVE, "--prefill-gpu", " H200-SXM "], {}),
    "serve --scenario 'h100-dgx @ H200-SXM'": ([*SERVE[:1], "--scenario", "h100-dgx @ H200-SXM",
                                                *SERVE[3:]], {}),
    # -- availability, blast-radius, cost -------------------------------------------------
    **{f"{argv[0]} scenario BOM and CRLF": (argv, {"s.toml": "\ufeff" + SCENARIO.replace(
        "\n", "\r\n")}) for argv in (AVAIL, BLAST, COST)},
    "availability --warmup 0": ([*AVAIL_DGX, "--warmup", "0"], {}),
    "availability --detection -0": ([*AVAIL_DGX, "--detection", "-0"], {}),
    "availability --repair-time gpu-die=0": ([*AVAIL_DGX, "--repair-time", "gpu-die=0"], {}),
    "availability --rate gpu=-0": ([*AVAIL_DGX, "--rate", "gpu=-0"], {}),
    "availability --spares '50 %'": ([*AVAIL_DGX, "--spares", "50 %"], {}),
    "availability --seed -0": ([*AVAIL_DGX, "--seed", "-0"], {}),
    "availability --cluster-gpus 64 --gpus 64": ([*AVAIL_DGX, "--cluster-gpus", "64", "--gpus",
                                                  "64"], {}),
    "availability --repair vendor --repair-time": ([*AVAIL_DGX, "--repair", "vendor",
                                                    "--repair-time", "gpu-die=1d"], {}),
    # -- yield ----------------------------------------------------------------------------------
    "yield GPU file BOM and CRLF": (["yield", "--gpu", "g.toml"],
                                    {"g.toml": "\ufeff" + GPU.replace("\n", "\r\n")}),
    "yield --gpu ' Lite '": (["yield", "--gpu", " Lite "], {}),
    "yield GPU file die process n4 (case)": (["yield", "--gpu", "g.toml"],
                                             {"g.toml": _die_process("n4")}),
    **{f"{cmd} --fabric {what}": ([cmd, "--fabric", "f.json", *argv[3:]], _fabric(change))
       for cmd, argv in (("availability", AVAIL), ("blast-radius", BLAST))
       for what, change in (("BOM and CRLF", lambda t: "\ufeff" + t.replace("\n", "\r\n")),
                            ("latency -0.0", lambda t: t.replace('"latency": 1e-08',
                                                                 '"latency": -0.0', 1)),
                            # a GPU looked up as --gpu reads it (find_name): refused before
                            ("a node's GPU blank-ended", _node_gpu("H100-SXM ")),
                            ("a node's GPU h100-sxm", _node_gpu("h100-sxm")))},
    "topology show a GraphML node's GPU ' h100-sxm '": (
        ["topology", "show", "f.graphml"],
        {"f.graphml": lambda d: (d / "f.graphml").write_text(
            _graphml(d).replace(">H100-SXM<", "> h100-sxm <"))}),
    **{f"{argv[0]} scenario gpu {gpu!r}": (argv, {"s.toml": SCENARIO.replace(
        'gpu = "H100-SXM"', f'gpu = "{gpu}"')}) for argv in (AVAIL, BLAST)
       for gpu in ("H100-SXM ", " h100-sxm")},
    "yield GPU file derive_from ' h100-sxm '": (["yield", "--gpu", "g.toml"], {
        "g.toml": GPU.replace('"H100-SXM"', '" h100-sxm "')}),
    "sweep --param ' adjust.hop_latency '": (["sweep", "--scenarios", "h100-dgx", "-q",
                                             "--no-plot", "--models", "Llama-3-8B",
                                             "--max-batch", "8", "--param",
                                             " adjust.hop_latency =1us"], {}),
    "topology show ring:n=4, gpu =Lite": (["topology", "show", "ring:n=4, gpu =Lite"], {}),
}

#: Runs whose exit status is given (3: no configuration meets the SLO, or the pools a rate
#: needs do not fit): name -> (argv, files, status); ``--json`` ones print strict JSON.
STATUS: dict[str, tuple[list[str], dict[str, Made], int]] = {
    "serve --rate 1e-9 --load 1e-6": ([*SERVE, "--rate", "1e-9", "--load", "1e-6", "--json"],
                                      {}, 0),
    "serve --rate 1000 --load 1e-6": ([*SERVE, "--rate", "1000", "--load", "1e-6", "--json"],
                                      {}, 3),
    "serve --rate 200 --load 0.9999": ([*SERVE, "--rate", "200", "--load", "0.9999", "--json"],
                                       {}, 3),
    "serve --rate 5 --load 0.5 --profile": ([*SERVE, "--rate", "5", "--load", "0.5", "--profile",
                                             "vllm-dgx-h100", "--json"], {}, 0),
    "serve --rate 5 --load 0.5 --two-batch-overlap": ([*SERVE, "--rate", "5", "--load", "0.5",
                                                       "--two-batch-overlap", "--json"], {}, 0),
    "serve --max-batch 1 --load 0.999999 --rate 0.001": (
        [*SERVE[:6], "1", "--tp-only", "--load", "0.999999", "--rate", "0.001", "--json"], {}, 3),
    "serve --max-batch 2 --load 0.99 --rate 1e-9": (
        [*SERVE[:6], "2", "--tp-only", "--load", "0.99", "--rate", "1e-9", "--json"], {}, 0),
    "serve --max-batch 1 --load 0.5 --rate 1e-3 conversation": (
        [*SERVE[:6], "1", "--tp-only", "--load", "0.5", "--rate", "1e-3", "--workload",
         "conversation", "--json"], {}, 0),
    "serve DeepSeek-V3 --rate 5 --load 0.5": ([*SERVE_V3, "--rate", "5", "--load", "0.5",
                                               "--json"], {}, 0),
    "serve DeepSeek-V3 MTP acceptance 0": ([*SERVE_V3, "--rate", "5", "--load", "0.5",
                                            "--mtp-tokens", "1", "--mtp-acceptance", "0",
                                            "--json"], {}, 0),
    "serve DeepSeek-V3 MTP acceptance 1": ([*SERVE_V3, "--rate", "5", "--load", "0.5",
                                            "--mtp-tokens", "1", "--mtp-acceptance", "1",
                                            "--json"], {}, 0),
    "serve DeepSeek-V3 --load 0.5 --profile moe_exchanges all-to-all": (
        [*SERVE_V3, "--load", "0.5", "--profile", "p.toml", "--json"],
        {"p.toml": _exchanges('["all-to-all"]')}, 0),
    "calibrate rows below the roofline --json": ([*CALIBRATE, "--json"],
                                                 {"m.csv": f"{HEADER}\n{BELOW}"}, 0),
    "calibrate --fit hbm_fraction below the roofline --json": (
        [*CALIBRATE[:-1], "hbm_fraction", "--json"], {"m.csv": f"{HEADER}\n{BELOW}"}, 0),
    "study --profile --networks ideal --json": ([*STUDY, "--profile", "vllm-dgx-h100",
                                                 "--networks", "ideal", "--json"], {}, 0),
    **{f"yield {' '.join(extra)}": ([*(YIELD if "--gpu" not in extra else YIELD[:1]), *extra,
                                     *(["--json"] if "--gpu" in extra else [])], {}, 0)
       for extra in (["--wafer-price", "0"], ["--defect-density", "0", "--sms", "144/132"],
                     ["--defect-density", "100"], ["--defect-density", "100", "--sms", "144/1"],
                     ["--sms", "144/132", "--critical-fraction", "1"],
                     ["--sms", "144/144"], ["--gpu", "Lite", "--defect-density", "0"],
                     ["--gpu", "B200-HGX", "--defect-density", "100"],
                     ["--gpu", "GB200-NVL72"])},
    "yield --area 0.001": (["yield", "--area", "0.001", "--json"], {}, 0),
    "cost --tbt 1us --ttft 1us": (["cost", "--scenario", "h100-dgx", *COST[3:], "--tbt", "1us",
                                   "--ttft", "1us", "--json"], {}, 3),
    "cost --clock 0.05 prefill": (["cost", "--scenario", "h100-dgx", *COST[3:], "--clock",
                                   "0.05", "--phase", "prefill", "--json"], {}, 0),
    "cost lite-ocs --share as-built": (["cost", "--scenario", "lite-ocs", *COST[3:], "--share",
                                        "as-built", "--json"], {}, 0),
    "blast-radius --rate gpu=0": ([*BLAST[:1], "--scenario", "h100-dgx", *BLAST[3:], "--rate",
                                   "gpu=0", "--json"], {}, 0),
    "availability --rate gpu=0": ([*AVAIL_DGX, "--rate", "gpu=0", "--json"], {}, 0),
    "availability --spares 100%": ([*AVAIL_DGX, "--spares", "100%", "--json"], {}, 0),
    "availability --threshold 1": ([*AVAIL_DGX, "--threshold", "1", "--json"], {}, 0),
    "availability --json --out": ([*AVAIL_DGX, "--json", "--out", "o"], {}, 0),
    "infer prefill prompt 1": (["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1",
                                "--batch", "1", "--phase", "prefill", "--prompt", "1", "--json"],
                               {}, 0),
    "infer decode context 1 --profile": (["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM",
                                          "--tp", "1", "--batch", "1", "--context", "1",
                                          "--profile", "vllm-dgx-h100", "--json"], {}, 0),
    "infer DeepSeek-V3 --expert-skew 8": (["infer", "--model", "DeepSeek-V3", "--gpu", "H100-SXM",
                                           "--tp", "8", "--ep", "8", "--batch", "1",
                                           "--expert-skew", "8", "--json"], {}, 0),
    "search prefill --prompt 1 --max-batch 1": (["search", "--model", "Llama-3-8B", "--gpu",
                                                 "H100-SXM", "--max-batch", "1", "--phase",
                                                 "prefill", "--prompt", "1", "--json"], {}, 0),
    "search --tbt 1us": (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch",
                          "1", "--tbt", "1us", "--json"], {}, 3),
    "collective all-reduce 1 B": (["collective", "all-reduce", "--fabric", "ring:n=8", "--group",
                                   "2", "--size", "1", "--json"], {}, 0),
    "collective all-to-all 1 PiB on an OCS ring": (["collective", "all-to-all", "--fabric",
                                                    "ocs:gpus=4,ports=2,logical=ring", "--group",
                                                    "4", "--size", "1PiB", "--json"], {}, 0),
    "topology show single-switch:n=1": (["topology", "show", "single-switch:n=1", "--json"], {}, 0),
    "topology show ring:n=2": (["topology", "show", "ring:n=2", "--json"], {}, 0),
}


def _no_constant(text: str) -> None:
    raise ValueError(f"JSON holds {text}")


def status_case(name: str, argv: list[str], files: dict[str, Made], status: int) -> Case:
    def run(d: Path) -> str | None:
        make(d, files)
        r = invoke_in(argv, d)
        if r.exit_code != status or "Traceback" in r.output:
            return f"exit {r.exit_code} | {r.output.strip()[-300:]}"
        if "--json" in argv:
            text = getattr(r, "stdout", r.output)
            start = text.find("{")
            try:
                json.loads(text[start:text.rfind("}") + 1], parse_constant=_no_constant)
            except ValueError as exc:
                return f"not strict JSON: {exc}"
        return None
    return f"status {name}", run


# -- calibrate over GPUs whose names together pass what a profile's text holds -----------

def long_gpu_names(count: int, scenario: bool) -> Case:
    """``calibrate`` over ``count`` GPUs of a GPU file named in 193 characters each writes
    a profile that ``infer --profile`` reads (10: the profile written, then refused by
    every command, 'fitted_on must be text of at most 2,000 characters'; 15: refused,
    'gpu must be text of at most 2,000 characters')."""
    def run(d: Path) -> str | None:
        gpus, rows = _gpu_names(count)
        make(d, {"g.toml": gpus, "m.csv": rows})
        argv = [*CALIBRATE, "--gpu-file", "g.toml", *(["--scenario", "h100-dgx"] if scenario
                                                       else [])]
        r = invoke_in(argv, d)
        if r.exit_code != 0:
            return f"calibrate exit {r.exit_code} | {r.output.strip()[-300:]}"
        r = invoke_in(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1",
                       "--batch", "1", "--profile", "p.toml"], d)
        return None if r.exit_code == 0 else f"infer exit {r.exit_code} | {r.output[-300:]}"
    return (f"calibrate {count} GPUs of 193-character names"
            f"{' --scenario h100-dgx' if scenario else ''}: the profile reads back"), run


# -- the library: an EngineProfile made in code is checked as a file is -----------------

def _profile(**kw: object) -> Callable[[], object]:
    def call() -> object:
        from compute.profiles import EngineProfile

        return EngineProfile(**{"name": "x", **kw})
    return call


#: Library calls refused: name -> (call, the message's start).
LIBRARY: dict[str, tuple[Callable[[], object], str]] = {
    # ran faster than the roofline (0.448 s against 0.669 s)
    "EngineProfile(gemm_curve efficiency 2)": (
        _profile(gemm_curve=((1, 2.0), (1000, 2.0))),
        "profile 'x': gemm_curve efficiency must be a number from 0.0001 to 1, got 2"),
    "EngineProfile(gemm_curve efficiency -0.5)": (
        _profile(gemm_curve=((10, -0.5), (100, 0.5))),
        "profile 'x': gemm_curve efficiency must be a number from 0.0001 to 1, got -0.5"),
    "EngineProfile(gemm_curve intensity nan)": (
        _profile(gemm_curve=((float("nan"), 0.5), (10, 0.5))),
        "profile 'x': gemm_curve intensity must be a number from 1e-06 to 1,000,000,000 "
        "FLOP/B, got nan"),
    "EngineProfile(gemm_curve one point)": (
        _profile(gemm_curve=((10, 0.5),)),
        "profile 'x': gemm_curve must be 2 to 64 (intensity FLOP/B, efficiency) pairs"),
    "EngineProfile(gemm_curve 65 points)": (
        _profile(gemm_curve=tuple((10.0 + i, 0.5) for i in range(65))),
        "profile 'x': gemm_curve must be 2 to 64"),
    "EngineProfile(gemm_curve text)": (_profile(gemm_curve="x"),
                                       "profile 'x': gemm_curve must be 2 to 64"),
    "EngineProfile(gemm_curve decreasing)": (
        _profile(gemm_curve=((100, 0.5), (10, 0.6))),
        "profile 'x': gemm_efficiency intensities must increase, got [100.0, 10.0]"),
    **{f"EngineProfile(moe_exchanges={v!r})": (_profile(moe_exchanges=v),
                                               f"profile 'x': {ALLOWED}; got {v!r}")
       for v in (0, "", False, [])},
    "EngineProfile(moe_exchanges={'all-to-all'})": (
        _profile(moe_exchanges={"all-to-all"}), f"profile 'x': {ALLOWED}; got"),
    "EngineProfile(moe_exchanges=['аll-to-all'])": (
        _profile(moe_exchanges=["\u0430ll-to-all"]),
        f"profile 'x': {ALLOWED}; got ['\u0430ll-to-all']; did you mean 'all-to-all'?"),
    "EngineProfile(engine=5)": (_profile(engine=5),
                                "profile 'x': engine must be text of at most 2,000 characters, "
                                "got 5"),
    "EngineProfile(collectives='a\\nb')": (_profile(collectives="a\nb"),
                                           "profile 'x': collectives 'a\\nb' holds a control "
                                           "character"),
    "EngineProfile(fitted_on 5,000 characters)": (_profile(fitted_on="x" * 5000),
                                                  "profile 'x': fitted_on must be text of at "
                                                  "most 2,000 characters"),
    "EngineProfile(name=None)": (_profile(name=None), "profile None: profile name None must be"),
    "EngineProfile(name=' x')": (_profile(name=" x"), "profile ' x': profile name ' x' must be"),
    # the last library choices that did not ask about look-alike letters
    "parameter('dеfect_density')": (
        lambda: __import__("compute.rows", fromlist=["parameter"]).parameter(
            "d\u0435fect_density"),
        "unknown economics parameter 'd\u0435fect_density'; did you mean 'defect_density'?"),
    "GpuSpec.peak_flops('fр8')": (
        lambda: __import__("compute.hardware", fromlist=["get_gpu"]).get_gpu(
            "H100-SXM").peak_flops("f\u04408"),
        "unknown compute dtype 'f\u04408'; did you mean 'fp8'? (it has"),
    "Calibration.protocol('Simplе')": (
        lambda: _calibration().protocol("Simpl\u0435"),
        "unknown protocol 'Simpl\u0435'; did you mean 'Simple'? (it has"),
    "Calibration.protocol('LL12８')": (
        lambda: _calibration().protocol("LL12\uff18"),
        "unknown protocol 'LL12\uff18'; did you mean 'LL128'? (it has"),
    "Calibration(default_generation='hоpper')": (
        lambda: _calibration().with_(default_generation="h\u043epper"),
        "default generation 'h\u043epper' is not one of the generations; did you mean "
        "'hopper'?"),
}


def _calibration() -> object:
    from netmodel.collectives.calibration_files import default_calibration

    return default_calibration()


def library_case(name: str, call: Callable[[], object], start: str) -> Case:
    def run(d: Path) -> str | None:
        from compute.errors import UserError

        try:
            call()
        except UserError as exc:
            return None if str(exc).startswith(start) else f"said {str(exc)[:200]!r}"
        except Exception as exc:  # noqa: BLE001 - the verdict
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        return "taken"
    return f"library {name}", run


#: Library calls taken: name -> (call, the field, its value read).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], str, object]] = {
    "EngineProfile(moe_exchanges=None)": (_profile(moe_exchanges=None), "moe_exchanges", ()),
    "EngineProfile(moe_exchanges=[' all-to-all ', 'vllm-gather'])": (
        _profile(moe_exchanges=[" all-to-all ", "vllm-gather"]), "moe_exchanges",
        ("all-to-all", "vllm-gather")),
    "EngineProfile(gemm_curve=[[1, 0.5], [2, 0.6]])": (
        _profile(gemm_curve=[[1, 0.5], [2, 0.6]]), "gemm_curve", ((1.0, 0.5), (2.0, 0.6))),
    "EngineProfile(gemm_curve=None)": (_profile(gemm_curve=None), "gemm_curve", ()),
    "Calibration(default_generation=' hopper ')": (
        lambda: _calibration().with_(default_generation=" hopper "), "default_generation",
        "hopper"),
}


def library_taken_case(name: str, call: Callable[[], object], field: str,
                       value: object) -> Case:
    def run(d: Path) -> str | None:
        try:
            got = getattr(call(), field)
        except Exception as exc:  # noqa: BLE001 - the verdict
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        try:
            hash(call())
        except TypeError as exc:
            return f"unhashable: {exc}"
        return None if got == value else f"{field} {got!r}, not {value!r}"
    return f"library {name}", run


def faster_than_roofline(d: Path) -> str | None:
    """No profile made in code runs a step faster than the roofline: a curve of efficiency
    2 is refused before it is used."""
    import netmodel
    from compute.errors import UserError
    from compute.profiles import EngineProfile
    from compute.roofline_options import RooflineOptions

    kw = dict(tp=4, batch=16, prompt=1024)
    roof = netmodel.evaluate("Llama-3-70B", "H100-SXM", "prefill", **kw).latency
    try:
        p = EngineProfile("x", gemm_curve=((1, 2.0), (1000, 2.0)))
    except UserError:
        return None
    got = netmodel.evaluate("Llama-3-70B", "H100-SXM", "prefill", **kw,
                            options=RooflineOptions(profile=p)).latency
    return f"the profile runs in {got:.3f} s, the roofline {roof:.3f} s"


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (status_case(n, a, f, s) for n, (a, f, s) in STATUS.items())
    yield from (long_gpu_names(n, s) for n in (10, 15) for s in (False, True))
    yield from (library_case(n, c, s) for n, (c, s) in LIBRARY.items())
    yield from (library_taken_case(n, *c) for n, c in LIBRARY_TAKEN.items())
    yield "library a profile never runs faster than the roofline", faster_than_roofline


def main() -> int:
    return run_round(cases(), "hostile28-")


if __name__ == "__main__":
    sys.exit(main())
