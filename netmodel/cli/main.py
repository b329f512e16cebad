"""The ``netmodel`` command group: its commands, imported on first use, and how their user
errors and output reach the terminal.

Start-up must stay fast (``netmodel --help`` under 0.3 s): this module imports only click and
the options the commands share (:mod:`netmodel.cli.options`, which imports only click too);
each command group lives in its own ``netmodel.cli.*`` module (listed in ``_COMMANDS``),
which imports numpy, networkx, matplotlib and scipy inside the command functions, never at
module level.
Every :class:`~compute.errors.UserError`, and every usage error of click's (an unknown option,
a value an option's type refuses), becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import codecs
import errno
import importlib
import importlib.util
import io
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import IO, Any

import click

from compute.errors import NothingFeasible
from netmodel.cli.help_format import Context, SummaryGroup, with_context
from netmodel.cli.interrupt import interruption, say_interrupted, stop_on_signals
from netmodel.cli.options import INVOKED, typed_values

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


class UserFacingError(click.ClickException):
    """A :class:`~compute.errors.UserError` on its way out: one line, exit status 2 (3 for
    :class:`~compute.errors.NothingFeasible`)."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        from compute.errors import cut_long, shown

        super().__init__(cut_long(shown(message)))

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def _out_of_memory() -> UserFacingError:
    """The one line a command that ran out of memory ends with, in place of MemoryError's
    traceback: every request is estimated and refused before its memory is spent
    (:mod:`compute.limits`), so it comes where a ``NETMODEL_MAX_*`` limit was raised past
    what the machine holds (a sweep of 10**8 points a parameter: exit status 2, those
    settings named, as the input to mend), else from the machine alone (exit status 1, as a
    disk that is full). What the command was writing is removed, as on any error."""
    raised = sorted(f"{k}={v.strip()}" for k, v in os.environ.items()
                    if k.startswith("NETMODEL_MAX_") and v.strip())
    if raised:
        err = UserFacingError(f"out of memory: the request is larger than this machine holds; "
                              f"{', '.join(raised)} let it past the limit that refuses it "
                              f"before its memory is spent: lower (or unset) "
                              f"{'it' if len(raised) == 1 else 'them'}, or ask for less")
    else:
        err = UserFacingError("out of memory: the request is larger than this machine holds; "
                              "ask for less, or run it where more memory is free")
        err.exit_code = 1
    return err


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
            raise _one_line_usage(exc, _invoked_path(ctx)) from None
        except MemoryError:
            raise _out_of_memory() from None

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _one_line_usage(exc) from None

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


def flag_of(parameter: str) -> str:
    """The command line's flag for a run's ``parameter``, as the library's reports name it
    (:func:`netmodel.study.run_words.named`): ``max_batch`` is ``--max-batch``.

    >>> flag_of("overlap_collectives")
    '--overlap-collectives'
    """
    return "--" + parameter.replace("_", "-")


