"""Hostile-input round 26, on what rounds 15-25 (scripts/hostile_round15.py .. 25.py) left
untried: names that print as a catalog's or a shipped one's but are not (a Cyrillic or
Greek letter for a Latin one, a fullwidth letter, a hyphen of another kind) in GPU, model,
profile and workload files, in calibrate's ``--name`` and ``--out`` stem, and typed where a
name is looked up; engine profiles in TOML's less common forms (an array of tables where a
table goes, dotted keys, a table declared twice, dates and times for numbers or names, a
name of a million characters); measurement CSVs with a column too many or unnamed, a comma
at the end of each row, quoted numbers and header, CRLF and mixed line ends, ``;`` or tabs
between cells, units in a cell, a ``note`` column holding what a ``source`` may not, a cell
past the csv module's limit, subnormal and huge latencies; scenario files naming themselves
or another scenario as their fabric or GPU, or lacking a key; sweep grids that explode
(refused by estimate, naming the count and the limit), and with the limits raised past the
machine's memory (a child process under a 3 GB address space); options that contradict
(``--dense-mlp-tp`` of a dense model or without attention DP, ``--front`` with ``--json``,
``--spare-placement`` with no spares, an SLO of the other phase); outputs under /proc and
onto /dev/full, ``-`` for an input or output; and as a user runs it (child processes):
non-ASCII paths under ``LC_ALL=C`` without Python's UTF-8 mode, and a reader that leaves
after the first bytes (``| head -c 10``).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target). Out of memory where limits were raised: exit 2, one line naming the
settings.

Usage: ``python scripts/hostile_round26.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner) but
the environment, memory and pipe cases (child processes). About a minute on two cores.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_tally import (  # noqa: E402
    Case,
    Made,
    make,
    refusal_case,
    run_round,
    taken_case,
)

ROOT = Path(__file__).resolve().parents[1]
PROFILE = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text().replace(
    'name = "vllm-dgx-h100"', 'name = "mine"')
SHIPPED_CSV = str(ROOT / "compute/data/vllm_h100_2024_measurements.csv")
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]
INFER70 = ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "4"]
DSV3 = ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--batch", "8"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "8",
         "--tp-only"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot",
           "--scenarios", "h100-dgx"]
SWEEP = ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
         "--max-batch", "8"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
         "--max-batch", "8", "--trials", "5"]
FIT = ["--fit", "layer_overhead_s,gemm_efficiency"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml", *FIT]
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
ROWS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
        "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298",
        "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386"]
MEASURED = HEADER + "\n".join(ROWS) + "\n"
GPU = '[gpu.Mine]\nderive_from = "H100-SXM"\nfraction = 0.5\nsource = "what-if"\n'
MODEL = ('[model.M]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nffn = 14336\n'
         'vocab = 128256\nsource = "what-if"\n')
WORKLOAD = "prompt = 100\noutput = 10\n"
CYR_EN, CYR_O, CYR_A, CYR_ES, CYR_HA, CYR_SHHA = "\u041d", "\u041e", "\u0430", "\u0441", \
    "\u0445", "\u04bb"


def _rows(edit) -> str:
    """The measurements CSV with each line (header too) passed through ``edit``."""
    return "".join(edit(ln) + "\n" for ln in MEASURED.splitlines())


def _scenario(text: str) -> str:
    """lite-ocs as ``compare --show`` prints it (its file), renamed 'mine', edited."""
    shipped = (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text()
    return shipped.replace('name = "lite-ocs"', 'name = "mine"', 1) if not text else text


def _without_fabric(table: str) -> str:
    """lite-ocs's file, renamed 'mine', its [fabric] table replaced by ``table``."""
    text = _scenario("")
    start = text.index("[fabric]")
    end = text.index("\n[", start + 1)
    return text[:start] + table + text[end:]


