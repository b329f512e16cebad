"""``netmodel study --help`` lists its subcommands with whole summaries.

click shortens a command's docstring to a summary cut at its width and marked ``...``;
``lite-gpu``'s docstring is a paragraph, so the list read "H100 versus the Lite family:
first with ideal (and ring)...". The command carries its own short help instead.
"""

from click.testing import CliRunner

from netmodel.cli.main import cli


def _commands_section(text: str) -> list[str]:
    lines = text.splitlines()
    return lines[lines.index("Commands:") + 1:]


def test_study_subcommands_are_summarised_whole():
    result = CliRunner().invoke(cli, ["study", "--help"], terminal_width=80)
    assert result.exit_code == 0
    rows = _commands_section(result.output)
    assert rows, result.output
    assert not any(row.rstrip().endswith("...") for row in rows), rows
    assert rows[0].split()[0] == "lite-gpu"
    # the summary is a sentence, ending with its full stop
    assert " ".join(" ".join(rows).split()).endswith(".")


def test_serve_scenario_help_points_at_a_listing_that_lists():
    """``serve --scenario``'s help said 'netmodel compare lists them', but ``netmodel
    compare`` compares; ``compare --list`` is what lists the shipped scenarios."""
    from netmodel.study.scenarios import scenario_names

    runner = CliRunner()
    help_text = " ".join(runner.invoke(cli, ["serve", "--help"], terminal_width=200)
                         .output.split())
    assert "--scenario S Scenario: a shipped name (netmodel compare --list lists them)" \
        in help_text
    listing = runner.invoke(cli, ["compare", "--list"])
    assert listing.exit_code == 0
    assert [line.split()[0] for line in listing.output.splitlines()] == list(scenario_names())
