"""Hostile-input round 16, aimed at the files netmodel reads: every input file kind
(scenario TOML, engine profile TOML, measurements CSV, saved fabrics in JSON and GraphML,
GPU and model catalog files, HuggingFace configs) given to each command that reads it,
broken in each way a file arrives broken: malformed, truncated, empty, a BOM, binary junk,
NUL bytes, a key twice, each number of the file made NaN, inf, negative, zero, huge, a
string, a date or a table, a very large file (read only after its size is checked), a
symbolic link to a folder, a folder, a FIFO, a file that cannot be read. Run in process
(click's CliRunner), as round 15 (scripts/hostile_round15.py).

What bad input gets (the project's promise): exit status 2, one line ``error: ...`` that
names the file (and, for a value inside it, the section and key), no traceback, nothing
written (the working folder and every output target as they were). A value a file may hold
(zero latency, a large but finite number) may instead give a result (exit 0, or 3 for an
unmet target): those cases are run ``lenient``.

Usage: ``python scripts/hostile_round16.py [-k SUBSTRING] [-v]``; prints each failure (FAIL:
not what bad input gets; WARN: refused, but the line names neither the file nor a flag nor
the argument typed, or a bad value of a key without the key) and the counts; exit status 1
if any failed.
"""

from __future__ import annotations

import os
import re
import stat
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

ROOT = Path(__file__).resolve().parents[1]

#: One case: (name, argv, setup, lenient, env) where setup(folder) writes the files argv names
#: (argv items may hold ``{d}``, the case's folder); lenient: a result is allowed too;
#: env: environment variables the run gets.
Case = tuple[str, list[str], Callable[[Path], None] | None, bool, dict | None]

#: Changes a reader takes as they are (a file still well formed): a result is allowed.
READABLE = {"bom", "crlf", "row twice"}
#: The bookkeeping of a saved fabric (its builder's arguments and the counts it built): a
#: value that does not match the graph only makes analysis search the graph instead of
#: trusting the builder's closed forms (topologies.closed_forms), so a result is allowed.
BOOKKEEPING = {"n", "nodes_built", "edges_built"}
#: Words the refusal of a file broken as a whole must hold (one of them): it says why, not
#: only where a parser stopped (two BOMs were 'invalid statement at line 1, column 1').
WHY = {"two boms": ("byte-order",), "too large": ("limit",), "over the limit": ("limit",),
       "nodes over the limit": ("limit of 3 nodes",), "edges over the limit": ("3 edges",),
       "utf-16": ("UTF-8", "encoding"), "latin-1": ("UTF-8", "utf-8", "not well-formed"),
       "binary junk": ("UTF-8", "not well-formed", "readable"),
       "symlink loop": ("symbolic links",), "a folder": ("folder", "directory", "not a file",
                                                         "does not exist"),
       "fifo": ("not a regular file", "not a file"), "/dev/zero": ("not a regular file",
                                                                   "not a file"),
       "missing": ("does not exist",), "dangling symlink": ("does not exist",)}
#: The kinds of file written in JSON.
JSON_KINDS = ("fabric-json", "hf-config", "gpu-json", "model-json")
#: Environment of the cases that lower a limit to reach it with a small file.
SMALL_FABRIC_LIMIT = {"NETMODEL_MAX_FABRIC_FILE_BYTES": "100000"}

#: TOML values put in place of a number of the file.
TOML_VALUES = ["nan", "inf", "-inf", "-1", "0", "1e400", "9" * 400, '"abc"', "true", "[]",
               "{}", "1979-05-27", "-0.0", "1e-320"]
#: JSON values put in place of a number.
JSON_VALUES = ["NaN", "Infinity", "-Infinity", "-1", "0", "1e400", "9" * 400, '"abc"',
               "true", "null", "[]", "{}", "1e-320"]
#: CSV cells put in place of a number.
CSV_VALUES = ["nan", "inf", "-1", "0", "1e400", "9" * 400, "abc", "", " 1", "1e-320",
              "\u0661", "0x10"]
#: Bytes over the largest input file netmodel reads (16 MiB, compute.config_files).
BIG = 17 << 20


def _text(name: str) -> str:
    if name.startswith("scenarios/"):
        return resources.files("netmodel").joinpath(f"data/{name}").read_text()
    return (ROOT / name).read_text()


