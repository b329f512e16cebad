"""The options the ``netmodel`` commands share, each declared once: click option factories,
the types that read their values, and help written from the registries.

The types (:class:`ReadAs`, :class:`RegistryChoice`, :data:`WHOLE`, :class:`InputPath`) read
a value where click parses it; help and placeholders are written from the registries when
shown; :func:`as_typed` gives an option's text as typed.

Imported by every command module and by :mod:`netmodel.cli.main`, so it imports only click
at module level (``netmodel --help`` stays fast); a registry is read when help is shown or a
value checked. It imports nothing from the command group: the group, its refusal wording and
output streams are :mod:`netmodel.cli.main`'s.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from compute.phases import Slo


_F = TypeVar("_F", bound=Callable[..., Any])


def given_on_command_line(*names: str) -> list[str]:
    """Those of the current command's parameters ``names`` (click's parameter names, e.g.
    ``"mtp_tokens"``) that the user typed on the command line, not left at their default:
    for refusing an option the chosen mode would silently ignore."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return [n for n in names if ctx.get_parameter_source(n) is ParameterSource.COMMANDLINE]


def check_format_suffix(output: str, fmt: str, suffixes: Mapping[str, Sequence[str]],
                        typed: bool, flag: str = "--output") -> None:
    """Refuse an output path whose suffix is not one ``--format fmt`` writes, naming both
    flags and the format the suffix would take (``suffixes``: format -> its suffixes;
    ``typed``: whether ``--format`` was typed, else it is said to be the default). An
    empty path, a folder and a name that is a suffix alone are left to
    :func:`compute.output_paths.check_file_path`, which says so.

    >>> try:
    ...     check_format_suffix("t.csv", "json", {"csv": (".csv",), "json": (".json",)}, True)
    ... except Exception as exc:
    ...     print(exc)
    --output 't.csv': --format json writes a .json file, not '.csv'; give --format csv for a .csv file, or a path ending in .json
    """
    from pathlib import Path

    from compute.errors import UserError

    path = Path(output)
    wants, suffix = tuple(suffixes[fmt]), path.suffix.lower()
    try:
        folder = path.is_dir()
    except OSError:   # a name past the file system's limit (ENAMETOOLONG): a traceback here
        return   # check_file_path says so
    if (suffix in wants or path.name.lower() in {s for ss in suffixes.values() for s in ss}
            or not output or output.endswith(("/", "\\")) or folder):
        return
    fits = [f for f, ss in suffixes.items() if suffix in ss]
    given = f"--format {fmt}" + ("" if typed else " (the default)")
    other = f"give --format {fits[0]} for a {suffix} file, or " if fits else "give "
    raise UserError(f"{flag} {output!r}: {given} writes a {' or '.join(wants)} file, not "
                    f"{repr(suffix) if suffix else 'a name without a suffix'}; {other}a path "
                    f"ending in {wants[0]}")


def with_options(options: list[Callable[[_F], _F]]) -> Callable[[_F], _F]:
    """A decorator applying a shared list of click options, in their listed order."""
    def decorate(f: _F) -> _F:
        for opt in reversed(options):
            f = opt(f)
        return f

    return decorate


#: The searches' largest batch by default (compute.search.DEFAULT_MAX_BATCH, spelled here
#: so that --help imports no numpy; a test keeps the two equal).
DEFAULT_MAX_BATCH = 1024


def max_batch_option(help_text: str = "Largest batch tried.") -> Callable[[_F], _F]:
    """The ``--max-batch B`` option of the commands that search: the command gets the whole
    number (:func:`read_whole`, its parser named here only: :class:`ReadAs`)."""
    return click.option("--max-batch", default=str(DEFAULT_MAX_BATCH), show_default=True,
                        metavar="B", help=help_text,
                        type=ReadAs(lambda text: read_whole("--max-batch", text)))


