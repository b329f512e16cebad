"""A command's --help says what it computes, all of it (found reading the manual as a user,
h759): `sweep --help` said tokens/s/SM as fabric parameters vary, though a cost.* parameter
is scored by $ per million tokens (docs/study.md); `compare --help` named the columns up to
the network's share and not tokens/s/W and $/Mtok, which every row prints; `study lite-gpu
--help` named its first three parts and none of those its --no-* options skip."""

from __future__ import annotations

import re

from tests.netmodel.cli_helpers import run_cli


def _description(*command: str) -> str:
    """The text of ``netmodel COMMAND --help`` above its options, on one line."""
    r = run_cli([*command, "--help"])
    assert r.exit_code == 0, r.output
    head = r.output.split("Options:")[0]
    return " ".join(head.split())


def test_sweep_help_names_the_cost_score():
    # the --param help takes cost.NAME values, so the description says how they are scored
    assert "cost." in " ".join(run_cli(["sweep", "--help"]).output.split())
    assert "per million tokens" in _description("sweep")


def test_compare_help_names_every_column_group_of_its_table():
    text = _description("compare")
    for words in ("tokens/s/SM", "tokens/s/W", "per million tokens", "availability"):
        assert words in text, words


def test_study_help_names_each_part_a_no_option_skips():
    options = run_cli(["study", "lite-gpu", "--help"]).output.split("Options:")[1]
    skips = sorted(set(re.findall(r"^  --no-([a-z-]+)", options, re.M)) - {"plot"})
    # each --no-PART option, and the words its part goes by in the description
    words = {"fabric": "fabric scenario", "sweep": "per-hop latency", "paper": "paper's",
             "reliability": "blast radius", "cost": "cost", "crossovers": "crossovers",
             "serving": "serving", "packed": "packed"}
    assert skips == sorted(words), skips
    text = _description("study", "lite-gpu")
    for part in skips:
        assert re.search(re.escape(words[part]), text), part
    assert "mixture of experts" in text   # --moe-model none skips that part


def test_spares_needed_note_names_a_command_that_tells():
    # the note under compare --reliability (and summary.md's line) sent the reader to
    # "netmodel availability's Monte Carlo", which prints no spares_needed: it now says the
    # run to make (--spares N, where) and the figure that answers, each a real option
    from netmodel.study.compare import CompareRow, threshold_low_lines
    from netmodel.study.summary_costs import _approximations

    row = CompareRow(model="Llama-3-8B", gpu="Lite", phase="decode", feasible=True,
                     scenario="lite-flat", label="lite-flat@Lite", latency_name="tbt",
                     latency_limit_s=0.05, threshold_low=True)
    options = run_cli(["availability", "--help"]).output
    table = run_cli(["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B",
                     "--trials", "2", "-q"]).output
    for line in (threshold_low_lines([row])[0], _approximations([row])[-1]):
        flags = re.findall(r"--[a-z-]+", line)
        assert "--spares" in flags, line
        for flag in flags:
            assert re.search(rf"^  {flag}\b", options, re.M), flag
        assert "time below 99% capacity" in line and "time below 99% capacity" in table
