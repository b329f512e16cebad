"""Hostile round 12 on the command line (h401): an option that takes one value, given twice
with different values (``--tbt 1ms --tbt 2ms``, ``--model A --model B``), ran with the last
of them without a word (click keeps the last), answering a question the user did not ask.
Now one line naming the option and both values, exit 2; the same value twice still runs."""

from __future__ import annotations

import click
import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]


@pytest.mark.parametrize("args, line", [
    # before: exit 0, Llama-3-70B's roofline (the second --model)
    (["infer", "--model", "Llama-3-8B", "--model", "Llama-3-70B", "--gpu", "H100-SXM",
      "--tp", "1", "--batch", "1"],
     "error: --model is given twice ('Llama-3-8B' and 'Llama-3-70B'); it takes one value: "
     "give it once"),
    # before: exit 0, 'SLO 2 ms: MISSED'
    ([*INFER, "--tbt", "1ms", "--tbt=2ms"],
     "error: --tbt is given twice ('1ms' and '2ms'); it takes one value: give it once"),
    ([*INFER, "--batch", "2", "--batch", "4"],
     "error: --batch is given 3 times ('1', '2', '4'); it takes one value: give it once"),
    # the plural and the singular are one option (LIST_ALIASES)
    (["compare", "--models", "Llama-3-8B", "--model", "Llama-3-70B"],
     "error: --models is given twice (--models 'Llama-3-8B' and --model 'Llama-3-70B'); it "
     "takes one value: give it once"),
    # a short option, its value attached or not
    (["costs", "--fabric", "flat", "-o", "a.csv", "-ob.csv"],
     "error: -o is given twice ('a.csv' and 'b.csv'); it takes one value: give it once"),
    # a value of two words (nargs=2); before: exit 0, the second pair's paths
    (["topology", "show", "flat:n=8", "--pair", "gpu0", "gpu1", "--pair", "gpu1", "gpu2"],
     "error: --pair is given twice ('gpu0 gpu1' and 'gpu1 gpu2'); it takes one value: give "
     "it once"),
    # a subcommand of a group; before: ran the study on H100-SXM alone
    (["study", "lite-gpu", "--out", "st", "--gpus", "Lite", "--gpus", "H100-SXM"],
     "error: --gpus is given twice ('Lite' and 'H100-SXM'); it takes one value: give it once"),
    (["availability", "--scenario", "h100-dgx", "--scenario", "lite-flat", "--model",
      "Llama-3-8B"],
     "error: --scenario is given twice ('h100-dgx' and 'lite-flat'); it takes one value: give "
     "it once"),
])
def test_an_option_given_twice_is_refused(tmp_path, args, line):
    r = run_cli(args, tmp_path)
    assert one_line_error(r) == line
    assert list(tmp_path.iterdir()) == []   # nothing written


def test_the_same_value_twice_and_repeatable_options_still_run(tmp_path):
    r = run_cli([*INFER, "--tbt", "50ms", "--tbt", "50ms", "--json", "--json"])
    assert r.exit_code == 0, r.output
    # --scenarios of sweep and --rate of availability take one value an occurrence
    r = run_cli(["sweep", "--scenarios", "h100-dgx", "--scenarios", "lite-flat", "--param",
                 "adjust.hop_latency=1us,2us", "--models", "Llama-3-8B", "--max-batch", "8",
                 "-q", "--no-plot", "--json"])
    assert r.exit_code in (0, 3), r.output
    assert '"h100-dgx@H100-SXM"' in r.output and '"lite-flat@Lite"' in r.output


def test_help_and_click_own_refusals_come_first():
    r = run_cli([*INFER, "--tbt", "1ms", "--tbt", "2ms", "--help"])
    assert r.exit_code == 0 and r.output.startswith("Usage: netmodel infer")
    # a missing value is click's to say
    assert one_line_error(run_cli([*INFER, "--tbt", "1ms", "--tbt"])).startswith(
        "error: Option '--tbt' requires an argument")


def test_the_rule_on_a_bare_command():
    from netmodel.cli.refusals import refuse_repeated_options

    cmd = click.Command("x", params=[click.Option(["--n"]), click.Option(["--k"], multiple=True),
                                     click.Option(["--q"], is_flag=True)])
    refuse_repeated_options(cmd, "x", ["--k", "1", "--k", "2", "--q", "--q", "--n", "3"])
    refuse_repeated_options(cmd, "x", ["--n", "3", "--", "--n", "4"])   # after --: arguments
    with pytest.raises(UserError, match=r"^--n is given twice \('3' and '4'\)"):
        refuse_repeated_options(cmd, "x", ["--n", "3", "--n=4"])

