"""Hostile-input round 30, on what rounds 15-29 (scripts/hostile_round15.py .. 29.py) left
least tried: output folders (``--out`` of ``study lite-gpu``, ``compare``, ``sweep`` and
``availability``) that hold something under the manifest's own name (a folder of one's
notes, an empty folder, a symbolic link to a manifest or to nothing, a FIFO, a file that is
not JSON), an earlier output with a listed file gone (a partial output), a manifest listing
names outside its folder, a ``--out`` that is a link to an empty folder; the library
(docs/api.md) given numbers of Python's and numpy's other types (``fractions.Fraction``,
``decimal.Decimal``, complex, numpy float32/float64/int64/uint16 scalars, ``np.True_``)
for SLOs, options, ``max_batch``, degrees, group sizes and builder parameters (compare,
sweep, serve, run_study, search, evaluate, collective_time, build_fabric), whose results
must be JSON that a report writes (``to_json``) or a refusal naming the parameter; sets of
names (their order, Python's string hashing, changes from run to run) and text or bytes
where a list goes; ``sweep``'s ``points`` where no parameter is a range; options each valid but jointly impossible (``search --max-gpus`` below ``--tp``
x ``--pp``, an instance wider than its fabric, SLOs below the roofline, a prompt past the
model's context); names and specs holding zero-width characters; and a child process run
with ``MPLBACKEND`` set to a backend that does not exist or cannot draw, while figures are
drawn, or ``HOME`` set to a folder of /proc or /sys (which root's ``os.access`` calls
writable).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target); a library refusal is a UserError naming the parameter; a library
value taken gives the same result as its plain Python number, JSON included.

Usage: ``python scripts/hostile_round30.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner), but
for the four child processes; under a minute on two cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_tally import (  # noqa: E402
    Case,
    Made,
    invoke_in,
    refusal_case,
    run_round,
    taken_case,
)

MANIFEST = "netmodel-manifest.json"
STUDY = ["study", "lite-gpu", "--model", "Llama-3-8B", "--phase", "decode", "--no-fabric",
         "--no-sweep", "--no-paper", "--no-reliability", "--no-cost", "--no-crossovers",
         "--no-serving", "--no-packed", "--no-plot", "-q", "--out", "o"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--phases", "decode",
           "--max-batch", "8", "--no-plot", "-q", "--out", "o"]
SWEEP = ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
         "--phases", "decode", "--max-batch", "8", "--param", "adjust.bandwidth_scale=0.5,1",
         "--out", "o"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8",
         "-q", "--trials", "5", "--horizon", "1h", "--no-plot", "--out", "o"]
WRITERS = {"study lite-gpu": STUDY, "compare": COMPARE, "sweep": SWEEP, "availability": AVAIL}
SEARCH = ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"]
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "8"]
NOT_LISTED = "does not list"


def _made(make: Callable[[Path], None]) -> dict[str, Made]:
    """A case's files made by ``make`` in its folder (a FIFO, a link, a folder)."""
    return {".made": lambda d: make(d)}


def _manifest_folder(notes: bool) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / "o" / MANIFEST).mkdir(parents=True)
        if notes:
            (d / "o" / MANIFEST / "notes.txt").write_text("my notes\n")
    return make


def _manifest_link(target: str, write_target: bool) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / "o").mkdir()
        if write_target:
            (d / "m.json").write_text('{"files": {}}')
        os.symlink(target, d / "o" / MANIFEST)
    return make


def _manifest_fifo(d: Path) -> None:
    (d / "o").mkdir()
    os.mkfifo(d / "o" / MANIFEST)


def _manifest_text(text: str, also: str | None = None) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / "o").mkdir()
        (d / "o" / MANIFEST).write_text(text)
        if also:
            (d / "o" / also).write_text("mine\n")
    return make


