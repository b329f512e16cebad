"""Hostile round 12 on the command line (h401): an unknown subcommand (``netmodel infr``,
``netmodel topology shwo``) was 'No such command 'infr'', the one unknown name whose line
did not list the known ones (an unknown scenario, model, GPU, option value all do). The
list is read from the group itself, so it cannot fall behind the commands."""

from __future__ import annotations

import pytest

from compute.errors import known
from netmodel.cli.main import _COMMANDS
from tests.netmodel.cli_helpers import one_line_error, run_cli


@pytest.mark.parametrize("args, names, where", [
    (["infr"], sorted(_COMMANDS), "netmodel --help"),
    ([""], sorted(_COMMANDS), "netmodel --help"),
    (["topology", "shwo"], ["compare", "export", "list", "plot", "show"],
     "netmodel topology --help"),
    (["study", "lite"], ["lite-gpu"], "netmodel study --help"),
])
def test_an_unknown_command_lists_the_known_ones(args, names, where):
    line = one_line_error(run_cli(args))
    assert line == (f"error: unknown command {args[-1]!r}; known: {known(names)} "
                    f"(see '{where}')")


def test_known_commands_and_help_are_untouched():
    assert run_cli(["topology", "list", "--json"]).exit_code == 0
    r = run_cli(["study", "--help"])
    assert r.exit_code == 0 and "lite-gpu" in r.output
    r = run_cli([])   # a bare group: its help (click's exit status 2), not an error line
    assert r.output.startswith("Usage: netmodel") and "error" not in r.output
