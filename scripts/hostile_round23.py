"""Hostile-input round 23, on what rounds 15-22 (scripts/hostile_round15.py .. 22.py) left
untried: files that agree in name and differ in content (two GPU files defining ``Mine``,
two model files defining ``M``, a scenario file named as a shipped one) given where a
command keys its work by name; one GPU asked for in two places (``--scenario NAME@GPU`` and
``--gpu``, ``--scenarios NAME@GPU`` and ``--gpus``); a second output inside the first's
folder; environment variables the run reads (a ``MPLCONFIGDIR`` that cannot be a folder,
an ASCII-only ``PYTHONIOENCODING``); files of odd encodings and numbers (a measurements CSV
with ``1e309``, ``-0``, hex, a subnormal, other scripts' digits, a NUL, a column twice; a
GPU or model JSON with a key twice, ``NaN``, ``Infinity``, ``4096.0``, 50,000 levels of
nesting; a profile's GEMM curve of odd types; a scenario's ``$scaleup`` tokens); the
newest options (calibrate's pp/ep/attention_dp/expert_skew columns, serve's workload files,
``cost --clock``, the reliability options); and files of very many entries, which must be
read in bounded time (a child process under a 4 GB address space, 55 s).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target); a child process prints its output and nothing from matplotlib.

Usage: ``python scripts/hostile_round23.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner) but
the environment and large cases (child processes). About two minutes on two cores.
"""

from __future__ import annotations

import json
import os
import resource
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

INFER = ["infer", "--model", "Llama-3-8B", "--batch", "4", "--tp", "1"]
SEARCH = ["search", "--model", "Llama-3-8B", "--max-batch", "4"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot"]
SWEEP = ["sweep", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot", "--param",
         "cost.pue=1.1,1.2"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "64",
         "--tp-only"]
STUDY = ["study", "lite-gpu", "--no-plot", "--no-sweep", "--no-paper", "--no-reliability",
         "--no-cost", "--no-crossovers", "--no-serving", "--no-packed", "--models",
         "Llama-3-8B", "--out", "o"]
COSTS = ["costs", "--fabric", "ring:n=8", "--groups", "8", "--sizes", "1MiB"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
         "--max-batch", "8", "--trials", "5"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml"]

#: Two GPU files of one name: an H100 and one of a hundredth of its network bandwidth.
GPU = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "test"\n'
SLOW = GPU.replace("source", "network_bandwidth_multiplier = 0.01\nsource")
FAST = GPU.replace("source", "flops_multiplier = 2\nsource")
#: Two model files of one name (32 and 16 layers).
MODEL = ('[model."M"]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n'
         'ffn = 14336\nvocab = 128256\ngated_mlp = true\nmax_context = 8192\nsource = "t"\n')
HALF = MODEL.replace("layers = 32", "layers = 16")
DGX = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text()
OCS = (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text()
#: A measurements CSV of four steps (docs/compute.md's Splitwise rows), the last swapped.
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
STEPS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
         "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298",
         "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386"]
#: A HuggingFace config.json of a Llama-3-8B shape.
HF = json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
                 "intermediate_size": 14336, "num_attention_heads": 32,
                 "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
                 "max_position_embeddings": 8192, "model_type": "llama"})
#: A GPU file in JSON (an H100-SXM's figures).
GPU_JSON = json.dumps({"gpu": {"Mine": {
    "sms": 132, "bf16_dense_TFLOPs": 989, "fp8_dense_TFLOPs": 1979, "hbm_capacity_GB": 85.5,
    "hbm_bandwidth_TBps": 3.35, "scaleup_GBps_per_direction": 450, "scaleout_Gbps": 400,
    "tdp_W": 700, "max_instance": 8, "source": "test"}}})


def last_row(row: str) -> dict[str, Made]:
    """A measurements file of :data:`STEPS` and ``row``."""
    return {"m.csv": HEADER + "\n".join([*STEPS, row]) + "\n"}


def latency(value: str) -> dict[str, Made]:
    return last_row(f"Llama-2-70B,H100-SXM,8,4,prefill,512,,{value}")