def gpu_text() -> str:
    """One GPU file: the catalog's H100-SXM table, renamed."""
    t = _text("compute/data/gpus.toml")
    at = t.index('[gpu."H100-SXM"]')
    end = t.index("\n[", at + 1)
    return t[at:end].replace('[gpu."H100-SXM"]', '[gpu."Mine"]') + "\n"


def model_text() -> str:
    """One model file: the catalog's Llama-3-8B table, renamed."""
    t = _text("compute/data/models.toml")
    at = t.index('[model."Llama-3-8B"]')
    end = t.index("\n[", at + 1)
    return t[at:end].replace('[model."Llama-3-8B"]', '[model."Mine"]') + "\n"


def as_json(toml_text: str) -> str:
    """A catalog file's TOML as the JSON form the same readers take, one key a line."""
    import json
    import tomllib

    return json.dumps(tomllib.loads(toml_text), indent=1)


HF_CONFIG = ('{"architectures": ["LlamaForCausalLM"], "model_type": "llama", '
             '"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, '
             '"num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, '
             '"max_position_embeddings": 8192, "torch_dtype": "bfloat16"}')

CSV = ("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
       "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368\n"
       "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.1326\n"
       "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298\n"
       "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386\n")

INFER = ["infer", "--tp", "1", "--batch", "1"]


def kinds() -> dict[str, tuple[str, str, list[list[str]]]]:
    """Each file kind: (file name, a valid text, the commands that read it, ``{f}`` the
    file)."""
    scen = _text("scenarios/lite-flat.toml").replace('name = "lite-flat"', 'name = "mine"')
    return {
        "scenario": ("s.toml", scen, [
            ["cost", "--scenario", "{f}", "--model", "Llama-3-8B", "--max-batch", "8"],
            ["collective", "all-reduce", "--scenario", "{f}", "--group", "8", "--size",
             "1MiB"]]),
        "profile": ("p.toml", _text("compute/data/profiles/vllm-dgx-h100.toml"), [
            [*INFER, "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--profile", "{f}"]]),
        "measurements": ("m.csv", CSV, [
            ["calibrate", "--measurements", "{f}", "-o", "{d}/out.toml"]]),
        "gpu": ("g.toml", gpu_text(), [
            [*INFER, "--model", "Llama-3-8B", "--gpu", "{f}"],
            [*INFER, "--model", "Llama-3-8B", "--gpu", "Mine", "--gpu-file", "{f}"]]),
        "model": ("mo.toml", model_text(), [
            [*INFER, "--model", "{f}", "--gpu", "H100-SXM"],
            ["cost", "--scenario", "h100-dgx", "--model", "{f}", "--max-batch", "8"]]),
        "gpu-json": ("g.json", as_json(gpu_text()), [
            [*INFER, "--model", "Llama-3-8B", "--gpu", "{f}"]]),
        "model-json": ("mo.json", as_json(model_text()), [
            [*INFER, "--model", "{f}", "--gpu", "H100-SXM"]]),
        "hf-config": ("config.json", HF_CONFIG, [
            [*INFER, "--hf-config", "{f}", "--gpu", "H100-SXM"]]),
        "fabric-json": ("f.json", "", [
            ["topology", "show", "{f}"],
            ["collective", "all-reduce", "--fabric", "{f}", "--group", "4", "--size",
             "1MiB"]]),
        "fabric-graphml": ("f.graphml", "", [
            ["topology", "show", "{f}"],
            ["collective", "all-reduce", "--fabric", "{f}", "--group", "4", "--size",
             "1MiB"]]),
    }


def _saved_fabric(fmt: str) -> str:
    with tempfile.TemporaryDirectory() as t:
        p = Path(t) / f"f.{fmt}"
        r = CliRunner().invoke(cli, ["topology", "export", "ring:n=4", "-o", str(p)])
        assert r.exit_code == 0, r.output
        return p.read_text()