#: Refusals: name -> (argv, files, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- names that print as a catalog's --------------------------------------------------
    # a half H100 reported as '1 x Н100-SXM' (a Cyrillic EN): read as the catalog's
    "GPU file of a Cyrillic EN for H": (
        [*INFER[:4], "g.toml", *INFER[5:]], {"g.toml": GPU.replace("Mine", f'"{CYR_EN}100-SXM"')},
        ("g.toml", "prints as the catalog GPU 'H100-SXM'", "U+041D CYRILLIC CAPITAL LETTER EN")),
    "GPU file of a U+2010 hyphen": (
        [*INFER[:4], "g.toml", *INFER[5:]], {"g.toml": GPU.replace("Mine", '"H100\u2010SXM"')},
        ("prints as the catalog GPU 'H100-SXM'", "U+2010 HYPHEN")),
    "GPU file of a fullwidth H": (
        [*INFER[:4], "g.toml", *INFER[5:]], {"g.toml": GPU.replace("Mine", '"\uff28100-SXM"')},
        ("prints as the catalog GPU 'H100-SXM'", "FULLWIDTH LATIN CAPITAL LETTER H")),
    "model file of a Cyrillic a": (
        ["infer", "--model", "m.toml", *INFER[3:]],
        {"m.toml": MODEL.replace("model.M", f'model."Ll{CYR_A}ma-3-8B"')},
        ("m.toml", "prints as the catalog model 'Llama-3-8B'", "CYRILLIC SMALL LETTER A")),
    "HF config.json of a _name_or_path in a Cyrillic a": (
        ["infer", "--model", "c.json", *INFER[3:]],
        {"c.json": '{"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, '
                   '"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": '
                   '8192, "vocab_size": 128256, "_name_or_path": "Ll\u0430ma-3-8B"}'},
        ("c.json", "prints as the catalog model 'Llama-3-8B'")),
    "profile of a Cyrillic O for a zero": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace('name = "mine"', f'name = "vllm-dgx-h1{CYR_O}0"')},
        ("p.toml", "prints as the shipped profile 'vllm-dgx-h100'", "U+041E")),
    "workload of a Cyrillic es": (
        [*SERVE, "--workload", "w.toml"], {"w.toml": f'name = "{CYR_ES}oding"\n' + WORKLOAD},
        ("w.toml", "prints as the shipped workload 'coding'", "CYRILLIC SMALL LETTER ES")),
    "scenario file of a Cyrillic o": (
        COMPARE[:-1] + ["s.toml"],
        {"s.toml": _scenario("").replace('name = "mine"', 'name = "lite-\u043ecs"')},
        ("s.toml", "prints as the shipped scenario 'lite-ocs'", "CYRILLIC SMALL LETTER O")),
    "calibrate -o a stem of Cyrillic Os": (
        ["calibrate", "--measurements", SHIPPED_CSV, "-o", f"vllm-h1{CYR_O}{CYR_O}-2024.toml"],
        {}, ("--out's file stem", "prints as the shipped profile 'vllm-h100-2024'", "--name")),
    "calibrate --name of a Cyrillic shha": (
        ["calibrate", "--measurements", SHIPPED_CSV, "-o", "x.toml", "--name",
         f"vllm-dgx-{CYR_SHHA}100"], {},
        ("--name", "prints as the shipped profile 'vllm-dgx-h100'", "U+04BB")),
    **{f"{flag} {typed!r} typed (did you mean)": (argv, {}, (f"did you mean {like!r}",
                                                             "(it has", "known: "))
       for flag, typed, like, argv in (
           ("--gpu", f"{CYR_EN}100-SXM", "H100-SXM", [*INFER[:4], f"{CYR_EN}100-SXM",
                                                      *INFER[5:]]),
           ("--model", f"Ll{CYR_A}ma-3-8B", "Llama-3-8B", ["infer", "--model",
                                                           f"Ll{CYR_A}ma-3-8B", *INFER[3:]]),
           ("--profile", f"vllm-dgx-h1{CYR_O}0", "vllm-dgx-h100",
            [*INFER70, "--profile", f"vllm-dgx-h1{CYR_O}0"]),
           ("--scenario", f"h100-dg{CYR_HA}", "h100-dgx",
            [*INFER, "--scenario", f"h100-dg{CYR_HA}"]),
           ("--workload", f"{CYR_ES}oding", "coding", [*SERVE, "--workload",
                                                       f"{CYR_ES}oding"]))},
    # -- engine profiles in TOML's rarer forms --------------------------------------------
    "profile [[profile]]": ([*INFER70, "--profile", "p.toml"],
                            {"p.toml": PROFILE.replace("[profile]", "[[profile]]")},
                            ("[profile] must be a table of keys", "a list of 1 item")),
    "profile [[parameters.gemm_efficiency]]": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("[parameters.gemm_efficiency]",
                                   "[[parameters.gemm_efficiency]]")},
        ("[parameters.gemm_efficiency] must be a table of keys",)),
    "profile value.x dotted": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("value = 1.0\n", "value.x = 1.0\n", 1)},
        ("[parameters.hbm_fraction]", "from 0.0001 to 1", "{'x': 1.0}")),
    "profile a table declared twice by a dotted key": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("[profile]", "parameters.step_overhead_s.value = 0.0\n"
                                   "[profile]")}, ("p.toml is malformed TOML", "twice")),
    "profile name a datetime": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace('name = "mine"', "name = 2024-01-01T00:00:00Z")},
        ("profile name the date and time", "non-empty text")),
    "profile value a date": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("value = 1.0\n", "value = 1979-05-27\n", 1)},
        ("from 0.0001 to 1", "the date 1979-05-27")),
    "profile value a time": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("value = 1.0\n", "value = 07:32:00\n", 1)},
        ("the time 07:32:00",)),
    "profile name of a million characters": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace('name = "mine"', 'name = "' + "x" * 1_000_000 + '"')},
        ("profile name", "at most 200 characters")),
    "profile step_overhead_s 1e-320": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("value = 0.0\n", "value = 1e-320\n", 1)},
        ("1e-320", "step_overhead_s must be a number from 0 to 10 s")),
    "profile step_overhead_s 1e308": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("value = 0.0\n", "value = 1e308\n", 1)},
        ("from 0 to 10 s", "1e+308")),
    "profile fit points '6'": ([*INFER70, "--profile", "p.toml"],
                               {"p.toml": PROFILE.replace("points = 6", 'points = "6"')},
                               ("[fit]: points must be a whole number from 1 to 10,000",)),
    "profile an empty [[measurement]]": (
        [*INFER70, "--profile", "p.toml"], {"p.toml": PROFILE + "\n[[measurement]]\n"},
        ("measurement 7: missing key(s)",)),
    # -- measurement CSVs -----------------------------------------------------------------
    "CSV a column too many": (CALIBRATE, {"m.csv": _rows(lambda ln: ln + ",1")},
                              ("unknown column(s) 1",)),
    "CSV a comma at the end of each row": (
        CALIBRATE, {"m.csv": HEADER + "\n".join(r + "," for r in ROWS) + "\n"},
        ("row 2 has more cells than the header has columns (9, not 8)",)),
    "CSV a comma at the end of every line": (
        CALIBRATE, {"m.csv": _rows(lambda ln: ln + ",")},
        ("the header's column 9 (of 9) has no name",)),
    "CSV ; between cells": (CALIBRATE, {"m.csv": MEASURED.replace(",", ";")},
                            ("missing column(s) model, gpu",)),
    "CSV tabs between cells": (CALIBRATE, {"m.csv": MEASURED.replace(",", "\t")},
                               ("missing column(s) model, gpu",)),
    "CSV latency 1e-320": (CALIBRATE, {"m.csv": MEASURED.replace("0.1368", "1e-320")},
                           ("latency_s must be a number from 1e-09 to 1,000,000 s",
                            "'1e-320'")),
    "CSV latency 1e308": (CALIBRATE, {"m.csv": MEASURED.replace("0.1368", "1e308")},
                          ("latency_s must be a number from 1e-09 to 1,000,000 s",)),
    # said 'latency_s must be a number' and 'tp must be a number (a whole number >= 1)':
    # no range, where every other refusal of the cell states it
    "CSV latency with a unit": (CALIBRATE, {"m.csv": MEASURED.replace("0.1368", "136.8ms")},
                                ("row 2: latency_s must be a number from 1e-09 to 1,000,000 s, "
                                 "got '136.8ms'",)),
    "CSV tp a word": (CALIBRATE, {"m.csv": MEASURED.replace(",8,1,prefill", ",eight,1,prefill")},
                      ("row 2: tp must be a whole number from 1 to 1,000,000, got 'eight'",)),
    "CSV prompt '2k'": (CALIBRATE, {"m.csv": MEASURED.replace("2048", "2k")},
                        ("prompt must be a whole number from 1 to 10,000,000, got '2k'",)),
    # a note was checked as the source it stands in for: 'source 'a\nb' holds ...'
    "CSV a note of two lines": (
        CALIBRATE, {"m.csv": HEADER.replace("\n", ",note\n") + "\n".join(
            r + ',"a\nb"' for r in ROWS) + "\n"}, ("row 2: note 'a\\nb' holds a control",)),
    "CSV a note of 3,000 characters": (
        CALIBRATE, {"m.csv": HEADER.replace("\n", ",note\n") + "\n".join(
            r + "," + "n" * 3000 for r in ROWS) + "\n"},
        ("row 2: note must be text of at most 2,000 characters",)),
    # the csv module's own words: 'field larger than field limit (131072)'
    "CSV a cell of a million characters": (
        CALIBRATE, {"m.csv": HEADER.replace("\n", ",source\n") + "\n".join(
            r + "," + "x" * 1_000_000 for r in ROWS) + "\n"},
        ("row 2 is not readable CSV: a cell holds more than 131,072 characters",)),
    "CSV a header alone": (CALIBRATE, {"m.csv": HEADER}, ("holds a header but no measurements",)),
    "CSV a BOM alone": (CALIBRATE, {"m.csv": "\ufeff"}, ("holds no measurements",)),
    # -- scenario files naming themselves, or lacking a key -------------------------------
    "scenario fabric = itself": (
        COMPARE[:-1] + ["s.toml"], {"s.toml": _without_fabric('fabric = "s.toml"\n')},
        ("s.toml", "fabric must be a [fabric] table or a saved fabric file", "'s.toml'")),
    "scenario fabric = another scenario": (
        COMPARE[:-1] + ["s.toml"], {"s.toml": _without_fabric('fabric = "t.toml"\n'),
                                    "t.toml": _scenario("")}, ("'t.toml'",)),
    "scenario gpu = itself": (
        COMPARE[:-1] + ["s.toml"],
        {"s.toml": _scenario("").replace('gpu = "Lite"', 'gpu = "s.toml"', 1)},
        ("s.toml", "top-level table 'gpu'")),
    "scenario [[fabric]]": (COMPARE[:-1] + ["s.toml"],
                            {"s.toml": _scenario("").replace("[fabric]", "[[fabric]]")},
                            ("a list of 1 item",)),
    "scenario without sources": (COMPARE[:-1] + ["s.toml"],
                                 {"s.toml": _scenario("").split("[sources]")[0]},
                                 ("missing key(s) sources",)),
    "scenario description a datetime": (
        COMPARE[:-1] + ["s.toml"],
        {"s.toml": "\n".join('description = 1979-05-27T07:32:00' if ln.startswith(
            "description") else ln for ln in _scenario("").splitlines())},
        ("description must be text", "the date and time")),
    "scenario fabric gpus 10**30": (
        COMPARE[:-1] + ["s.toml"], {"s.toml": _scenario("").replace("gpus = 128",
                                                                    "gpus = " + "1" + "0" * 30)},
        ("[fabric] gpus", "an integer of 31 digits")),
    "scenario bandwidth $bandwidth": (
        COMPARE[:-1] + ["s.toml"],
        {"s.toml": _scenario("").replace('"$scaleup"', '"$bandwidth"')},
        ("'$bandwidth' is not one of the tokens",)),
    # -- sweep grids that explode ---------------------------------------------------------
    "sweep --points 1e9": ([*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--points",
                            "1000000000"], {}, ("about 1,000,000,000 values",
                                                "over the limit of 1,000")),
    "sweep two axes of 1,000": (
        [*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--param",
         "adjust.latency_scale=1:2", "--points", "1000"], {},
        ("about 1,000,000 searches", "over the limit of 20,000")),
    "sweep a list of 1,001 values": (
        [*SWEEP, "--param", "adjust.hop_latency=" + ",".join(f"{i}ns" for i in range(1, 1002))],
        {}, ("about 1,001 values", "over the limit of 1,000")),
    "sweep two lists of 1,000 values": (
        [*SWEEP, "--param", "adjust.hop_latency=" + ",".join(f"{i}ns" for i in range(1, 1001)),
         "--param", "adjust.latency_scale=" + ",".join(f"{1 + i / 1000:.4f}"
                                                       for i in range(1, 1001))], {},
        ("about 1,000,000 searches",)),
    "sweep every scenario, model and GPU on 1,000 x 1,000": (
        ["sweep", "--scenarios", "h100-dgx,lite-flat,lite-hier,lite-ocs,lite-direct,"
         "lite-flat-inr", "--models", "Llama-3-8B,Llama-3-70B,GPT-3-175B,Mixtral-8x7B",
         "--gpus", "H100-SXM,H200-SXM,Lite", "--phases", "both", "-q", "--no-plot", "--param",
         "adjust.hop_latency=0.1us:10us", "--param", "adjust.latency_scale=1:2", "--points",
         "1000"], {}, ("searches, over the limit of 20,000",)),
    "sweep one axis twice": ([*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--param",
                              "adjust.hop_latency=1us:2us"], {}, ("both sweep",)),
    "sweep three axes": ([*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--param",
                          "adjust.latency_scale=1:2", "--param", "cost.pue=1.1:1.5"], {},
                         ("one or two parameters", "got 3")),
    # -- options that contradict ----------------------------------------------------------
    # said 'Llama-3-8B has no dense MLP layers ...; a dense MLP TP degree applies ...':
    # no word of the flag typed
    **{f"{argv[0]} --dense-mlp-tp 1 of a dense model": (
        [*argv, "--dense-mlp-tp", "1"], {}, ("--dense-mlp-tp 1", "no dense MLP layers",
                                             "leave it unset"))
       for argv in (INFER, SERVE, COMPARE)},
    "infer --dense-mlp-tp 1 without attention DP": (
        [*DSV3, "--dense-mlp-tp", "1"], {}, ("TP 8 has none", "leave --dense-mlp-tp unset")),
    # said 'need 1 <= enabled <= physical' without which number of those typed is which
    "yield --sms the two swapped": (["yield", "--area", "814", "--sms", "132/144"], {},
                                    ("--sms '132/144'", "got 144 enabled of 132 physical")),
    "search --front with --json": (
        ["search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--max-batch", "8",
         "--front", "--json"], {}, ("--front", "--json")),
    "calibrate --scenario with --fabric": (
        [*CALIBRATE, "--scenario", "h100-dgx", "--fabric", "ring:n=8"], {"m.csv": MEASURED},
        ("--scenario or --fabric, not both",)),
    "yield --area with --gpu": (["yield", "--area", "814", "--gpu", "H100-SXM"], {},
                                ("--area", "--gpu", "one of them")),
    "availability --spare-placement with --spares 0": (
        [*AVAIL, "--spares", "0", "--spare-placement", "pod"], {},
        ("--spare-placement 'pod'", "--spares '0' holds none")),
    "compare --phases prefill with --tbt": ([*COMPARE, "--phases", "prefill", "--tbt", "1ms"],
                                            {}, ("--tbt '1ms'", "--ttft")),
    "sweep --phases decode with --ttft": (
        [*SWEEP, "--param", "adjust.hop_latency=1us", "--phases", "decode", "--ttft", "1ms"],
        {}, ("--ttft '1ms'", "--tbt")),
    "serve --mtp-acceptance without --mtp-tokens": (
        [*SERVE, "--mtp-acceptance", "0.5"], {}, ("--mtp-acceptance", "--mtp-tokens")),
    "serve --kv-ports on a scenario without OCS": (
        [*SERVE, "--kv-ports", "1"], {}, ("--kv-ports '1'", "not optical circuit-switched")),
    # -- outputs that cannot be, and '-' -------------------------------------------------
    "compare --out /proc/self/x": ([*COMPARE, "--out", "/proc/self/x"], {},
                                   ("output folder '/proc/self/x'", "not writable")),
    "compare --out /dev/full": ([*COMPARE, "--out", "/dev/full"], {},
                                ("'/dev/full'", "not a folder")),
    "compare --out /dev/full/x": ([*COMPARE, "--out", "/dev/full/x"], {},
                                  ("'/dev/full' is a file, not a folder",)),
    "topology export -o /dev/full": (["topology", "export", "ring:n=8", "-o", "/dev/full",
                                      "--format", "json"], {}, ("not a regular file",)),
    "topology plot -o -": (["topology", "plot", "ring:n=8", "-o", "-"], {},
                           ("--output '-'", ".png, .svg, .pdf")),
    "calibrate -o /dev/full": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "/dev/full"],
                               {}, ("--out '/dev/full'", "not a regular file")),
    "calibrate -o -": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "-"], {},
                       ("--out '-'", ".toml")),
    "calibrate --measurements -": (["calibrate", "--measurements", "-", "-o", "p.toml"], {},
                                   ("--measurements '-'", "does not exist")),
    "calibrate --measurements /dev/stdin": (
        ["calibrate", "--measurements", "/dev/stdin", "-o", "p.toml"], {},
        ("'/dev/stdin'", "not a regular file")),
    "serve --workload -": ([*SERVE, "--workload", "-"], {}, ("--workload '-'", "known:")),
    "infer --profile -": ([*INFER, "--profile", "-"], {}, ("--profile '-'", "known:")),
    "topology show -": (["topology", "show", "-"], {}, ("unknown fabric '-'",)),
}

