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
