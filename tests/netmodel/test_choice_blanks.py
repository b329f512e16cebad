"""Blanks around a choice: one rule for every choice (compute.errors.chosen), the rule of a
number's text (compute.typed_numbers.read_number) and a list's items
(compute.validate.comma_list): blanks at either end are dropped.

Before, the rule went by option: ``--networks ' bound '`` and ``--phases ' decode'`` (lists,
their items stripped) and ``--fabric ' ring:n=8'`` ran, while ``--instances ' all'`` was
refused ('--instances ' all' is not allowed; allowed: 'all', 'alone''), as were
``--parallelism``, ``--phase``, ``--mode``, ``--compute-dtype``, a collective's operation,
``--algorithm``, ``--placement``, ``--tuner``, ``--format``, ``--share``, ``--workload``'s
names, a scenario file's choices and the library's (``parallelism=' tp'``,
``dimensions=' tp'``). Now each runs as the value without its blanks, and a value that is
no choice is refused quoting it as typed, spaces shown, with the allowed values."""

from __future__ import annotations

import pytest

from compute.errors import UserError, chosen
from compute.validate import choice
from tests.netmodel.cli_helpers import one_line_error, run_cli

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]
COLL = ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB"]
CMP = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot",
       "--scenarios", "lite-ocs"]
COST = ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
STUDY = ["study", "lite-gpu", "--out", "o", "--no-fabric", "--models", "Llama-3-8B", "--gpus",
         "Lite", "-q"]
EXPORT = ["topology", "export", "ring:n=8", "-o", "x.json"]

#: (the command before the option, the option, a value it takes, the line ' nope ' gets)
CASES = [
    (CMP, "--instances", "all", "error: --instances ' nope ' is not allowed; allowed: 'all', "
     "'alone'"),
    (CMP, "--parallelism", "tp", "error: Invalid value for '--parallelism': ' nope ' is not "
     "one of 'auto', 'tp', 'all' (see 'netmodel compare --help')"),
    (CMP, "--phases", "decode", "error: unknown phase 'nope'; known: 'decode', 'prefill' or "
     "'both'"),
    (INFER, "--phase", "decode", "error: unknown phase ' nope '; known: 'decode', 'prefill'"),
    (INFER, "--mode", "serial", "error: unknown mode ' nope '; known: 'overlap', 'serial'"),
    (INFER, "--compute-dtype", "fp8", "error: unknown compute dtype ' nope '; known: 'bf16', "
     "'fp4', 'fp8', 'int8'"),
    (COLL, "--algorithm", "ring", "error: --algorithm ' nope ': unknown algorithm ' nope '; "
     "known: 'auto', 'bidirectional-ring', 'collnet-chain', 'collnet-direct', 'direct', "
     "'halving-doubling', 'hierarchical', 'in-network', 'in-network-tree', 'pairwise', "
     "'recursive-doubling', 'ring', 'torus', 'tree', 'two-shot'"),
    (COLL, "--placement", "spread", "error: unknown placement ' nope '; known: 'contiguous', "
     "'rail-aligned', 'random', 'spread'"),
    (COLL, "--tuner", "none", "error: --tuner ' nope ': unknown tuner ' nope '; known: "
     "'aws-ofi-nccl:p5', 'nccl', 'none'"),
    (EXPORT, "--format", "json", "error: Invalid value for '--format': ' nope ' is not one of "
     "'json', 'graphml', 'astra-sim' (see 'netmodel topology export --help')"),
    (COST, "--share", "as-built", "error: --share ' nope ': unknown network share ' nope '; "
     "known: 'as-built', 'ports-used'"),
    (STUDY, "--networks", "bound", "error: unknown network 'nope'; known: 'bound', 'ideal', "
     "'ring'"),
]


@pytest.mark.parametrize("argv, option, value, refused", CASES,
                         ids=[c[1] for c in CASES])
def test_blanks_around_a_choice_are_dropped(tmp_path, argv, option, value, refused):
    """``OPTION ' VALUE '`` runs as ``OPTION VALUE`` (the same output, line for line: the
    last line of each quoted in the test's cases above), for every option taking a choice;
    ``' nope '`` is refused in one line (list items, their blanks dropped by the list's
    rule, are quoted without them)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = run_cli([*argv, option, value], tmp_path / "a")
    blank = run_cli([*argv, option, f" {value} "], tmp_path / "b")
    assert plain.exit_code == blank.exit_code == 0, blank.output
    assert blank.output == plain.output
    assert one_line_error(run_cli([*argv, option, " nope "], tmp_path)) == refused


def test_collective_operation_with_blanks():
    plain = run_cli(COLL)
    blank = run_cli([COLL[0], " all-reduce ", *COLL[2:]])
    assert plain.exit_code == blank.exit_code == 0 and blank.output == plain.output
    assert one_line_error(run_cli([COLL[0], " nope ", *COLL[2:]])) == (
        "error: unknown collective operation ' nope '; known: 'all-gather', 'all-reduce', "
        "'all-to-all', 'broadcast', 'reduce', 'reduce-scatter', 'send-recv'")


def test_the_one_rule():
    assert chosen(" all\t", ("all", "alone")) == "all"
    assert chosen("a ll", ("all",)) is None and chosen(" ", ("",)) == ""
    assert chosen(["all"], ("all",)) is None
    assert choice("s.toml", "placement", " contiguous ", ("contiguous",)) == "contiguous"
    with pytest.raises(UserError) as err:
        choice("s.toml", "placement", " nope ", ("contiguous", "spread"))
    assert str(err.value) == ("s.toml: placement ' nope ' is unknown; known: 'contiguous', "
                              "'spread'")


def test_library_choices_with_blanks():
    from compute.roofline_options import RooflineOptions
    from netmodel.study.search_options import check_parallelism_name
    from netmodel.study.serving_workload import WORKLOADS, get_workload

    assert check_parallelism_name(" tp ") == "tp"
    assert RooflineOptions(mode=" serial", compute_dtype="fp8 ").mode == "serial"
    assert RooflineOptions(compute_dtype="fp8 ").compute_dtype == "fp8"
    assert get_workload(" coding ") is WORKLOADS["coding"]
    with pytest.raises(UserError, match=r"^parallelism 't p' is unknown; known: 'all', "
                                        r"'auto', 'tp'$"):
        check_parallelism_name("t p")