def flags_for_parameters(message: str, command: click.Command | None,
                         args: Sequence[str]) -> str:
    """A library error's ``message`` as the command line says it: each parameter it names
    (``mtp_tokens``, ``options.mtp_tokens``, ``area_share``) that is an option of
    ``command`` (a group: the subcommand ``args`` name) written as that option's flag
    (``--mtp-tokens``). Library errors name parameters, the command line its flags. Only
    names with an underscore are taken (a plain word such as ``model`` is prose too), and
    none right after ``": "``: that is a file's key of the same name, as
    :mod:`compute.validate` writes one (``m.toml: compute_dtype 'x' is unknown``), nor in
    the list after ``allowed: `` or ``known: `` (a file's or table's keys, as
    :func:`compute.config_files.check_keys` lists them: ``allowed: ..., compute_dtype, ...``
    read ``--compute-dtype``, a key no model file takes).

    >>> opt = click.Option(["--mtp-tokens", "mtp_text"])
    >>> flags_for_parameters("give mtp_tokens 0 (options.mtp_tokens 2)",
    ...                      click.Command("x", params=[opt]), [])
    'give --mtp-tokens 0 (--mtp-tokens 2)'

    A plain name is taken written as a parameter is given, ``algorithms=...``:

    >>> flags_for_parameters("leave it out (algorithms=...): the algorithms",
    ...                      click.Command("x", params=[click.Option(["--algorithms"])]), [])
    'leave it out (--algorithms ...): the algorithms'

    A name of the library's that is not the flag's own is said as the flag where the
    option declares it (:class:`~netmodel.cli.options.RegistryHelp`'s ``parameters``):

    >>> from netmodel.cli.options import RegistryHelp
    >>> bw = RegistryHelp(["--load-bandwidth"], parameters=["host_storage_bandwidth"])
    >>> flags_for_parameters("host_storage_bandwidth applies only with load_from 'storage'",
    ...                      click.Command("x", params=[bw, click.Option(["--load-from"])]),
    ...                      [])
    "--load-bandwidth applies only with --load-from 'storage'"
    """
    import re

    args = list(args)
    while isinstance(command, click.Group) and args:
        command = command.commands.get(args[0])
        args = args[1:]
    if command is None:
        return message
    listed = re.search(r"\b(?:allowed|known): ", message)
    cut = len(message) if listed is None else listed.start()
    head, tail = message[:cut], message[cut:]   # tail: the keys a file may hold, as they are
    for param in command.params:
        for flag in getattr(param, "opts", ()):
            if flag.startswith("--") and "-" in flag[2:]:
                name = flag[2:].replace("-", "_")
                head = re.sub(rf"(?<![\w.])(?<!: )(?:options\.)?{name}(?!\w)", flag, head)
            elif flag.startswith("--"):   # 'algorithms=...': a parameter, however plain
                head = re.sub(rf"(?<![\w.])(?<!: ){flag[2:]}=\.\.\.", f"{flag} ...", head)
        # the library's names for its value that are not the flag's own, as it declares them
        for name in getattr(param, "parameters", ()):
            head = re.sub(rf"(?<![\w.])(?<!: ){name}(?!\w)", param.opts[0], head)
    return head + tail


def typed_options(command: click.Command | None,
                  args: Sequence[str]) -> list[tuple[str, str]]:
    """Each ``(flag, value)`` typed for an option of ``command`` (a group: the subcommand
    ``args`` name) in ``args``, in the order typed, the flag as its longest spelling
    (``-o x`` is ``('--out', 'x')``); then, for a command taking one fabric SPEC argument
    (:class:`~netmodel.cli.options.FabricCommand`), it as ``('fabric', text)``, the words
    a spec the library refuses is said by (``fabric 'ring:n=8,': ...``; ``topology
    compare``'s several, each named by the library, are not guessed between).

    >>> from netmodel.cli.topology import topology
    >>> typed_options(topology, ["show", "--pair", "gpu0", "gpu1", "ring:n=8,"])
    [('--pair', 'gpu0 gpu1'), ('fabric', 'ring:n=8,')]
    """
    from netmodel.cli.options import FabricCommand

    args = list(args)
    while isinstance(command, click.Group) and args:
        command = command.commands.get(args[0])
        args = args[1:]
    if command is None:
        return []
    typed = [(max(p.opts, key=len), value) for p in command.params
             if isinstance(p, click.Option) and not p.is_flag
             for _, value in typed_values(p, args[:_separator(command, args)])]
    if isinstance(command, FabricCommand):   # its arguments, as click parsed them
        with suppress(click.ClickException):
            read = command.make_parser(click.Context(command, resilient_parsing=True))
            values = read.parse_args(list(args))[0]
            typed += [("fabric", values[p.name]) for p in command.params
                      if isinstance(p, click.Argument) and p.nargs == 1
                      and isinstance(values.get(p.name), str)]
    return typed


