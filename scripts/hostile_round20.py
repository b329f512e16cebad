"""Hostile-input round 20, on what happens around a command that writes: it is stopped, it
races another, it runs out of room. Rounds 15-19 (scripts/hostile_round15.py .. 19.py)
aimed at bad values, files and environments; this one runs each command that writes an
output (``study lite-gpu --out``, ``compare --out``, ``sweep --out``, ``availability
--out``, ``costs -o``, ``topology export -o``, ``calibrate -o``: round 17's base command
lines, :data:`hostile_round17.BASE`, and the three folder writers with their figures too)
as a user runs it (``python -m netmodel``, a child process), and:

* **interrupts** it: SIGINT (Ctrl-C) and SIGTERM (a scheduler, ``kill``) at delays spread
  over a whole run's time, into a new output and over an earlier one; and at fixed points
  of the write, by a child that sends the signal to itself there (:data:`POINTS`: the
  files staged, the staging folder complete, the new folder just put in place);
* **races** two runs writing the same output with different arguments: started at once,
  and held at a barrier just before each puts its output in place (:data:`RACED`), so
  both find no folder there and both rename;
* **starves** it of room: every output onto a 64 KiB tmpfs (root only; else skipped,
  saying why) and under RLIMIT_FSIZE (anyone); the largest ``--cluster-gpus`` and
  ``--trials`` under RLIMIT_AS;
* asks **refusals of the newest options**: ``infer``/``search --two-batch-overlap`` on an
  MoE model under attention DP with a decode batch under 2 x attention DP, and
  ``collective``/``costs`` values the library refuses: each line names the flag, or the
  value typed (round 16's :func:`hostile_round16.names_what`).

What each gets (the project's promise, docs/units-and-errors.md): an interrupted command
prints no traceback, one line ``interrupted by SIGINT ...`` (``SIGTERM``), exit status
130 (143), as a shell reports a process the signal killed; its output is absent, the
earlier output as it was, or whole as a complete run writes it (the same files, each the
bytes a complete run writes and its manifest records), never a mix, and nothing is left
beside it (no ``.netmodel-staging-``, ``-retired-`` folder nor ``.tmp`` file). A signal
that comes after the work may find the command done: exit 0 and its whole output, or the
process killed by the signal, its output whole. Two runs at once: both exit 0, the output
is one run's whole output. An output with no room: exit status 1 and one line ``error:
--out 'DIR': cannot write ...`` (nothing in the command line was wrong), nothing written.

Usage: ``python scripts/hostile_round20.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. A few minutes on two cores (each case
a child process of a second or more).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round16 import names_what  # noqa: E402
from hostile_round17 import BASE, _setup  # noqa: E402
from hostile_round19 import _child_env, _said  # noqa: E402
from hostile_tally import Tally, _alarm, round_options, within_a_minute  # noqa: E402

from compute.output_paths import MANIFEST  # noqa: E402

#: The commands that write an output: (name, argv, the output's path under ``{d}``).
#: Round 17's base lines; the folder writers also with their figures (written by forked
#: worker processes, the longest writes).
WRITERS: dict[str, tuple[list[str], str]] = {
    **{path: ([*path.split(), *BASE[path]], target) for path, target in (
        ("study lite-gpu", "out"), ("compare", "out"), ("sweep", "out"),
        ("availability", "out"), ("costs", "c.csv"), ("topology export", "f.json"),
        ("calibrate", "out.toml"))},
    **{f"{path} +figures": ([*path.split(), *(a for a in BASE[path] if a != "--no-plot")],
                            "out") for path in ("compare", "sweep", "availability")},
}

#: The same commands with one value changed (another output), for the races: the word
#: after which it comes (the command's last word: its argument), and the new value.
OTHER: dict[str, tuple[str, str]] = {
    "compare": ("--max-batch", "16"),
    "sweep": ("--param", "cost.pue=1.3,1.4"),
    "costs": ("--sizes", "4MiB"),
    "topology export": ("export", "ring:n=6"),
    "study lite-gpu": ("--phases", "prefill"),
}


def other(path: str) -> list[str]:
    """``path``'s command line with :data:`OTHER`'s value in place of its own."""
    argv = list(WRITERS[path][0])
    after, value = OTHER[path]
    argv[argv.index(after) + 1] = value
    return argv

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
#: Exit status of a command a signal stopped (netmodel.cli.interrupt.INTERRUPTED).
STOPPED = {"SIGINT": 130, "SIGTERM": 143}
#: Shares of a complete run's time at which a timed signal is sent.
SHARES = (0.1, 0.3, 0.5, 0.7, 0.85, 0.95)

#: A child that runs netmodel with one function of compute.outputs wrapped (HOOK_POINT):
#: at that point it sends itself HOOK_SIGNAL (delivered before os.kill returns), or, with
#: HOOK_BARRIER, waits until HOOK_PEERS processes reached the point (a race made certain).
HOOK = r"""
import os, sys, time
import compute.outputs as o
point, sig = os.environ["HOOK_POINT"], os.environ.get("HOOK_SIGNAL")
barrier = os.environ.get("HOOK_BARRIER")
real = getattr(o, point)
def hooked(*args, **kwargs):
    if barrier:
        open(os.path.join(barrier, str(os.getpid())), "w").close()
        end = time.monotonic() + 20
        while len(os.listdir(barrier)) < int(os.environ["HOOK_PEERS"]) and time.monotonic() < end:
            time.sleep(0.01)
    result = real(*args, **kwargs) if os.environ.get("HOOK_AFTER") else None
    if sig:
        os.kill(os.getpid(), int(sig))
    return result if os.environ.get("HOOK_AFTER") else real(*args, **kwargs)
