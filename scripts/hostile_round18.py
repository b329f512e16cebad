"""Hostile-input round 18, on the files netmodel reads and writes: what a file may hold
that rounds 15-17 (scripts/hostile_round15.py .. 17.py) left untried. Saved fabrics (JSON
and GraphML) whose graph is wrong (a self-loop, an edge twice, a multigraph, two parts, an
isolated node, an edge to a node not listed, a node named with a NUL, a newline or 100,000
characters, a million GPUs claimed, bandwidths, latencies and their own GPU types NaN,
-0, 1e308, 1e309 or text), hostile XML (entities expanding, an external entity, DTD or
XInclude naming /etc/passwd, 10,000 levels deep) and a 50 MB ring of 200,000 GPUs;
scenarios naming a FIFO, /dev/zero or themselves as their GPU or fabric file; measurement
CSVs (a column twice, a row short or long, a quoted newline, every number hostile, 50 MB of
valid rows); engine profiles, scenarios, GPU, model and workload files and HuggingFace
configs with their hf_quant_config.json (10,000 levels of tables, dotted keys, inline
tables and arrays; 1e309, -0; a key twice); files of --models and --gpus defining one name
twice; keys and names holding a right-to-left override; and outputs that cannot be written
or must not be (read-only, a FIFO, /dev/full, a name too long, a parent that is a file, a
symbolic link to another file or to nothing, a name holding U+202E, the command's own
input).

What bad input gets (the project's promise): exit status 2, one line ``error: ...`` that
names the file, flag or argument and what is allowed, no traceback, nothing written, within
seconds and bounded memory. The checks are round 16's (:func:`hostile_round16.run_case`)
and more (:func:`judge`): nothing of /etc/passwd in the output, no bidirectional control
printed raw (it turns a terminal's line around), no case over 10 s of CPU, no case growing
the process's peak memory by more than 1 GB, and round 17's warning where the line has no
word of what is allowed (``NAMES NOT WHAT IS ALLOWED``). A case marked lenient may give a
result (exit 0, or 3 for an unmet target): a file a reader takes as it is.

Usage: ``python scripts/hostile_round18.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL) and warning (WARN), the counts, and exit status 1 if any failed.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# round 17 puts its _Recording runner in round 16's place at import: its .last is the
# last case's result
import hostile_round16  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from hostile_round16 import CSV, gpu_text, model_text, run_case  # noqa: E402
from hostile_round16 import _saved_fabric as _saved  # noqa: E402
from hostile_round17 import ALLOWED, _Recording  # noqa: E402
from hostile_tally import Tally, _alarm, round_options, within_a_minute  # noqa: E402

from compute.errors import BIDI_CONTROLS  # noqa: E402
from netmodel.cli.main import cli  # noqa: E402

#: One case: (name, argv, setup, lenient, env); ``{d}`` in argv is the case's folder.
Case = tuple[str, list[str], Callable[[Path], None], bool, dict | None]

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "netmodel/data/scenarios/lite-flat.toml"
PROFILE = ROOT / "compute/data/profiles/vllm-dgx-h100.toml"

#: The commands that read a fabric file ``{f}``.
FABRIC_READERS = {
    "show": ["topology", "show", "{f}"],
    "collective": ["collective", "all-reduce", "--fabric", "{f}", "--group", "4", "--size",
                   "1MiB"],
}
#: Commands that read a fabric file and write something (run on a few attacks).
FABRIC_WRITERS = {
    "export": ["topology", "export", "{f}", "-o", "{d}/out.graphml"],
    "costs": ["costs", "--fabric", "{f}", "--sizes", "1MiB", "--groups", "4", "-o",
              "{d}/c.csv"],
}


def _saved_own_gpu() -> str:
    """A 4-GPU ring of a GPU file's GPU (``Mine``), saved as JSON: it holds ``gpu_types``."""
    with tempfile.TemporaryDirectory() as t:
        Path(t, "g.toml").write_text(gpu_text())
        scen = SCENARIO.read_text().replace('name = "lite-flat"', 'name = "mine"')
        Path(t, "s.toml").write_text(scen.replace('gpu = "Lite"', 'gpu = "g.toml"'))
        p = Path(t) / "f.json"
        r = CliRunner().invoke(cli, ["topology", "export", str(Path(t, "s.toml")), "-o",
                                     str(p)])
        assert r.exit_code == 0, r.output
        return p.read_text()


def _write(name: str, data: str | bytes) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return setup


# ------------------------------------------------------------------- fabric files: JSON