#: Taken as they are: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "CSV quoted numbers": (CALIBRATE, {"m.csv": HEADER + "\n".join(
        r.replace(",8,", ',"8",') for r in ROWS) + "\n"}),
    "CSV a quoted header": (CALIBRATE, {"m.csv": _rows(lambda ln: ",".join(
        f'"{c}"' for c in ln.split(",")) if ln.startswith("model") else ln)}),
    "CSV CRLF": (CALIBRATE, {"m.csv": MEASURED.replace("\n", "\r\n")}),
    "CSV CRLF header, LF rows": (CALIBRATE, {"m.csv": HEADER.replace("\n", "\r\n")
                                             + "\n".join(ROWS) + "\n"}),
    "CSV blanks after the header's commas": (CALIBRATE, {"m.csv": HEADER.replace(",", ", ")
                                                         + "\n".join(ROWS) + "\n"}),
    "CSV tp 8.0": (CALIBRATE, {"m.csv": MEASURED.replace(",8,", ",8.0,")}),
    "profile a BOM and CRLF": ([*INFER70, "--profile", "p.toml"],
                               {"p.toml": "\ufeff" + PROFILE.replace("\n", "\r\n")}),
    "GPU file of dotted keys": ([*INFER[:4], "g.toml", *INFER[5:]],
                                {"g.toml": 'gpu.Mine.derive_from = "H100-SXM"\n'
                                           'gpu.Mine.fraction = 0.5\ngpu.Mine.source = "x"\n'}),
    # a name of other scripts that prints as no catalog name is a name of its own
    "GPU file named in Greek": ([*INFER[:4], "g.toml", *INFER[5:]],
                                {"g.toml": GPU.replace("Mine", '"\u0394\u03b5\u03bb\u03c4\u03b1"')}),
    "serve --rate with --load": ([*SERVE, "--rate", "5", "--load", "0.9"], {}),
}


