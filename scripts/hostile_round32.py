"""Hostile-input round 32, on what rounds 15-31 (scripts/hostile_round15.py .. 31.py) left
least tried: numpy scalars (``np.bool_``, ``np.int64``, ``np.float32``), Fractions and
Decimals given to the library's entry points (every true/false field of the public
dataclasses: :class:`~compute.roofline_options.RooflineOptions`,
:class:`~compute.models.ModelSpec`, :class:`~compute.hardware.GpuSpec`,
:class:`~compute.comm.ScaleUpLowerBound`, a calibration; a fabric builder's flags; the
analysis' ``validated``; the true/false parameters of run_compare, the ``*_files``
writers, partition, cost_summary and others; a parallel configuration's degrees and
``ep=True``; a scenario's fabric values; a collective report's group and seed;
:class:`Slo`, search and evaluate numbers; a fabric's sizes); files of the user's (a GPU,
model, scenario or profile file with a key twice, a byte-order mark, CRLF line ends, a
number of 1e308, a table nested deep, a name 10,000 characters long, a name holding a
control character or a path separator); measurements CSVs for ``netmodel calibrate`` with
quoted fields, an extra column, blank lines, semicolons for commas; outputs (``--out``
under a file, in a read-only folder (``/proc``: the rounds run as root, whom a mode does
not stop), over a stale partial output); and ``NETMODEL_*`` settings holding junk
(``NETMODEL_JOBS=0``, ``-1``, ``abc``).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target); a library refusal is a UserError naming the parameter; a library value
taken gives the result it shows (a numpy true/false kept as Python's bool).

Usage: ``python scripts/hostile_round32.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner); about
a minute on two cores.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_tally import (  # noqa: E402
    Case,
    Made,
    one_line_refusal,
    refusal_case,
    run_round,
    taken_case,
)

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "8"]
#: infer of Llama-3-8B on the GPU ``Mine`` a GPU file g.toml (or g.json) holds.
MINE = ["infer", "--model", "Llama-3-8B", "--tp", "1", "--batch", "8", "--gpu", "Mine",
        "--gpu-file"]
#: infer of the model ``NAME`` a model file m.toml holds.
MODEL = ["infer", "--gpu", "H100-SXM", "--tp", "1", "--batch", "8", "--model-file", "m.toml",
         "--model"]
SEARCH = ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--phases",
           "decode", "--max-batch", "8"]
#: compare on the scenario file s.toml.
SCEN = ["compare", "--models", "Llama-3-8B", "--phases", "decode", "--max-batch", "8",
        "--scenarios", "s.toml"]
TF = "true or false"

#: A GPU file of one GPU (an H100-SXM by another name), its keys after the table line.
GPU_HEAD = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "what-if: a test"\n'
#: A model file of one model (Llama-3-8B by another name).
MODEL_HEAD = ('[model."Mine"]\nhidden = 4096\nheads = 32\nkv_heads = 8\nffn = 14336\n'
              'vocab = 128256\ngated_mlp = true\nsource = "what-if: a test"\n')
#: Measurements of two decode steps of Llama-3-8B, as calibrate reads them.
CSV_HEAD = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
CSV_ROWS = ("Llama-3-8B,H100-SXM,1,8,decode,,96,0.0078\n"
            "Llama-3-8B,H100-SXM,1,64,decode,,96,0.0110\n"
            "Llama-3-8B,H100-SXM,1,8,decode,,2048,0.0090\n"
            "Llama-3-8B,H100-SXM,2,8,decode,,96,0.0060\n")
CSV = CSV_HEAD + CSV_ROWS
SCENARIO = (Path(__file__).resolve().parents[1] / "netmodel" / "data" / "scenarios"
            / "h100-dgx.toml").read_text()
PROFILE = (Path(__file__).resolve().parents[1] / "compute" / "data" / "profiles"
           / "vllm-h100-2024.toml").read_text()


def _stale(d: Path) -> None:
    """A staging folder an interrupted run left beside ``out``, and a half-written file."""
    (d / ".out.partial-99999-x").mkdir()
    (d / ".out.partial-99999-x" / "compare.csv").write_text("half")


#: Command lines refused: name -> (argv, files, words the line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- GPU files ------------------------------------------------------------------------
    "gpu file a key twice": ([*MINE, "g.toml"],
                             {"g.toml": GPU_HEAD + "max_instance = 4\nmax_instance = 8\n"},
                             ("g.toml", "line 5")),
    "gpu file max_instance = 1e308": ([*MINE, "g.toml"],
                                      {"g.toml": GPU_HEAD + "max_instance = 1e308\n"},
                                      ("g.toml", "max_instance")),
    "gpu file bf16 TFLOPs = 1e308": ([*MINE, "g.toml"],
                                     {"g.toml": GPU_HEAD + "bf16_dense_TFLOPs = 1e308\n"},
                                     ("g.toml", "bf16_dense_TFLOPs")),
    "gpu file name with a newline": (
        [*MINE[:-2], "Mi\nne", "--gpu-file", "g.toml"],
        {"g.toml": GPU_HEAD.replace('"Mine"', '"Mi\\nne"')}, ("g.toml", "name")),
    "gpu file name 10,000 characters": (
        [*MINE[:-2], "M" * 10_000, "--gpu-file", "g.toml"],
        {"g.toml": GPU_HEAD.replace('"Mine"', '"' + "M" * 10_000 + '"')}, ("g.toml",)),
    "gpu file nested 200 deep": (
        [*MINE, "g.toml"],
        {"g.toml": GPU_HEAD + "x = " + "[" * 200 + "]" * 200 + "\n"}, ("g.toml",)),
    "gpu file scaleup_reduction = 1": (
        [*MINE, "g.toml"],
        {"g.toml": GPU_HEAD + "scaleup_reduction = 1\n"}, ("g.toml", "scaleup_reduction", TF)),
    "gpu file scaleup_reduction = \"yes\"": (
        [*MINE, "g.toml"],
        {"g.toml": GPU_HEAD + 'scaleup_reduction = "yes"\n'},
        ("g.toml", "scaleup_reduction", TF)),
    "gpu json a key twice": ([*MINE, "g.json"],
                             {"g.json": '{"gpu": {"Mine": {"derive_from": "H100-SXM", '
                                        '"source": "s", "sms": 100, "sms": 120}}}'},
                             ("g.json", "sms")),
    "gpu json sms 1e999": ([*MINE, "g.json"],
                           {"g.json": '{"gpu": {"Mine": {"derive_from": "H100-SXM", '
                                      '"source": "s", "sms": 1e999}}}'}, ("g.json", "1e999")),
    # -- model files ----------------------------------------------------------------------
    "model file a key twice": ([*MODEL, "Mine"],
                               {"m.toml": MODEL_HEAD + "layers = 4\nlayers = 8\n"},
                               ("m.toml", "line 10")),
    "model file layers = 1e308": ([*MODEL, "Mine"],
                                  {"m.toml": MODEL_HEAD + "layers = 1e308\n"},
                                  ("m.toml", "layers")),
    "model file bias = 0": ([*MODEL, "Mine"],
                            {"m.toml": MODEL_HEAD + "layers = 4\nbias = 0\n"}, ("m.toml", "bias", TF)),
    "model file name with a tab": ([*MODEL, "Mi\tne"],
                                   {"m.toml": MODEL_HEAD.replace('"Mine"', '"Mi\\tne"') + "layers = 4\n"},
                                   ("m.toml",)),
    "hf config.json a key twice": (["infer", "--hf-config", "config.json", "--gpu",
                                    "H100-SXM", "--tp", "1", "--batch", "8"],
                                   {"config.json": '{"architectures": ["LlamaForCausalLM"], '
                                    '"model_type": "llama", "hidden_size": 4096, '
                                    '"hidden_size": 2048, "intermediate_size": 14336, '
                                    '"num_attention_heads": 32, "num_hidden_layers": 32, '
                                    '"num_key_value_heads": 8, "vocab_size": 128256}'},
                                   ("config.json", "hidden_size")),
    # -- scenario files ---------------------------------------------------------------------
    "scenario file a key twice": ([*SCEN],
                                  {"s.toml": SCENARIO.replace('gpu = "H100-SXM"\n',
                                                              'gpu = "H100-SXM"\ngpu = "Lite"\n',
                                                              1)}, ("s.toml", "line 9")),
    "scenario file domains = 1e308": ([*SCEN],
                                      {"s.toml": SCENARIO.replace("domains = 4",
                                                                  "domains = 1e308")},
                                      ("s.toml", "domains")),
    "scenario file sharp = 1": ([*SCEN],
                                {"s.toml": SCENARIO.replace("sharp = false", "sharp = 1")},
                                ("s.toml", "sharp", TF)),
    "scenario file name with an escape": ([*SCEN],
                                          {"s.toml": SCENARIO.replace(
                                              'name = "h100-dgx"', 'name = "a\\u001bb"')},
                                          ("s.toml", "name")),
    # -- profile files ----------------------------------------------------------------------
    "profile file a key twice": ([*INFER, "--profile", "p.toml"],
                                 {"p.toml": PROFILE.replace("value = 0.8009",
                                                            "value = 0.5\nvalue = 0.8009", 1)},
                                 ("p.toml", "line 19")),
    "profile file gemm_efficiency = 1e308": (
        [*INFER, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace("value = 0.8009100101112235", "value = 1e308", 1)},
        ("p.toml", "gemm_efficiency")),
    # -- fabric files ---------------------------------------------------------------------
    "fabric json nodes 1e308": (["topology", "show", "f.json"],
                                {"f.json": '{"directed": false, "multigraph": false, '
                                           '"graph": {}, "nodes": [{"id": "gpu0", "kind": '
                                           '"gpu", "x": 1e308}], "links": []}'},
                                ("f.json",)),
    # -- calibrate measurements -------------------------------------------------------------
    "calibrate semicolons for commas": (CALIBRATE, {"m.csv": CSV.replace(",", ";")},
                                        ("m.csv",)),
    "calibrate an extra column": (CALIBRATE, {"m.csv": CSV_HEAD.rstrip() + ",gpus\n" + "".join(
        r.rstrip() + ",8\n" for r in CSV_ROWS.splitlines(True))}, ("m.csv", "gpus")),
    "calibrate a row with one field more": (
        CALIBRATE, {"m.csv": CSV + "Llama-3-8B,H100-SXM,1,8,decode,,96,0.0078,extra\n"},
        ("m.csv",)),
    "calibrate a quoted number with a comma": (
        CALIBRATE, {"m.csv": CSV + 'Llama-3-8B,H100-SXM,1,"1,024",decode,,96,0.0078\n'},
        ("m.csv", "batch", "'1,024'")),
    "calibrate latency_s 1e308": (CALIBRATE, {"m.csv": CSV + "Llama-3-8B,H100-SXM,1,16,"
                                              "decode,,96,1e308\n"}, ("m.csv", "latency_s")),
    "calibrate tp 1e308": (CALIBRATE, {"m.csv": CSV + "Llama-3-8B,H100-SXM,1e308,16,"
                                       "decode,,96,0.01\n"}, ("m.csv", "tp")),
    "calibrate a model name with a newline (quoted)": (
        CALIBRATE, {"m.csv": CSV + '"Llama-3\n-8B",H100-SXM,1,16,decode,,96,0.01\n'},
        ("m.csv", "model")),
    "calibrate headers only": (CALIBRATE, {"m.csv": CSV_HEAD}, ("m.csv",)),
    "calibrate -o under a file": (["calibrate", "--measurements", "m.csv", "-o",
                                   "m.csv/p.toml"], {"m.csv": CSV}, ("--out", "m.csv")),
    "calibrate -o the measurements": (["calibrate", "--measurements", "m.csv", "-o",
                                       "m.csv"], {"m.csv": CSV}, ("m.csv",)),
    # -- outputs ------------------------------------------------------------------------------
    "compare --out under a file": ([*COMPARE, "--out", "notes.txt/o"],
                                   {"notes.txt": "x"}, ("'notes.txt/o'", "is a file")),
    "compare --out in /proc (read-only)": ([*COMPARE, "--out", "/proc/netmodel-o"], {},
                                           ("'/proc/netmodel-o'",)),
    "compare --out a file": ([*COMPARE, "--out", "notes.txt"], {"notes.txt": "x"},
                             ("--out", "'notes.txt'")),
    "compare --out twice": ([*COMPARE, "--out", "a", "--out", "b"], {}, ("--out", "twice")),
    "compare --out o.csv (a file's suffix)": ([*COMPARE, "--out", "o.csv"], {},
                                              ("'o.csv'", "folder name")),
    "compare --out a folder of notes": ([*COMPARE, "--out", "o"], {"o/notes.txt": "mine"},
                                        ("--out 'o'", "holds files netmodel did not write")),
    "sweep --out under a file": (["sweep", "--scenarios", "h100-dgx", "--param",
                                  "fabric.domains=2:4", "--points", "2", "--models",
                                  "Llama-3-8B", "--max-batch", "8", "--out", "notes.txt/o"],
                                 {"notes.txt": "x"}, ("'notes.txt/o'", "is a file")),
    "costs -o under a file": (["costs", "--fabric", "ring:n=4", "-o", "notes.txt/t.csv"],
                              {"notes.txt": "x"}, ("'notes.txt/t.csv'", "is a file")),
    "topology export -o in /proc (read-only)": (["topology", "export", "ring:n=4", "-o",
                                                 "/proc/x.json"], {}, ("'/proc/x.json'",)),
    "calibrate -o in /proc (read-only)": (["calibrate", "--measurements", "m.csv", "-o",
                                           "/proc/p.toml"], {"m.csv": CSV}, ("'/proc/p.toml'",)),
}

#: Command lines taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    # a name is a label: no file is named after it
    "gpu file name with a slash": ([*MINE[:-2], "a/b", "--gpu-file", "g.toml"],
                                   {"g.toml": GPU_HEAD.replace('"Mine"', '"a/b"')}),
    "scenario file name '../evil' --out o": ([*SCEN, "--out", "o"],
                                             {"s.toml": SCENARIO.replace('name = "h100-dgx"',
                                                                         'name = "../evil"')}),
    "gpu file with a BOM and CRLF": ([*MINE, "g.toml"],
                                     {"g.toml": ("\ufeff" + GPU_HEAD).replace("\n", "\r\n")
                                      .encode()}),
    "model file with a BOM and CRLF": ([*MODEL, "Mine"],
                                       {"m.toml": ("\ufeff" + MODEL_HEAD + "layers = 4\n")
                                        .replace("\n", "\r\n").encode()}),
    "scenario file with a BOM and CRLF": ([*SCEN],
                                          {"s.toml": ("\ufeff" + SCENARIO)
                                           .replace("\n", "\r\n").encode()}),
    "profile file with a BOM and CRLF": ([*INFER, "--profile", "p.toml"],
                                         {"p.toml": ("\ufeff" + PROFILE)
                                          .replace("\n", "\r\n").encode()}),
    "calibrate CRLF and a BOM": (CALIBRATE, {"m.csv": ("\ufeff" + CSV).replace("\n", "\r\n")
                                             .encode()}),
    "calibrate blank lines between rows": (CALIBRATE, {"m.csv": CSV_HEAD + "\n" + CSV_ROWS
                                                       .replace("\n", "\n\n")}),
    "calibrate every field quoted": (CALIBRATE, {"m.csv": "".join(
        ",".join(f'"{x}"' if x else "" for x in line.split(",")) + "\n"
        for line in CSV.splitlines())}),
    "calibrate optional columns source and note": (
        CALIBRATE, {"m.csv": CSV_HEAD.rstrip() + ",source,note\n" + "".join(
            r.rstrip() + ',"a, b","c ""quoted"""\n' for r in CSV_ROWS.splitlines(True))}),
    "calibrate columns in another order": (CALIBRATE, {"m.csv": "latency_s,model,gpu,tp,"
                                                       "batch,phase,prompt,context\n" + "".join(
        (lambda f: ",".join([f[7], *f[:7]]) + "\n")(r.rstrip().split(","))
        for r in CSV_ROWS.splitlines(True))}),
    "compare --out over a stale partial": ([*COMPARE, "--out", "out", "--no-plot"],
                                           {".keep": _stale}),
    "compare --out o/ (a slash)": ([*COMPARE, "--out", "o/", "--no-plot"], {}),
}


