"""Hostile-input round 25, on what rounds 15-24 (scripts/hostile_round15.py .. 24.py) left
untried: one option refused on either side of its range (a value below it and one above)
must state one range, the same in both lines (``--batch 0`` said ``>= 1``, ``--batch 2e9``
``from 1 to 1,000,000,000``), the range its help gives (``--pp``: to the model's layers),
and its edge is taken; a value just past a bound must not be shown rounded onto it
(``--ttft 600.001s is 600 s, outside the 1 us to 600 s``); a number typed as help writes it
(``--max-transfers 20,000,000``); saved fabrics in each format a command reads, written by
``topology export`` and read back (``topology show``, ``collective``, ``costs``, ``infer
--fabric`` and a scenario naming the file: the same figures as the spec; a second
generation of files the same bytes); serve's workload files in every hostile encoding and
value (BOM, UTF-16 with and without its BOM, UTF-32, a NUL, 10**400, 1e400, -0, NaN, a key
twice, 100,000 levels, empty, 20 MB, a FIFO, a link loop, /dev/zero); a calibrated profile
written and read back (``--profile``, ``--base``); refusals that name a library parameter
where the command line has a flag; outputs named with a blank at either end, which no
reader could read back (each strips the path typed); one said as many (``1 GPUs``).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target); a symmetric pair prints the same figures.

Usage: ``python scripts/hostile_round25.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner).
About four minutes on two shared cores.
"""

from __future__ import annotations

import json
import os
import re
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

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "4", "--tp", "1"]
PREFILL = [*INFER, "--phase", "prefill"]
MOE = ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--batch", "16", "--tp", "8"]
SEARCH = ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "64",
         "--tp-only"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
         "--max-batch", "8", "--trials", "5"]
STORAGE = [*AVAIL, "--load-from", "storage"]
COLL = ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB"]
COST = ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
YIELD = ["yield", "--area", "814"]
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
STEPS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
         "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298",
         "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386"]
MEASURED = HEADER + "\n".join(STEPS) + "\n"
FIT = ["--fit", "layer_overhead_s,gemm_efficiency"]


def _with(argv: list[str], flag: str, value: str) -> list[str]:
    """``argv`` with ``flag``'s value ``value`` (set in place, or added)."""
    if flag in argv:
        i = argv.index(flag)
        return [*argv[:i + 1], value, *argv[i + 2:]]
    return [*argv, flag, value]