#: Refusals: name -> (argv, files, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- an output folder holding something under the manifest's name ----------------------
    # taken, and the folder replaced whole: the notes under o/netmodel-manifest.json/ deleted
    **{f"{cmd} --out a folder of notes named as the manifest": (
        argv, _made(_manifest_folder(True)), ("'o'", f"'{MANIFEST}'", "it is a folder"))
       for cmd, argv in WRITERS.items()},
    "study lite-gpu --out an empty folder named as the manifest": (
        STUDY, _made(_manifest_folder(False)), ("'o'", "it is a folder")),
    "compare --out a manifest linked to another file": (
        COMPARE, _made(_manifest_link("../m.json", True)), ("'o'", "it is a symbolic link")),
    "compare --out a manifest linked to nothing": (
        COMPARE, _made(_manifest_link("../none.json", False)), ("'o'", "it is a symbolic link")),
    "study lite-gpu --out a manifest that is a FIFO": (
        STUDY, _made(_manifest_fifo), ("'o'", "it is not a regular file")),
    "sweep --out a manifest folder beside notes": (
        SWEEP, _made(lambda d: (_manifest_folder(True)(d), (d / "o/n.txt").write_text("x"))),
        ("'n.txt'", NOT_LISTED)),
    "compare --out a manifest not JSON beside notes": (
        COMPARE, _made(_manifest_text("my notes", "n.txt")), ("'n.txt'", NOT_LISTED)),
    "compare --out a manifest {} beside notes": (
        COMPARE, _made(_manifest_text("{}", "n.txt")), ("'n.txt'", NOT_LISTED)),
    "compare --out a manifest of 17 MB beside notes": (
        COMPARE, _made(_manifest_text(" " * (17 << 20) + "{}", "n.txt")), ("'n.txt'",)),
    # -- options each valid, jointly impossible --------------------------------------------
    # said 'at most 1 GPUs', naming no --max-gpus
    "search --max-gpus 1 --tp 8": (
        [*SEARCH, "--max-gpus", "1", "--tp", "8"], {},
        ("--tp '8'", "--max-gpus 1 is below TP 8 x PP 1")),
    "search --max-gpus 4 --tp 8 --pp 2,4": (
        [*SEARCH, "--max-gpus", "4", "--tp", "8", "--pp", "2,4"], {},
        ("--pp '2,4'", "--max-gpus 4 is below TP 8 x PP 2")),
    "search --max-gpus 2 --tp 4 --pp 2 (1e0 spelled)": (
        [*SEARCH, "--max-gpus", "2e0", "--tp", "4", "--pp", "2"], {},
        ("--max-gpus 2 is below TP 4 x PP 2",)),
    "infer --fabric ring:n=8 --tp 8 --pp 2": (
        [*INFER, "--fabric", "ring:n=8", "--tp", "8", "--pp", "2"], {},
        ("--fabric 'ring:n=8'", "16 GPUs does not fit", "8 GPUs")),
    "infer --scenario h100-dgx --tp 8 --pp 32": (
        [*INFER, "--scenario", "h100-dgx", "--tp", "8", "--pp", "32"], {},
        ("256 GPUs does not fit", "32 GPUs")),
    "search --fabric ring:n=4 --tp 8": (
        [*SEARCH, "--fabric", "ring:n=4", "--tp", "8"], {}, ("ring:n=4", "8 GPUs", "4 GPUs")),
    "infer --prompt past the model's context": (
        [*INFER, "--tp", "8", "--phase", "prefill", "--prompt", "1e9"], {},
        ("--prompt '1e9'", "8,192 tokens")),
    "search --model Llama-3.1-405B --gpu Lite on a fabric of H100s": (
        ["search", "--model", "Llama-3.1-405B", "--gpu", "Lite", "--fabric", "ring:n=2"], {},
        ("'ring:n=2'", "gpu=Lite")),
    "infer --ep 8 --tp 1 --attention-dp 8": (
        ["infer", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--batch", "8", "--tp", "1",
         "--ep", "8", "--attention-dp", "8"], {}, ("--ep '8'", "does not divide TP degree 1")),
    "sweep --points 3 of a list": (
        [*SWEEP[:-2], "--points", "3"], {},
        ("--points 3", "no --param has one", "drop --points")),
    # -- integer options in odd spellings --------------------------------------------------
    **{f"search --max-gpus {v!r}": ([*SEARCH, "--max-gpus", v], {}, ("--max-gpus", *w))
       for v, w in (("1_000", ("1000",)), ("0x10", ("'0x10'",)), ("8.5", ("'8.5'",)),
                    ("0", ("'0'",)), ("-8", ("'-8'",)), ("8\u200b", ("--max-gpus",)))},
    # -- zero-width characters in names and specs ------------------------------------------
    "infer --model Llama-3-8B with a zero-width space": (
        ["infer", "--model", "Llama-3-8B\u200b", "--gpu", "H100-SXM", "--tp", "1", "--batch",
         "8"], {}, ("Llama-3-8B", "did you mean")),
    "collective all-reduce on ring:n=8 with a zero-width space": (
        ["collective", "all-reduce", "--fabric", "ring:n=8\u200b", "--size", "1MiB"], {},
        ("ring:n=8", "n must be an integer")),
}