# -- child processes: the locale, memory, a reader that leaves ---------------------------

def _child(argv: list[str], d: Path, env: dict[str, str] | None = None, shell: str = "",
           memory: int = 3 << 30) -> subprocess.CompletedProcess | str:
    """``netmodel argv`` as a user runs it (a child process under ``memory`` bytes of
    address space; ``shell``: a pipe after it, run by ``sh``), or why it did not end."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cmd = [sys.executable, "-m", "netmodel", *argv]
    full = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    try:
        if shell:
            line = " ".join("'" + a.replace("'", "'\\''") + "'" for a in cmd) + " " + shell
            return subprocess.run(["sh", "-c", line + "; echo rc=$? >&2"], cwd=d, text=True,
                                  capture_output=True, timeout=55, env=full, errors="replace")
        return subprocess.run(cmd, cwd=d, text=True, capture_output=True, timeout=55,
                              preexec_fn=limit, env=full, errors="replace")
    except subprocess.TimeoutExpired:
        return "over 55 s"


#: LC_ALL=C without Python's UTF-8 mode: argv and paths ASCII, a UTF-8 name's bytes read
#: as undecodable.
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}

#: Child cases: name -> (argv, environment, files, pipe after it, exit status, the one
#: stderr line's words (None: stderr empty but for a 'wrote' line)).
CHILDREN: dict[str, tuple[list[str], dict[str, str], dict[str, Made], str, int,
                          tuple[str, ...] | None]] = {
    "LC_ALL=C topology export -o ü.json": (["topology", "export", "ring:n=8", "-o", "ü.json"],
                                           C_LOCALE, {}, "", 0, None),
    "LC_ALL=C collective --fabric of a non-ASCII file not there": (
        ["collective", "all-reduce", "--fabric", "nö.json", "--group", "8", "--size", "1MiB"],
        C_LOCALE, {}, "", 2, ("does not exist",)),
    # said 'holds a byte that is not UTF-8; give UTF-8 text' of a name typed in UTF-8
    "LC_ALL=C calibrate -o pé.toml": (
        ["calibrate", "--measurements", "m.csv", "-o", "pé.toml", *FIT], C_LOCALE,
        {"m.csv": MEASURED}, "", 2, ("is UTF-8 text", "this locale's encoding",
                                     "LC_ALL=C.UTF-8")),
    "LC_ALL=C calibrate --engine of a byte not UTF-8": (
        ["calibrate", "--measurements", "m.csv", "-o", "p.toml", *FIT, "--engine",
         b"v\xff".decode("utf-8", "surrogateescape")], C_LOCALE, {"m.csv": MEASURED}, "", 2,
        ("--engine", "holds a byte that is not UTF-8")),
    # with both limits raised past the machine: MemoryError's traceback, exit 1
    "sweep of 10**8 points a parameter, its limits raised": (
        [*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--param",
         "adjust.latency_scale=1:2", "--points", "100000000", "--out", "o"],
        {"NETMODEL_MAX_SWEEP_POINTS": "100000000",
         "NETMODEL_MAX_SWEEP_SEARCHES": "10000000000000000"}, {}, "", 2,
        ("out of memory", "NETMODEL_MAX_SWEEP_POINTS=100000000", "lower")),
    **{f"{' '.join(argv[:2])} | head -c 10": (argv, {}, {}, "| head -c 10 >/dev/null", 0,
                                              None)
       for argv in (["compare", "--show", "lite-ocs"], ["topology", "list", "--json"],
                    ["costs", "--fabric", "ring:n=64"], [*INFER, "--csv"],
                    ["models", "--json"])},
}


def child_case(name: str, argv: list[str], env: dict[str, str], files: dict[str, Made],
               shell: str, status: int, words: tuple[str, ...] | None) -> Case:
    def run(d: Path) -> str | None:
        make(d, files)
        before = sorted(p.name for p in d.iterdir())
        p = _child(argv, d, env, shell)
        if isinstance(p, str):
            return p
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()
                 and not ln.startswith("wrote ")]
        code = p.returncode
        if shell:   # the shell's last line: the command's own status
            code = int(lines.pop()[3:]) if lines and lines[-1].startswith("rc=") else -1
        shown = " / ".join(lines)[:250]
        if code != status:
            return f"exit {code} | {shown}"
        if words is None:
            return None if not lines else f"stderr | {shown}"
        if len(lines) != 1 or not lines[0].startswith("error: ") or "Traceback" in p.stderr:
            return f"not one line | {shown}"
        missing = [w for w in words if w not in lines[0]]
        if missing:
            return f"names not {missing} | {shown}"
        after = sorted(p.name for p in d.iterdir())
        return None if after == before else f"wrote {sorted(set(after) - set(before))}"
    return f"child {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (child_case(n, *c) for n, c in CHILDREN.items())


def main() -> int:
    return run_round(cases(), "hostile26-")


if __name__ == "__main__":
    sys.exit(main())