def named_by_value(message: str, typed: Sequence[tuple[str, str]]) -> str:
    """A refusal that names no flag (``unknown GPU 'nope'``, ``ring: n must be an integer
    >= 2, got 0``) said with the one flag (or argument) of ``typed`` (``(label, text)``
    pairs) whose text it quotes, or whose spec or ``KEY=VALUE`` it starts with, as typed in
    front: the user sees which of the values typed to mend. Unchanged where the message
    names a flag (``--x``) or a typed text whole, or where no label or several match.

    >>> named_by_value("unknown GPU 'nope'; known: ...", [("--scenario", "lite-flat@nope"),
    ...                                                 ("--model", "Llama-3-8B")])
    "--scenario 'lite-flat@nope': unknown GPU 'nope'; known: ..."
    >>> named_by_value("ring: n must be an integer >= 2, got 0", [("spec", "ring:n=0")])
    "spec 'ring:n=0': ring: n must be an integer >= 2, got 0"
    >>> named_by_value("unknown model ''", [("--model", "x"), ("--scenario", "")])
    "--scenario '': unknown model ''"
    """
    import re

    if re.search(r"(?<![\w-])--[a-z]", message):
        return message
    head = re.split(r"\b(?:allowed|known): ", message)[0]   # not the lists of names
    hits = []
    for label, text in typed:
        if len(text) > 2 and text in message:   # a typed text named whole: said already
            return message
        # its parts: a spec's builder and values, NAME@GPU's two, PATH=VALUES' two
        pieces = {text, *re.split(r"[:@,=]", text), *text.split("=", 1), *text.split("@")}
        lead = re.split(r"[:=]", text)[0]   # a spec's builder, PATH of PATH=VALUES
        named = lead != text and (
            len(lead) >= 2 and re.match(rf"{re.escape(lead)}[: ]", head) or
            len(lead) >= 4 and re.search(rf"(?<![\w.]){re.escape(lead)}(?![\w.])", head) or
            "." in lead and re.match(rf"{re.escape(lead.split('.')[-1])}[: ]", head))
        if named or any(repr(p) in head for p in pieces):
            hits.append((label, text))
    if len(hits) != 1:
        return message
    label, text = hits[0]
    return f"{label} {text!r}: {message}"


@contextmanager
def value_refused_as(flag: str, typed: str, *starts: str) -> Iterator[None]:
    """A library :class:`~compute.errors.UserError` raised inside that refuses the value
    ``flag`` gave (its message starts with one of ``starts``: the library's words for that
    value, ``group size``, ``failed node``), said with the flag and the text as typed in
    front. Library errors name parameters or values, the command line its flags; any other
    error passes as it is. Wrap only the call that reads that value.

    >>> from compute.errors import UserError
    >>> try:
    ...     with value_refused_as("--group", "9", "group size"):
    ...         raise UserError("group size 9 is larger than the fabric's 8 GPUs")
    ... except UserError as exc:
    ...     print(exc)
    --group '9': group size 9 is larger than the fabric's 8 GPUs
    """
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        if not str(exc).startswith(starts):
            raise
        raise type(exc)(f"{flag} {typed!r}{_default_said(flag)}: {exc}") from None


def output_refused_as(flag: str, typed: str, what: str = "output folder"
                      ) -> AbstractContextManager[None]:
    """:func:`value_refused_as` for the output ``flag`` gave as ``typed`` (``what``: an
    ``output folder``, an ``output file``): the refusals of its checks (``output folder
    'loop' is a symbolic link that loops``) and of its write (``cannot write output folder
    'o': ...``, a place the checks let through that could not be written after all: a full
    disk, a folder made read-only since), each said with the flag in front. Wrap both the
    check and the write.

    >>> from compute.errors import UserError
    >>> try:
    ...     with output_refused_as("--out", "o"):
    ...         raise UserError("cannot write output folder 'o': Permission denied")
    ... except UserError as exc:
    ...     print(exc)
    --out 'o': cannot write output folder 'o': Permission denied
    """
    return value_refused_as(flag, typed, what, f"cannot write {what}")


def _default_said(flag: str) -> str:
    """``" (its default)"`` where the running command's option ``flag`` was not given and
    took its default (``collective --fabric ring:n=4`` refused "--group '8': group size 8 is
    larger than the fabric's 4 GPUs", a value the user never typed), else ``""`` (given, or
    no command running).

    >>> _default_said("--group")
    ''
    """
    from click.core import ParameterSource

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return ""
    param = next((p for p in ctx.command.params if flag in getattr(p, "opts", ())), None)
    if param is None or param.name is None:
        return ""
    return " (its default)" if ctx.get_parameter_source(param.name) is \
        ParameterSource.DEFAULT else ""