#: Commands taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "sweep --points 3 of a LO:HI range": (
        [*SWEEP[:-4], "--param", "adjust.bandwidth_scale=0.5:1", "--points", "3"], {}),
    **{f"search --max-gpus {v!r}": ([*SEARCH, "--max-gpus", v], {})
       for v in ("+8", "8.", "1e3", " 8 ", "8.0")},
    "serve with SLOs below the roofline (exit 3)": (
        ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8",
         "--tp-only", "--tbt", "1us", "--ttft", "1us"], {}),
    "search --tbt 1us (exit 3)": ([*SEARCH, "--tbt", "1us", "--phase", "decode"], {}),
    "compare --out a folder holding a manifest alone, not JSON": (
        COMPARE, _made(_manifest_text("not json"))),
}


def _run(argv: list[str], d: Path):
    r = invoke_in(argv, d)
    if r.exit_code != 0 or "Traceback" in r.output:
        raise AssertionError(f"exit {r.exit_code} | {r.output.strip()[-300:]}")
    return r


def _whole_output(d: Path) -> str | None:
    """Why ``d / 'o'`` is not a whole output (each file its manifest lists, no other)."""
    listed = json.loads((d / "o" / MANIFEST).read_text())["files"]
    held = sorted(p.name for p in (d / "o").iterdir())
    return None if held == sorted([*listed, MANIFEST]) else f"holds {held}, lists {listed}"


def _partial_output(argv: list[str]) -> Callable[[Path], str | None]:
    """An earlier output with one listed file removed, then the command again: taken, and
    the folder a whole new output."""
    def run(d: Path) -> str | None:
        try:
            _run(argv, d)
            first = sorted(p for p in (d / "o").iterdir() if p.name != MANIFEST)[0]
            first.unlink()
            _run(argv, d)
        except AssertionError as exc:
            return str(exc)
        return _whole_output(d)
    return run


def _out_link_to_empty(d: Path) -> str | None:
    (d / "real").mkdir()
    os.symlink("real", d / "o")
    try:
        _run(STUDY, d)
        _run(STUDY, d)   # into its own earlier output, through the link
    except AssertionError as exc:
        return str(exc)
    if not (d / "o").is_symlink():
        return "the link was replaced by a folder"
    return _whole_output(d)


def _names_outside(d: Path) -> str | None:
    """A manifest alone listing names outside its folder: taken, the files named untouched."""
    (d / "o").mkdir()
    (d / "victim.txt").write_text("mine\n")
    entry = {"bytes": 5, "sha256": "0" * 64}
    (d / "o" / MANIFEST).write_text(json.dumps({"files": {
        "../victim.txt": entry, "/etc/hostname": entry, "": entry}}))
    try:
        _run(COMPARE, d)
    except AssertionError as exc:
        return str(exc)
    if (d / "victim.txt").read_text() != "mine\n":
        return "../victim.txt changed"
    return _whole_output(d)


