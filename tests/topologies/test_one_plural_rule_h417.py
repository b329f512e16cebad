"""A count in words is written by one rule, compute.units.counted ('1 circuit', '2 GPU
pairs', '1,024 edges'), and only compute.units offers it: a second name for it (a
re-export) or a hand-written plural beside it is a second place the rule is said."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Hand-written plurals: "'' if n == 1 else 's'", "'s' if n != 1 else ''", "'s' * (n != 1)".
HAND_PLURAL = re.compile(r"""(''|"") if [^{}]+ == 1 else ('s'|"s")"""
                         r"""|('s'|"s") if [^{}]+ != 1 else (''|"")"""
                         r"""|('s'|"s") \* \([^{}]+ != 1\)""")
#: compute.units imports compute.validate, which imports compute.describe, so the
#: descriptions of values ('a list of 1 item') cannot call counted: the one module left its own.
OWN = {"compute/describe.py"}


def _modules():
    for package in ("compute", "topologies"):
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix()


def test_hand_plural_pattern_matches_the_forms_it_names():
    for text in ("{'' if n == 1 else 's'}", "{'s' * (count != 1)}", "{'s' if k != 1 else ''}"):
        assert HAND_PLURAL.search(text), text
    assert not HAND_PLURAL.search("{counted(n, 'edge')}")


@pytest.mark.parametrize("module", [m for m in _modules() if m not in OWN])
def test_no_hand_written_plural(module):
    text = (ROOT / module).read_text()
    found = [line.strip() for line in text.splitlines() if HAND_PLURAL.search(line)]
    if module == "compute/units.py":   # counted itself
        found = [line for line in found if "{noun}" not in line]
    assert not found, f"{module}: write the count with compute.units.counted: {found}"


@pytest.mark.parametrize("module", [m for m in _modules() if m != "compute/units.py"])
def test_counted_is_offered_by_compute_units_alone(module):
    name = module[:-3].replace("/", ".").removesuffix(".__init__")
    tree = ast.parse((ROOT / module).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "counted" for a in node.names):
            assert node.module == "compute.units", f"{module} imports counted from {node.module}"
    exported = getattr(importlib.import_module(name), "__all__", ())
    assert "counted" not in exported, f"{name} re-exports counted"
