"""Hostile-input round 15: a few hundred bad command lines and files run through ``netmodel``
in process (click's CliRunner), each checked for what the project promises bad input gets:
exit status 2, one line ``error: ...`` (naming the value), no traceback, and nothing
written (the working folder and every ``--out``/``--plot`` target as they were).

Usage: ``python scripts/hostile_round15.py [-k SUBSTRING] [-v]``; prints each failure and
the counts, exit status 1 if any failed. The attacked features: ``collective --tuner``,
OCS scenarios with ``circuits = "best"``, availability's ``--spares`` with capacity
grants, ``topology compare``, ``cost``, ``collective --fail``, the sweep's parameters and
notes, ``--out``/``--plot`` targets, and the file readers (TOML, JSON, GraphML, CSV).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import click
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_tally import Tally, round_options  # noqa: E402

from netmodel.cli.main import cli  # noqa: E402

#: One case: (name, argv, setup) where setup(folder) writes the files argv names (argv
#: items may hold ``{d}``, the case's folder).
Case = tuple[str, list[str], Callable[[Path], None] | None]

COLL = ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB"]
COST = ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q",
         "--trials", "5", "--no-plot", "--max-batch", "8"]
BLAST = ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--no-plot",
         "--max-batch", "8"]
SWEEP = ["sweep", "--scenario", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
         "-q", "--no-plot"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "--no-plot", "-q"]

BAD_NUMBERS = ["", " ", "abc", "nan", "NaN", "inf", "-inf", "-1", "0", "1e400", "1e-400",
               "9" * 400, "1_0", "\uff18", "\u0661\u0660", "0x10", "1,5", "1..2", "--1",
               "1e", "\x00", "1 2"]


def _write(name: str, text: str | bytes) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text)
    return setup


def _shipped(name: str) -> str:
    return resources.files("netmodel").joinpath(f"data/scenarios/{name}.toml").read_text()


def _ocs(circuits: str, extra: str = "") -> Callable[[Path], None]:
    """lite-ocs with its circuits line replaced (and ``extra`` appended)."""
    text = _shipped("lite-ocs")
    lines = [f"circuits = {circuits}" if ln.startswith("circuits =") else ln
             for ln in text.splitlines()]
    return _write("s.toml", "\n".join(lines).replace('name = "lite-ocs"', 'name = "mine"')
                  + "\n" + extra)


def cases() -> Iterator[Case]:
    # -- collective --tuner, --nccl-release, --nccl-buffsize ----------------------------
    # ('NCCL ' is the tuner 'nccl' since round 33: a choice is read regardless of case)
    for t in ["nope", "", " ", "NCCL2 ", "nccl,nccl", "aws-ofi-nccl:p9", "aws-ofi-nccl:",
              "aws-ofi-nccl", "nccl:p5", "\u00fcnccl", "x" * 5000, "none,nccl"]:
        yield f"tuner {t[:20]!r}", [*COLL, "--tuner", t], None
    yield "tuner twice", [*COLL, "--tuner", "nccl", "--tuner", "none"], None
    for r in ["2.99", "", "x", "2.26.2.1", "-2.26", "2.26.2 ", "9" * 300, "2..26"]:
        yield f"nccl-release {r[:20]!r}", [*COLL, "--tuner", "nccl", "--nccl-release", r], None
    for b in [*BAD_NUMBERS, "1.5", "4MiB4", "1e30", "1KB/s", "8b", "0B"]:
        yield f"nccl-buffsize {b[:20]!r}", [*COLL, "--tuner", "nccl", "--nccl-buffsize", b], None
    for a in ["nope", "", "ring,nope", "ring,,tree"]:
        yield f"algorithms {a!r}", [*COLL, "--tuner", "nccl", "--algorithms", a], None
    # -- collective --fail --------------------------------------------------------------
    for f in ["", ",", "nope", "gpu0,gpu0", "gpu0/gpu0", "gpu0/nope", "gpu0/gpu5", "gpu99",
              "gpu0/", "/gpu1", "gpu0/gpu1/gpu2", "gpu0, ,gpu1", ",".join(["gpu1"] * 5000),
              "gp\u00fc0", "gpu0\x00", "GPU0"]:
        yield f"fail {f[:20]!r}", [*COLL, "--fail", f], None
    yield "fail every gpu", [*COLL, "--fail", ",".join(f"gpu{i}" for i in range(8))], None
    for f in ["ocs9", "ocs0/gpu0/x", "ocs0/ocs1"]:
        yield f"fail lite-ocs {f!r}", ["collective", "all-reduce", "--scenario", "lite-ocs",
                                      "--group", "16", "--size", "1MiB", "--fail", f], None
    # -- scenarios with circuits = "best" ------------------------------------------------
    for c in ['"bestest"', "3", '["best"]', '""', '"torus:0x4"', '"torus:1e9x1"',
              '"Be st"', "true", '"ring,torus"', '{best = 1}', '"torus:4x4x4x4"', 'nan',
              '"\u00e9"', '"torus:3x5"']:
        for cmd in (["compare", "--scenarios", "{d}/s.toml", "--models", "Llama-3-8B",
                     "--max-batch", "8", "--no-plot", "-q"],
                    ["collective", "all-reduce", "--scenario", "{d}/s.toml", "--group", "16",
                     "--size", "1MiB"]):
            yield f"circuits {c} {cmd[0]}", cmd, _ocs(c)
    yield "circuits best on a switched fabric", [
        *COMPARE, "--scenarios", "{d}/s.toml"], _write(
        "s.toml", _shipped("lite-flat").replace('name = "lite-flat"', 'name = "m"')
        .replace("[collective]", '[collective]\ncircuits = "best"'))
    yield "circuits key twice", [*COMPARE, "--scenarios", "{d}/s.toml"], _ocs(
        '"best"\ncircuits = "ring"')
    # -- availability --spares (capacity grants) ----------------------------------------
    for s in [*(b for b in BAD_NUMBERS if b != "0"), "101%", "-5%", "0.5", "%", "50%%", "1e30%", "nan%", "1,0",
              "100000000", "12.5%%", "+-1", "\u0665%"]:
        yield f"spares {s[:20]!r}", [*AVAIL, "--spares", s], None
    for p in ["nope", "", "PODS", "pod,group"]:   # 'POD' is 'pod' (round 33)
        yield f"spare-placement {p!r}", [*AVAIL, "--spares", "8", "--spare-placement", p], None
    for t in ["101%", "0", "-1%", "nan", "abc", "0%"]:
        yield f"threshold {t!r}", [*AVAIL, "--spares", "8", "--threshold", t], None
    for g in ["H100-SXM", "Lite,H100-SXM", "0", "-8", "1e30", "1,0000", "7", "\u0668"]:
        yield f"cluster-gpus {g!r}", [*AVAIL, "--cluster-gpus", g], None
    yield "spares beside fabric and scenario", [*AVAIL, "--fabric", "ring:n=8",
                                                "--spares", "1"], None
    # -- topology compare ---------------------------------------------------------------
    tc = ["topology", "compare"]
    yield "compare nothing", tc, None
    yield "compare one", [*tc, "ring:n=8"], None
    for spec in ["nope", "", "ring:n=0", "ring:n=-1", "ring:n=1e9", "ring:n=nan",
                 "ring:n=8,n=9", "ring:[n=8", "ring:n=8]", "ring:n", "ring:=8",
                 "ring:n=8,gpu=nope", "ring:n=8,gpu=Lite.toml", "{d}/missing.json",
                 "{d}/missing.graphml", "ring:" + "[" * 100 + "]" * 100]:
        yield f"compare {spec[:20]!r}", [*tc, "ring:n=8", spec], None
    for g in [*BAD_NUMBERS, "9", "100000"]:
        yield f"compare --group {g[:20]!r}", [*tc, "ring:n=8", "torus:dims=2x4",
                                             "--group", g], None
    for g in ["nope", "", "Lite.toml", "{d}/missing.toml"]:
        yield f"compare --gpu {g!r}", [*tc, "ring:n=8", "torus:dims=2x4", "--gpu", g], None
    for p in ["{d}/x.txt", "{d}/no/x.png", "{d}", "/proc/x.png", "{d}/x", "", "{d}/.png"]:
        yield f"compare --plot {p!r}", [*tc, "ring:n=8", "nope:x=1", "--plot", p], None
        yield f"compare --plot ok {p!r}", [*tc, "ring:n=8", "torus:dims=2x4", "--plot", p], None
    # -- cost ---------------------------------------------------------------------------
    for v in [*BAD_NUMBERS, "2.5", "1e-9"]:
        yield f"cost --clock {v[:20]!r}", [*COST, "--clock", v], None
    # 'PORTS-USED' and circuits "Best " are taken since 01b00252 (compute.errors.chosen:
    # blanks at the ends and case aside): their refused neighbours have an inner blank or _
    for v in ["nope", "", "PORTS_USED"]:
        yield f"cost --share {v!r}", [*COST, "--share", v], None
    for v in ["-1s", "0", "nan", "1e9y", "abc", "1 ss", "5 parsecs"]:
        yield f"cost --ttft {v!r}", [*COST, "--ttft", v], None
    for m in ["nope", "", "Llama-3-8B.toml", "{d}/m.toml", "{d}/m.json", "Llama-3-8B,Lite"]:
        yield f"cost --model {m!r}", [*COST[:3], "--model", m], _write("m.toml", "[[[")
    for s in ["nope", "", "lite-flat.toml", "lite-flat@nope", "lite-flat@", "@Lite",
              "{d}/s.toml", "{d}/s.json", "h100-dgx,lite-flat"]:
        yield f"cost --scenario {s!r}", ["cost", "--scenario", s, "--model", "Llama-3-8B"], \
            _write("s.toml", 'name = "x"\n[fabric]\nbuilder = 3\n')
    # -- sweep parameters and notes -----------------------------------------------------
    for p in ["", "=", "cost.nope=1,2", "cost.nic_price=-1,2", "cost.nic_price=nan,1",
              "cost.utilization=0:2:0", "cost.utilization=2:1", "cost.pue=", "x=1,2",
              "fabric.n=1,2", "cost.nic_price=1,,2", "cost.nic_price=1e400,1",
              "cost.lifetime=0y,5y", "cost.nic_price=1USD/kWh,2", "adjust.hop_latency=1e9,2e9",
              "cost.nic_price=" + ",".join(["1"] * 5000), "cost.nic_price=\u0661,2"]:
        yield f"sweep --param {p[:30]!r}", [*SWEEP, "--param", p], None
    for n in ["0", "-1", "nan", "1e9", "abc", "1.5"]:
        yield f"sweep --points {n!r}", [*SWEEP, "--param", "cost.pue=1:2", "--points", n], None
    # -- --out targets (nothing half-written) -------------------------------------------
    outs = ["{d}/file", "{d}/no/such/folder", "/proc/netmodel-out", "/dev/null", "",
            "{d}/link-loop", *([] if os.geteuid() == 0 else ["{d}/ro/out"])]

    def out_setup(d: Path) -> None:
        (d / "file").write_text("keep")
        os.symlink(d / "link-loop", d / "link-loop")
        (d / "ro").mkdir()
        os.chmod(d / "ro", 0o500)

    for o in outs:
        yield f"blast --out {o!r}", [*BLAST, "--out", o], out_setup
        yield f"sweep --out {o!r}", [*SWEEP, "--param", "cost.pue=1.1,1.2", "--out", o], \
            out_setup
    # -- file readers -------------------------------------------------------------------
    deep_json = "[" * 10000 + "]" * 10000
    files = {
        "deep.json": deep_json, "deep.toml": "a = " + "[" * 5000 + "]" * 5000,
        "bom.toml": "\ufeff\ufeff[model]", "bin.toml": b"\x00\xff\xfe" * 100,
        "wrong.json": '{"model": {"x": {"layers": "many"}}}', "list.json": "[1,2,3]",
        "dupe.toml": "a = 1\na = 2\n", "huge.json": '{"a": "' + "x" * (17 << 20) + '"}',
        "uni.toml": '[model."\u202eevil"]\nlayers = 1\n',
        "nan.toml": "[model.m]\nlayers = nan\n", "neg.toml": "[model.m]\nlayers = -1\n",
        "big.toml": f"[model.m]\nlayers = {'9' * 5000}\n",
        "empty.toml": "", "empty.json": "",
    }
    for name, text in files.items():
        yield f"--model {name}", [*COST[:3], "--model", f"{{d}}/{name}"], _write(name, text)
        yield f"--gpu {name}", ["infer", "--model", "Llama-3-8B", "--gpu", f"{{d}}/{name}",
                                "--tp", "1", "--batch", "1"], _write(name, text)
    for name, text in {"s.toml": "name = 3", "s2.toml": '[fabric]\nbuilder = "ring"\nn = "8"',
                       "s3.toml": 'name = "x"\ngpu = "Lite"\n[fabric]\nbuilder = "ring"\n'
                                  'n = 8\n[collective]\ncircuits = "best"\n',
                       "s4.toml": deep_json}.items():
        yield f"--scenario {name}", [*COST[:1], "--scenario", f"{{d}}/{name}", "--model",
                                     "Llama-3-8B"], _write(name, text)
    graphs = {
        "g.graphml": "<graphml><graph><node id='a'/></graph></graphml>",
        "g2.graphml": "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaaaaaaaa'>"
                      "<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;'>]><graphml>&b;</graphml>",
        "g3.graphml": "<graphml>" + "<a>" * 5000 + "</a>" * 5000 + "</graphml>",
        "g4.graphml": "not xml at all",
        "g.json": '{"nodes": [{"id": 1}], "links": [{"source": 1, "target": 2}]}',
        "g2.json": '{"directed": false, "multigraph": false, "graph": {}, "nodes": '
                   '[{"id": "gpu0", "kind": "gpu"}], "links": "x"}',
        "g3.json": deep_json, "g4.json": "{}", "g5.json": "null",
    }
    for name, text in graphs.items():
        yield f"topology show {name}", ["topology", "show", f"{{d}}/{name}"], _write(name, text)
        yield f"collective {name}", ["collective", "all-reduce", "--fabric", f"{{d}}/{name}",
                                     "--size", "1MiB"], _write(name, text)
    yield "fabric fifo", ["topology", "show", "{d}/f.json"], \
        lambda d: os.mkfifo(d / "f.json")
    yield "fabric symlink loop", ["topology", "show", "{d}/l.json"], \
        lambda d: os.symlink(d / "l.json", d / "l.json")
    yield "model folder", [*COST[:3], "--model", "{d}/dir.toml"], \
        lambda d: (d / "dir.toml").mkdir()
    csvs = {"m.csv": "a,b\n1,2\n", "m2.csv": "", "m3.csv": b"\xff\xfe\x00",
            "m4.csv": "model,gpu\n" + "x," * 100000 + "\n"}
    for name, text in csvs.items():
        # -o given: without it the refusal is its absence, before the file is read
        yield f"calibrate {name}", ["calibrate", "--measurements", f"{{d}}/{name}", "-o",
                                    "{d}/out.toml"], _write(name, text)


CSV_HEAD = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
CSV_ROWS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
            "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.1326",
            "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298",
            "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386"]


def _saved(fmt: str, mutate: Callable[[str], str]) -> Callable[[Path], None]:
    """A saved ``ring:n=4`` fabric (``fmt`` json or graphml) as ``f.FMT``, its text
    mutated."""
    def setup(d: Path) -> None:
        p = d / f"f.{fmt}"
        CliRunner().invoke(cli, ["topology", "export", "ring:n=4", "-o", str(p)])
        p.write_text(mutate(p.read_text()))
    return setup


def mutations() -> Iterator[Case]:
    """Saved fabrics and measurement files with one value wrong, through every reader."""
    import re

    def json_edge(key: str, value: str) -> Callable[[str], str]:
        """The first ``key`` among the nodes and edges (not the units table) set to
        ``value``."""
        def mutate(t: str) -> str:
            at = t.index('"nodes"')
            return t[:at] + re.sub(rf'"{key}": [^,\n]+', f'"{key}": {value}', t[at:], count=1)
        return mutate

    jm = {f"edge {k}={v}": json_edge(k, v)
          for k in ("bandwidth", "latency")
          for v in ("NaN", "Infinity", "-Infinity", "-1", '"abc"', "1e400", "true", "null",
                    "[]", "1e-320", "9" * 400)}   # latency 0 is allowed: no case
    jm |= {f"node {k}={v}": json_edge(k, v) for k, v in
           [("kind", '"toaster"'), ("kind", "5"), ("gpu", '"nope"'), ("gpu", '""'),
            ("gpu", "7"), ("gpu", '"H100-SXM@0.5x"'), ("id", "5"), ("id", '"gpu1"'),
            ("id", "null")]}
    jm |= {"directed": lambda t: t.replace('"directed": false', '"directed": true'),
           "multigraph": lambda t: t.replace('"multigraph": false', '"multigraph": true'),
           "edge to nowhere": lambda t: t.replace('"target": "gpu1"', '"target": "gpu9"', 1),
           "self loop": lambda t: t.replace('"target": "gpu1"', '"target": "gpu0"', 1),
           "spec huge": lambda t: t.replace('"spec": "ring:n=4"', '"spec": "' + "r" * 20000
                                            + '"'),
           "gpus wrong": lambda t: t.replace('"gpus": 4', '"gpus": 400'),
           "gpus NaN": lambda t: t.replace('"gpus": 4', '"gpus": NaN'),
           "no edges": lambda t: re.sub(r'"edges": \[.*\]', '"edges": []', t, flags=re.S),
           "units wrong": lambda t: t.replace('"latency": "s"', '"latency": "ms"'),
           "dup key": lambda t: t.replace('"directed": false', '"directed": false, '
                                          '"directed": true'),
           "trailing": lambda t: t + "\n{}"}   # a spec is a label, a BOM is read: no cases
    def gdata(attr: str, value: str) -> Callable[[str], str]:
        def mutate(t: str) -> str:
            key = re.search(rf'<key id="(d\d+)" for="\w+" attr.name="{attr}"', t)
            return re.sub(rf'<data key="{key.group(1)}">[^<]*</data>',
                          f'<data key="{key.group(1)}">{value}</data>', t, count=1)
        return mutate
    gm = {f"graphml {a}={v!r}": gdata(a, v) for a in ("bandwidth", "latency", "lanes")
          for v in ("NaN", "INF", "-1", "abc", "1e400", "", "0x10", "9" * 400)}
    gm |= {f"graphml {a}={v!r}": gdata(a, v) for a, v in
           [("kind", "toaster"), ("gpu", "nope"), ("gpu", ""), ("medium", "string")]}
    gm |= {"graphml type lie": lambda t: t.replace('attr.name="bandwidth" attr.type="double"',
                                                   'attr.name="bandwidth" attr.type="boolean"'),
           "graphml directed": lambda t: t.replace('edgedefault="undirected"',
                                                   'edgedefault="directed"'),
           "graphml dup node": lambda t: t.replace('<node id="gpu1">', '<node id="gpu0">', 1),
           "graphml hyperedge": lambda t: t.replace("</graph>", "<hyperedge><endpoint "
                                                    'node="gpu0"/></hyperedge></graph>'),
           "graphml two graphs": lambda t: t.replace("</graphml>", '<graph edgedefault='
                                                     '"undirected"/></graphml>'),
           "graphml port": lambda t: t.replace('<node id="gpu0">', '<node id="gpu0"><port '
                                               'name="p"/>', 1),
           "graphml nested graph": lambda t: t.replace(
               '<node id="gpu0">', '<node id="gpu0"><graph edgedefault="undirected">'
               '<node id="x"/></graph>', 1)}
    for name, mutate in jm.items():
        for cmd in (["topology", "show", "{d}/f.json"],
                    ["collective", "all-reduce", "--fabric", "{d}/f.json", "--size", "1MiB"],
                    ["topology", "compare", "{d}/f.json", "ring:n=4"]):
            yield f"json {name} {cmd[1]}", cmd, _saved("json", mutate)
    for name, mutate in gm.items():
        for cmd in (["topology", "show", "{d}/f.graphml"],
                    ["blast-radius", "--fabric", "{d}/f.graphml", "--model", "Llama-3-8B",
                     "--no-plot", "--max-batch", "8"]):
            yield f"{name} {cmd[0]}", cmd, _saved("graphml", mutate)
    csv_bad = {
        "nan latency": CSV_HEAD + CSV_ROWS[0][:-6] + "nan\n" + "\n".join(CSV_ROWS[1:]),
        "neg latency": CSV_HEAD + CSV_ROWS[0][:-6] + "-0.1\n" + "\n".join(CSV_ROWS[1:]),
        "inf latency": CSV_HEAD + CSV_ROWS[0][:-6] + "inf\n" + "\n".join(CSV_ROWS[1:]),
        "zero latency": CSV_HEAD + "\n".join(r[:r.rfind(",")] + ",0" for r in CSV_ROWS),
        "huge batch": CSV_HEAD + CSV_ROWS[0].replace(",8,1,", ",8,99999999999,") + "\n"
        + "\n".join(CSV_ROWS[1:]),
        "tp 0": CSV_HEAD + CSV_ROWS[0].replace(",8,1,", ",0,1,") + "\n"
        + "\n".join(CSV_ROWS[1:]),
        "phase both": CSV_HEAD + CSV_ROWS[0].replace("prefill", "both") + "\n"
        + "\n".join(CSV_ROWS[1:]),
        "dup column": CSV_HEAD.replace("latency_s", "latency_s,latency_s") + "\n".join(
            r + ",1" for r in CSV_ROWS),
        "extra field": CSV_HEAD + "\n".join(r + ",1,2" for r in CSV_ROWS),
        "short row": CSV_HEAD + "Llama-2-70B,H100-SXM\n" + "\n".join(CSV_ROWS[1:]),
        "unicode model": CSV_HEAD + "\n".join(r.replace("Llama-2-70B", "L\u202eama")
                                               for r in CSV_ROWS),
        "one row": CSV_HEAD + CSV_ROWS[0],
        "same rows": CSV_HEAD + "\n".join([CSV_ROWS[0]] * 4),
        "quote": CSV_HEAD + '"Llama-2-70B,H100-SXM,8\n' + "\n".join(CSV_ROWS[1:]),
        "nul": CSV_HEAD + "\x00".join(CSV_ROWS),
        "prompt huge": CSV_HEAD + CSV_ROWS[0].replace(",2048,", ",1e30,") + "\n"
        + "\n".join(CSV_ROWS[1:]),
        "header only": CSV_HEAD,
        "only comments": "# a\n# b\n",
    }
    for name, text in csv_bad.items():
        yield f"csv {name}", ["calibrate", "--measurements", "{d}/m.csv", "-o",
                              "{d}/out.toml"], _write("m.csv", text)
    for o in ["{d}/m.csv", "{d}/no/out.toml", "{d}/out.json", "{d}", "/proc/x.toml", ""]:
        yield f"calibrate -o {o!r}", ["calibrate", "--measurements", "{d}/m.csv", "-o", o], \
            _write("m.csv", CSV_HEAD + "\n".join(CSV_ROWS))


def extremes() -> Iterator[Case]:
    """Values within what each option takes, or combinations of them, at their edges: a
    result (exit 0), an unmet target (3) or one clear line (2), never a traceback."""
    for r in ["gpu=1", "gpu=0", "gpu=1e9", "gpu=1e-300", "nope=1", "gpu=-1", "gpu=nan", "gpu",
              "=1", "gpu=1,gpu=2", "gpu-die=1e30", "ocs=1"]:
        yield f"rate {r!r}", [*AVAIL, "--spares", "8", "--rate", r], None
    for t in ["gpu-die=0", "gpu-die=1e30y", "gpu-die=-1d", "gpu-die=nan", "gpu-die=1ns",
              "nope=1d", "gpu-die=100y"]:
        yield f"repair-time {t!r}", [*AVAIL, "--spares", "8", "--repair-time", t], None
    for sp in ["100%", "99.99%", "131072", "1", "0.0001%"]:
        for pl in ["group", "pod", "global"]:
            yield f"spares {sp} {pl}", [*AVAIL, "--spares", sp, "--spare-placement", pl,
                                        "--cluster-gpus", "64"], None
    for sc in ["lite-ocs", "lite-flat", "lite-hier", "lite-direct"]:
        yield f"spares on {sc}", ["availability", "--scenario", sc, "--model", "Llama-3-8B",
                                  "-q", "--trials", "5", "--no-plot", "--max-batch", "8",
                                  "--spares", "10%", "--spare-placement", "group"], None
    for fab in ["ocs:gpus=8", "ocs:gpus=8,logical=ring", "ring:n=8", "ring:n=3",
                "torus:dims=2x2x2", "lite-ocs", "single-switch:n=1"]:
        yield f"availability --fabric {fab}", [*AVAIL[:1], "--fabric", fab, *AVAIL[3:],
                                               "--spares", "1"], None
        yield f"blast --fabric {fab}", [BLAST[0], "--fabric", fab, *BLAST[3:]], None
    for g, size in [("1", "1MiB"), ("2", "0"), ("8", "1"), ("8", "16EiB"), ("8", "1e30"),
                    ("8", "3")]:
        for t in ["nccl", "aws-ofi-nccl:p5"]:
            yield f"tuner {t} group {g} size {size}", [
                "collective", "all-reduce", "--scenario", "h100-dgx", "--group", g,
                "--size", size, "--tuner", t], None
    for algo in ["ring", "tree", "nope"]:
        yield f"tuner nccl --algorithm {algo}", [*COLL, "--tuner", "nccl", "--algorithm",
                                                 algo], None
    for c in ['"best"', '"torus"', '"ring"']:
        for g in ["3", "5", "16", "128", "129"]:
            yield f"ocs {c} group {g}", ["collective", "all-reduce", "--scenario", "{d}/s.toml",
                                         "--group", g, "--size", "1MiB"], _ocs(c)
        yield f"ocs {c} fail", ["collective", "all-reduce", "--scenario", "{d}/s.toml",
                                "--group", "16", "--size", "1MiB", "--fail", "ocs0,ocs1"], \
            _ocs(c)
        yield f"ocs {c} blast", ["blast-radius", "--scenario", "{d}/s.toml", "--model",
                                 "Llama-3-8B", "--no-plot", "--max-batch", "8"], _ocs(c)
    tc = ["topology", "compare"]
    yield "compare many", [*tc, *[f"ring:n={n}" for n in range(2, 40)]], None
    yield "compare same twice", [*tc, "ring:n=8", "ring:n=8"], None
    yield "compare scenarios", [*tc, "lite-ocs", "h100-dgx", "lite-flat"], None
    yield "compare ocs bare", [*tc, "ocs:gpus=8", "ring:n=8"], None
    yield "compare ring:n=1", [*tc, "ring:n=1", "ring:n=2"], None
    yield "compare group past one", [*tc, "ring:n=4", "ring:n=64", "--group", "64"], None
    yield "compare saved", [*tc, "{d}/a.json", "ring:n=8"], \
        lambda d: CliRunner().invoke(cli, ["topology", "export", "ring:n=8", "-o",
                                           str(d / "a.json")])
    for v in ["1e-9", "0.001", "100"]:
        yield f"cost clock {v}", [*COST, "--clock", v], None
    for sc in ["lite-ocs", "lite-direct"]:
        yield f"cost {sc} both", ["cost", "--scenario", sc, "--model", "Llama-3-8B", "--phase",
                                  "both", "--max-batch", "8"], None
    for p in ["cost.host_cost_per_h100=0,1000USD,4001USD", "cost.nic_price=0,1e6",
              "cost.utilization=0,1", "cost.pue=1:3:3", "cost.nic_power=0,1000"]:
        yield f"sweep {p}", [*SWEEP[:1], *SWEEP[3:], "--scenarios", "h100-dgx,lite-flat",
                             "--param", p], None
    for x in ["collective.circuits=1,2", "fabric.ports=1,2", "fabric.ocs_ports=1:1000:3",
              "fabric.gpus=8,1e6"]:
        yield f"sweep lite-ocs {x}", [*SWEEP[:2], "lite-ocs", *SWEEP[3:], "--param", x], None
    for bad in ["[adjust]\nhop_latency = nan", "[adjust]\nhop_latency = inf",
                "[adjust]\nhop_latency = 1979-05-27", "[adjust]\nhop_latency = -1",
                "[fabric]\nbandwidth = 1e400", "[collective]\ncircuits = 1979-05-27"]:
        yield f"scenario {bad[:30]!r}", [*COMPARE, "--scenarios", "{d}/s.toml"], \
            _ocs('"best"', bad)


def snapshot(d: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for root, dirs, names in os.walk(d):
        for n in names + dirs:
            p = Path(root) / n
            try:
                st = p.lstat()
            except OSError:
                continue
            out[str(p.relative_to(d))] = (st.st_size if not p.is_dir() else 0, st.st_mtime_ns
                                          if not p.is_dir() else 0)
    return out


def run_case(name: str, argv: list[str], setup, strict: bool = True
             ) -> tuple[str | None, float]:
    """None where the case got what bad input gets (``strict``; else a result, exit 0 or 3,
    or what bad input gets), else why not; and its seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if setup is not None:
            setup(d)
        args = [a.replace("{d}", str(d)) for a in argv]
        before = snapshot(d)
        old = os.getcwd()
        os.chdir(d)
        t0 = time.perf_counter()
        try:
            r = CliRunner().invoke(cli, args, prog_name="netmodel")
        finally:
            os.chdir(old)
            os.chmod(d, 0o700)
            for root, dirs, _ in os.walk(d):
                for x in dirs:
                    try:
                        os.chmod(Path(root) / x, 0o700)
                    except OSError:
                        pass
        dt = time.perf_counter() - t0
        after = snapshot(d)
        lines = r.output.strip().splitlines()
        why = []
        if r.exit_code != 2 and (strict or r.exit_code not in (0, 3)):
            why.append(f"exit {r.exit_code}")
        if "Traceback" in r.output or (r.exception is not None
                                       and not isinstance(r.exception, SystemExit)):
            why.append(f"exception {type(r.exception).__name__}: {r.exception}")
        if r.exit_code == 2 and (len(lines) != 1 or not lines[0].startswith("error: ")):
            why.append(f"{len(lines)} lines")
        if after != before and (strict or r.exit_code == 2):
            why.append(f"wrote {sorted(set(after) ^ set(before)) or 'changed files'}")
        if len(r.output) > 2000 and r.exit_code == 2:
            why.append(f"error of {len(r.output)} characters")
        shown = lines[-1][:300] if lines else ""
        if strict and not why and not _names_a_flag(args, lines[0], str(d)):
            return f"NAMES NO FLAG | {shown}", dt
        return ("; ".join(why) + f" | {shown}" if why else None), dt