def _drawing_with(**changed: str) -> Callable[[Path], str | None]:
    """``compare --out`` drawing its figures (a child process, as a user runs it) with the
    environment ``changed``: exit 0, the figures written, nothing on stderr."""
    def run(d: Path) -> str | None:
        argv = [a for a in COMPARE if a != "--no-plot"]
        env = {k: v for k, v in os.environ.items()
               if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
        env.update(changed)
        r = subprocess.run([sys.executable, "-m", "netmodel", *argv], cwd=d, env=env,
                           capture_output=True, text=True, timeout=55)
        if r.returncode != 0 or r.stderr.strip():
            return f"exit {r.returncode} | {r.stderr.strip()[-300:]}"
        if not list((d / "o").glob("*.png")):
            return "no figure written"
        return _whole_output(d)
    return run


#: Cases with a verdict of their own: name -> run(folder).
OWN: dict[str, Callable[[Path], str | None]] = {
    **{f"{cmd} --out over a partial earlier output": _partial_output(argv)
       for cmd, argv in (("study lite-gpu", STUDY), ("compare", COMPARE))},
    "study lite-gpu --out a link to an empty folder, twice": _out_link_to_empty,
    "compare --out a manifest alone listing names outside it": _names_outside,
    "compare --out figures with MPLBACKEND=bogus": _drawing_with(MPLBACKEND="bogus"),
    "compare --out figures with MPLBACKEND=module://nope": _drawing_with(
        MPLBACKEND="module://nope"),
    # as root, os.access said /proc and /sys were writable: matplotlib's mkdir of
    # $HOME/.config/matplotlib failed, and two warnings followed the output on stderr
    "compare --out figures with HOME=/proc": _drawing_with(HOME="/proc"),
    "compare --out figures with HOME=/sys": _drawing_with(HOME="/sys"),
}


def _lib(module: str, function: str, *args: object, **kw: object) -> Callable[[], object]:
    """A call of ``module.function(*args, **kw)``, imported when run."""
    def call() -> object:
        import importlib

        return getattr(importlib.import_module(module), function)(*args, **kw)
    return call


def _slo(**kw: object) -> Callable[[], object]:
    return _lib("compute.phases", "Slo", **kw)


def _options(**kw: object) -> Callable[[], object]:
    return _lib("compute.roofline_options", "RooflineOptions", **kw)


def _compare_json(**kw: object) -> Callable[[], object]:
    """``netmodel.compare``'s JSON of Llama-3-8B decode on h100-dgx (max_batch 8) with
    ``kw``; ``slo`` and ``options`` given as the keyword arguments of their classes."""
    def call() -> object:
        import netmodel
        from compute.phases import Slo
        from compute.roofline_options import RooflineOptions

        args = {"max_batch": 8, **kw}
        if isinstance(args.get("slo"), dict):
            args["slo"] = Slo(**args["slo"])
        if isinstance(args.get("options"), dict):
            args["options"] = RooflineOptions(**args["options"])
        return json.loads(netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["decode"],
                                           **args).to_json())
    return call


def _sweep_json(**kw: object) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        return json.loads(netmodel.sweep(["h100-dgx"], ["adjust.bandwidth_scale=0.5,1"],
                                         ["Llama-3-8B"], ["decode"], **kw).to_json())
    return call


def _settings(doc: dict) -> dict:
    """A compare's or a sweep's JSON without what changes from run to run."""
    return {k: v for k, v in doc.items() if k not in ("written_utc", "elapsed_s")}


_PLAIN: dict[str, object] = {}


def _same_as(plain: Callable[[], object]) -> Callable[[object], bool]:
    """Whether a result is the one ``plain`` (the call with Python's numbers) gives."""
    def holds(got: object) -> bool:
        key = id(plain)
        if key not in _PLAIN:
            _PLAIN[key] = plain()
        want = _PLAIN[key]
        return _settings(got) == _settings(want) if isinstance(got, dict) else got == want
    return holds


def _search(**kw: object) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        best = netmodel.search("Llama-3-8B", "H100-SXM", "decode", max_batch=64, **kw).best
        return best.tp, best.batch
    return call


def _compare_rows(models: object, scenarios: object, phases: object, **kw: object
                  ) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        r = netmodel.compare(models, scenarios, phases, max_batch=8, **kw)
        return [(row.model, row.scenario, row.phase) for row in r.rows]
    return call


def _sweep_rows(params: object, points: object = None, **kw: object) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        return len(netmodel.sweep(["h100-dgx"], params, ["Llama-3-8B"], ["decode"],
                                  points=points, max_batch=8, **kw).rows)
    return call


