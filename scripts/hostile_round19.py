"""Hostile-input round 19, on command-line values and the environment a command runs in.
Rounds 15-18 (scripts/hostile_round15.py .. 18.py) aimed at features, files and each
option's grossly wrong values; this one gives every option and argument of every command
(click's registry, walked as round 17 walks it: a command or option added later is
attacked too; files to read and free text left to rounds 16-18) the values at a number's,
a size's, a list's and a name's edges: 0, -0, -1, nan, NaN, inf, -inf, 1e308, 1e309,
1e-320, '1_000', '0x10', ' 5 ', '', '5,', ',5', an item twice, an Arabic-Indic and a
fullwidth digit, sizes ('64MiB', '64 MiB', '64mib', '-1KiB', '1e400B', '0B', '1.5B'), its
value in the wrong case, bidirectional and other control characters; and every output
(-o, --out, --plot) onto a folder that exists, under a parent that does not, onto
/dev/null. In process (click's CliRunner), each in round 16's folder and checks
(:func:`hostile_round16.run_case`).

Then it runs every command's base command line (round 17's) where the environment is
hostile: in process with COLUMNS=0, COLUMNS=5 and TERM=dumb NO_COLOR=1 (its --help too),
in a working folder nobody may write (/proc) and in one deleted under it; as a user runs it
(``python -m netmodel``, a child process) under LC_ALL=C without Python's UTF-8 mode (files,
stdout and stderr ASCII; LANG=C alone Python coerces to C.UTF-8) and a Latin-1 stdout,
with stdout closed (``>&-``), to a reader that left (a pipe closed before the first write;
and ``| head -1`` itself for the longest outputs), onto /dev/full, and drawing with
HOME=/dev/null. And every ``NETMODEL_*`` setting each command reads (found by running it,
:func:`settings_read`) given every value above (a value taken in process is tried in a new
process: a fabric built once is not checked against the limits again). The progress bar
on a narrow terminal is tests/netmodel/test_progress.py's (it shows after 2 s of work).

What each gets (the project's promise): exit 0 (or 3, an unmet target) and sane output (no
traceback, nothing on stderr, no nan, no control character or bidirectional control printed
raw, stdout in the locale's encoding or UTF-8), or exit 2 with one line ``error: ...``
naming the flag or the value and what is allowed, nothing written. A value that is no
number, size or name anywhere (nan, 1e309, '1_000', '0x10', a digit of another script, a
control character) is refused (but :data:`TAKES19`); one a command may take (0, ' 5 ', a
name in another case) may give a result. A stdout that cannot be written (closed,
/dev/full) is exit 1 and one line on stderr once the command is done
(netmodel.cli.main.main); a reader that left is no failure.

Usage: ``python scripts/hostile_round19.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL) and warning (WARN), the counts, and exit status 1 if any failed. In a tree being
edited, ``--workers`` warns that Dask's workers run other code than the process (they
import the tree as it is now): that check doing its work; run it on a clean checkout
(``git archive HEAD``) for a count that is the code's alone.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

# round 17 puts its _Recording runner in round 16's place at import: its .last is the last
# case's result
from hostile_round16 import run_case  # noqa: E402
from hostile_round17 import ALLOWED, BASE, TAKES, _argv, _quotes, _Recording, _setup, commands  # noqa: E402
from hostile_tally import Tally, _alarm, round_options, within_a_minute  # noqa: E402

from compute.errors import BIDI_CONTROLS  # noqa: E402
from netmodel.cli.main import cli  # noqa: E402
from netmodel.cli.options import InputPath, OutputFolder  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: Child processes run at once (the environment's cases), beside the in-process cases.
CHILDREN = 3

#: Values at a number's, a size's and a text's edges, by name.
VALUES = {"0": "0", "-0": "-0", "-1": "-1", "nan": "nan", "NaN": "NaN", "inf": "inf",
          "-inf": "-inf", "1e308": "1e308", "1e309": "1e309", "1e-320": "1e-320",
          "1_000": "1_000", "0x10": "0x10", "' 5 '": " 5 ", "''": "", "'5,'": "5,",
          "',5'": ",5", "arabic-indic 3": "\u0663", "fullwidth 5": "\uff15",
          "64MiB": "64MiB", "'64 MiB'": "64 MiB", "64mib": "64mib", "-1KiB": "-1KiB",
          "1e400B": "1e400B", "0B": "0B", "1.5B": "1.5B",
          "right-to-left override": "5\u202e1", "escape": "\x1b[2J5", "newline": "5\n6",
          "tab": "\t5", "nul": "5\x00"}
#: Values some options take, each with why: (commands, options, value names, why).
TAKES19: list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str]] = [
    (("collective", "costs"), ("--max-transfers", "--max-rows"), ("1e309",),
     "a cap that is a whole number (10**309 is one, if past a float's range): as 1e308, no "
     "cap (round 17's TAKES)"),
]
#: Options whose number a run takes starts that many processes: the values that are a 5
#: taken (' 5 ', a tab before it) give them this number instead (five Dask workers take
#: 10-40 s to start; one tries the same blank around a number).
FEWER = {"--workers": "1"}
#: Values that are no number, size or name anywhere: refused by every option not free text
#: (but :data:`TAKES19`).
NEVER = {"nan", "NaN", "1e309", "1_000", "0x10", "''", "arabic-indic 3", "fullwidth 5",
         "1e400B", "right-to-left override", "escape", "newline", "nul"}
#: Options whose value is free text (round 17's :data:`TAKES` of every value) or a place to
#: read (rounds 16-18 attack those): not attacked by value here.
FREE = {(c, o) for cs, opts, ws, _ in TAKES if ws == ("*",) for c in cs for o in opts}
#: Parameter names of the outputs (attacked in :func:`output_cases`).
OUTPUTS = {"out", "output", "plot", "o"}

#: Characters an exit-0 output may not hold raw: C0 controls but newline and tab, DEL, the
#: bidirectional controls.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f" + "".join(sorted(BIDI_CONTROLS)) + "]")
NAN = re.compile(r"\bnan\b", re.I)
#: Words that say what is allowed: round 17's, and the number grammar's (its rule, or the
#: number to write instead).
SAYS_ALLOWED = re.compile(ALLOWED.pattern + r"|a number is|write |whole number", re.I)


def _kind(path: str, param: click.Parameter) -> str:
    """What ``param`` is for this round: 'output', 'skip' (a flag, help, a file to read,
    free text) or 'value'."""
    if isinstance(param, click.Option) and (param.is_flag or param.count or
                                            param.name == "help"):
        return "skip"
    if isinstance(param.type, OutputFolder) or param.name in OUTPUTS:
        return "output"
    label = param.opts[0] if isinstance(param, click.Option) else param.name.upper()
    if isinstance(param.type, (InputPath, click.Path)) or (path, label) in FREE:
        return "skip"
    return "value"


def _base_value(path: str, command: click.Command, param: click.Parameter) -> str | None:
    """The value ``param`` has in the base command line of ``path``, else its default as
    text (None: neither)."""
    base = BASE[path]
    if isinstance(param, click.Option):
        for i, a in enumerate(base[:-1]):
            if a in param.opts:
                return base[i + 1]
    else:
        args = [p for p in command.params if isinstance(p, click.Argument)]
        i = args.index(param)
        if i < len(base) and not base[i].startswith("-"):
            return base[i]
    d = param.default
    return d if isinstance(d, str) and d else None


def _choices(param: click.Parameter) -> list[str]:
    t = param.type
    return list(t.choices) if isinstance(t, click.Choice) else []


def value_cases() -> Iterator[tuple[str, list[str], bool, str]]:
    """(name, argv, must refuse, value) of every value attack: :data:`VALUES`, and where
    the option has a value to start from, it in the wrong case and, for a list, twice."""
    for path, command in commands():
        if path not in BASE:
            continue
        for param in command.params:
            if _kind(path, param) != "value":
                continue
            label = param.opts[0] if isinstance(param, click.Option) else param.name.upper()
            values = dict(VALUES)
            base = _base_value(path, command, param) or next(iter(_choices(param)), None)
            if base and base.swapcase() != base:
                values["wrong case"] = base.swapcase()
            if base and ("LIST" in str(param.metavar or "") or "," in base):
                first = (base or "").split(",")[0]
                values["an item twice"] = f"{first},{first}"
            for what, value in values.items():
                if label in FEWER and value.strip() == "5":
                    value = value.replace("5", FEWER[label])
                takes = any(path in cs and label in opts and what in ws
                            for cs, opts, ws, _ in TAKES19)
                yield f"{path} {label} {what}", _argv(path, command, param, value), \
                    what in NEVER and not takes, value


def _names(line: str, value: str) -> bool:
    """Whether ``line`` names ``value``: quoted as round 17 sees it, or as read (a blank
    around it dropped: ``' 5 '`` is 5, ``TP degree 5``)."""
    word = value.strip()
    return _quotes(line, value) or bool(word) and (
        repr(word) in line or re.search(rf"(?<![\w.]){re.escape(word)}(?![\w.])", line)
        is not None)


def judge_value(argv: list[str], refuse: bool, value: str) -> tuple[str | None, float]:
    """None where the case got exit 0 (or 3) and sane output, or exit 2 and one line
    naming the flag or value and what is allowed, nothing written; else why not."""
    why, dt = run_case(argv, _setup, True)
    said = _Recording.last
    if said is None:
        return why, dt
    if why is not None and why.startswith("NAMES NOTHING") and _names(said.output, value):
        why = None
    if why is None and said.exit_code == 2 and not SAYS_ALLOWED.search(said.output):
        why = f"NAMES NOT WHAT IS ALLOWED | {said.output.strip()[:300]}"
    if why is None and said.exit_code in (0, 3):
        if refuse:
            why = f"took {value!r} (exit {said.exit_code})"
        elif RAW.search(said.output):
            why = f"printed a control character raw | {ascii(said.output[:200])}"
        elif NAN.search(said.output):
            line = next(ln for ln in said.output.splitlines() if NAN.search(ln))
            why = f"printed nan | {line.strip()[:200]}"
    elif why is not None and said.exit_code == 2 and RAW.search(said.output):
        why = f"printed a control character raw | {ascii(said.output[:200])}"
    return why, dt


# ---------------------------------------------------------------- the environment

#: Environments every command's base command line runs in, as a child process: (variables
#: set, variables removed, the encoding its stdout is read in).
CHILD_ENVIRONMENTS: dict[str, tuple[dict[str, str], tuple[str, ...], str]] = {
    # the C locale without Python's UTF-8 mode: files, stdout and stderr in ASCII (click
    # writes UTF-8 where a stream's encoding is ASCII: either is sane). LANG=C alone is
    # Python's C.UTF-8 (PEP 538 coerces it): a run as any other
    "LC_ALL=C": ({"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
                 ("PYTHONIOENCODING",), "ascii"),
    "latin-1 stdout": ({"PYTHONIOENCODING": "latin-1"}, (), "latin-1"),
}
#: Environments every command runs in (its base command line and --help), in process: the
#: variables set.
ENVIRONMENTS = {"COLUMNS=0": {"COLUMNS": "0"}, "COLUMNS=5": {"COLUMNS": "5", "LINES": "2"},
                "TERM=dumb NO_COLOR=1": {"TERM": "dumb", "NO_COLOR": "1"}}
#: Where stdout goes, other than a pipe read to its end: the exit status and the one line
#: on stderr of a command that prints (None: as if stdout had been read to its end).
STDOUTS = {
    "stdout closed": (1, "error: cannot write the output to standard output: "),
    "a reader that left": (None, ""),
    "stdout on /dev/full": (1, "error: cannot write the output to standard output: No "
                               "space left on device"),
}
#: A folder nobody may write, root included (the round may run as root).
READ_ONLY = "/proc"
#: A HOME nothing can be made in, by root either (a daemon's, a container's).
UNWRITABLE_HOME = "/dev/null"
#: stderr lines a run may print and stay sane (the study's own timing).
DIAGNOSTIC = ("time per part: ",)


def _child_env(put: dict[str, str], drop: tuple[str, ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env | put


def child(argv: list[str], d: Path, env: dict[str, str], stdout: str = "pipe",
          cwd: str | None = None) -> tuple[int, bytes, bytes]:
    """Run ``python -m netmodel ARGV`` (``{d}`` in argv: the folder ``d``) with ``env`` in
    ``cwd`` (default ``d``; 'deleted': a folder removed before netmodel starts). stdout:
    'pipe' (read to its end), 'stdout closed', 'a reader that left' (a pipe whose reading
    end is closed before the child starts: its first write fails, as ``| head -1``'s does
    once head has read its line), 'stdout on /dev/full'. Exit status, stdout, stderr."""
    args = [a.replace("{d}", str(d)) for a in argv]
    cmd = [sys.executable, "-m", "netmodel", *args]
    kw: dict = {"stdout": subprocess.PIPE}
    opened: list = []
    if stdout == "stdout closed":
        cmd = ["sh", "-c", 'exec "$@" >&-', "sh", *cmd]
    elif stdout == "a reader that left":
        r, w = os.pipe()
        os.close(r)
        kw["stdout"] = w
        opened.append(w)
    elif stdout == "stdout on /dev/full":
        kw["stdout"] = os.open("/dev/full", os.O_WRONLY)
        opened.append(kw["stdout"])
    if cwd == "deleted":
        (d / "gone").mkdir()
        cmd = ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh",
               str(d / "gone"), *cmd]
        cwd = None
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                           cwd=cwd or d, timeout=60, check=False, **kw)
    finally:
        for fd in opened:
            os.close(fd)
    return r.returncode, r.stdout or b"", r.stderr


def _said(err: bytes | str) -> list[str]:
    """stderr's lines, but the diagnostics a run may print."""
    text = err.decode("utf-8", "replace") if isinstance(err, bytes) else err
    return [ln for ln in text.strip().splitlines() if ln and not ln.startswith(DIAGNOSTIC)]


