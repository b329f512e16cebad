"""Shell completion (docs/units-and-errors.md, "Shell completion") of a command line that
gives an option twice: completion parses the line so far to offer what may come next, and
the repeated-option rule (netmodel.cli.refusals.refuse_repeated_options) is for a command about
to run, not for a line being typed. Before, ``netmodel infer --model A --model B --g<TAB>``
printed a traceback ending in ``UserError: --model is given twice`` into the shell and
offered nothing; now it offers ``--gpu`` and ``--gpu-file``, as without the repeat."""

from __future__ import annotations

import pytest
from click.shell_completion import BashComplete

from netmodel.cli.main import cli


def _offered(args: list[str], incomplete: str) -> list[str]:
    comp = BashComplete(cli, {}, "netmodel", "_NETMODEL_COMPLETE")
    return [item.value for item in comp.get_completions(args, incomplete)]


INFER = ["infer", "--model", "Llama-3-8B"]
SHOW = ["topology", "show", "flat", "--pair", "gpu0", "gpu1"]


@pytest.mark.parametrize("once, again, incomplete, offered", [
    (INFER, ["--model", "Llama-3-70B"], "--g", ["--gpu", "--gpu-file"]),
    # a subcommand of a group, a value of two words (click completes after one from 8.2.1
    # on: ['--json']; 8.2.0 offered nothing there, with or without the repeat)
    (SHOW, ["--pair", "gpu1", "gpu2"], "--j", None),
])
def test_completion_of_a_line_with_an_option_twice(once, again, incomplete, offered):
    # as the line without the repeat (before: UserError raised, nothing offered)
    assert _offered(once + again, incomplete) == _offered(once, incomplete)
    if offered is not None:
        assert _offered(once + again, incomplete) == offered


def test_the_command_itself_still_refuses_it():
    from tests.netmodel.cli_helpers import one_line_error, run_cli

    assert one_line_error(run_cli(["infer", "--model", "Llama-3-8B", "--model",
                                   "Llama-3-70B"])).startswith("error: --model is given twice")
