"""The inputs of ``netmodel blast-radius`` and ``netmodel availability``
(:mod:`netmodel.cli.reliability`, the commands), read and checked: the failure catalog with
its ``--rate``/``--repair-time``/``--area-share``/... overrides (:func:`_catalog`), times,
bandwidths, cluster sizes, the scenario or fabric, the phase and the spare placement, the
Monte Carlo's ``--trials``, ``--horizon``, ``--seed`` and ``--threshold``, and the library's
refusals said with the flags typed (:func:`_parameters_as_flags`, :func:`_work_as_flags`).

Only click is imported at module level (``netmodel --help`` stays fast).
"""

from __future__ import annotations

from contextlib import contextmanager

import click

from netmodel.cli.options import (
    as_typed,
    given_on_command_line,
    slo_of,
)
from netmodel.cli.refusals import output_refused_as, value_refused_as

__all__ = ["GPU_RATE"]


#: ``--rate gpu=R``: the reference GPU's whole rate per hour (the catalog's ``[gpu]``),
#: which the die/package split turns into ``gpu-die`` and ``gpu-package`` per GPU.
GPU_RATE = "gpu"


def _pairs(option: str, texts, parse, extra: tuple[str, ...] = ()) -> dict:
    """``CLASS=VALUE`` options into ``{class: (parse(value), text)}``, each value with the
    text it was typed as (``extra``: names taken besides the component classes)."""
    from compute.errors import UserError
    from netmodel.study.reliability_catalog import check_class

    out, given = {}, {}
    for text in texts:
        name, eq, value = text.partition("=")
        if not eq or not name.strip() or not value.strip():
            raise UserError(f"{option} {text!r} must be CLASS=VALUE, e.g. transceiver=2e-5")
        try:
            cls = check_class(name.strip(), also=extra)
        except UserError as e:
            # --rate takes the GPU's whole rate; a repair time is a part's
            hint = (f" (a GPU is repaired as its die or its package: {option} gpu-die=T, "
                    f"{option} gpu-package=T)") if name.strip() == GPU_RATE else ""
            raise UserError(f"{option}: {e}{hint}") from None
        if cls in given:   # the later one was taken without a word
            raise UserError(f"{option} gives class {cls} twice ({given[cls]!r} and {text!r}); "
                            f"give each class once")
        given[cls] = text
        out[cls] = parse(value.strip(), f"{option} {name.strip()}"), text
    return out


def _per_hour(text: str, what: str) -> float:
    """A ``--rate CLASS=R`` value: failures per part per hour (``2e-5`` or ``2e-5/h``), a
    finite number >= 0 as a duration is (``parse_duration``); the most a rate may be is the
    catalog's to check (:meth:`~netmodel.study.reliability_catalog.Catalog.with_`, said with
    the flag by :func:`_catalog`)."""
    import math

    from compute.errors import UserError
    from compute.validate import ZeroAllowed, number_text, read_number

    number_text(what, text)   # a refusal names all of it
    v = read_number(what, text[:-2] if text.endswith("/h") else text,   # the one grammar
                    allowed=ZeroAllowed("a finite number >= 0 per hour"))
    if v is None:
        raise UserError(f"{what} {text!r} must be failures per part per hour, e.g. 2e-5 or "
                        f"2e-5/h") from None
    if not math.isfinite(v) or v < 0:
        raise UserError(f"{what} must be a finite number >= 0 per hour, got {text!r}")
    return v


def _hours(text: str, what: str) -> float:
    from netmodel.study.reliability_catalog import HOUR

    return _seconds(text, what) / HOUR