def _serve_json(**kw: object) -> Callable[[], object]:
    def call() -> object:
        from netmodel.study.serving import serve

        return json.loads(serve("Llama-3-8B", "h100-dgx", dimensions="tp",
                                **{"max_batch": 8, **kw}).to_json())
    return call


_STUDY_SKIPPED = dict(fabric=False, sweep=False, paper=False, reliability=False, cost=False,
                      crossovers=False, serving=False, packed=False, moe=None)


def _study_json(**kw: object) -> Callable[[], object]:
    """``netmodel.run_study``'s JSON of Llama-3-8B decode on the Lite, its ring network,
    every other part skipped, with ``kw``."""
    def call() -> object:
        import netmodel

        args = {"models": ["Llama-3-8B"], "phases": ["decode"], "gpus": ["Lite"],
                "networks": ["ring"], "max_batch": 8, **_STUDY_SKIPPED, **kw}
        return json.loads(netmodel.run_study(**args).to_json())
    return call


_COMPARE_PLAIN = _compare_json()
_SWEEP_PLAIN = _sweep_json(max_batch=8)

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    # a flag is Python's or numpy's bool, kept as Python's (compute.validate.flag, 7178e9af)
    "RooflineOptions(two_batch_overlap=np.True_)": (
        _options(two_batch_overlap=np.True_), lambda o: o.two_batch_overlap is True),
    # raised TypeError 'Object of type int64 is not JSON serializable'
    "run_study(max_batch=np.int64(8)).to_json()": (
        _study_json(max_batch=np.int64(8)), _same_as(_study_json())),
    "sweep(points=3) of LO:HI": (_sweep_rows(["adjust.bandwidth_scale=0.5:1"], 3),
                                 lambda n: n == 3),
    "compare(phases={'decode'}), a set of one": (
        _compare_rows(["Llama-3-8B"], ["h100-dgx"], {"decode"}),
        lambda rows: rows == [("Llama-3-8B", "h100-dgx", "decode")]),
    # raised TypeError 'Object of type int64 (float32) is not JSON serializable'
    "serve(max_batch=np.int64(8)).to_json()": (
        _serve_json(max_batch=np.int64(8)), _same_as(_serve_json())),
    "serve(expert_skew=np.float32(1)).to_json()": (
        _serve_json(expert_skew=np.float32(1)), _same_as(_serve_json())),
    # each raised TypeError 'Object of type int64/float32 is not JSON serializable' from
    # to_json: the checks took numpy's scalars and kept them
    "compare(max_batch=np.int64(8)).to_json()": (
        _compare_json(max_batch=np.int64(8)), _same_as(_COMPARE_PLAIN)),
    "compare(max_batch=np.uint16(8)).to_json()": (
        _compare_json(max_batch=np.uint16(8)), _same_as(_COMPARE_PLAIN)),
    "sweep(max_batch=np.int64(8)).to_json()": (
        _sweep_json(max_batch=np.int64(8)), _same_as(_SWEEP_PLAIN)),
    "compare(slo=Slo(tbt=np.float32(0.05))).to_json()": (
        _compare_json(slo={"tbt": np.float32(0.05)}),
        lambda doc: doc["settings"]["slo"]["tbt_s"] == float(np.float32(0.05))),
    "compare(slo=Slo(tbt=np.float64(0.05))).to_json()": (
        _compare_json(slo={"tbt": np.float64(0.05)}), _same_as(_COMPARE_PLAIN)),
    "compare(options=RooflineOptions(memory_reserve=np.float32(0.1)))": (
        _compare_json(options={"memory_reserve": np.float32(0.25)}),
        lambda doc: doc["settings"]["options"]["memory_reserve"] == 0.25),
    "compare(options=RooflineOptions(flops_efficiency=np.float32(0.5)))": (
        _compare_json(options={"flops_efficiency": np.float32(0.5)}),
        lambda doc: doc["settings"]["options"]["flops_efficiency"] == 0.5),
    "RooflineOptions(dense_mlp_tp=np.int64(1)).to_dict() as JSON": (
        lambda: json.dumps(_options(dense_mlp_tp=np.int64(1))().to_dict()),
        lambda text: '"dense_mlp_tp": 1' in text),
    # refused by the search: 'latency_limit must be a number of seconds > 0 (inf: no
    # limit), got 0.5', a limit the caller never named, for a value above 0
    "search(slo=Slo(tbt=Fraction(1, 20)))": (
        lambda: _search(slo=_slo(tbt=Fraction(1, 20))())(), _same_as(_search())),
    "Slo(ttft=Fraction(1, 2)).ttft is a float": (
        lambda: _slo(ttft=Fraction(1, 2))().ttft, lambda v: type(v) is float and v == 0.5),
    "RooflineOptions(flops_efficiency=Fraction(1, 2))": (
        _options(flops_efficiency=Fraction(1, 2)),
        lambda o: type(o.flops_efficiency) is float and o.flops_efficiency == 0.5),
    "search(tp=[np.int64(8)])": (_search(tp=[np.int64(8)]), lambda r: r[0] == 8),
    "search(max_batch=np.int64(64))": (
        lambda: _lib("netmodel", "search", "Llama-3-8B", "H100-SXM", "decode",
                     max_batch=np.int64(64))().best.batch, _same_as(lambda: _search()()[1])),
    "build_fabric('ring', bandwidth=np.float32(4e11))": (
        _lib("netmodel", "build_fabric", "ring", {"n": 8, "bandwidth": np.float32(4e11)}),
        lambda g: g.graph["gpus"] == 8),
    "collective_time(group=np.int8(8))": (
        _lib("netmodel", "collective_time", "ring:n=8", "all-reduce", [1e6], np.int8(8)),
        _same_as(_lib("netmodel", "collective_time", "ring:n=8", "all-reduce", [1e6], 8))),
    "collective_time(sizes=Fraction(10**6))": (
        _lib("netmodel", "collective_time", "ring:n=8", "all-reduce", Fraction(10**6), 8),
        _same_as(_lib("netmodel", "collective_time", "ring:n=8", "all-reduce", 1e6, 8))),
}

