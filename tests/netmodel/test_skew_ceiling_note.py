"""An expert skew above what the EP degree allows is costed at the ceiling (c4acc37) and
infer says so. Before, '--expert-skew 5' on Mixtral-8x7B at EP 2 printed the same step as
'--expert-skew 2' without a word. Mixtral routes k = 2 of 8 experts; at EP 2 a group holds
4 slots, so it receives at most both of a token's copies: EP x min(k, slots) / k = 2 x 2 / 2
= 2 times the mean (DeepSeek-V3 at EP 32: 32 x min(8, 8) / 8 = 32)."""

from click.testing import CliRunner

from compute.models import get_model
from compute.stage_mlp import skew_ceiling
from netmodel.cli.main import cli

ARGS = ["infer", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--tp", "2", "--ep", "2",
        "--batch", "8", "--phase", "decode"]


def test_ceiling_by_hand():
    assert skew_ceiling(get_model("Mixtral-8x7B"), 2) == 2.0
    assert skew_ceiling(get_model("Mixtral-8x7B"), 8) == 4.0   # one slot a group: 8 x 1 / 2
    assert skew_ceiling(get_model("DeepSeek-V3"), 32) == 32.0


def test_infer_notes_a_capped_skew_and_costs_it_at_the_ceiling():
    capped = CliRunner().invoke(cli, ARGS + ["--expert-skew", "5"])
    at = CliRunner().invoke(cli, ARGS + ["--expert-skew", "2"])
    assert capped.exit_code == at.exit_code == 0
    assert ("note: --expert-skew 5 exceeds what EP 2 allows for Mixtral-8x7B (the busiest of 2 "
            "groups receives at most every routed copy it holds an expert for: 2x the mean); "
            "costed at 2") in capped.output
    assert "--expert-skew" not in at.output
    step = [ln for ln in capped.output.splitlines() if ln.startswith("TBT")]
    assert step == [ln for ln in at.output.splitlines() if ln.startswith("TBT")]
