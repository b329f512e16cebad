"""Hostile-input round 27, on what rounds 15-26 (scripts/hostile_round15.py .. 26.py) left
untried: the newest options and their combinations. ``serve`` with ``--load`` and
``--rate`` at and past their edges (0, 1e-06 and just under, 1 and just past, the largest
float under 1, subnormal, 1e300, inf, nan, -0, hex, ``1_000``, fullwidth digits, blanks
around), both together at opposite ends (a tiny rate at a load near 1, a huge rate at a
load near 0: 29 trillion GPUs), SLOs that no cell meets (with ``--json``: valid JSON, no
NaN or Infinity, exit 3), every serve option at once (both pool GPUs, ``--kv-ports``, MTP,
DP-dense, a profile, two-batch overlap: the pairs that cannot go together refused, the
rest run); ``--kv-ports``, ``--mtp-tokens``, ``--mtp-acceptance`` and ``--dense-mlp-tp``
in every odd spelling; ``infer``/``search``/``calibrate`` with ``--scenario``/``--fabric``
given the 'bound' and 'ring' networks' names, a fabric file as a scenario and a scenario
as a fabric, a fabric too small for a measured row; ``--profile`` as a name and a file
together, a file shadowing a shipped name, a folder, a FIFO, a link to /dev/zero; the study's
``--networks`` (twice, in capitals, with blanks, empty items) and part flags against the
options only skipped parts read; the study's library given ``networks`` as a text, None,
a list of lists, and ``network`` without its collectives; ``compare --instances all
--parallelism all`` with each engine option; options given twice, in two spellings of one
value; a choice typed in letters that print as one of its values (a Cyrillic 'а' in 'аll',
a zero-width space, a fullwidth letter), on the command line and in a scenario file; ``NETMODEL_MAX_*`` in odd spellings and past their
30 digits; outputs into a read-only folder (a child process without CAP_DAC_OVERRIDE,
where run as root), under a parent that is a file, onto a FIFO, a link to /dev/zero, a
folder of someone else's files.

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target; ``status`` cases the one given, their ``--json`` strict JSON); a
library refusal is a UserError naming the parameter.

Usage: ``python scripts/hostile_round27.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner) but
the environment and read-only cases (child processes). About a minute on two cores.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
PROFILE = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text()
LITE_OCS = (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text().replace(
    'name = "lite-ocs"', 'name = "mine"', 1)
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8",
         "--tp-only"]
KV = ["serve", "--scenario", "lite-ocs", "--model", "Llama-3-8B", "--max-batch", "8",
      "--tp-only"]
DSV3 = ["serve", "--scenario", "h100-dgx", "--model", "DeepSeek-V3", "--max-batch", "8"]
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1"]
INFER70 = ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "4"]
SEARCH = ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"]
CALIBRATE = ["calibrate", "--measurements", SHIPPED_CSV, "-o", "p.toml"]
STUDY = ["study", "lite-gpu", "--out", "o", "--models", "Llama-3-8B", "--gpus", "Lite", "-q"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot",
           "--scenarios", "lite-ocs", "--instances", "all", "--parallelism", "all"]
COMPARE_V3 = ["compare", "--models", "DeepSeek-V3", "--max-batch", "8", "-q", "--no-plot",
              "--scenarios", "lite-ocs"]
SWEEP_V3 = ["sweep", "--scenarios", "lite-ocs", "-q", "--no-plot", "--models", "DeepSeek-V3",
            "--max-batch", "8", "--param", "adjust.hop_latency=1us"]
EVERY_SERVE = ["serve", "--scenario", "lite-ocs", "--model", "DeepSeek-V3", "--max-batch", "16",
               "--load", "0.9", "--rate", "5", "--workload", "conversation", "--prefill-gpu",
               "H100-SXM", "--decode-gpu", "H200-SXM", "--kv-ports", "2", "--ttft", "2s",
               "--tbt", "100ms", "--dense-mlp-tp", "1"]
LOAD_RANGE = "load must be a number from 1e-06 to 1, 1 excluded"
RATE_RANGE = "rate must be a number from 1e-09 to 1,000,000,000 requests/s"
DENSE_RANGE = ("dense MLP TP degree (--dense-mlp-tp) must be 1 (SGLang's --moe-dense-tp-size "
               "1) or unset (the stage's TP)")


def _fifo(name: str) -> Made:
    return lambda d: os.mkfifo(d / name)


def _link(name: str, to: str) -> Made:
    return lambda d: os.symlink(to, d / name)


def _folder(name: str, *files: str) -> Made:
    def made(d: Path) -> None:
        (d / name).mkdir()
        for f in files:
            (d / name / f).write_text("mine\n")
    return made


SMALL_SCENARIO = {"s.toml": LITE_OCS.replace("gpus = 128", "gpus = 2")}

#: Refusals: name -> (argv, files, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- serve --load and --rate at and past their edges ---------------------------------
    **{f"serve --load {v!r}": ([*SERVE, "--load", v], {}, (f"--load {v!r}", LOAD_RANGE))
       for v in ("0", "1", "1.0000001", "9.99e-7", "-0", "0x1", "1e", "inf", "nan", "-1",
                 "1e300")},
    "serve --load 5e-324": ([*SERVE, "--load", "5e-324"], {},
                            ("--load '5e-324' is below the smallest number", "from 1e-06 to 1")),
    "serve --load 1_000": ([*SERVE, "--load", "1_000"], {}, ("--load '1_000' groups its digits",)),
    "serve --load fullwidth": ([*SERVE, "--load", "\uff10.5"], {}, ("FULLWIDTH DIGIT ZERO",)),
    **{f"serve --rate {v!r}": ([*SERVE, "--rate", v], {}, (f"--rate {v!r}", RATE_RANGE))
       for v in ("0", "1e-300", "1e300", "1e12", "inf", "nan", "-1", "1e", "0x10", "-0")},
    "serve --rate 5e-324": ([*SERVE, "--rate", "5e-324"], {},
                            ("--rate '5e-324' is below the smallest number",
                             "from 1e-09 to 1,000,000,000 requests/s")),
    "serve --rate fullwidth": ([*SERVE, "--rate", "\uff11\uff10"], {}, ("FULLWIDTH DIGIT ONE",)),
    "serve --load twice": ([*SERVE, "--load", "0.5", "--load", "0.6"], {},
                           ("--load is given twice ('0.5' and '0.6')",)),
    "serve --scenario twice": ([*SERVE, "--scenario", "lite-ocs"], {},
                               ("--scenario is given twice",)),
    # said '('8' and '')': the value '--' taken for the end of the options
    "serve --max-batch twice, the second '--'": ([*SERVE, "--max-batch", "--"], {},
                                                 ("--max-batch is given twice ('8' and '--')",)),
    "serve --ttft 1ns": ([*SERVE, "--ttft", "1ns"], {}, ("--ttft 1ns", "1 us to 600 s")),
    "serve --tbt 1ns --load": ([*SERVE, "--tbt", "1ns", "--load", "0.5"], {},
                               ("--tbt 1ns", "1 us to 10 s")),
    "serve workload load = 1 under --load 0.5": (
        [*SERVE, "--workload", "w.toml", "--load", "0.5"],
        {"w.toml": "prompt = 100\noutput = 10\nload = 1\n"}, ("w.toml", LOAD_RANGE, "got 1")),
    "serve workload rate = 0 under --rate 5": (
        [*SERVE, "--workload", "w.toml", "--rate", "5"],
        {"w.toml": "prompt = 100\noutput = 10\nrate = 0\n"}, ("w.toml", RATE_RANGE)),
    # -- every serve option at once: the pairs that cannot go together --------------------
    "serve every option, a profile and two-batch overlap": (
        [*EVERY_SERVE, "--profile", "vllm-dgx-h100", "--two-batch-overlap", "--mtp-tokens", "1"],
        {}, ("two-batch overlap is modelled on the roofline", "vllm-dgx-h100")),
    "serve every option, MTP and two-batch overlap": (
        [*EVERY_SERVE, "--two-batch-overlap", "--mtp-tokens", "1", "--mtp-acceptance", "0.8"],
        {}, ("give one of --mtp-tokens and --two-batch-overlap",)),
    # said '(give attention DP > 1, ...)': serve has no such option; --tp-only is the cause
    "serve --tp-only --dense-mlp-tp 1": ([*DSV3, "--tp-only", "--dense-mlp-tp", "1"], {},
                                         ("--dense-mlp-tp 1", "--tp-only does not search",
                                          "drop --tp-only")),
    # said 'MTP decode models one pipeline stage; got PP 2; allowed: PP 1': no flag
    "infer --mtp-tokens 1 --pp 2": (["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM",
                                     "--tp", "8", "--batch", "8", "--mtp-tokens", "1", "--pp",
                                     "2"], {}, ("--pp '2': MTP decode models one pipeline",)),
    "serve --mtp-tokens of a model without MTP": ([*SERVE, "--mtp-tokens", "1"], {},
                                                  ("no multi-token-prediction module",
                                                   "--mtp-tokens 0")),
    # -- the newer options in odd spellings -----------------------------------------------
    # said '--kv-ports '1_000': --kv-ports '1_000' groups ...': the flag twice
    "serve --kv-ports 1_000": ([*KV, "--kv-ports", "1_000"], {},
                               ("error: --kv-ports '1_000' groups its digits",)),
    "serve --kv-ports fullwidth": ([*KV, "--kv-ports", "\uff11"], {},
                                   ("error: --kv-ports '\uff11' has the digit",)),
    **{f"serve --kv-ports {v!r}": ([*KV, "--kv-ports", v], {},
                                   (f"--kv-ports {v!r}", "whole number from 1 to 3"))
       for v in ("0", "4", "1.5", "0x10", "inf", "-0", "1e400", " 5 ", "\u00bd")},
    # said 'must be a whole number from 1 to 1,000,000,000' of '0x10', 'must be 1 ... or
    # unset' of '5': two ranges for one option
    **{f"serve --dense-mlp-tp {v!r}": ([*DSV3, "--dense-mlp-tp", v], {}, (DENSE_RANGE,))
       for v in ("0x10", "1e", "inf", "-0", "5", "2.0", "1e400", "nan", "1.5", "")},
    **{f"serve --mtp-tokens {v!r}": ([*DSV3, "--mtp-tokens", v], {},
                                     ("(--mtp-tokens) must be a whole number from 0 (off) to 16",))
       for v in ("0x10", "1e", "inf", "1e400", "17", "-1")},
    **{f"serve --mtp-acceptance {v!r}": ([*DSV3, "--mtp-tokens", "1", "--mtp-acceptance", v], {},
                                         ("(--mtp-acceptance) must be a probability from 0 to 1",))
       for v in ("0x10", "1e", "inf", "1e400", "+2", "2.0", " 5 ", "-1")},
    # -- infer/search/calibrate: the networks' names where a scenario or fabric goes ------
    **{f"{argv[0]} {flag} {name}": ([*argv, flag, name], {}, (f"unknown {what} {name!r}",
                                                             "known: "))
       for argv in (INFER, SEARCH, CALIBRATE)
       for flag, what in (("--scenario", "scenario"), ("--fabric", "fabric"))
       for name in ("bound", "ideal")},
    "infer --scenario ring": ([*INFER, "--scenario", "ring"], {}, ("unknown scenario 'ring'",)),
    "infer --scenario and --fabric": ([*INFER, "--scenario", "h100-dgx", "--fabric",
                                       "ring:n=8"], {}, ("--scenario or --fabric, not both",)),
    "infer --fabric ring:n=4 under TP 8": ([*INFER, "--fabric", "ring:n=4"], {},
                                          ("8 GPUs does not fit", "'ring:n=4'", "(4 GPUs)")),
    "infer --scenario h100-dgx@Lite with --gpu H100-SXM": (
        [*INFER, "--scenario", "h100-dgx@Lite"], {}, ("swaps in GPU 'Lite'", "give the GPU once")),
    "infer --fabric lite-ocs@H100-SXM": ([*INFER, "--fabric", "lite-ocs@H100-SXM"], {},
                                         ("no circuits set", "--scenario lite-ocs@H100-SXM")),
    "infer --scenario of a fabric file": ([*INFER, "--scenario", "f.json"],
                                          {"f.json": '{"nodes": []}'},
                                          ("unknown scenario 'f.json'", ".toml")),
    "search --scenario of a fabric file named .toml": (
        [*SEARCH, "--scenario", "f.toml"], {"f.toml": "[fabric]\nbuilder = 'ring'\n"},
        ("f.toml",)),
    # said '... an instance of 4 GPUs does not fit the fabric (2 GPUs)': which, by which flag
    "calibrate --fabric smaller than a row's instance": (
        [*CALIBRATE, "--fabric", "ring:n=2"], {},
        ("an instance of 4 GPUs does not fit --fabric 'ring:n=2' (2 GPUs)",
         "give a fabric of 4 GPUs or more")),
    "calibrate --scenario smaller than a row's instance": (
        [*CALIBRATE, "--scenario", "s.toml"], SMALL_SCENARIO,
        ("does not fit --scenario 's.toml' (2 GPUs)", "give a scenario of 4 GPUs")),
    # -- --profile as a name and a file -----------------------------------------------
    "infer --profile twice (a name and a file)": (
        [*INFER70, "--profile", "vllm-dgx-h100", "--profile", "p.toml"],
        {"p.toml": PROFILE.replace('name = "vllm-dgx-h100"', 'name = "mine"')},
        ("--profile is given twice ('vllm-dgx-h100' and 'p.toml')",)),
    # said 'give a profile or flops/memory efficiency factors, not both': no flag
    "infer --profile with --flops-efficiency": (
        [*INFER70, "--profile", "vllm-dgx-h100", "--flops-efficiency", "0.5"], {},
        ("profile 'vllm-dgx-h100'", "--flops-efficiency 0.5", "not both")),
    "infer --profile a file of a shipped name": (
        [*INFER70, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("value = 1.0\n", "value = 0.9\n", 1)},
        ("p.toml", "already names the shipped profile 'vllm-dgx-h100'")),
    "infer --profile NAME.toml not there beside a shipped NAME": (
        [*INFER70, "--profile", "vllm-dgx-h100.toml"], {}, ("does not exist",)),
    "infer --profile a folder": ([*INFER70, "--profile", "d.toml"], {"d.toml": _folder("d.toml")},
                                 ("--profile 'd.toml'", "a folder, not a file")),
    "infer --profile a link to /dev/zero": ([*INFER70, "--profile", "z.toml"],
                                            {"z.toml": _link("z.toml", "/dev/zero")},
                                            ("'z.toml'", "not a regular file")),
    "infer --profile a FIFO without .toml": ([*INFER70, "--profile", "fifo"],
                                             {"fifo": _fifo("fifo")},
                                             ("unknown profile 'fifo'", ".toml")),
    "calibrate --base a link to /dev/zero": ([*CALIBRATE, "--base", "z.toml"],
                                             {"z.toml": _link("z.toml", "/dev/zero")},
                                             ("--base 'z.toml'", "not a regular file")),
    "calibrate --base twice": ([*CALIBRATE, "--base", "vllm-dgx-h100", "--base",
                                "vllm-h100-2024"], {}, ("--base is given twice",)),
    # -- calibrate's outputs --------------------------------------------------------------
    "calibrate -o under a file": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "f/p.toml"],
                                  {"f": "x"}, ("--out 'f/p.toml'", "'f' is a file, not a folder")),
    "calibrate -o a folder": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "d.toml"],
                              {"d.toml": _folder("d.toml")}, ("is an existing folder",)),
    "calibrate -o a link to /dev/zero": (["calibrate", "--measurements", SHIPPED_CSV, "-o",
                                          "z.toml"], {"z.toml": _link("z.toml", "/dev/zero")},
                                         ("not a regular file",)),
    "calibrate -o a FIFO": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "fifo"],
                            {"fifo": _fifo("fifo")}, ("'fifo'", "not a regular file")),
    "calibrate -o twice": ([*CALIBRATE, "-o", "q.toml"], {}, ("-o is given twice",)),
    "calibrate --fit twice over": ([*CALIBRATE, "--fit", "layer_overhead_s,layer_overhead_s"],
                                   {}, ("names layer_overhead_s more than once",)),
    "calibrate --fit in capitals": ([*CALIBRATE, "--fit", "LAYER_OVERHEAD_S"], {},
                                    ("--fit 'LAYER_OVERHEAD_S'", "known: ")),
    # -- the study's networks and part flags ----------------------------------------------
    "study --networks bound,bound": ([*STUDY, "--networks", "bound,bound"], {},
                                     ("names bound more than once",)),
    "study --networks with an unknown": ([*STUDY, "--networks", "bound,ring,ideal,foo"], {},
                                         ("--networks", "unknown network 'foo'", "known: ")),
    "study --networks Ring": ([*STUDY, "--networks", "Ring"], {},
                              ("unknown network 'Ring'", "known: 'bound', 'ideal', 'ring'")),
    "study --networks empty": ([*STUDY, "--networks", ""], {}, ("--networks '' is empty",)),
    "study --networks an empty item": ([*STUDY, "--networks", "ring,,ideal"], {},
                                       ("has an empty item",)),
    "study --networks twice": ([*STUDY, "--networks", "ring", "--networks", "ideal"], {},
                               ("--networks is given twice",)),
    **{f"study --no-fabric {' '.join(extra)}": ([*STUDY, "--no-fabric", *extra], {},
                                                (extra[0], "--no-fabric"))
       for extra in (["--scenarios", "lite-ocs"], ["--moe-model", "DeepSeek-V3"],
                     ["--parallelism", "all"], ["--workers", "2"])},
    "study --moe-model of a dense model": ([*STUDY, "--moe-model", "Llama-3-8B"], {},
                                           ("--moe-model 'Llama-3-8B' is not a mixture",
                                            "'none'")),
    "study --phases prefill --tbt": ([*STUDY, "--phases", "prefill", "--tbt", "10ms"], {},
                                     ("--tbt '10ms'", "--phases prefill")),
    "study --no-serving --phases decode --ttft": (
        [*STUDY, "--phases", "decode", "--no-serving", "--ttft", "10ms"], {},
        ("--ttft '10ms'", "--no-serving")),
    "study --out under a file": ([*STUDY[:2], "--out", "f/o", *STUDY[4:]], {"f": "x"},
                                 ("'f/o'", "is a file, not a folder")),
    # -- compare --instances all --parallelism all ----------------------------------------
    "compare --instances Al": ([*COMPARE[:-4], "--instances", "Al"], {},
                               ("--instances 'Al'", "allowed: 'all', 'alone'")),
    "compare --instances twice": ([*COMPARE, "--instances", "alone"], {},
                                  ("--instances is given twice",)),
    # said 'dense MLP TP 1 runs beside attention DP, which parallelism 'tp' does not search;
    # give parallelism 'auto' or 'all'': the library's parameter, no flag
    **{f"{base[0]} {' '.join(extra)}": ([*base, *extra], {}, words)
       for base in (COMPARE_V3, SWEEP_V3)
       for extra, words in (
           (["--instances", "all", "--parallelism", "tp", "--dense-mlp-tp", "1"],
            ("which --parallelism 'tp' does not search", "give --parallelism 'auto' or 'all'",
             "leave --dense-mlp-tp unset")),
           (["--parallelism", "all", "--two-batch-overlap"],
            ("--parallelism 'all' searches pipeline stages",
             "give --parallelism 'auto' or 'tp' with --two-batch-overlap")),
           (["--instances", "all", "--parallelism", "all", "--mtp-tokens", "1", "--phases",
             "decode"], ("--parallelism 'all' searches pipeline stages", "with --mtp-tokens")))},
    "compare --list --instances all": (["compare", "--list", "--instances", "all"], {},
                                       ("--list", "--instances")),
    "compare --show --instances all": (["compare", "--show", "lite-ocs", "--instances", "all"],
                                       {}, ("--show", "--instances")),
    "compare --workers 0": ([*COMPARE, "--workers", "0"], {}, ("--workers 0", "1 to")),
    "compare --out under a file": ([*COMPARE, "--out", "f/o"], {"f": "x"},
                                   ("'f/o'", "is a file, not a folder")),
    "compare --out a file": ([*COMPARE, "--out", "f"], {"f": "x"}, ("--out", "'f'", "is a file")),
    "compare --out a FIFO": ([*COMPARE, "--out", "fifo"], {"fifo": _fifo("fifo")},
                             ("'fifo'", "not a folder")),
    "compare --out a link to /dev/zero": ([*COMPARE, "--out", "z"],
                                          {"z": _link("z", "/dev/zero")},
                                          ("symbolic link to '/dev/zero'", "not a folder")),
    "compare --out a link to nothing": ([*COMPARE, "--out", "z"],
                                        {"z": _link("z", "no/such/folder")},
                                        ("symbolic link to 'no/such/folder'", "does not exist")),
    "compare --out a folder of someone's files": ([*COMPARE, "--out", "d"],
                                                  {"d": _folder("d", "notes.txt")},
                                                  ("holds files netmodel did not write",)),
    "compare --out blank-ended": ([*COMPARE, "--out", " o"], {}, ("--out ' o'", "blank")),
    # -- a choice in letters that print as one of its values: said 'unknown network 'bоund';
    # known: 'bound', ...' (a Cyrillic o), its list showing it
    **{f"{flag} {typed!r} (did you mean)": (argv, {}, (f"did you mean {meant!r}? (it has",))
       for flag, typed, meant, argv in (
           ("--networks", "b\u043eund", "bound", [*STUDY, "--networks", "b\u043eund"]),
           ("--networks", "ring\u200b", "ring", [*STUDY, "--networks", "ring\u200b"]),
           ("--instances", "\u0430ll", "all", [*COMPARE[:-4], "--instances", "\u0430ll"]),
           ("--parallelism", "\u0430ll", "all", [*COMPARE[:-2], "--parallelism", "\u0430ll"]),
           ("--phases", "d\u0435code", "decode", [*COMPARE, "--phases", "d\u0435code"]),
           ("--mode", "\u043everlap", "overlap", [*INFER, "--mode", "\u043everlap"]),
           ("--compute-dtype", "\uff46p8", "fp8", [*INFER, "--compute-dtype", "\uff46p8"]),
           ("--fabric", "r\u0456ng", "ring", [*INFER, "--fabric", "r\u0456ng"]),
           ("--algorithm", "tr\u0435e", "tree",
            ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size",
             "1MiB", "--algorithm", "tr\u0435e"]),
           ("--format", "js\u043en", "json", ["topology", "export", "ring:n=8", "-o", "x.json",
                                            "--format", "js\u043en"]))},
    "scenario file placement in a Cyrillic o (did you mean)": (
        [*COMPARE[:-6], "--scenarios", "s.toml"],
        {"s.toml": LITE_OCS.replace('placement = "contiguous"', 'placement = "c\u043entiguous"')},
        ("s.toml", "did you mean 'contiguous'? (it has")),
}

#: Taken as they are: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    # a choice read with case aside (01b00252, compute.errors.chosen): refused before it
    "compare --instances All": ([*COMPARE[:-4], "--instances", "All"], {}),
    "serve --load 1e-6": ([*SERVE, "--load", "1e-6"], {}),
    "serve --load ' 0.5 '": ([*SERVE, "--load", " 0.5 "], {}),
    "serve --rate 1e-9 --load 0.5": ([*SERVE, "--rate", "1e-9", "--load", "0.5"], {}),
    "serve --tp-only and --json twice": ([*SERVE, "--tp-only", "--json", "--json"], {}),
    "serve --ttft 0.5s --ttft 500ms (one value)": ([*SERVE, "--ttft", "0.5s", "--ttft",
                                                    "500ms"], {}),
    "serve --kv-ports +2": ([*KV, "--kv-ports", "+2"], {}),
    "serve every option but the refused pairs": ([*EVERY_SERVE, "--mtp-tokens", "1",
                                                  "--mtp-acceptance", "0.8"], {}),
    "serve every option, two-batch overlap": ([*EVERY_SERVE, "--two-batch-overlap"], {}),
    "infer --fabric ring (no size)": ([*INFER, "--fabric", "ring"], {}),
    "infer --fabric a scenario's name": ([*INFER, "--fabric", "h100-dgx"], {}),
    "infer --scenario h100-dgx with --gpu Lite": (["infer", "--model", "Llama-3-8B", "--gpu",
                                                   "Lite", "--tp", "8", "--batch", "1",
                                                   "--scenario", "h100-dgx"], {}),
    "search --scenario lite-ocs --profile": ([*SEARCH, "--scenario", "lite-ocs", "--profile",
                                              "vllm-dgx-h100"], {}),
    "calibrate --scenario h100-dgx@Lite": ([*CALIBRATE, "--scenario", "h100-dgx@Lite"], {}),
    "calibrate -o p.TOML": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "p.TOML"], {}),
    "study --networks ' bound ' --no-fabric": ([*STUDY, "--networks", " bound ", "--no-fabric",
                                               "--no-plot"], {}),
    "study --no-fabric --profile --networks bound": (
        [*STUDY, "--no-fabric", "--no-plot", "--profile", "vllm-dgx-h100", "--networks",
         "bound"], {}),
    "compare --instances all --parallelism all --reliability": ([*COMPARE, "--reliability"], {}),
    "compare --instances all --parallelism all --profile": ([*COMPARE, "--profile",
                                                             "vllm-dgx-h100"], {}),
    "compare --instances all --two-batch-overlap": ([*COMPARE[:-2], "--two-batch-overlap"], {}),
    "compare --out a link to an empty folder": ([*COMPARE, "--out", "z"],
                                                {"e": _folder("e"), "z": _link("z", "e")}),
}

#: Runs whose exit status is given (3: no configuration meets the SLO, or the pools a rate
#: needs do not fit): name -> (argv, status); ``--json`` ones print strict JSON.
STATUS: dict[str, tuple[list[str], int]] = {
    "serve --load just under 1": ([*SERVE, "--load", "0.9999999999999999", "--json"], 3),
    "serve --rate 1e9": ([*SERVE, "--rate", "1e9", "--json"], 3),
    "serve --rate 1e9 --load 1e-6 (29 trillion GPUs)": ([*SERVE, "--rate", "1e9", "--load",
                                                         "1e-6", "--json"], 3),
    "serve --rate 1e-9 --load just under 1": ([*SERVE, "--rate", "1e-9", "--load",
                                               "0.9999999999999999", "--json"], 3),
    "serve --rate 1e-9": ([*SERVE, "--rate", "1e-9", "--json"], 0),
    "serve SLOs no cell meets": ([*SERVE, "--ttft", "1us", "--tbt", "1us", "--json"], 3),
    "serve the loosest SLOs at a load near 1": ([*SERVE, "--ttft", "600s", "--tbt", "10s",
                                                 "--load", "0.999999", "--json"], 3),
    "serve lite-ocs, a huge rate near load 1": ([*KV, "--rate", "1e9", "--load",
                                                 "0.9999999999999999", "--json"], 3),
    "compare SLOs no cell meets": ([*COMPARE, "--phases", "both", "--ttft", "1us", "--tbt",
                                    "1us", "--json"], 3),
    "compare --instances all --parallelism all --reliability --json": (
        [*COMPARE, "--phases", "both", "--reliability", "--json"], 0),
}


def status_case(name: str, argv: list[str], status: int) -> Case:
    def run(d: Path) -> str | None:
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


def _no_constant(text: str) -> None:
    raise ValueError(f"JSON holds {text}")


# -- the library: its refusals name parameters ------------------------------------------

def _full_study(networks: object) -> Callable[[], object]:
    def call() -> object:
        from netmodel.study.lite_gpu import run_full_study

        return run_full_study(["Llama-3-8B"], ["Lite"], ["decode"], networks=networks,
                              fabric=False)
    return call


def _lite_study(network: object) -> Callable[[], object]:
    def call() -> object:
        from netmodel.study.lite_gpu import run_lite_gpu_study

        return run_lite_gpu_study(["Llama-3-8B"], ["Lite"], ["decode"], network=network)
    return call


#: Library calls refused: name -> (call, the message's start).
LIBRARY: dict[str, tuple[Callable[[], object], str]] = {
    # 'unknown network 'b'': the text read letter by letter
    "run_full_study(networks='bound')": (_full_study("bound"), "networks must be a list"),
    # TypeError: 'NoneType' object is not iterable
    "run_full_study(networks=None)": (_full_study(None), "networks must be a list"),
    # TypeError: unhashable type: 'list'
    "run_full_study(networks=[['ring']])": (_full_study([["ring"]]), "unknown network ['ring']"),
    "run_full_study(networks=[])": (_full_study([]), "give at least one network"),
    # ran the ring and labelled its rows 'custom'; 'bound' alike
    "run_lite_gpu_study(network='custom')": (_lite_study("custom"),
                                             "network 'custom' is none of the study's"),
    "run_lite_gpu_study(network='')": (_lite_study(""), "network must be a name"),
    "run_lite_gpu_study(network=1)": (_lite_study(1), "network must be a name"),
}


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


def bound_costed_as_bound(d: Path) -> str | None:
    """``run_lite_gpu_study(network='bound')`` without a factory costs the bound (it costed
    the ring under the label)."""
    from netmodel.study.lite_gpu import NETWORKS, run_lite_gpu_study

    kw = dict(models=["Llama-3-8B"], gpus=["Lite"], phases=["decode"])
    named = run_lite_gpu_study(**kw, network="bound").rows[-1].tokens_per_s_per_sm
    bound = run_lite_gpu_study(**kw, comm_factory=NETWORKS["bound"]).rows[-1]
    return None if named == bound.tokens_per_s_per_sm else \
        f"network='bound' gives {named:.2f} tokens/s/SM, the bound {bound.tokens_per_s_per_sm:.2f}"


# -- child processes: settings, and a folder nobody may write ---------------------------

SETTING = "NETMODEL_MAX_COMPARE_SEARCHES"

#: name -> (argv, environment, files, exit status, the one line's words or None).
CHILDREN: dict[str, tuple[list[str], dict[str, str], dict[str, Made], int,
                          tuple[str, ...] | None]] = {
    **{f"{SETTING}={v!r}": ([*COMPARE, "--out", "o"], {SETTING: v}, {}, 2,
                            (f"{SETTING}", "from 1 to 1e30 (default 20,000)"))
       for v in ("0x10", "inf", "-0", "1e", "9" * 32, "1e31")},
    f"{SETTING}='1_000'": ([*COMPARE, "--out", "o"], {SETTING: "1_000"}, {}, 2,
                           ("groups its digits",)),
    f"{SETTING} fullwidth": ([*COMPARE, "--out", "o"], {SETTING: "\uff11\uff10"}, {}, 2,
                             ("FULLWIDTH DIGIT ONE",)),
    f"{SETTING}=1": ([*COMPARE, "--out", "o"], {SETTING: "1"}, {}, 2,
                     ("about 2 searches, over the limit of 1",)),
    f"{SETTING}=' 5 '": ([*COMPARE, "--out", "o"], {SETTING: " 5 "}, {}, 0, None),
    "NETMODEL_MAX_SEARCH_CONFIGURATIONS=1": ([*COMPARE], {"NETMODEL_MAX_SEARCH_CONFIGURATIONS":
                                                          "1"}, {}, 2,
                                             ("over the limit of 1",
                                              "NETMODEL_MAX_SEARCH_CONFIGURATIONS")),
}

#: Outputs into a folder nobody may write (mode 555; as root the child runs without
#: CAP_DAC_OVERRIDE): name -> (argv, the one line's words).
READ_ONLY: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "compare --out": ([*COMPARE, "--out", "ro/o"], ("'ro/o'", "not writable")),
    "calibrate -o": (["calibrate", "--measurements", SHIPPED_CSV, "-o", "ro/p.toml"],
                     ("--out 'ro/p.toml'", "not writable")),
    "topology export -o": (["topology", "export", "ring:n=8", "-o", "ro/f.json"],
                           ("'ro/f.json'", "not writable")),
    "study --out": ([*STUDY[:2], "--out", "ro/o", *STUDY[4:], "--no-fabric"],
                    ("'ro/o'", "not writable")),
    "serve (writes nothing)": ([*SERVE], ()),
}


def _child(argv: list[str], d: Path, env: dict[str, str],
           drop: bool = False) -> subprocess.CompletedProcess | str:
    cmd = [sys.executable, "-m", "netmodel", *argv]
    if drop:
        cmd = [shutil.which("setpriv") or "setpriv", "--bounding-set=-dac_override,"
               "-dac_read_search", "--inh-caps=-dac_override,-dac_read_search", *cmd]
    try:
        return subprocess.run(cmd, cwd=d, text=True, capture_output=True, timeout=55,
                              env={**os.environ, **env}, errors="replace")
    except subprocess.TimeoutExpired:
        return "over 55 s"


def _verdict(p: subprocess.CompletedProcess | str, status: int,
             words: tuple[str, ...] | None) -> str | None:
    if isinstance(p, str):
        return p
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("wrote ")]
    shown = " / ".join(lines)[:250]
    if p.returncode != status or "Traceback" in p.stderr:
        return f"exit {p.returncode} | {shown}"
    if words is None or status == 0:
        return None
    if len(lines) != 1 or not lines[0].startswith("error: "):
        return f"not one line | {shown}"
    missing = [w for w in words if w not in lines[0]]
    return f"names not {missing} | {shown}" if missing else None


def child_case(name: str, argv: list[str], env: dict[str, str], files: dict[str, Made],
               status: int, words: tuple[str, ...] | None) -> Case:
    def run(d: Path) -> str | None:
        make(d, files)
        before = sorted(p.name for p in d.iterdir())
        why = _verdict(_child(argv, d, env), status, words)
        if why is not None or status == 0:
            return why
        after = sorted(p.name for p in d.iterdir())
        return None if after == before else f"wrote {sorted(set(after) - set(before))}"
    return f"child {name}", run


def read_only_case(name: str, argv: list[str], words: tuple[str, ...]) -> Case:
    def run(d: Path) -> str | None:
        (d / "ro").mkdir()
        os.chmod(d / "ro", 0o555)
        root = os.geteuid() == 0
        if root and not shutil.which("setpriv"):
            return None   # no way to drop root's override here: nothing to check
        try:
            why = _verdict(_child(argv, d, {}, drop=root), 0 if not words else 2,
                           words or None)
            return why if why is not None or not list((d / "ro").iterdir()) else \
                f"wrote {sorted(p.name for p in (d / 'ro').iterdir())}"
        finally:
            os.chmod(d / "ro", 0o755)
    return f"read-only {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (status_case(n, a, s) for n, (a, s) in STATUS.items())
    yield from (library_case(n, c, s) for n, (c, s) in LIBRARY.items())
    yield "library run_lite_gpu_study(network='bound') costs the bound", bound_costed_as_bound
    yield from (child_case(n, *c) for n, c in CHILDREN.items())
    yield from (read_only_case(n, a, w) for n, (a, w) in READ_ONLY.items())


def main() -> int:
    return run_round(cases(), "hostile27-")


if __name__ == "__main__":
    sys.exit(main())