def curve(lines: str) -> dict[str, Made]:
    """A profile whose gemm_efficiency is ``lines`` (a value or a curve)."""
    return {"p.toml": f'[profile]\nname = "c"\n[parameters.gemm_efficiency]\n{lines}\n'
                      f'source = "s"\n'}


def ocs(key: str, value: str) -> dict[str, Made]:
    """lite-ocs as s.toml with ``key``'s value ``value``."""
    text = OCS.replace(f"\n{key} = ", f"\n{key} = {value}  # was: ", 1)
    assert text != OCS, key
    return {"s.toml": text}


def _earlier_vidur(d: Path) -> None:
    r = invoke_in([*COSTS, "--format", "vidur", "-o", "d"], d)
    assert r.exit_code == 0, r.output


#: Refusals: name -> (argv, files made in the case's folder, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- one name, two contents: a command that keys its work by name ---------------------
    # the decode pool was costed on the prefill GPU's fabric model (TBT 16.21 ms at TP 4
    # where alone it is 42.97 ms at TP 2) and both pools printed as Mine
    "serve two pool GPUs of one name": (
        [*SERVE, "--prefill-gpu", "a.toml", "--decode-gpu", "b.toml"],
        {"a.toml": GPU, "b.toml": SLOW},
        ("--prefill-gpu 'a.toml'", "--decode-gpu 'b.toml'", "two different GPUs named 'Mine'",
         "give each its own name")),
    "serve a pool GPU named as the scenario's": (
        ["serve", "--scenario", "s.toml", *SERVE[3:], "--decode-gpu", "b.toml"],
        {"a.toml": GPU, "b.toml": SLOW,
         "s.toml": DGX.replace('gpu = "H100-SXM"', 'gpu = "a.toml"', 1)},
        ("the GPU of --scenario 's.toml'", "--decode-gpu 'b.toml'", "'Mine'")),
    # two rows named Mine, the second's ideal figure the first's
    "study two GPUs of one name": (
        [*STUDY, "--no-fabric", "--gpus", "g.toml,h.toml"], {"g.toml": GPU, "h.toml": FAST},
        ("--gpus 'g.toml,h.toml'", "two different GPUs are named 'Mine'", "flops_bf16")),
    "study two models of one name": (
        [*STUDY[:10], "--models", "a.toml,b.toml", "--out", "o", "--no-fabric", "--gpus",
         "Lite"], {"a.toml": MODEL, "b.toml": HALF},
        ("--models 'a.toml,b.toml'", "two different models are named 'M'", "layers 32 and 16")),
    "compare two GPUs of one name": (
        [*COMPARE, "--scenarios", "h100-dgx", "--gpus", "g.toml,h.toml"],
        {"g.toml": GPU, "h.toml": FAST}, ("--gpus 'g.toml,h.toml'", "'Mine'", "differently")),
    "compare two models of one name": (
        [*COMPARE[:1], "--models", "a.toml,b.toml", *COMPARE[3:], "--scenarios", "h100-dgx"],
        {"a.toml": MODEL, "b.toml": HALF}, ("--models 'a.toml,b.toml'", "'M'")),
    "compare two scenario files of one name": (
        [*COMPARE, "--scenarios", "a.toml,b.toml"],
        {"a.toml": OCS.replace('name = "lite-ocs"', 'name = "x"', 1),
         "b.toml": (ROOT / "netmodel/data/scenarios/lite-direct.toml").read_text().replace(
             'name = "lite-direct"', 'name = "x"', 1)},
        ("--scenarios 'a.toml,b.toml'", "differ but are both x@Lite")),
    "compare a file named as a shipped scenario": (
        [*COMPARE, "--scenarios", "h100-dgx,s.toml"],
        {"s.toml": DGX.replace("gpus_per_server", "gpus_per_server", 1).replace(
            'description = "', 'description = "edited: ', 1)},
        ("'h100-dgx' and 's.toml' differ", "h100-dgx@H100-SXM")),
    # -- one GPU asked for in two places ---------------------------------------------------
    # --gpu swapped the scenario's GPU again: h100-dgx@A100-SXM-80GB ran without a word
    "infer --scenario NAME@GPU with another --gpu": (
        [*INFER, "--gpu", "A100-SXM-80GB", "--scenario", "h100-dgx@Lite"], {},
        ("--scenario 'h100-dgx@Lite'", "--gpu 'A100-SXM-80GB'", "give the GPU once")),
    "search --scenario NAME@FILE with --gpu another file of that name": (
        [*SEARCH, "--gpu", "g.toml", "--scenario", "h100-dgx@h.toml"],
        {"g.toml": GPU, "h.toml": FAST},
        ("--scenario 'h100-dgx@h.toml'", "--gpu 'g.toml'", "another of that name")),
    "infer --fabric NAME@GPU with another --gpu": (
        [*INFER, "--gpu", "A100-SXM-80GB", "--fabric", "h100-dgx@Lite"], {},
        ("h100-dgx@Lite", "'A100-SXM-80GB'")),
    # --gpus ran lite-flat@Lite alone: the GPU '@' named was never run
    "compare --scenarios NAME@GPU with --gpus": (
        [*COMPARE, "--scenarios", "lite-flat@Lite+NetBW", "--gpus", "Lite"], {},
        ("--scenarios 'lite-flat@Lite+NetBW'", "--gpus (Lite)", "put 'Lite+NetBW' in --gpus")),
    "sweep --scenarios NAME@GPU with --gpus": (
        [*SWEEP, "--scenarios", "lite-flat@Lite+NetBW", "--gpus", "Lite"], {},
        ("--scenarios 'lite-flat@Lite+NetBW'", "--gpus (Lite)")),
    "study --scenarios NAME@GPU": (
        [*STUDY, "--gpus", "Lite", "--scenarios", "lite-flat@Lite+NetBW"], {},
        ("--scenarios 'lite-flat@Lite+NetBW'", "(those on H100-SXM aside)")),
    # -- a second output inside the first's folder ------------------------------------------
    # the figure was drawn into d, then d refused as holding it: exit 2, d/x.png written
    "costs --format vidur with --plot inside its folder": (
        [*COSTS, "--format", "vidur", "-o", "d", "--plot", "d/x.png"], {"d": _earlier_vidur},
        ("--plot 'd/x.png' is inside --output 'd'", "give a figure path outside it")),
    "costs --format vidur with --plot inside a new folder": (
        [*COSTS, "--format", "vidur", "-o", "d/", "--plot", "./d/sub/x.png"], {},
        ("--plot './d/sub/x.png'", "--output 'd/'")),
    "costs -o replacing its --fabric file": (
        ["costs", "--fabric", "f.json", "--groups", "8", "--sizes", "1MiB", "--format", "json",
         "-o", "./f.json"],
        {"f.json": lambda d: invoke_in(["topology", "export", "ring:n=8", "-o", "f.json"], d)},
        ("'./f.json'", "a file this command reads")),
    "calibrate -o replacing its scenario's GPU file": (
        [*CALIBRATE[:4], "g.toml", "--scenario", "h100-dgx@g.toml"],
        {**latency("0.1326"), "g.toml": GPU},
        ("--out 'g.toml' is the file --scenario 'h100-dgx@g.toml' reads",)),
    "sweep --out a folder above": ([*SWEEP, "--scenarios", "h100-dgx", "--out", "sub/.."],
                                   {"sub/x": "x"}, ("'sub/..'", "the folder this command runs")),
    "sweep --out an existing file": ([*SWEEP, "--scenarios", "h100-dgx", "--out", "k.txt"],
                                     {"k.txt": "mine"}, ("--out", "'k.txt' is a file")),
    # -- a measurements CSV's odd numbers and columns ------------------------------------------
    **{f"calibrate latency_s {v!r}": (CALIBRATE, latency(v), ("m.csv: row 5", "latency_s",
                                                              shown))
       for v, shown in (("1e309", "'1e309'"), ("-0", "'-0'"), ("0x1p-3", "'0x1p-3'"),
                        ("1e-320", "1e-09 to 1,000,000 s"), ("inf", "inf"),
                        ("\u0661\u0662", "ARABIC-INDIC DIGIT ONE"), ("1_0", "'_'"))},
    # a NUL byte: no text file holds one, refused as the file is read (round 25), where it is
    "calibrate latency_s '0.1326\x00'": (CALIBRATE, latency("0.1326\x00"),
                                         ("'m.csv'", "NUL byte (\\x00) at line 5")),
    "calibrate tp 0x8": (CALIBRATE, last_row("Llama-2-70B,H100-SXM,0x8,4,prefill,512,,0.13"),
                         ("row 5", "tp", "'0x8'")),
    "calibrate a column twice": (
        CALIBRATE, {"m.csv": HEADER.replace("\n", ",tp\n") + "\n".join(
            s + ",8" for s in STEPS) + "\n"}, ("m.csv", "tp given twice")),
    "calibrate a UTF-16 file": (
        CALIBRATE, {"m.csv": b"\xff\xfe" + (HEADER + "\n".join(STEPS)).encode("utf-16-le")},
        ("'m.csv'", "not a UTF-8 text file")),
    "calibrate attention_dp not dividing tp": (
        CALIBRATE, {"m.csv": HEADER.replace("\n", ",attention_dp\n") + "\n".join(
            [*(s + ",1" for s in STEPS), "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.13,3"])
            + "\n"}, ("row 5", "attention DP degree 3", "allowed: 1, 2, 4, 8")),
    "calibrate expert_skew with ep 1": (
        CALIBRATE, {"m.csv": HEADER.replace("\n", ",expert_skew\n") + "\n".join(
            [*(s + ",1" for s in STEPS), "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.13,2"])
            + "\n"}, ("row 5", "expert_skew 2", "give ep N > 1")),
    # -- JSON files: a key twice, NaN, Infinity, numbers past a float, nesting ---------------
    "GPU JSON with a key twice": (
        ["hardware", "--gpu-file", "g.json"],
        {"g.json": GPU_JSON.replace('"sms": 132', '"sms": 132, "sms": 1')},
        ("g.json", "'sms' is given twice")),
    "GPU JSON with NaN": (["hardware", "--gpu-file", "g.json"],
                          {"g.json": GPU_JSON.replace("989", "NaN")},
                          ("bf16_dense_TFLOPs", "got nan")),
    "GPU JSON with Infinity": (["hardware", "--gpu-file", "g.json"],
                               {"g.json": GPU_JSON.replace("989", "Infinity")},
                               ("bf16_dense_TFLOPs", "got inf")),
    "GPU JSON nested 100,000 deep": (["hardware", "--gpu-file", "g.json"],
                                     {"g.json": "[" * 100000 + "]" * 100000},
                                     ("g.json nests deeper than 32 levels",)),
    "GPU TOML nested 5,000 deep": (["hardware", "--gpu-file", "g.toml"],
                                   {"g.toml": "a = " + "{b=" * 5000 + "1" + "}" * 5000},
                                   ("g.toml nests deeper than 32 levels",)),
    "HF config with a key twice": (
        ["models", "--hf-config", "config.json"],
        {"config.json": HF.replace('"hidden_size": 4096', '"hidden_size": 4096, '
                                                          '"hidden_size": 8192')},
        ("config.json", "'hidden_size' is given twice")),
    "HF config hidden_size 4096.0": (
        ["models", "--hf-config", "config.json"], {"config.json": HF.replace("4096", "4096.0")},
        ("hidden_size", "whole number", "4096.0")),
    "HF config num_hidden_layers 1e309": (
        ["models", "--hf-config", "config.json"],
        {"config.json": HF.replace('"num_hidden_layers": 32', '"num_hidden_layers": 1e309')},
        ("1e309", "beyond the range of a float")),
    "HF config text_config 2,000 deep": (
        ["models", "--hf-config", "config.json"],
        {"config.json": '{"text_config":' * 2000 + HF + "}" * 2000},
        ("nests deeper than 32 levels",)),
    # -- a profile's GEMM curve ----------------------------------------------------------------
    **{f"profile curve {name}": ([*INFER, "--gpu", "H100-SXM", "--profile", "p.toml"],
                                 curve(lines), ("p.toml", "[parameters.gemm_efficiency]", word))
       for name, lines, word in (
           ("intensities equal", "intensity = [10, 10]\nefficiency = [0.2, 0.6]",
            "must increase"),
           ("efficiency true", "intensity = [10, 1000]\nefficiency = [0.2, true]", "True"),
           ("efficiency a string", "intensity = [10, 1000]\nefficiency = ['0.2', 0.6]",
            "'0.2'"),
           ("of 65 points", "intensity = [" + ",".join(str(10 + i) for i in range(65))
            + "]\nefficiency = [" + ",".join(["0.5"] * 65) + "]", "2 to 64 points"),
           ("lengths differ", "intensity = [10, 1000, 3000]\nefficiency = [0.2, 0.6]",
            "the same length"),
           ("with a value too", "intensity = [10, 1000]\nefficiency = [0.2, 0.6]\nvalue = 0.5",
            "not both"),
           ("efficiency -0.0", "intensity = [10, 1000]\nefficiency = [-0.0, 0.6]", "-0.0"))},
    "calibrate gemm_efficiency over a base's curve": (
        [*CALIBRATE, "--base", "b.toml", "--fit",
         "gemm_efficiency,layer_overhead_s,decode_sequence_overhead_s"],
        {**latency("0.1326"), "b.toml": curve(
            "intensity = [10, 1000]\nefficiency = [0.2, 0.6]")["p.toml"]},
        ("gemm_efficiency cannot be fitted over", "curve")),
    # -- a scenario's fabric tokens ------------------------------------------------------------
    **{f"scenario bandwidth {v}": ([*COMPARE, "--scenarios", "s.toml"], ocs("bandwidth", v),
                                   ("s.toml", "[fabric]", word))
       for v, word in (('"$scaleup*$scaleup"', "is not one of the tokens"),
                       ('"1e308*$scaleup"', "beyond the range of a float"),
                       ('"-1*$scaleup"', "is not one of the tokens"),
                       ('"0*$scaleup"', "bandwidth must be a finite number > 0"))},
    "scenario reconfiguration_time 1e309s": (
        [*COMPARE, "--scenarios", "s.toml"], ocs("reconfiguration_time", '"1e309s"'),
        ("reconfiguration_time", "'1e309s'")),
    "scenario gpu is itself": ([*COMPARE, "--scenarios", "s.toml"],
                               {"s.toml": OCS.replace('gpu = "Lite"', 'gpu = "s.toml"', 1)},
                               ("s.toml", "expected a top-level table 'gpu'")),
    # -- the newest options' values ----------------------------------------------------------
    "cost --clock 2": (["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--clock",
                        "2"], {}, ("--clock '2'", "[0.05, 1.5]")),
    "cost --clock 1GHz": (["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B",
                           "--clock", "1GHz"], {}, ("--clock '1GHz'", "plain number")),
    "availability --rate gpu=1e-320": ([*AVAIL, "--rate", "gpu=1e-320"], {},
                                       ("--rate gpu '1e-320'", "smallest number")),
    "availability --rate gpu=1/y": ([*AVAIL, "--rate", "gpu=1/y"], {},
                                    ("--rate gpu '1/y'", "per hour")),
    "availability --detection 1e300s": ([*AVAIL, "--detection", "1e300s"], {},
                                        ("--detection '1e300s'", "100 y")),
    "availability --seed 2**64": ([*AVAIL, "--seed", str(2**64)], {},
                                  ("--seed", "2**63 - 1")),
    "serve workload prompt 1500.0": ([*SERVE, "--workload", "w.toml"],
                                     {"w.toml": "prompt = 1500.0\noutput = 13\n"},
                                     ("w.toml", "prompt must be a whole number", "1500.0")),
    "serve workload past the context": ([*SERVE[:4], "Llama-3-8B", *SERVE[5:], "--workload",
                                         "w.toml"], {"w.toml": "prompt = 8190\noutput = 3\n"},
                                        ("--workload 'w.toml'", "context of 8193")),
    "serve workload JSON rate Infinity": (
        [*SERVE, "--workload", "w.json"],
        {"w.json": '{"prompt": 1500, "output": 13, "rate": Infinity}'}, ("rate", "got inf")),
    "sweep cost parameters that overflow": (
        [*SWEEP[:-1], "cost.lifetime=1e-300s,1y", "--scenarios", "h100-dgx"], {},
        ("--param 'cost.lifetime=1e-300s,1y'", "overflow to infinity")),
    "sweep a parameter unknown beside a known one": (
        [*SWEEP, "--param", "cost.PUE=1.3,1.4", "--scenarios", "h100-dgx"], {},
        ("--param 'cost.PUE=1.3,1.4'", "unknown parameter 'cost.PUE'")),
    "sweep one axis twice": (
        [*SWEEP, "--param", "cost.pue=1.3,1.4", "--scenarios", "h100-dgx"], {},
        ("--param 'cost.pue=1.1,1.2' and --param 'cost.pue=1.3,1.4'", "give each parameter")),
    "costs --sizes factor 1.0000001": ([*COSTS[:-1], "1KiB:1GiB:1.0000001"], {},
                                       ("138,629,443 rows", "--max-rows")),
    "costs --nccl-release 2.26.2.1": ([*COSTS, "--nccl-release", "2.26.2.1"], {},
                                      ("--nccl-release", "MAJOR.MINOR[.PATCH]")),
    "topology export of an OCS fabric as ASTRA-sim": (
        ["topology", "export", "lite-ocs", "-o", "a.yml"], {},
        ("spec 'lite-ocs'", "cannot be expressed in ASTRA-sim")),
    "topology plot --title of 10,001 characters": (
        ["topology", "plot", "ring:n=8", "-o", "x.png", "--title", "x" * 10001], {},
        ("--title", "10,000 characters")),
}

