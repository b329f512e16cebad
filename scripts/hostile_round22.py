"""Hostile-input round 22, on what rounds 15-21 (scripts/hostile_round15.py .. 21.py) left
untried: options each fine alone that contradict each other (does one silently win?);
files valid in their format but absurd in what they say (booleans, arrays and tables where
numbers go, 1e300, a subnormal, an integer past a float; a measurement row given twice, a
step measured again; a profile at its parameters' maxima); output paths of another format's
suffix, a folder where a file goes and back, names holding a newline; values just at the
documented limits and one past each; very large groups and clusters, which must be refused
by estimate or finish in bounded time and memory (a child process under a 4 GB address
space, 60 s); the library called with numpy scalars, numpy NaN, bools for numbers and
huge integers, whose refusals name parameters, never ``--flags``; and results that must
agree by symmetry (a scenario by name and by its ``compare --show`` file, ``NAME@GPU`` and
``--gpu``, a GPU file derived from the H100 and the H100, a fabric spec and its exported
JSON and GraphML).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit
status 2, one line ``error: ...`` holding the words listed (the flag or file, the value,
what is allowed), no traceback, nothing written in the case's folder; a value taken is
exit 0 (or 3, an unmet target); a symmetric pair prints the same figures.

Usage: ``python scripts/hostile_round22.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner) but
the large cases (child processes). About two minutes on two cores, most of it the large
cases (``-k large`` alone).
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from hostile_tally import (  # noqa: E402
    Case,
    Made,
    invoke_in,
    make,
    refusal_case,
    run_round,
    taken_case,
)

from compute.errors import UserError  # noqa: E402
from netmodel import api  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "4", "--tp", "1"]
INFER_MOE = ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--batch", "16", "--tp",
             "8"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot"]
COLL = ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB"]
COSTS = ["costs", "--fabric", "ring:n=8", "--groups", "8", "--sizes", "1MiB"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
         "--max-batch", "8", "--trials", "5"]
SWEEP = ["sweep", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
         "-q", "--no-plot"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml"]

#: A measurements CSV of three steps (docs/compute.md's Splitwise rows).
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
STEPS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
         "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298",
         "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386"]
#: A GPU file of one GPU given in full (an H100-SXM's figures): key = value lines to swap.
GPU = ('[gpu."Mine"]\nsms = 132\nbf16_dense_TFLOPs = 989\nfp8_dense_TFLOPs = 1979\n'
       'hbm_capacity_GB = 85.5\nhbm_bandwidth_TBps = 3.35\nscaleup_GBps_per_direction = 450\n'
       'scaleout_Gbps = 400\ntdp_W = 700\nmax_instance = 8\nsource = "test"\n')
GPU_DERIVED = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "test"\n'
#: A model file of a Llama-3-8B shape.
MODEL = ('[model."M"]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n'
         'ffn = 14336\nvocab = 128256\ngated_mlp = true\nmax_context = 8192\nsource = "t"\n')
#: An engine profile of four parameters (each line swapped by a case).
PROFILE = ('[profile]\nname = "absurd"\nengine = "x"\nsystem = "y"\ngpu = "H100-SXM"\n'
           + "".join(f'[parameters.{k}]\nvalue = {v}\nsource = "s"\n' for k, v in (
               ("gemm_efficiency", 1e-4), ("layer_overhead_s", 1.0),
               ("step_overhead_s", 10.0), ("decode_sequence_overhead_s", 1.0))))
OCS = (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text()
DGX = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text()


def swap(text: str, key: str, value: str) -> str:
    """``text`` with the first ``key = ...`` line's value ``value`` (its comment dropped)."""
    out = re.sub(rf"^{re.escape(key)} = [^\n]*", f"{key} = {value}", text, count=1, flags=re.M)
    assert out != text, (key, value)
    return out


def profile(key: str, value: str) -> str:
    """:data:`PROFILE` with parameter ``key``'s value ``value``."""
    head, _, rest = PROFILE.partition(f"[parameters.{key}]\nvalue = ")
    return head + f"[parameters.{key}]\nvalue = {value}" + rest[rest.index("\n"):]


