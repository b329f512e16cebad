"""scripts/make_docs.py links the project root's entries into each page's scratch folder
but not the names the page's samples write (``written``), so a sample never writes through
a link into a reader's own file or folder at the root. ``written`` read ``--out``, ``-o``
and ``>`` only: a sample writing ``netmodel costs ... --output mine/`` (``-o``'s long
name), ``netmodel collective ... --plot busbw.png`` or ``... | tee log.txt`` would still
write through the link into the reader's ``mine/``, ``busbw.png`` or ``log.txt``."""

from __future__ import annotations

from pathlib import Path

from tests.compute.report_helpers import script

ROOT = Path(__file__).resolve().parents[1]


def _make_docs():
    return script("make_docs")


def test_written_reads_every_option_that_writes():
    md = _make_docs()
    assert md.written(["netmodel costs --fabric ring:n=8 --output mine/ --format vidur",
                       "netmodel costs --output=t.csv",
                       "netmodel collective all-reduce --fabric ring:n=8 --plot busbw.png",
                       "netmodel costs --plot=p/b.png",
                       "netmodel costs | tee -a log.txt | head -3"]) == {
        "mine", "t.csv", "busbw.png", "p", "log.txt"}


def test_a_readers_plot_is_not_written_through_a_link(tmp_path, monkeypatch):
    md = _make_docs()
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "busbw.png").write_text("mine\n")       # the reader's own file at the root
    page = root / "docs" / "page.md"
    # a sample that writes the file the way --plot does (the shell's '--plot' is inert)
    page.write_text("<!-- sample: echo --plot busbw.png; echo new > busbw.png; "
                    "cat busbw.png -->\n")
    monkeypatch.setattr(md, "ROOT", root)
    [block] = md.blocks(page)
    assert "new" in block.new
    assert (root / "busbw.png").read_text() == "mine\n"
