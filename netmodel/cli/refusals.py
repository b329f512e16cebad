"""How a refusal reads on the command line: a library :class:`~compute.errors.UserError`
said with the flags and values the user typed, click's usage errors as one ``error:`` line,
an option given twice with two values refused, and the line a command that ran out of memory
ends with.

Library errors name parameters (``max_batch``) and the values they were given; the command
line names its flags (``--max-batch``) and the text as typed. :class:`~netmodel.cli.main.LazyGroup`
turns every user error through :func:`flags_for_parameters` and :func:`named_by_value`; a
command wraps the one call that reads a value in :func:`value_refused_as` or, for an output,
:func:`output_refused_as`. This module imports only click and
:mod:`netmodel.cli.options` (start-up stays fast).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import IO, Any

import click

from netmodel.cli.options import INVOKED, typed_values


class UserFacingError(click.ClickException):
    """A :class:`~compute.errors.UserError` on its way out: one line, exit status 2 (3 for
    :class:`~compute.errors.NothingFeasible`)."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        from compute.errors import cut_long, shown

        super().__init__(cut_long(shown(message)))

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def out_of_memory() -> UserFacingError:
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
    >>> named_by_value("unknown GPU 'H100-SXM@Lite'; known: ...",
    ...                [("--scenario", "lite-flat@H100-SXM@Lite")])
    "--scenario 'lite-flat@H100-SXM@Lite': unknown GPU 'H100-SXM@Lite'; known: ..."
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
        pieces = {text, *re.split(r"[:@,=]", text), *text.split("=", 1), *text.split("@"),
                  *text.split("@", 1)}   # NAME@GPU read at the first '@': 'H100-SXM@Lite'
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


def one_line_usage(exc: click.UsageError, path: str | None = None) -> click.ClickException:
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
