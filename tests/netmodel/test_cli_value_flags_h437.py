"""Refusals of a value the library reads name the flag that gave it (h437).

The library names parameters or values, the command line its flags: these five said the
value but not where it came from ('group size 9 is larger than the fabric's 8 GPUs' of
which option?). Each line is one 'error:' line, exit status 2, with the flag and the text
as typed in front (netmodel.cli.refusals.value_refused_as)."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

RING = ["collective", "all-reduce", "--fabric", "ring:n=8"]
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1",
         "--mode", "calibrated"]


@pytest.mark.parametrize("args, line", [
    (["topology", "show", "ring:n=4", "--pair", "gpu0", "gpu0"],
     "error: --pair 'gpu0 gpu0': path diversity joins two different GPUs; got 'gpu0' twice"),
    (["topology", "show", "ring:n=4", "--pair", "gpu0", "nope"],
     "error: --pair 'gpu0 nope': 'nope' is not a GPU of the fabric"),
    ([*RING, "--group", "9"],   # a ring of 8 GPUs
     "error: --group '9': group size 9 is larger than the fabric's 8 GPUs"),
    ([*RING, "--group", "gpu0,nope"],
     "error: --group 'gpu0,nope': group member 'nope' is not a node of the fabric"),
    ([*RING, "--fail", "nope"],
     "error: --fail 'nope': failed node 'nope' is not a node of the fabric"),
    ([*RING, "--fail", "gpu0/nope"],
     "error: --fail 'gpu0/nope': failed link 'gpu0' - 'nope' is not a link of the fabric"),
    # a 300 mm wafer's usable disc: pi x 150^2 = 70,686 mm^2
    (["yield", "--area", "1e9"],
     "error: --area '1e9': die area 1e+09 mm^2 is larger than the usable wafer (70686 mm^2 "
     "on a 300 mm wafer)"),
])
def test_the_flag_is_named(args, line):
    assert one_line_error(run_cli(args)) == line


def test_a_folder_given_as_profile_names_the_flag(tmp_path):
    line = one_line_error(run_cli([*INFER, "--profile", str(tmp_path)]))
    assert line == (f"error: --profile {str(tmp_path)!r}: profile {str(tmp_path)!r} is a "
                    f"folder; give a shipped profile ('vllm-dgx-h100', 'vllm-h100-2024') or a path to a .toml "
                    f"profile file")


def test_other_refusals_pass_as_they_are():
    from compute.errors import UserError
    from netmodel.cli.refusals import value_refused_as

    with pytest.raises(UserError, match=r"^size 0 must be > 0$"):
        with value_refused_as("--group", "9", "group size"):
            raise UserError("size 0 must be > 0")


@pytest.mark.parametrize("message, line", [
    ("gpus 1,000 is not a multiple", "--cluster-gpus 1,000 is not a multiple"),   # an alias
    ("spares must be >= 0, got '-1'", "--spares must be >= 0, got '-1'"),
    # before: only gpus, spares, horizon and trials, a table of its own beside the options
    ("threshold 2 is not a share", "--threshold 2 is not a share"),
    ("seed '-1' is negative", "--seed '-1' is negative"),
    ("gpus_per_server 8 is odd", "gpus_per_server 8 is odd"),   # no such option: as it is
    ("a spare is late", "a spare is late"),
])
def test_a_run_s_parameter_is_said_as_the_command_s_flag(message, line):
    """availability's library refusals name the run's parameters; the flag is read from
    the command's own options (its first flag: --gpus is an alias of --cluster-gpus), each
    typed here (one left at its default is never named: test_cli_flags_typed_h451)."""
    import click

    from compute.errors import UserError
    from netmodel.cli.main import cli
    from netmodel.cli.reliability_inputs import _parameters_as_flags

    command = cli.get_command(click.Context(cli), "availability")
    typed = ["--model", "M", "--gpus", "1000", "--spares", "-1", "--threshold", "50%",
             "--seed", "1"]   # typed (the messages are the library's, made up here)
    with pytest.raises(UserError) as refused:
        with command.make_context("availability", typed), _parameters_as_flags():
            raise UserError(message)
    assert str(refused.value) == line
