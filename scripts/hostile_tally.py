"""The tally the hostile rounds (scripts/hostile_round15.py to 22) keep and print: each
case's verdict (FAIL, WARN for a refusal that names too little, ok with ``-v``), the slow
cases past 10 s, the counts, and the exit status (1 where any failed); the options
every round takes (:func:`round_options`); and the alarm that stops a case past 60 s
(:class:`Slow`, raised by :func:`_alarm`; :func:`within_a_minute`)."""

from __future__ import annotations

import argparse
import signal
from collections.abc import Callable


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