def _number_sites(kind: str, text: str) -> list[tuple[str, Callable[[str], str]]]:
    """Each number of ``text`` as a (label, put(value)) that writes another value there."""
    sites = []
    if kind in JSON_KINDS:
        for m in re.finditer(r'"(\w+)": (-?[0-9][0-9.e+-]*)', text):
            if kind == "fabric-json" and m.group(1) in {k for k, _ in sites}:
                continue    # one of each key: the first node's or edge's
            key = m.group(1)
            if key == "value":   # a {value, unit, source} table: the key it is the value of
                key = re.findall(r'"(\w+)": \{', text[:m.start()])[-1]
            sites.append((key, _splice(text, m.start(2), m.end(2))))
    elif kind == "fabric-graphml":
        keys = dict(re.findall(r'<key id="(d\d+)" for="\w+" attr.name="(\w+)" '
                               r'attr.type="(?:double|int|long|float)"', text))
        for kid, attr in keys.items():
            m = re.search(rf'<data key="{kid}">([^<]*)</data>', text)
            if m:
                sites.append((attr, _splice(text, m.start(1), m.end(1))))
    elif kind == "measurements":
        lines = text.splitlines(keepends=True)
        head = lines[0].rstrip("\n").split(",")
        row = lines[1].rstrip("\n").split(",")
        for i, col in enumerate(head):
            if re.fullmatch(r"-?[0-9.e]+", row[i] or ""):
                def put(v, i=i):
                    cells = list(row)
                    cells[i] = v
                    return "".join([lines[0], ",".join(cells) + "\n", *lines[2:]])
                sites.append((col, put))
    else:   # TOML: key = number, a line's or an inline table's value = number
        for m in re.finditer(r"(?m)^\s*(\w+)\s*=\s*(?:\{\s*value\s*=\s*)?(-?[0-9][0-9._e+-]*)",
                             text):
            sites.append((m.group(1), _splice(text, m.start(2), m.end(2))))
    return sites


def _splice(text: str, start: int, end: int) -> Callable[[str], str]:
    """``text`` with ``text[start:end]`` replaced by the value given."""
    return lambda value: text[:start] + value + text[end:]


def _placed(place: Callable[[Path, str], None], name: str) -> Callable[[Path], None]:
    return lambda d: place(d, name)


def _write(path: str, data: str | bytes) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        p = d / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return setup