def _catalog(area_share, repair, rates, repair_times, detection, warmup, load_from,
             storage):
    """The failure catalog with the options' overrides (``detection``, ``warmup``: seconds,
    ``storage``: bytes/s, as the command gets them; None where not given). Each value is
    checked once, by the catalog (:meth:`~netmodel.study.reliability_catalog.Catalog.with_`),
    one override at a time, so that its refusal (``rate of nic must be a number from 0 to 1
    per hour``, in the catalog's words) is said with the flag and the text that gave it
    (:func:`~netmodel.cli.refusals.value_refused_as`)."""
    from compute.errors import UserError
    from netmodel.study.reliability_catalog import catalog
    from topologies.failure_domains import GPU_CLASSES

    per_class = _pairs("--rate", rates, _per_hour, extra=(GPU_RATE,))
    for name in GPU_CLASSES:
        if name in per_class:
            raise UserError(f"--rate {name}: its rate comes from the GPU's split; set the "
                            f"reference GPU's whole rate with --rate {GPU_RATE}=R (0 turns "
                            f"GPU failures off) or the split with --area-share")
    repair_hours = _pairs("--repair-time", repair_times, _hours)
    # repair before the repair times (they are the chosen repair's), load_from before the
    # storage bandwidth (taken only with storage): as one call of with_ applies them
    cat = catalog().with_(area_share=area_share, repair=repair, load_from=load_from)
    for cls, (rate, text) in per_class.items():
        with value_refused_as("--rate", text, "rate of "):
            cat = _gpu_rate(cat, rate) if cls == GPU_RATE else cat.with_(rates={cls: rate})
    for cls, (hours, text) in repair_hours.items():
        with _time_refused_as("--repair-time", text, f"repair time of {cls}"):
            cat = cat.with_(repair_hours={cls: hours})
    for name, seconds, words in (("detection", detection, "detection time"),
                                 ("warmup", warmup, "warm-up time")):
        if seconds is not None:
            with _time_refused_as(f"--{name}", as_typed(name), words):
                cat = cat.with_(**{f"{name}_s": seconds})
    if storage is None:
        return cat
    with _bandwidth_refused_as(as_typed("load_bandwidth")):
        return cat.with_(host_storage_bandwidth=storage)


def _gpu_rate(cat, rate: float):
    """``cat`` with ``--rate gpu=R``, the reference GPU's whole rate, whose refusal the
    catalog words with its parameter (``gpu_rate_per_hour must be a number from 0 to 1 per
    hour``), said as the class typed is (``rate of gpu (the reference GPU's whole rate) must
    be ...``): the command line has no ``gpu_rate_per_hour``."""
    from compute.errors import UserError

    try:
        return cat.with_(gpu_rate_per_hour=rate)
    except UserError as exc:
        said, param = str(exc), "gpu_rate_per_hour "
        if not said.startswith(param):
            raise
        raise UserError(f"rate of {GPU_RATE} (the reference GPU's whole rate) "
                        f"{said[len(param):]}") from None


@contextmanager
def _time_refused_as(flag: str, typed: str, words: str):
    """The catalog's refusal of a time (``words``: ``detection time``, ``repair time of
    nic``) that ``flag`` gave as ``typed`` (``1e30y``, or ``CLASS=T`` of ``--repair-time``),
    said with the flag and the longest time taken in the unit typed: the catalog speaks
    seconds (``from 0 to 3.156e+09 (a century), got 3.15576e+37``) where the user typed
    years. Any other error passes as it is (:func:`~netmodel.cli.refusals.value_refused_as`).

    The value was read (:func:`_seconds`: a finite number >= 0), so the catalog refuses it
    only past :data:`~netmodel.study.reliability_catalog.MAX_TIME_S`, whose value is read
    here, not restated.

    >>> from netmodel.study.reliability_catalog import catalog
    >>> try:  # doctest: +NORMALIZE_WHITESPACE
    ...     with _time_refused_as("--detection", "1e30y", "detection time"):
    ...         catalog().with_(detection_s=_seconds("1e30y", "--detection"))
    ... except Exception as exc:
    ...     print(exc)
    --detection '1e30y': detection time is longer than 100 y, the longest time taken;
    allowed: 0 to 100y
    """
    from compute.errors import UserError
    from compute.units import split_number
    from netmodel.study.reliability_catalog import MAX_TIME_S, duration_text, parse_duration

    try:
        with value_refused_as(flag, typed, words):
            yield
    except UserError as exc:
        if not str(exc).startswith(f"{flag} {typed!r}: {words} "):
            raise
        value = typed.partition("=")[2] if "=" in typed else typed
        unit = (split_number(value.strip(), flag) or ("", ""))[1]
        most = MAX_TIME_S / parse_duration(f"1{unit}", flag)
        raise UserError(f"{flag} {typed!r}: {words} is longer than {duration_text(MAX_TIME_S)}, "
                        f"the longest time taken; allowed: 0 to {most:.6g}{unit or 's'}") from None