def _sane(rc: int, out: bytes | str, err: bytes | str, encoding: str = "utf-8",
          refusal: bool = False) -> str | None:
    """Why a run is not exit 0 (or 3) with sane output: stdout in ``encoding`` (or
    UTF-8), no traceback, nothing on stderr, no control character, no nan. ``refusal``:
    exit 2 and one line ``error: ...`` is sane too."""
    raw = out if isinstance(out, bytes) else out.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "replace")
    said = _said(err)
    if "Traceback" in text or any("Traceback" in ln for ln in said):
        return f"traceback | {(said or text.splitlines())[-1][:200]}"
    if refusal and rc == 2:
        lines = [ln for ln in (text.strip().splitlines() + said) if ln]
        if len(lines) != 1 or not lines[0].startswith("error: "):
            return f"exit 2, {len(lines)} lines | {ascii(' / '.join(lines))[:200]}"
        return None
    if rc not in (0, 3):
        return f"exit {rc} | {(said or text.splitlines() or [''])[-1][:200]}"
    for enc in dict.fromkeys((encoding, "utf-8")):
        try:
            raw.decode(enc)
            break
        except UnicodeDecodeError as exc:
            why = f"stdout neither {encoding} nor UTF-8 | {exc}"
    else:
        return why
    if RAW.search(text):
        return f"printed a control character raw | {ascii(text[:200])}"
    if NAN.search(text):
        return f"printed nan | {ascii(text[:200])}"
    if said:
        return f"said on stderr | {said[0][:200]}"
    return None