#: One option refused on both sides of its range: name -> (argv, flag, values refused,
#: the value at its edge (taken; None: not run, too slow at the edge), the words each
#: refusal holds: the range, stated once and alike on either side).
RANGES: dict[str, tuple[list[str], str, tuple[str, ...], str | None, tuple[str, ...]]] = {
    "infer --batch": (INFER, "--batch", ("0", "-1", "nan", "2e9"), "1",
                      ("from 1 to 1,000,000,000",)),
    "infer --prompt": (PREFILL, "--prompt", ("0", "-5", "1e10"), "1",
                       ("from 1 to 1,000,000,000",)),
    # the top of a pipeline degree is the model's layers, as --pp's help says
    "infer --pp": (INFER, "--pp", ("0", "-1", "2e9"), "32", ("from 1 to the model's layers",)),
    "search --pp": (SEARCH, "--pp", ("0,2",), "32", ("from 1 to the model's layers",)),
    "search --max-gpus": (SEARCH, "--max-gpus", ("0", "2e9"), "1",
                          ("from 1 to 1,000,000,000",)),
    "serve --max-batch": (SERVE, "--max-batch", ("0", "1e10"), "1",
                          ("from 1 to 1,000,000,000",)),
    "availability --trials": (AVAIL, "--trials", ("0", "-3", "100001"), "1",
                              ("from 1 to 100,000",)),
    "infer --ttft": (PREFILL, "--ttft", ("0", "-1", "-1s", "0.5us", "601s", "1e30"), "600s",
                     ("1 us to 600 s",)),
    "infer --tbt": (INFER, "--tbt", ("0", "-0.05", "0.9us", "10.5s"), "1us",
                    ("1 us to 10 s",)),
    "availability --horizon": (AVAIL, "--horizon", ("0", "-1", "-1y", "0.5h", "101y"), "1h",
                               ("1 h to 100 y",)),
    "availability --spares": (AVAIL, "--spares", ("-1", "-5%", "-0.1%", "33", "101%"), "32",
                              ("0 to 32",)),
    "availability --detection": (AVAIL, "--detection", ("-1", "nan", "101y"), "100y",
                                 ("100 y",)),
    "availability --repair-time": (AVAIL, "--repair-time", ("nic=-1d", "nic=101y"), "nic=100y",
                                   ("100 y",)),
    "availability --load-bandwidth": (STORAGE, "--load-bandwidth",
                                      ("0", "-1GB/s", "0.5MB/s", "2PB/s"), "1MB/s",
                                      ("1 MB/s to 1 PB/s",)),
    "collective --nccl-buffsize": (COLL, "--nccl-buffsize", ("0.5", "7", "2TiB", "1e30"),
                                   "8", ("--nccl-buffsize", "8 B to 1 TiB")),
    "collective --size": (COLL, "--size", ("0", "-1", "0.5", "1.5", "2PiB"), "1",
                          ("--size", "a whole number of bytes from 1 B to 1 PiB")),
    "costs --sizes": (["costs", "--fabric", "ring:n=8", "--groups", "8"], "--sizes",
                      ("0:1MiB", "1KiB,0.5", "1KiB:2PiB"), "1:2",
                      ("--sizes", "a whole number of bytes from 1 B to 1 PiB")),
    "cost --clock": (COST, "--clock", ("0", "-1", "0.04", "1.6"), "0.05",
                     ("[0.05, 1.5]",)),
    "yield --alpha": (YIELD, "--alpha", ("0", "-1", "0.001", "101"), "0.01",
                      ("0.01", "100")),
    "yield --wafer-price": (YIELD, "--wafer-price", ("-1", "nan", "2e7"), "1e7",
                            (">= 0 and <= 1e+07",)),
    "yield --defect-density": (YIELD, "--defect-density", ("-1", "101"), "100",
                               ("100 per cm^2",)),
    "yield --wafer-diameter": (YIELD, "--wafer-diameter", ("0", "-3mm", "1001mm"), "1000mm",
                               ("1000 mm",)),
    "yield --critical-fraction": ([*YIELD, "--sms", "144/132"], "--critical-fraction",
                                  ("-0.1", "1.1"), "1", (">= 0 and <= 1",)),
    "infer --flops-efficiency": (INFER, "--flops-efficiency", ("0", "-0", "5e-5", "1.1"),
                                 "0.0001", ("from 0.0001 to 1",)),
    "infer --memory-efficiency": (INFER, "--memory-efficiency", ("0", "1e-300", "1.5"), "1",
                                  ("from 0.0001 to 1",)),
    # already one range either side: kept so
    "infer --expert-skew": (MOE, "--expert-skew", ("0", "0.5", "1e7"), "1",
                            ("1 (uniform routing) to 1,000,000",)),
    "infer --reserve": (INFER, "--reserve", ("-0.1", "1", "2"), "0", ("[0, 1)",)),
    "availability --threshold": (AVAIL, "--threshold", ("0", "-1%", "101%"), "100%",
                                 ("(0, 100%]",)),
    "availability --area-share": (AVAIL, "--area-share", ("0", "0.2", "1.01"), "1",
                                  ("[0.269, 1]",)),
    "serve --rate": (SERVE, "--rate", ("0", "-1", "2e9"), "1e-9",
                     ("1e-09 to 1,000,000,000 requests/s",)),
    "infer --mtp-acceptance": ([*MOE, "--mtp-tokens", "1"], "--mtp-acceptance",
                               ("-0.1", "1.1"), "0", ("from 0 to 1",)),
}


def range_cases() -> Iterator[Case]:
    for name, (argv, flag, bad, edge, words) in RANGES.items():
        for v in bad:
            yield refusal_case(f"{name} {v!r}", _with(argv, flag, v), {}, (flag, *words))
        if edge is not None:
            yield taken_case(f"{name} at its edge {edge!r}", _with(argv, flag, edge), {})