def _shape_attacks(kind: str, text: str) -> dict[str, str | bytes]:
    """The file broken as a whole."""
    first_line = next((ln for ln in text.splitlines() if ln and not ln.startswith("#")), "")
    out: dict[str, str | bytes] = {
        "empty": "", "blank": "\n\n  \n", "truncated": text[:len(text) // 2],
        "cut mid-token": text[:len(text) * 2 // 3].rstrip()[:-1],
        "bom": "\ufeff" + text, "two boms": "\ufeff\ufeff" + text,
        "binary junk": bytes(range(256)) * 8, "nul inside": text[:len(text) // 3] + "\x00" + text[len(text) // 3:],
        "latin-1": text.encode("utf-8") + "\n# caf\u00e9".encode("latin-1"),
        "utf-16": text.encode("utf-16"), "crlf": text.replace("\n", "\r\n"),
        "first line twice": text.replace(first_line, first_line + "\n" + first_line, 1),
        "too large": text + ("\n" if not kind.startswith("fabric-g") else "")
        + ("#" if kind not in (*JSON_KINDS, "fabric-graphml") else " ") * BIG,
        "deep": ("[" * 5000 + "]" * 5000) if kind in JSON_KINDS
        else "a = " + "[" * 5000 + "]" * 5000,
    }
    if kind in JSON_KINDS:
        out |= {"a list": "[1, 2]", "null": "null", "a string": '"x"', "trailing": text + "{}"}
        pair = re.search(r'"\w+": [^\n{\[,]+,', text)   # a key given twice in one object
        if pair:
            out["key twice"] = text[:pair.end()] + " " + pair.group(0) + text[pair.end():]
    if kind == "fabric-graphml":
        out |= {"billion laughs": "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaaaaaaaa'>"
                "<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'><!ENTITY c '&b;&b;&b;&b;&b;&b;"
                "&b;&b;&b;&b;'>]><graphml>&c;</graphml>",
                "external entity": "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY e SYSTEM "
                "'file:///etc/passwd'>]><graphml><graph>&e;</graph></graphml>"}
    if kind not in (*JSON_KINDS, "fabric-graphml", "measurements"):
        out |= {"section twice": text + "\n" + text,
                "unknown top table": text + "\n[nope]\nx = 1\n",
                "key of the wrong table": text + "\n[fabric.extra]\nx = 1\n"}
    if kind == "measurements":
        out |= {"header only": text.splitlines()[0] + "\n", "no header": "".join(
            text.splitlines(keepends=True)[1:]), "semicolons": text.replace(",", ";"),
                "row twice": text + text.splitlines(keepends=True)[1],
                "a million rows": text.splitlines()[0] + "\n"
                + text.splitlines(keepends=True)[1] * 1_000_000}
    return out


def _place_attacks() -> dict[str, Callable[[Path, str], None]]:
    """Where the file is not a file (each writes ``name`` in folder ``d``)."""
    def link_dir(d: Path, name: str) -> None:
        (d / "adir").mkdir()
        os.symlink(d / "adir", d / name)

    def unreadable(d: Path, name: str) -> None:
        (d / name).write_text("x = 1\n")
        os.chmod(d / name, 0)

    def dangling(d: Path, name: str) -> None:
        os.symlink(d / "gone", d / name)

    out = {"symlink to a folder": link_dir, "a folder": lambda d, n: (d / n).mkdir(),
           "fifo": lambda d, n: os.mkfifo(d / n), "dangling symlink": dangling,
           "symlink loop": lambda d, n: os.symlink(d / n, d / n),
           "missing": lambda d, n: None, "/dev/zero": lambda d, n: os.symlink("/dev/zero",
                                                                               d / n)}
    if os.geteuid() != 0:
        out["unreadable"] = unreadable
    return out


def cases() -> Iterator[Case]:
    every = kinds()
    saved = {"fabric-json": _saved_fabric("json"), "fabric-graphml": _saved_fabric("graphml")}
    for kind, (name, text, commands) in every.items():
        text = saved.get(kind, text)
        fabric = kind.startswith("fabric")
        json = kind in JSON_KINDS
        broken: dict[str, tuple[str | bytes, bool]] = {
            # JSON may be UTF-16 (RFC 8259 readers detect it); a fabric file may be up to
            # 1 GiB (its own limit, lowered below to reach it)
            k: (v, k in READABLE or (json and k == "utf-16") or (fabric and k == "too large"))
            for k, v in _shape_attacks(kind, text).items()}
        values = (JSON_VALUES if kind in JSON_KINDS else
                  CSV_VALUES if kind == "measurements" else
                  [v for v in TOML_VALUES if v not in ("1979-05-27", "{}")]
                  if kind == "fabric-graphml" else TOML_VALUES)
        for key, put in _number_sites(kind, text):
            for v in values:
                # 0, -0.0 and a subnormal may be values a file holds (a latency of 0, an
                # overhead of 0): a result is allowed
                lenient = v in ("0", "-0.0", "1e-320") or (fabric and key in BOOKKEEPING) \
                    or (kind == "hf-config" and v == "null") or v.startswith(" ")
                broken[f"{key}={v[:12]}"] = (put(v), lenient)
        for what, (data, lenient) in broken.items():
            for cmd in commands:
                argv = [a.replace("{f}", f"{{d}}/{name}") for a in cmd]
                yield f"{kind} {what} | {cmd[0]}", argv, _write(name, data), lenient, None
        if fabric:   # past the fabric file limit (lowered to 100 kB), and past the node
            # and edge limits (lowered to 3): refused from the file's counts, before a graph
            argv = [a.replace("{f}", f"{{d}}/{name}") for a in commands[0]]
            yield (f"{kind} over the limit | {commands[0][0]}", argv,
                   _write(name, text + " " * 200_000), False, SMALL_FABRIC_LIMIT)
            for limit in ("NODES", "EDGES"):
                yield (f"{kind} {limit.lower()} over the limit | {commands[0][0]}", argv,
                       _write(name, text), False, {f"NETMODEL_MAX_FABRIC_{limit}": "3"})
        for what, place in _place_attacks().items():
            argv = [a.replace("{f}", f"{{d}}/{name}") for a in commands[0]]
            yield (f"{kind} {what} | {commands[0][0]}", argv,
                   _placed(place, name), False, None)
    # files a scenario names: its GPU file and its saved fabric, broken
    scen = _text("scenarios/lite-flat.toml").replace('name = "lite-flat"', 'name = "mine"')
    cost = ["cost", "--scenario", "{d}/s.toml", "--model", "Llama-3-8B", "--max-batch", "8"]
    for what, data in _shape_attacks("gpu", gpu_text()).items():
        if what == "too large":
            continue
        def setup(d: Path, data=data) -> None:
            _write("g.toml", data)(d)
            _write("s.toml", scen.replace('gpu = "Lite"', 'gpu = "g.toml"'))(d)
        yield f"scenario's gpu file {what} | cost", cost, setup, what in READABLE, None
    for what, data in _shape_attacks("fabric-json", saved["fabric-json"]).items():
        if what == "too large":
            continue
        def setup(d: Path, data=data) -> None:
            _write("f.json", data)(d)
            body = scen.split("[fabric]")[0] + 'fabric = "f.json"\n\n[collective]' + \
                scen.split("[collective]")[1]
            _write("s.toml", body.replace('gpu = "Lite"', 'gpu = "H100-SXM"'))(d)
        yield f"scenario's fabric file {what} | cost", cost, setup, \
            what in READABLE or what == "utf-16", None
    # outputs: a calibrate run whose -o cannot be written writes nothing
    for o in ["", " ", "{d}/adir", "{d}/no/out.toml", "/proc/out.toml", "{d}/out.csv",
              "{d}/link-loop.toml", *([] if os.geteuid() == 0 else ["{d}/ro/out.toml"])]:
        def setup(d: Path) -> None:
            _write("m.csv", CSV)(d)
            (d / "adir").mkdir()
            os.symlink(d / "link-loop.toml", d / "link-loop.toml")
            (d / "ro").mkdir()
            os.chmod(d / "ro", 0o500)
        yield f"calibrate -o {o!r}", ["calibrate", "--measurements", "{d}/m.csv", "-o", o], \
            setup, False, None


#: Commands with an output target (``{o}``), each run on input it takes: a target that
#: cannot be written is refused before anything is computed or written.
OUTPUTS = {
    "compare --out": ["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B",
                      "--max-batch", "8", "-q", "--no-plot", "--out", "{o}"],
    "availability --out": ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B",
                           "-q", "--trials", "5", "--no-plot", "--max-batch", "8", "--out",
                           "{o}"],
    "study lite-gpu --out": ["study", "lite-gpu", "--out", "{o}"],
    "costs -o": ["costs", "--fabric", "flat", "-o", "{o}.csv"],
    "topology export -o": ["topology", "export", "ring:n=4", "-o", "{o}.json"],
    "topology plot -o": ["topology", "plot", "ring:n=4", "-o", "{o}.png"],
    "collective --plot": ["collective", "all-reduce", "--fabric", "ring:n=8", "--size",
                          "1MiB", "--plot", "{o}.png"],
    "topology compare --plot": ["topology", "compare", "ring:n=8", "torus:dims=2x4",
                                "--plot", "{o}.png"],
}


def output_cases() -> Iterator[Case]:
    """Every output target that cannot be written, for each command that writes one."""
    targets = ["{d}/no/such/folder/x", "/proc/netmodel-x", "{d}/loop", "{d}/file/x",
               *([] if os.geteuid() == 0 else ["{d}/ro/x"])]
    folders = ["{d}/theirs", "{d}/file"]   # a folder of others' files; a file

    def setup(d: Path) -> None:
        (d / "theirs").mkdir()
        (d / "theirs" / "notes.txt").write_text("keep")
        (d / "file").write_text("keep")
        os.symlink(d / "loop", d / "loop")
        os.symlink(d / "loop.csv", d / "loop.csv")
        os.symlink(d / "loop.json", d / "loop.json")
        os.symlink(d / "loop.png", d / "loop.png")
        (d / "ro").mkdir()
        os.chmod(d / "ro", 0o500)

    for what, argv in OUTPUTS.items():
        for t in [*targets, *(folders if what.endswith("--out") else ())]:
            yield f"{what} {t!r}", [a.replace("{o}", t) for a in argv], setup, False, None


def snapshot(d: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for root, dirs, names in os.walk(d):
        for n in names + dirs:
            p = Path(root) / n
            try:
                st = p.lstat()
            except OSError:
                continue
            keep = not stat.S_ISDIR(st.st_mode)
            out[str(p.relative_to(d))] = (st.st_size if keep else 0, st.st_mtime_ns if keep
                                          else 0)
    return out


def _flags_of(args: list[str]) -> set[str]:
    """Every spelling of each option typed in ``args`` (``-o`` typed: ``-o`` and ``--out``)."""
    command: click.Command | None = cli
    words = list(args)
    while isinstance(command, click.Group) and words:
        command = command.commands.get(words[0]) or command.get_command(
            click.Context(command), words[0])
        words = words[1:]
    typed = {a.split("=")[0] for a in args if a.startswith("-")}
    out = set(typed)
    for p in getattr(command, "params", ()):
        if isinstance(p, click.Option) and typed & set(p.opts):
            out |= set(p.opts)
    return out


def names_what(args: list[str], line: str, folder: str) -> bool:
    """Whether a refusal names what gave the value: a flag typed (any of its spellings), a
    file of the case's folder (or its name), or an argument typed without a flag."""
    files = [a for a in args if a.startswith(folder)]
    positional = [a for a in args[2:] if not a.startswith("-")]
    return any(f in line for f in _flags_of(args)) or folder in line or \
        any(Path(f).name in line for f in files) or \
        any(a and f"'{a[:20]}" in line for a in positional)


def run_case(argv: list[str], setup, lenient: bool, env: dict | None = None,
             key: str | None = None, words: tuple[str, ...] = ()) -> tuple[str | None, float]:
    """None where the case got what bad input gets (lenient: or a result), else why not
    (``NAMES NOTHING | ...``: refused well, but naming no file, flag or argument; ``NAMES
    NO KEY | ...``: a value of the file's ``key`` refused without naming the key; ``NAMES NO
    WHY | ...``: a file broken as a whole refused with none of ``words``)."""
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
            r = CliRunner().invoke(cli, args, prog_name="netmodel", env=env)
        finally:
            os.chdir(old)
            for root, dirs, names in os.walk(d):
                for x in dirs + names:
                    p = Path(root) / x
                    if not p.is_symlink() and p.exists() and not stat.S_ISFIFO(
                            p.stat().st_mode):
                        os.chmod(p, 0o700)
        dt = time.perf_counter() - t0
        after = snapshot(d)
        lines = r.output.strip().splitlines()
        why = []
        if r.exit_code != 2 and not (lenient and r.exit_code in (0, 3)):
            why.append(f"exit {r.exit_code}")
        if "Traceback" in r.output or (r.exception is not None
                                       and not isinstance(r.exception, SystemExit)):
            why.append(f"exception {type(r.exception).__name__}: {str(r.exception)[:200]}")
        if r.exit_code == 2 and (len(lines) != 1 or not lines[0].startswith("error: ")):
            why.append(f"{len(lines)} lines")
        if after != before and (not lenient or r.exit_code == 2):
            why.append(f"wrote {sorted(set(after) ^ set(before)) or 'changed files'}")
        if r.exit_code == 2 and len(r.output) > 2000:
            why.append(f"error of {len(r.output)} characters")
        shown = lines[-1][:300] if lines else ""
        if not why and r.exit_code == 2 and not names_what(args, lines[0], str(d)):
            return f"NAMES NOTHING | {shown}", dt
        if not why and r.exit_code == 2 and key is not None and key not in lines[0]:
            return f"NAMES NO KEY | {shown}", dt
        if not why and r.exit_code == 2 and words and not any(w in lines[0] for w in words):
            return f"NAMES NO WHY | {shown}", dt
        return ("; ".join(why) + f" | {shown}" if why else None), dt


def main() -> int:
    args = round_options()
    tally = Tally("NAMES N", args.v)
    for name, argv, setup, lenient, env in (*cases(), *output_cases()):
        if args.k not in name:
            continue
        valued = re.match(r"\S+ (\w+)=", name)   # a value of the file's key: name the key
        attack = name.split(" | ")[0].split(" ", 1)[-1]
        attack = next((w for w in sorted(WHY, key=len, reverse=True) if attack.endswith(w)),
                      None)
        why, dt = run_case(argv, setup, lenient, env,
                           valued.group(1) if valued and not lenient else None,
                           WHY.get(attack, ()))
        tally.record(name, why, dt)
    return tally.report("refused naming no file, flag, argument or key")


if __name__ == "__main__":
    sys.exit(main())