def env_case(name: str, argv: list[str], env: dict[str, str], words: tuple[str, ...] | None
             ) -> Case:
    """``netmodel argv`` with ``env`` set: refused in one line holding ``words`` (None:
    taken)."""
    def run(d: Path) -> str | None:
        from click.testing import CliRunner

        from netmodel.cli.main import cli

        old = os.getcwd()
        os.chdir(d)
        try:
            r = CliRunner().invoke(cli, argv, prog_name="netmodel", env=env)
        finally:
            os.chdir(old)
        if words is None:
            if r.exit_code not in (0, 3) or "Traceback" in r.output:
                return f"exit {r.exit_code} | {r.output.strip()[-300:]}"
            return None
        return one_line_refusal(r, words)
    return f"env {name}", run


OUT_ARGV = [*COMPARE, "--out", "o"]

#: Settings: name -> (argv, env, words of the refusal or None where taken).
ENV: dict[str, tuple[list[str], dict[str, str], tuple[str, ...] | None]] = {
    **{f"NETMODEL_JOBS={v!r}": (OUT_ARGV, {"NETMODEL_JOBS": v},
                                ("NETMODEL_JOBS", repr(v), "whole number"))
       for v in ("0", "-1", "abc", "1.5", "0x4", "inf", "nan", "1e7")},
    "NETMODEL_JOBS=' 2 ' (blanks)": (OUT_ARGV, {"NETMODEL_JOBS": " 2 "}, None),
    "NETMODEL_JOBS='' (blank)": (OUT_ARGV, {"NETMODEL_JOBS": ""}, None),
    "NETMODEL_MAX_SEARCH_CONFIGURATIONS=abc": (
        SEARCH, {"NETMODEL_MAX_SEARCH_CONFIGURATIONS": "abc"},
        ("NETMODEL_MAX_SEARCH_CONFIGURATIONS", "'abc'")),
    "NETMODEL_MAX_FABRIC_NODES=-5": (["topology", "show", "ring:n=7"],
                                     {"NETMODEL_MAX_FABRIC_NODES": "-5"},
                                     ("NETMODEL_MAX_FABRIC_NODES", "'-5'")),
    "NETMODEL_MAX_MESSAGE_SIZES=1e400": (["costs", "--fabric", "ring:n=8", "--sizes", "1K:1G:1.001"],
                                         {"NETMODEL_MAX_MESSAGE_SIZES": "1e400"},
                                         ("NETMODEL_MAX_MESSAGE_SIZES",)),
}