def _json_attacks(text: str) -> dict[str, tuple[str | bytes, bool]]:
    """(file text, lenient) of each wrong graph, from a saved 4-GPU ring."""
    def doc() -> dict:
        return json.loads(text)

    def dump(d: dict) -> str:
        return json.dumps(d, indent=1)

    out: dict[str, tuple[str | bytes, bool]] = {}
    edge = doc()["edges"][0]

    d = doc()
    d["edges"].append({**edge, "source": "gpu0", "target": "gpu0"})
    out["self-loop"] = (dump(d), False)
    d = doc()
    d["edges"].append({**edge, "source": "gpu3", "target": "gpu0"})
    out["edge twice reversed"] = (dump(d), False)
    for key in ("multigraph", "directed"):
        d = doc()
        d[key] = True
        out[f"{key} true"] = (dump(d), False)
    d = doc()
    d["multigraph"] = True
    d["edges"].append({**edge, "key": 1})
    out["multi-edge with a key"] = (dump(d), False)
    d = doc()
    d["nodes"] += [{"id": f"gpu{i}", "kind": "gpu", "gpu": "H100-SXM"} for i in (4, 5)]
    d["edges"].append({**edge, "source": "gpu4", "target": "gpu5"})
    d["graph"]["gpus"] = 6
    out["two parts"] = (dump(d), False)
    d = doc()
    d["nodes"].append({"id": "gpu4", "kind": "gpu", "gpu": "H100-SXM"})
    d["graph"]["gpus"] = 5
    out["isolated gpu"] = (dump(d), False)
    d = doc()
    d["nodes"].append({"id": "sw0", "kind": "switch", "radix": 64, "tier": 1,
                       "latency": 3e-7, "in_network_reduction": False})
    out["isolated switch"] = (dump(d), False)   # no links: no port rate to price it by
    d = doc()
    d["edges"].append({**edge, "source": "gpu0", "target": "ghost"})
    out["edge to a node not listed"] = (dump(d), False)
    for what, name in {"nul": "gpu\x000", "newline": "gpu\n0", "long": "g" * 100_000,
                       "empty": "", "rtl": "gpu\u202e0", "bool": True, "float": 0.5,
                       "null": None}.items():
        d = doc()
        d["nodes"][0]["id"] = name
        for e in d["edges"]:
            for end in ("source", "target"):
                if e[end] == "gpu0":
                    e[end] = name
        out[f"node named {what}"] = (dump(d), False)
    d = doc()
    d["graph"]["gpus"] = 1_000_000
    out["a million gpus claimed"] = (dump(d), False)
    d = doc()   # bookkeeping only (the builder's arguments and counts): analysis searches
    d["graph"].update(nodes_built=1_000_000, edges_built=10**12, args={"n": 1_000_000})
    out["a million nodes built claimed"] = (dump(d), True)
    for key in ("bandwidth", "latency", "lanes"):
        for value in ("-1", "0", "-0.0", "1e308", "1e309", "NaN", "Infinity", "-Infinity",
                      '"1e9"', "true", "null", "1e-320", "[]", "{}"):
            d = doc()
            d["edges"][0][key] = "@@"
            lenient = key == "latency" and value in ("0", "-0.0", "1e-320")
            out[f"{key}={value}"] = (dump(d).replace('"@@"', value, 1), lenient)
    d = doc()
    for e in d["edges"]:
        e["bandwidth"], e["latency"] = -2.25e11, -1e-8
    out["every edge negative"] = (dump(d), False)
    d = doc()
    d["edges"][0]["colour"] = "red"   # a label of the file's own: kept unread
    out["an edge label of its own"] = (dump(d), True)
    d = doc()
    d["edges"][0]["bandwith"] = d["edges"][0].pop("bandwidth")
    out["bandwidth misspelt"] = (dump(d), False)
    d = doc()
    d["nodes"][0]["id"] = 10**30   # an integer id (JSON's own): a name, however large
    for e in d["edges"]:
        for end in ("source", "target"):
            if e[end] == "gpu0":
                e[end] = 10**30
    out["node named by a 31-digit integer"] = (dump(d), True)
    d = doc()
    d["nodes"][0]["kind"] = "router"
    out["unknown node kind"] = (dump(d), False)
    d = doc()
    d["nodes"][0]["gpu"] = "NoSuchGPU"
    out["unknown gpu type"] = (dump(d), False)
    out["deep 10000"] = ('{"nodes": [], "graph": ' + "[" * 10_000 + "]" * 10_000 + "}",
                         False)
    out["key twice"] = (text.replace('"kind": "gpu",', '"kind": "gpu", "kind": "switch",',
                                     1), False)
    out["utf-16 with bom"] = (text.encode("utf-16"), True)
    out["utf-32"] = (text.encode("utf-32"), True)
    out["truncated mid-record"] = (text[:text.index('"target"') + 12], False)
    out["binary garbage"] = (os.urandom(4096), False)
    out["empty"] = ("", False)
    out["NUL bytes"] = (b"\x00" * 1000, False)
    return out


def _gpu_types_attacks(text: str) -> dict[str, tuple[str | bytes, bool]]:
    """(file text, lenient) of a saved fabric whose own GPU type (``gpu_types``, written
    for a GPU not in the catalog) is hostile."""
    def doc() -> dict:
        return json.loads(text)

    out: dict[str, tuple[str | bytes, bool]] = {}
    for key in ("sms", "flops_bf16", "hbm_capacity", "hbm_bandwidth", "tdp", "max_instance"):
        for value in ("NaN", "-1", "0", "1e308", "1e309", '"12"', "null", "-0.0"):
            d = doc()
            d["graph"]["gpu_types"]["Mine"][key] = "@@"
            out[f"gpu_types {key}={value}"] = (json.dumps(d, indent=1).replace('"@@"', value),
                                               False)
    d = doc()
    d["graph"]["gpu_types"]["Other"] = d["graph"]["gpu_types"].pop("Mine")
    out["gpu_types entry named apart from its name"] = (json.dumps(d), False)
    d = doc()
    d["graph"]["gpu_types"]["Mine"]["colour"] = "red"
    out["gpu_types unknown field"] = (json.dumps(d), False)
    d = doc()
    d["graph"]["gpu_types"] = []
    out["gpu_types a list"] = (json.dumps(d), False)
    # the spec is the fabric's display text, never built again from a file: any one line
    for what, spec in {"spec of 1e308 GPUs": "ring:n=1e308", "spec of an unknown builder":
                       "nope:x=1", "spec 10,000 long": "ring:n=4," + "x" * 10_000}.items():
        d = doc()
        d["graph"]["spec"] = spec
        out[what] = (json.dumps(d), what != "spec 10,000 long")   # display text only
    d = doc()
    d["graph"]["builder"] = "full-mesh"   # the counts no longer match: the graph is searched
    out["builder of another fabric"] = (json.dumps(d), True)
    return out