def _runnable() -> Iterator[tuple[str, click.Command, list[str]]]:
    """(path, command, base argv) of every command of the registry (round 17's base)."""
    for path, command in commands():
        if path in BASE:
            yield path, command, [*path.split(), *BASE[path]]


def _outputs_here(path: str, command: click.Command) -> list[str]:
    """The base command line of ``path``, its outputs named relative to the working
    folder (its inputs still in the case's folder)."""
    base = BASE[path]
    flags = {o for p in command.params if _kind(path, p) == "output"
             for o in (*p.opts, *p.secondary_opts)}
    out = [a.replace("{d}/", "") if i and base[i - 1] in flags else a
           for i, a in enumerate(base)]
    return [*path.split(), *out]


def _drawing(path: str, command: click.Command) -> list[str] | None:
    """The base command line of ``path`` that draws a figure (--no-plot dropped, --plot
    given), or None where the command draws none."""
    names = {p.name for p in command.params}
    base = [a for a in BASE[path] if a != "--no-plot"]
    if "plot" in names:
        base += ["--plot", "{d}/figure.png"]
    elif "no_plot" not in names and path != "topology plot":
        return None
    return [*path.split(), *base]


def _in_process(argv: list[str], env: dict[str, str], cwd: str | None = None
                ) -> Callable[[Path], str | None]:
    """A case run in process, in the case's folder (``cwd`` 'read-only': a folder nobody
    may write, root included; 'deleted': a folder removed once the run is in it)."""
    def run(d: Path) -> str | None:
        old = os.getcwd()
        if cwd == "deleted":
            (d / "gone").mkdir()
            os.chdir(d / "gone")
            os.rmdir(d / "gone")
        else:
            os.chdir(READ_ONLY if cwd == "read-only" else d)
        try:
            r = CliRunner().invoke(cli, [a.replace("{d}", str(d)) for a in argv],
                                   prog_name="netmodel", env=env)
        finally:
            os.chdir(old)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            return f"exception {type(r.exception).__name__}: {str(r.exception)[:200]}"
        return _sane(r.exit_code, r.stdout, r.stderr, refusal=cwd is not None)
    return run