#: Library refusals: name -> (call, words the UserError holds).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    # a count given in code is a Python or numpy int (compute.validate.an_int, 1695f71b)
    "build_fabric('ring', n=Fraction(8))": (
        _lib("netmodel", "build_fabric", "ring", {"n": Fraction(8)}),
        ("ring: n must be a whole number (an int)",)),
    # a list parameter has its own values: points was read by none, without a word (the
    # command line refused --points)
    "sweep(points=3) of a list parameter": (
        _sweep_rows(["adjust.bandwidth_scale=0.5,1"], 3),
        ("points 3", "no parameter of params has one", "leave points None")),
    "sweep(points=3) of LO:HI:N": (
        _sweep_rows(["adjust.bandwidth_scale=0.5:1:2"], 3), ("points 3",)),
    # a set's order (of text) follows PYTHONHASHSEED: the rows, and the baseline where the
    # default is not among the scenarios, changed from run to run
    "compare(scenarios={'lite-flat', 'lite-hier'})": (
        _compare_rows(["Llama-3-8B"], {"lite-flat", "lite-hier"}, ["decode"]),
        ("scenarios must be a list or tuple", "a set", "order changes from run to run")),
    "compare(phases={'decode', 'prefill'})": (
        _compare_rows(["Llama-3-8B"], ["h100-dgx"], {"decode", "prefill"}),
        ("phases", "a set")),
    "compare(gpus=frozenset({'Lite', 'H100-SXM'}))": (
        _compare_rows(["Llama-3-8B"], ["lite-flat"], ["decode"],
                      gpus=frozenset({"Lite", "H100-SXM"})), ("gpus", "a frozenset")),
    "sweep(models={'Llama-3-8B', 'Llama-3-70B'})": (
        lambda: __import__("netmodel").sweep(["h100-dgx"], ["adjust.bandwidth_scale=0.5,1"],
                                             {"Llama-3-8B", "Llama-3-70B"}, ["decode"]),
        ("models", "a set")),
    "run_study(networks={'ring', 'ideal'})": (
        _study_json(networks={"ring", "ideal"}), ("networks", "a set")),
    "run_study(max_batch=np.float64(8))": (_study_json(max_batch=np.float64(8)),
                                           ("max_batch", "8.0")),
    "compare(models=b'Llama-3-8B')": (
        _compare_rows(b"Llama-3-8B", ["h100-dgx"], ["decode"]), ("models", "b'Llama-3-8B'")),
    "compare(phases='decode,prefill')": (
        _compare_rows(["Llama-3-8B"], ["h100-dgx"], "decode,prefill"),
        ("unknown phase 'decode,prefill'",)),
    "Slo(tbt=Decimal('0.05'))": (_slo(tbt=Decimal("0.05")), ("tbt SLO", "Decimal('0.05')")),
    "Slo(ttft=10**400)": (_slo(ttft=10**400), ("ttft SLO", "401 digits")),
    "Slo(tbt=Fraction(10**400, 3))": (_slo(tbt=Fraction(10**400, 3)), ("tbt SLO",)),
    "Slo(tbt=np.float32('nan'))": (_slo(tbt=np.float32("nan")), ("tbt SLO", "nan")),
    "Slo(ttft=0j)": (_slo(ttft=0j), ("ttft SLO", "0j")),
    "RooflineOptions(dense_mlp_tp=np.int64(2))": (
        _options(dense_mlp_tp=np.int64(2)), ("dense_mlp_tp", "got 2")),
    "RooflineOptions(flops_efficiency=Decimal('0.5'))": (
        _options(flops_efficiency=Decimal("0.5")), ("flops_efficiency", "Decimal('0.5')")),
    "RooflineOptions(memory_reserve=np.float32(1))": (
        _options(memory_reserve=np.float32(1)), ("memory reserve", "[0, 1)")),
    "compare(max_batch=8.0)": (_compare_json(max_batch=8.0), ("max_batch", "got 8.0")),
    "compare(max_batch=np.float64(8))": (_compare_json(max_batch=np.float64(8)),
                                         ("max_batch", "8.0")),
    "compare(max_batch=True)": (_compare_json(max_batch=True), ("max_batch", "True")),
    "sweep(max_batch=Decimal(8))": (_sweep_json(max_batch=Decimal(8)),
                                    ("max_batch", "Decimal('8')")),
    "evaluate(tp=Decimal(8))": (
        _lib("netmodel", "evaluate", "Llama-3-8B", "H100-SXM", "decode", tp=Decimal(8),
             batch=8), ("TP degree", "Decimal('8')")),
    "evaluate(batch=8+0j)": (
        _lib("netmodel", "evaluate", "Llama-3-8B", "H100-SXM", "decode", tp=8, batch=8 + 0j),
        ("batch", "(8+0j)")),
    "search(max_gpus=...) through compute.search": (
        _lib("compute.search", "search", "Llama-3-8B", "H100-SXM", "decode", tp=8, max_gpus=1,
             max_batch=8), ("max_gpus 1 is below TP 8 x PP 1",)),
    "collective_time(group=Decimal(8))": (
        _lib("netmodel", "collective_time", "ring:n=8", "all-reduce", [1e6], Decimal(8)),
        ("group must be a size", "Decimal('8')")),
    "collective_time(sizes=[Decimal('1e6')])": (
        _lib("netmodel", "collective_time", "ring:n=8", "all-reduce", [Decimal("1e6")], 8),
        ("message size", "Decimal")),
    "collective_time(op='all-reduce' + zero-width space)": (
        _lib("netmodel", "collective_time", "ring:n=8", "all-reduce\u200b", [1e6], 8),
        ("did you mean 'all-reduce'", "ZERO WIDTH SPACE")),
    "build_fabric('ring', n=Decimal(8))": (
        _lib("netmodel", "build_fabric", "ring", {"n": Decimal(8)}),
        ("ring: n must be an integer", "Decimal('8')")),
    "build_fabric('ring:n=8' + zero-width space)": (
        _lib("netmodel", "build_fabric", "ring:n=8\u200b"), ("ring: n", "'8\\u200b'")),
}


def own_case(name: str, run: Callable[[Path], str | None]) -> Case:
    return f"own {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (own_case(n, r) for n, r in OWN.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    return run_round(cases(), "hostile30-")


if __name__ == "__main__":
    sys.exit(main())