class ReadAs(click.ParamType):
    """The type of an option whose text one function of the CLI reads (``--max-batch``:
    :func:`read_whole`; availability's ``--trials``): the command gets the value read, so
    the option's parser is named once, on its declaration, and two spellings of one value
    given twice are one (:func:`netmodel.cli.refusals.refuse_repeated_options` compares values
    by the option's type). The function's refusal is its own
    :class:`~compute.errors.UserError`, one line naming the flag; the value is read as click
    reads its options, the typed ones in the order typed, before the command runs. An
    option whose command needs the text as typed too (to say it in a later refusal) is a
    string with :class:`RegistryHelp`'s ``reads``.

    >>> opt = click.Option(["--n"], type=ReadAs(lambda t: read_whole("--n", t)))
    >>> cmd = click.Command("x", params=[opt], callback=lambda n: print(repr(n)))
    >>> cmd.main(["--n", "+6.4e1"], standalone_mode=False)
    64
    """

    name = "text"

    def __init__(self, reads: Callable[[str], Any]) -> None:
        self.reads = reads

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        return self.reads(value) if isinstance(value, str) else value


def as_typed(name: str) -> Any:
    """The running command's option ``name`` (click's parameter name) as the user gave it:
    the text of its value on the command line (the last, the one click keeps), or its
    default where it was not typed. For a :class:`ReadAs` option, whose command gets the
    value read, where the text is wanted: a refusal quoting it (``--ttft '2s' is the
    prefill SLO``), the run an output folder's manifest records (options valued as
    typed). Outside a command line :class:`netmodel.cli.main.LazyGroup` parsed, the value
    click holds."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    param = next(p for p in ctx.command.params if p.name == name)
    source = ctx.get_parameter_source(name)
    if source is ParameterSource.DEFAULT and isinstance(param.default, str):
        return param.default
    _, words = ctx.meta.get(INVOKED, (None, []))
    words = words[:words.index("--")] if "--" in words else words
    given = typed_values(param, words) if source is ParameterSource.COMMANDLINE else []
    return given[-1][1] if given else ctx.params.get(name)


def read_whole(what: str, text, most: int | None = None, *, up_to: str | None = None) -> int:
    """A whole number from 1 to ``most`` (default :data:`compute.validate.MAX_WHOLE`) from
    the command line (``--max-batch``, ``--trials``; also
    ``netmodel.cli.resolve.whole_option``); the refusal, below the range or above it,
    states the range with ``most``, the bound that holds (--trials' 100,000, not the
    1,000,000,000 any whole number may reach), or ``up_to``, the words of a bound known
    only later, as the option's help gives it (``--pp``: ``the model's layers``). An
    option declared with ``reads=`` compares its repeats by it (``--max-batch 64
    --max-batch +64`` is one value).

    >>> read_whole("--max-batch", "+6.4e1")
    64
    """
    from compute.errors import UserError
    from compute.typed_numbers import ungrouped
    from compute.validate import MAX_WHOLE, read_number

    top = MAX_WHOLE if most is None else most
    shown = repr(text) if len(str(text)) <= 40 else \
        f"{str(text)[:20]!r}... ({len(str(text))} characters)"
    v = read_number(what, str(text), whole=True)   # the one number grammar ('1_0' refused)
    if v is None or not 1 <= v <= top:   # not whole, or past a float's range, said alike
        plain = ungrouped(str(text))   # '1,024' as the range is written: told to drop commas
        raise UserError(f"{what} must be a whole number from 1 to {up_to or f'{top:,}'}, got "
                        f"{shown}" +
                        (f" (write it without commas: {plain})" if plain else ""))
    return v


#: The calibrated mode's ``--profile NAME|FILE`` (a string: the command turns it into an
#: :class:`~compute.profiles.EngineProfile` with ``netmodel.cli.resolve.resolve_profile``),
#: one declaration for every command that takes it (infer, search, compare, sweep, study,
#: serve).
profile_option = click.option(
    "--profile", "profile_ref", default=None, metavar="NAME|FILE",
    help="Calibrated mode: an engine profile (shipped name or .toml; netmodel calibrate "
    "fits one). Default: the roofline, a lower bound.")

#: ``--no-plot`` and ``--quiet``: an output folder's figures and the progress bar on stderr,
#: off (the commands that write figures or show progress: study, compare, sweep,
#: blast-radius, availability; neither is part of the run a manifest records).
no_plot_option = click.option("--no-plot", is_flag=True, help="Write no figures.")
quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bar on stderr.")
#: ``--json``: cost's and serve's (``json_option``), and compare's, sweep's, blast-radius's
#: and availability's, which print a table without it (``table_json_option``).
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
table_json_option = click.option("--json", "as_json", is_flag=True,
                                 help="Print JSON instead of the table.")


def parallelism_option(f: _F | None = None, *, note: str = "") -> Any:
    """The ``--parallelism tp|auto|all`` option (choices and what each searches from
    :data:`netmodel.study.defaults.PARALLELISM_MEANING`), shared by the commands that
    search; ``@parallelism_option(note=...)`` adds a sentence to its help (what of the
    command reads it)."""
    if f is None:
        return lambda g: parallelism_option(g, note=note)
    from netmodel.study.defaults import PARALLELISM, PARALLELISM_MEANING  # light: no numpy

    return click.option(
        "--parallelism", type=RegistryChoice(lambda: PARALLELISM), default=PARALLELISM[0],
        show_default=True,
        help="How a model is spread: " + "; ".join(
            f"{name}: {PARALLELISM_MEANING[name]}" for name in PARALLELISM) + "."
        + (f" {note}" if note else ""))(f)


def choice_metavar(names: Iterable[str]) -> str:
    """The placeholder of an option that takes one of ``names`` (its registry): ``a|b|c``,
    the one style of every choice option's help (click writes ``[a|b|c]`` for a Choice of
    its own; :class:`RegistryChoice` and ``metavar_from`` use this).

    >>> choice_metavar(("group", "pod", "global"))
    'group|pod|global'
    """
    return "|".join(names)


def registry_names(module: str, name: str) -> Callable[[], Iterable[str]]:
    """What reads the registry ``module.name`` when called (help shown, a value checked):
    for :class:`RegistryChoice` and :func:`registry_metavar`."""
    return lambda: getattr(importlib.import_module(module), name)


def registry_metavar(module: str, name: str) -> Callable[[], str]:
    """:func:`choice_metavar` of the registry ``module.name``, read when help is shown: a
    :class:`RegistryHelp` option's ``metavar_from``."""
    names = registry_names(module, name)
    return lambda: choice_metavar(names())