def environment_cases() -> Iterator[tuple[str, Callable[[Path], str | None], bool]]:
    """(name, run(folder) -> why not, in a child process) of every command in every
    environment, with every stdout, in a working folder it cannot write or that is gone,
    and drawing with a HOME it cannot write."""
    for path, command, argv in _runnable():
        for what, env in ENVIRONMENTS.items():
            yield f"{path} | {what}", _in_process(argv, env), False
            yield f"{path} --help | {what}", _in_process([*path.split(), "--help"], env), \
                False
        for what, (put, drop, enc) in CHILD_ENVIRONMENTS.items():
            def run(d: Path, argv=argv, put=put, drop=drop, enc=enc) -> str | None:
                return _sane(*child(argv, d, _child_env(put, drop)), encoding=enc)
            yield f"{path} | {what}", run, True
        # a refusal quoting a character the encoding cannot hold: one line, escaped
        param = next((p for p in command.params if _kind(path, p) == "value"), None)
        if param is not None:
            wrong = _argv(path, command, param, "\u0663\u2192")
            for what, (put, drop, _enc) in CHILD_ENVIRONMENTS.items():
                def refused(d: Path, wrong=wrong, put=put, drop=drop) -> str | None:
                    rc, out, err = child(wrong, d, _child_env(put, drop))
                    return _sane(rc, out, err, refusal=True) or (
                        None if rc == 2 else f"took it, exit {rc}")
                yield f"{path} refusing U+0663 U+2192 | {what}", refused, True
        for what, (status, line) in STDOUTS.items():
            def run(d: Path, argv=argv, what=what, status=status, line=line) -> str | None:
                rc, _, err = child(argv, d, _child_env({}), stdout=what)
                said = _said(err)
                if any("Traceback" in ln for ln in said):
                    return f"traceback | {said[-1][:200]}"
                if status is None:   # a reader that left: as if it had read it all
                    return None if rc in (0, 3) and not said else \
                        f"exit {rc} | {' / '.join(said)[:200]}"
                if rc != status or len(said) != 1 or not said[0].startswith(line):
                    return f"exit {rc}, {len(said)} lines | {' / '.join(said)[:200]}"
                return None
            yield f"{path} | {what}", run, True
        here = _outputs_here(path, command)
        for cwd in ("read-only", "deleted"):
            yield f"{path} | cwd {cwd}", _in_process(here, {}, cwd), False
        drawing = _drawing(path, command)
        if drawing is not None:
            def run(d: Path, drawing=drawing) -> str | None:
                env = _child_env({"HOME": UNWRITABLE_HOME}, ("MPLCONFIGDIR", "XDG_CONFIG_HOME",
                                                        "XDG_CACHE_HOME"))
                return _sane(*child(drawing, d, env))
            yield f"{path} | HOME unwritable", run, True