def _seconds(text: str, flag: str) -> float:
    """Seconds of ``--detection``, ``--warmup`` or a ``--repair-time`` (``flag``); their
    range (0 to a century) is the catalog's to check (:func:`_catalog`), and said by a
    refusal of a time below it (-1, nan) as one past it is."""
    from netmodel.study.reliability_catalog import MAX_TIME_S, duration_text, parse_duration

    return parse_duration(text, flag, allow_zero=True,
                          rule=f"a duration from 0 to {duration_text(MAX_TIME_S)}")


def _storage_bandwidth(text: str) -> float:
    """Bytes/s of ``--load-bandwidth`` (a finite number > 0 with a bandwidth unit); its
    range (a GPU's least bandwidth to :data:`~netmodel.study.reliability_catalog.
    MAX_STORAGE_BANDWIDTH`) is the catalog's to check (:func:`_bandwidth_refused_as`)."""
    from compute.units import parse_bandwidth

    return parse_bandwidth(text, "--load-bandwidth",
                           rule=f"a bandwidth from {_storage_range()}")


def _storage_range() -> str:
    """The storage bandwidths ``--load-bandwidth`` takes, as every refusal of it states
    them (below the range or above it): a GPU's least bandwidth (compute/data/limits.toml)
    to :data:`~netmodel.study.reliability_catalog.MAX_STORAGE_BANDWIDTH`.

    >>> _storage_range()
    '1 MB/s to 1 PB/s'
    """
    from compute.hardware import spec_ranges
    from netmodel.study.reliability_catalog import MAX_STORAGE_BANDWIDTH

    return (f"{spec_ranges()['scaleup_bandwidth'][0] / 1e6:g} MB/s to "
            f"{MAX_STORAGE_BANDWIDTH / 1e15:g} PB/s")


#: How the catalog's refusal of a storage bandwidth below its floor starts (the one past
#: its ceiling starts ``storage bandwidth must be a number``).
_BELOW_FLOOR = "host_storage_bandwidth must be >="


@contextmanager
def _bandwidth_refused_as(typed: str):
    """The catalog's refusal of the storage bandwidth ``--load-bandwidth`` gave as
    ``typed`` (:meth:`~netmodel.study.reliability_catalog.Catalog.with_`, which checks it
    against the floor a GPU's bandwidth has, 1 MB/s in compute/data/limits.toml, and 1 PB/s)
    said with the flag and the range in MB/s and PB/s, read from the catalog's limits: the
    catalog speaks bytes/s (``must be a number from 0 to 1e+15 bytes/s``, the floor apart).
    Below the floor the load time overflowed to inf (1e-300 B/s: NaN availability) or ran
    past the century the times are held to (1 B/s: 1.6e10 s a swap). Any other error (the
    bandwidth given without ``--load-from storage``, whose ``host_storage_bandwidth`` the
    command line says as ``--load-bandwidth``, as that option declares) passes as it is.

    >>> from netmodel.study.reliability_catalog import catalog
    >>> try:  # doctest: +NORMALIZE_WHITESPACE
    ...     with _bandwidth_refused_as("2PB/s"):
    ...         catalog().with_(load_from="storage", host_storage_bandwidth=2e15)
    ... except Exception as exc:
    ...     print(exc)
    --load-bandwidth '2PB/s' is above 1 PB/s, the most a storage bandwidth may be; allowed:
    1 MB/s to 1 PB/s
    """
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        said = str(exc)
        if not said.startswith((_BELOW_FLOOR, "storage bandwidth must be a number")):
            raise
        least, _, most = _storage_range().partition(" to ")
        side = (f"below {least}, the least a GPU's bandwidth may be" if
                said.startswith(_BELOW_FLOOR) else
                f"above {most}, the most a storage bandwidth may be")
        raise UserError(f"--load-bandwidth {typed!r} is {side}; allowed: {least} to "
                        f"{most}") from None


def _absent(cluster, rates, repair_times) -> list[str]:
    """A note for each class named by ``--rate`` or ``--repair-time`` that the cluster's
    fabric has no part of (an OCS on a fabric without one): its value changes nothing."""
    present = {e.cls for e in cluster.effects()}
    notes = []
    for option, texts in (("--rate", rates), ("--repair-time", repair_times)):
        for text in texts:
            name = text.partition("=")[0].strip()
            if name not in present and not (option == "--rate" and name == GPU_RATE):
                notes.append(f"note: {option} {name}: {cluster.scenario.label} has no part of "
                             f"class {name}; the value changes nothing")
    return notes