def _command_names(args: list[str]) -> tuple[set[str], set[str]]:
    """The long flags (``--out``) of the command ``args`` invoke, every one it declares,
    typed or not (a short one typed, ``-o``, is named by its long form; an option missing
    is named by its flag), and its arguments' metavars (``SPEC``)."""
    ctx = click.Context(cli)
    command, rest = cli, list(args)
    while isinstance(command, click.Group) and rest:
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            break
        command, rest = sub, rest[1:]
    flags, metavars = set(), set()
    for p in command.params:
        if isinstance(p, click.Option):
            flags.update(o for o in (*p.opts, *p.secondary_opts) if o.startswith("--"))
        elif isinstance(p, click.Argument):
            metavars.update(re.findall(r"[A-Z][A-Z_]+", p.metavar or "")
                            or [(p.name or "").upper()])
    return flags, metavars


def _names_a_flag(args: list[str], line: str, folder: str) -> bool:
    """Whether a refusal names what gave the value: a flag of the command (``--x``, typed
    as it or as its short form, or missing), an argument by its metavar (``SPEC
    arguments``), a file of the case's folder, or an argument typed without a flag (a
    fabric SPEC; an empty one quoted as ``''``)."""
    flags, metavars = _command_names(args)
    flags.update(a.split("=")[0] for a in args if a.startswith("--"))
    positional = [a for a in args[2:] if not a.startswith("-")]
    return any(re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", line) for f in flags) \
        or any(re.search(rf"\b{m}\b", line) for m in metavars) or folder in line or \
        any(f"'{a[:20]}" in line if a else "''" in line for a in positional)


def main() -> int:
    args = round_options()
    tally = Tally("NAMES NO FLAG", args.v)
    every = [(*c, True) for c in (*cases(), *mutations())] + \
        [(*c, False) for c in extremes()]
    for name, argv, setup, strict in every:
        if args.k not in name:
            continue
        why, dt = run_case(name, argv, setup, strict)
        tally.record(name, why, dt)
    return tally.report("refused naming no flag, file or argument")


if __name__ == "__main__":
    sys.exit(main())