#: Values taken (exit 0, or 3 for an unmet target): name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "serve one GPU file for both pools": (
        [*SERVE, "--prefill-gpu", "a.toml", "--decode-gpu", "a.toml"], {"a.toml": GPU}),
    "infer --scenario NAME@GPU with that --gpu": (
        [*INFER, "--gpu", "Lite", "--scenario", "h100-dgx@Lite"], {}),
    "infer --scenario NAME with --gpu": ([*INFER, "--gpu", "Lite", "--scenario", "h100-dgx"],
                                         {}),
    "compare the baseline NAME@GPU with --gpus": (
        [*COMPARE, "--scenarios", "h100-dgx@Lite,lite-flat", "--gpus", "Lite+BW"], {}),
    "study --scenarios NAME@H100-SXM": ([*STUDY, "--gpus", "Lite", "--scenarios",
                                         "lite-flat@H100-SXM"], {}),
    "costs --format vidur with --plot beside its folder": (
        [*COSTS, "--format", "vidur", "-o", "d", "--plot", "dx.png"], {}),
    "calibrate tp 8.0 and +8": (
        CALIBRATE, {"m.csv": HEADER + "\n".join(
            [*STEPS[:2], STEPS[2].replace(",8,32,", ",8.0,32,"),
             "Llama-2-70B,H100-SXM,+8,4,prefill,512,,0.1326"]) + "\n"}),
    "calibrate a model name quoted with a newline": (
        CALIBRATE, last_row('"Llama-2-70B\n",H100-SXM,8,4,prefill,512,,0.1326')),
    "profile curve at its bounds": ([*INFER, "--gpu", "H100-SXM", "--profile", "p.toml"],
                                    curve("intensity = [1e-6, 1e9]\nefficiency = [1e-4, 1]")),
    "scenario bandwidth ' 4 * $scaleup'": ([*COMPARE, "--scenarios", "s.toml"],
                                           ocs("bandwidth", '" 4 * $scaleup"')),
    "serve workload of one output token": ([*SERVE, "--workload", "w.toml"],
                                           {"w.toml": "prompt = 1500\noutput = 1\n"}),
    "availability --warmup 1e-300s": ([*AVAIL, "--warmup", "1e-300s"], {}),
}