def _settings(ttft: float, tbt: float, phase: str):
    """The SLO of ``--ttft`` and ``--tbt``; the one ``phase`` never reads (TTFT limits a
    prefill, TBT a decode step: Slo.limit) refused when typed."""
    from netmodel.cli.resolve import check_phase_options

    slo = slo_of(ttft, tbt)
    check_phase_options(phase, {"ttft": ttft, "tbt": tbt})   # after the values
    return slo


def shown_text(text) -> str:
    """``text`` quoted for an error line, cut to its first 20 characters past 40."""
    return repr(text) if len(str(text)) <= 40 else \
        f"{str(text)[:20]!r}... ({len(str(text)):,} characters)"


def _gpus(text) -> int | None:
    """The cluster size of ``--cluster-gpus N`` (its older spelling ``--gpus N`` is an alias
    of the one option: elsewhere in the CLI ``--gpus`` names GPUs, so the help shows the
    new one), the option's own parser (:class:`~netmodel.cli.options.ReadAs`): the command
    gets the whole number. GPU names given as the size are told how these commands take a
    GPU (:func:`_gpu_name_hint`, from the ``--scenario`` or ``--fabric`` typed beside it).

    >>> _gpus("131,072"), _gpus("64")
    (131072, 64)
    >>> _gpus("0")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --cluster-gpus '0' must be at least 1 GPU: a multiple of the scenario's fabric (leave it out for one copy)
    """
    from compute.errors import UserError
    from compute.validate import GROUPED_RULE, read_grouped

    flag = "--cluster-gpus"
    if text is None:
        return None
    t = str(text).strip()
    # a whole number by the one grammar, or thousands grouped by commas (131,072; '3,2'
    # read as 32 before, '0,128' as 128); '_' is refused as everywhere (read_grouped)
    n = read_grouped(flag, t)
    if n is None or n < 0:
        raise UserError(f"{flag} {shown_text(text)} must be a whole number of GPUs "
                        f"({GROUPED_RULE})" + _gpu_name_hint(t))
    digits = str(n)
    from netmodel.study.reliability_fabric import MAX_GPUS

    # past MAX_GPUS the library's refusal named its parameter (gpus), not this option
    if len(digits.lstrip("0")) > 18 or int(digits) > MAX_GPUS:
        raise UserError(f"{flag} {shown_text(text)} exceeds the largest cluster modelled "
                        f"({MAX_GPUS:,} GPUs)")
    if int(digits) == 0:   # the library's 'gpus must be ... >= 1' named no option
        raise UserError(f"{flag} {shown_text(text)} must be at least 1 GPU: a multiple of "
                        f"the scenario's fabric (leave it out for one copy)")
    return int(digits)


@contextmanager
def _parameters_as_flags(**reading: str):
    """A library :class:`~compute.errors.UserError` raised inside that starts with a
    parameter of the run given by an option typed on the command line (``gpus 1,000 is not
    a multiple of ...``, :func:`~netmodel.study.reliability_fabric.cluster_cells`;
    ``spares '-1' must be ...``, ``horizon '1' is shorter than an hour``) said with the flag
    of the running command that gave it (``--gpus`` is an alias of ``--cluster-gpus``: said
    as its first flag), there and where a later clause starts with it again (``...; spares
    must be a percentage >= 0``, a number below the smallest read: one name for the option,
    as ``--detection``'s refusal says it), read from the command's own options: the library
    names parameters, the command line its flags (as
    :func:`~netmodel.cli.resolve.keywords_as_flags` does for ``name=value``). An option left
    at its default is never named: the user did not type it (a run of ``--fabric`` whose
    scenario the library names is not ``--scenario``).
    ``reading`` names the flag of a parameter whose text an option's own parser is reading
    (``horizon="--horizon"``, :func:`_horizon`): while click converts a value, whether it
    was typed is not yet recorded on every click release (8.4.0 records it after), and the
    parser runs only on the text click hands it, so it names its flag itself.

    >>> from compute.errors import UserError
    >>> cmd = click.Command("x", params=[click.Option(["--cluster-gpus", "--gpus"]),
    ...                                  click.Option(["--seed"], default="0")])
    >>> def said(message, *typed):
    ...     try:
    ...         with cmd.make_context("x", list(typed)), _parameters_as_flags():
    ...             raise UserError(message)
    ...     except UserError as exc:
    ...         return str(exc)
    >>> said("gpus 1,000 is not a multiple of the scenario's fabric", "--gpus", "1000")
    "--cluster-gpus 1,000 is not a multiple of the scenario's fabric"
    >>> said("seed 0 is not taken here", "--gpus", "1000")   # --seed not typed
    'seed 0 is not taken here'
    >>> said("gpus '1e-320' is tiny; gpus must be >= 1 (gpus_per_server 8)", "--gpus", "1")
    "--cluster-gpus '1e-320' is tiny; --cluster-gpus must be >= 1 (gpus_per_server 8)"
    """
    import re

    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        ctx = click.get_current_context(silent=True)
        options = [p for p in (ctx.command.params if ctx else ())
                   if isinstance(p, click.Option)]
        typed = set(given_on_command_line(*(p.name for p in options))) if ctx else set()
        flags = {f[2:].replace("-", "_"): p.opts[0] for p in options if p.name in typed
                 for f in p.opts if f.startswith("--")} | reading
        given = re.match(r"([a-z][a-z_]*)(?![\w-])", str(exc))   # the parameter it names
        if given is None or given[1] not in flags:
            raise
        # the name where it starts the line and where a clause after starts with it again
        raise type(exc)(re.sub(rf"(^|; |, and ){given[1]}(?![\w-])",
                               lambda m: m[1] + flags[given[1]], str(exc))) from None