#: A value just past a bound, refused without being shown as the bound (rounded onto it):
#: name -> (argv, the text the line must not hold, words it holds).
PAST: dict[str, tuple[list[str], str, tuple[str, ...]]] = {
    "--ttft 600.001s": (_with(PREFILL, "--ttft", "600.001s"), "is 600 s,",
                        ("--ttft 600.001s", "600.001 s")),
    "--tbt 10.001s": (_with(INFER, "--tbt", "10.001s"), "is 10 s,", ("10.001 s",)),
    "--tbt 0.99999us": (_with(INFER, "--tbt", "0.99999us"), "is 1 us,", ("0.99999 us",)),
    "--ttft 600.0001 (bare seconds)": (_with(PREFILL, "--ttft", "600.0001"), "as 600 s,",
                                       ("600.0001 s",)),
}


def past_case(name: str, argv: list[str], wrong: str, words: tuple[str, ...]) -> Case:
    inner = refusal_case(name, argv, {}, words)[1]

    def run(d: Path) -> str | None:
        why = inner(d)
        if why is not None:
            return why
        r = invoke_in(argv, d)
        return f"shown rounded onto its bound ({wrong!r}) | {r.output.strip()[:200]}" \
            if wrong in r.output else None
    return f"past its bound {name}", run


# -- saved fabrics written and read back -------------------------------------------------------

#: Specs whose exports are read back by every reader (each builder, scenarios, OCS).
ROUND_TRIP_SPECS = ("flat:n=16,planes=2,radix=16", "rail-optimized:domains=2", "nvl72",
                    "full-mesh:n=5", "torus:dims=3x4", "lite-groups",
                    "ocs:gpus=8,ports=4,ocs_ports=8,logical=ring", "lite-hier",
                    "lite-flat-inr", "leaf-spine:oversubscription=2")


def _analysis(text: str) -> object:
    """``topology show --json``'s analysis without what names its source (the spec, file
    or scenario)."""
    def strip(j):
        if isinstance(j, dict):
            return {k: strip(v) for k, v in j.items()
                    if k not in ("name", "spec", "source", "fabric", "file", "scenario")}
        if isinstance(j, list):
            return [strip(v) for v in j]
        return j
    return strip(json.loads(text))


def round_trip_case(spec: str, fmt: str) -> Case:
    """``spec`` exported as ``fmt``, then that file as the other format and back: every
    reading shows the spec's analysis, and the third file is the first's bytes."""
    other = "graphml" if fmt == "json" else "json"

    def run(d: Path) -> str | None:
        base = invoke_in(["topology", "show", spec, "--json"], d)
        steps = [(spec, f"a.{fmt}"), (f"a.{fmt}", f"b.{other}"), (f"b.{other}", f"c.{fmt}")]
        for src, out in steps:
            r = invoke_in(["topology", "export", src, "-o", out], d)
            if r.exit_code != 0:
                return f"export {src} -> {out}: exit {r.exit_code} | {r.output.strip()[-200:]}"
            shown = invoke_in(["topology", "show", out, "--json"], d)
            if shown.exit_code != 0:
                return f"show {out}: exit {shown.exit_code} | {shown.output.strip()[-200:]}"
            if _analysis(shown.output) != _analysis(base.output):
                return f"show {out} differs from the spec's"
        if (d / f"c.{fmt}").read_bytes() != (d / f"a.{fmt}").read_bytes():
            return f"a.{fmt} written again from b.{other} differs in its bytes"
        return None
    return f"round trip {spec} as {fmt}", run


def _figures(text: str) -> str:
    """An output's lines without the fabric's, profile's or scenario's name (a spec or a
    file)."""
    named = re.sub(r"h100-dgx-file", "h100-dgx",
                   re.sub(r"(fabric|on|profile) \S+", r"\1 X", text))
    return re.sub(r"[ \t]+", " ", named)   # columns as wide as the names


def symmetric_case(name: str, a: list[str], b: list[str], files: dict[str, Made],
                   part: Callable[[str], str] = _figures) -> Case:
    def run(d: Path) -> str | None:
        make(d, files)
        ra, rb = invoke_in(a, d), invoke_in(b, d)
        if ra.exit_code != 0 or rb.exit_code != 0:
            return f"exit {ra.exit_code}, {rb.exit_code} | {(ra.output + rb.output)[-300:]}"
        pa, pb = part(ra.output), part(rb.output)
        return None if pa == pb and pa else f"differ | {pa[:150]!r} vs {pb[:150]!r}"
    return f"symmetric {name}", run


