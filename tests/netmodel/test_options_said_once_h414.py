"""Options said once: ``--overlap-collectives`` is made from its RooflineOptions field (help
from the field's metadata) for every command that takes it, and no option is written out
twice in netmodel/cli."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import click
import pytest

from compute.roofline_options import option_help
from netmodel.cli.main import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: Every command that takes --overlap-collectives.
OVERLAP_COMMANDS = [("infer",), ("search",), ("compare",), ("sweep",), ("study", "lite-gpu")]


def _command(path: tuple[str, ...]) -> click.Command:
    ctx = click.Context(cli, info_name="netmodel")
    command: click.Command = cli
    for word in path:
        command = command.get_command(ctx, word)
        ctx = click.Context(command, parent=ctx, info_name=word)
    return command


@pytest.mark.parametrize("path", OVERLAP_COMMANDS, ids=" ".join)
def test_overlap_collectives_is_the_fields_option(path):
    (opt,) = [p for p in _command(path).params if "--overlap-collectives" in p.opts]
    assert opt.name == "overlap_collectives" and opt.is_flag
    ctx = click.Context(_command(path))
    assert opt.get_help_record(ctx) == (
        "--overlap-collectives", "Hide each all-reduce behind the GEMM producing its input.")
    assert option_help("overlap_collectives") == opt.get_help_record(ctx)[1]


def _click_options() -> dict[str, list[str]]:
    """Every literal ``click.option(...)`` call in netmodel/cli, by its source tree
    (flags, destination, help and every other argument), with where it is."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "netmodel" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "option" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "click"):
                found.setdefault(ast.dump(node), []).append(f"{path.name}:{node.lineno}")
    return found


def test_no_option_is_declared_twice():
    """An option two commands take alike (the same flags, help and settings) is declared
    once and shared (--no-plot, --quiet, --expert-skew, --json, --model were each written
    out two or three times)."""
    twice = [where for where in _click_options().values() if len(where) > 1]
    assert twice == []


def test_overlap_collectives_is_not_written_out():
    # netmodel.cli.options.roofline_flag makes it from the RooflineOptions field
    assert not any("'--overlap-collectives'" in tree for tree in _click_options())


@pytest.mark.parametrize("path, flag", [(("compare",), "--no-plot"), (("sweep",), "--quiet"),
                                        (("study", "lite-gpu"), "--no-plot"),
                                        (("study", "lite-gpu"), "--quiet"),
                                        (("blast-radius",), "--no-plot"),
                                        (("availability",), "--quiet"),
                                        (("availability",), "--no-plot"),
                                        (("search",), "--expert-skew"),
                                        (("infer",), "--expert-skew")])
def test_the_shared_options_are_still_taken(path, flag):
    (opt,) = [p for p in _command(path).params if flag in p.opts]
    assert opt.get_help_record(click.Context(_command(path)))[1].startswith((
        "Write no figures.", "No progress bar on stderr.",
        "Busiest EP group's share of routed tokens over the mean (1: uniform)."))


def test_study_help_stays_light():
    code = ("import sys; from netmodel.cli.main import main\n"
            "try:\n    main(['study', 'lite-gpu', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('HEAVY=' + ','.join(m for m in ('matplotlib', 'scipy', 'numpy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "HEAVY="
