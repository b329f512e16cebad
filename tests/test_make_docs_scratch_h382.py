"""scripts/make_docs.py runs a page's samples in a scratch folder linked to the project
root's entries; a sample that writes ``--out results/`` wrote through the link into the
project's own ``results/``. Following the README's Quickstart (``netmodel study lite-gpu
--out results/``, then ``python -m pytest``) the docs test replaced that study's 30 files by
the 4 of docs/study.md's ``--no-fabric`` sample. Now ``.gitignore``'d entries and the names a
page's samples write are not linked; the rest still read as from the project root."""

from __future__ import annotations

from pathlib import Path

from tests.compute.report_helpers import script

ROOT = Path(__file__).resolve().parents[1]


def _make_docs():
    return script("make_docs")


def test_samples_do_not_write_through_the_links(tmp_path, monkeypatch):
    md = _make_docs()
    root = tmp_path / "project"
    for d in ("results", "alone", "docs"):
        (root / d).mkdir(parents=True)
        (root / d / "keep.txt").write_text("mine\n")
    (root / ".gitignore").write_text("# outputs\nresults/\n*.tmp\n")
    page = root / "docs" / "page.md"
    page.write_text("<!-- sample: mkdir -p results alone && echo new > results/out.txt"
                    " && echo new > alone/out.txt && cat docs/keep.txt -->\n")
    monkeypatch.setattr(md, "ROOT", root)
    [block] = md.blocks(page)
    # the project's own entries still read as from the root
    assert "mine" in block.new
    # the ignored results/ and the written alone/ are the reader's, untouched
    assert sorted(p.name for p in (root / "results").iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in (root / "alone").iterdir()) == ["keep.txt"]


def test_written_names_the_outputs():
    md = _make_docs()
    assert md.written(["netmodel compare --out alone/", "netmodel sweep --out=sw/x",
                       "netmodel topology export ring -o two.json", "cat a.csv >b.txt",
                       "netmodel costs --json | head -3"]) == {"alone", "sw", "two.json",
                                                                 "b.txt"}
