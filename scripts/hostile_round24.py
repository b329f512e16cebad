"""Hostile-input round 24, on what rounds 15-23 (scripts/hostile_round15.py .. 23.py) left
untried, the newer features first: engine profile files (every table and key of a
vllm-h100-2024-style file: its [profile], [fit], [[measurement]] rows and curves where a
value goes), calibrate's measurements and outputs (a row's shape against its model, files
named in its gpu and model cells, --fit and --out odd values), serve's pools of two GPU
types and request lengths (MTP drafts, one output token), a realized OCS fabric file's
cabling record (``ocs_cabling``: each fibre column's values and types, its ends) and the
builder claim an edited file loses, lite-direct's shared cables in a scenario file under
``collective --scenario`` and ``topology show``, GraphML keys and JSON fabric keys of odd
declarations, the reliability options (``--rate``, ``--repair-time``, ``--spares``,
``--load-bandwidth``, ``--threshold``), and sweep's Dask options.

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target).

Usage: ``python scripts/hostile_round24.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner).
About a minute on two cores.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_tally import (  # noqa: E402
    Case,
    Made,
    invoke_in,
    refusal_case,
    run_round,
    taken_case,
)

ROOT = Path(__file__).resolve().parents[1]

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "4", "--tp", "1"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "64",
         "--tp-only"]
DEEPSEEK = ["serve", "--scenario", "h100-dgx@H200-SXM", "--model", "DeepSeek-V3",
            "--max-batch", "8"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
         "--max-batch", "8", "--trials", "5"]
BLAST = ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
SWEEP = ["sweep", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
         "-q", "--no-plot", "--param", "cost.pue=1.1,1.2"]
CALIBRATE = ["calibrate", "--measurements", "m.csv", "-o", "p.toml"]
FIT = ["--fit", "layer_overhead_s"]

#: The shipped engine profile vllm-h100-2024, renamed (a file of its name and other values
#: is refused as the shipped one's), a line of it swapped by each case.
PROFILE = (ROOT / "compute/data/profiles/vllm-h100-2024.toml").read_text().replace(
    'name = "vllm-h100-2024"', 'name = "mine"', 1)
#: A measurements CSV of three steps (docs/compute.md's Splitwise rows).
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
STEPS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
         "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298",
         "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386"]
GPU = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "test"\n'
MODEL = ('[model."M"]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n'
         'ffn = 14336\nvocab = 128256\ngated_mlp = true\nmax_context = 8192\nsource = "t"\n')
LITE_DIRECT = (ROOT / "netmodel/data/scenarios/lite-direct.toml").read_text()
#: A realized OCS fabric of 8 GPUs on pluggable optics (its cabling recorded fibre by
#: fibre), the spec :func:`_ocs_file` exports.
OCS = "ocs:gpus=8,ports=4,ocs_ports=8,logical=ring,medium=pluggable-optics"


def profile(old: str, new: str) -> dict[str, Made]:
    """:data:`PROFILE` with its first ``old`` made ``new``, as p.toml."""
    assert old in PROFILE, old
    return {"p.toml": PROFILE.replace(old, new, 1)}


def rows(*extra: str, columns: str = "", each: str = "") -> dict[str, Made]:
    """A measurements file of :data:`STEPS` (each with ``each`` added) and ``extra`` rows,
    its header with ``columns`` added."""
    return {"m.csv": HEADER.replace("\n", columns + "\n") + "\n".join(
        [*(s + each for s in STEPS), *extra]) + "\n"}


def lite_direct(old: str, new: str) -> dict[str, Made]:
    """lite-direct as s.toml with its first ``old`` made ``new``."""
    assert old in LITE_DIRECT, old
    return {"s.toml": LITE_DIRECT.replace(old, new, 1)}


def _ocs_file(edit: Callable[[dict], None]) -> Callable[[Path], None]:
    """Make f.json: :data:`OCS` exported, then ``edit(document)``."""
    def made(d: Path) -> None:
        r = invoke_in(["topology", "export", OCS, "-o", "r.json"], d)
        assert r.exit_code == 0, r.output
        doc = json.loads((d / "r.json").read_text())
        (d / "r.json").unlink()
        edit(doc)
        (d / "f.json").write_text(json.dumps(doc))
    return made


def fibre(key: str, value: object) -> dict[str, Made]:
    """f.json: :data:`OCS` with its first fibre's ``key`` ``value``."""
    return {"f.json": _ocs_file(
        lambda doc: doc["graph"]["ocs_cabling"]["fibres"][key].__setitem__(0, value))}


def cabling(key: str, value: object) -> dict[str, Made]:
    """f.json: :data:`OCS` with its cabling record's ``key`` ``value``."""
    return {"f.json": _ocs_file(lambda doc: doc["graph"]["ocs_cabling"].__setitem__(key, value))}


def exported(spec: str, **graph: object) -> dict[str, Made]:
    """f.json: ``spec`` exported, its graph attributes updated by ``graph``."""
    def made(d: Path) -> None:
        r = invoke_in(["topology", "export", spec, "-o", "x.json"], d)
        assert r.exit_code == 0, r.output
        doc = json.loads((d / "x.json").read_text())
        (d / "x.json").unlink()
        doc["graph"].update(graph)
        (d / "f.json").write_text(json.dumps(doc))
    return {"f.json": made}


def _ring_graphml(d: Path) -> None:
    r = invoke_in(["topology", "export", "ring:n=4", "-o", "g.graphml"], d)
    assert r.exit_code == 0, r.output


def graphml(change: Callable[[str], str]) -> dict[str, Made]:
    """f.graphml: ring:n=4 exported as GraphML, its text through ``change``."""
    def made(d: Path) -> None:
        _ring_graphml(d)
        text = (d / "g.graphml").read_text()
        (d / "g.graphml").unlink()
        (d / "f.graphml").write_text(change(text))
    return {"f.graphml": made}


BANDWIDTH_KEY = '<key id="d10" for="edge" attr.name="bandwidth" attr.type="double">'


def first_bandwidth(value: str) -> Callable[[str], str]:
    return lambda t: re.sub(r'<data key="d10">[^<]*</data>', f'<data key="d10">{value}</data>',
                            t, count=1)