def _json_big(text: str, nodes: int) -> str:
    """A ring of ``nodes`` GPUs in the saved fabric's form: valid-looking rows."""
    d = json.loads(text)
    g = d["graph"]
    g.update(name=f"ring of {nodes}", spec=f"ring:n={nodes}", gpus=nodes,
             args={"n": nodes}, nodes_built=nodes, edges_built=nodes)
    edge = dict(d["edges"][0])
    head = json.dumps({k: v for k, v in d.items() if k not in ("nodes", "edges")})[:-1]
    node_rows = ",".join(f'{{"id": "gpu{i}", "kind": "gpu", "gpu": "H100-SXM"}}'
                         for i in range(nodes))
    rest = {k: v for k, v in edge.items() if k not in ("source", "target")}
    tail = json.dumps(rest)[1:]
    edge_rows = ",".join(f'{{"source": "gpu{i}", "target": "gpu{(i + 1) % nodes}", {tail}'
                         for i in range(nodes))
    return f'{head}, "nodes": [{node_rows}], "edges": [{edge_rows}]}}'


# ----------------------------------------------------------------- fabric files: GraphML

def _graphml_attacks(text: str) -> dict[str, tuple[str | bytes, bool]]:
    """(file text, lenient) of each wrong graph and hostile XML, from a saved 4-GPU ring."""
    at = text.index("<edge ")
    end = text.index("</edge>", at) + len("</edge>")
    edge = text[at:end]
    node = text[text.index("<node "):text.index("</node>") + len("</node>")]

    def add(extra: str) -> str:
        return text.replace("</graph>", extra + "\n</graph>")

    def gpus(t: str, n: int) -> str:   # the graph's GPU count, to match
        return t.replace('<data key="d2">4</data>', f'<data key="d2">{n}</data>')

    def ends(src: str, dst: str) -> str:
        return edge.replace('source="gpu0"', f'source="{src}"').replace(
            'target="gpu3"', f'target="{dst}"')

    out: dict[str, tuple[str | bytes, bool]] = {
        "self-loop": (add(ends("gpu1", "gpu1")), False),
        "edge twice reversed": (add(ends("gpu3", "gpu0")), False),
        "two parts": (gpus(add(node.replace("gpu0", "gpu4") + node.replace("gpu0", "gpu5")
                               + ends("gpu4", "gpu5")), 6), False),
        "isolated gpu": (gpus(add(node.replace("gpu0", "gpu4")), 5), False),
        "edge to a node not listed": (add(ends("gpu0", "ghost")), False),
        "node named nul": (text.replace('"gpu0"', '"gpu&#0;0"'), False),
        "node named newline": (text.replace('"gpu0"', '"gpu&#10;0"'), False),
        "node named long": (text.replace('"gpu0"', '"' + "g" * 100_000 + '"'), False),
        "node named empty": (text.replace('"gpu0"', '""'), False),
        "a million nodes claimed": (text.replace(
            '<graph edgedefault="undirected">',
            '<graph edgedefault="undirected" parse.nodes="1000000" parse.edges="1000000" '
            'parse.order="nodesfirst">'), True),
        "billion laughs": (
            "<?xml version='1.0'?><!DOCTYPE graphml [<!ENTITY a 'aaaaaaaaaa'>"
            + "".join(f"<!ENTITY {chr(98 + i)} '" + f"&{chr(97 + i)};" * 10 + "'>"
                      for i in range(9))
            + "]>" + text.split("?>", 1)[1].replace("H100-SXM", "&j;", 1), False),
        "quadratic blowup": (
            "<?xml version='1.0'?><!DOCTYPE graphml [<!ENTITY a '" + "a" * 50_000 + "'>]>"
            + text.split("?>", 1)[1].replace("H100-SXM", "&a;" * 50_000, 1), False),
        "external entity /etc/passwd": (
            "<?xml version='1.0'?><!DOCTYPE graphml [<!ENTITY e SYSTEM "
            "'file:///etc/passwd'>]>" + text.split("?>", 1)[1].replace("H100-SXM", "&e;", 1),
            False),
        "parameter entity /etc/passwd": (
            "<?xml version='1.0'?><!DOCTYPE graphml [<!ENTITY % p SYSTEM "
            "'file:///etc/passwd'> %p;]>" + text.split("?>", 1)[1], False),
        "external dtd /etc/passwd": (
            "<?xml version='1.0'?><!DOCTYPE graphml SYSTEM 'file:///etc/passwd'>"
            + text.split("?>", 1)[1], False),
        # an element of another namespace is skipped, never followed
        "xinclude /etc/passwd": (text.replace(
            "<graph ", '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" '
            'href="file:///etc/passwd" parse="text"/><graph ', 1), True),
        "deep 10000": (text.replace("</graph>", "<x>" * 10_000 + "</x>" * 10_000
                                    + "</graph>"), False),
        "utf-16 declared": (text.replace("utf-8", "utf-16").encode("utf-16"), True),
        "encoding lies": (text.replace("utf-8", "ebcdic-cp-us"), False),
        "unknown encoding": (text.replace("utf-8", "no-such-codec"), False),
        "cdata number": (text.replace(">225000000000.0<", "><![CDATA[-1]]><", 1), False),
        "truncated mid-record": (text[:text.index("<edge ") + 20], False),
        "binary garbage": (os.urandom(4096), False),
        "key typed wrong": (text.replace('attr.name="bandwidth" attr.type="double"',
                                         'attr.name="bandwidth" attr.type="string"'), False),
        "processing instruction": (text.replace("<graph ", "<?php system('id'); ?><graph ",
                                                1), True),
    }
    for value in ("-1", "0", "-0.0", "1e308", "1e309", "NaN", "INF", "abc", " ", "1e-320"):
        out[f"bandwidth={value}"] = (text.replace(">225000000000.0<", f">{value}<", 1), False)
        out[f"latency={value}"] = (text.replace(">1e-08<", f">{value}<", 1),
                                   value in ("0", "-0.0", "1e-320"))
    return out


