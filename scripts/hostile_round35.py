"""Hostile-input round 35, on what rounds 15-34 (scripts/hostile_round15.py .. 34.py) tried
least: what changed lately (an engine profile's ``moe_exchanges``, a GPU file's
``host_arch``, ``compute_capability`` and ``nvlinks``, twin-port ``module_ports``, serve's
``--kv-ports`` and its workload file, the NCCL release and buffer of a collective);
data files with odd but plausible content (a byte-order mark, UTF-16, a key given twice,
fullwidth digits, NaN, inf, 1e400 and 2**70, empty tables, a number as text, nesting past
any file's, a GPU deriving from itself); paths (a name with no room for the staging folder
or temporary file written beside it, /dev/null, the root, a link to a file, a FIFO, a link
that loops); writes the checks let through that fail after all (a folder made read-only
since, a full disk: said with the flag); absurd sizes an estimate refuses before any work
(1e9 GPUs behind a switch of radix 144, 100,000 trials over 100 years, 10^7 sweep points,
``collective --all-groups`` on a 40x40x40 torus);
and the Python API given the wrong types (a table where a list of ``PATH=LO:HI`` texts is
meant, a Decimal, an array, 10^30 tokens).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2 (1 for a full disk: nothing the user typed was wrong), one line ``error: ...`` holding the
words listed, no traceback, nothing written in the case's folder; a value taken is exit 0
(or 3, an unmet target); a library refusal is a UserError (a ValueError) holding the words
listed; a library value taken gives the result it shows.

Usage: ``python scripts/hostile_round35.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner); about
6 seconds on two cores.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_tally import (  # noqa: E402
    Case,
    Made,
    _listing,
    invoke_in,
    make,
    one_line_refusal,
    refusal_case,
    run_round,
    taken_case,
)

ROOT = Path(__file__).resolve().parents[1]
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "8"]
MINE = ["infer", "--model", "Llama-3-8B", "--gpu", "Mine", "--tp", "1", "--batch", "8",
        "--gpu-file", "g.toml"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--phases", "decode", "--max-batch", "8",
           "-q", "--no-plot"]
SWEEP = ["sweep", "--scenarios", "lite-flat", "--models", "Llama-3-8B", "--phases", "decode",
         "--max-batch", "8", "-q", "--no-plot"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "16"]
COLLECTIVE = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "8M"]
COSTS = ["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8"]
AVAIL = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--max-batch",
         "8", "-q", "--no-plot"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml"]
HF = ["models", "--hf-config", "c.json"]

#: The shipped texts the files of the cases are edited from.
_PROFILE = (ROOT / "compute/data/profiles/vllm-h100-2024.toml").read_text().replace(
    'name = "vllm-h100-2024"', 'name = "mine"', 1)
_LITE_FLAT = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text().replace(
    'name = "lite-flat"', 'name = "mine"', 1)
_MEASURED = (ROOT / "compute/data/vllm_h100_2024_measurements.csv").read_text()
_GPU = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "x"\n'
_WORKLOAD = "prompt = 1500\noutput = 13\nrate = 10\n"
_HF = ('{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, '
       '"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, '
       '"vocab_size": 128256, "max_position_embeddings": 8192}')
_EXCHANGES = 'moe_exchanges = ["all-to-all", "all-reduce", "vllm-gather"]'
_OVERHEAD = "value = 0.00010178886743646623"
#: A name of 250 bytes: within the file system's 255, not with the staging folder's 30-odd
#: more, nor a temporary file's 18 or so.
LONG = "a" * 250


def _edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _profile(old: str, new: str) -> dict[str, Made]:
    return {"p.toml": _edited(_PROFILE, old, new)}


def _lite_flat(old: str, new: str) -> dict[str, Made]:
    return {"s.toml": _edited(_LITE_FLAT, old, new)}


def _gpu(extra: str) -> dict[str, Made]:
    return {"g.toml": _GPU + extra}


def _workload(text: str | bytes, name: str = "w.toml") -> dict[str, Made]:
    return {name: text}


def _fifo(name: str) -> Made:
    return lambda d: os.mkfifo(d / name)


def _loop(name: str) -> Made:
    return lambda d: os.symlink(name, d / name)


def _link(name: str, to: str) -> Made:
    return lambda d: os.symlink(to, d / name)


#: Command lines refused: name -> (argv, files, words the line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- a name with no room for what is written beside it: it ran the whole command, then
    # 'cannot write output folder ...: File name too long' ---------------------------------
    "compare --out of 250 bytes": ([*COMPARE, "--out", LONG], {},
                                   ("--out 'aaaa", "its name is 250 bytes", "staging folder")),
    "availability --out of 250 bytes": ([*AVAIL, "--out", LONG], {},
                                        ("--out 'aaaa", "its name is 250 bytes")),
    "costs -o of 244 bytes (.csv)": ([*COSTS, "-o", "a" * 240 + ".csv"], {},
                                     ("--output 'aaaa", "temporary file", "at most 237 bytes")),
    "costs --format vidur -o of 250 bytes": ([*COSTS, "--format", "vidur", "-o", LONG], {},
                                             ("--output 'aaaa", "staging folder")),
    "topology export -o of 245 bytes (.json)": (
        ["topology", "export", "ring:n=4", "-o", "a" * 240 + ".json"], {},
        ("--output 'aaaa", "its name is 245 bytes", "at most 236 bytes")),
    "calibrate -o of 245 bytes (.toml)": (
        ["calibrate", "--measurements", "m.csv", "-o", "a" * 240 + ".toml"],
        {"m.csv": _MEASURED}, ("--out 'aaaa", "temporary file")),
    # -- paths ------------------------------------------------------------------------------
    "compare --out /dev/null": ([*COMPARE, "--out", "/dev/null"], {},
                                ("--out '/dev/null'", "not a folder")),
    "compare --out /": ([*COMPARE, "--out", "/"], {}, ("--out '/'", "root")),
    "compare --out a link to a file": ([*COMPARE, "--out", "l"], {"f": "x", "l": _link("l", "f")},
                                       ("--out", "symbolic link to 'f'")),
    "serve --workload a FIFO": ([*SERVE, "--workload", "w.toml"], {"w.toml": _fifo("w.toml")},
                                ("--workload 'w.toml'", "FIFO")),
    "serve --workload a link that loops": ([*SERVE, "--workload", "w.toml"],
                                           {"w.toml": _loop("w.toml")},
                                           ("--workload 'w.toml'", "symbolic links")),
    "calibrate -o in a folder not made": (["calibrate", "--measurements", "m.csv", "-o",
                                           "no/p.toml"], {"m.csv": _MEASURED},
                                          ("--out 'no/p.toml'", "does not exist")),
    # -- an engine profile's moe_exchanges (new) and values past their range --------------
    "profile moe_exchanges = []": ([*INFER, "--profile", "p.toml"], _profile(_EXCHANGES,
                                                                             "moe_exchanges = []"),
                                   ("moe_exchanges must be a list of", "got []")),
    "profile moe_exchanges twice one": (
        [*INFER, "--profile", "p.toml"],
        _profile(_EXCHANGES, 'moe_exchanges = ["all-to-all", "all-to-all"]'),
        ("each at most once", "got ['all-to-all', 'all-to-all']")),
    "profile moe_exchanges a text": (
        [*INFER, "--profile", "p.toml"], _profile(_EXCHANGES, 'moe_exchanges = "all-to-all"'),
        ("moe_exchanges must be a list", "got 'all-to-all'")),
    "profile layer_overhead_s nan": ([*INFER, "--profile", "p.toml"],
                                     _profile(_OVERHEAD, "value = nan"),
                                     ("[parameters.layer_overhead_s]", "from 0 to 1 s", "nan")),
    "profile [fit] points 1e400": ([*INFER, "--profile", "p.toml"],
                                   _profile("points = 3", "points = 1e400"),
                                   ("1e400", "[fit] points", "range of a float")),
    "profile in UTF-16": ([*INFER, "--profile", "p.toml"],
                          {"p.toml": _PROFILE.encode("utf-16")}, ("not a UTF-8 text file",)),
    "profile measurement tp 3.5": ([*INFER, "--profile", "p.toml"],
                                   _profile("tp = 1", "tp = 3.5"),
                                   ("measurement 1: tp must be a whole number", "3.5")),
    # -- a GPU file's newer keys -------------------------------------------------------------
    "GPU file host_arch = 5": (MINE, _gpu("host_arch = 5\n"),
                               ("host_arch must be", "got 5", "'x86_64'")),
    "GPU file host_arch = 'riscv'": (MINE, _gpu('host_arch = "riscv"\n'),
                                     ("got 'riscv'", "'aarch64'")),
    "GPU file compute_capability = 9.0 (a float)": (MINE, _gpu("compute_capability = 9.0\n"),
                                                    ("compute_capability", "as text", "9.0")),
    "GPU file nvlinks = -1": (MINE, _gpu("nvlinks = -1\n"),
                              ("nvlinks must be a whole number from 1 to 1,024", "-1")),
    "GPU file max_instance = 2**40": (MINE, _gpu("max_instance = 1099511627776\n"),
                                      ("max_instance", "100,000")),
    "GPU file derives from itself": (MINE, {"g.toml": _GPU.replace('"H100-SXM"', '"Mine"')},
                                     ("derives from itself",)),
    "GPU file derives from one given after it": (
        MINE, {"g.toml": _GPU.replace('"H100-SXM"', '"B"')
               + '[gpu."B"]\nderive_from = "Mine"\nsource = "y"\n'}, ("give 'B' first",)),
    "GPU file an empty die table": (MINE, _gpu('[gpu."Mine".die]\n'),
                                    ("die lacks row(s) area",)),
    # -- a scenario file: odd values, wrong types, nesting -------------------------------
    "scenario module_ports on a flat fabric": (
        [*COMPARE, "--scenarios", "s.toml"], _lite_flat("planes = 4", "planes = 4\nmodule_ports = 2"),
        ("unknown key(s) module_ports for builder 'flat'",)),
    "scenario n = 1e9 behind radix 144": (
        [*COMPARE, "--scenarios", "s.toml"], _lite_flat("n = 128", "n = 1000000000"),
        ("1000000000 GPUs need switches of radix >= 1000000000",)),
    "scenario n = 128.5": ([*COMPARE, "--scenarios", "s.toml"],
                           _lite_flat("n = 128", "n = 128.5"), ("n must be an integer", "128.5")),
    "scenario n in fullwidth digits": ([*COMPARE, "--scenarios", "s.toml"],
                                       _lite_flat("n = 128", 'n = "１２８"'),
                                       ("FULLWIDTH DIGIT ONE", "ASCII digits")),
    "scenario latency in fullwidth digits": (
        [*COMPARE, "--scenarios", "s.toml"], _lite_flat('latency = "330ns"', 'latency = "３３０ns"'),
        ("latency '３３０ns'", "ASCII digits")),
    "scenario nested 5,000 deep": ([*COMPARE, "--scenarios", "s.toml"],
                                   {"s.toml": _LITE_FLAT + "x = " + "[" * 5000 + "]" * 5000},
                                   ("nests deeper than 32 levels",)),
    "scenario length = inf": ([*COMPARE, "--scenarios", "s.toml"],
                              _lite_flat("length = 20.0", "length = inf"), ("length", "inf")),
    "scenario length = '1e999m'": ([*COMPARE, "--scenarios", "s.toml"],
                                   _lite_flat("length = 20.0", 'length = "1e999m"'),
                                   ("from 0 to 100,000 m", "'1e999m'")),
    "scenario radix = 2**70": ([*COMPARE, "--scenarios", "s.toml"],
                               _lite_flat("radix = 144", "radix = 1180591620717411303424"),
                               ("radix", "an integer of 22 digits")),
    "scenario placement = 5": ([*COMPARE, "--scenarios", "s.toml"],
                               _lite_flat('placement = "contiguous"', "placement = 5"),
                               ("placement 5 is unknown", "'contiguous'")),
    # -- serve's workload file and --kv-ports ----------------------------------------------
    "workload prompt given twice": ([*SERVE, "--workload", "w.toml"],
                                    _workload(_WORKLOAD + "prompt = 100\n"),
                                    ("w.toml is malformed TOML", "Cannot overwrite")),
    "workload prompt 1e12": ([*SERVE, "--workload", "w.toml"],
                             _workload(_WORKLOAD.replace("1500", "1000000000000")),
                             ("prompt must be a whole number from 1 to 100,000,000",)),
    "workload prompt nan": ([*SERVE, "--workload", "w.toml"],
                            _workload(_WORKLOAD.replace("1500", "nan")), ("prompt", "nan")),
    "workload prompt '１５００'": ([*SERVE, "--workload", "w.toml"],
                                 _workload(_WORKLOAD.replace("1500", '"１５００"')),
                                 ("prompt", "'１５００'")),
    "workload rate an empty table": ([*SERVE, "--workload", "w.toml"],
                                     _workload(_WORKLOAD.replace("rate = 10", "rate = {}")),
                                     ("rate must be a number", "got {}")),
    "workload JSON a list": ([*SERVE, "--workload", "w.json"], _workload("[1, 2]", "w.json"),
                             ("w.json must be a table of keys",)),
    "workload JSON a key twice": (
        [*SERVE, "--workload", "w.json"],
        _workload('{"prompt": 1, "prompt": 2, "output": 3, "rate": 1}', "w.json"),
        ("key 'prompt' is given twice",)),
    "workload JSON nested 51 deep": (
        [*SERVE, "--workload", "w.json"],
        _workload('{"prompt": ' + "[" * 50 + "]" * 50 + ', "output": 3}', "w.json"),
        ("nests deeper than 32 levels",)),
    "serve --kv-ports 1e9 on lite-ocs": (
        ["serve", "--scenario", "lite-ocs", "--model", "Llama-3-8B", "--kv-ports",
         "1000000000"], {}, ("--kv-ports '1000000000'", "from 1 to 3")),
    "serve --prefill-gpu a GPU file of fraction 0": (
        [*SERVE, "--prefill-gpu", "g.toml"], _gpu("fraction = 0\n"),
        ("fraction must be a number from 1e-06 to 1", "got 0")),
    # -- a collective's NCCL settings and failures ---------------------------------------
    "collective --nccl-buffsize -4M": ([*COLLECTIVE, "--nccl-buffsize", "-4M"], {},
                                       ("--nccl-buffsize", "8 B to 1 TiB", "'-4M'")),
    "collective --nccl-release 9.99.9": ([*COLLECTIVE, "--nccl-release", "9.99.9"], {},
                                         ("--nccl-release '9.99.9'", "2.17..")),
    "collective --fail every GPU": ([*COLLECTIVE, "--fail", ",".join(f"gpu{i}" for i in range(8))],
                                    {}, ("every GPU of the fabric failed",)),
    "collective --fail one link both ways": ([*COLLECTIVE, "--fail", "gpu0/gpu1,gpu1/gpu0"], {},
                                             ("more than once", "either way round")),
    "collective --size 1e30": (["collective", "all-reduce", "--fabric", "ring:n=8", "--size",
                                "1e30"], {}, ("--size '1e30'", "1 PiB")),
    # -- absurd sizes: an estimate refuses them before any work ---------------------------
    "sweep --param fabric.n=1:1e9": ([*SWEEP, "--param", "fabric.n=1:1000000000"], {},
                                     ("--param", "outside what can be built")),
    "sweep a bandwidth of 1e300 GB/s": ([*SWEEP, "--param",
                                         "fabric.bandwidth=1e300GB/s:1e301GB/s"], {},
                                        ("too large", "1.8e+308")),
    "sweep --points 10^7": ([*SWEEP, "--param", "fabric.latency=1us:2us", "--points",
                             "10000000"], {}, ("--points '10000000'", "NETMODEL_MAX_SWEEP_POINTS")),
    "availability 100,000 trials over 100 years": (
        [*AVAIL, "--trials", "100000", "--horizon", "100y"], {},
        ("failure events to simulate", "--trials")),
    "availability --trials in fullwidth digits": ([*AVAIL, "--trials", "１０"], {},
                                                  ("--trials '１０'", "ASCII digits")),
    # ran past 100 s with no estimate (netmodel.collectives.concurrent.ALL_GROUPS_WORK)
    "collective --all-groups of 64 on a 40x40x40 torus": (
        ["collective", "all-reduce", "--fabric", "torus:dims=40x40x40", "--group", "64",
         "--all-groups"], {},
        ("--all-groups: all-reduce on all 1,000 groups of 64 GPUs", "limit of 25,000,000")),
    "collective --all-groups of 8 on a 30x30x30 torus": (
        ["collective", "all-to-all", "--fabric", "torus:dims=30x30x30", "--all-groups"], {},
        ("--all-groups: all-to-all on all 3,375 groups of 8 GPUs", "limit of 25,000,000")),
    # -- a HuggingFace config ------------------------------------------------------------
    "hf-config nested 100,001 deep": (HF, {"c.json": '{"a": ' + "[" * 100000 + "]" * 100000
                                           + "}"}, ("nests deeper than 32 levels",)),
    "hf-config a key twice": (HF, {"c.json": '{"hidden_size": 4096, "hidden_size": 8192}'},
                              ("key 'hidden_size' is given twice",)),
    "hf-config 10^12 layers": (HF, {"c.json": _HF.replace('"num_hidden_layers": 32',
                                                          '"num_hidden_layers": 1000000000000')},
                               ("num_hidden_layers must be a whole number from 1 to 10,000",)),
    "hf-config hidden_size NaN": (HF, {"c.json": _HF.replace('"hidden_size": 4096',
                                                             '"hidden_size": NaN')},
                                  ("hidden_size", "nan")),
    # -- calibrate's measurements ----------------------------------------------------------
    "measurements a column twice": (CALIBRATE, {"m.csv": "model,model,gpu,tp,phase,batch,"
                                                "context,latency_s\n"},
                                    ("column(s) model given twice",)),
    "measurements a header alone": (CALIBRATE, {"m.csv": "model,gpu,tp,phase,batch,context,"
                                                "latency_s\n"},
                                    ("holds a header but no measurements",)),
    "measurements past 4 MiB": (CALIBRATE, {"m.csv": _MEASURED * 2000},
                                ("larger than the 4,194,304-byte limit",)),
    "measurements tp in fullwidth digits": (
        CALIBRATE, {"m.csv": "model,gpu,tp,phase,batch,context,latency_s\n"
                    "Llama-3-8B,H100-SXM,１,decode,8,96,0.0078\n"}, ("row 2", "ASCII digits")),
}

#: Command lines taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "profile with a byte-order mark": ([*INFER, "--profile", "p.toml"],
                                       {"p.toml": b"\xef\xbb\xbf" + _PROFILE.encode()}),
    "workload with a byte-order mark": ([*SERVE, "--workload", "w.toml"],
                                        {"w.toml": b"\xef\xbb\xbf" + _WORKLOAD.encode()}),
    "GPU file with a byte-order mark": (MINE, {"g.toml": b"\xef\xbb\xbf" + _GPU.encode()}),
    "scenario n = '128' (a number as text)": ([*COMPARE, "--scenarios", "s.toml"],
                                              _lite_flat("n = 128", 'n = "128"')),
    "compare --out of 220 bytes": ([*COMPARE, "--out", "a" * 220], {}),
}


def write_refused_case(name: str, argv: list[str], files: dict[str, Made], code: int,
                       words: tuple[str, ...]) -> Case:
    """``netmodel argv`` whose output's write fails with OSError ``code`` after every check
    let it through (a folder made read-only since, a full disk): one line naming ``words``
    (the flag first), exit status 2 (1 for a full disk), nothing written."""
    def run(d: Path) -> str | None:
        import compute.outputs

        def refused(path: str) -> None:
            raise OSError(code, os.strerror(code))

        make(d, files)
        before = _listing(d)
        kept = compute.outputs._fix_mode
        compute.outputs._fix_mode = refused
        try:
            r = invoke_in(argv, d)
        finally:
            compute.outputs._fix_mode = kept
        status = 1 if code == errno.ENOSPC else 2   # a full disk: nothing typed was wrong
        if r.exit_code == status:
            r.exit_code = 2   # then judged as any refusal's one line
        why = one_line_refusal(r, words)
        if why is not None:
            return why
        after = _listing(d)
        return None if after == before else f"wrote {sorted(set(after) - set(before))}"
    return f"write {name}", run


#: Writes refused after the checks: name -> (argv, files, errno, words).
WRITES: dict[str, tuple[list[str], dict[str, Made], int, tuple[str, ...]]] = {
    "compare --out read-only since": ([*COMPARE, "--out", "out"], {}, errno.EACCES,
                                      ("--out 'out': cannot write output folder 'out'",)),
    "sweep --out, a full disk": ([*SWEEP, "--param", "fabric.latency=1us,2us", "--out", "out"],
                                 {}, errno.ENOSPC,
                                 ("--out 'out': cannot write output folder 'out'",
                                  "No space left")),
    "costs --format vidur -o read-only since": (
        [*COSTS, "--format", "vidur", "-o", "vid"], {}, errno.EACCES,
        ("--output 'vid': cannot write output folder 'vid'",)),
    "costs -o t.csv read-only since": ([*COSTS, "-o", "t.csv"], {}, errno.EACCES,
                                       ("--output 't.csv': cannot write output file",)),
    "topology export -o f.json, a full disk": (
        ["topology", "export", "ring:n=4", "-o", "f.json"], {}, errno.ENOSPC,
        ("--output 'f.json': cannot write fabric file",)),
    "calibrate -o p.toml read-only since": (CALIBRATE, {"m.csv": _MEASURED}, errno.EACCES,
                                            ("--out 'p.toml': cannot write profile file",)),
}


def _api(name: str, *args, **kw) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        return getattr(netmodel, name)(*args, **kw)
    return call


def _write(fn: str, path: str, content) -> Callable[[], object]:
    def call() -> object:
        import tempfile

        import compute.outputs

        with tempfile.TemporaryDirectory() as d:
            return getattr(compute.outputs, fn)(os.path.join(d, path), content)
    return call


#: Library calls refused: name -> (call, words of the UserError).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    # a table where texts are meant said 'one name, file or object'
    "sweep(params={'fabric.latency': ['1us']})": (
        _api("sweep", ["lite-flat"], {"fabric.latency": ["1us"]}, ["Llama-3-8B"]),
        ("params must be one 'PATH=LO:HI' or 'PATH=V1,V2' text",)),
    "compare(phases=5)": (_api("compare", ["Llama-3-8B"], ["lite-flat"], 5, max_batch=8),
                          ("phases must be one phase ('prefill' or 'decode')",)),
    "run_study(networks=5)": (_api("run_study", ["Llama-3-8B"], ["Lite"], ["decode"],
                                   networks=5), ("networks must be one network name",)),
    "sweep(100,000 listed values)": (
        _api("sweep", ["lite-flat"], ["fabric.latency=" + ",".join(
            f"{i}ns" for i in range(1, 100_001))], ["Llama-3-8B"], max_batch=8),
        ("100,000 values", "NETMODEL_MAX_SWEEP_POINTS")),
    "evaluate(batch=Decimal(8))": (_api("evaluate", "Llama-3-8B", "H100-SXM", "decode", tp=1,
                                        batch=Decimal(8)), ("batch", "Decimal")),
    "evaluate(context=10**30)": (_api("evaluate", "Llama-3-8B", "H100-SXM", "decode", tp=1,
                                      batch=8, context=10 ** 30),
                                 ("context", "1,000,000,000", "31 digits")),
    "evaluate(model={'layers': 2})": (_api("evaluate", {"layers": 2}, "H100-SXM", "decode",
                                           tp=1, batch=8), ("a model is a name or a path",)),
    "collective_time(group=['gpu0', 'gpu0'])": (
        _api("collective_time", "ring:n=8", "all-reduce", 1e6, ["gpu0", "gpu0"]),
        ("'gpu0' appears more than once",)),
    "collective_time(group=[0, 1])": (_api("collective_time", "ring:n=8", "all-reduce", 1e6,
                                           [0, 1]), ("group member 0", "not a node")),
    "build_fabric('ring', {'n': 4, 5: 1})": (_api("build_fabric", "ring", {"n": 4, 5: 1}),
                                            ("unknown key 5", "'n'")),
    "build_fabric('torus', 10^10 nodes)": (
        _api("build_fabric", "torus", {"dims": [10000, 10000, 100]}),
        ("10,000,000,000 nodes", "NETMODEL_MAX_FABRIC_NODES")),
    "get_scenario('lite-flat@')": (_api("get_scenario", "lite-flat@"), ("names no GPU",)),
    # AttributeError ('int' object has no attribute 'split'), TypeError for bytes
    "Scenario.with_param(5, 64)": (lambda: _api("get_scenario", "lite-flat")().with_param(5, 64),
                                   ("path must be a parameter's name as text", "got 5")),
    "Scenario.with_param(b'fabric.n', 64)": (
        lambda: _api("get_scenario", "lite-flat")().with_param(b"fabric.n", 64),
        ("path must be", "got b'fabric.n'")),
    # AttributeError ('list' object has no attribute 'items')
    "catalog().with_(rates=[('nic', 1e-6)])": (
        lambda: __import__("netmodel.study.reliability_catalog", fromlist=["x"]).catalog()
        .with_(rates=[("nic", 1e-6)]), ("rates must be a table of failure class to value",)),
    "catalog().with_(repair_hours=24)": (
        lambda: __import__("netmodel.study.reliability_catalog", fromlist=["x"]).catalog()
        .with_(repair_hours=24), ("repair_hours must be a table", "got 24")),
    "write_outputs(a name of 250 bytes)": (_write("write_outputs", LONG, {"x.txt": b"1"}),
                                           ("its name is 250 bytes", "staging folder")),
    "atomic_write(a name of 244 bytes)": (_write("atomic_write", "a" * 240 + ".csv", b"1"),
                                          ("its name is 244 bytes", "at most 237 bytes")),
}

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    # one name alone is one item, not its characters
    "compare(phases='decode') is ['decode']'s": (
        lambda: (_api("compare", ["Llama-3-8B"], ["lite-flat"], "decode", max_batch=8)(),
                 _api("compare", ["Llama-3-8B"], ["lite-flat"], ["decode"], max_batch=8)()),
        lambda pair: pair[0].rows == pair[1].rows),
    "write_outputs(a name of 223 bytes)": (
        _write("write_outputs", "a" * (255 - 1 - len(".netmodel-staging-")
                                       - len(str(os.getpid())) - 1 - 8), {"x.txt": b"1"}),
        lambda paths: len(paths) == 1),
}


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (write_refused_case(n, a, f, c, w) for n, (a, f, c, w) in WRITES.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    return run_round(cases(), "hostile35-")


if __name__ == "__main__":
    sys.exit(main())
