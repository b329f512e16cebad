"""scripts/hostile_round15.py's check that a refusal names its flag or argument (h516).

It looked only for the flags typed in their long form and for the values typed after the
command: eight refusals that name theirs were warned of. ``topology compare`` with fewer
than two fabrics ('needs at least 2 fabrics (SPEC arguments)') names its argument by its
metavar; ``calibrate -o ''`` ('--out '': ...') names ``-o`` by its long form; an empty
fabric argument is quoted as ``''``; click's 'Missing option '-o' / '--out'' names a flag
not typed. (Four of them, ``calibrate --measurements BAD.csv`` without ``-o``, were refused
for the missing ``-o`` before the file was read; those cases now give ``-o``.)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def round15():
    spec = importlib.util.spec_from_file_location("hostile_round15",
                                                  ROOT / "scripts/hostile_round15.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("args, line", [
    (["topology", "compare"],
     "error: topology compare needs at least 2 fabrics (SPEC arguments), got 0"),
    (["topology", "compare", "ring:n=8"],
     "error: topology compare needs at least 2 fabrics (SPEC arguments), got 1"),
    (["topology", "compare", ""],
     "error: a fabric must be a spec string, a .json/.graphml file or a scenario name, got ''"),
    (["calibrate", "--measurements", "/x/m.csv"],
     "error: Missing option '-o' / '--out' (see 'netmodel calibrate --help')"),
    (["calibrate", "--measurements", "/x/m.csv", "-o", ""],
     "error: --out '': profile file must not be empty"),
])
def test_a_refusal_naming_its_flag_or_argument_is_seen(round15, args, line):
    assert round15._names_a_flag(args, line, "/tmp/case-folder")


@pytest.mark.parametrize("args, line", [
    (["topology", "compare", "ring:n=8", "ring:n=4"], "error: something is wrong"),
    (["calibrate", "--measurements", "/x/m.csv", "-o", "p.toml"],
     "error: a profile --outer must be ..."),   # no flag of calibrate's: --outer
    (["topology", "compare", "ring:n=8"], "error: SPECS are wrong"),   # not the word SPEC
])
def test_a_refusal_naming_nothing_is_still_warned_of(round15, args, line):
    assert not round15._names_a_flag(args, line, "/tmp/case-folder")


def test_the_calibrate_file_cases_reach_the_file(round15):
    cases = [c for c in round15.cases() if c[0].startswith("calibrate m")]
    assert len(cases) == 4
    for _, argv, _ in cases:
        assert "-o" in argv
