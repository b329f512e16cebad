"""The progress bar fits the terminal and stays off pipes."""

from __future__ import annotations

import io

import pytest

from netmodel.study.progress import Progress


class Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("columns, want", [(80, 79), (200, 110), (40, 39)])
def test_the_bar_fits_the_terminal(monkeypatch, columns, want):
    monkeypatch.setenv("COLUMNS", str(columns))
    out = Tty()
    with Progress(3, "lite-gpu study", stream=out, delay=0) as bar:
        bar.advance("a very long description of the unit of work " * 5)
    drawn = [part for part in out.getvalue().split("\r") if part]
    assert drawn and max(len(part) for part in drawn) == want


def test_the_bar_is_silent_on_a_pipe():
    out = io.StringIO()
    with Progress(2, "x", stream=out, delay=0) as bar:
        bar.advance()
        bar.advance()
    assert out.getvalue() == "" and bar.done == 2


@pytest.mark.parametrize("columns", [5, 1, 20])
def test_a_terminal_too_narrow_for_a_bar_gets_none(monkeypatch, columns):
    """COLUMNS=5 drew 20 characters a redraw (the floor it had), each wrapping to a new
    line of a 5-column terminal; where a line would hold fewer than NARROWEST (20)
    characters, a terminal under 21 columns, nothing is drawn."""
    monkeypatch.setenv("COLUMNS", str(columns))
    out = Tty()
    with Progress(3, "lite-gpu study", stream=out, delay=0) as bar:
        bar.advance("a")
    assert out.getvalue() == "" and bar.done == 1


def test_the_narrowest_terminal_with_a_bar(monkeypatch):
    monkeypatch.setenv("COLUMNS", "21")   # 20 characters a line: drawn, cut to fit
    out = Tty()
    with Progress(3, "lite-gpu study", stream=out, delay=0) as bar:
        bar.advance("a")
    drawn = [part for part in out.getvalue().split("\r") if part.strip()]
    assert drawn == ["lite-gpu study [####"]
