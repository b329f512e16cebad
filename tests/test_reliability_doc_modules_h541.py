"""docs/reliability.md's list of the code names every module of the reliability study.

The modules split out of reliability_spares and availability_analytic
(reliability_recovery_key.py, availability_chain.py) were missing from the list, as were
reliability_timings.py and reliability_plots.py: the list is checked against the package,
so a module added or split later is named there too.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "netmodel" / "study"


def _named(text: str) -> set[str]:
    """The file names of the ``*.py`` paths in the paragraph starting 'The code: '."""
    start = text.index("The code: ")
    para = text[start:text.index("\n\n", start)]
    return {path.rsplit("/", 1)[-1] for path in re.findall(r"`([\w/]+\.py)`", para)}


def _missing(text: str) -> list[str]:
    named = _named(text)
    return sorted(p.name for pattern in ("reliability_*.py", "availability*.py")
                  for p in STUDY.glob(pattern) if p.name not in named)


def test_every_reliability_and_availability_module_is_named():
    assert len(list(STUDY.glob("availability*.py"))) >= 7   # the globs find the package
    assert _missing((ROOT / "docs" / "reliability.md").read_text()) == []


def test_the_check_finds_a_module_left_out():
    text = (ROOT / "docs" / "reliability.md").read_text()
    left_out = text.replace("`reliability_recovery_key.py`", "the recovery key's module")
    assert _missing(left_out) == ["reliability_recovery_key.py"]


def test_every_module_named_exists():
    named = _named((ROOT / "docs" / "reliability.md").read_text())
    found = {p.name for folder in (STUDY, ROOT / "netmodel" / "cli", ROOT / "topologies")
             for p in folder.glob("*.py")}
    assert len(named) >= 16 and named <= found, named - found
