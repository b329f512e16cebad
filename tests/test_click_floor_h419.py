"""The click that pyproject.toml admits has what the command line uses: netmodel.cli.refusals
tells a bare group's help from a usage error by ``click.exceptions.NoArgsIsHelpError``, new
in click 8.2.0. pyproject.toml said ``click>=8.1``, and under click 8.1.8 every usage error
(``netmodel infr``, ``netmodel infer --model x``) ended in ``AttributeError: module
'click.exceptions' has no attribute 'NoArgsIsHelpError'``, a traceback and exit 1."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_click_floor_has_no_args_is_help_error():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if re.match(r"click\b", d))
    floor = re.fullmatch(r"click>=(\d+)\.(\d+)(?:\.\d+)?", spec.replace(" ", ""))
    assert floor, spec
    assert (int(floor[1]), int(floor[2])) >= (8, 2), spec   # NoArgsIsHelpError: 8.2.0
    assert "click.exceptions.NoArgsIsHelpError" in (
        ROOT / "netmodel" / "cli" / "refusals.py").read_text()   # why the floor is 8.2