def refuse_repeated_options(command: click.Command, name: str | None, args: list[str],
                            parent: click.Context | None = None) -> None:
    """Refuse an option that takes one value given more than once with different values
    (``--tbt 1ms --tbt 2ms``, ``--models A --model B``): click keeps the last without a
    word, so the run would answer a question the user did not ask. Options that take a
    list by repetition (``multiple``), flags and arguments are not counted; the same value
    twice is taken (it is one question), compared as the command reads it where the option
    says how (:class:`~netmodel.cli.options.RegistryHelp`'s ``reads``: ``--tbt 50ms --tbt
    0.05``; a list read, item by item) or has a click type (``--seed 8 --seed +8``), else
    as typed; a text the reading refuses is compared as typed. The refusal names the
    option by the flag first typed, the others beside their values. ``command`` (a group:
    the subcommand ``args`` name) is parsed as click parses it (nothing run); a command
    line click's own parse refuses (a missing value) or one asking for --help is left to
    that parse.

    >>> cmd = click.Command("x", params=[click.Option(["--tbt"])])
    >>> refuse_repeated_options(cmd, "x", ["--tbt", "1ms", "--tbt=1ms"])
    >>> refuse_repeated_options(cmd, "x", ["--tbt", "1ms", "--tbt", "2ms"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --tbt is given twice ('1ms' and '2ms'); it takes one value: give it once
    """
    from compute.errors import UserError
    from compute.validate import describe

    while isinstance(command, click.Group) and args and args[0] in command.commands:
        name, command, args = args[0], command.commands[args[0]], args[1:]
    cut = _separator(command, args)
    words = args[:cut]
    if isinstance(command, click.Group) or any(
            w in command.get_help_option_names(parent or click.Context(command)) for w in words):
        return
    ctx = click.Context(command, info_name=name, parent=parent, ignore_unknown_options=True,
                        resilient_parsing=True)
    try:
        _, _, order = command.make_parser(ctx).parse_args(args=list(args))
    except click.UsageError:
        return
    for param in dict.fromkeys(order):
        if not isinstance(param, click.Option) or param.multiple or param.count \
                or param.is_flag or order.count(param) < 2:
            continue
        given = typed_values(param, words)
        if len({_meaning(param, v, ctx) for _, v in given}) < 2:
            continue   # the same value again (or not read back): one question
        flags = {f for f, _ in given}
        texts = [describe(v) if len(flags) == 1 else f"{f} {describe(v)}" for f, v in given]
        times = "twice" if len(given) == 2 else f"{len(given)} times"
        listed = " and ".join(texts) if len(texts) == 2 else ", ".join(texts)
        raise UserError(f"{given[0][0]} is given {times} ({listed}); it takes one value: "
                        "give it once")


def _separator(command: click.Command, args: Sequence[str]) -> int:
    """The index in ``args`` of the ``--`` that ends ``command``'s options (``len(args)``
    where none does): not a ``--`` that is an option's value, as click reads ``--max-batch
    --`` (its value '--'), which the refusal of it given twice showed as ''.

    >>> cmd = click.Command("x", params=[click.Option(["--n"]), click.Option(["-q"],
    ...                                                                   is_flag=True)])
    >>> _separator(cmd, ["--n", "--", "-q", "--", "-1"]), _separator(cmd, ["-q"])
    (3, 1)
    """
    takes = {flag: p.nargs for p in command.params
             if isinstance(p, click.Option) and not p.is_flag and not p.count
             for flag in p.opts}
    i = 0
    while i < len(args):
        if args[i] == "--":
            return i
        i += 1 + takes.get(args[i], 0)
    return len(args)