# ------------------------------------------------------------------- measurements CSV

HEAD, *ROWS = CSV.splitlines()


def _csv_attacks() -> dict[str, tuple[str | bytes, bool]]:
    """(file text, lenient) of each broken measurements file."""
    cols = HEAD.split(",")
    out: dict[str, tuple[str | bytes, bool]] = {
        "column twice": (CSV.replace("latency_s", "latency_s,latency_s", 1).replace(
            "\n", ",0.5\n").replace("latency_s,0.5\n", "latency_s\n", 1), False),
        "unknown column": (CSV.replace("latency_s", "latency_s,colour", 1), False),
        "column missing": (CSV.replace(",latency_s", "", 1), False),
        "row short": (CSV + "Llama-2-70B,H100-SXM,8\n", False),
        "row long": (CSV + ROWS[0] + ",extra,cells\n", False),
        "quoted newline": (CSV + 'Llama-2-70B,"H100\nSXM",8,1,prefill,2048,,0.13\n', False),
        "nul in a cell": (CSV.replace("Llama-2-70B", "Llama\x00-2-70B", 1), False),
        "cr only": (CSV.replace("\n", "\r"), True),
        "utf-16 with bom": (CSV.encode("utf-16"), False),
        "no rows": (HEAD + "\n", False),
        "unknown model": (CSV.replace("Llama-2-70B", "NoSuchModel", 1), False),
        "unknown gpu": (CSV.replace("H100-SXM", "NoSuchGPU", 1), False),
        "unknown phase": (CSV.replace("prefill", "warmup", 1), False),
        "tp over the gpus": (CSV.replace(",8,1,prefill", ",4096,1,prefill", 1), False),
        "unterminated quote": (CSV + '"Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1\n', False),
    }
    for i, col in enumerate(cols):
        if col in ("model", "gpu", "phase"):
            continue
        for value in ("nan", "inf", "-inf", "-0", "-1", "0", "1e308", "1e309", "abc",
                      "1.5", "1e-320", "９"):
            row = ROWS[0].split(",")
            if col == "context" and not row[i]:
                row = ROWS[2].split(",")
            row[i] = value
            lenient = (col == "latency_s" and value == "1.5") or \
                (col == "prompt" and value in ("0", "-0"))
            out[f"{col}={value}"] = ("\n".join([HEAD, ",".join(row), *ROWS[1:]]) + "\n",
                                     lenient)
    return out


def _csv_50mb() -> str:
    """About 50 MB of valid-looking rows, each batch and context its own."""
    rows = [HEAD]
    size = len(HEAD)
    i = 0
    while size < 50 * 2**20:
        row = f"Llama-2-70B,H100-SXM,8,{1 + i % 256},decode,,{128 + i % 8000},0.03{i % 97:02d}"
        rows.append(row)
        size += len(row) + 1
        i += 1
    return "\n".join(rows) + "\n"


# ------------------------------------------------------------ TOML files (and their JSON)

