"""docs/architecture.md's table of data files says which module reads each: every data
file the packages ship is in it, and each module named as a reader names the file in its
own text (it was stale: compute/data/mtp.toml's reader moved to compute/roofline_options.py
while the table still named compute/mtp.py, and collective_tuner_plugins.toml was missing)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("compute", "topologies", "netmodel")


def _table() -> list[tuple[list[str], list[str]]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("### Data files", 1)[1].split("\n### ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        files = re.findall(r"`([^`]+)`", cells[0])
        readers = re.findall(r"`([^`]+\.py)`", cells[1])
        rows.append((files, readers))
    return rows


def _expand(files: list[str]) -> list[str]:
    """The table's names as paths: a bare name shares the folder of the name before it."""
    out, folder = [], ""
    for name in files:
        if "/" in name:
            folder = name.rsplit("/", 1)[0]
        else:
            name = f"{folder}/{name}"
        out.append(name)
    return out


def test_every_shipped_data_file_is_in_the_table():
    listed = [p for files, _ in _table() for p in _expand(files)]
    shipped = sorted(str(p.relative_to(ROOT)) for pkg in PACKAGES
                     for p in (ROOT / pkg).glob("data/**/*") if p.is_file())
    missing = [p for p in shipped
               if not any(Path(p).match(pattern) or p == pattern for pattern in listed)]
    assert shipped and not missing


def test_each_named_reader_names_its_file():
    rows = _table()
    assert rows
    for files, readers in rows:
        assert readers, files
        first = readers[0]          # the reader; the others ("for ...") use what it reads
        text = (ROOT / first).read_text()
        for path in _expand(files):
            stem = Path(path).parent.name if "*" in path else Path(path).name
            assert stem in text, (path, first)
