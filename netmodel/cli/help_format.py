"""How netmodel's help reads: lines never break inside a hyphenated name
(:class:`HelpFormatter`, run by every command through :class:`Context`), and a group lists
each subcommand's summary whole (:class:`SummaryGroup`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

#: Stands in for a hyphen inside a word while help text is wrapped (U+2011, one column
#: wide, at which textwrap does not break); written back as ``-`` once wrapped.
_HELD_HYPHEN = "\u2011"


def _hold_hyphens(text: str) -> str:
    """``text`` with each hyphen between two non-blanks held (:data:`_HELD_HYPHEN`)."""
    import re

    return re.sub(r"(?<=\S)-(?=\S)", _HELD_HYPHEN, text)


class HelpFormatter(click.HelpFormatter):
    """click's help formatter, but a line never breaks at a hyphen inside a word.

    click wraps as ``textwrap`` does, after any hyphen, so help read ``gpt-`` /
    ``oss-120b``, ``lite-`` / ``flat-inr`` and ``--nccl-`` / ``release`` across lines:
    names a reader copies, cut where a space would be. Help text is wrapped with its
    in-word hyphens held, then given them back; the widths are the same.
    """

    def _wrapped(self, write: Callable[[], None]) -> None:
        start = len(self.buffer)
        write()
        self.buffer[start:] = [s.replace(_HELD_HYPHEN, "-") for s in self.buffer[start:]]

    def write_text(self, text: str) -> None:
        self._wrapped(lambda: super(HelpFormatter, self).write_text(_hold_hyphens(text)))

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30,
                 col_spacing: int = 2) -> None:
        held = [(term, _hold_hyphens(text)) for term, text in rows]
        self._wrapped(lambda: super(HelpFormatter, self).write_dl(held, col_max, col_spacing))


class Context(click.Context):
    """The context of every netmodel command: its help is wrapped by :class:`HelpFormatter`."""

    formatter_class = HelpFormatter


def with_context(cmd: click.Command) -> click.Command:
    """``cmd`` (and, for a group, its subcommands) made to run in :class:`Context`."""
    cmd.context_class = Context
    for sub in getattr(cmd, "commands", {}).values():
        with_context(sub)
    return cmd


#: The longest summary a group lists for a subcommand (two lines of its help's column).
SUMMARY_WIDTH = 80


def command_summary(cmd: click.Command) -> str:
    """What a group's help lists beside the subcommand ``cmd``: its ``short_help``, else the
    first sentence of its help's first paragraph, whole (click cuts it at 45 characters and
    ends it in '...'; a summary longer than :data:`SUMMARY_WIDTH` is given a ``short_help``
    instead, which a test checks for every group).

    >>> command_summary(click.Command("x", help="Draw a fabric (a part of it). More."))
    'Draw a fabric (a part of it).'
    """
    if cmd.short_help:
        return cmd.short_help
    words = (cmd.help or "").partition("\n\n")[0].split()
    for i, word in enumerate(words):
        # a period ends the sentence unless a lowercase word follows it ('e.g. a')
        if word.endswith(".") and (i == len(words) - 1 or not words[i + 1][0].islower()):
            return " ".join(words[:i + 1])
    return " ".join(words)


class SummaryGroup(click.Group):
    """A click group listing each subcommand with :func:`command_summary` (whole, never cut):
    the class of every netmodel group."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, self.summary(ctx, n)) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        """As click resolves it, but an unknown subcommand's line lists the known ones (as
        every unknown name's does): click's named the help alone ('No such command
        \'infr\'')."""
        name = args[0] if args else ""
        if not name.startswith("-") and self.get_command(ctx, name) is None \
                and not ctx.resilient_parsing:
            from compute.errors import known

            ctx.fail(f"unknown command {name!r}; known: {known(self.list_commands(ctx))}")
        return super().resolve_command(ctx, args)

    def summary(self, ctx: click.Context, name: str) -> str:
        """The summary listed beside subcommand ``name``."""
        cmd = self.get_command(ctx, name)
        return "" if cmd is None else command_summary(cmd)


def commands_under(group: click.Command) -> list[tuple[tuple[str, ...], click.Command]]:
    """(words, command) of every group and command under ``group``, itself first as
    ``()``, walked from the command line itself (tests and scripts that check each command's
    options or help).

    Examples
    --------
    >>> @click.group()
    ... def top():
    ...     pass
    >>> @top.command()
    ... def leaf():
    ...     pass
    >>> [(path, cmd.name) for path, cmd in commands_under(top)]
    [((), 'top'), (('leaf',), 'leaf')]
    >>> command_paths(top)
    [(), ('leaf',)]
    """
    def walk(command, path, ctx):
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                yield from walk(sub, (*path, name), click.Context(sub, parent=ctx, info_name=name))

    return list(walk(group, (), click.Context(group, info_name=group.name)))


def command_paths(group: click.Command) -> list[tuple[str, ...]]:
    """The words of every group and command under ``group``, itself first as ``()``,
    walked from the command line itself (for tests and benchmarks that run each --help;
    :func:`commands_under`'s words, its example showing both)."""
    return [path for path, _ in commands_under(group)]
