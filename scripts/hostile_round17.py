"""Hostile-input round 17: every option and argument of every command, read from click's
registry (so a command or option added later is attacked too), given each value that is
wrong for nearly any option (NaN, inf, negative, zero, 1e308, empty, blank, unicode, a
100,000-character string, a NUL), each path that is not a place to read or write (a
folder, a folder that cannot be written, a missing parent, a symbolic link loop) and each
file broken as files arrive broken (empty, binary, truncated TOML/JSON/CSV, a key twice,
a CSV with a byte-order mark), every other option at a value the command takes. Rounds 15
and 16 (scripts/hostile_round15.py, hostile_round16.py) aimed at chosen features and at
each file kind through the commands that read it; this one sweeps the whole surface.

What bad input gets (the project's promise): exit status 2, one line ``error: ...`` that
names the flag, argument or file and what is allowed, no traceback, nothing written (the
case's folder, where every output target of the command points, as it was). The checks are
round 16's (:func:`hostile_round16.run_case`), with one more: the line says what is
allowed (``NAMES NOT WHAT IS ALLOWED``, a warning). A value an option takes (zero for a
seed, 1e308 for an SLO) may give a result: those cases are listed in :data:`TAKES`, each
with why.

Usage: ``python scripts/hostile_round17.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL) and warning (WARN), the counts, and exit status 1 if any failed.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_round16  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from hostile_round16 import CSV, run_case  # noqa: E402
from hostile_tally import Tally, _alarm, round_options, within_a_minute  # noqa: E402

from netmodel.cli.help_format import commands_under  # noqa: E402
from netmodel.cli.main import cli  # noqa: E402

#: A command the whole round runs on input it takes: every option of it not attacked keeps
#: these values; ``{d}`` is the case's folder, where outputs go (and must not appear when
#: the command refuses).
BASE: dict[str, list[str]] = {
    "availability": ["--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--trials",
                     "5", "--no-plot", "--max-batch", "8", "--out", "{d}/out"],
    "blast-radius": ["--scenario", "h100-dgx", "--model", "Llama-3-8B", "--no-plot",
                     "--max-batch", "8", "--out", "{d}/out"],
    "calibrate": ["--measurements", "{d}/m.csv", "-o", "{d}/out.toml"],
    "collective": ["all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB"],
    "compare": ["--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
                "--no-plot", "-q", "--out", "{d}/out"],
    "cost": ["--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"],
    "costs": ["--fabric", "ring:n=8", "--sizes", "1MiB,2MiB", "--groups", "8", "-o",
              "{d}/c.csv"],
    "hardware": ["H100-SXM"],
    "infer": ["--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"],
    "models": ["Llama-3-8B"],
    "search": ["--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"],
    "serve": ["--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"],
    "study lite-gpu": ["--out", "{d}/out", "--models", "Llama-3-8B", "--gpus", "H100-SXM",
                       "--no-fabric", "--phases", "decode", "--networks", "ideal"],
    "sweep": ["--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8", "-q",
              "--no-plot", "--param", "cost.pue=1.1,1.2", "--out", "{d}/out"],
    "topology compare": ["ring:n=8", "torus:dims=2x4"],
    "topology export": ["ring:n=4", "-o", "{d}/f.json"],
    "topology list": [],
    "topology plot": ["ring:n=4", "-o", "{d}/f.png"],
    "topology show": ["ring:n=4"],
    "yield": ["--gpu", "H100-SXM"],
}

#: Options one of which the command takes: attacking one drops the others from the base.
EXCLUSIVE = [{"--scenario", "--fabric"}, {"--model", "--hf-config"}, {"--gpu", "--area"}]

#: Values wrong for nearly any option.
VALUES = {"nan": "nan", "inf": "inf", "-inf": "-inf", "negative": "-1", "zero": "0",
          "huge": "1e308", "empty": "", "blank": "  ", "unicode": "\u00e9\u202e\U0001f600",
          "fullwidth digit": "\uff18", "long": "x" * 100_000, "long digits": "9" * 100_000,
          "nul": "1\x002"}

TOML_GPU = '[gpu."Mine"]\nsms = 132\nbf16_dense_TFLOPs = 989\n'
#: Files broken as files arrive broken, by name (the suffix picks the reader).
FILES: dict[str, tuple[str, str | bytes]] = {
    "empty toml": ("f.toml", ""), "empty json": ("f.json", ""), "empty csv": ("f.csv", ""),
    "binary toml": ("f.toml", bytes(range(256)) * 4),
    "binary json": ("f.json", bytes(range(256)) * 4),
    "binary csv": ("f.csv", bytes(range(256)) * 4),
    "truncated toml": ("f.toml", TOML_GPU[:-9]),
    "truncated json": ("f.json", '{"gpu": {"Mine": {"sms": 13'),
    "truncated csv": ("f.csv", CSV[:len(CSV) // 2 + 7]),
    "bom csv": ("f.csv", "\ufeff" + CSV),   # well formed: a CSV reader takes it
    "key twice toml": ("f.toml", TOML_GPU + "sms = 144\n"),
    "key twice json": ("f.json", '{"gpu": {"Mine": {"sms": 132, "sms": 144}}}'),
    "truncated graphml": ("f.graphml", "<graphml><graph edgedefault='undirected'><node"),
}

#: Places that cannot be read or written (``{d}``: the case's folder, :func:`_setup`).
PLACES = {"a folder": "{d}/adir", "a folder named .toml": "{d}/adir.toml",
          "missing parent": "{d}/no/such/x.json", "symlink loop": "{d}/loop.json",
          "unwritable": "/proc/netmodel-x.json" if os.geteuid() == 0 else "{d}/ro/x.json"}

#: Values some options take, each with why: (commands, options, value names, why); ``*``
#: is every one. A result (exit 0, or 3 for an unmet target) is allowed there, or a
#: refusal: never a traceback, and nothing written on a refusal.
NAMES = ("nan", "inf", "-inf", "negative", "zero", "huge", "unicode", "fullwidth digit")
TAKES: list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str]] = [
    (("*",), ("--out",), (*NAMES, "a folder", "a folder named .toml"),
     "an output folder may have any name, and may exist (empty: nothing of others' there)"),
    (("calibrate", "costs", "topology export", "topology plot"), ("-o",), tuple(FILES),
     "an output file that exists is written over, whatever it held"),
    (("calibrate",), ("--name", "--engine", "--system"), ("*",),
     "a profile's name, engine and system are free text (one line, checked as its file's)"),
    (("topology plot",), ("--title",), ("*",), "a figure's title is free text"),
    (("calibrate",), ("--measurements",), ("bom csv",),
     "a byte-order mark before the header is read past (the profile fitted is the same)"),
    (("availability", "blast-radius"), ("--detection", "--warmup"), ("zero",),
     "failures detected, spares warmed at once: an ideal the model prices"),
    (("availability",), ("--spares", "--seed"), ("zero",), "no spares; seed 0 is a seed"),
    (("compare", "infer", "search", "serve", "sweep"), ("--mtp-tokens",), ("zero",),
     "no draft tokens: decoding without multi-token prediction"),
    (("infer", "search"), ("--reserve",), ("zero",), "no HBM held back for the runtime"),
    (("yield",), ("--critical-fraction", "--defect-density", "--wafer-price"), ("zero",),
     "every defect spared, a perfect process, a wafer given away: limits a curve reaches"),
    (("collective", "costs"), ("--max-transfers", "--max-rows"), ("huge",),
     "a cap on transfers routed or rows made: 1e308 is no cap (nothing is built from it)"),
]


def takes(path: str, label: str, what: str) -> bool:
    """Whether option (or argument) ``label`` of command ``path`` takes value ``what``."""
    return any(("*" in cs or path in cs) and label in opts and ("*" in ws or what in ws)
               for cs, opts, ws, _ in TAKES)


def _setup(d: Path) -> None:
    """Every case's folder: the measurements the base calibrate reads, a folder, a folder
    that cannot be written, a symbolic link loop."""
    (d / "m.csv").write_text(CSV)
    (d / "adir").mkdir()
    (d / "adir.toml").mkdir()
    (d / "ro").mkdir()
    os.chmod(d / "ro", 0o500)
    os.symlink(d / "loop.json", d / "loop.json")


def _with_file(name: str, data: str | bytes) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        _setup(d)
        p = d / name
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")
    return setup


def commands() -> Iterator[tuple[str, click.Command]]:
    """(path, command) of every command of the registry (groups left out)."""
    for path, command in commands_under(cli):
        if not isinstance(command, click.Group):
            yield " ".join(path), command


def _drop(argv: list[str], flags: set[str], command: click.Command) -> list[str]:
    """``argv`` without the options ``flags`` (any spelling) and their values."""
    spell = {o: set(p.opts) | set(p.secondary_opts) for p in command.params
             if isinstance(p, click.Option) for o in p.opts}
    every = set().union(*(spell.get(f, {f}) for f in flags)) if flags else set()
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in every:
            skip = True
        else:
            out.append(a)
    return out


def _argv(path: str, command: click.Command, param: click.Parameter, value: str
          ) -> list[str]:
    """The base argv of ``path`` with ``param`` given ``value`` (an argument: in its place;
    an option: replacing its base value, and the options it excludes dropped)."""
    base = list(BASE[path])
    if isinstance(param, click.Argument):
        args = [p for p in command.params if isinstance(p, click.Argument)]
        i = args.index(param)
        # the base's arguments come first, in order; a variadic one keeps its others
        if param.nargs == -1:
            return [*path.split(), value, *base]
        return [*path.split(), *base[:i], value, *base[i + 1:]]
    flag = param.opts[0]
    drop = {flag} | set().union(*(g - {flag} for g in EXCLUSIVE if flag in g))
    return [*path.split(), *_drop(base, drop, command), flag, value]


def cases() -> Iterator[tuple[str, list[str], Callable[[Path], None], bool, str]]:
    """(name, argv, setup, lenient, value) of every attack."""
    for path, command in commands():
        if path not in BASE:
            yield (f"{path} | no base (add it to BASE)", [*path.split(), "--help"], _setup,
                   False, "")
            continue
        for param in command.params:
            if isinstance(param, click.Option) and (param.is_flag or param.count or
                                                   param.name == "help"):
                continue
            label = param.opts[0] if isinstance(param, click.Option) else param.name.upper()
            for what, value in VALUES.items():
                yield (f"{path} {label} {what}", _argv(path, command, param, value), _setup,
                       takes(path, label, what), value)
            for what, place in PLACES.items():
                yield (f"{path} {label} {what}", _argv(path, command, param, place), _setup,
                       takes(path, label, what), place)
            for what, (name, data) in FILES.items():
                yield (f"{path} {label} {what}", _argv(path, command, param, "{d}/" + name),
                       _with_file(name, data), takes(path, label, what), "{d}/" + name)


#: Words that say what is allowed (one of them in every refusal).
ALLOWED = re.compile(r"must|allowed|known|expected|takes|give |needs|one of|choose|"
                     r"only|not a|between|at least|at most|>=|<=|> |< |is not|no such|"
                     r"does not|cannot|invalid|should|instead|limit|unknown|missing|"
                     r"requires|refused|written with|exceeds|outside|too large|too long|"
                     r"malformed|declares|holds|range|empty|loops|drop|larger than|above|below|"
                     r"deeper than|merge|lacks",
                     re.I)


class _Recording(CliRunner):
    """round 16's runner, keeping the last result (its line is read for what is allowed)."""
    last = None

    def invoke(self, *args, **kwargs):
        _Recording.last = None
        _Recording.last = result = super().invoke(*args, **kwargs)
        return result


hostile_round16.CliRunner = _Recording


def _quotes(line: str, value: str) -> bool:
    """Whether ``line`` names ``value`` (as typed, or quoted as a refusal quotes it: its
    repr, a long one cut to its first characters)."""
    if "{d}" in value:
        return False
    return (len(value.strip()) > 2 and value in line) or repr(value)[:30] in line


def main() -> int:
    args = round_options()
    signal.signal(signal.SIGALRM, _alarm)
    tally = Tally("NAMES N", args.v)
    for name, argv, setup, lenient, value in cases():
        if args.k not in name:
            continue
        why, dt = within_a_minute(run_case, argv, setup, lenient)
        said = _Recording.last
        if why is not None and why.startswith("NAMES NOTHING") and _quotes(said.output, value):
            why = None   # an argument's value, quoted: round 16 looks at a subcommand's only
        if why is None and said is not None and said.exit_code == 2 and \
                not ALLOWED.search(said.output):
            why = f"NAMES NOT WHAT IS ALLOWED | {said.output.strip()[:300]}"
        tally.record(name, why, dt)
    return tally.report("refused naming no flag, file or argument, or not what is allowed")


if __name__ == "__main__":
    sys.exit(main())