#: Refusals: name -> (argv, files made in the case's folder, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- options each fine alone, contradicting each other ---------------------------------
    "infer --scenario with --fabric": (
        [*INFER, "--scenario", "h100-dgx", "--fabric", "ring:n=8"], {}, ("--scenario",
                                                                           "--fabric")),
    "infer --phase prefill with --context": (
        [*INFER, "--phase", "prefill", "--context", "4000"], {}, ("--context '4000'",
                                                                  "--prompt")),
    "infer --phase decode with --prompt": (
        [*INFER, "--phase", "decode", "--prompt", "4000"], {}, ("--prompt '4000'",
                                                                "--context")),
    "infer --phase decode with --ttft": (
        [*INFER, "--phase", "decode", "--ttft", "1s"], {}, ("--ttft '1s'", "--tbt")),
    "infer --phase prefill with --tbt": (
        [*INFER, "--phase", "prefill", "--tbt", "50ms"], {}, ("--tbt '50ms'", "--ttft")),
    "infer --mtp-acceptance without --mtp-tokens": (
        [*INFER, "--mtp-acceptance", "0.5"], {}, ("--mtp-acceptance", "--mtp-tokens")),
    "infer --mtp-tokens with --phase prefill": (
        [*INFER, "--phase", "prefill", "--mtp-tokens", "2"], {}, ("--mtp-tokens '2'",
                                                                  "--phase decode")),
    "infer --profile with --flops-efficiency": (
        [*INFER, "--profile", "vllm-dgx-h100", "--flops-efficiency", "0.5"], {},
        ("profile", "not both")),
    "infer --mode serial with --overlap-collectives": (
        [*INFER, "--mode", "serial", "--overlap-collectives"], {},
        ("--overlap-collectives", "overlap")),
    "infer --csv with --json": ([*INFER, "--csv", "--json"], {}, ("--json", "--csv")),
    "compare --list with --models": (
        ["compare", "--list", "--models", "Llama-3-8B"], {}, ("--list", "--models")),
    "compare --show with --list": (
        ["compare", "--show", "h100-dgx", "--list"], {}, ("--list", "--show")),
    "compare --workers with --scheduler": (
        [*COMPARE, "--scenarios", "h100-dgx", "--workers", "1", "--scheduler",
         "tcp://127.0.0.1:9"], {}, ("--workers", "--scheduler", "not both")),
    "compare --parallelism tp with --dense-mlp-tp": (
        [*COMPARE, "--scenarios", "h100-dgx", "--parallelism", "tp", "--dense-mlp-tp", "1"],
        {}, ("--parallelism 'tp'", "'auto' or 'all'")),
    "collective --fabric with --scenario": (
        [*COLL, "--scenario", "h100-dgx"], {}, ("--fabric", "--scenario", "not both")),
    "collective --seed with --placement contiguous": (
        [*COLL, "--placement", "contiguous", "--seed", "3"], {}, ("--seed 3",
                                                                  "--placement random")),
    "collective --algorithm ring with --algorithms": (
        [*COLL, "--algorithm", "ring", "--algorithms", "nccl"], {}, ("--algorithms 'nccl'",
                                                                     "--algorithm 'ring'")),
    "collective --algorithm ring with --tuner nccl": (
        [*COLL, "--algorithm", "ring", "--tuner", "nccl"], {}, ("--tuner nccl",
                                                                "--algorithm ring")),
    "costs --format vidur without -o": (
        [*COSTS, "--format", "vidur"], {}, ("--format vidur", "-o DIR")),
    "availability --load-bandwidth with --load-from fabric": (
        [*AVAIL, "--load-from", "fabric", "--load-bandwidth", "1GB/s"], {},
        ("--load-from", "'fabric'")),
    "availability --scenario with --fabric": (
        [*AVAIL, "--fabric", "ring:n=8"], {}, ("--scenario", "--fabric", "not both")),
    "sweep --points with a list of values": (
        [*SWEEP, "--param", "cost.pue=1.1,1.2", "--points", "5"], {}, ("--points 5",
                                                                       "LO:HI")),
    "sweep a range of several points with HI equal to LO": (
        [*SWEEP, "--param", "cost.pue=1.1:1.1", "--points", "3"], {},
        ("--param 'cost.pue=1.1:1.1'", "HI equal to LO", "give HI above LO")),
    # -- an output of another format's suffix, a folder for a file and back -----------------
    "costs -o t.json in the default csv": (
        [*COSTS, "-o", "t.json"], {}, ("--output 't.json'", "--format csv (the default)",
                                       "--format json")),
    "costs -o x.csv --format json": (
        [*COSTS, "-o", "x.csv", "--format", "json"], {}, ("--output 'x.csv'",
                                                          "--format json", "--format csv")),
    "topology export -o x.yml --format json": (
        ["topology", "export", "ring:n=8", "-o", "x.yml", "--format", "json"], {},
        ("--output 'x.yml'", "--format astra-sim")),
    "topology export -o x.json --format astra-sim": (
        ["topology", "export", "ring:n=8", "-o", "x.json", "--format", "astra-sim"], {},
        ("--output 'x.json'", ".yml or .yaml")),
    "topology export -o under a missing folder": (
        ["topology", "export", "ring:n=8", "-o", "no/x.json"], {},
        ("--output 'no/x.json'", "does not exist")),
    "calibrate -o p.json": (
        ["calibrate", "--measurements", "m.csv", "-o", "p.json"], {"m.csv": "x"},
        ("--out 'p.json'", ".toml")),
    "costs -o an existing folder": (
        [*COSTS, "-o", "dd"], {"dd/x": "y"}, ("--output 'dd'", "existing folder")),
    "costs --format vidur -o an existing file": (
        [*COSTS, "--format", "vidur", "-o", "f.csv"], {"f.csv": "x"},
        ("--output 'f.csv'", "not a folder")),
    "compare --out an existing file": (
        [*COMPARE, "--scenarios", "h100-dgx", "--out", "x.toml"], {"x.toml": "[a]"},
        ("--out", "'x.toml' is a file")),
    **{f"{args[0]} {flag} with a newline": (
        [*args, flag, "a\nb" + suffix], {}, (flag, "control character"))
       for args, flag, suffix in (
           ([*COMPARE, "--scenarios", "h100-dgx"], "--out", ""),
           (AVAIL, "--out", ""),
           ([*SWEEP, "--param", "cost.pue=1.1,1.2"], "--out", ""),
           (COLL, "--plot", ".png"),
           (["topology", "export", "ring:n=8"], "-o", ".json"))},
    # -- measurement files valid as CSV, absurd as measurements -----------------------------
    "calibrate a row given twice": (
        CALIBRATE, {"m.csv": HEADER + "\n".join(STEPS + STEPS[:1]) + "\n"},
        ("m.csv: row 5", "repeats m.csv: row 2", "give each measurement once")),
    "calibrate 3 steps in 4 rows for 4 parameters": (
        CALIBRATE, {"m.csv": HEADER + "\n".join(
            [*STEPS, "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0390"]) + "\n"},
        ("--measurements 'm.csv'", "to 3 measured steps (4 measurements")),
    **{f"calibrate latency_s {v}": (
        CALIBRATE, {"m.csv": HEADER + "\n".join([*STEPS, STEPS[2][:-6] + v]) + "\n"},
        ("m.csv: row 5", "latency_s", *w))
       for v, w in (("0", ("from 1e-09",)), ("1e-12", ("from 1e-09",)),
                    ("1e6", ("the roofline's",)))},
    "calibrate a UTF-16 CSV": (
        CALIBRATE, {"m.csv": (HEADER + "\n".join(STEPS) + "\n").encode("utf-16")},
        ("'m.csv'", "UTF-8")),
    "calibrate a column twice": (
        CALIBRATE, {"m.csv": HEADER.strip() + ",latency_s\n" + "\n".join(
            s + ",9" for s in STEPS) + "\n"}, ("m.csv", "latency_s given twice")),
    # -- GPU, model, profile and scenario files: valid TOML, absurd values ------------------
    **{f"GPU file {k} = {v}": (
        ["infer", "--model", "Llama-3-8B", "--gpu", "Mine", "--gpu-file", "g.toml", "--batch",
         "1", "--tp", "1"], {"g.toml": swap(GPU, k, v)}, ("g.toml", k, "must be"))
       for k, vs in (("sms", ("1e300", "true", "[132]", "132.5", "9" * 23, "100001")),
                     ("bf16_dense_TFLOPs", ("1e300", "1e-300", "5e-324", "true", "[1, 2]",
                                            "{value = 1}")),
                     ("hbm_capacity_GB", ("1e30", "1e-9", "false")),
                     ("tdp_W", ("0", "true")),
                     ("max_instance", ("100001", "0", "true")),
                     ("scaleout_Gbps", ("1e-300",)))
       for v in vs},
    **{f"model file {k} = {v}": (
        ["infer", "--model", "M", "--model-file", "m.toml", "--gpu", "H100-SXM", "--batch",
         "1", "--tp", "1"], {"m.toml": swap(MODEL, k, v)}, ("m.toml", k))
       for k, vs in (("layers", ("1e300", "true", "10001")), ("hidden", ("1.5", "true")),
                     ("kv_heads", ("0", "3")), ("gated_mlp", ("1", '"yes"')),
                     ("max_context", ("1000000000",)))
       for v in vs},
    **{f"profile {k} = {v}": (
        [*INFER, "--profile", "p.toml"], {"p.toml": profile(k, v)}, ("p.toml", k))
       for k, v in (("gemm_efficiency", "true"), ("gemm_efficiency", "1.0000001"),
                    ("layer_overhead_s", "1.0000001"), ("step_overhead_s", "10.000001"),
                    ("layer_overhead_s", "5e-324"), ("decode_sequence_overhead_s", "[0.1]"))},
    **{f"scenario {name} {k} = {v}": (
        [*COMPARE, "--scenarios", "s.toml"], {"s.toml": swap(text, k, v)}, ("s.toml", k))
       for name, text, pairs in (
           ("lite-ocs", OCS, (("gpus", "true"), ("gpus", "[128]"), ("length", "[10.0]"),
                              ("reconfiguration_time", "true"), ("circuits", "true"),
                              ("placement", '["contiguous"]'), ("ocs_ports", "1e300"),
                              ("length", "5e-324"))),
           ("h100-dgx", DGX, (("domains", "true"), ("sharp", "1"),
                              ("gpus_per_server", "[8]"))))
       for k, v in pairs},
    # -- a GPU file that is no file, wherever a GPU file is named ---------------------------
    **{f"{kind} GPU file by {how}": (
        argv, {"g.toml": make}, ("'g.toml'", word))
       for kind, make, word in (
           ("a FIFO", lambda d: os.mkfifo(d / "g.toml"), "not a regular file"),
           ("/dev/zero", lambda d: os.symlink("/dev/zero", d / "g.toml"),
            "not a regular file"),
           ("a symbolic link loop", lambda d: (os.symlink("a.toml", d / "g.toml"),
                                               os.symlink("g.toml", d / "a.toml")),
            "symbolic links"),
           ("a folder", lambda d: os.mkdir(d / "g.toml"), "folder"))
       for how, argv in (
           ("spec gpu=", [*COLL[:3], "ring:n=8,gpu=g.toml", *COLL[4:]]),
           ("NAME@FILE", [*COMPARE, "--scenarios", "h100-dgx@g.toml"]),
           ("compare --gpus", [*COMPARE, "--scenarios", "h100-dgx", "--gpus", "g.toml"]),
           ("serve --prefill-gpu", ["serve", "--scenario", "h100-dgx", "--model",
                                    "Llama-3-8B", "--max-batch", "8", "--prefill-gpu",
                                    "g.toml"]),
           ("infer --gpu", ["infer", "--model", "Llama-3-8B", "--gpu", "g.toml", "--batch",
                            "1", "--tp", "1"]))},
    # -- one past each documented limit -------------------------------------------------------
    "infer --mtp-tokens 17": ([*INFER_MOE, "--mtp-tokens", "17"], {}, ("--mtp-tokens", "16")),
    "infer --expert-skew 1000001": (
        [*INFER_MOE, "--ep", "8", "--expert-skew", "1000001"], {}, ("--expert-skew",
                                                                    "1,000,000")),
    "availability --trials 100001": (
        [*AVAIL[:-2], "--trials", "100001"], {}, ("--trials", "100,000")),
    "availability --horizon 100.01y": (
        [*AVAIL, "--horizon", "100.01y"], {}, ("--horizon '100.01y'", "1 h to 100 y")),
    "availability --horizon 59min": (
        [*AVAIL, "--horizon", "59min"], {}, ("--horizon '59min'", "1 h to 100 y")),
    "availability --rate gpu=1.0001": (
        [*AVAIL, "--rate", "gpu=1.0001"], {}, ("--rate 'gpu=1.0001'", "from 0 to 1")),
    "availability --cluster-gpus 131104": (
        [*AVAIL, "--cluster-gpus", "131104"], {}, ("--cluster-gpus '131104'", "131,072")),
    "availability --spares 101%": (
        [*AVAIL, "--spares", "101%"], {}, ("--spares '101%'", "0 to 32")),
    "sweep --points 1001": (
        [*SWEEP, "--param", "cost.pue=1:2", "--points", "1001"], {}, ("--points '1001'",
                                                                      "1,000")),
    "costs --sizes factor 1": ([*COSTS[:-2], "--sizes", "1MiB:2MiB:1"], {}, ("--sizes",
                                                                           "> 1")),
    "costs --sizes of 6.9 million rows": (
        [*COSTS[:-2], "--sizes", "1MiB:2MiB:1.0000001"], {}, ("--sizes", "200,000",
                                                               "--max-rows")),
    "yield --area 70686, just past the usable wafer": (
        ["yield", "--area", "70686"], {}, ("--area '70686'", "(70685.83 mm^2")),
    "collective all-to-all of 10,000 GPUs": (
        ["collective", "all-to-all", "--fabric", "single-switch:n=10000", "--group", "10000",
         "--size", "1MiB"], {}, ("99,990,000", "--max-transfers")),
}