#: Refusals: name -> (argv, files made in the case's folder, words the one line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- an engine profile's tables and keys ------------------------------------------------
    "profile a folder named .toml": ([*INFER, "--profile", "d.toml"], {"d.toml/x": "1"},
                                     ("--profile 'd.toml'", "a folder, not a file")),
    "calibrate --base a folder named .toml": (
        [*CALIBRATE, *FIT, "--base", "d.toml"], {**rows(), "d.toml/x": "1"},
        ("--base 'd.toml'", "a folder, not a file")),
    "profile gpu 7": ([*INFER, "--profile", "p.toml"], profile('gpu = "H100-SXM"', "gpu = 7"),
                      ("p.toml", "[profile]", "gpu must be text", "got 7")),
    "profile without [profile]": ([*INFER, "--profile", "p.toml"],
                                  {"p.toml": "[parameters.gemm_efficiency]\nvalue = 0.5\n"
                                             "source = 's'\n"},
                                  ("p.toml", "missing key(s) profile")),
    "profile parameter unknown": (
        [*INFER, "--profile", "p.toml"], {"p.toml": PROFILE + '[parameters.foo_s]\nvalue = 0.1'
                                                              '\nsource = "s"\n'},
        ("p.toml", "unknown key(s) foo_s", "allowed: gemm_efficiency")),
    "profile parameter table twice": (
        [*INFER, "--profile", "p.toml"],
        {"p.toml": PROFILE + '[parameters.gemm_efficiency]\nvalue = 0.1\nsource = "s"\n'},
        ("p.toml is malformed TOML", "gemm_efficiency", "twice")),
    **{f"profile {name}": ([*INFER, "--profile", "p.toml"], profile(old, new), words)
       for name, old, new, words in (
           ("gemm_efficiency nan", "value = 0.8009100101112235", "value = nan",
            ("[parameters.gemm_efficiency]", "0.0001 to 1", "got nan")),
           ("gemm_efficiency inf", "value = 0.8009100101112235", "value = inf",
            ("[parameters.gemm_efficiency]", "got inf")),
           ("hbm_fraction 1e-300", "value = 1.0", "value = 1e-300",
            ("[parameters.hbm_fraction]", "got 1e-300")),
           ("token_overhead_s 1e300", 'value = 0.0\nsource = "not fitted: per-token',
            'value = 1e300\nsource = "not fitted: per-token',
            ("[parameters.token_overhead_s]", "0 to 1e-06 s", "got 1e+300")),
           ("source misspelt", 'value = 0.8009100101112235\nsource = "',
            'value = 0.8009100101112235\nsourc = "', ("unknown key(s) sourc", "allowed: source")),
           ("fit points -3", "points = 3", "points = -3", ("[fit]", "points", "got -3")),
           ("fit points 'x'", "points = 3", "points = 'x'", ("[fit]", "got 'x'")),
           ("fit parameters unknown", 'parameters = ["layer_overhead_s"]',
            'parameters = ["nope"]', ("[fit]", "each at most once", "got ['nope']")),
           ("fit rms nan", "rms_relative_error = 0.06665148068839989",
            "rms_relative_error = nan", ("[fit]", "rms_relative_error", "got nan")),
           ("measurement tp 'one'", "tp = 1\n", "tp = 'one'\n",
            ("measurement 1", "tp must be a whole number", "'one'")),
           ("measurement latency -1", "latency_s = 0.007793296875", "latency_s = -1.0",
            ("measurement 1", "latency_s", "got -1.0")),
           ("measurement key unknown", 'model = "Llama-3-8B"', 'model = "Llama-3-8B"\nfoo = 1',
            ("measurement 1", "unknown key(s) foo")),
           ("[[measurement]] misspelt", "[[measurement]]", "[measurementx]",
            ("unknown key(s) measurementx", "allowed: profile, parameters, fit, measurement")),
           ("curve intensity 0", "value = 0.8009100101112235",
            "intensity = [0, 10]\nefficiency = [0.1, 0.5]",
            ("[parameters.gemm_efficiency]", "intensity", "got 0")),
           ("curve intensity nan", "value = 0.8009100101112235",
            "intensity = [nan, 10]\nefficiency = [0.1, 0.5]", ("intensity", "got nan")),
           ("curve intensity inf", "value = 0.8009100101112235",
            "intensity = [1, inf]\nefficiency = [0.1, 0.5]", ("intensity", "got inf")),
           ("curve efficiency nested", "value = 0.8009100101112235",
            "intensity = [1, 10]\nefficiency = [[0.1], 0.5]", ("efficiency", "got [0.1]")),
           ("attention_efficiency as a curve", "value = 0.3367037411526795",
            "intensity = [1, 10]\nefficiency = [0.1, 0.5]",
            ("[parameters.attention_efficiency]", "unknown key(s) intensity, efficiency")),
           ("layer_overhead_s as a curve", "value = 0.00010178886743646623",
            "intensity = [1, 10]\nefficiency = [0.1, 0.5]",
            ("[parameters.layer_overhead_s]", "unknown key(s) intensity")),
       )},
    "profile shipped name with other values": (
        [*INFER, "--profile", "p.toml"],
        {"p.toml": PROFILE.replace('name = "mine"', 'name = "vllm-h100-2024"').replace(
            "value = 1.0\n", "value = 0.9\n", 1)},
        ("p.toml", "already names the shipped profile 'vllm-h100-2024'")),
    "profile ' '": ([*INFER, "--profile", " "], {}, ("--profile ' '", "unknown profile")),
    "profile named by its stem": ([*INFER, "--profile", "p"], {"p": PROFILE},
                                  ("--profile 'p'", "unknown profile 'p'")),
    "profile with MTP": ([*INFER, "--profile", "vllm-h100-2024", "--mtp-tokens", "1"], {},
                         ("--mtp-tokens 1", "engine profile 'vllm-h100-2024'")),
    "profile with --memory-efficiency": (
        [*INFER, "--profile", "vllm-h100-2024", "--memory-efficiency", "0.5"], {},
        ("profile", "not both")),
    # -- calibrate: a row against its model, cells naming files, --fit and --out -------------
    "calibrate batch 1,000,000 past memory": (
        [*CALIBRATE, *FIT], rows("Llama-2-70B,H100-SXM,8,1000000,decode,,576,0.04"),
        ("row 5", "cannot have run", "23673.3 GB per GPU")),
    "calibrate prefill with context": (
        [*CALIBRATE, *FIT], rows("Llama-2-70B,H100-SXM,8,1,prefill,512,512,0.04"),
        ("row 5", "takes prompt, not context")),
    "calibrate decode with prompt": (
        [*CALIBRATE, *FIT], rows("Llama-2-70B,H100-SXM,8,1,decode,512,512,0.04"),
        ("row 5", "takes context, not prompt")),
    "calibrate phase Decodes": ([*CALIBRATE, *FIT],
                                rows("Llama-2-70B,H100-SXM,8,1,Decodes,,512,0.04"),
                                ("row 5", "phase 'Decodes'", "known: 'decode', 'prefill'")),
    "calibrate tp 3": ([*CALIBRATE, *FIT], rows("Llama-2-70B,H100-SXM,3,1,decode,,512,0.04"),
                       ("row 5", "TP degree 3", "allowed: 1, 2, 4, 8")),
    "calibrate tp 16": ([*CALIBRATE, *FIT], rows("Llama-2-70B,H100-SXM,16,1,decode,,512,0.04"),
                        ("row 5", "TP degree 16", "largest instance")),
    "calibrate pp 81": ([*CALIBRATE, *FIT],
                        rows("Llama-2-70B,H100-SXM,8,1,decode,,512,0.04,81", columns=",pp",
                             each=",1"), ("row 5", "PP degree 81", "1 to 80")),
    "calibrate ep on a dense model": (
        [*CALIBRATE, *FIT], rows("Llama-2-70B,H100-SXM,8,1,decode,,512,0.04,8", columns=",ep",
                                 each=",1"), ("row 5", "EP degree 8", "dense")),
    "calibrate expert_skew nan": (
        [*CALIBRATE, *FIT], rows("Mixtral-8x7B,H100-SXM,8,1,decode,,512,0.04,8,nan",
                                 columns=",ep,expert_skew", each=",1,1"),
        ("row 5", "expert_skew", "got nan")),
    "calibrate expert_skew 0.5": (
        [*CALIBRATE, *FIT], rows("Mixtral-8x7B,H100-SXM,8,1,decode,,512,0.04,8,0.5",
                                 columns=",ep,expert_skew", each=",1,1"),
        ("row 5", "expert_skew", "1 to 1,000,000", "got 0.5")),
    "calibrate a GPU file missing": (
        [*CALIBRATE, *FIT], rows("Llama-2-70B,g.toml,8,1,decode,,512,0.04"),
        ("row 5: gpu", "'g.toml' does not exist")),
    "calibrate a GPU file a folder": (
        [*CALIBRATE, *FIT], {**rows("Llama-2-70B,g.toml,8,1,decode,,512,0.04"),
                             "g.toml/x": "1"}, ("row 5: gpu", "'g.toml'", "a folder")),
    "calibrate a model file a folder": (
        [*CALIBRATE, *FIT], {**rows("m.toml,H100-SXM,8,1,decode,,512,0.04"), "m.toml/x": "1"},
        ("row 5: model", "'m.toml'", "a folder")),
    "calibrate a model named /etc/passwd": (
        [*CALIBRATE, *FIT], rows("/etc/passwd,H100-SXM,8,1,decode,,512,0.04"),
        ("row 5: model", "unknown model '/etc/passwd'")),
    "calibrate a GPU of --gpu-file not given": (
        [*CALIBRATE, *FIT], rows("Llama-2-70B,Mine,8,1,decode,,512,0.04"),
        ("row 5: gpu", "unknown GPU 'Mine'")),
    "calibrate latency 1e5 s": ([*CALIBRATE, *FIT],
                                rows("Llama-2-70B,H100-SXM,8,1,decode,,512,100000"),
                                ("row 5", "latency_s 1e+05 s", "(a value in ms?)")),
    "calibrate a column of other case": (
        [*CALIBRATE, *FIT], {"m.csv": HEADER.upper() + "\n".join(STEPS) + "\n"},
        ("m.csv", "missing column(s) model")),
    "calibrate separated by semicolons": (
        [*CALIBRATE, *FIT], {"m.csv": (HEADER + "\n".join(STEPS)).replace(",", ";") + "\n"},
        ("m.csv", "missing column(s)")),
    "calibrate a source of 100,000 characters": (
        [*CALIBRATE, *FIT], rows(columns=",source", each="," + "x" * 100000),
        ("row 2", "source must be text of at most 2,000 characters")),
    "calibrate --fit all seven to three rows": (
        [*CALIBRATE, "--fit", "gemm_efficiency,attention_efficiency,hbm_fraction,"
         "layer_overhead_s,step_overhead_s,decode_sequence_overhead_s,token_overhead_s"],
        rows(), ("--measurements 'm.csv'", "cannot fit 7 parameters")),
    "calibrate --out /dev/full": (
        ["calibrate", "--measurements", "m.csv", "-o", "/dev/full", *FIT], rows(),
        ("--out '/dev/full'", "not a regular file")),
    "calibrate --out under a file": (
        ["calibrate", "--measurements", "m.csv", "-o", "f/p.toml", *FIT], {**rows(), "f": "x"},
        ("--out 'f/p.toml'", "'f' is a file")),
    "calibrate --out the measurements": (
        ["calibrate", "--measurements", "m.csv", "-o", "m.csv", *FIT], rows(),
        ("--out 'm.csv'", "must end in one of: .toml")),
    "calibrate --name of 3,000 characters": (
        [*CALIBRATE, *FIT, "--name", "a" * 3000], rows(), ("--name", "at most 200 characters")),
    "calibrate --system of two lines": ([*CALIBRATE, *FIT, "--system", "a\nb"], rows(),
                                        ("--system 'a\\nb'", "control character")),
    "calibrate --fabric ring of 2 for TP 8": (
        [*CALIBRATE, *FIT, "--fabric", "ring:n=2"], rows(),
        ("row 2", "an instance of 8 GPUs does not fit --fabric 'ring:n=2' (2 GPUs)")),
    # -- serve: rates, lengths, pools --------------------------------------------------------
    "serve --rate 1e300": ([*SERVE, "--rate", "1e300"], {},
                           ("--rate '1e300'", "1e-09 to 1,000,000,000 requests/s")),
    "serve --rate 5/s": ([*SERVE, "--rate", "5/s"], {}, ("--rate '5/s'", "got '5/s'")),
    "serve --max-batch 10**9": ([*SERVE[:-3], "--max-batch", "1000000000", "--tp-only"],
                                {},
                                ("about 4,000,000,000 configurations", "--max-batch")),
    "serve workload rate 0": ([*SERVE, "--workload", "w.toml"],
                              {"w.toml": "prompt = 10\noutput = 10\nrate = 0\n"},
                              ("w.toml", "rate must be a number", "got 0")),
    "serve workload a table": ([*SERVE, "--workload", "w.toml"],
                               {"w.toml": "[workload]\nprompt = 10\noutput = 10\n"},
                               ("w.toml", "unknown key(s) workload")),
    "serve workload prompt 2**62": ([*SERVE, "--workload", "w.toml"],
                                    {"w.toml": f"prompt = {2**62}\noutput = 10\n"},
                                    ("w.toml", "prompt must be a whole number",
                                     "1 to 100,000,000")),
    "serve workload JSON a list": ([*SERVE, "--workload", "w.json"], {"w.json": "[1, 2]"},
                                   ("w.json must be a table of keys",)),
    "serve workload .yaml": ([*SERVE, "--workload", "w.yaml"], {"w.yaml": "prompt: 3"},
                             ("--workload 'w.yaml': unknown workload 'w.yaml'",
                              "a .toml/.json file")),
    "serve --workload a folder": ([*SERVE, "--workload", "d.toml"],
                                  {"d.toml": lambda d: (d / "d.toml").mkdir()},
                                  ("--workload 'd.toml': cannot read workload file 'd.toml'",
                                   "a folder")),
    "serve --workload a file not there": ([*SERVE, "--workload", "no.toml"], {},
                                          ("--workload 'no.toml': workload file 'no.toml' "
                                           "does not exist",)),
    "serve --prefill-gpu a file of two GPUs": (
        [*SERVE, "--prefill-gpu", "g.toml"], {"g.toml": GPU + GPU.replace("Mine", "Other")},
        ("g.toml holds 2 GPUs", "the file's only entry")),
    "serve --prefill-gpu a file naming a catalog GPU": (
        [*SERVE, "--prefill-gpu", "g.toml"], {"g.toml": GPU.replace("Mine", "H100-SXM")},
        ("g.toml", "'H100-SXM' already name(s) a catalog GPU")),
    "serve a workload file named coding, other figures": (
        [*SERVE, "--workload", "w.toml"], {"w.toml": 'name = "coding"\nprompt = 10\noutput = 10\n'},
        ("w.toml", "name 'coding' already names the shipped workload 'coding'")),
    "serve a workload file coding.toml, other figures": (
        [*SERVE, "--workload", "coding.toml"], {"coding.toml": "prompt = 10\noutput = 10\n"},
        ("coding.toml", "(the file's stem, no name given) already names the shipped workload")),
    "serve a model of max_context 1": (
        ["serve", "--scenario", "h100-dgx", "--model", "config.json", "--max-batch", "4",
         "--tp-only", "--workload", "w.toml"],
        {"w.toml": "prompt = 1\noutput = 2\n", "config.json": (
            '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": '
            '4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": '
            '32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 1}')},
        ("--workload 'w.toml'", "max_context of 1 token;")),
    "availability --out a link to nothing": (
        [*AVAIL, "--out", "out"], {"out": lambda d: (d / "out").symlink_to("target")},
        ("output folder 'out' is a symbolic link to 'target', which does not exist",)),
    "serve --mtp-tokens 100": ([*DEEPSEEK, "--mtp-tokens", "100"], {},
                               ("--mtp-tokens", "0 (off) to 16", "got 100")),
    "serve --dense-mlp-tp of a dense model": ([*SERVE[:-1], "--dense-mlp-tp", "1"], {},
                                              ("Llama-3-70B has no dense MLP layers",)),
    # -- a realized OCS fabric file's cabling record -----------------------------------------
    **{f"OCS file fibre {key} {value!r}": (["topology", "show", "f.json"], fibre(key, value),
                                           ("f.json", "'ocs_cabling'", *words))
       for key, value, words in (
           ("length", 1e9, ("fibre length must be at most 100000 m", "got 1000000000.0")),
           ("length", 1e300, ("fibre length must be at most 100000 m",)),
           ("gpu", 5, ("a fibre 5-'ocs0'", "the name of one outside it")),
           ("gpu", "ocs1", ("'ocs1'-'ocs0'",)), ("ocs", "ocs99", ("'gpu0'-'ocs99'",)),
           ("cables", 0.5, ("fibre cables must be whole >= 1", "0.5")),
           ("cables", 10**9, ("32 cables", "its fibres 1000000031")),
           ("bandwidth", None, ("fibre bandwidth must be > 0", "null")),
           ("bandwidth", 1e-300, ("at least 1e-09 bytes/s",)),
           ("lanes", 10**6, ("288 lanes", "1000279")),
           ("length", -1.0, ("fibre length must be >= 0",)))},
    "OCS file fibres of unequal columns": (
        ["topology", "show", "f.json"],
        {"f.json": _ocs_file(lambda doc: doc["graph"]["ocs_cabling"]["fibres"]["cables"].pop())},
        ("'fibres' must be", "columns of one length")),
    "OCS file fibre listed twice": (
        ["topology", "show", "f.json"],
        {"f.json": _ocs_file(lambda doc: [c.__setitem__(1, c[0]) for c in
                                          doc["graph"]["ocs_cabling"]["fibres"].values()])},
        ("names a GPU-OCS fibre twice",)),
    **{f"OCS file cabling {key} {value!r}": (["topology", "show", "f.json"],
                                             cabling(key, value), ("f.json", "'ocs_cabling'"))
       for key, value in (("medium", "copper"), ("cables", -5), ("lanes", "x"),
                          ("fibres", [1, 2]))},
    "OCS file logical 3": (
        ["topology", "show", "f.json"],
        {"f.json": _ocs_file(lambda doc: doc["graph"].__setitem__("logical", 3))},
        ("f.json", "'logical' must be text")),
    **{f"{command} of an edited OCS file": (
        [command, "--fabric", "f.json", "--model", "Llama-3-8B", "--max-batch", "8"],
        fibre("length", 20.0), ("fabric 'f.json'", "arguments that build it",
                                "edited from what they build"))
       for command in ("blast-radius", "availability")},
    "blast-radius of an OCS file set as a moebius": (
        ["blast-radius", "--fabric", "f.json", "--model", "Llama-3-8B", "--max-batch", "8"],
        {"f.json": _ocs_file(lambda doc: doc["graph"].__setitem__("logical", "moebius"))},
        ("'moebius'", "logical=ring or logical=torus:AxB")),
    "topology show --pair gpu0 ocs0": (["topology", "show", "f.json", "--pair", "gpu0", "ocs0"],
                                       {"f.json": _ocs_file(lambda doc: None)},
                                       ("--pair 'gpu0 ocs0'", "not a GPU")),
    # -- a fabric file's adjustment record and degraded mark ----------------------------------
    **{f"fabric file hop_latency {hop!r}, {how}": (argv, exported("lite-direct", hop_latency=hop),
                                                  ("f.json", f"'hop_latency' is {hop!r} s",
                                                   "'gpu0'-'nvs0'", "at least the hop"))
       for hop in (1.0, 1e300)
       for how, argv in (("show", ["topology", "show", "f.json"]),
                         ("collective", ["collective", "all-reduce", "--fabric", "f.json"]))},
    **{f"topology compare of a degraded file {order}": (
        ["topology", "compare", *argv], exported("lite-direct", degraded=True),
        ("fabric 'f.json' is a degraded fabric", "price the healthy fabric"))
       for order, argv in (("first", ["f.json", "ring:n=8"]), ("second", ["ring:n=8", "f.json"]))},
    # -- a GPU file's derived GPU past a GPU's most -------------------------------------------
    **{f"GPU file flops_multiplier 1000, {how}": (
        argv, {"g.toml": '[gpu."A"]\nderive_from = "H100-SXM"\nflops_multiplier = 1000\n'
                         'source = "s"\n'},
        ("g.toml: GPU 'A'", "tdp must be", "give a smaller fraction or multiplier"))
       for how, argv in (("hardware", ["hardware", "--gpu-file", "g.toml"]),
                         ("serve", [*SERVE, "--decode-gpu", "g.toml"]))},
    # -- yield: a wafer too small, a GPU file without a die ------------------------------------
    "yield --wafer-diameter 1mm": (["yield", "--area", "814", "--wafer-diameter", "1mm"], {},
                                   ("--wafer-diameter '1mm' and --area '814'",
                                    "larger than the usable wafer")),
    "yield --gpu of a file without a die table": (
        ["yield", "--gpu", "g.toml"],
        {"g.toml": GPU.replace('derive_from = "H100-SXM"\n', 'sms = 132\nbf16_dense_TFLOPs = '
                               '989\nfp8_dense_TFLOPs = 1979\nhbm_capacity_GB = 85.5\n'
                               'hbm_bandwidth_TBps = 3.35\nscaleup_GBps_per_direction = 450\n'
                               'scaleout_Gbps = 400\ntdp_W = 700\nmax_instance = 8\n')},
        ("--gpu 'g.toml'", "no die data for GPU 'Mine'")),
    "yield --alpha with --model poisson": (["yield", "--area", "814", "--alpha", "3", "--model",
                                            "poisson"], {}, ("--alpha", "not poisson")),
    "yield --sms 132/144": (["yield", "--area", "814", "--sms", "132/144"], {},
                            ("--sms '132/144'", "enabled <= physical")),
    "yield --wafer-diameter 12in": (["yield", "--area", "814", "--wafer-diameter", "12in"], {},
                                    ("--wafer-diameter '12in'", "allowed: mm, cm, m")),
    # -- lite-direct's shared cables in a scenario file ---------------------------------------
    **{f"lite-direct {name} {how}": (argv, lite_direct(old, new), ("s.toml", *words))
       for name, old, new, words in (
           ("lites 0", "lites = 4", "lites = 0", ("lites must be an integer >= 1",)),
           ("lites 1000", "lites = 4", "lites = 1000", ("16,080,000 edges",)),
           ("split Evenly", 'split = "even"', 'split = "Evenly"', ("'even', 'gateway'",)),
           ("mesh_bandwidth 1e-300", 'mesh_bandwidth = "$scaleup"', "mesh_bandwidth = 1e-300",
            ("125 kB/s to 1 PB/s",)),
           ("length 1e6", "length = 1.0", "length = 1e6", ("at most 100000 m",)),
           ("base nic_bandwidth 1e-9 x", 'nic_bandwidth = "4*$scaleout"',
            'nic_bandwidth = "1e-9*$scaleout"', ("nic_bandwidth 12.5 B/s",)),
           ("base builder ring", 'builder = "rail-optimized"', 'builder = "ring"',
            ("[fabric.base] has unknown key(s)",)),
           ("links ports-used", 'links = "as-built"', 'links = "ports-used"',
            ("known: 'as-built', 'scale-up'",)),
           ("links 0.5", 'links = "as-built"', "links = 0.5", ("links 0.5 is unknown",)))
       for how, argv in (("collective", ["collective", "all-reduce", "--scenario", "s.toml"]),
                         ("show", ["topology", "show", "s.toml"]))},
    "collective --scenario lite-direct --fail gpu0/leaf3": (
        ["collective", "all-reduce", "--scenario", "lite-direct", "--fail", "gpu0/leaf3"], {},
        ("--fail 'gpu0/leaf3'", "not a link of the fabric")),
    "collective --scenario lite-direct --fail nvs0": (
        ["collective", "all-reduce", "--scenario", "lite-direct", "--fail", "nvs0"], {},
        ("--fail 'nvs0'", "every GPU of the group failed or stopped")),
    # -- GraphML keys and JSON fabric keys -----------------------------------------------------
    "GraphML key id twice": (
        ["topology", "show", "f.graphml"],
        graphml(lambda t: t.replace(BANDWIDTH_KEY, BANDWIDTH_KEY.replace(
            'attr.name="bandwidth"', 'attr.name="other"') + "</key>\n  " + BANDWIDTH_KEY, 1)),
        ("f.graphml", "<key> id 'd10' is declared twice")),
    "GraphML bandwidth a boolean key": (
        ["topology", "show", "f.graphml"],
        graphml(lambda t: t.replace(BANDWIDTH_KEY, BANDWIDTH_KEY.replace("double", "boolean"))),
        ("f.graphml", "boolean <key>", "'bandwidth'")),
    "GraphML bandwidth a string key": (
        ["topology", "show", "f.graphml"],
        graphml(lambda t: t.replace(BANDWIDTH_KEY, BANDWIDTH_KEY.replace("double", "string"))),
        ("f.graphml", "got the text '225000000000.0', not a number")),
    "GraphML bandwidth NaN": (["topology", "show", "f.graphml"],
                              graphml(first_bandwidth("NaN")), ("f.graphml", "got nan")),
    "GraphML bandwidth 0x10": (["topology", "show", "f.graphml"],
                               graphml(first_bandwidth("0x10")), ("f.graphml", "'0x10'")),
    "GraphML an edge directed": (["topology", "show", "f.graphml"],
                                 graphml(lambda t: t.replace("<edge ", '<edge directed="true" ',
                                                             1)),
                                 ("f.graphml", "directed='true'")),
    "GraphML a hyperedge": (
        ["topology", "show", "f.graphml"],
        graphml(lambda t: t.replace("</graph>", '<hyperedge><endpoint node="gpu0"/>'
                                                '<endpoint node="gpu1"/></hyperedge></graph>')),
        ("f.graphml", "no <hyperedge> elements")),
    "JSON fabric both edges and links": (
        ["topology", "show", "f.json"],
        {"f.json": lambda d: (invoke_in(["topology", "export", "ring:n=4", "-o", "r.json"], d),
                              (d / "f.json").write_text((d / "r.json").read_text().replace(
                                  '"edges":', '"links": [], "edges":', 1)),
                              (d / "r.json").unlink())},
        ("f.json", "gives both 'edges' and 'links'")),
    "JSON fabric latency in ms": (
        ["topology", "show", "f.json"],
        {"f.json": lambda d: (invoke_in(["topology", "export", "ring:n=4", "-o", "r.json"], d),
                              (d / "f.json").write_text((d / "r.json").read_text().replace(
                                  '"latency": "s",', '"latency": "ms",', 1)),
                              (d / "r.json").unlink())},
        ("f.json", "latency is in 'ms'")),
    # -- the reliability options ---------------------------------------------------------------
    "availability --rate gpu and gpu-die": ([*AVAIL, "--rate", "gpu=1e-6", "--rate",
                                             "gpu-die=2e-6"], {},
                                            ("--rate gpu-die", "--rate gpu=R")),
    "availability --repair-time gpu": ([*AVAIL, "--repair-time", "gpu=1d"], {},
                                       ("--repair-time", "'gpu'", "gpu-die=T")),
    "availability --repair-time 1e300 s": ([*AVAIL, "--repair-time", "gpu-die=1e300s"], {},
                                           ("--repair-time 'gpu-die=1e300s'", "100 y")),
    "availability --load-bandwidth with --load-from fabric": (
        [*AVAIL, "--load-bandwidth", "10GB/s"], {}, ("--load-from 'storage'",)),
    "availability --load-bandwidth 1e300": (
        [*AVAIL, "--load-from", "storage", "--load-bandwidth", "1e300"], {},
        ("--load-bandwidth '1e300'", "1 MB/s to 1 PB/s")),
    "availability --spares 101%": ([*AVAIL, "--spares", "101%"], {},
                                   ("--spares '101%'", "0 to 32")),
    "availability --spares nan%": ([*AVAIL, "--spares", "nan%"], {},
                                   ("--spares 'nan%'", "a whole number or a percentage")),
    "availability --threshold 0": ([*AVAIL, "--threshold", "0"], {},
                                   ("--threshold '0'", "(0, 100%]")),
    "availability --area-share 50%": ([*AVAIL, "--area-share", "50%"], {},
                                      ("--area-share", "'50%'", "not a valid number")),
    "availability --cluster-gpus 64 and --gpus 32": (
        [*AVAIL, "--cluster-gpus", "64", "--gpus", "32"], {},
        ("--cluster-gpus '64'", "--gpus '32'", "give it once")),
    "availability --fabric ocs:n=64": (
        ["availability", "--fabric", "ocs:n=64", *AVAIL[3:]], {},
        ("--fabric 'ocs:n=64'", "unknown key 'n'")),
    "blast-radius --out /dev/null": ([*BLAST, "--out", "/dev/null"], {},
                                     ("'/dev/null'", "not a folder")),
    **{f"{argv[0]} --out a link to a file": (
        [*argv, "--out", "o"], {"f": "mine", "o": lambda d: (d / "o").symlink_to("f")},
        ("--out", "output folder 'o' is a symbolic link to 'f'", "not a folder"))
       for argv in (["study", "lite-gpu"], AVAIL, BLAST, SWEEP,
                    ["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B"])},
    "blast-radius --out holding a file of the user's": (
        [*BLAST, "--out", "o", "--no-plot"], {"o/mine.txt": "x"},
        ("--out 'o'", "holds files netmodel did not write")),
    # -- sweep on Dask --------------------------------------------------------------------------
    "sweep --workers 100000": ([*SWEEP, "--workers", "100000"], {},
                               ("--workers 100000", "1 to 8 workers")),
    "sweep --scheduler ''": ([*SWEEP, "--scheduler", ""], {}, ("--scheduler ''",
                                                               "HOST:PORT")),
    "sweep --scheduler port 99999": ([*SWEEP, "--scheduler", "tcp://127.0.0.1:99999"], {},
                                     ("'tcp://127.0.0.1:99999'", "1 to 65535")),
    "sweep --scheduler without a port": ([*SWEEP, "--scheduler", "127.0.0.1"], {},
                                         ("'127.0.0.1'", "missing port")),
    "sweep --points 1,000,000": ([*SWEEP[:-1], "cost.pue=1:2", "--points", "1000000"], {},
                                 ("--points '1000000'", "over the limit of 1,000")),
    "sweep 10,000 values": ([*SWEEP[:-1], "cost.pue=" + ",".join(
        str(1 + i / 100000) for i in range(10000))], {}, ("about 10,000 values",)),
    "sweep a value twice": ([*SWEEP[:-1], "cost.pue=1.1,1.1"], {},
                            ("--param 'cost.pue=1.1,1.1'", "give each value once")),
    # -- serve --load: its values, a workload file's, with a rate --------------------------------
    **{f"serve --load {v!r}": ([*SERVE, "--load", v], {}, (f"--load {v!r}", *words))
       for v, words in (("1e-300", ("from 1e-06 to 1", "got 1e-300")),
                        ("50%", ("got '50%'",)), ("1", ("1 excluded", "got 1.0")),
                        ("nan", ("got nan",)), ("0x1", ("got '0x1'",)))},
    "serve --load 1e-305 --rate 1e9 (pools past a float)": (
        [*SERVE, "--load", "1e-305", "--rate", "1e9"], {}, ("--load '1e-305'", "from 1e-06")),
    "collective --seed of 5,000 nines": (
        ["collective", "all-reduce", "--scenario", "lite-ocs", "--placement", "random", "--seed",
         "9" * 5000], {}, ("--seed", "a whole number of more than 4,300 digits")),
    "collective --seed 1e1000000000000000000": (
        ["collective", "all-reduce", "--scenario", "lite-ocs", "--placement", "random", "--seed",
         "1e1000000000000000000"], {}, ("--seed", "more than 4,300 digits")),
    "costs --seed -1": (["costs", "--scenario", "lite-ocs", "--placement", "random", "--seed",
                         "-1"], {}, ("--seed", ">= 0", "got -1")),
    "availability --seed of 5,000 nines": ([*AVAIL, "--seed", "9" * 5000], {},
                                           ("--seed", "0 to 2**63 - 1")),
    "serve --load twice": ([*SERVE, "--load", "0.5", "--load", "0.6"], {},
                           ("--load is given twice", "'0.5' and '0.6'")),
    "serve --load with --rate 0": ([*SERVE, "--load", "0.5", "--rate", "0"], {},
                                   ("--rate '0'", "1e-09 to")),
    **{f"serve workload load {kind}": (
        [*SERVE, "--workload", "w.toml"], {"w.toml": f"prompt = 10\noutput = 10\nload = {v}\n"},
        ("w.toml", "load must be a number from 1e-06 to 1", f"got {got}"))
       for kind, v, got in (("text", '"0.5"', "'0.5'"), ("list", "[0.5]", "[0.5]"),
                            ("bool", "true", "True"), ("table", "{a = 1}", "{'a': 1}"),
                            ("1e-7", "1e-7", "1e-07"))},
}