def _export(spec: str, out: str) -> Callable[[Path], None]:
    def write(d: Path) -> None:
        r = invoke_in(["topology", "export", spec, "-o", out], d)
        assert r.exit_code == 0, r.output
    return write


def _fabric_file_scenario(d: Path) -> None:
    """s.toml: h100-dgx as ``compare --show`` writes it, its [fabric] table replaced by
    ``fabric = "f.json"`` (the fabric saved) and its name by h100-dgx's own (so the two
    runs' tables read alike)."""
    r = invoke_in(["compare", "--show", "h100-dgx"], d)
    assert r.exit_code == 0, r.output
    text = r.output
    start = text.index("[fabric]")
    end = text.find("\n[", start + 1)
    head = text[:start].replace('name = "h100-dgx"', 'name = "h100-dgx-file"').rstrip()
    (d / "s.toml").write_text(head + '\nfabric = "f.json"\n' + (text[end:] if end != -1
                                                                  else ""))


SYMMETRIC: dict[str, tuple[list[str], list[str], dict[str, Made]]] = {
    **{f"costs on {spec} and its {fmt}": (
        ["costs", "--fabric", spec, "--groups", "2,4", "--sizes", "1KiB,1MiB"],
        ["costs", "--fabric", f"f.{fmt}", "--groups", "2,4", "--sizes", "1KiB,1MiB"],
        {f"f.{fmt}": _export(spec, f"f.{fmt}")})
       for spec in ("lite-hier", "rail-optimized:domains=2", "ocs:gpus=8,ports=4,ocs_ports=8,"
                    "logical=ring")
       for fmt in ("json", "graphml")},
    **{f"infer on {spec} and its {fmt}": (
        ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "16",
         "--fabric", spec],
        ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "16",
         "--fabric", f"f.{fmt}"], {f"f.{fmt}": _export(spec, f"f.{fmt}")})
       for spec in ("rail-optimized:domains=2", "full-mesh:n=8")
       for fmt in ("json", "graphml")},
    "collective on torus:dims=3x4 and its GraphML of a JSON": (
        [*COLL[:3], "torus:dims=3x4", "--group", "12"],
        [*COLL[:3], "g.graphml", "--group", "12"],
        {"f.json": _export("torus:dims=3x4", "f.json"),
         "g.graphml": _export("f.json", "g.graphml")}),
    "collective on a spec and its file named with a blank inside": (
        [*COLL[:3], "torus:dims=2x4", "--group", "8"],
        [*COLL[:3], "a b.json", "--group", "8"], {"a b.json": _export("torus:dims=2x4",
                                                                      "a b.json")}),
    "compare h100-dgx and its --show file with its fabric saved as JSON": (
        ["compare", "--models", "Llama-3-70B", "--max-batch", "64", "-q", "--no-plot",
         "--scenarios", "h100-dgx"],
        ["compare", "--models", "Llama-3-70B", "--max-batch", "64", "-q", "--no-plot",
         "--scenarios", "s.toml"],
        {"f.json": _export("h100-dgx", "f.json"), "s.toml": _fabric_file_scenario}),
    "calibrate's profile by file and --base of it": (
        ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "32",
         "--context", "576", "--profile", "p.toml"],
        ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "32",
         "--context", "576", "--profile", "q.toml"],
        {"m.csv": MEASURED,
         "p.toml": lambda d: invoke_in(["calibrate", "--measurements", "m.csv", "-o", "p.toml",
                                        *FIT], d),
         "q.toml": lambda d: invoke_in(["calibrate", "--measurements", "m.csv", "-o", "q.toml",
                                        *FIT, "--base", "p.toml"], d)}),
}


# -- serve's workload files, hostile ----------------------------------------------------------

W = "prompt = 100\noutput = 10\n"
WJ = {"prompt": 100, "output": 10}


def _fifo(d: Path) -> None:
    os.mkfifo(d / "w.toml")


def _loop(d: Path) -> None:
    os.symlink("a.toml", d / "w.toml")
    os.symlink("w.toml", d / "a.toml")


def _dev_zero(d: Path) -> None:
    os.symlink("/dev/zero", d / "w.toml")