#: Values taken (exit 0, or 3 for an unmet target): name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "infer --mtp-tokens 16": ([*INFER_MOE, "--mtp-tokens", "16"], {}),
    "infer --expert-skew 1000000, costed at EP's ceiling": (
        [*INFER_MOE, "--ep", "8", "--expert-skew", "1000000"], {}),
    "availability --horizon 100y": ([*AVAIL[:-2], "--trials", "1", "--horizon", "100y"], {}),
    "availability --rate gpu=1": ([*AVAIL, "--rate", "gpu=1"], {}),
    "availability --cluster-gpus 131072": ([*AVAIL[:-2], "--trials", "1", "--cluster-gpus",
                                            "131072"], {}),
    "availability --spares 100%": ([*AVAIL, "--spares", "100%"], {}),
    "GPU file max_instance 100000": (
        ["search", "--model", "Llama-3-8B", "--gpu", "Mine", "--gpu-file", "g.toml",
         "--max-batch", "4"], {"g.toml": GPU_DERIVED.replace("source", "max_instance = "
                                                             "100000\nsource")}),
    "profile at every parameter's maximum": ([*INFER, "--profile", "p.toml"],
                                             {"p.toml": PROFILE}),
    "sweep LO:LO:1, the one value": ([*SWEEP, "--param", "cost.pue=1.1:1.1:1"], {}),
    "calibrate a step measured again": (
        [*CALIBRATE, "--fit", "gemm_efficiency,layer_overhead_s,decode_sequence_overhead_s"],
        {"m.csv": HEADER + "\n".join([*STEPS, "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0390"])
         + "\n"}),
    "calibrate a CSV with a BOM and CRLF": (
        CALIBRATE, {"m.csv": b"\xef\xbb\xbf" + (HEADER + "\n".join(
            [*STEPS, "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.1326"]) + "\n").replace(
                "\n", "\r\n").encode()}),
}