class RegistryChoice(click.Choice):
    """A click Choice over a registry read when first needed (help shown or a value
    checked), not when the command module loads; its placeholder is
    :func:`choice_metavar`'s."""

    def __init__(self, names_from: Callable[[], Iterable[str]]) -> None:
        self._names_from = names_from
        self._names: tuple[str, ...] | None = None
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        if self._names is None:
            self._names = tuple(self._names_from())
        return self._names

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return choice_metavar(self.choices)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        """click's, its refusal of a value that prints as a choice but is not one (a
        Cyrillic 'а' in 'аll': 'is not one of 'auto', 'tp', 'all'' showed it among them)
        saying which it looks like and the character (:func:`compute.errors.lookalike`)."""
        from compute.errors import chosen

        try:   # blanks at either end dropped, as every choice's (compute.errors.chosen)
            return super().convert(chosen(value, self.choices) or value, param, ctx)
        except click.BadParameter as exc:
            from compute.errors import lookalike

            like = lookalike(value, self.choices)
            if like:
                exc.message = exc.message.rstrip(".") + like
            raise


class RegistryHelp(click.Option):
    """An option whose help text (``help_from``) and placeholder (``metavar_from``) are
    written from a registry when help is shown (so the registry is imported then, not when
    the command module loads; and the help cannot fall behind the registry).

    ``aliases``: other names it also answers to, not shown in the help (an option taking a
    list is named in the plural, :data:`LIST_ALIASES`; its singular, which other commands
    use for one value, is taken too, so command lines of either spelling run).

    ``reads``: the function the command reads the option's text with (``--tbt``: its time
    in seconds), for :func:`netmodel.cli.refusals.refuse_repeated_options` to compare two
    spellings of one value (``--tbt 50ms --tbt 0.05``) by what they mean; an option without
    it (a plain string) is compared as typed, one with a click type by that type's value.

    ``parameters``: the library's names for the value it gives, where they are not the
    flag's own (``--load-bandwidth`` gives the failure catalog's ``host_storage_bandwidth``):
    a library error naming one is said with the flag
    (:func:`netmodel.cli.refusals.flags_for_parameters`), as one naming ``max_batch`` is with
    ``--max-batch``."""

    def __init__(self, param_decls: Sequence[str], *, help_from: Callable[[], str] | None = None,
                 metavar_from: Callable[[], str] | None = None, aliases: Sequence[str] = (),
                 reads: Callable[[str], Any] | None = None, parameters: Sequence[str] = (),
                 **kwargs: Any) -> None:
        super().__init__([*param_decls, *aliases], **kwargs)
        self.help_from = help_from
        self.metavar_from = metavar_from
        self.aliases = tuple(aliases)
        self.reads = reads
        self.parameters = tuple(parameters)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.help_from is not None:
            self.help = self.help_from()
        if self.metavar_from is not None:
            self.metavar = self.metavar_from()
        every = self.opts
        self.opts = [o for o in every if o not in self.aliases]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = every

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list:
        """Shell completion of a value: its type's, else the choices its placeholder lists
        (``prefill|decode|both``: the lower-case names of ``metavar_from``, not ``NAME``
        or ``FILE``) that start with what is typed, after its last comma for an option
        that takes a list (``--phases prefill,d``). Without it a choice read by its own
        rule (``compute.errors.chosen``), not a click Choice, completed nothing."""
        items = super().shell_complete(ctx, incomplete)
        if items or self.metavar_from is None:
            return items
        import re

        from click.shell_completion import CompletionItem

        parts = self.metavar_from().split("|")
        names = [p for p in parts if re.fullmatch(r"[a-z][a-z0-9.:-]*", p)]
        if len(parts) < 2:
            return []
        head, _, tail = incomplete.rpartition(",") if self.aliases else ("", "", incomplete)
        head = head + "," if head else ""
        return [CompletionItem(head + n) for n in names if n.startswith(tail)]