def _big_output() -> Iterator[tuple[str, Callable[[Path], str | None], bool]]:
    """``netmodel ... | head -1`` as a shell runs it, for the commands that print most."""
    for path in ("topology list", "models", "hardware"):
        def run(d: Path, path=path) -> str | None:
            r = subprocess.run(["sh", "-c", '"$@" | head -1', "sh", sys.executable, "-m",
                                "netmodel", *path.split()], capture_output=True, cwd=d,
                               env=_child_env({}), timeout=60, check=False)
            lines = r.stdout.decode("utf-8", "replace").splitlines()
            if r.returncode != 0 or r.stderr or len(lines) != 1:
                return f"exit {r.returncode}, {len(lines)} lines | {r.stderr[-200:]!r}"
            return None
        yield f"{path} | head -1", run, True


def output_cases() -> Iterator[tuple[str, list[str], bool, str]]:
    """(name, argv, must refuse, value) of every output (-o, --out, --plot) onto a folder
    that exists, under a parent that does not, onto /dev/null."""
    for path, command in commands():
        if path not in BASE:
            continue
        for param in command.params:
            if _kind(path, param) != "output":
                continue
            for what, place in {"an existing folder": "{d}/adir",
                                "a missing parent": "{d}/no/such/out",
                                "/dev/null": "/dev/null"}.items():
                yield f"{path} {param.opts[0]} onto {what}", \
                    _argv(path, command, param, place), False, place