#: Values taken (exit 0, or 3 for an unmet target): name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "profile of another GPU on A100": (
        ["infer", "--model", "Llama-3-8B", "--gpu", "A100-SXM-80GB", "--batch", "4", "--tp",
         "1", "--profile", "vllm-h100-2024"], {}),
    "profile renamed, as its file's stem differs": ([*INFER, "--profile", "p.toml"],
                                                    {"p.toml": PROFILE}),
    "calibrate a decode step past the model's max_context (RoPE scaling)": (
        [*CALIBRATE, *FIT], rows("Llama-2-70B,H100-SXM,8,1,decode,,100000,0.04")),
    "calibrate GPU and model files named in cells": (
        [*CALIBRATE, *FIT], {**rows("m.toml,g.toml,8,1,decode,,512,0.04"), "g.toml": GPU,
                             "m.toml": MODEL}),
    "calibrate hbm_fraction alone": ([*CALIBRATE, "--fit", "hbm_fraction"], rows()),
    # a choice is read with case aside (compute.errors.chosen): refused before 01b00252's rule
    "calibrate phase Decode": ([*CALIBRATE, *FIT],
                               rows("Llama-2-70B,H100-SXM,8,1,Decode,,512,0.04")),
    **{f"lite-direct split Even {how}": (argv, lite_direct('split = "even"', 'split = "Even"'))
       for how, argv in (("collective", ["collective", "all-reduce", "--scenario", "s.toml"]),
                         ("show", ["topology", "show", "s.toml"]))},
    "calibrate A100 rows on an H100 base (a note)": (
        [*CALIBRATE, *FIT, "--base", "vllm-h100-2024"],
        {"m.csv": HEADER + "\n".join(s.replace("H100-SXM", "A100-SXM-80GB") for s in STEPS)
         + "\n"}),
    "serve one output token": ([*SERVE, "--workload", "w.toml"],
                               {"w.toml": "prompt = 1\noutput = 1\n"}),
    "serve prompt 1, output 8191": ([*SERVE, "--workload", "w.toml"],
                                    {"w.toml": "prompt = 1\noutput = 8191\n"}),
    "serve pools of two GPU types, a profile": (
        ["serve", "--scenario", "h100-dgx", "--model", "Mixtral-8x7B", "--max-batch", "64",
         "--prefill-gpu", "A100-SXM-80GB", "--decode-gpu", "H200-SXM", "--profile",
         "vllm-h100-2024"], {}),
    "serve lite-ocs with an H100 prefill pool": (
        ["serve", "--scenario", "lite-ocs", "--model", "Llama-3-70B", "--max-batch", "64",
         "--prefill-gpu", "H100-SXM", "--decode-gpu", "Lite+BW"], {}),
    "serve --rate 1e9 (exit 3)": ([*SERVE, "--rate", "1e9"], {}),
    "serve MTP acceptance 1": ([*DEEPSEEK, "--mtp-tokens", "1", "--mtp-acceptance", "1"], {}),
    "serve MTP 3 drafts, one token to decode": (
        [*DEEPSEEK, "--mtp-tokens", "3", "--workload", "w.toml"],
        {"w.toml": "prompt = 100\noutput = 2\n"}),
    "serve a workload file named coding, the shipped figures at a rate": (
        [*SERVE, "--workload", "w.toml"],
        {"w.toml": 'name = "coding"\nprompt = 1500\noutput = 13\nrate = 3\n'}),
    "OCS file fibre length 100 km": (["topology", "show", "f.json"], fibre("length", 1e5)),
    "OCS file fibre of a GPU outside the graph": (["topology", "show", "f.json"],
                                                  fibre("gpu", "gpu99")),
    "fabric file hop_latency of its least link latency": (
        ["topology", "show", "f.json"], exported("lite-direct", hop_latency=1e-8)),
    "fabric file latency_scale 2, hop_latency 1e-9": (
        ["topology", "compare", "f.json", "ring:n=8"],
        exported("lite-direct", latency_scale=2.0, hop_latency=1e-9)),
    "yield a derived GPU's die": (["yield", "--gpu", "g.toml"],
                                  {"g.toml": GPU.replace("source", "fraction = 0.25\nsource")}),
    "yield --defect-density 0": (["yield", "--area", "814", "--defect-density", "0"], {}),
    "calibrate a GPU file of a hundredth of the NVLink bandwidth (a 17.99 s roofline)": (
        [*CALIBRATE, *FIT], {"m.csv": HEADER + "Llama-3-70B,h.toml,8,8,prefill,2000,,0.3\n",
                             "h.toml": GPU.replace("source", "flops_multiplier = 2\n"
                                                   "network_bandwidth_multiplier = 0.01\n"
                                                   "source")}),
    "compare of a scenario at a 2e-5 bandwidth scale ($7,016 a million tokens)": (
        ["compare", "--scenarios", "h100-dgx,s.toml", "--models", "Llama-3.1-405B", "--phases",
         "decode", "--max-batch", "4096", "--no-plot", "--tbt", "10s"],
        {"s.toml": (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text().replace(
            'name = "h100-dgx"', 'name = "slow"', 1) + "\n[adjust]\nbandwidth_scale = 2e-5\n"}),
    "infer TP 8 x PP 16 on a GPU of a thousandth of the NVLink bandwidth": (
        ["infer", "--model", "Llama-3.1-405B", "--gpu", "slow.toml", "--batch", "4096", "--tp",
         "8", "--pp", "16", "--phase", "prefill", "--prompt", "8000", "--ttft", "600s"],
        {"slow.toml": GPU.replace("source", "network_bandwidth_multiplier = 0.001\nsource")}),
    "infer a prompt of 1 token": (["infer", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM",
                                   "--batch", "1", "--tp", "2", "--phase", "prefill",
                                   "--prompt", "1"], {}),
    "infer MTP acceptance 0": (["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--batch",
                                "64", "--tp", "8", "--mtp-tokens", "1", "--mtp-acceptance", "0"],
                               {}),
    **{f"collective lite-ocs --placement random --seed {s}": (
        ["collective", "all-reduce", "--scenario", "lite-ocs", "--placement", "random",
         "--seed", s], {}) for s in ("1", "3")},
    "lite-direct of 3 Lites a group": (["collective", "all-reduce", "--scenario", "s.toml"],
                                       lite_direct("lites = 4", "lites = 3")),
    "lite-direct split gateway, show": (["topology", "show", "s.toml"],
                                        lite_direct('split = "even"', 'split = "gateway"')),
    "collective lite-direct with every leaf failed": (
        ["collective", "all-reduce", "--scenario", "lite-direct", "--group", "64", "--fail",
         ",".join(f"leaf{i}" for i in range(8))], {}),
    "GraphML lanes 1e3 of a long key": (
        ["topology", "show", "f.graphml"],
        graphml(lambda t: re.sub(r'<data key="d13">\d+</data>', '<data key="d13">1e3</data>',
                                 t, count=1))),
    "GraphML a CDATA bandwidth": (
        ["topology", "show", "f.graphml"],
        graphml(lambda t: re.sub(r'<data key="d10">([^<]*)</data>',
                                 r'<data key="d10"><![CDATA[\1]]></data>', t, count=1))),
    "availability --spares 4 global": ([*AVAIL, "--spares", "4", "--spare-placement",
                                        "global"], {}),
    "availability --threshold 0.5%": ([*AVAIL, "--threshold", "0.5%"], {}),
    "availability --out a link to a folder": (
        [*AVAIL, "--out", "out"], {"t": lambda d: (d / "t").mkdir(),
                                "out": lambda d: (d / "out").symlink_to("t")}),
    "availability --load-bandwidth 100Gb/s": ([*AVAIL, "--load-from", "storage",
                                               "--load-bandwidth", "100Gb/s"], {}),
    "blast-radius --cluster-gpus 131072": ([*BLAST, "--cluster-gpus", "131072"], {}),
    **{f"serve --load {v!r}": ([*SERVE, "--load", v], {})
       for v in ("1e-6", "0.5e0", "5e-1", " 0.5", "0.999999999")},
    "serve --load with a one-token output and a rate": (
        [*SERVE, "--load", "0.5", "--rate", "3", "--workload", "w.toml"],
        {"w.toml": "prompt = 10\noutput = 1\n"}),
    "serve --load with MTP drafts and a rate": ([*DEEPSEEK, "--load", "0.9", "--mtp-tokens", "2",
                                                 "--rate", "2"], {}),
    "serve --load with a profile": ([*SERVE, "--load", "0.9", "--rate", "2", "--profile",
                                     "vllm-h100-2024"], {}),
    "serve a coding.toml of the shipped figures at a load": (
        [*SERVE, "--workload", "coding.toml"],
        {"coding.toml": "prompt = 1500\noutput = 13\nload = 0.5\n"}),
    **{f"collective lite-ocs --placement random --seed {s}": (
        ["collective", "all-reduce", "--scenario", "lite-ocs", "--placement", "random",
         "--seed", s], {}) for s in (str(2 ** 64), "1e3")},
}