#: The options that take a list, each named in the plural, -> the singular they also
#: answer to (the name commands taking one value use: infer's --model, collective's
#: --size, sweep's old --scenario): compare, sweep, study lite-gpu and costs take either.
LIST_ALIASES = {"--models": "--model", "--scenarios": "--scenario", "--gpus": "--gpu",
                "--phases": "--phase", "--networks": "--network", "--sizes": "--size",
                "--groups": "--group"}


def list_option(name: str, dest: str, **kwargs: Any) -> Callable[[_F], _F]:
    """The list option ``name`` (a key of :data:`LIST_ALIASES`), also taken by its
    singular; ``kwargs`` as :class:`RegistryHelp` takes them."""
    return click.option(name, dest, cls=RegistryHelp, aliases=(LIST_ALIASES[name],),
                        **kwargs)


def _time_units() -> str:
    from compute.units import time_units

    return ", ".join(time_units())


def slo_option(phase: str, note: str = "") -> Callable[[_F], _F]:
    """``--ttft TIME`` (``phase`` ``"prefill"``) or ``--tbt TIME`` (``"decode"``), one
    declaration for every command with an SLO: the command gets seconds
    (:func:`read_slo_time`, a :class:`ReadAs`); its help names the time units
    :func:`compute.units.parse_time` takes (read when help is shown)."""
    flag, default, what = {"prefill": ("--ttft", "1s", "Prefill SLO: time to first token"),
                           "decode": ("--tbt", "50ms", "Decode SLO: time between tokens")}[phase]
    return click.option(flag, default=default, show_default=True, metavar="TIME",
                        cls=RegistryHelp, help_from=lambda: f"{what}{note} (seconds, or a "
                        f"number with a unit: {_time_units()}).",
                        type=ReadAs(lambda text: read_slo_time(flag, text)))


def read_slo_time(flag: str, text: str) -> float:
    """Seconds of ``--ttft`` or ``--tbt`` (``flag``): a time above 0 within its plausible
    range (:func:`compute.units.parse_time`: the flag and the text as typed in a refusal,
    ``--tbt 50 was read as 50 s; ...``).

    >>> read_slo_time("--tbt", "50ms") == read_slo_time("--tbt", "0.05")
    True
    """
    from compute.units import parse_time

    return parse_time(text, flag, allow_zero=False, quantity=flag.removeprefix("--"))


def slo_of(ttft: float, tbt: float) -> Slo:
    """The :class:`compute.phases.Slo` of :func:`slo_option`'s ``--ttft`` and ``--tbt``
    (seconds, as the command gets them)."""
    from compute.phases import Slo

    return Slo(ttft=ttft, tbt=tbt)