#: Pairs that must print the same figures: name -> (argv A, argv B, files, the lines of
#: each output compared: a function of the output's text).
def _json_rows(text: str) -> str:
    return json.dumps(json.loads(text)["rows"], sort_keys=True)


def _line(k: int) -> Callable[[str], str]:
    return lambda text: text.splitlines()[k]


def _time_lines(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.startswith(("time ", "algorithm")))


def _show(name: str) -> Callable[[Path], None]:
    def write(d: Path) -> None:
        (d / f"{name}.toml").write_text(invoke_in(["compare", "--show", name], d).output)
    return write


def _export(spec: str, out: str) -> Callable[[Path], None]:
    def write(d: Path) -> None:
        r = invoke_in(["topology", "export", spec, "-o", out], d)
        assert r.exit_code == 0, r.output
    return write


SYMMETRIC: dict[str, tuple[list[str], list[str], dict[str, Made], Callable[[str], str]]] = {
    **{f"compare {s} by name and by its --show file": (
        [*COMPARE[:2], "Llama-3-70B,Mixtral-8x7B", "--max-batch", "64", "-q", "--no-plot",
         "--json", "--scenarios", s],
        [*COMPARE[:2], "Llama-3-70B,Mixtral-8x7B", "--max-batch", "64", "-q", "--no-plot",
         "--json", "--scenarios", f"./{s}.toml"], {f"{s}.toml": _show(s)}, _json_rows)
       for s in ("h100-dgx", "lite-ocs", "lite-direct")},
    "infer NAME@GPU and --scenario NAME --gpu GPU": (
        ["infer", "--model", "Llama-3-70B", "--scenario", "h100-dgx@A100-SXM-80GB", "--tp",
         "8", "--batch", "16"],
        ["infer", "--model", "Llama-3-70B", "--scenario", "h100-dgx", "--gpu",
         "A100-SXM-80GB", "--tp", "8", "--batch", "16"], {}, _line(1)),
    "infer on a GPU file derived from the H100 and on the H100": (
        ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "16",
         "--scenario", "h100-dgx"],
        ["infer", "--model", "Llama-3-70B", "--tp", "8", "--batch", "16", "--scenario",
         "h100-dgx@g.toml"], {"g.toml": GPU_DERIVED}, _line(1)),
    **{f"collective on {spec} and its exported {fmt}": (
        ["collective", "all-reduce", "--fabric", spec, "--group", "8", "--size", "64MiB"],
        ["collective", "all-reduce", "--fabric", f"f.{fmt}", "--group", "8", "--size",
         "64MiB"], {f"f.{fmt}": _export(spec, f"f.{fmt}")}, _time_lines)
       for spec in ("torus:dims=2x2x2", "fat-tree:k=4", "lite-direct")
       for fmt in ("json", "graphml")},
}


