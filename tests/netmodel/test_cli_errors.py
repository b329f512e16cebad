"""The CLI's contract for user mistakes: one line on stderr, exit status 2, no traceback."""

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import LazyGroup


def _group_with_failing_command():
    @click.group(cls=LazyGroup)
    def g():
        pass

    @g.command()
    def boom():
        raise UserError("size must be a finite number > 0, got -1")

    return g


def test_user_error_is_one_line_exit_2():
    result = CliRunner().invoke(_group_with_failing_command(), ["boom"])
    assert result.exit_code == 2
    assert result.output == "error: size must be a finite number > 0, got -1\n"
    assert "Traceback" not in result.output


def test_help_does_not_import_heavy_libraries():
    code = ("import sys; from netmodel.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('matplotlib', 'scipy', 'networkx', 'numpy') if m in sys.modules]\n"
            "print('HEAVY=' + ','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "HEAVY="


@pytest.mark.parametrize("command", ["cost", "availability", "blast-radius"])
def test_help_of_commands_without_a_roofline_option_imports_no_numpy(command):
    # their --phase help lists compute.phases.PHASES; compute.phases imported numpy at its
    # top for one isinstance check, so these --help screens loaded numpy (about 0.25 s)
    code = ("import sys; from netmodel.cli.main import main\n"
            f"try:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('matplotlib', 'scipy', 'networkx', 'numpy') if m in sys.modules]\n"
            "print('HEAVY=' + ','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "HEAVY="
