"""A progress bar on stderr for work that takes more than about two seconds.

It stays silent when asked to (``--quiet``), when the stream is not a terminal (pipes, CI
logs, click's test runner) and for the first ``delay`` seconds, so quick commands print
nothing. It redraws at most ten times a second, fits the terminal's width (an 80-column
terminal gets 79 characters; one whose line would hold fewer than :data:`NARROWEST` gets
no bar, where a line cut to fit would say nothing and one that does not fit would wrap, each
redraw a new line) and erases itself when done.

>>> import io
>>> with Progress(3, "searching", stream=io.StringIO()) as p:   # not a terminal: silent
...     p.advance("a"); p.advance("b"); p.advance("c")
>>> p.done, p.enabled
(3, False)
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Protocol

__all__ = ["NARROWEST", "NO_PROGRESS", "Progress", "ProgressLike", "check_progress"]

#: Fewest characters a line may take for the bar to be drawn (a terminal of 21 columns;
#: the label, the bar's 28 and the counts do not fit fewer: ``COLUMNS=5`` draws nothing).
NARROWEST = 20


class ProgressLike(Protocol):
    """What the study's functions take as ``progress``: a :class:`Progress`,
    :data:`NO_PROGRESS` or anything else with this method."""

    def advance(self, what: str = "", n: int = 1) -> None: ...


def check_progress(progress: object) -> ProgressLike:
    """``progress`` if it has an ``advance`` method (a :class:`Progress`,
    :data:`NO_PROGRESS` or the like), else one line naming it (None or a number raised
    AttributeError after the work had been done).

    >>> check_progress(None)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: progress must be an object with an advance(what, n) method (netmodel.study.progress.Progress or NO_PROGRESS), got None
    """
    if callable(getattr(progress, "advance", None)):
        return progress   # type: ignore[return-value]
    from compute.errors import UserError
    from compute.validate import describe

    raise UserError(f"progress must be an object with an advance(what, n) method "
                    f"(netmodel.study.progress.Progress or NO_PROGRESS), got {describe(progress)}")


class Progress:
    """Count ``total`` units of work; draw ``label [####....] done/total elapsed what``.

    Parameters
    ----------
    total : int
        Units of work expected (the bar's length; more may be reported).
    label : str
        What the work is.
    quiet : bool
        Never draw.
    stream : file, optional
        Where to draw (default ``sys.stderr``); drawing needs ``stream.isatty()``.
    delay : float
        Seconds of work before the bar first appears.
    """

    def __init__(self, total: int, label: str = "", *, quiet: bool = False, stream=None,
                 delay: float = 2.0, width: int = 28):
        self.total = max(int(total), 1)
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = not quiet and bool(isatty and isatty())
        self.delay = float(delay)
        self.width = int(width)
        self.done = 0
        self.start = time.monotonic()
        self._drawn = 0.0
        self._shown = False

    def advance(self, what: str = "", n: int = 1) -> None:
        """Record ``n`` more units done (``what``: the unit just finished)."""
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self._drawn < 0.1:
            return
        cols = self._columns()
        if cols < NARROWEST:
            return
        self._drawn = now
        frac = min(self.done / self.total, 1.0)
        full = int(round(frac * self.width))
        bar = "#" * full + "." * (self.width - full)
        text = (f"{self.label} [{bar}] {self.done}/{self.total} {now - self.start:5.1f}s "
                f"{what}")[:cols]
        self.stream.write("\r" + text.ljust(cols))
        self.stream.flush()
        self._shown = True

    @staticmethod
    def _columns() -> int:
        """Characters a line may take: one less than the terminal's width (a full line
        would wrap on some terminals), at most 110."""
        return min(110, shutil.get_terminal_size((80, 24)).columns - 1)

    def close(self) -> None:
        """Erase the bar (if it was drawn)."""
        if self._shown:
            self.stream.write("\r" + " " * max(self._columns(), 0) + "\r")
            self.stream.flush()
            self._shown = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _NoProgress:
    """A progress object that records nothing (the API's default)."""

    def advance(self, what: str = "", n: int = 1) -> None:
        pass


#: Pass where no progress should be shown.
NO_PROGRESS = _NoProgress()