def symmetric_case(name: str, a: list[str], b: list[str], files: dict[str, Made],
                   part: Callable[[str], str]) -> Case:
    def run(d: Path) -> str | None:
        make(d, files)
        ra, rb = invoke_in(a, d), invoke_in(b, d)
        if ra.exit_code != 0 or rb.exit_code != 0:
            return f"exit {ra.exit_code}, {rb.exit_code} | {(ra.output + rb.output)[-300:]}"
        pa, pb = part(ra.output), part(rb.output)
        return None if pa == pb and pa else f"differ | {pa[:150]!r} vs {pb[:150]!r}"
    return f"symmetric {name}", run


#: Large groups and clusters, run as a user runs them (a child process under a 4 GB
#: address space, 60 s): a result, or a refusal in one line, never a traceback nor a hang.
LARGE: dict[str, list[str]] = {
    "in-network all-reduce on one switch of 100,000 GPUs": [
        "collective", "all-reduce", "--fabric", "single-switch:n=100000", "--group", "100000",
        "--size", "1MiB"],
    "all-reduce on a fat tree of 65,536 GPUs": [
        "collective", "all-reduce", "--fabric", "fat-tree:k=64", "--group", "65536", "--size",
        "1GiB"],
    "all-to-all on a fat tree of 65,536 GPUs": [
        "costs", "--fabric", "fat-tree:k=64", "--groups", "65536", "--sizes", "1MiB", "--ops",
        "all-to-all"],
    "blast-radius of 131,072 Lites on OCS": [
        "blast-radius", "--scenario", "lite-ocs", "--model", "Llama-3-70B", "--cluster-gpus",
        "131072", "--no-plot", "--max-batch", "8"],
    # the routes of all an algorithm's steps estimated together (Router.check_steps), not
    # each step's alone: pairwise on a ring of 1,024 GPUs searched 1,023 steps of 1,024
    # routes, 268 million route links, past a minute; a ring of 20,000 GPUs past 55 s
    "all-reduce on a ring of 20,000 GPUs": [
        "collective", "all-reduce", "--fabric", "ring:n=20000", "--group", "20000", "--size",
        "1MiB"],
    "all-to-all on a ring of 1,024 GPUs": [
        "collective", "all-to-all", "--fabric", "ring:n=1024", "--group", "1024", "--size",
        "1MiB"],
    # the full mesh's 8 million cables are 3.3 GB of fabric, and its router's index of
    # 15,996,000 directed links died past them under 4 GB (a MemoryError): refused in one
    # line before the index is made (routing.MAX_ROUTER_LINKS, NETMODEL_MAX_ROUTER_LINKS).
    # Its direct all-gather kept a route per pair, 16 million; a pair that shares a cable
    # now has no entry of its own (route_plans._routed): with the limit raised it is routed
    # in 5.4 GB and 26 s, direct 2.907 ms (rings 5.8 s). Refusing direct by pairs would
    # have left auto a ring 2,000x slower without a word.
    "all-gather on a full mesh of 4,000 GPUs": [
        "collective", "all-gather", "--fabric", "full-mesh:n=4000", "--group", "4000",
        "--size", "1GiB"],
    # pairwise's 127 steps each solved the linear programme of the joint split
    # (netmodel.collectives.route_joint) whole where the one folded by the torus's
    # rotation beat the own routes: 299 s on an 8x4x4 torus. Now the folded optimum's
    # flows are the split (its busiest link, the step's time, the whole programme's): 4 s
    "all-to-all on a torus of 128 GPUs": [
        "collective", "all-to-all", "--fabric", "torus:dims=8x4x4", "--group", "128",
        "--size", "1MiB"],
}