def _lib(module: str, name: str, *args, **kwargs) -> Callable[[], object]:
    def call() -> object:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return call


def _options(**kw) -> Callable[[], object]:
    return _lib("compute.roofline_options", "RooflineOptions", **kw)


def _model(**kw) -> Callable[[], object]:
    def call() -> object:
        from compute.models import get_model

        return replace(get_model("Llama-3-8B"), **kw)
    return call


def _gpu(**kw) -> Callable[[], object]:
    def call() -> object:
        from compute.hardware import get_gpu

        return replace(get_gpu("H100-SXM"), **kw)
    return call


def _calibration(**kw) -> Callable[[], object]:
    def call() -> object:
        from netmodel.collectives.calibration import Calibration

        return Calibration.ideal().with_(**kw)
    return call


def _fabric(builder: str, **kw) -> Callable[[], object]:
    return _lib("netmodel.api", "build_fabric", (builder, kw))


def _summary(**kw) -> Callable[[], object]:
    def call() -> object:
        from netmodel.api import build_fabric
        from topologies.analysis import summary

        return summary(build_fabric("ring:n=4"), **kw)
    return call


def _validate(**kw) -> Callable[[], object]:
    def call() -> object:
        from netmodel.api import build_fabric
        from topologies.analysis import validate

        return validate(build_fabric("ring:n=4"), **kw)
    return call