#: Workload files refused: name -> (file name, its content, words).
WORKLOADS: dict[str, tuple[str, Made, tuple[str, ...]]] = {
    "UTF-16 TOML": ("w.toml", W.encode("utf-16"), ("'w.toml'", "UTF-8")),
    "UTF-16 JSON": ("w.json", json.dumps(WJ).encode("utf-16"), ("'w.json'", "UTF-8")),
    "UTF-32 JSON": ("w.json", json.dumps(WJ).encode("utf-32"), ("'w.json'", "UTF-8")),
    "two BOMs": ("w.toml", "\ufeff\ufeff" + W, ("w.toml", "2 byte-order marks")),
    "a NUL": ("w.toml", "prompt = 100\x00\noutput = 10\n",
              ("'w.toml'", "NUL byte (\\x00) at line 1, column 13")),
    "UTF-16 JSON without its BOM": ("w.json", json.dumps(WJ).encode("utf-16-le"),
                                    ("'w.json'", "NUL byte", "UTF-16 without its byte-order")),
    "prompt 10**400": ("w.toml", f"prompt = {10**400}\noutput = 10\n",
                       ("w.toml", "prompt", "integer of 401 digits")),
    "JSON prompt 10**400": ("w.json", '{"prompt": ' + str(10**400) + ', "output": 10}',
                            ("w.json", "integer of 401 digits")),
    "JSON rate 1e400": ("w.json", '{"prompt": 100, "output": 10, "rate": 1e400}',
                        ("w.json", "1e400", "beyond the range of a float")),
    "JSON rate -0": ("w.json", '{"prompt": 100, "output": 10, "rate": -0}',
                     ("w.json", "rate must be a number from 1e-09")),
    "rate -0.0": ("w.toml", W + "rate = -0.0\n", ("w.toml", "rate", "got -0.0")),
    "rate inf": ("w.toml", W + "rate = inf\n", ("w.toml", "rate", "got inf")),
    "JSON rate NaN": ("w.json", '{"prompt": 100, "output": 10, "rate": NaN}',
                      ("w.json", "got nan")),
    "JSON a key twice": ("w.json", '{"prompt": 100, "output": 10, "prompt": 200}',
                         ("w.json", "'prompt' is given twice")),
    "a key twice": ("w.toml", W + "prompt = 200\n", ("w.toml", "malformed TOML")),
    "JSON 100,000 levels": ("w.json", '{"prompt": 100, "output": 10, "x": ' + "[" * 100000
                            + "]" * 100000 + "}", ("w.json", "nests deeper than 32 levels")),
    "TOML 100,000 levels": ("w.toml", W + "x = " + "[" * 100000 + "]" * 100000 + "\n",
                            ("w.toml", "nests deeper than 32 levels")),
    "empty TOML": ("w.toml", "", ("w.toml", "missing key(s) prompt, output")),
    "JSON null": ("w.json", "null", ("w.json", "must be a table of keys")),
    "prompt 1.0": ("w.toml", "prompt = 1.0\noutput = 10\n", ("w.toml", "whole number")),
    "prompt true": ("w.toml", "prompt = true\noutput = 10\n", ("w.toml", "got True")),
    "name of a U+202E": ("w.toml", 'name = "a\\u202eb"\n' + W, ("w.toml", "'a\\u202eb'")),
    "name ''": ("w.toml", 'name = ""\n' + W, ("w.toml", "non-empty")),
    "a lone CR": ("w.toml", W.replace("\n", "\r"), ("w.toml", "malformed TOML")),
    "20 MB": ("w.toml", W + "#" + "x" * 20_000_000 + "\n", ("--workload 'w.toml'",
                                                            "16,777,216-byte limit")),
    "a FIFO": ("w.toml", _fifo, ("--workload 'w.toml'", "not a regular file")),
    "a link loop": ("w.toml", _loop, ("--workload 'w.toml'", "symbolic links")),
    "/dev/zero": ("w.toml", _dev_zero, ("--workload 'w.toml'", "not a regular file")),
}


def workload_cases() -> Iterator[Case]:
    for name, (fn, content, words) in WORKLOADS.items():
        yield refusal_case(f"serve workload {name}", [*SERVE, "--workload", fn], {fn: content},
                           words)
    for name, fn, content in (("a BOM", "w.toml", "\ufeff" + W),
                              ("CRLF", "w.toml", W.replace("\n", "\r\n"))):
        yield taken_case(f"serve workload {name}", [*SERVE, "--workload", fn], {fn: content})