def large_case(name: str, argv: list[str]) -> Case:
    def run(d: Path) -> str | None:
        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        try:
            p = subprocess.run([sys.executable, "-m", "netmodel", *argv], cwd=d, text=True,
                               capture_output=True, timeout=55, preexec_fn=limit,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except subprocess.TimeoutExpired:
            return "over 55 s"
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        if any("Traceback" in ln or "Error:" in ln.split(" ")[0] for ln in lines):
            return f"traceback | {lines[-1][:200]}"
        if p.returncode == 2:
            return None if len(lines) == 1 and lines[0].startswith("error: ") else \
                f"refused in {len(lines)} lines | {' / '.join(lines)[:200]}"
        return None if p.returncode in (0, 3) else f"exit {p.returncode} | {lines[-1:]}"
    return f"large {name}", run


#: The library called with numpy scalars, NaN, bools and huge integers: name -> (call,
#: words its UserError holds; None: the call is taken). A refusal names the parameter and
#: never a ``--flag`` (the command line's words).
def _ev(**kw):
    return lambda: api.evaluate("Llama-3-8B", "H100-SXM", **kw)


def _se(**kw):
    return lambda: api.search("Llama-3-8B", "H100-SXM", **kw)


def _ct(sizes, group, fabric="ring:n=8"):
    return lambda: api.collective_time(fabric, "all-reduce", sizes, group)


API: dict[str, tuple[Callable[[], object], tuple[str, ...] | None]] = {
    "evaluate tp np.int64": (_ev(tp=np.int64(1), batch=4), None),
    "evaluate batch np.int32": (_ev(tp=1, batch=np.int32(4)), None),
    # a count given in code is an int: a float, a whole one too, is refused
    "evaluate batch np.float64(4.0)": (_ev(tp=1, batch=np.float64(4.0)),
                                       ("batch", "(an int)", "got 4.0")),
    "evaluate context np.float32(1000)": (_ev(tp=1, batch=4, context=np.float32(1000)),
                                          ("context", "(an int)", "got 1000")),
    "evaluate tp np.uint8(1)": (_ev(tp=np.uint8(1), batch=4), None),
    "evaluate batch True": (_ev(tp=1, batch=True), ("batch", "True")),
    "evaluate tp True": (_ev(tp=True, batch=4), ("TP degree", "True")),
    "evaluate batch np.nan": (_ev(tp=1, batch=np.nan), ("batch", "nan")),
    "evaluate batch np.True_": (_ev(tp=1, batch=np.bool_(True)), ("batch",)),
    "evaluate batch 2**63": (_ev(tp=1, batch=2**63), ("batch", "1,000,000,000")),
    "evaluate batch an array of one": (_ev(tp=1, batch=np.array([4])), ("batch", "array")),
    "evaluate context np.float32 nan": (_ev(tp=1, batch=4, context=np.float32("nan")),
                                        ("context", "nan")),
    "evaluate expert_skew np.nan": (
        lambda: api.evaluate("Mixtral-8x7B", "H100-SXM", tp=8, ep=8, batch=4,
                             expert_skew=np.nan), ("expert_skew", "nan")),
    "evaluate expert_skew True": (
        lambda: api.evaluate("Mixtral-8x7B", "H100-SXM", tp=8, ep=8, batch=4,
                             expert_skew=True), ("expert_skew", "True")),
    "search max_batch np.int64": (_se(max_batch=np.int64(8)), None),
    "search tp an array": (_se(tp=np.array([1, 2]), max_batch=4), None),
    "search max_batch True": (_se(max_batch=True), ("max_batch", "True")),
    "search max_batch 10**9": (_se(max_batch=10**9), ("max_batch", "2,000,000")),
    "search tp (True,)": (_se(tp=(True,), max_batch=4), ("TP degree", "True")),
    "collective_time sizes np.nan": (_ct(np.nan, 8), ("message size", "nan")),
    "collective_time sizes [1e6, nan]": (_ct([1e6, np.nan], 8), ("message size", "nan")),
    "collective_time sizes True": (_ct(True, 8), ("message size", "True")),
    "collective_time group np.int64": (_ct(1e6, np.int64(8)), None),
    "collective_time group True": (_ct(1e6, True), ("group", "True")),
    "collective_time on a scenario, group 10**6": (_ct(1e6, 10**6, "h100-dgx"),
                                                   ("an instance of 1000000 GPUs",
                                                    "does not fit scenario", "32 GPUs")),
    "collective_time on a scenario, group 8, then 10**6 again": (
        lambda: (api.collective_time("h100-dgx", "all-reduce", 1e6, 8),
                 api.collective_time("h100-dgx", "all-reduce", 1e6, 10**6)),
        ("an instance of 1000000 GPUs", "does not fit scenario")),
    "build_fabric ring n np.int64": (lambda: api.build_fabric("ring", {"n": np.int64(8)}),
                                     None),
    "build_fabric ring n True": (lambda: api.build_fabric("ring", {"n": True}),
                                 ("n must be", "True")),
    "build_fabric ring n nan": (lambda: api.build_fabric("ring", {"n": np.nan}),
                                ("n must be", "nan")),
    "build_fabric ring n 10**7": (lambda: api.build_fabric("ring", {"n": 10**7}),
                                  ("10,000,000 nodes", "NETMODEL_MAX_FABRIC_NODES")),
    "build_fabric fat-tree k 10**4": (lambda: api.build_fabric("fat-tree", {"k": 10**4}),
                                      ("over the limit",)),
}


def api_case(name: str, call: Callable[[], object], words: tuple[str, ...] | None) -> Case:
    def run(d: Path) -> str | None:
        try:
            call()
        except UserError as exc:
            if words is None:
                return f"refused | {str(exc)[:200]}"
            text = str(exc)
            missing = [w for w in words if w not in text]
            if missing:
                return f"names not {missing} | {text[:200]}"
            flags = re.findall(r"(?<![\w-])--[a-z][\w-]*", text)
            return f"names flags {flags} | {text[:200]}" if flags else None
        except Exception as exc:   # noqa: BLE001 - what the case is looking for
            return f"exception {type(exc).__name__}: {str(exc)[:200]}"
        return None if words is None else "taken"
    return f"api {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (symmetric_case(n, a, b, f, p) for n, (a, b, f, p) in SYMMETRIC.items())
    yield from (api_case(n, c, w) for n, (c, w) in API.items())
    yield from (large_case(n, a) for n, a in LARGE.items())


def main() -> int:
    return run_round(cases(), "hostile22-")


if __name__ == "__main__":
    sys.exit(main())
