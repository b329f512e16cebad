"""Every group's list of subcommands shows each one's summary whole: click cut a summary at
45 characters and ended it in '...' (``netmodel topology --help`` listed compare, export,
plot and show so), and a summary is one short sentence (at most two lines)."""

import click
from click.testing import CliRunner

from netmodel.cli.help_format import SUMMARY_WIDTH, command_summary
from netmodel.cli.main import cli


def _groups(group: click.Group, path: list[str]):
    """(path, group) of ``group`` and of every group under it."""
    yield path, group
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _groups(cmd, [*path, name])


def _listed(help_text: str) -> dict[str, str]:
    """The Commands section of a help screen: name -> its summary, wrapped lines joined."""
    rows: dict[str, str] = {}
    name = None
    for line in help_text.split("Commands:\n", 1)[1].splitlines():
        if not line.strip():
            break
        if line.startswith("  ") and not line.startswith("   "):
            name, _, text = line.strip().partition(" ")
            rows[name] = text.strip()
        else:
            rows[name] += " " + line.strip()
    return rows


def test_every_group_lists_whole_short_summaries():
    groups = list(_groups(cli, []))
    assert {tuple(p) for p, _ in groups} >= {(), ("topology",), ("study",)}
    for path, group in groups:
        out = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80)
        assert out.exit_code == 0, out.output
        listed = _listed(out.output)
        ctx = click.Context(group)
        assert set(listed) == set(group.list_commands(ctx)), path
        for name, text in listed.items():
            assert not text.endswith("..."), (path, name, text)
            assert len(text) <= SUMMARY_WIDTH, (path, name, text)
            if path:   # the top level lists its own table's lines (no module imported)
                assert text == command_summary(group.get_command(ctx, name)), (path, name)


def test_summary_is_the_first_sentence_whole():
    long = ("Draw a fabric (more than 512 GPUs: a representative part plus counts, e.g. "
            "the spine). Second sentence.")
    assert command_summary(click.Command("x", help=long)) == long.rsplit(" Second", 1)[0]
    assert command_summary(click.Command("x", help="A", short_help="B.")) == "B."