def _toml_attacks(text: str) -> dict[str, tuple[str | bytes, bool]]:
    """(file text, lenient) of a TOML file made deep, huge or contradictory."""
    first = text.find("\n[") + 1   # the first table (0: the file has none)
    out: dict[str, tuple[str | bytes, bool]] = {
        "deep tables 10000": (text + "\n[" + ".".join(["a"] * 10_000) + "]\nx = 1\n", False),
        "deep dotted key 10000": (text + "\n" + ".".join(["a"] * 10_000) + " = 1\n", False),
        "deep inline 10000": (text + "\nz = " + "{a = " * 10_000 + "1" + "}" * 10_000 + "\n",
                              False),
        "deep array 10000": (text + "\nz = " + "[" * 10_000 + "]" * 10_000 + "\n", False),
        "table twice": (text + "\n" + text[first:], False),
        "utf-16 with bom": (text.encode("utf-16"), False),
        "truncated mid-record": (text[:text.index("= ", len(text) // 3) + 2], False),
        "binary garbage": (os.urandom(4096), False),
        "50 MB of comments": (text + ("#" * 99 + "\n") * (50 * 2**20 // 100), False),
    }
    return out


def _toml_numbers(text: str, limit: int = 6, spec: bool = False
                  ) -> dict[str, tuple[str, bool]]:
    """Up to ``limit`` numbers of ``text`` (key = number) given 1e309, -0.0, 1e308, a
    string, NaN. ``spec``: a string is read as a builder spec's value is (a scenario's
    [fabric] keys: ``bandwidth = "450GB/s"``), so a number in quotes is that number."""
    import re

    out: dict[str, tuple[str, bool]] = {}
    sites = list(re.finditer(r"(?m)^\s*(\w+)\s*=\s*(?:\{\s*value\s*=\s*)?(-?[0-9][0-9._e+-]*)",
                             text))
    for m in sites[:limit]:
        for value in ("1e309", "-0.0", "1e308", "-1e308", '"12"', "nan"):
            put = text[:m.start(2)] + value + text[m.end(2):]
            out[f"{m.group(1)}={value}"] = (put, value == "-0.0" or
                                            (spec and value == '"12"'))
    return out


# --------------------------------------------------------------------------- the cases

INFER = ["infer", "--tp", "1", "--batch", "1"]


def _fill(argv: list[str], name: str) -> list[str]:
    return [a.replace("{f}", "{d}/" + name) for a in argv]


def fabric_cases() -> Iterator[Case]:
    for fmt, attacks in (("json", _json_attacks(_saved("json"))),
                         ("graphml", _graphml_attacks(_saved("graphml")))):
        name = f"f.{fmt}"
        for what, (data, lenient) in attacks.items():
            for cmd, argv in FABRIC_READERS.items():
                yield f"fabric-{fmt} {what} | {cmd}", _fill(argv, name), \
                    _write(name, data), lenient, None
        for what in ("self-loop", "two parts", "edge to a node not listed",
                     "bandwidth=-1", "binary garbage"):
            data, lenient = attacks[what]
            for cmd, argv in FABRIC_WRITERS.items():
                yield f"fabric-{fmt} {what} | {cmd}", _fill(argv, name), \
                    _write(name, data), lenient, None
    # a fabric of a GPU the catalog lacks, saved with its gpu_types
    for what, (data, lenient) in _gpu_types_attacks(_saved_own_gpu()).items():
        for cmd, argv in FABRIC_READERS.items():
            yield f"fabric-json {what} | {cmd}", _fill(argv, "f.json"), \
                _write("f.json", data), lenient, None
    # 50 MB of valid-looking rows: a ring of 200,000 GPUs (within the node limit: read in
    # seconds), and the same file read with the node limit lowered (refused before a graph)
    big = _json_big(_saved("json"), 200_000)
    yield "fabric-json 50 MB ring | show", ["topology", "show", "{d}/f.json"], \
        _write("f.json", big), True, None
    yield "fabric-json 50 MB ring, node limit 1000 | show", \
        ["topology", "show", "{d}/f.json"], _write("f.json", big), False, \
        {"NETMODEL_MAX_FABRIC_NODES": "1000"}
    # a scenario naming a fabric file that is hostile
    scen = SCENARIO.read_text()
    body = scen.split("[fabric]")[0] + 'fabric = "f.json"\n\n[collective]' + \
        scen.split("[collective]")[1]
    body = body.replace('gpu = "Lite"', 'gpu = "H100-SXM"')
    for what in ("self-loop", "two parts", "node named nul", "a million gpus claimed"):
        data, lenient = _json_attacks(_saved("json"))[what]

        def setup(d: Path, data=data) -> None:
            _write("f.json", data)(d)
            _write("s.toml", body)(d)
        yield f"scenario's fabric {what} | cost", ["cost", "--scenario", "{d}/s.toml",
                                                   "--model", "Llama-3-8B", "--max-batch",
                                                   "8"], setup, lenient, None


def scenario_reference_cases() -> Iterator[Case]:
    """A scenario naming a GPU or fabric file that is no file to read: a FIFO (a read would
    block), itself, a path outside any folder given."""
    scen = SCENARIO.read_text().replace('name = "lite-flat"', 'name = "mine"')
    on_h100 = scen.replace('gpu = "Lite"', 'gpu = "H100-SXM"')
    fabric = on_h100.split("[fabric]")[0] + 'fabric = "@@"\n\n[collective]' + \
        on_h100.split("[collective]")[1]
    texts = {"gpu a fifo": scen.replace('gpu = "Lite"', 'gpu = "fifo.toml"'),
             "gpu itself": scen.replace('gpu = "Lite"', 'gpu = "s.toml"'),
             "gpu /dev/zero": scen.replace('gpu = "Lite"', 'gpu = "zero.toml"'),
             "fabric a fifo": fabric.replace("@@", "fifo.json"),
             "fabric itself": fabric.replace("@@", "s.toml"),
             "fabric absent /etc/passwd.json": fabric.replace("@@", "/etc/passwd.json"),
             "fabric a symlink loop": fabric.replace("@@", "loop.json")}
    for what, text in texts.items():
        def setup(d: Path, text=text) -> None:
            _write("s.toml", text)(d)
            os.mkfifo(d / "fifo.toml")
            os.mkfifo(d / "fifo.json")
            os.symlink("/dev/zero", d / "zero.toml")
            os.symlink(d / "loop.json", d / "loop.json")
        yield f"scenario's {what} | cost", ["cost", "--scenario", "{d}/s.toml", "--model",
                                            "Llama-3-8B", "--max-batch", "8"], setup, False, \
            None


def csv_cases() -> Iterator[Case]:
    argv = ["calibrate", "--measurements", "{d}/m.csv", "-o", "{d}/out.toml"]
    for what, (data, lenient) in _csv_attacks().items():
        yield f"measurements {what} | calibrate", argv, _write("m.csv", data), lenient, None
    yield "measurements 50 MB of rows | calibrate", argv, _write("m.csv", _csv_50mb()), \
        True, None


def toml_cases() -> Iterator[Case]:
    scen = SCENARIO.read_text().replace('name = "lite-flat"', 'name = "mine"')
    kinds = {
        "profile": ("p.toml", PROFILE.read_text(),
                    [*INFER, "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--profile",
                     "{f}"]),
        "scenario": ("s.toml", scen, ["cost", "--scenario", "{f}", "--model", "Llama-3-8B",
                                      "--max-batch", "8"]),
        "gpu": ("g.toml", gpu_text(), [*INFER, "--model", "Llama-3-8B", "--gpu", "{f}"]),
        "model": ("mo.toml", model_text(), [*INFER, "--model", "{f}", "--gpu", "H100-SXM"]),
        "gpu-json": ("g.json", "", [*INFER, "--model", "Llama-3-8B", "--gpu", "{f}"]),
        "calibrate base": ("p.toml", PROFILE.read_text(),
                           ["calibrate", "--measurements", "{d}/m.csv", "-o", "{d}/out.toml",
                            "--base", "{f}"]),
    }
    for kind, (name, text, argv) in kinds.items():
        if kind == "gpu-json":
            attacks = {"deep json 10000": ("[" * 10_000 + "]" * 10_000, False),
                       "deep object 10000": ('{"a": ' * 10_000 + "1" + "}" * 10_000, False),
                       "1e309": (json.dumps(json.loads(hostile_round16.as_json(gpu_text())))
                                 .replace("132", "1e309", 1), False)}
        else:
            attacks = {**_toml_attacks(text),
                       **_toml_numbers(text, spec=kind == "scenario")}

        for what, (data, lenient) in attacks.items():
            def setup(d: Path, data=data, name=name) -> None:
                _write("m.csv", CSV)(d)
                _write(name, data)(d)
            yield f"{kind} {what} | {argv[0]}", _fill(argv, name), setup, lenient, None


WORKLOAD = 'name = "mine"\nprompt = 1500\noutput = 13\nrate = 2.5\n'
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8",
         "--workload", "{d}/w.toml"]


def workload_cases() -> Iterator[Case]:
    """serve's workload file: each number made hostile, the file deep, a key twice."""
    attacks: dict[str, tuple[str | bytes, bool]] = {
        **_toml_attacks(WORKLOAD),
        "key twice": (WORKLOAD + "prompt = 10\n", False),
        "unknown key": (WORKLOAD + "promt = 10\n", False),
        "no output": (WORKLOAD.replace("output = 13\n", ""), False),
        "name with a newline": (WORKLOAD.replace('"mine"', '"mi\\nne"'), False),
        "name 100,000 long": (WORKLOAD.replace('"mine"', '"' + "m" * 100_000 + '"'), False),
    }
    for key in ("prompt", "output", "rate"):
        for value in ("nan", "inf", "-inf", "-0.0", "0", "-1", "1e308", "1e309", '"12"',
                      "1.5", "1e-320", "true", "[]", "{}"):
            old = {"prompt": "1500", "output": "13", "rate": "2.5"}[key]
            attacks[f"{key}={value}"] = (WORKLOAD.replace(f"{key} = {old}", f"{key} = {value}"),
                                         key == "rate" and value == "1.5")
    for what, (data, lenient) in attacks.items():
        yield f"workload {what} | serve", SERVE, _write("w.toml", data), lenient, None


HF = json.loads(hostile_round16.HF_CONFIG)
MODELS_HF = ["models", "--hf-config", "{d}/config.json"]


def hf_cases() -> Iterator[Case]:
    """A HuggingFace config.json: each count made hostile, the file deep or huge."""
    attacks: dict[str, tuple[str | bytes, bool]] = {
        "deep 10000": ('{"a": ' * 10_000 + "1" + "}" * 10_000, False),
        "key twice": (hostile_round16.HF_CONFIG[:-1] + ', "hidden_size": 8192}', False),
        "utf-16 with bom": (hostile_round16.HF_CONFIG.encode("utf-16"), True),
        "50 MB of spaces": (hostile_round16.HF_CONFIG + " " * (50 * 2**20), False),
        "a list": ("[1, 2, 3]", False),
        "truncated mid-record": (hostile_round16.HF_CONFIG[:60], False),
    }
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads",
                "num_key_value_heads", "vocab_size"):
        for value in ("NaN", "Infinity", "-1", "0", "-0.0", "1e308", "1e309", '"32"', "1.5",
                      "true", "null", "9" * 5000):
            # null key-value heads: as many as attention heads (HuggingFace's LlamaConfig)
            attacks[f"{key}={value[:12]}"] = (json.dumps(HF).replace(
                f'"{key}": {HF[key]}', f'"{key}": {value}'),
                key == "num_key_value_heads" and value == "null")
    for what, (data, lenient) in attacks.items():
        yield f"hf-config {what} | models", MODELS_HF, _write("config.json", data), lenient, \
            None
    # the hf_quant_config.json beside it (modelopt's own file), broken
    sides: dict[str, str | bytes | None] = {
        "quant_algo NaN": '{"quantization": {"quant_algo": NaN}}',
        "quant_algo unknown": '{"quantization": {"quant_algo": "MAGIC"}}',
        "kv algo unknown": '{"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": 4}}',
        "a list": '{"quantization": [1, 2]}', "deep 10000": "[" * 10_000 + "]" * 10_000,
        "binary garbage": os.urandom(4096), "empty": "", "a fifo": None,
        "900,000 modules kept": '{"quantization": {"quant_algo": "FP8", "exclude_modules": ['
        + ",".join(['"a"'] * 900_000) + "]}}"}
    for what, side in sides.items():
        def setup(d: Path, side=side) -> None:
            _write("config.json", hostile_round16.HF_CONFIG)(d)
            if side is None:
                os.mkfifo(d / "hf_quant_config.json")
            else:
                _write("hf_quant_config.json", side)(d)
        yield f"hf-config's hf_quant_config.json {what} | models", MODELS_HF, setup, False, \
            None
    # a folder given for the config: it holds none, or a link that loops

    def loop(d: Path) -> None:
        (d / "m").mkdir()
        os.symlink(d / "m" / "config.json", d / "m" / "config.json")
    yield "hf-config folder without config.json | models", ["models", "--hf-config", "{d}"], \
        lambda d: None, False, None
    yield "hf-config folder whose config.json loops | models", \
        ["models", "--hf-config", "{d}/m"], loop, False, None


#: A right-to-left override: printed raw, a terminal shows the rest of the line reversed.
RLO = "\u202e"


def bidi_cases() -> Iterator[Case]:
    """Keys, columns and names that hold a bidirectional control: refused, the control
    escaped in the line."""
    texts = {
        "gpu key": ("g.toml", gpu_text() + f'"x{RLO}yz" = 1\n',
                    [*INFER, "--model", "Llama-3-8B", "--gpu", "{d}/g.toml"]),
        "model name": ("mo.toml", model_text().replace('"Mine"', f'"Mi{RLO}ne"'),
                       [*INFER, "--model", "{d}/mo.toml", "--gpu", "H100-SXM"]),
        "measurements column": ("m.csv", CSV.replace("latency_s", f"latency_s,x{RLO}y", 1),
                                ["calibrate", "--measurements", "{d}/m.csv", "-o",
                                 "{d}/out.toml"]),
        "fabric node id": ("f.json", _saved("json").replace('"gpu0"', f'"gpu{RLO}0"'),
                           ["topology", "show", "{d}/f.json"]),
        "fabric document key": ("f.json", _saved("json").replace('"directed"',
                                                                 f'"dir{RLO}ected"'),
                                ["topology", "show", "{d}/f.json"]),
        "workload key": ("w.toml", WORKLOAD + f'"p{RLO}q" = 1\n', SERVE),
    }
    for what, (name, text, argv) in texts.items():
        yield f"{what} with a right-to-left override", argv, _write(name, text), False, None


def list_cases() -> Iterator[Case]:
    """Files given in a list (compare's --models, --gpus): two that define one name
    differently, one file twice."""
    def setup(d: Path) -> None:
        _write("m1.toml", model_text())(d)
        _write("m2.toml", model_text().replace("layers = 32", "layers = 16"))(d)
        _write("g1.toml", gpu_text())(d)
        _write("g2.toml", gpu_text().replace("sms = 132", "sms = 66"))(d)
    base = ["compare", "--scenarios", "h100-dgx", "--max-batch", "8", "--no-plot", "-q"]
    yield "compare --models two files of one name", \
        [*base, "--models", "{d}/m1.toml,{d}/m2.toml"], setup, False, None
    yield "compare --models one file twice", \
        [*base, "--models", "{d}/m1.toml,{d}/m1.toml"], setup, False, None
    yield "compare --gpus two files of one name", \
        [*base, "--models", "Llama-3-8B", "--gpus", "{d}/g1.toml,{d}/g2.toml"], setup, False, \
        None


def output_cases() -> Iterator[Case]:
    """Outputs that cannot be written or must not be: nothing half-written, the input kept."""
    saved = _saved("json")
    scen = SCENARIO.read_text().replace('name = "lite-flat"', 'name = "mine"')

    def setup(d: Path) -> None:
        _write("m.csv", CSV)(d)
        _write("f.json", saved)(d)
        _write("p.toml", PROFILE.read_text())(d)
        (d / "file").write_text("keep")
        (d / "passwd").write_text("root:x:0:0:keep\n")
        for suffix in (".toml", ".json", ".csv", ".png"):
            (d / f"ro{suffix}").write_text("keep")
            os.chmod(d / f"ro{suffix}", 0o400)
            os.mkfifo(d / f"fifo{suffix}")
            os.symlink(d / "passwd", d / f"passwd{suffix}")
            os.symlink(d / "gone", d / f"dangling{suffix}")
        os.symlink(d / "f.json", d / "link-to-input.json")
        (d / "out").mkdir()
        (d / "out" / "s.toml").write_text(scen)   # an input inside the output folder
    long = "x" * 300
    writers = {
        "calibrate -o": (["calibrate", "--measurements", "{d}/m.csv", "-o"], ".toml"),
        "export -o": (["topology", "export", "ring:n=4", "-o"], ".json"),
        "costs -o": (["costs", "--fabric", "ring:n=8", "--sizes", "1MiB", "--groups", "8",
                      "-o"], ".csv"),
        "plot -o": (["topology", "plot", "ring:n=4", "-o"], ".png"),
    }
    for what, (argv, suffix) in writers.items():
        targets = {
            # root may write any file, as open() lets it: a result there
            "read-only file": ("{d}/ro" + suffix, os.geteuid() == 0),
            "fifo": ("{d}/fifo" + suffix, False),
            "name too long": ("{d}/" + long + suffix, False),
            "path too long": ("{d}/" + "/".join(["d" * 200] * 30) + suffix, False),
            "parent is a file": ("{d}/file/x" + suffix, False),
            "newline in name": ("{d}/a\nb" + suffix, False),
            "right-to-left override in name": ("{d}/a" + RLO + "b" + suffix, False),
            "/dev/full": ("/dev/full", False),
            "symlink to a file of others": ("{d}/passwd" + suffix, False),
            "dangling symlink": ("{d}/dangling" + suffix, False),
        }
        for t, (target, lenient) in targets.items():
            yield f"{what} {t}", [*argv, target], setup, lenient, None
    # the output is an input of the command (or a link to it, or the input read through a
    # link): refused, the input kept
    yield "export -o the input file", ["topology", "export", "{d}/f.json", "-o",
                                       "{d}/f.json"], setup, False, None
    yield "export -o a link to the input", ["topology", "export", "{d}/f.json", "-o",
                                            "{d}/link-to-input.json"], setup, False, None
    yield "costs -o the fabric it reads", ["costs", "--fabric", "{d}/f.json", "--sizes", "1MiB",
                                           "--groups", "4", "--format", "json", "-o",
                                           "{d}/f.json"], setup, False, None
    yield "costs -o the fabric it reads through a link", [
        "costs", "--fabric", "{d}/link-to-input.json", "--sizes", "1MiB", "--groups", "4",
        "--format", "json", "-o", "{d}/f.json"], setup, False, None
    yield "calibrate -o the measurements", ["calibrate", "--measurements", "{d}/m.csv",
                                            "-o", "{d}/m.csv"], setup, False, None
    yield "calibrate -o its --base", ["calibrate", "--measurements", "{d}/m.csv", "-o",
                                      "{d}/p.toml", "--base", "{d}/p.toml"], setup, False, None
    yield "compare --out the folder of its scenario", [
        "compare", "--scenarios", "{d}/out/s.toml", "--models", "Llama-3-8B", "--max-batch",
        "8", "--no-plot", "-q", "--out", "{d}/out"], setup, False, None


def cases() -> Iterator[Case]:
    yield from fabric_cases()
    yield from scenario_reference_cases()
    yield from csv_cases()
    yield from toml_cases()
    yield from workload_cases()
    yield from hf_cases()
    yield from list_cases()
    yield from bidi_cases()
    yield from output_cases()


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def judge(case: Case) -> tuple[str | None, float]:
    """None where ``case`` got what bad input gets (lenient: or a result), else why not;
    and its wall time. Round 16's checks, then: nothing of /etc/passwd said, at most 10 s
    of CPU (wall time is the machine's load too), peak memory grown by at most 1 GB."""
    name, argv, setup, lenient, env = case
    peak, cpu = _peak(), time.process_time()
    signal.signal(signal.SIGALRM, _alarm)
    why, dt = within_a_minute(run_case, argv, setup, lenient, env)
    cpu = time.process_time() - cpu
    said = _Recording.last
    grew = _peak() - peak
    if said is not None and "root:" in said.output:
        why = f"read /etc/passwd | {said.output.strip()[:200]}"
    elif said is not None and BIDI_CONTROLS.intersection(said.output):
        why = f"printed a bidirectional control raw | {ascii(said.output.strip()[:200])}"
    elif why is None and cpu > 10:
        why = f"took {cpu:.1f} s of CPU"
    elif why is None and grew > 2**30:
        why = f"peak memory grew {grew / 2**30:.1f} GB"
    elif why is None and said is not None and said.exit_code == 2 and \
            not ALLOWED.search(said.output):
        why = f"NAMES NOT WHAT IS ALLOWED | {said.output.strip()[:300]}"
    return why, dt


def main() -> int:
    args = round_options()
    tally = Tally("NAMES N", args.v)
    for case in cases():
        if args.k in case[0]:
            tally.record(case[0], *judge(case))
    return tally.report("refused naming no file, flag or argument")


if __name__ == "__main__":
    sys.exit(main())