class _Environ(Mapping):
    """``os.environ`` as a module sees it, each variable it asks for kept in ``seen``."""

    def __init__(self, seen: set[str]) -> None:
        self.seen = seen

    def __getitem__(self, key: str) -> str:
        self.seen.add(key)
        return os.environ[key]

    def get(self, key: str, default=None):
        self.seen.add(key)
        return os.environ.get(key, default)

    def __iter__(self):
        return iter(os.environ)

    def __len__(self) -> int:
        return len(os.environ)


class _WatchedOs(types.ModuleType):
    """The ``os`` module, but its ``environ`` is an :class:`_Environ`."""

    def __init__(self, seen: set[str]) -> None:
        super().__init__("os")
        self.__dict__["environ"] = _Environ(seen)

    def __getattr__(self, name: str):
        return getattr(os, name)


def settings_read() -> dict[str, set[str]]:
    """The ``NETMODEL_*`` variables each command's base command line reads (every module
    of netmodel's packages imported so far made to see a watched ``os.environ``): the
    settings (compute.limits.setting's), found by running, not listed."""
    seen: set[str] = set()
    watched = _WatchedOs(seen)
    mods: list[types.ModuleType] = []

    def watch() -> int:
        """Watch the modules imported since; how many that was."""
        new = [m for name, m in list(sys.modules.items())
               if name.split(".")[0] in ("compute", "topologies", "netmodel")
               and getattr(m, "os", None) is os]
        for m in new:
            m.os = watched
        mods.extend(new)
        return len(new)

    out = {}
    try:
        watch()
        for path, _, argv in _runnable():
            seen.clear()
            run_case(argv, _setup, True)
            while watch():   # modules the run imported, unwatched while it ran: again
                seen.clear()
                run_case(argv, _setup, True)
            out[path] = {v for v in seen if v.startswith("NETMODEL_")}
    finally:
        for m in mods:
            m.os = os
    return out