def phase_option(*, default: str, takes: str, dest: str = "phase") -> Callable[[_F], _F]:
    """``--phase``, one declaration for every command with one: ``takes`` ``"one"`` of
    :data:`compute.phases.PHASES`, ``"both"`` (one of them or both) or ``"list"`` (also a
    comma list: named ``--phases``, also taken as ``--phase``, :data:`LIST_ALIASES`); its
    placeholder lists them (read when help is shown)."""
    def metavar() -> str:
        from compute.phases import BOTH, PHASES

        return choice_metavar([*PHASES, BOTH] if takes != "one" else PHASES)

    def help_text() -> str:
        from compute.phases import BOTH, PHASES

        first, second = PHASES
        return {"one": f"{first} (TTFT) or {second} (TBT).",
                "both": f"{first} (TTFT), {second} (TBT) or {BOTH}.",
                "list": f"{first} (TTFT), {second} (TBT), {BOTH}, or a comma list."}[takes]

    if takes == "list":
        return list_option("--phases", dest, default=default, show_default=True,
                           metavar_from=metavar, help_from=help_text)
    return click.option("--phase", dest, default=default, show_default=True, cls=RegistryHelp,
                        metavar_from=metavar, help_from=help_text)


def roofline_flag(name: str):
    """The on/off option of the :class:`compute.roofline_options.RooflineOptions` field ``name``:
    ``--`` and the name with dashes, its help the field's (read when help is shown)."""
    def help_from() -> str:
        from compute.roofline_options import option_help

        return option_help(name)

    return click.option("--" + name.replace("_", "-"), name, is_flag=True, cls=RegistryHelp,
                        help_from=help_from)


def roofline_option(name: str, metavar: str):
    """The valued option of the :class:`compute.roofline_options.RooflineOptions` field ``name``
    (default unset: the field's default): ``--`` and the name with dashes, its help the
    field's (read when help is shown); the command reads the text as the field's value."""
    def help_from() -> str:
        from compute.roofline_options import option_help

        return option_help(name)

    return click.option("--" + name.replace("_", "-"), name, default=None, metavar=metavar,
                        cls=RegistryHelp, help_from=help_from)


#: ``--mtp-tokens K`` and ``--mtp-acceptance A`` (decode with multi-token prediction,
#: :mod:`compute.mtp`), declared once for every command that costs it (infer, search, serve,
#: compare, sweep); the command reads them with ``netmodel.cli.resolve.mtp_settings``.
mtp_options = [roofline_option("mtp_tokens", "K"), roofline_option("mtp_acceptance", "A")]


def gpu_help(many: bool = False) -> str:
    """What an option naming a GPU (``many``: a comma list of them) takes, written from the
    GPU catalog (for --help; read by :func:`compute.hardware.get_gpu`): a catalog name or
    the path of a GPU file holding one GPU."""
    from compute.hardware import gpu_names

    names = ", ".join(gpu_names())
    if many:
        return (f"comma-separated catalog GPUs ({names}; netmodel hardware) or GPU files "
                f"(.toml or .json, one GPU each)")
    return (f"a catalog GPU ({names}; netmodel hardware) or a GPU file (.toml or .json) "
            f"holding one GPU")


def model_help(many: bool = False) -> str:
    """What an option naming an LLM (``many``: a comma list of them) takes, written from the
    model catalog (for --help; read by :func:`compute.models.get_model`): a catalog name,
    a model file holding one model, or a HuggingFace config.json."""
    from compute.models import model_names

    names = ", ".join(model_names())
    if many:
        return (f"comma-separated catalog models ({names}; netmodel models), model files "
                f"(.toml or .json, one model each) or HuggingFace config.json files")
    return (f"a catalog model ({names}; netmodel models), a model file (.toml or .json) "
            f"holding one model, or a HuggingFace config.json")


#: ``--model NAME|FILE``, required, one model (cost, blast-radius, availability).
model_option = click.option("--model", "model", required=True, metavar="NAME|FILE",
                            cls=RegistryHelp, help_from=lambda: f"The model: {model_help()}.")