#: serve --json runs whose JSON must hold no NaN or Infinity (json's allow_nan=False):
#: name -> argv.
JSON: dict[str, list[str]] = {
    "serve --load 0.999999999 --rate 1e-9": [*SERVE, "--load", "0.999999999", "--rate", "1e-9"],
    "serve --load 1e-6 --rate 1e9": [*SERVE, "--load", "1e-6", "--rate", "1e9"],
    "serve --rate 1e-9": [*SERVE, "--rate", "1e-9"],
    "serve --load 0.5 --rate 5": [*SERVE, "--load", "0.5", "--rate", "5"],
    "serve lite-ocs --load 0.8 --rate 3": ["serve", "--scenario", "lite-ocs", "--model",
                                           "Llama-3-70B", "--max-batch", "64", "--load", "0.8",
                                           "--rate", "3"],
    "serve MTP 3 drafts at a load and a rate": [*DEEPSEEK, "--mtp-tokens", "3",
                                                "--load", "0.9", "--rate", "1"],
}


def json_case(name: str, argv: list[str]) -> Case:
    """A case that holds where ``netmodel argv --json`` exits 0 or 3 with JSON that reads
    with no NaN or Infinity (each a constant JSON does not have)."""
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} in the JSON")

    def run(d: Path) -> str | None:
        r = invoke_in([*argv, "--json"], d)
        if r.exit_code not in (0, 3) or "Traceback" in r.output:
            return f"exit {r.exit_code} | {r.output.strip()[-300:]}"
        text = r.output[:r.output.rindex("}") + 1] if "}" in r.output else r.output
        try:
            json.loads(text, parse_constant=refuse)
        except ValueError as e:
            return f"{e} | {r.output.strip()[:200]}"
        return None
    return f"json {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (json_case(n, a) for n, a in JSON.items())


def main() -> int:
    return run_round(cases(), "hostile24-")


if __name__ == "__main__":
    sys.exit(main())