def _child(argv: list[str], d: Path, env: dict[str, str] | None = None,
           timeout: float = 55) -> subprocess.CompletedProcess | str:
    """``netmodel argv`` as a user runs it (a child process under a 4 GB address space), or
    why it did not end."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    try:
        return subprocess.run([sys.executable, "-m", "netmodel", *argv], cwd=d, text=True,
                              capture_output=True, timeout=timeout, preexec_fn=limit,
                              env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    except subprocess.TimeoutExpired:
        return f"over {timeout:g} s"


#: Child processes in a hostile environment: name -> (argv, environment, files, what stderr
#: must be: None, empty; else the one line it starts with and exit status 2).
ENVIRONMENT: dict[str, tuple[list[str], dict[str, str], dict[str, Made], str | None]] = {
    # matplotlib said 'mkdir -p failed' and 'created a temporary cache directory' after
    # the output, and rebuilt its font cache each run
    "MPLCONFIGDIR a file, costs --plot": (
        [*COSTS, "-o", "t.csv", "--plot", "t.png"], {"MPLCONFIGDIR": "/etc/passwd"}, {}, None),
    "MPLCONFIGDIR under a file, topology plot": (
        ["topology", "plot", "ring:n=8", "-o", "a.png"],
        {"MPLCONFIGDIR": "/etc/passwd/sub"}, {}, None),
    "PYTHONIOENCODING ascii, a refusal quoting unicode": (
        [*INFER, "--gpu", "\u00c4\u00d6"], {"PYTHONIOENCODING": "ascii"}, {},
        "error: --gpu '"),
    "LC_ALL C, a refusal quoting unicode": (
        [*INFER, "--gpu", "\u00c4\u00d6"], {"LC_ALL": "C", "LANG": "C"}, {}, "error: --gpu '"),
    "LC_ALL C, a unicode time unit taken": (
        [*INFER, "--gpu", "H100-SXM", "--tbt", "50\u00b5s"], {"LC_ALL": "C", "LANG": "C"}, {},
        None),
}


def environment_case(name: str, argv: list[str], env: dict[str, str],
                     files: dict[str, Made], starts: str | None) -> Case:
    def run(d: Path) -> str | None:
        make(d, files)
        p = _child(argv, d, env)
        if isinstance(p, str):
            return p
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()
                 and not ln.startswith("wrote ")]
        if starts is None:
            return None if p.returncode == 0 and not lines else \
                f"exit {p.returncode} | {' / '.join(lines)[:250]}"
        if p.returncode == 2 and len(lines) == 1 and lines[0].startswith(starts):
            return None
        return f"exit {p.returncode} | {' / '.join(lines)[:250]}"
    return f"environment {name}", run


def _many_gpus(d: Path) -> None:
    (d / "g.toml").write_text("".join(f'[gpu."G{i}"]\nderive_from = "H100-SXM"\n'
                                      f'source = "t"\n' for i in range(60000)))


def _many_models(d: Path) -> None:
    (d / "m.toml").write_text("".join(MODEL.replace('"M"', f'"M{i}"') for i in range(20000)))


def _many_rows(d: Path) -> None:
    rows = [f"Llama-2-70B,H100-SXM,8,{1 + i % 64},decode,,{200 + i},0.03" if i % 2 else
            f"Llama-2-70B,H100-SXM,8,{1 + i % 16},prefill,{100 + i},,0.1" for i in range(2000)]
    (d / "m.csv").write_text(HEADER + "\n".join(rows) + "\n")


#: Files of very many entries, within the size limit of such files (4 MiB): read in
#: bounded time and memory (hardware 60,000 GPUs: 12 s; models 20,000: 7 s; calibrate
#: 10,000 rows, the most it takes: 28 s wall, 2,000 here).
LARGE: dict[str, tuple[list[str], Callable[[Path], None]]] = {
    "hardware of a GPU file of 60,000 GPUs": (["hardware", "--gpu-file", "g.toml"],
                                              _many_gpus),
    "models of a model file of 20,000 models": (["models", "--model-file", "m.toml"],
                                                _many_models),
    "calibrate on 2,000 measurements": (CALIBRATE, _many_rows),
}


def large_case(name: str, argv: list[str], made: Callable[[Path], None]) -> Case:
    def run(d: Path) -> str | None:
        made(d)
        p = _child(argv, d)
        if isinstance(p, str):
            return p
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        if any("Traceback" in ln for ln in lines) or p.returncode not in (0, 3):
            return f"exit {p.returncode} | {lines[-1:]}"
        return None
    return f"large {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (environment_case(n, a, e, f, s) for n, (a, e, f, s) in ENVIRONMENT.items())
    yield from (large_case(n, a, m) for n, (a, m) in LARGE.items())


def main() -> int:
    return run_round(cases(), "hostile23-")


if __name__ == "__main__":
    sys.exit(main())