def _written(**kw) -> Callable[[], object]:
    """write_outputs of one file into a new folder of a temporary one (removed after)."""
    def call() -> object:
        import tempfile

        from compute.outputs import write_outputs

        with tempfile.TemporaryDirectory(prefix="hostile32-") as tmp:
            return write_outputs(Path(tmp) / "o", {"a.txt": b"x"}, **kw)
    return call


def _is(field: str, value: object) -> Callable[[object], bool]:
    return lambda r: type(getattr(r, field)) is type(value) and getattr(r, field) == value


def _search(**kw) -> Callable[[], object]:
    return _lib("netmodel.api", "search", "Llama-3-8B", "H100-SXM", "decode", **kw)


def _evaluate(**kw) -> Callable[[], object]:
    return _lib("netmodel.api", "evaluate", "Llama-3-8B", "H100-SXM", "decode", **kw)


def _slo(**kw) -> Callable[[], object]:
    return _lib("compute.phases", "Slo", **kw)


#: Library calls refused: name -> (call, words the UserError holds).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    **{f"RooflineOptions({f}={v!r})": (_options(**{f: v}), (f, TF, "got"))
       for f in ("overlap_collectives", "two_batch_overlap") for v in (1, 0, "yes", None)},
    "ModelSpec bias=1": (_model(bias=1), ("bias", TF, "got 1")),
    "ModelSpec gated_mlp='no'": (_model(gated_mlp="no"), ("gated_mlp", TF)),
    "GpuSpec scaleup_reduction=0": (_gpu(scaleup_reduction=0), ("scaleup_reduction", TF)),
    "ScaleUpLowerBound(in_switch=1)": (_lib("compute.comm", "ScaleUpLowerBound", 4.5e11,
                                            in_switch=1), ("in_switch", "got 1")),
    "Calibration pxn=0": (_calibration(pxn=0), ("pxn", TF)),
    # was not checked: 1 taken as its truth
    "Calibration scaleup_everywhere=1": (_calibration(scaleup_everywhere=1),
                                         ("scaleup_everywhere", TF, "got 1")),
    # a function's true/false parameter: 'no' was taken as its truth
    "run_compare(reliability='no')": (_lib("netmodel.study.compare", "run_compare",
                                           ["Llama-3-8B"], ["h100-dgx"], ["decode"],
                                           max_batch=8, reliability="no"),
                                      ("reliability", TF, "'no'")),
    "compare_files(plot='no')": (_lib("netmodel.study.compare", "compare_files", None,
                                      plot="no"), ("plot", TF)),
    "sweep_files(plot=0.0)": (_lib("netmodel.study.sweep", "sweep_files", None, plot=0.0),
                              ("plot", TF)),
    "partition(checked='no')": (lambda: __import__(
        "netmodel.collectives.placement", fromlist=["partition"]).partition(
            __import__("netmodel.api", fromlist=["build_fabric"]).build_fabric("ring:n=8"), 4,
            gpus=["gpu0", "gpu0", "gpu1", "gpu2"], checked="no"), ("checked", TF)),
    "to_nccl_tests(per_algorithm='no')": (_lib("netmodel.collectives.cost_table",
                                               "to_nccl_tests", [], per_algorithm="no"),
                                          ("per_algorithm", TF)),
    "cost_summary(without_price='no')": (_lib("netmodel.study.cost", "cost_summary",
                                              "h100-dgx", "Llama-3-8B", max_batch=8,
                                              without_price="no"), ("without_price", TF)),
    "find_crossovers(latency='no')": (_lib("netmodel.study.crossovers", "find_crossovers",
                                           None, latency="no"), ("latency", TF)),
    "cost_table(all_algorithms='no')": (_lib("netmodel.study.collective_report", "cost_table",
                                             None, [], [], [], all_algorithms="no"),
                                        ("all_algorithms", TF)),
    "build_fabric single-switch in_network_reduction=np.array([True, False])": (
        _fabric("single-switch", n=4, in_network_reduction=np.array([True, False])),
        ("in_network_reduction", TF)),
    "build_fabric single-switch in_network_reduction='maybe'": (
        _fabric("single-switch", n=4, in_network_reduction="maybe"),
        ("in_network_reduction", "'maybe'")),
    "summary(validated=1)": (_summary(validated=1), ("validated", "got 1")),
    "validate(check_connected=None)": (_validate(check_connected=None),
                                       ("check_connected", "got None")),
    "Slo(ttft=Decimal('0.5'))": (_slo(ttft=Decimal("0.5")), ("ttft", "Decimal")),
    "Slo(ttft=np.array([0.5]))": (_slo(ttft=np.array([0.5])), ("ttft",)),
    "Slo(tbt=np.True_)": (_slo(tbt=np.True_), ("tbt", "np.True_")),
    "search(max_batch=np.True_)": (_search(max_batch=np.True_), ("max_batch",)),
    "search(max_batch=Fraction(17, 2))": (_search(max_batch=Fraction(17, 2)), ("max_batch",)),
    "evaluate(batch=np.float32(8.5))": (_evaluate(tp=1, batch=np.float32(8.5)), ("batch",)),
    "Parallelism(np.True_) (taken as a degree of 1)": (
        _lib("compute.parallel", "Parallelism", np.True_), ("TP degree", "np.True_")),
    "evaluate(tp=np.True_)": (_evaluate(tp=np.True_, batch=8), ("TP degree", "np.True_")),
    "build_fabric ring n=np.True_": (_fabric("ring", n=np.True_), ("n",)),
    "build_fabric ring n=Fraction(9, 2)": (_fabric("ring", n=Fraction(9, 2)), ("n",)),
    "collective_report(group=np.True_)": (
        lambda: __import__("netmodel.study.collective_report", fromlist=["x"]).collective_report(
            __import__("netmodel.study.collective_setup", fromlist=["x"]).collective_setup(
                "ring:n=8"), "all-reduce", 1e6, np.True_), ("group", "np.True_")),
    "collective_report(group=np.float64(4.0))": (
        lambda: __import__("netmodel.study.collective_report", fromlist=["x"]).collective_report(
            __import__("netmodel.study.collective_setup", fromlist=["x"]).collective_setup(
                "ring:n=8"), "all-reduce", 1e6, np.float64(4.0)), ("group", "4.0")),
    # swept as 1.0
    "SweepParam('fabric.planes', (np.True_, 16))": (
        lambda: __import__("netmodel.study.sweep_params", fromlist=["x"]).check_param(
            __import__("netmodel.study.sweep_params", fromlist=["x"]).SweepParam(
                "fabric.planes", (np.True_, 16)), ["lite-flat"]),
        ("fabric.planes", "np.True_", "finite number")),
    # numpy read each list as numbers, True as 1: a 1-byte message, a 1 m^2 die, a batch of 1
    "collective_time sizes=[True, 1e6]": (_lib("netmodel.api", "collective_time", "ring:n=4",
                                               "all-reduce", [True, 1e6], 4),
                                          ("message size", "[True, 1000000.0]")),
    "die_yield([True, 8e-4])": (_lib("compute.die_yield", "die_yield", [True, 8e-4]),
                                ("die area", "[True, 0.0008]")),
    "dies_per_wafer([np.True_, 8e-4])": (_lib("compute.die_yield", "dies_per_wafer",
                                              [np.True_, 8e-4]), ("die area", "np.True_")),
    "evaluate_grid(batches=[True, 8])": (_lib("compute.roofline", "evaluate_grid",
                                              "Llama-3-8B", "H100-SXM", [1], [True, 8],
                                              "decode"), ("batches", "[True, 8]")),
    # raised TypeError: '>' not supported between instances of 'str' and 'int'
    "Executor(timeout='abc')": (_lib("netmodel.study.distributed", "Executor", timeout="abc"),
                                ("timeout='abc'", "positive number of seconds")),
    "Executor(processes='no')": (_lib("netmodel.study.distributed", "Executor",
                                      processes="no"), ("processes", TF)),
    # raised TypeError mid-write ('<' not supported between instances of 'int' and 'str')
    "write_outputs(jobs='2')": (_written(jobs="2"), ("jobs", "'2'", "whole number >= 1")),
    # taken: ran the writers one after the other
    "write_outputs(jobs=0)": (_written(jobs=0), ("jobs", "got 0")),
    "collective_time group=np.True_": (_lib("netmodel.api", "collective_time", "ring:n=4",
                                            "all-reduce", [1e6], np.True_), ("group",)),
    "collective_time sizes=[np.True_]": (_lib("netmodel.api", "collective_time", "ring:n=4",
                                              "all-reduce", [np.True_], 4), ("size",)),
}

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    **{f"RooflineOptions({f}=np.{v!r})": (_options(**{f: np.bool_(v)}), _is(f, v))
       for f in ("overlap_collectives", "two_batch_overlap") for v in (True, False)},
    "ModelSpec bias=np.False_": (_model(bias=np.False_), _is("bias", False)),
    "ModelSpec gated_mlp=np.True_": (_model(gated_mlp=np.True_), _is("gated_mlp", True)),
    "GpuSpec scaleup_reduction=np.True_": (_gpu(scaleup_reduction=np.True_),
                                           _is("scaleup_reduction", True)),
    "ScaleUpLowerBound(in_switch=np.False_)": (
        _lib("compute.comm", "ScaleUpLowerBound", 4.5e11, in_switch=np.False_),
        _is("in_switch", False)),
    "Calibration pxn=np.False_": (_calibration(pxn=np.False_), _is("pxn", False)),
    "build_fabric single-switch in_network_reduction=np.True_": (
        _fabric("single-switch", n=4, in_network_reduction=np.True_),
        lambda g: g.number_of_nodes() == 5),
    "summary(validated=np.True_)": (_summary(validated=np.True_), lambda s: s is not None),
    "validate(check_connected=np.False_)": (_validate(check_connected=np.False_),
                                            lambda g: g.number_of_nodes() == 4),
    "Slo(ttft=Fraction(1, 2))": (_slo(ttft=Fraction(1, 2)), _is("ttft", 0.5)),
    "Slo(tbt=np.float32(0.05))": (_slo(tbt=np.float32(0.05)), lambda s: type(s.tbt) is float),
    "RooflineOptions(flops_efficiency=np.float32(0.5))": (
        _options(flops_efficiency=np.float32(0.5)), _is("flops_efficiency", 0.5)),
    "RooflineOptions(memory_reserve=Fraction(1, 10))": (
        _options(memory_reserve=Fraction(1, 10)), lambda o: type(o.memory_reserve) is float),
    "search(max_batch=np.int64(8))": (_search(max_batch=np.int64(8)),
                                      lambda r: r.best.batch == 8),
    "evaluate(batch=np.int64(8), tp=np.int32(2))": (
        _evaluate(batch=np.int64(8), tp=np.int32(2)), lambda r: r is not None),
    "serve(ep=np.True_) (every EP degree, as True)": (
        _lib("netmodel.study.serving", "serve", "Mixtral-8x7B", "h100-dgx", ep=np.True_,
             max_batch=8), lambda r: r is not None),
    "configurations(attention_dp=np.True_)": (
        lambda: __import__("compute.parallel", fromlist=["configurations"]).configurations(
            __import__("compute.models", fromlist=["get_model"]).get_model("Mixtral-8x7B"), 8,
            attention_dp=np.True_), lambda c: len(c) > 4),
    # refused: '[fabric] domains must be a string, number or boolean, got 2'
    "scenario with_param fabric.domains=np.int64(2)": (
        lambda: __import__("netmodel.api", fromlist=["get_scenario"]).get_scenario(
            "h100-dgx").with_param("fabric.domains", np.int64(2)),
        lambda s: type(s.fabric["domains"]) is int),
    "scenario with_param fabric.sharp=np.True_": (
        lambda: __import__("netmodel.api", fromlist=["get_scenario"]).get_scenario(
            "h100-dgx").with_param("fabric.sharp", np.True_), lambda s: s.fabric["sharp"] is True),
    # its to_toml refused 'cannot write np.int64(2) to TOML'
    "Scenario(fabric={..., domains: np.int64(2)}).to_toml()": (
        lambda: (lambda s: replace(s, fabric={**s.fabric, "domains": np.int64(2)}).to_toml())(
            __import__("netmodel.api", fromlist=["get_scenario"]).get_scenario("h100-dgx")),
        lambda t: "domains = 2" in t.splitlines()),
    # raised TypeError: 'numpy.int64' object is not iterable
    "collective_report(group=np.int64(4))": (
        lambda: __import__("netmodel.study.collective_report", fromlist=["x"]).collective_report(
            __import__("netmodel.study.collective_setup", fromlist=["x"]).collective_setup(
                "ring:n=8"), "all-reduce", 1e6, np.int64(4)),
        lambda r: len(r.result.group) == 4),
    # its report's JSON raised TypeError: Object of type int64 is not JSON serializable
    "collective_setup(scenario, seed=np.int64(3)) report to_dict": (
        lambda: __import__("json").dumps(__import__(
            "netmodel.study.collective_report", fromlist=["x"]).collective_report(
            __import__("netmodel.study.collective_setup", fromlist=["x"]).collective_setup(
                scenario="h100-dgx", seed=np.int64(3)), "all-reduce", 1e6, 4).to_dict()),
        lambda t: '"seed"' in t),
    # refused: 'workers=1 is not allowed; a local cluster takes 1 to 8 workers'
    "Executor(workers=np.int64(1))": (_lib("netmodel.study.distributed", "Executor",
                                           workers=np.int64(1)),
                                      lambda e: e.workers == 1 and type(e.workers) is int),
    # refused: 'channels must be a whole number in 1..1024, got 16'
    "Calibration channels=np.int64(16)": (_calibration(channels=np.int64(16)),
                                          _is("channels", 16)),
    # refused: "spare count must be a whole number >= 0, got np.int64(2)"
    "plan_spares(flat:n=4, np.int64(2))": (
        lambda: __import__("topologies.spares", fromlist=["x"]).plan_spares(
            __import__("netmodel.api", fromlist=["x"]).build_fabric("flat:n=4"), np.int64(2)),
        lambda p: len(p) == 2),
    "hosts(ring:n=8, gpus_per_host=np.int64(4))": (
        lambda: __import__("topologies.enclosures", fromlist=["x"]).hosts(
            __import__("netmodel.api", fromlist=["x"]).build_fabric("ring:n=8"), np.int64(4)),
        lambda h: len(h) == 2),
    # its result's JSON: 'Object of type bool is not JSON serializable'
    "evaluate(ModelSpec layers=np.int64(16)).to_dict() to JSON": (
        lambda: __import__("json").dumps(__import__("netmodel").evaluate(
            _model(layers=np.int64(16))(), "H100-SXM", "decode", tp=1, batch=8).to_dict()),
        lambda t: '"layers"' in t or len(t) > 100),
    "build_fabric ring n=np.int64(4)": (_fabric("ring", n=np.int64(4)),
                                        lambda g: g.number_of_nodes() == 4),
    "collective_time group=np.int64(4), sizes float32": (
        _lib("netmodel.api", "collective_time", "ring:n=4", "all-reduce",
             np.array([1e6, 1e7], dtype=np.float32), np.int64(4)),
        lambda t: t.shape == (2,) and bool(t[1] > t[0] > 0)),
}


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (env_case(n, a, e, w) for n, (a, e, w) in ENV.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    return run_round(cases(), "hostile32-")


if __name__ == "__main__":
    sys.exit(main())