def setting_cases(read: dict[str, set[str]]) -> Iterator[tuple[str, list[str], str, str,
                                                              bool]]:
    """(name, argv, variable, value, must refuse) of every setting each command reads,
    given every value of :data:`VALUES`."""
    for path, _, argv in _runnable():
        for var in sorted(read.get(path, ())):
            for what, value in VALUES.items():
                if "\x00" not in value:   # no environment holds a NUL (execve ends there)
                    yield f"{path} | {var}={what}", argv, var, value, what in NEVER


def _took_in_child(argv: list[str], var: str, value: str) -> str | None:
    """Why a setting's value taken in process is taken by a new process too (None: there
    it is refused in one line naming ``var``): a process keeps what it built (a fabric
    built once is not checked against the limits again), so a value read only on a build
    is tried where nothing was built before."""
    with tempfile.TemporaryDirectory() as t:
        d = Path(t)
        _setup(d)
        rc, out, err = child(argv, d, _child_env({var: value}))
    said = _said(err)
    if rc == 2 and len(said) == 1 and var in said[0] and not out:
        return None
    return f"took {var}={value!r} (exit {rc}) | {' / '.join(said)[:200]}"


def judge_setting(argv: list[str], var: str, value: str, refuse: bool
                  ) -> tuple[str | None, float]:
    """As :func:`judge_value`, the value in environment variable ``var``: a refusal names
    the variable."""
    why, dt = run_case(argv, _setup, True, {var: value})
    said = _Recording.last
    if said is None:
        return why, dt
    if why is not None and why.startswith("NAMES NOTHING") and var in said.output:
        why = None
    if why is None and said.exit_code == 2 and var not in said.output:
        why = f"NAMES NOTHING | {said.output.strip()[:300]}"
    if why is None and said.exit_code == 2 and not SAYS_ALLOWED.search(said.output):
        why = f"NAMES NOT WHAT IS ALLOWED | {said.output.strip()[:300]}"
    if why is None and said.exit_code in (0, 3) and refuse and value.strip():
        why = _took_in_child(argv, var, value)
    elif why is None and said.exit_code in (0, 3) and RAW.search(said.output):
        why = f"printed a control character raw | {ascii(said.output[:200])}"
    return why, dt


def run_child_case(run: Callable[[Path], str | None]) -> tuple[str | None, float]:
    with tempfile.TemporaryDirectory() as t:
        d = Path(t)
        _setup(d)
        t0 = time.perf_counter()
        try:
            why = run(d)
        except subprocess.TimeoutExpired:
            why = "over 60 s"
        return why, time.perf_counter() - t0


def main() -> int:
    args = round_options()
    signal.signal(signal.SIGALRM, _alarm)
    tally = Tally("NAMES N", args.v)
    every = [c for c in (*environment_cases(), *_big_output()) if args.k in c[0]]
    here = [c for c in every if not c[2]]
    pool = ThreadPoolExecutor(CHILDREN)   # child processes, while the values run here
    names = [name for name, _, away in every if away]
    futures = [pool.submit(run_child_case, run) for _, run, away in every if away]
    for name, argv, refuse, value in (*value_cases(), *output_cases()):
        if args.k not in name:
            continue
        why, dt = within_a_minute(judge_value, argv, refuse, value)
        tally.record(name, why, dt)
    for name, (why, dt) in zip(names, (f.result() for f in futures), strict=True):
        tally.record(name, why, dt)
    for name, run, _ in here:
        tally.record(name, *run_child_case(run))
    read = settings_read() if "=" in args.k or not args.k or "NETMODEL" in args.k else {}
    for name, argv, var, value, refuse in setting_cases(read):
        if args.k in name:
            tally.record(name, *judge_setting(argv, var, value, refuse))
    return tally.report("refused naming no flag or value, or not what is allowed")


if __name__ == "__main__":
    sys.exit(main())
