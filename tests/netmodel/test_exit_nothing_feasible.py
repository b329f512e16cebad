"""'Nothing feasible' has one exit status, 3, in every command. blast-radius and availability
said it with exit status 2, the status of a mistake in the input, though the question was
well put: Llama-3-70B decode on 8 H100s takes 6.525 ms at best (TP 8, batch 1), so a 1 ms TBT
is met by no configuration."""

import pytest
from click.testing import CliRunner

from compute.errors import NothingFeasible, UserError
from netmodel.cli.main import NOTHING_FEASIBLE, cli


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
def test_reliability_commands_exit_3_when_nothing_meets_the_slo(command):
    out = CliRunner().invoke(cli, [command, "--scenario", "h100-dgx", "--model", "Llama-3-70B",
                                   "--tbt", "1ms"])
    assert out.exit_code == NOTHING_FEASIBLE == 3, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: Llama-3-70B has no feasible configuration on h100-dgx@H100-SXM (decode)")
    # the fastest is TP 8 at batch 1 under the scenario's collectives, above the 1 ms asked
    # (6.525 ms when written; h356: was that pin)
    from compute.evaluate_one import evaluate
    from netmodel.study.scenario_collectives import ScenarioCollectives

    best = evaluate("Llama-3-70B", "H100-SXM", 8, 1, "decode",
                    comm=ScenarioCollectives("h100-dgx")).latency
    assert best > 1e-3
    assert f"the fastest (TP 8, batch 1) takes {best * 1e3:.4g} ms" in lines[0], lines[0]


def test_a_bad_name_is_still_exit_2():
    out = CliRunner().invoke(cli, ["blast-radius", "--scenario", "nope", "--model",
                                   "Llama-3-70B"])
    assert out.exit_code == 2


def test_nothing_feasible_is_a_user_error_for_library_callers():
    # callers that catch UserError (the study, notebooks) still catch it
    assert issubclass(NothingFeasible, UserError) and NothingFeasible.exit_status == 3