def shipped_scenario_names() -> tuple[str, ...]:
    """Names of the shipped scenarios, the baseline first, read from the file names of
    ``netmodel/data/scenarios`` (a file ``NAME.toml`` holds ``name = "NAME"``, which a test
    checks), so help lists them without reading every file (that loads networkx and
    numpy); :func:`netmodel.study.scenario_catalog.scenario_names` gives the same, read from the
    files."""
    from importlib import resources

    from netmodel.study.defaults import BASELINE_SCENARIO

    folder = resources.files("netmodel").joinpath("data/scenarios")
    names = sorted(e.name.removesuffix(".toml") for e in folder.iterdir()
                   if e.name.endswith(".toml"))
    return tuple(sorted(names, key=lambda n: n != BASELINE_SCENARIO))


def scenario_help(many: bool = False) -> str:
    """What a ``--scenario`` option (``many``: ``--scenarios``, a comma list) takes, for its
    help (read by :func:`netmodel.study.scenario_catalog.get_scenario`): a shipped scenario
    (named from :func:`shipped_scenario_names`), NAME@GPU or a scenario file. Every
    --scenario option's help is written with it."""
    names = ", ".join(shipped_scenario_names())
    if many:
        return (f"comma-separated shipped scenarios ({names}; netmodel compare --list), "
                f"NAME@GPU (its GPU swapped) or scenario files (.toml)")
    return (f"a shipped scenario ({names}; netmodel compare --list), NAME@GPU (its GPU "
            f"swapped) or a scenario file (.toml)")


def builder_names() -> tuple[str, ...]:
    """The fabric builders' names in listing order (:data:`topologies.builder_names.NAMES`)
    without importing the package ``topologies``, whose ``__init__`` loads every builder,
    networkx and numpy (0.25 s of a 0.29 s ``topology show --help``): its module
    ``builder_names`` imports nothing and is found in the package's folder by the import
    system's own finders (a source file, a compiled one alone, or one in a zip archive) and
    run on its own (unless the package is loaded already)."""
    import sys

    if "topologies" in sys.modules:
        from topologies.builder_names import NAMES
        return NAMES
    folders = importlib.util.find_spec("topologies").submodule_search_locations
    spec = importlib.machinery.PathFinder.find_spec("topologies.builder_names", folders)
    module = importlib.util.module_from_spec(spec)   # not put in sys.modules: no parent
    spec.loader.exec_module(module)
    return module.NAMES


def fabric_help() -> str:
    """What an argument naming a fabric takes, written from the builder and scenario
    registries (for --help; resolved by :func:`netmodel.study.fabric_ref.resolve_fabric`)."""
    return ("a spec NAME[:KEY=VALUE,...] of a builder (" + ", ".join(builder_names())
            + "; netmodel topology list), a saved .json/.graphml fabric, or "
            + scenario_help() + ", whose fabric is used: its builder and parameters, with "
            "its GPU. A scenario name wins over a builder of the same name.")