#: The library's words for what sets a Monte Carlo's work (the event cap's advice,
#: :func:`~netmodel.study.availability_mc.simulate`) and the same advice in flags.
_WORK_WORDS = {"fewer trials": "fewer --trials", "a shorter horizon": "a shorter --horizon",
               "shorter repair times": "shorter --repair-time",
               "lower failure rates": "lower --rate"}


@contextmanager
def _work_as_flags():
    """A refusal of the Monte Carlo's work (``4.26e+07 failure events to simulate ...: give
    fewer trials or a shorter horizon``) said with the flags its advice means (``give fewer
    --trials or a shorter --horizon``) and the cluster's flag too (the events grow with its
    GPUs): the library names the run's parameters, the command line its flags.

    >>> from compute.errors import UserError
    >>> try:
    ...     with _work_as_flags():
    ...         raise UserError("9 failure events to simulate; give fewer trials")
    ... except UserError as exc:
    ...     print(exc)
    9 failure events to simulate; give fewer --trials; a smaller --cluster-gpus lowers the \
work too
    """
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        text = str(exc)
        if "failure events" not in text:
            raise
        for words, flags in _WORK_WORDS.items():
            text = text.replace(words, flags)
        raise type(exc)(f"{text}; a smaller --cluster-gpus lowers the work too") from None


def _gpu_name_hint(text: str) -> str:
    """Where a cluster size was given GPU names (compare's and sweep's ``--gpus`` take
    them), how these commands take a GPU instead: in the scenario (``NAME@GPU``, the
    ``--scenario`` typed on the command line, else ``NAME``) or, with ``--fabric``, in the
    fabric (a spec's ``gpu=``). Read from the words typed (the option's parser runs while
    click converts the values, before the others are known)."""
    from compute.hardware import catalog
    from netmodel.cli.options import INVOKED, typed_values

    names = [n.strip() for n in text.split(",")]
    if not any(n in catalog() for n in names):
        return ""
    ctx = click.get_current_context(silent=True)
    words = list(ctx.meta.get(INVOKED, (None, []))[1]) if ctx else []
    words = words[:words.index("--")] if "--" in words else words
    typed = {p.name: typed_values(p, words)[-1][1] for p in (ctx.command.params if ctx else ())
             if isinstance(p, click.Option) and p.name in ("scenario", "fabric")
             and typed_values(p, words)}
    if "fabric" in typed and "scenario" not in typed:   # its GPUs are the fabric's own
        return (f"; it is the cluster size here: the GPU is the fabric's (a spec's "
                f"gpu={names[0]} sets it)")
    scenario = typed.get("scenario", "NAME")
    base = scenario.split("@")[0] if "@" in scenario or \
        all(c.isalnum() or c in "-_" for c in scenario) else "NAME"
    return (f"; it is the cluster size here: run on {names[0]} with "
            f"--scenario {base}@{names[0]}")


