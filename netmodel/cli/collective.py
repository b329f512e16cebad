"""``netmodel collective`` and ``netmodel costs``: thin click commands over
:mod:`netmodel.study.collective_report` (one collective's cost, a lookup table of costs) on a
fabric, or on a scenario with its own collective model (:mod:`netmodel.study.collective_setup`).

Only click and the standard library are imported at module level; numpy, networkx and
matplotlib load inside the commands.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import NoReturn

import click

from netmodel.cli import run_record
from netmodel.cli.options import (
    WHOLE,
    ReadAs,
    RegistryChoice,
    RegistryHelp,
    as_typed,
    check_format_suffix,
    choice_metavar,
    fabric_help,
    given_on_command_line,
    list_option,
    scenario_help,
    with_options,
)
from netmodel.cli.refusals import output_refused_as, value_refused_as
from netmodel.study.collective_report import TABLE_FORMATS, TABLE_SUFFIXES, VIDUR_FORMAT

__all__ = ["collective", "costs"]

def _algorithm_help() -> str:
    from netmodel.collectives.names import ALGORITHM_NAMES

    return "auto (fastest valid per size), or one of " + ", ".join(ALGORITHM_NAMES) + "."


def _algorithms_help() -> str:
    from netmodel.collectives.names import NCCL_ALGORITHMS

    return (f"Candidates for auto: 'nccl' ({', '.join(NCCL_ALGORITHMS)}: NCCL's own, to compare "
            f"with nccl-tests) or a comma list.")


def _tuner_help() -> str:
    from netmodel.collectives.tuner_plugin import NO_TUNER, tuner_names

    return ("A tuner choosing the algorithm and protocol under auto, where it makes a "
            "choice the fabric can run (elsewhere auto's): one of " + ", ".join(tuner_names())
            + f" ({NO_TUNER}: auto's own choice, the fastest of the model's costs; "
            "nccl: NCCL's tuner emulated; the plugins' regions: netmodel's data file "
            "collective_tuner_plugins.toml).")


def _buffsize_help() -> str:
    """``--nccl-buffsize``'s help, its default the Simple buffer the collective model's data
    file holds (read here as plain TOML: the calibration loader imports numpy)."""
    import tomllib
    from importlib import resources

    from compute.units import format_bytes

    text = resources.files("netmodel").joinpath("data/collective_defaults.toml") \
        .read_text(encoding="utf-8")
    default = format_bytes(tomllib.loads(text)["pipeline"]["simple_buffer"])
    return ("The run's NCCL_BUFFSIZE (bytes, or with a unit: 8MiB): the Simple protocol's "
            f"buffer, whose eighth is its pipeline chunk (default NCCL's {default}, "
            "collective_defaults.toml [pipeline] simple_buffer; with --scenario, the "
            "scenario's nccl_buffsize).")


def _tuner_metavar() -> str:
    from netmodel.collectives.tuner_plugin import tuner_names

    return choice_metavar(tuner_names())


def _placement_metavar() -> str:
    from netmodel.collectives.names import PLACEMENTS

    return choice_metavar(PLACEMENTS)


def _size_help() -> str:
    from compute.units import size_units

    return ("Message size (nccl-tests convention: the full buffer per rank): bytes, or a "
            "number with a unit (" + ", ".join(size_units()) + "; K, M, G and T are "
            "binary, as nccl-tests' -b takes them), e.g. 64MiB.")


#: Default of ``costs --max-rows``: rows a cost table may hold (each row is a few hundred
#: bytes in memory; 200,000 rows is about 100 MB).
MAX_ROWS = 200_000


def _items(text, option, example, key=None):
    """The comma-separated items of ``text`` (:func:`compute.validate.comma_list`; ``key``
    its)."""
    from compute.validate import comma_list

    return comma_list(option, text, f"e.g. {example}", key=key)


def _check_plot(plot_path):
    """``--plot`` checked before anything is computed: a writable file with a figure suffix
    (:func:`~netmodel.cli.resolve.check_figure_path`)."""
    if plot_path is not None:
        from netmodel.cli.resolve import check_figure_path

        check_figure_path("--plot", plot_path)


def _plot_outside(plot_path: str, output: str) -> None:
    """Refuse a ``--plot`` figure inside the folder ``--format vidur`` writes (``-o``): the
    folder is replaced whole by the tables, and a figure drawn there first is a file its
    manifest does not list, so the tables were refused after the figure was written."""
    from pathlib import Path

    from compute.errors import UserError

    figure, folder = Path(plot_path).resolve(), Path(output).resolve()
    if figure.is_relative_to(folder):
        raise UserError(f"--plot {plot_path!r} is inside --output {output!r}, the folder "
                        f"--format vidur replaces whole with its tables; give a figure path "
                        f"outside it")


def _check_seed(seed):
    from compute.errors import UserError

    if seed < 0:
        raise UserError(f"--seed must be a whole number >= 0, got {seed}")
    return seed


def _max_transfers(value):
    """``--max-transfers`` (None: the model's default), refusing values below 1."""
    from compute.errors import UserError
    from netmodel.collectives.model import MAX_TRANSFERS

    if value is None:
        return MAX_TRANSFERS
    if value < 1:
        raise UserError(f"--max-transfers must be >= 1, got {value}")
    return value


def _check_bytes(n, option, text):
    """Refuse message sizes below one byte."""
    from compute.errors import UserError

    if n < 1:
        raise UserError(f"{option} {text!r} is {n:g} B: a message is at least 1 byte")
    return n


def _message_size(text) -> float:
    """Bytes of ``--size`` (at least one)."""
    from compute.units import parse_bytes

    return _check_bytes(parse_bytes(text, "--size"), "--size", text)


def _buffsize(text):
    """``--nccl-buffsize`` in bytes (None where not given), refused unless NCCL could take
    it (:func:`netmodel.collectives.calibration.check_simple_buffer`)."""
    if text is None:
        return None
    from compute.units import parse_bytes
    from netmodel.collectives.calibration import SIMPLE_BUFFER_RULE, check_simple_buffer

    # the buffer's range, not a message's (1 B to 1 PiB), said below it and above alike
    n = parse_bytes(text, "--nccl-buffsize", rule=SIMPLE_BUFFER_RULE)
    check_simple_buffer(n, "--nccl-buffsize", typed=text)
    return float(n)


def _setup(fabric, scenario, placement, algorithm, algorithms, seed, max_transfers,
           plot=False, tuner=None, simple_buffer=None, nccl_release=None):
    """The costing the options name (:func:`netmodel.study.collective_setup.collective_setup`):
    with --scenario the routing options count only where they were typed (they override
    the scenario's), else their defaults (``tuner`` None: auto's own choice, or the scenario's)."""
    from compute.errors import UserError, chosen
    from netmodel.cli.resolve import keywords_as_flags
    from netmodel.study.collective_setup import collective_setup

    _check_seed(seed)
    if (fabric is None) == (scenario is None):
        raise UserError("give --fabric or --scenario, not both: --fabric costs a "
                        "fabric with this command's options, --scenario a scenario with "
                        "its own collective model")
    if scenario is not None:
        typed = given_on_command_line("placement", "algorithm", "seed", "tuner")
        placement = placement if "placement" in typed else None
        algorithm = algorithm if "algorithm" in typed else None
        seed = seed if "seed" in typed else None
        tuner = tuner if "tuner" in typed else None
    text = algorithms
    if algorithms is not None:
        if algorithm not in (None, "auto") and not plot:
            _refuse_algorithms(text, algorithm, "")
        names = [chosen(n, ("nccl",)) or n   # a keyword, read as every choice
                 for n in _items(algorithms, "--algorithms", "'nccl' or ring,tree", str.casefold)]
        if "nccl" in names and names != ["nccl"]:
            raise UserError(f"--algorithms {algorithms!r}: 'nccl' (NCCL's own set for the "
                            f"op) stands alone; otherwise give a comma list of algorithms")
        algorithms = "nccl" if names == ["nccl"] else tuple(names)
    with keywords_as_flags(), _names_as_flags(algorithm, text, algorithms, tuner):
        _check_algorithm_names(algorithm, algorithms)   # said now, with their flags
        # a tuner beside a named algorithm: tuner_refusal's rule
        setup = collective_setup(fabric, scenario, placement=placement, algorithm=algorithm,
                                 algorithms=algorithms, seed=seed,
                                 max_transfers=max_transfers, tuner=tuner,
                                 simple_buffer=simple_buffer, nccl_release=nccl_release)
    if text is not None and setup.algorithm != "auto" and not plot:
        _refuse_algorithms(text, setup.algorithm, " (the scenario's)")
    return setup


def _check_algorithm_names(algorithm, algorithms) -> None:
    """Refuse an unknown name of --algorithm or --algorithms as the model does when built
    (:func:`~netmodel.collectives.algorithms.unknown_algorithm`), before it is: its
    refusal then passes :func:`_names_as_flags`, which puts the flag in front."""
    from compute.errors import chosen
    from netmodel.collectives.algorithms import ALGORITHMS, unknown_algorithm

    if algorithm is not None and chosen(algorithm, ("auto", *ALGORITHMS)) is None:
        raise unknown_algorithm(algorithm, ("auto", *ALGORITHMS))
    for a in algorithms if isinstance(algorithms, tuple) else ():
        if chosen(a, ALGORITHMS) is None:
            raise unknown_algorithm(a)


@contextmanager
def _names_as_flags(algorithm, algorithms_text, algorithms, tuner):
    """The library's ``unknown algorithm 'X'; known: ...`` and ``unknown tuner 'X'; ...``
    said with the flag that gave the name and its text as typed (``--algorithms
    'ring,nope': unknown algorithm 'nope'; ...``): --algorithms where X is one of its
    list, else --algorithm; --tuner where one was given (a scenario's own names its
    file).

    >>> from compute.errors import UserError
    >>> try:
    ...     with _names_as_flags("auto", "ring,nope", ("ring", "nope"), None):
    ...         raise UserError("unknown algorithm 'nope'; known: 'ring', 'tree'")
    ... except UserError as exc:
    ...     print(exc)
    --algorithms 'ring,nope': unknown algorithm 'nope'; known: 'ring', 'tree'
    """
    import re

    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        m = re.match(r"unknown (algorithm|tuner) '((?:[^'\\]|\\.)*)'", str(exc))
        if m is None:
            raise
        # the name as its repr quoted it (a name of other scripts' characters is escaped)
        listed = isinstance(algorithms, tuple) and m[2] in {repr(a)[1:-1] for a in algorithms}
        flag, typed = {"algorithm": ("--algorithms", algorithms_text) if listed
                       else ("--algorithm", algorithm), "tuner": ("--tuner", tuner)}[m[1]]
        if typed is None:
            raise
        raise type(exc)(f"{flag} {typed!r}: {exc}") from None


#: The one placement a seed draws (:func:`netmodel.collectives.placement.partition`: a
#: seeded random sample); the others follow the fabric's numbering and take no seed.
_SEEDED_PLACEMENT = "random"


def _check_seed_used(setup) -> None:
    """A typed ``--seed`` refused where the placement ``setup`` costs with is not random:
    nothing else draws by it (``costs --placement contiguous --seed 5`` ran as without it,
    exit 0). The default seed stays silent; a scenario's own placement counts unless
    ``--placement`` overrides it."""
    from compute.errors import UserError

    typed = given_on_command_line("seed", "placement")
    if "seed" not in typed or setup.placement == _SEEDED_PLACEMENT:
        return
    if "placement" in typed:
        where = f"--placement {setup.placement} takes no seed"
    elif setup.scenario is not None:
        where = f"scenario {setup.label!r} places {setup.placement}, which takes no seed"
    else:
        where = f"the placement is {setup.placement} (--placement's default), which takes no seed"
    raise UserError(f"--seed {setup.seed} draws --placement {_SEEDED_PLACEMENT} only; "
                    f"{where}: give --placement {_SEEDED_PLACEMENT}, or drop --seed")


def _refuse_algorithms(text, algorithm, whose):
    """--algorithms only chooses for auto (and picks the lines of --plot)."""
    from compute.errors import UserError

    raise UserError(f"--algorithms {text!r} are the candidates --algorithm auto chooses "
                    f"among (and the lines --plot draws); --algorithm {algorithm!r}{whose} "
                    f"names one: drop one of the two")


def _parse_group(text):
    import re

    from compute.errors import UserError
    from compute.validate import MAX_WHOLE, NUMBER_PATTERN, describe, read_number

    text = text.strip()
    # a size is a number by the one grammar ('16', '+16', '1e1'; '1_6' and another
    # script's digits refused); isdecimal, not isdigit: int() refuses '²', which isdigit
    # takes (a GPU node's name may hold any digit, and '_' where it is no number)
    if text.lstrip("+-").isdecimal() or re.fullmatch(NUMBER_PATTERN, re.sub(r"[_\s]", "", text)):
        size = read_number("--group", text, whole=True)
        if size is not None and 1 <= size <= MAX_WHOLE:
            return size
        raise UserError(f"--group {describe(text)} must be a size >= 1 (at most "
                        f"{MAX_WHOLE:,}) or GPU nodes (gpu0,gpu1)")
    return _items(text, "--group", "a size (8) or GPU nodes (gpu0,gpu1)")


def _scenario_help() -> str:
    return ("Or a scenario, costed with its own collective model (its calibration, "
            "placement and algorithm, with its [adjust] and OCS circuits), as compare, "
            "infer --scenario and search --scenario cost it: " + scenario_help() + ". --algorithm, "
            "--algorithms, --placement, --seed, --nccl-release and --nccl-buffsize, where "
            "given, override its choices (the output names both; a scenario that runs "
            "every instance at once refuses --algorithms and --seed).")


class _FabricOrScenario(click.Command):
    """A command that needs --fabric or --scenario: one missing is refused while parsing,
    as click refuses a missing required option (so the docs' checker sees it too)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        if not ctx.resilient_parsing and ctx.params.get("fabric") is None and \
                ctx.params.get("scenario") is None:
            raise click.UsageError("Missing option '--fabric' (or '--scenario').", ctx)
        return rest


#: The fabric or scenario both commands cost on, and how they route it (after each one's
#: --algorithm).
_fabric_options = [
    click.option("--fabric", default=None, metavar="SPEC", cls=RegistryHelp,
                 help_from=lambda: "The fabric: " + fabric_help() + " Costed with the "
                 "shipped calibration and this command's --algorithm and --placement (a "
                 "scenario's own collective model: --scenario)."),
    click.option("--scenario", default=None, metavar="S", cls=RegistryHelp,
                 help_from=_scenario_help),
]
_routing_options = [
    click.option("--algorithms", default=None, metavar="LIST", cls=RegistryHelp,
                 help_from=_algorithms_help),
    click.option("--placement", default="contiguous", cls=RegistryHelp,
                 show_default="contiguous; with --scenario the scenario's",
                 metavar_from=_placement_metavar,
                 help="How a group of a size is placed on the fabric's GPUs (random: by "
                 "--seed)."),
    click.option("--seed", default=0, type=WHOLE, show_default=True, metavar="N",
                 help="Seed of random placement (refused with another placement)."),
    click.option("--tuner", default=None, cls=RegistryHelp,
                 show_default="none; with --scenario the scenario's",
                 metavar_from=_tuner_metavar, help_from=_tuner_help),
    click.option("--nccl-buffsize", "buffsize", default=None, metavar="SIZE",
                 type=ReadAs(_buffsize), cls=RegistryHelp, help_from=_buffsize_help),
    click.option("--nccl-release", "release_text", default=None, metavar="RELEASE",
                 help="The NCCL release to emulate (MAJOR.MINOR[.PATCH], e.g. 2.26 or "
                 "2.28.9): the constants that differ by release (Blackwell's NVLS channels "
                 "and tree caps, send/recv channels across nodes) as it had them (default "
                 "the newest the data file holds, collective_generations.toml [release]; "
                 "with --scenario, the scenario's nccl_release)."),
]


@click.command("collective", cls=_FabricOrScenario)
@click.argument("op", metavar="OP")
@with_options(_fabric_options)
@click.option("--group", "wanted", default="8", show_default=True, metavar="N|NODES",
              type=ReadAs(_parse_group),
              help="Group size (placed by --placement) or comma-separated GPU nodes.")
@click.option("--size", "size", default="64MiB", show_default=True, metavar="SIZE",
              cls=RegistryHelp, help_from=_size_help, type=ReadAs(_message_size))
@click.option("--algorithm", default="auto", metavar="auto|NAME",
              show_default="auto; with --scenario the scenario's",
              cls=RegistryHelp, help_from=_algorithm_help)
@with_options(_routing_options)
@click.option("--fail", "fail_text", default=None, metavar="LIST",
              help="Failed nodes and links (u/v), comma-separated, e.g. spine0,leaf1/spine2: "
              "cost after rerouting, against the healthy fabric. A failed tier-0 (NVLink) "
              "switch also stops every GPU wired to it (nothing is rerouted around it over "
              "the NICs), as blast-radius counts it.")
@click.option("--all-groups", is_flag=True,
              help="Also run every group of this size (cut by --placement) at once, "
              "sharing links, and report the slowdown against running alone.")
@click.option("--max-transfers", default=None, type=WHOLE, metavar="N",
              help="Most point-to-point transfers one algorithm may route for one group, "
              "and with --all-groups for all of them together (everyone-to-everyone "
              "algorithms route p(p-1); default 20,000,000); counted before anything is "
              "built.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png",
              help="Also draw busbw against size for every algorithm.")
def collective(op: str, fabric: str | None, scenario: str | None, wanted: int | list[str],
               size: float, algorithm: str, algorithms: str | None, placement: str,
               seed: int, tuner: str, fail_text: str | None, all_groups: bool,
               max_transfers: int | None, buffsize: float | None,
               release_text: str | None, as_json: bool, plot_path: str | None) -> None:
    """Cost of one collective OP (all-reduce, reduce-scatter, all-gather, broadcast,
    reduce, all-to-all, send-recv) on a group of GPUs of a fabric, or of a scenario as compare
    costs it."""
    import json

    from compute.comm import check_op
    from compute.errors import UserError
    from netmodel.study.collective_report import collective_report

    op = check_op(op)
    _check_plot(plot_path)
    max_transfers = _max_transfers(max_transfers)
    setup = _setup(fabric, scenario, placement, algorithm, algorithms, seed, max_transfers,
                   plot=plot_path is not None, tuner=tuner,
                   simple_buffer=buffsize, nccl_release=release_text)
    group_text = as_typed("wanted")   # as typed, for the refusals below
    if not isinstance(wanted, int):
        _check_named_group(group_text, all_groups, setup)
    _check_seed_used(setup)   # after a named group's refusal, which names --seed too
    links, nodes = _failures(fail_text) if fail_text is not None else ((), ())
    try:
        report = collective_report(setup, op, size, wanted, failed_links=links,
                                   failed_nodes=nodes, failed=fail_text,
                                   all_groups=all_groups, plot=plot_path)
    except UserError as exc:
        from netmodel.cli.resolve import keywords_as_flags

        _algorithm_refused(exc, setup)
        _said_with_flags(exc, {
            "group": value_refused_as("--group", group_text, "group size", "group member"),
            "placement": _placement_flag(placement),
            "failed": value_refused_as("--fail", str(fail_text), "failed node",
                                       "failed link", "every GPU"),
            # algorithms/seed a scenario's at-once cost does not take
            "at_once": keywords_as_flags()})
    if report.plot_skipped:
        click.echo(f"note: {plot_path} not written: {report.plot_skipped}", err=True)
    click.echo(json.dumps(report.to_dict(), indent=1) if as_json else report.table())
    if report.plot and not as_json:
        click.echo(f"wrote {report.plot}")


def _algorithm_refused(exc, setup) -> None:
    """Raise the model's ``no algorithm can run OP on this group ...`` where one algorithm
    was asked for (``--algorithm torus`` on a ring, a scenario's own ``[collective]
    algorithm``) said with who asked: ``--algorithm 'torus': ...`` where typed, else
    ``scenario 'X' [collective] algorithm 'torus': ...``; any other refusal returns."""
    from compute.errors import UserError

    if not str(exc).startswith("no algorithm can run") or setup.algorithm in (None, "auto"):
        return
    if "algorithm" in given_on_command_line("algorithm"):
        raise UserError(f"--algorithm {setup.algorithm!r}: {exc}; give --algorithm auto (the "
                        f"fastest valid one) or one that runs on this fabric") from None
    if setup.scenario is not None:
        raise UserError(f"scenario {setup.label!r} [collective] algorithm "
                        f"{setup.algorithm!r}: {exc}; give --algorithm auto to cost it with "
                        f"the fastest valid one") from None


def _placement_flag(placement: str):
    """The context that says a refusal of the placement policy (``rail-aligned`` on a
    fabric without rails) with ``--placement`` where it was typed; a scenario's own
    placement is said in the library's words."""
    if "placement" not in given_on_command_line("placement"):
        return nullcontext()
    return value_refused_as("--placement", placement, f"{placement} placement")


def _said_with_flags(exc, flags: dict) -> NoReturn:
    """Raise the library's refusal ``exc`` said with the flag of the parameter it refuses
    (its ``parameter``, :func:`~netmodel.study.collective_report.collective_report`):
    ``flags`` maps a parameter to the context that says its refusals with the flag
    (:func:`~netmodel.cli.refusals.value_refused_as`); any other passes as it is."""
    with flags.get(getattr(exc, "parameter", None), nullcontext()):
        raise exc


def _check_named_group(group_text: str, all_groups: bool, setup) -> None:
    """``--group`` names its GPUs: refuse the options that only place a group of a size
    (they would be ignored, and --all-groups would cut groups unlike the one named), and a
    scenario (its instances are placed by its placement, as compare places them)."""
    from compute.errors import UserError

    if setup.scenario is not None:
        raise UserError(f"--group {group_text!r} names GPU nodes; with --scenario a group "
                        f"is a size, placed as the scenario places an instance (placement "
                        f"{setup.placement}): give a size, or --fabric to name GPUs")
    if all_groups:
        raise UserError(f"--all-groups cuts every group of a size by --placement; --group "
                        f"{group_text!r} names GPU nodes: give --group a size instead")
    given = [f"--{p}" for p in given_on_command_line("placement", "seed")]
    if given:
        raise UserError(f"{' and '.join(given)}: only a group given as a size is placed; "
                        f"--group {group_text!r} names its GPU nodes")


def _failures(text):
    """``a/b`` items are links, others nodes."""
    from compute.errors import UserError

    links, nodes = [], []
    for item in _items(text, "--fail", "spine0,leaf1/spine2"):
        if "/" in item:
            u, _, v = item.partition("/")
            if not u or not v:
                raise UserError(f"--fail link {item!r} must be written NODE/NODE")
            links.append((u, v))
        else:
            nodes.append(item)
    return links, nodes


#: ``costs --format`` choices: name -> what it writes (the library's table formats and
#: Vidur's folder).
FORMATS = {**TABLE_FORMATS, **VIDUR_FORMAT}


@click.command("costs", cls=_FabricOrScenario)
@with_options(_fabric_options)
@click.option("--ops", "ops_text", default="all-reduce", show_default=True, metavar="LIST",
              help="Comma-separated operations.")
@list_option("--sizes", "sizes_text", default="1KiB:1GiB", show_default=True,
             metavar="LO:HI[:FACTOR]|LIST",
             help="Message sizes (as --size of netmodel collective takes one): LO:HI "
             "(powers of two), LO:HI:FACTOR or a comma list.")
@list_option("--groups", "groups_text", default="2,4,8", show_default=True, metavar="LIST",
             help="Comma-separated group sizes (placed by --placement).")
@click.option("--algorithm", default="auto", metavar="auto|all|NAME",
              show_default="auto; with --scenario the scenario's",
              cls=RegistryHelp,
              help_from=lambda: _algorithm_help()[:-1] + ", or all (one row per algorithm).")
@with_options(_routing_options)
@click.option("--format", "fmt", type=RegistryChoice(lambda: FORMATS), default="csv",
              show_default=True,
              help="; ".join(f"{k}: {v}" for k, v in FORMATS.items()) + ".")
@click.option("-o", "--output", default=None, metavar="PATH",
              help="Write the table to PATH (atomically) instead of stdout: a .csv file for "
              "--format csv, .json for json, .txt or .log for the nccl formats, a folder for "
              "vidur.")
@click.option("--max-transfers", default=None, type=WHOLE, metavar="N",
              help="Most point-to-point transfers one algorithm may route for one group "
              "(everyone-to-everyone algorithms route p(p-1); default 20,000,000); counted "
              "before anything is built.")
@click.option("--max-rows", default=MAX_ROWS, show_default=True, type=WHOLE, metavar="N",
              help="Refuse tables of more rows than this (ops x groups x sizes, x algorithms "
              "for --algorithm all), counted before anything is computed.")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png",
              help="Also draw busbw against size, one line per algorithm, per op "
              "(largest group).")
