"""No --help screen cuts a word across lines: click breaks a word longer than the help
column wherever the column ends (collective --tuner's help read
'netmodel/data/collective_t' / 'uner_plugins.toml'). Every word of every option's help and
of every command's description is printed whole as a terminal of 80 columns or more shows
it: click writes help min(columns, 80) - 2 = 78 wide (CliRunner writes 80 unless told)."""

import click
from click.testing import CliRunner

from netmodel.cli.help_format import Context
from netmodel.cli.main import cli


def _commands(group: click.Group, path: list[str]):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield [*path, name], cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, [*path, name])


def test_every_help_word_is_printed_whole():
    runner = CliRunner()
    checked, cut = 0, []
    for path, cmd in _commands(cli, []):
        out = runner.invoke(cli, [*path, "--help"], terminal_width=78)
        assert out.exit_code == 0, (path, out.output)
        printed = set(out.output.split())
        ctx = Context(cmd, info_name=path[-1])
        texts = [(cmd.help or "").replace("\b", "")]
        texts += [rec[1] for p in cmd.get_params(ctx) if (rec := p.get_help_record(ctx))]
        for text in texts:
            for word in text.split():
                checked += 1
                if word not in printed:
                    cut.append((" ".join(path), word))
    assert not cut
    assert checked > 1000