def _meaning(param: click.Option, text: str, ctx: click.Context) -> tuple[str, Any]:
    """What ``text``, one value of ``param`` as typed, means, for telling two spellings of
    one value from two values: ``("value", v)`` read by the option's ``reads`` or its click
    type, ``("text", text)`` where it has neither (a plain string) or the reading refuses
    it (a refused text is compared as typed, so it is never taken for another). A value
    that does not equal itself (NaN) is kept as its text."""
    from compute.errors import UserError

    reads = getattr(param, "reads", None)
    if reads is None and (param.type is click.STRING or param.nargs != 1):
        return ("text", text)
    try:
        value = reads(text) if reads is not None else param.type.convert(text, param, ctx)
        value = tuple(value) if isinstance(value, list) else value   # GPU nodes of --group
        hash(value)
    except (UserError, click.ClickException, ValueError, TypeError, ArithmeticError):
        return ("text", text)
    return ("value", value) if value == value else ("text", text)


def _one_line_usage(exc: click.UsageError, path: str | None = None) -> click.ClickException:
    """A usage error of click's (an unknown option, a value its type refuses, a missing
    option) as one ``error:`` line naming the command's help, exit status 2, as a
    :class:`~compute.errors.UserError` is shown; a bare group's help stays help. ``path``:
    the command's path where click gave the error no context (a missing value)."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        return exc
    from compute.errors import one_line

    path = exc.ctx.command_path if exc.ctx is not None else path
    where = f" (see '{path} --help')" if path else ""
    text = unknown_option_line(exc) if isinstance(exc, click.NoSuchOption) \
        else exc.format_message()
    if isinstance(exc, click.NoSuchOption) and exc.ctx is not None:
        text = _read_as_options(text, exc.option_name, exc.ctx.meta.get(INVOKED, (None, []))[1])
    return UserFacingError(one_line(text.rstrip(".")) + where)


def _read_as_options(line: str, option: str, typed: Sequence[str]) -> str:
    """The line of an unknown short option said with the word typed that click read as a
    cluster of short options (an argument ``-inf`` is ``-i -n -f``: 'No such option
    '-i'' named nothing typed), and how to give it as a value.

    >>> _read_as_options("No such option '-i'.", "-i", ["show", "-inf"])
    "No such option '-i' (of '-inf', read as options: give a value that starts with '-' \
after '--', e.g. -- -inf)"
    """
    word = next((a for a in typed if not a.startswith("--") and a.startswith(option)
                 and len(a) > len(option)), None)
    if word is None:
        return line
    return (f"{line.rstrip('.')} (of {word!r}, read as options: give a value that starts "
            f"with '-' after '--', e.g. -- {word})")


def unknown_option_line(exc: click.NoSuchOption) -> str:
    """The line of an unknown option, written here from the option and click's near names
    (its wording changed within the click releases netmodel takes: 8.2.0 wrote ``No such
    option: --batch Did you mean --max-batch?``), so every click writes the same line.

    >>> unknown_option_line(click.NoSuchOption("--batch", possibilities=["--max-batch"]))
    "No such option '--batch'. Did you mean '--max-batch'?"
    """
    near = sorted(exc.possibilities or ())
    line = f"No such option {exc.option_name!r}."
    if len(near) == 1:
        return f"{line} Did you mean {near[0]!r}?"
    if near:
        return f"{line} (Did you mean one of: {', '.join(map(repr, near))}?)"
    return line


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="netmodel")
def cli() -> None:
    """netmodel: model AI-cluster fabrics and LLM inference on them, from first principles.

    Which fabric lets a cluster of small "Lite" GPUs serve an LLM as fast per SM as
    today's H100 cluster? Units on the command line take suffixes (64MiB, 0.1us, 450GB/s).
    """


class _ReaderMayLeave(io.FileIO):
    """The lowest layer of ``netmodel``'s stdout and stderr (:func:`_reader_may_leave`):
    where a write fails, the descriptor is pointed at the null device and the bytes are
    taken as written, so the rest of the output goes nowhere and nothing raises, now or in
    the flush at exit, and the command runs to its end. The reader having closed the pipe
    (``netmodel hardware | head -1``: EPIPE) is no failure of the command; any other
    error (a full disk: ENOSPC, an I/O error: EIO, a file over its size limit: EFBIG) is
    kept in :attr:`lost`, the first only, for :func:`main` to report once the command is
    done."""

    #: the first write error other than EPIPE, or None
    lost: OSError | None = None

    def write(self, b: Any) -> int:
        try:
            return super().write(b)
        except OSError as exc:
            if not isinstance(exc, BrokenPipeError) and self.lost is None:
                self.lost = exc
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self.fileno())
            finally:
                os.close(null)
            return memoryview(b).nbytes


class _Closed(io.RawIOBase):
    """Where ``netmodel``'s stdout goes when it was started with descriptor 1 closed
    (``netmodel hardware >&-``; Python then sets ``sys.stdout`` to None and click's echo
    drops every line, exit 0 as if all was written): each write is taken as written and
    the output lost as :class:`_ReaderMayLeave` keeps it (:attr:`lost`: EBADF), so the
    command runs to its end and :func:`main` says so. Nothing writes to descriptor 1,
    which a file the command opens may now hold."""

    lost: OSError | None = None

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        if self.lost is None:
            self.lost = OSError(errno.EBADF, os.strerror(errno.EBADF))
        return memoryview(b).nbytes


#: The error handler of ``netmodel``'s stdout and stderr (:func:`_escape_unencodable`).
ESCAPE = "netmodel.escape"


def _escape_unencodable(exc: UnicodeError) -> tuple[str | bytes, int]:
    r"""A character the stream's encoding cannot hold: a lone surrogate of an argument's
    byte that was not UTF-8 (U+DC80-U+DCFF) is that byte again, as ``surrogateescape``
    writes it; any other is written as its escape (``\u0663``), as ``backslashreplace``
    writes it, so that a Latin-1 or ASCII terminal (``PYTHONIOENCODING=latin-1``) gets a
    line, not a ``UnicodeEncodeError`` traceback (``netmodel models 'Llama→'``'s refusal
    quoting the name was one).

    >>> "error: 'x\u2192' \udce9".encode("latin-1", ESCAPE)
    b"error: 'x\\u2192' \xe9"
    """
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    c = exc.object[exc.start]
    if 0xDC80 <= ord(c) <= 0xDCFF:
        return bytes([ord(c) - 0xDC00]), exc.start + 1
    return codecs.backslashreplace_errors(
        UnicodeEncodeError(exc.encoding, c, 0, 1, exc.reason))[0], exc.start + 1


codecs.register_error(ESCAPE, _escape_unencodable)


def _reader_may_leave(stream: Any, fd: int | None = None) -> Any:
    """``stream`` (sys.stdout or sys.stderr) as a text stream over the same descriptor
    whose writes survive the reader closing it (:class:`_ReaderMayLeave`): its encoding
    and buffering as ``stream``'s, with the error handler :data:`ESCAPE` (see :func:`main`).
    A stream with no descriptor (captured in-process) only gets that error handler. None
    where descriptor ``fd`` is closed (Python's stream for it is None): a stream whose
    output is lost (:class:`_Closed`).

    >>> _reader_may_leave(io.StringIO()).__class__.__name__
    'StringIO'
    """
    if stream is None and fd is not None and _closed(fd):
        return io.TextIOWrapper(io.BufferedWriter(_Closed()), encoding="utf-8",
                                errors=ESCAPE, newline="\n")
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):   # None, or no descriptor (a test capture)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=ESCAPE)
        return stream
    stream.flush()
    raw = io.BufferedWriter(_ReaderMayLeave(fd, "w", closefd=False))
    return io.TextIOWrapper(raw, encoding=stream.encoding, errors=ESCAPE,
                            newline="\n", line_buffering=stream.line_buffering,
                            write_through=getattr(stream, "write_through", False))


def _closed(fd: int) -> bool:
    """Whether descriptor ``fd`` is closed."""
    try:
        os.fstat(fd)
    except OSError as exc:
        return exc.errno == errno.EBADF
    return False


def _write_error(stream: Any) -> OSError | None:
    """The write error kept by ``stream``'s :class:`_ReaderMayLeave` or :class:`_Closed`
    (None: none, or a stream :func:`_reader_may_leave` did not wrap)."""
    raw = getattr(getattr(stream, "buffer", None), "raw", None)
    return raw.lost if isinstance(raw, (_ReaderMayLeave, _Closed)) else None


def _may_make(folder: str) -> bool:
    """Whether ``folder`` is a folder this process may write, or one it could make: its
    nearest existing parent a folder it may write. ``os.access`` says yes to root
    everywhere, so for root a folder is made and removed there to see (HOME=/proc or /sys,
    a container's root: matplotlib's mkdir failed and it said so in two warnings on
    stderr); otherwise nothing is made."""
    path = os.path.abspath(folder)
    while not os.path.lexists(path):
        path = os.path.dirname(path)
    if not (os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)):
        return False
    if os.geteuid() != 0:
        return True
    import tempfile

    try:
        os.rmdir(tempfile.mkdtemp(prefix=".netmodel-probe.", dir=path))
    except OSError:
        return False
    return True


def _matplotlib_folder() -> None:
    """Where matplotlib keeps its settings and font cache, where the user's are out of
    reach: with no ``MPLCONFIGDIR`` and a HOME (or ``XDG_CONFIG_HOME``,
    ``XDG_CACHE_HOME``) that cannot hold its folders (HOME=/dev/null, a read-only home),
    or an ``MPLCONFIGDIR`` that cannot be a folder (a file, ``/etc/passwd``; a read-only
    place), ``MPLCONFIGDIR`` is set to this user's own folder under the temporary folder
    (made mode 0700; one that is not a folder of this user's alone is not used: a new one
    is made). matplotlib would make a new folder at each start, rebuild its font cache
    there (seconds) and say so in two warnings on stderr after the command's output.
    Nothing is made where the user's folders will do."""
    import sys

    if not sys.platform.startswith(("linux", "freebsd")):
        return
    given = os.environ.get("MPLCONFIGDIR")
    if given:
        if _may_make(given):
            return
        os.environ.pop("MPLCONFIGDIR")   # as if unset: the user's folders, else ours
    home = os.path.expanduser("~")
    wanted = [os.path.join(os.environ.get(var) or os.path.join(home, default), "matplotlib")
              for var, default in (("XDG_CONFIG_HOME", ".config"),
                                   ("XDG_CACHE_HOME", ".cache"))]
    if home != "~" and all(map(_may_make, wanted)):
        return
    import stat
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), f"netmodel-matplotlib-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return   # no temporary folder either: matplotlib's own refusal says so
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        import atexit
        import shutil

        folder = tempfile.mkdtemp(prefix="netmodel-matplotlib-")
        atexit.register(shutil.rmtree, folder, True)
    os.environ["MPLCONFIGDIR"] = folder


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
    the status of one command line changed from run to run (:class:`_ReaderMayLeave`).
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
    hold matplotlib's settings and font cache, it gets one (:func:`_matplotlib_folder`).

    Ctrl-C (SIGINT) or SIGTERM stops the command where it is (:class:`~netmodel.cli.interrupt.Interrupted`): what
    it was writing is removed (every file is written whole or not at all, an output folder
    replaced whole or left as it was), one line on stderr says which signal, and the exit
    status is :data:`~netmodel.cli.interrupt.INTERRUPTED`'s (130 or 143), as a shell reports a process the signal
    killed. Before, Ctrl-C printed ``Aborted!`` with exit status 1 (as a bug), and SIGTERM
    killed the process with a temporary file or staging folder left beside the output."""
    import sys

    given = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _reader_may_leave(sys.stdout, 1), _reader_may_leave(sys.stderr)
    try:
        with stop_on_signals():   # matplotlib's folder too: its check imports tempfile
            os.environ["MPLBACKEND"] = "agg"
            _matplotlib_folder()
            cli.main(args=argv, prog_name="netmodel")
    except SystemExit as done:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        lost = _write_error(sys.stdout)
        if lost is not None and sys.stderr is not None:
            reason = lost.strerror or type(lost).__name__
            sys.stderr.write(f"error: cannot write the output to standard output: {reason}\n")
            sys.stderr.flush()
        if (lost is not None or _write_error(sys.stderr) is not None) \
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