class FabricCommand(click.Command):
    """A command taking a fabric SPEC argument: its help ends with what SPEC may be, from
    the registries (:func:`fabric_help`)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text("SPEC: " + fabric_help())


class AsciiNumber(click.ParamType):
    """click's ``int`` or ``float`` (``base``), but a number in another script's digits
    (``'８'``, ``'١٠٠'``, which click's types read as Python does) is refused by the rule of
    every number parser, :func:`compute.validate.ascii_digits`. The type of every option
    that is a plain number (``--group N``, ``--max-transfers``, ``--workers``,
    ``--area-share``): ``WHOLE`` and ``REAL``. ``allowed``: where 0 is outside the
    option's range, what gives that range in its parser's words (read when a value is,
    not when help is shown), for a number below the smallest float."""

    def __init__(self, base: click.ParamType,
                 allowed: Callable[[], str] | None = None) -> None:
        self.base, self.name, self.allowed = base, base.name, allowed

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str):   # the one number grammar: '+8' and '1e1' read, '1_0' not
            from compute.typed_numbers import past_most_digits, ungrouped
            from compute.validate import NUMBER_RULE, read_number

            whole = self.base is click.INT
            v = read_number(param.opts[0] if param is not None else "value", value, whole=whole,
                            allowed=self.allowed() if self.allowed is not None else None)
            if v is None and whole and past_most_digits(value):
                self.fail(f"{value!r} is a whole number of more than 4,300 digits, past the "
                          f"largest netmodel reads", param, ctx)
            if v is None and (plain := ungrouped(value)) is not None:   # as help writes it
                self.fail(f"{value!r} groups its thousands with commas; write it without "
                          f"them: {plain}", param, ctx)
            if v is None:   # a whole number: the grammar's, with a whole value (2.0, 1e3)
                self.fail(f"{value!r} is not a whole number ({NUMBER_RULE}; its value "
                          f"whole: 2, 2.0 and 1e3 are, 1.5 is not)" if whole else
                          f"{value!r} is not a valid number ({NUMBER_RULE})", param, ctx)
            return v
        return self.base.convert(value, param, ctx)


#: The types of an option that is a whole number or a number (:class:`AsciiNumber`).
WHOLE, REAL = AsciiNumber(click.INT), AsciiNumber(click.FLOAT)


class InputPath(click.Path):
    """A file (or folder) to read, as :class:`click.Path` takes it, but an empty path is no
    longer 'not given' (``--model-file ''`` ran the catalog's model) and a name over the
    file system's limits is one line (``--hf-config`` of 5,000 characters raised OSError),
    as is a name holding a NUL byte (ValueError). The type of every option that reads a
    file (``--model-file``, ``--gpu-file``, ``--hf-config``, ``--measurements``)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        import errno
        import os

        from compute.validate import describe

        if isinstance(value, str) and not value.strip():
            self.fail(f"{describe(value)} is an empty path; give a file name", param, ctx)
        try:
            os.stat(value)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                self.fail(f"{describe(value)}: file name too long (at most 255 bytes a name "
                          "and 4,096 a path on most file systems)", param, ctx)
        except ValueError:   # a NUL byte: click's own stat raised it as a traceback
            self.fail(f"{describe(value)} holds a NUL byte, which no file name holds",
                      param, ctx)
        except TypeError:   # not text: click's Path says so
            pass
        return super().convert(value, param, ctx)


def _links_to_a_file(path: str) -> bool:
    """Whether ``path`` is a symbolic link to something that exists and is not a folder."""
    import os

    try:
        return os.path.islink(path) and os.path.exists(path) and not os.path.isdir(path)
    except (OSError, ValueError):   # a NUL byte: click's check and check_folder_path say so
        return False


class OutputFolder(click.Path):
    """The type of every ``--out DIR`` option: :class:`click.Path` of a folder, but a path
    ``os.stat`` cannot take (a NUL byte: ValueError, a traceback) is refused as
    :func:`compute.output_paths.check_folder_path` refuses it, in one line."""

    def __init__(self) -> None:
        super().__init__(file_okay=False)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and (not value.strip() or _links_to_a_file(value)):
            # said with the flag; a link to a file said as one (click: 'Directory is a file')
            from compute.errors import UserError
            from compute.output_paths import check_folder_path

            try:
                check_folder_path(value)
            except UserError as refused:
                self.fail(str(refused), param, ctx)
        try:
            return super().convert(value, param, ctx)
        except (TypeError, ValueError) as exc:
            from compute.errors import UserError
            from compute.output_paths import check_folder_path
            from compute.validate import describe

            try:
                check_folder_path(value)
            except UserError as refused:
                self.fail(str(refused), param, ctx)
            self.fail(f"{describe(value)}: {exc}", param, ctx)


#: ``ctx.meta`` key of the command :class:`netmodel.cli.main.LazyGroup` invoked and its
#: arguments (the group writes it; :func:`as_typed` reads the words typed off it).
INVOKED = "netmodel.invoked"


def typed_values(param: click.Option, words: Sequence[str]) -> list[tuple[str, str]]:
    """Each ``(flag, value)`` of ``param`` in the command line's ``words`` as typed
    (``--x V``, ``--x=V``, ``-o V``, ``-oV``; a value of several words joined by a space)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        for flag in param.opts:
            if w == flag:
                out.append((flag, " ".join(words[i + 1:i + 1 + param.nargs])))
                i += param.nargs
                break
            if flag.startswith("--") and w.startswith(flag + "="):
                out.append((flag, w[len(flag) + 1:]))
                break
            if not flag.startswith("--") and w.startswith(flag) and len(w) > len(flag):
                out.append((flag, w[len(flag):]))
                break
        i += 1
    return out