setattr(o, point, hooked)
from netmodel.cli.main import main
main(sys.argv[1:])
"""

#: Points of the write where a hooked child stops itself: (function of compute.outputs,
#: whether the signal comes after it ran). ``_fix_mode``: the first file written (a file's
#: temporary, or the staging folder's files); ``_manifest``: the staging folder complete
#: but its manifest; ``_exchange``/``_put_in_place``: the new output just put in place
#: (over an earlier one; into a new folder).
POINTS = {"staged": ("_fix_mode", False), "manifest": ("_manifest", False),
          "exchanged": ("_exchange", True), "placed": ("_put_in_place", True)}

#: The point the raced runs wait at: each has found no output folder there and is about
#: to rename its staging folder to it.
RACED = "_put_in_place"

Case = tuple[str, Callable[[Path], str | None]]


def child(argv: list[str], d: Path, env: dict[str, str] | None = None,
          hooked: bool = False, limits: dict[int, int] | None = None) -> subprocess.Popen:
    """``python -m netmodel ARGV`` (``{d}``: the folder ``d``) started in ``d`` (hooked:
    :data:`HOOK`'s child, its point and signal in ``env``), under ``limits``
    (``{resource.RLIMIT_*: bytes}``), with SIGINT and SIGTERM at their defaults as a
    command a terminal starts has them: this script run as a background job of a shell
    without job control (``python scripts/hostile_round20.py &``) has SIGINT ignored, and
    its children would keep ignoring it, as netmodel leaves a signal it was started
    ignoring (netmodel.cli.interrupt.stop_on_signals)."""
    args = [a.replace("{d}", str(d)) for a in argv]
    cmd = [sys.executable, *(["-c", HOOK] if hooked else ["-m", "netmodel"]), *args]

    def start() -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        for which, value in (limits or {}).items():
            resource.setrlimit(which, (value, value))

    return subprocess.Popen(cmd, cwd=d, env=_child_env(env or {}), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=start)


def finish(p: subprocess.Popen) -> tuple[int, str]:
    """Exit status and stderr of ``p``, once it ends (at most 60 s)."""
    _, err = p.communicate(timeout=60)
    return p.returncode, err.decode("utf-8", "replace")


def contents(path: Path) -> dict[str, bytes] | bytes | None:
    """An output as it stands: a file's bytes, a folder's ``{name: bytes}``, or None."""
    if path.is_dir():
        return {e.name: e.read_bytes() for e in path.iterdir()}
    return path.read_bytes() if path.exists() else None


def whole(found: dict[str, bytes] | bytes | None, ref: dict[str, bytes] | bytes) -> str | None:
    """Why ``found`` is not the output a complete run writes (``ref``), or None where it
    is: a file, the same bytes; a folder, the same files, each the bytes a complete run
    writes (its manifest aside: it names the folder and the time) and its manifest
    records."""
    if isinstance(ref, bytes):
        return None if found == ref else "not the file a complete run writes"
    if not isinstance(found, dict) or set(found) != set(ref):
        return f"files {sorted(found or ())} where a complete run writes {sorted(ref)}"
    listed = json.loads(found[MANIFEST])["files"]
    for name, data in found.items():
        if name == MANIFEST:
            continue
        if data != ref[name]:
            return f"{name} is not as a complete run writes it"
        if listed.get(name, {}).get("sha256") != hashlib.sha256(data).hexdigest():
            return f"{name} is not as its manifest records"
    return None


def leftovers(d: Path, before: set[str], target: str) -> list[str]:
    """What is in ``d`` that was not (``before``) but the output ``target``."""
    return sorted(set(os.listdir(d)) - before - {target})


class Reference:
    """Each writer's complete run: its output and its time, made once."""

    def __init__(self) -> None:
        self.runs: dict[tuple[str, ...], tuple[dict[str, bytes] | bytes, float]] = {}
        self.tmp: Path | None = None   # made on the first run (not on import)

    def __call__(self, argv: list[str], target: str) -> tuple[dict[str, bytes] | bytes, float]:
        key = tuple(argv)
        if key not in self.runs:
            if self.tmp is None:
                self.tmp = Path(tempfile.mkdtemp(prefix="hostile20-ref-"))
            d = Path(tempfile.mkdtemp(dir=self.tmp))
            _setup(d)
            t0 = time.perf_counter()
            rc, err = finish(child(argv, d))
            if rc not in (0, 3):
                raise RuntimeError(f"the complete run {argv} failed: exit {rc} | {err[-300:]}")
            self.runs[key] = contents(d / target), time.perf_counter() - t0
        return self.runs[key]


REF = Reference()


def _judge_stop(name: str, rc: int, err: str, found, ref, earlier) -> str | None:
    """Why an interrupted run is not what the promise says, or None."""
    lines = _said(err)
    if any("Traceback" in ln for ln in lines):
        return f"traceback | {lines[-1][:200]}"
    if rc == STOPPED[name]:
        if len(lines) != 1 or not lines[0].startswith(f"interrupted by {name}"):
            return f"exit {rc}, stderr {lines!r:.200}"
    elif rc in (0, 3):   # done before the signal came
        if lines:
            return f"exit {rc}, stderr {lines[-1]!r:.200}"
        why = whole(found, ref)
        return f"exit {rc}, the output not whole: {why}" if why else None
    elif rc == -SIGNALS[name]:   # killed by it on the way in or out, without a word
        if lines:
            return f"exit {rc}, stderr {lines[-1]!r:.200}"
    else:
        return f"exit {rc}, not {STOPPED[name]} | {' / '.join(lines)[:200]}"
    if found is None or found == earlier:
        return None
    why = whole(found, ref)
    return f"half-written: {why}" if why else None


def stop_case(path: str, name: str, when: float | str, over: bool) -> Case:
    """``path`` stopped by signal ``name`` at ``when``, a share of a complete run's time
    after 0.2 s (or the write's point ``when``, :data:`POINTS`), into a new output or
    ``over`` an earlier one."""
    argv, target = WRITERS[path]

    def run(d: Path) -> str | None:
        ref, seconds = REF(argv, target)
        _setup(d)
        earlier = None
        if over:
            (d / target).parent.mkdir(exist_ok=True)
            if isinstance(ref, bytes):
                (d / target).write_bytes(ref)
            else:
                (d / target).mkdir()
                for n, data in ref.items():
                    (d / target / n).write_bytes(data)
            earlier = contents(d / target)
        before = set(os.listdir(d)) - {target}
        if isinstance(when, str):
            point, after = POINTS[when]
            env = {"HOOK_POINT": point, "HOOK_SIGNAL": str(int(SIGNALS[name]))}
            if after:
                env["HOOK_AFTER"] = "1"
            p = child(argv, d, env, hooked=True)
        else:
            p = child(argv, d)
            time.sleep(0.2 + when * seconds)
            p.send_signal(SIGNALS[name])
        rc, err = finish(p)
        why = _judge_stop(name, rc, err, contents(d / target), ref, earlier)
        left = leftovers(d, before, target)
        return why or (f"left {left} beside the output" if left else None)
    return f"stop {path} {name} {when if isinstance(when, str) else f'at {when:.0%}'}" \
           f"{' over an earlier output' if over else ''}", run


def stop_cases() -> Iterator[Case]:
    for path, (_, target) in WRITERS.items():
        for name in SIGNALS:
            for over in (False, True):
                for point, (fn, _) in POINTS.items():
                    folder = not target.endswith((".csv", ".json", ".toml"))
                    if point != "staged" and not folder:
                        continue   # one file: its temporary, then os.replace
                    if (fn == "_exchange") != over and fn in ("_exchange", "_put_in_place"):
                        continue
                    yield stop_case(path, name, point, over)
                for share in SHARES if not over else SHARES[::2]:
                    yield stop_case(path, name, share, over)


def race_case(path: str, raced: bool) -> Case:
    """Two runs of ``path`` (its base and :data:`OTHER`'s arguments) into one output at
    once; ``raced``: both held just before either puts its output in place."""
    argv, target = WRITERS[path]
    second = other(path)

    def run(d: Path) -> str | None:
        refs = [REF(argv, target)[0], REF(second, target)[0]]
        _setup(d)
        before = set(os.listdir(d)) - {target}
        env = {}
        if raced:
            barrier = Path(tempfile.mkdtemp(dir=d.parent))
            env = {"HOOK_POINT": RACED, "HOOK_BARRIER": str(barrier), "HOOK_PEERS": "2"}
        ps = [child(a, d, env, hooked=raced) for a in (argv, second)]
        results = [finish(p) for p in ps]
        for rc, err in results:
            if rc != 0 or _said(err):
                return f"exit {rc} | {' / '.join(_said(err))[:200]}"
        found = contents(d / target)
        if all(whole(found, ref) for ref in refs):
            return f"a mix: {whole(found, refs[0])}; {whole(found, refs[1])}"
        left = leftovers(d, before, target)
        return f"left {left} beside the output" if left else None
    return f"race {path}{' held at the rename' if raced else ''}", run


def race_cases() -> Iterator[Case]:
    for path in OTHER:
        folder = WRITERS[path][1] == "out"   # one file goes in place by os.replace alone
        for raced in (False, True) if folder else (False,):
            yield race_case(path, raced)


@contextlib.contextmanager
def tmpfs(folder: Path, size: str = "16k") -> Iterator[str | None]:
    """A ``size`` tmpfs mounted on ``folder`` (None), or why not (a string)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        yield "not root: no tmpfs can be mounted"
        return
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                       capture_output=True, text=True, check=False)
    if r.returncode:
        yield f"mount failed: {r.stderr.strip()}"
        return
    try:
        yield None
    finally:
        subprocess.run(["umount", str(folder)], check=False)


#: Outputs larger than the room given: (name, argv, target under {d}).
BIG = {
    "topology export": (["topology", "export", "ring:n=400", "-o", "{d}/f.json"], "f.json"),
    "compare +figures": WRITERS["compare +figures"],
    "sweep +figures": WRITERS["sweep +figures"],
    "availability +figures": WRITERS["availability +figures"],
}


def font_cache() -> None:
    """Build matplotlib's font cache where a child will look for it (the environment's
    MPLCONFIGDIR, which a test run in process may have set): a child under RLIMIT_FSIZE
    that builds it cannot save it, and matplotlib says so twice on stderr."""
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"],
                   env=_child_env({}), capture_output=True, check=False, timeout=120)


def room_case(path: str, how: str) -> Case:
    """``path``'s output larger than the room: onto a 16 KiB tmpfs, or under an
    RLIMIT_FSIZE of 16 KiB (a file past it: EFBIG; Python ignores SIGXFSZ)."""
    argv, target = BIG[path]

    def run(d: Path) -> str | None:
        full = d / "full"
        full.mkdir()
        with tmpfs(full) if how == "tmpfs" else contextlib.nullcontext() as why_not:
            if why_not:
                print(f"skip {path} onto a full tmpfs: {why_not}")
                return None
            limits = {resource.RLIMIT_FSIZE: 16 << 10} if how == "fsize" else None
            font_cache()
            rc, err = finish(child([a.replace("{d}", "{d}/full") for a in argv], d,
                                   limits=limits))
            lines = _said(err)
            found = sorted(os.listdir(full))
        # said with the flag of the output, as its checks say it: --out or --output
        if rc != 1 or len(lines) != 1 or not re.match(r"error: --out(put)? '[^']+': cannot "
                                                      r"write ", lines[0]):
            return f"exit {rc} | {' / '.join(lines)[:200]}"
        return f"left {found}" if found else None
    return f"room {path} {how}", run


def room_cases() -> Iterator[Case]:
    for path in BIG:
        for how in ("tmpfs", "fsize"):
            yield room_case(path, how)


#: Command lines at the limits, under RLIMIT_AS 3 GB: each gives a result or refuses in
#: one line (lenient), within the limit.
LARGEST = {
    "availability at the largest cluster": [
        "availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
        "--max-batch", "8", "--trials", "5", "--cluster-gpus", "131072"],
    "availability past the largest cluster": [
        "availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
        "--max-batch", "8", "--cluster-gpus", "1000000000"],
    "availability with 1e9 trials": [
        "availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
        "--max-batch", "8", "--trials", "1000000000", "--cluster-gpus", "131072"],
    "blast-radius at the largest cluster": [
        "blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--no-plot",
        "--max-batch", "8", "--cluster-gpus", "131072"],
}


def memory_case(name: str, argv: list[str]) -> Case:
    def run(d: Path) -> str | None:
        rc, err = finish(child(argv, d, limits={resource.RLIMIT_AS: 3 << 30}))
        lines = _said(err)
        if any("Traceback" in ln or "MemoryError" in ln for ln in lines):
            return f"traceback | {lines[-1][:200]}"
        if rc == 2 and (len(lines) != 1 or not names_what(argv, lines[0], str(d))):
            return f"refused, but not in one line naming the flag | {lines!r:.200}"
        return None if rc in (0, 2, 3) else f"exit {rc} | {' / '.join(lines)[:200]}"
    return f"memory {name}", run


#: Refusals of the newest options: argv, and the words the line must hold (a flag, or the
#: value typed).
REFUSALS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "infer tbo decode batch under 2 x attention DP": (
        ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8",
         "--attention-dp", "8", "--batch", "8", "--phase", "decode",
         "--two-batch-overlap"], ("--attention-dp", "16")),
    "infer tbo decode odd batch a rank": (
        ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8",
         "--attention-dp", "4", "--batch", "6", "--phase", "decode",
         "--two-batch-overlap"], ("--attention-dp", "8")),
    "infer tbo batch 1": (
        ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--batch", "1",
         "--phase", "decode", "--two-batch-overlap"], ("2",)),
    "collective group past the fabric": (
        ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "9", "--size",
         "1MiB"], ("--group",)),
    "collective failed node unknown": (
        ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size",
         "1MiB", "--fail", "gpu0-gpu9"], ("--fail",)),
    "costs group past the fabric": (
        ["costs", "--fabric", "ring:n=8", "--sizes", "1MiB", "--groups", "9", "-o",
         "{d}/c.csv"], ("--groups",)),
    "costs size zero": (
        ["costs", "--fabric", "ring:n=8", "--sizes", "0B", "--groups", "8", "-o",
         "{d}/c.csv"], ("--sizes",)),
}


def refusal_case(name: str, argv: list[str], words: tuple[str, ...]) -> Case:
    def run(d: Path) -> str | None:
        rc, err = finish(child(argv, d))
        lines = _said(err)
        if rc != 2 or len(lines) != 1 or not lines[0].startswith("error: "):
            return f"exit {rc} | {' / '.join(lines)[:200]}"
        missing = [w for w in words if w not in lines[0]]
        if missing or os.listdir(d):
            return f"names not {missing} | {lines[0][:200]}" if missing else \
                f"wrote {os.listdir(d)}"
        return None
    return f"refusal {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, w) for n, (a, w) in REFUSALS.items())
    yield from (memory_case(n, a) for n, a in LARGEST.items())
    yield from room_cases()
    yield from race_cases()
    yield from stop_cases()


def judge(run: Callable[[Path], str | None]) -> tuple[str | None, float]:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hostile20-") as tmp:
        d = Path(tmp) / "case"
        d.mkdir()
        return run(d), time.perf_counter() - t0


def main() -> int:
    args = round_options()
    signal.signal(signal.SIGALRM, _alarm)
    tally = Tally("WARN", args.v)
    try:
        for name, run in cases():
            if args.k in name:
                tally.record(name, *within_a_minute(judge, run))
    finally:
        if REF.tmp is not None:
            shutil.rmtree(REF.tmp, ignore_errors=True)
    return tally.report("warned")


if __name__ == "__main__":
    sys.exit(main())