def _where(scenario: str | None, fabric: str | None):
    """The scenario of ``--scenario`` (its name, read by the library) or of ``--fabric``
    (a saved ``.json``/``.graphml`` fabric, a spec or a scenario's fabric:
    :func:`~netmodel.study.reliability_fabric.fabric_cluster_scenario`); exactly one of them."""
    from compute.errors import UserError

    if scenario is not None and fabric is not None:
        raise UserError("give --scenario or --fabric, not both")
    if fabric is None:
        if scenario is None:
            raise UserError("give --scenario S (a shipped name, NAME@GPU or a .toml file) "
                            "or --fabric FILE|SPEC (your own fabric)")
        return scenario
    from netmodel.study.reliability_fabric import fabric_cluster_scenario

    return fabric_cluster_scenario(fabric)


def _phase(text: str) -> str:
    from compute.phases import check_phase

    return check_phase(text)


def _placement(text: str) -> str:
    """``--spare-placement``'s value, checked by the library, its refusal said with the
    flag."""
    from netmodel.study.reliability_spares import check_placement

    with value_refused_as("--spare-placement", text, "unknown spare placement"):
        return check_placement(text)


def _checked_inputs(catalog_options: tuple, placement: str, out_dir: str | None,
                    scenario: str | None, fabric: str | None, phase: str):
    """``(catalog, placement, scenario, phase)``: the inputs blast-radius and availability
    share, each checked before any work and in this order (the first refused is the one
    said): the failure catalog with its options' overrides (``catalog_options``, as
    :func:`_catalog` takes them), ``--spare-placement``, the ``--out`` folder, the scenario
    or fabric (:func:`_where`) and the phase."""
    from compute.output_paths import check_folder_path

    cat = _catalog(*catalog_options)
    placement = _placement(placement)
    if out_dir is not None:
        with output_refused_as("--out", out_dir):   # the flag named
            check_folder_path(out_dir)
    return cat, placement, _where(scenario, fabric), _phase(phase)


def _check_placement_used(placement: str, spares: str) -> None:
    """A typed ``--spare-placement`` refused where ``--spares`` holds none (0, 0%): it
    places spare GPUs, and with none the run is the one without it (exit 0, the option
    silently dropped). A spares text the library refuses is left to its refusal."""
    from compute.errors import UserError
    from netmodel.study.availability import parse_spares

    if "placement" not in given_on_command_line("placement"):
        return
    try:
        none = parse_spares(spares, 1) == 0   # one GPU: any share above 0% is a spare
    except UserError:
        return
    if none:
        raise UserError(f"--spare-placement {placement!r} places the spare GPUs; --spares "
                        f"{spares!r} holds none: give --spares N or P% (e.g. 2%), or drop "
                        f"--spare-placement")


def _trials(text) -> int:
    from netmodel.cli.resolve import whole_option
    from netmodel.study.availability_mc import MAX_TRIALS

    return whole_option("--trials", text, most=MAX_TRIALS)


def _horizon(text) -> float:
    """Seconds of ``--horizon``, read and range-checked by the run's own check
    (:func:`~netmodel.study.availability_mc.check_run`), its refusal said with the flag
    (``horizon '1' is shorter ...``: :func:`_parameters_as_flags`); the run gets seconds."""
    from netmodel.study.availability_mc import check_run

    with _parameters_as_flags(horizon="--horizon"):
        return check_run(1, text)[1]


def _seed(text) -> int:
    from compute.errors import UserError
    from compute.typed_numbers import past_most_digits
    from compute.validate import read_number
    from netmodel.study.availability_mc import MAX_SEED

    v = read_number("--seed", str(text), whole=True)   # the one number grammar
    if v is None and not past_most_digits(text):
        raise UserError(f"--seed {text!r} must be a whole number >= 0")
    if v is None or not 0 <= v <= MAX_SEED:   # None: a whole number of 4,300+ digits
        raise UserError(f"--seed {text!r} must be a whole number from 0 to 2**63 - 1")
    return v


def _share(text) -> float:
    import math

    from compute.errors import UserError
    from compute.validate import number_text, read_number

    rule = "a share in (0, 100%]"
    s = number_text("--threshold", str(text)).strip()   # a refusal names all of it
    v = read_number("--threshold", s[:-1] if s.endswith("%") else s,   # the one grammar
                    allowed=rule)
    if v is not None and s.endswith("%"):
        v /= 100
    if v is None:
        raise UserError(f"--threshold {text!r} must be a share such as 99% or 0.99") from None
    if not math.isfinite(v) or not 0 < v <= 1:
        raise UserError(f"--threshold {text!r} must be {rule}")
    return v
