"""Library refusals name parameters, not the command line's flags (h516).

``parse_param``'s refusal of a one-value range said 'give 2 or more values (N, or
--points)' to a Python caller, who passes ``points``; ``fabric_scenario``'s refusal of an
OCS fabric pointed at ``netmodel compare --show lite-ocs``, and its ``--`` kept the command
line from naming the value typed in front (:func:`netmodel.cli.refusals.named_by_value` leaves a
message that names a flag as it is). Now the library names ``points`` and the sweep command
says it as ``--points``. The last test reads every ``raise UserError(...)`` of the library
packages: none may name a ``--flag`` of netmodel's (another program's, SGLang's, may be
cited).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from compute.errors import UserError
from netmodel.study.scenarios import fabric_scenario
from netmodel.study.sweep_params import parse_param
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli
from topologies.specs import build

#: The packages below the command line (netmodel/cli and netmodel/__main__ are it).
LIBRARY = ("compute", "topologies", "netmodel/collectives", "netmodel/study")
_FLAG = re.compile(r"(?<![\w-])--[a-z]")


def test_a_one_value_range_names_the_parameter_points():
    with pytest.raises(UserError) as err:
        parse_param("adjust.hop_latency=0.1us:10us", ["lite-flat"], 1)
    assert str(err.value) == ("sweep parameter adjust.hop_latency range '0.1us:10us' of 1 "
                              "value would sweep its LO alone; give 2 or more values (N, or "
                              "points), or the one value")


@pytest.mark.parametrize("param, points", [("adjust.hop_latency=0.1us:10us", ["--points", "1"]),
                                           ("adjust.hop_latency=0.1us:10us:1", [])])
def test_the_sweep_command_says_it_as_its_flag(param, points):
    r = run_cli(["sweep", "--scenarios", "lite-flat", "--param", param, *points])
    line = one_line_error(r, "would sweep its LO alone")
    assert line.endswith("give 2 or more values (N, or --points), or the one value")


def test_an_ocs_fabric_refusal_names_no_command():
    with pytest.raises(UserError) as err:
        fabric_scenario(build("ocs:gpus=16,gpu=Lite,logical=ring"), "mine")
    said = str(err.value)
    assert said.startswith("fabric 'mine' has an optical circuit switch ('ocs0')")
    assert not _FLAG.search(said) and "netmodel" not in said
    assert said.endswith('[fabric] builder = "ocs" and [collective] circuits (as the shipped '
                         'scenario lite-ocs does)')


def _raised_texts(path: Path):
    """(line, text) of each string literal inside a ``raise UserError(...)`` of ``path``."""
    text = path.read_text(encoding="utf-8")
    if "UserError" not in text:     # no raise UserError(...) to parse for
        return
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        func = node.exc.func
        if getattr(func, "id", getattr(func, "attr", None)) != "UserError":
            continue
        for arg in node.exc.args:
            texts = [c.value for c in ast.walk(arg)
                     if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            yield node.lineno, "".join(texts)


def test_no_library_refusal_names_a_flag():
    found = []
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, text in _raised_texts(path):
                # another program's flag is cited as its own (SGLang's --moe-dense-tp-size)
                cited = re.sub(r"SGLang's --[\w-]+", "", text)
                if _FLAG.search(cited):
                    found.append(f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}")
    assert not found, found
    # the check sees a refusal that names a flag (a read of this very pattern)
    probe = ROOT / "netmodel/cli/study.py"
    assert any(_FLAG.search(t) for _, t in _raised_texts(probe))
