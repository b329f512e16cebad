"""The ``netmodel`` command group: its commands, imported on first use, and how their user
errors and output reach the terminal.

Start-up must stay fast (``netmodel --help`` under 0.3 s): this module imports only click and
the options the commands share (:mod:`netmodel.cli.options`, which imports only click too);
each command group lives in its own ``netmodel.cli.*`` module (listed in ``_COMMANDS``),
which imports numpy, networkx, matplotlib and scipy inside the command functions, never at
module level.
Every :class:`~compute.errors.UserError`, and every usage error of click's (an unknown option,
a value an option's type refuses), becomes one line on stderr and exit status 2, worded by
:mod:`netmodel.cli.refusals`; :func:`main` readies the process first
(:mod:`netmodel.cli.process`: output streams, matplotlib's folder).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Iterable, Sequence
from contextlib import suppress
from typing import Any

import click

from compute.errors import NothingFeasible
from netmodel.cli.help_format import Context, SummaryGroup, with_context
from netmodel.cli.interrupt import interruption, say_interrupted, stop_on_signals
from netmodel.cli.options import INVOKED
from netmodel.cli.process import matplotlib_folder, reader_may_leave, write_error
from netmodel.cli.refusals import (
    UserFacingError,
    flag_of,
    flags_for_parameters,
    named_by_value,
    one_line_usage,
    out_of_memory,
    refuse_repeated_options,
    typed_options,
)

# name -> (module, attribute, one-line help); modules are imported only when the command runs
# or when --help lists it.
_COMMANDS = {
    "hardware": ("netmodel.cli.compute", "hardware", "List GPU types, or show one."),
    "models": ("netmodel.cli.compute", "models", "List LLM models, or show one."),
    "infer": ("netmodel.cli.compute", "infer", "Per-stage roofline of one configuration."),
    "search": ("netmodel.cli.compute", "search", "Best TP degree and batch under the SLO."),
    "study": ("netmodel.cli.study", "study", "Run a packaged study (lite-gpu)."),
    "topology": ("netmodel.cli.topology", "topology", "Build, analyse, draw and export fabrics."),
    "collective": ("netmodel.cli.collective", "collective", "Cost of one collective on a fabric or a scenario."),
    "costs": ("netmodel.cli.collective", "costs", "Lookup table of collective costs."),
    "compare": ("netmodel.cli.study", "compare", "Compare scenarios (fabrics) for models."),
    "sweep": ("netmodel.cli.study", "sweep", "Sweep scenario parameters."),
    "calibrate": ("netmodel.cli.calibrate", "calibrate",
                  "Fit an engine profile to measured latencies."),
    "serve": ("netmodel.cli.serving", "serve",
              "Disaggregated serving: prefill and decode pools, the KV cache over the fabric."),
    "blast-radius": ("netmodel.cli.reliability", "blast_radius",
                     "What one failure of each component takes down."),
    "availability": ("netmodel.cli.reliability", "availability",
                     "Delivered capacity over time with failures, repairs and spares."),
    "yield": ("netmodel.cli.economics", "yield_cmd", "Dies per wafer, yield, cost per good die."),
    "cost": ("netmodel.cli.economics", "cost", "Capex, power, tokens/s/W and $ per token."),
}


#: Exit status of a command that ran but found no configuration meeting the SLO (its table
#: and files are still printed and written). 2 is a user error; 1 a bug.
NOTHING_FEASIBLE = NothingFeasible.exit_status


def exit_if_nothing_feasible(rows: Iterable[Any]) -> None:
    """Exit with :data:`NOTHING_FEASIBLE` when no row of a result is feasible."""
    rows = list(rows)
    if rows and not any(r.feasible for r in rows):
        click.echo("nothing feasible: no configuration meets the SLO (exit status "
                   f"{NOTHING_FEASIBLE})", err=True)
        raise click.exceptions.Exit(NOTHING_FEASIBLE)


class LazyGroup(SummaryGroup):
    """A click group whose subcommands are imported on first use, and which turns user
    errors into :class:`UserFacingError`; its summaries are :data:`_COMMANDS`' (so its help
    imports no command module)."""

    context_class = Context

    def invoke(self, ctx: click.Context) -> Any:
        from compute.config_files import noting_reads
        from compute.errors import UserError
        from netmodel.study.run_words import parameters_named_by

        try:
            # an output never replaces one of the command's inputs; the reports name the
            # run's parameters by their flags
            with noting_reads(), parameters_named_by(flag_of):
                return super().invoke(ctx)
        except UserError as exc:
            invoked = ctx.meta.get(INVOKED, (None, []))
            message = flags_for_parameters(str(exc), *invoked)
            if not isinstance(exc, NothingFeasible):
                message = named_by_value(message, typed_options(*invoked))
            err = UserFacingError(message)
            err.exit_code = getattr(exc, "exit_status", UserFacingError.exit_code)
            raise err from None
        except click.UsageError as exc:
            raise one_line_usage(exc, _invoked_path(ctx)) from None
        except MemoryError:
            raise out_of_memory() from None

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise one_line_usage(exc) from None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name, cmd, rest = super().resolve_command(ctx, args)
        ctx.meta[INVOKED] = (cmd, list(rest))   # for flags_for_parameters and as_typed
        ctx.meta[_INVOKED_NAME] = name           # for _invoked_path
        if cmd is not None and not ctx.resilient_parsing:   # not a line being completed
            refuse_repeated_options(cmd, name, list(rest), ctx)
        return name, cmd, rest

    def list_commands(self, ctx: click.Context) -> list[str]:
        lazy = {n for n, (mod, _, _) in _COMMANDS.items() if _available(mod)}
        return sorted(lazy | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        if name not in _COMMANDS or not _available(_COMMANDS[name][0]):
            return None
        mod, attr, _ = _COMMANDS[name]
        return with_context(getattr(importlib.import_module(mod), attr))

    def summary(self, ctx: click.Context, name: str) -> str:
        return _COMMANDS[name][2] if name in _COMMANDS else super().summary(ctx, name)


#: ``ctx.meta`` key of the name :class:`LazyGroup` invoked its command by (the command and
#: its arguments: :data:`~netmodel.cli.options.INVOKED`).
_INVOKED_NAME = "netmodel.invoked_name"


def _invoked_path(ctx: click.Context) -> str | None:
    """The command path of the (sub)command :class:`LazyGroup` invoked (``netmodel
    topology show``), walked from its arguments, for a usage error click raised without
    a context (a missing value: ``Option '--tbt' requires an argument``); None before
    one was resolved."""
    command, args = ctx.meta.get(INVOKED, (None, []))
    name = ctx.meta.get(_INVOKED_NAME)
    if command is None or not name:
        return None
    words = [ctx.command_path, name]
    while isinstance(command, click.Group) and args and args[0] in command.commands:
        words.append(args[0])
        command, args = command.commands[args[0]], args[1:]
    return " ".join(words)


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="netmodel")
def cli() -> None:
    """netmodel: model AI-cluster fabrics and LLM inference on them, from first principles.

    Which fabric lets a cluster of small "Lite" GPUs serve an LLM as fast per SM as
    today's H100 cluster? Units on the command line take suffixes (64MiB, 0.1us, 450GB/s).
    """


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point.

    Bytes of an argument that are not UTF-8 (a file name) arrive as lone surrogates; the
    output streams write them back as the same bytes, as Python does under the C locale,
    rather than raise UnicodeEncodeError where stdout is strict ('wrote <path>' of such a
    name printed a traceback and exit 1 after the file was written).

    A reader that closes the output early (``netmodel hardware | head -1``) changes
    nothing but what it reads: the rest of the output is dropped, silently, and the
    command ends as it would have (its files written, its own exit status). Where the
    reader left mid-output, click exited 1, and 0 where it left after the last write, so
    the status of one command line changed from run to run
    (:class:`~netmodel.cli.process._ReaderMayLeave`).
    Any other failure to write stdout (``netmodel hardware > /dev/full``: ENOSPC; EIO; a
    stdout closed before the start, ``>&-``: EBADF, where click dropped it all, exit 0) is
    not the reader's choice but output lost: the command still runs to its end (its files
    written whole, all or nothing as ever), then one line on stderr says what failed and
    why (``error: cannot write the output to standard output: No space left on device``)
    and the exit status is 1, where it would have been 0 or 3 (a user error keeps its 2).
    A stderr that cannot be written gives the same status, without the line. Before, the
    first failed write raised: a traceback, status 1, the command stopped there.

    Every figure is drawn with matplotlib's Agg backend into a file (its suffix picks the
    format), so the environment's ``MPLBACKEND`` is not read: it is set to ``agg`` for this
    process and the Dask workers it starts (an unknown name there made ``import matplotlib``
    raise a ValueError traceback after the work was done); where the user's folders cannot
    hold matplotlib's settings and font cache, it gets one
    (:func:`~netmodel.cli.process.matplotlib_folder`).

    Ctrl-C (SIGINT) or SIGTERM stops the command where it is (:class:`~netmodel.cli.interrupt.Interrupted`): what
    it was writing is removed (every file is written whole or not at all, an output folder
    replaced whole or left as it was), one line on stderr says which signal, and the exit
    status is :data:`~netmodel.cli.interrupt.INTERRUPTED`'s (130 or 143), as a shell reports a process the signal
    killed. Before, Ctrl-C printed ``Aborted!`` with exit status 1 (as a bug), and SIGTERM
    killed the process with a temporary file or staging folder left beside the output."""
    import sys

    given = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = reader_may_leave(sys.stdout, 1), reader_may_leave(sys.stderr)
    try:
        with stop_on_signals():   # matplotlib's folder too: its check imports tempfile
            os.environ["MPLBACKEND"] = "agg"
            matplotlib_folder()
            cli.main(args=argv, prog_name="netmodel")
    except SystemExit as done:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        lost = write_error(sys.stdout)
        if lost is not None and sys.stderr is not None:
            reason = lost.strerror or type(lost).__name__
            sys.stderr.write(f"error: cannot write the output to standard output: {reason}\n")
            sys.stderr.flush()
        if (lost is not None or write_error(sys.stderr) is not None) \
                and done.code in (None, 0, 3):
            raise SystemExit(1) from None
        raise
    except BaseException as exc:
        stop = interruption(exc)
        if stop is None:
            raise
        for stream in (sys.stdout, sys.stderr):
            with suppress(Exception):
                stream.flush()
        raise SystemExit(say_interrupted(stop.name)) from None
    finally:
        sys.stdout, sys.stderr = given


if __name__ == "__main__":  # pragma: no cover
    main()