def costs(fabric: str | None, scenario: str | None, ops_text: str, sizes_text: str,
          groups_text: str, algorithm: str, algorithms: str | None, placement: str, seed: int,
          tuner: str, buffsize: float | None, release_text: str | None, fmt: str,
          output: str | None, max_transfers: int | None, max_rows: int,
          plot_path: str | None) -> None:
    """Lookup table of collective costs (op, algorithm, protocol, group size, bytes,
    seconds, algbw, busbw) that other programs can read: CSV, JSON, nccl-tests logs or
    Vidur's network profiles."""
    from compute.comm import check_op
    from compute.errors import UserError
    from compute.units import count_sizes, parse_size_range
    from compute.validate import number_text, read_number, refuse_repeats
    from netmodel.collectives.algorithms import ALGORITHMS
    from netmodel.collectives.cost_table import check_groups
    from netmodel.study.collective_report import cost_table

    ops = [check_op(o) for o in _items(ops_text, "--ops", "all-reduce,all-gather", str.casefold)]
    group_items = _items(groups_text, "--groups", "2,4,8")
    number_text("--groups", groups_text)   # a refusal names all of it
    groups = [read_number("--groups", g, whole=True) for g in group_items]   # one grammar
    if None in groups:
        raise UserError(f"--groups {groups_text!r} must be comma-separated integers")
    one = dict(zip(group_items, groups, strict=True))   # 2 and 02 are one group
    refuse_repeats("--groups", group_items, one.__getitem__, text=groups_text)
    with value_refused_as("--groups", groups_text, "group sizes"):
        check_groups(groups)   # the table's rule, before the fabric is built
    _check_seed(seed)
    if max_rows < 1:
        raise UserError(f"--max-rows must be >= 1, got {max_rows}")
    if fmt == "vidur":
        if output is None:
            raise UserError("--format vidur writes a folder of CSV files: give it with -o DIR")
        if algorithm == "all":
            raise UserError("--format vidur holds one time per size: use --algorithm auto or "
                            "one algorithm, not all")
    if output is not None:
        from compute.output_paths import check_file_path, check_folder_path

        with value_refused_as("--output", output, "output file", "output folder"):
            if fmt == "vidur":
                check_folder_path(output)
            else:
                check_format_suffix(output, fmt, TABLE_SUFFIXES,
                                    bool(given_on_command_line("fmt")))
                check_file_path(output, "output file", TABLE_SUFFIXES[fmt])
    if fmt == "vidur" and plot_path is not None:
        _plot_outside(plot_path, output)
    _check_plot(plot_path)
    per_size = len(ops) * len(groups) * (len(ALGORITHMS) if algorithm == "all" else 1)
    estimate = count_sizes(sizes_text, "--sizes") * per_size
    if estimate > max_rows:
        raise UserError(f"--sizes {sizes_text!r} with {len(ops)} op(s) and {len(groups)} "
                        f"group size(s) makes up to {estimate:,} rows, above the limit of "
                        f"{max_rows:,}: use a larger factor, a narrower range or fewer "
                        f"ops/groups, or raise --max-rows")
    sizes = [_check_bytes(n, "--sizes", sizes_text)
             for n in parse_size_range(sizes_text, "--sizes")]
    every = algorithm == "all"
    setup = _setup(fabric, scenario, placement, "auto" if every else algorithm,
                   algorithms, seed, _max_transfers(max_transfers), plot=plot_path is not None,
                   tuner=tuner, simple_buffer=buffsize,
                   nccl_release=release_text)
    _check_seed_used(setup)
    try:
        table = cost_table(setup, ops, sizes, groups, all_algorithms=every, plot=plot_path)
    except UserError as exc:   # a group size over the fabric's
        _algorithm_refused(exc, setup)
        _said_with_flags(exc, {"groups": value_refused_as("--groups", groups_text,
                                                          "group size "),
                               "placement": _placement_flag(placement)})
    also = f" and {plot_path}" if plot_path else ""
    if fmt == "vidur":
        import os
        from pathlib import Path

        from compute.outputs import write_outputs

        files = table.vidur_files()
        with output_refused_as("--output", output):
            write_outputs(output, files, run=run_record())
        # the folder with one separator after it, however many -o gave (vidur/, not vidur//)
        folder = os.path.join(Path(output), "")
        click.echo(f"wrote {len(table.rows)} rows to {folder} ({', '.join(files)}){also}")
    elif output is not None:
        from compute.outputs import atomic_write

        with output_refused_as("--output", output, "output file"):
            atomic_write(output, table.table(fmt).encode())
        click.echo(f"wrote {len(table.rows)} rows to {output}{also}")
    else:
        click.echo(table.table(fmt), nl=False)
        if plot_path:
            click.echo(f"wrote {plot_path}", err=True)
