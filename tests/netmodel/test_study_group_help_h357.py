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
    from netmodel.study.scenario_catalog import scenario_names

    runner = CliRunner()
    help_text = " ".join(runner.invoke(cli, ["serve", "--help"], terminal_width=200)
                         .output.split())
    assert "--scenario S The scenario: a shipped scenario (" + ", ".join(scenario_names()) \
        + "; netmodel compare --list)" in help_text
    listing = runner.invoke(cli, ["compare", "--list"])
    assert listing.exit_code == 0
    assert [line.split()[0] for line in listing.output.splitlines()] == list(scenario_names())


def _every_command_path(group, prefix=()):
    import click

    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield (*prefix, name)
        if isinstance(cmd, click.Group):
            yield from _every_command_path(cmd, (*prefix, name))


def test_help_never_breaks_a_line_inside_a_hyphenated_word():
    """click wrapped help after any hyphen: 'gpt-' / 'oss-120b', '--nccl-' / 'release',
    'micro-' / 'batches' across lines (50 such lines over the commands' --help)."""
    import re

    runner = CliRunner()
    paths = list(_every_command_path(cli))
    assert ("topology", "show") in paths and ("study", "lite-gpu") in paths
    for path in paths:
        result = runner.invoke(cli, [*path, "--help"], terminal_width=80)
        assert result.exit_code == 0, (path, result.output)
        broken = [line for line in result.output.splitlines()
                  if re.search(r"[A-Za-z0-9]-$", line)]
        assert not broken, (path, broken)
        assert "\u2011" not in result.output          # the held hyphens are given back
    # what a name holds is unchanged: the same words, wrapped at spaces only
    text = " ".join(runner.invoke(cli, ["infer", "--help"], terminal_width=80).output.split())
    assert "DeepSeek-V3, gpt-oss-120b, gpt-oss-20b; netmodel models)" in text
