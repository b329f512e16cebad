"""The tally the hostile rounds (scripts/hostile_round15.py to 22) keep and print: each
case's verdict (FAIL, WARN for a refusal that names too little, ok with ``-v``), the slow
cases past 10 s, the counts, and the exit status (1 where any failed); the options
every round takes (:func:`round_options`); the alarm that stops a case past 60 s
(:class:`Slow`, raised by :func:`_alarm`; :func:`within_a_minute`); and the loop of the
rounds whose cases each run in a folder of their own (:func:`run_round`), with the verdict
on a command refused (:func:`one_line_refusal`)."""

from __future__ import annotations

import argparse
import signal
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path


def round_options(argv: list[str] | None = None) -> argparse.Namespace:
    """A round's options: ``-k SUBSTRING`` runs the cases whose name holds it, ``-v``
    prints every case's verdict, ok ones too."""
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="")
    ap.add_argument("-v", action="store_true")
    return ap.parse_args(argv)


class Slow(Exception):
    """A case that ran past its time."""


def _alarm(signum, frame):
    raise Slow("over 60 s")


def within_a_minute(run: Callable[..., tuple[str | None, float]], *args
                    ) -> tuple[str | None, float]:
    """``run(*args)``'s ``(why, seconds)``, or ``("over 60 s", 60.0)`` where it runs past
    60 s (the SIGALRM handler :func:`_alarm` installed, as each round does first)."""
    signal.alarm(60)
    try:
        return run(*args)
    except Slow:
        return "over 60 s", 60.0
    finally:
        signal.alarm(0)


class Tally:
    """Counts of one round's cases. ``warn``: the start of a verdict that is a warning,
    not a failure (a refusal naming no flag, for one)."""

    def __init__(self, warn: str, verbose: bool = False) -> None:
        self.warn, self.verbose = warn, verbose
        self.tried = self.failed = self.warned = 0
        self.slow: list[tuple[float, str]] = []

    def record(self, name: str, why: str | None, dt: float) -> None:
        """One case's verdict ``why`` (None: it passed), printed as it comes."""
        self.tried += 1
        if dt > 10:
            self.slow.append((dt, name))
        if why is not None and why.startswith(self.warn):
            self.warned += 1
            print(f"WARN {name}: {why}", flush=True)
        elif why is not None:
            self.failed += 1
            print(f"FAIL {name}: {why}", flush=True)
        elif self.verbose:
            print(f"ok   {name} ({dt:.2f} s)", flush=True)

    def report(self, warned_as: str) -> int:
        """The slow cases and the counts, ``warned_as`` saying what a WARN is; the exit
        status."""
        for dt, name in sorted(self.slow, reverse=True):
            print(f"slow {dt:.1f} s: {name}")
        print(f"{self.tried} invocations, {self.failed} failed, {self.warned} {warned_as} "
              f"(WARN)")
        return 1 if self.failed else 0


def in_a_folder(run: Callable[[Path], str | None], prefix: str) -> tuple[str | None, float]:
    """``run``'s verdict on a fresh temporary folder (named ``prefix...``, removed after),
    and its wall time."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        return run(Path(tmp)), time.perf_counter() - t0


def run_round(cases: Iterable[tuple[str, Callable[[Path], str | None]]], prefix: str) -> int:
    """A round whose ``cases`` (name, run) each run in a folder of their own
    (:func:`in_a_folder`) within a minute, WARN verdicts counted as warnings: the options
    (:func:`round_options`), the tally printed, the exit status."""
    args = round_options()
    signal.signal(signal.SIGALRM, _alarm)
    tally = Tally("WARN", args.v)
    for name, run in cases:
        if args.k in name:
            tally.record(name, *within_a_minute(in_a_folder, run, prefix))
    return tally.report("warned")


def one_line_refusal(r, words: tuple[str, ...]) -> str | None:
    """None where click's result ``r`` is a refusal as bad input gets (exit 2, one line
    ``error: ...`` naming each of ``words``, no traceback), else why not."""
    lines = r.output.strip().splitlines()
    shown = " / ".join(lines)[:300]
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return f"exception {type(r.exception).__name__}: {str(r.exception)[:200]}"
    if r.exit_code != 2 or len(lines) != 1 or not lines[0].startswith("error: "):
        return f"exit {r.exit_code} | {shown}"
    missing = [w for w in words if w not in lines[0]]
    return f"names not {missing} | {shown}" if missing else None


def invoke_in(argv: list[str], d: Path):
    """click's result of ``netmodel argv`` run in process with ``d`` as the working folder
    (given back after), as a round's cases run each command."""
    import os

    from click.testing import CliRunner

    from netmodel.cli.main import cli

    old = os.getcwd()
    os.chdir(d)
    try:
        return CliRunner().invoke(cli, argv, prog_name="netmodel")
    finally:
        os.chdir(old)

#: One case: (name, run); run(folder) is None where the case holds, else why not.
Case = tuple[str, Callable[[Path], str | None]]
#: A file of a case: its text or bytes, or a function that makes it in the folder (a FIFO,
#: a link).
Made = str | bytes | Callable[[Path], None]


def make(d: Path, files: dict[str, Made]) -> None:
    """Write a case's ``files`` into folder ``d`` (names may hold subfolders)."""
    for name, what in files.items():
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(what):
            what(d)
        elif isinstance(what, bytes):
            path.write_bytes(what)
        else:
            path.write_text(what)


def _listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def refusal_case(name: str, argv: list[str], files: dict[str, Made],
                 words: tuple[str, ...]) -> Case:
    """A case that holds where ``netmodel argv`` over ``files`` is refused in one line
    holding ``words`` (:func:`one_line_refusal`) and writes nothing."""
    def run(d: Path) -> str | None:
        make(d, files)
        before = _listing(d)
        why = one_line_refusal(invoke_in(argv, d), words)
        if why is not None:
            return why
        after = _listing(d)
        return None if after == before else f"wrote {sorted(set(after) - set(before))}"
    return f"refusal {name}", run


def taken_case(name: str, argv: list[str], files: dict[str, Made]) -> Case:
    """A case that holds where ``netmodel argv`` over ``files`` runs (exit 0, or 3: no
    configuration meets the target) without a traceback."""
    def run(d: Path) -> str | None:
        make(d, files)
        r = invoke_in(argv, d)
        if r.exit_code not in (0, 3) or "Traceback" in r.output:
            return f"exit {r.exit_code} | {r.output.strip()[-300:]}"
        return None
    return f"taken {name}", run