# -- refusals naming what the command line has -------------------------------------------------

#: Refusals whose line names the flag typed (or the file): name -> (argv, files, words).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    "topology compare --gpu of a saved file": (
        ["topology", "compare", "f.json", "ring:n=8", "--gpu", "A100-SXM-80GB"],
        {"f.json": _export("ring:n=8", "f.json")}, ("--gpu", "'f.json'")),
    "topology show an ASTRA-sim file": (
        ["topology", "show", "f.yml"], {"f.yml": _export("ring:n=8", "f.yml")}, ("'f.yml'",)),
    "collective --fabric of a file not there": (
        [*COLL[:3], "no.json"], {}, ("no.json", "does not exist")),
    "--size 1 PiB + 1 B": (_with(COLL, "--size", "1125899906842625"), {},
                           ("--size", "from 1 B to 1 PiB")),
    "--size 1.0000001PiB": (_with(COLL, "--size", "1.0000001PiB"), {},
                            ("--size", "from 1 B to 1 PiB")),
    **{f"{argv[0]} {flag} {path!r}": ([*argv, flag, path], {},
                                       (f"{'--output' if flag == '-o' else flag} {path!r}",
                                        "starts or ends with a blank"))
       for argv, flag, path in (
           (["topology", "export", "ring:n=8"], "-o", " f.json"),
           (["topology", "export", "ring:n=8"], "-o", "f.json "),
           (COLL, "--plot", " p.png"),
           (["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot",
             "--scenarios", "h100-dgx"], "--out", " o"))},
    # a number as help and messages write it (default 20,000,000; from 1 to 1,000,000,000)
    **{f"{argv[0]} {flag} {typed!r} (thousands grouped)": (
        _with(argv, flag, typed), {}, (flag, f"'{typed}'", typed.replace(",", "")))
       for argv, flag, typed in ((COLL, "--max-transfers", "20,000,000"),
                                 (["costs", "--fabric", "ring:n=8"], "--max-rows", "200,000"),
                                 (INFER, "--batch", "1,024"),
                                 (AVAIL, "--trials", "1,000"))},
    "collective --group 2 on a fabric of 1 GPU": (
        [*COLL[:3], "single-switch:n=1", "--group", "2"], {},
        ("--group '2'", "larger than the fabric's 1 GPU")),
    **{f"search {flag} {typed!r}": (
        ["search", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--max-batch", "8", "--tp",
         "8", flag, typed], {}, (f"{flag} {typed!r}", "give 'all' alone"))
       for flag, typed in (("--ep", "all,2"), ("--attention-dp", "2,ALL"))},
    **{f"topology show a fabric of 1 GPU --pair {a} {b}": (
        ["topology", "show", "single-switch:n=1", "--pair", a, b], {},
        (f"--pair '{a} {b}'", "the fabric has only one ('gpu0')"))
       for a, b in (("gpu0", "gpu1"), ("gpu0", "gpu0"))},
    # a name past the file system's 255 bytes, where the suffix is checked first
    **{f"{argv[0]} -o a name of 300 characters{fmt}": (
        [*argv, "-o", "x" * 300, *fmt.split()], {}, ("--output", "File name too long"))
       for argv, fmt in ((["costs", "--fabric", "ring:n=8"], ""),
                         (["topology", "export", "ring:n=8"], " --format json"))},
    "calibrate -o the --base it reads": (
        ["calibrate", "--measurements", "m.csv", "-o", "p.toml", *FIT, "--base", "p.toml"],
        {"m.csv": MEASURED, "p.toml": lambda d: invoke_in(
            ["calibrate", "--measurements", "m.csv", "-o", "p.toml", *FIT], d)},
        ("'p.toml'",)),
}


def cases() -> Iterator[Case]:
    yield from range_cases()
    yield from (past_case(n, a, w, ws) for n, (a, w, ws) in PAST.items())
    yield from (round_trip_case(s, f) for s in ROUND_TRIP_SPECS for f in ("json", "graphml"))
    yield from (symmetric_case(n, a, b, f) for n, (a, b, f) in SYMMETRIC.items())
    yield from workload_cases()
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())


def main() -> int:
    return run_round(cases(), "hostile25-")


if __name__ == "__main__":
    sys.exit(main())
