"""Options and values the commands share, turned into compute's objects: a GPU or model
from a name or a user's file, the collective model of a scenario or a fabric (or the
GPU-only lower bound, the ring with a profile), an engine profile, multi-token prediction,
dense MLP TP, whole numbers, and the refusal of an option the chosen phase never reads.

Read by ``netmodel infer`` and ``search`` (:mod:`netmodel.cli.compute`) and by the other
commands that cost a model on a GPU (calibrate, compare, sweep, study, serve, cost,
blast-radius, availability). Only click and the standard library are imported at module
level, as in every command module, so ``netmodel --help`` stays fast.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from netmodel.cli.options import (
    RegistryHelp,
    as_typed,
    fabric_help,
    given_on_command_line,
    read_whole,
    scenario_help,
)
from netmodel.cli.refusals import flag_of, value_refused_as
from netmodel.study.run_words import (  # re-exported: the commands read them here
    default_description,
    describe_collectives,
    mode_lines,
    overlap_line,
    parameters_named_by,
    profile_line,
)

with parameters_named_by(flag_of):
    #: The line of a run with overlapped collectives as the commands print it.
    OVERLAP_LINE = overlap_line()

if TYPE_CHECKING:
    from compute.comm import CollectiveCostModel
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.profiles import EngineProfile

__all__ = ["NAME_KEYS", "OVERLAP_LINE", "check_figure_path",
           "describe_collectives", "mode_lines", "profile_line",
           "distinct_names", "keywords_as_flags", "resolve_collectives", "resolve_profile"]


def check_figure_path(flag: str, path: str) -> None:
    """The figure file ``flag`` names (``--plot``, ``topology plot --output``), checked
    before any work: a path a file can be written to
    (:func:`compute.output_paths.check_file_path`) whose suffix names a figure format
    (:func:`compute.output_paths.figure_format`); a refusal in the library's words (``figure
    ...``) is said with the flag and the path as typed.

    >>> from compute.errors import UserError
    >>> try:
    ...     check_figure_path("--plot", "x.txt")
    ... except UserError as exc:
    ...     print(exc)
    --plot 'x.txt': figure 'x.txt' must end in one of: .png, .svg, .pdf
    """
    from compute.output_paths import check_file_path, figure_format

    with value_refused_as(flag, path, "figure"):
        check_file_path(path, "figure")
        figure_format(path)


def whole_option(what: str, text, most: int | None = None, *, up_to: str | None = None) -> int:
    """A whole number from 1 to ``most`` (or ``up_to``, in words) from the command line:
    :func:`netmodel.cli.options.read_whole` (kept here, where the commands import it from)."""
    return read_whole(what, text, most, up_to=up_to)


def _from_file(name: str | None, path: str, extra: dict, catalog: dict, what: str,
               option: str) -> Any:
    """The entry named ``name`` of a user's file (``extra``, read from ``path``) or of the
    catalog, or the file's only entry when ``name`` is None; ``what`` (``GPU``, ``model``)
    and ``option`` name them in a refusal."""
    from compute.errors import UserError, find_name, known, lookalike

    if name is None:
        if len(extra) == 1:
            return next(iter(extra.values()))
        raise UserError(f"{path} holds {what}s {known(extra)}; choose one with {option}")
    table = {**catalog, **extra}
    key = find_name(table, name)
    if key is None:
        raise UserError(f"unknown {what} {name!r}{lookalike(name, table)}; known: "
                        f"{known(table)}")
    return table[key]


def resolve_gpu(name: str | None, gpu_file: str | None) -> GpuSpec:
    """The GPU named ``name`` from ``gpu_file`` (if given) or the catalog."""
    from compute.errors import UserError, known
    from compute.hardware import catalog, get_gpu, load_gpu_file

    if gpu_file:
        return _from_file(name, gpu_file, load_gpu_file(gpu_file), catalog(), "GPU", "--gpu")
    if name is None:
        raise UserError(f"give --gpu NAME; known: {known(catalog())}")
    return get_gpu(name)


def _file_has_fabric_gpu(gpu_file: str, gpu_type: str) -> None:
    """With ``--fabric`` a ``--gpu-file`` gives the fabric's own GPU type its figures (a
    saved fabric of a GPU of the user's): refuse one that defines no GPU of the fabric's
    type ``gpu_type``, which the run drops without a word (``--fabric ring:n=8 --gpu-file
    mine.toml`` costed the catalog's H100-SXM)."""
    from compute.errors import UserError, find_name, known
    from compute.hardware import load_gpu_file

    extra = load_gpu_file(gpu_file)
    if find_name(extra, gpu_type) is None:
        raise UserError(f"--gpu-file {gpu_file!r} defines no GPU of the fabric's type "
                        f"{gpu_type!r} (it defines {known(extra)}): with --fabric the GPU is "
                        f"the fabric's own; build the fabric of the file's GPU with "
                        f"gpu={gpu_file} in its spec (e.g. ring:n=8,gpu={gpu_file}), or drop "
                        f"--gpu-file")


def resolve_model(name: str | None, model_file: str | None,
                  hf_config: str | None) -> ModelSpec:
    """The model named ``name`` from ``model_file``, a HuggingFace config, or the catalog."""
    from compute.errors import UserError, known, refuse_lookalike_names
    from compute.models import get_model, load_hf_config, load_model_file, model_catalog

    if hf_config and model_file:   # one model: the file's was dropped without a word
        raise UserError(f"--hf-config {hf_config!r} and --model-file {model_file!r} each give "
                        f"the model: give one of them (--model NAME picks one of the file's, "
                        f"or names the config's model)")
    if hf_config:   # named by --model or its _name_or_path: not as a catalog model
        model = load_hf_config(hf_config, name=name)
        refuse_lookalike_names([model.name], model_catalog(), hf_config, "model")
        return model
    if model_file:
        return _from_file(name, model_file, load_model_file(model_file), model_catalog(),
                          "model", "--model")
    if name is None:
        raise UserError(f"give --model NAME; known: {known(model_catalog())}")
    return get_model(name)


#: Parameters a library error names as ``name='value'`` or ``name=N`` (the keyword a
#: caller gives) that the command line takes as a flag of the same name.
_KEYWORD_FLAGS = ("scenario", "tuner", "algorithms", "algorithm", "seed")


@contextmanager
def keywords_as_flags():
    """A library :class:`~compute.errors.UserError` raised inside, with each parameter it
    names as ``name='value'`` (:data:`_KEYWORD_FLAGS`) written as the command line's flag
    (``--name value``): the library names parameters, the command line its flags.

    >>> from compute.errors import UserError
    >>> try:
    ...     with keywords_as_flags():
    ...         raise UserError("tuner='x' with algorithm='ring'; give scenario='lite-ocs'")
    ... except UserError as exc:
    ...     print(exc)
    --tuner x with --algorithm ring; give --scenario lite-ocs
    >>> try:
    ...     with keywords_as_flags():
    ...         raise UserError("algorithms='ring,tree' and seed=3: ...")
    ... except UserError as exc:
    ...     print(exc)
    --algorithms ring,tree and --seed 3: ...
    """
    import re

    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        words = "|".join(_KEYWORD_FLAGS)
        text = re.sub(rf"(?<![\w-])({words})=(?:'([^']*)'|(-?\d+)\b)",
                      lambda m: f"--{m[1]} {m[2] if m[2] is not None else m[3]}", str(exc))
        if text == str(exc):
            raise
        raise type(exc)(text) from None


#: Where collectives are costed: a scenario's fabric or a fabric (the model compare uses),
#: or by default the GPU-only lower bound (with an engine profile, the ring).
COLLECTIVE_OPTIONS = [
    click.option("--scenario", "scenario_ref", default=None, metavar="S", cls=RegistryHelp,
                 help_from=lambda: "Cost collectives on a scenario's fabric, as compare does: "
                 + scenario_help() + " (the GPU defaults to the scenario's)."),
    click.option("--fabric", "fabric_ref", default=None, metavar="SPEC", cls=RegistryHelp,
                 help_from=lambda: "Cost collectives on a fabric (placement contiguous, "
                 "algorithm auto; a scenario's fabric without its calibration: --scenario "
                 "uses that): " + fabric_help() + " Default without either: a lower bound "
                 "over the algorithms of the GPU's scale-up switch (with --profile, ring "
                 "alpha-beta over its scale-up bandwidth, as the profiles were fitted)."),
]


def resolve_collectives(scenario_ref: str | None, fabric_ref: str | None, gpu_name: str | None,
                        gpu_file: str | None, *, gpu_typed: bool = False,
                        profiled: bool = False,
                        ) -> tuple[GpuSpec, CollectiveCostModel | None, dict, int | None]:
    """``(gpu, comm, description, max_gpus)``: the GPU and the collective-cost model the
    options name. ``comm`` is None for the default (:func:`compute.roofline.default_comm`:
    the scale-up lower bound, or ``profiled``, with an engine profile, the ring the profiles
    were fitted with); ``description`` says which model it is (a dict, for the text and the
    JSON); ``max_gpus`` is the fabric's GPU count
    (None without a fabric). ``gpu_typed``: ``gpu_name`` and ``gpu_file`` are ``--gpu`` and
    ``--gpu-file`` as typed (infer, search), refused with ``--scenario NAME@GPU`` of another
    GPU; calibrate's rows swap the scenario to each row's GPU."""
    from compute.errors import UserError

    if scenario_ref is not None and fabric_ref is not None:
        raise UserError("give --scenario or --fabric, not both")
    if scenario_ref is not None:
        from netmodel.study.collective_setup import routing_description
        from netmodel.study.scenario_catalog import get_scenario
        from netmodel.study.scenario_collectives import ScenarioCollectives

        scen = get_scenario(scenario_ref)
        if gpu_name is not None or gpu_file:
            gpu = resolve_gpu(gpu_name, gpu_file)
            if gpu_typed:
                _one_gpu_swap(scenario_ref, scen, gpu, gpu_name, gpu_file)
            scen = scen.with_gpu(gpu)
        coll = ScenarioCollectives(scen)
        # a scenario's model: every algorithm a candidate of auto
        desc = {"model": "scenario", "scenario": scen.label,
                **routing_description(scen.placement, scen.algorithm, None, scen.tuner,
                                      scen.instances),
                "fabric_gpus": coll.gpus}
        return scen.gpu_spec, coll, desc, coll.gpus
    if fabric_ref is not None:
        from netmodel.study.collective_setup import routing_description
        from netmodel.study.fabric_ref import fabric_collectives

        try:
            with keywords_as_flags():
                found = fabric_collectives(fabric_ref, gpu=gpu_name)
        except UserError as exc:   # a GPU of the file: the spec takes the file, not its name
            if not (gpu_file and gpu_name and "name that GPU in the spec" in str(exc)):
                raise
            said = str(exc).split("; name that GPU in the spec")[0]
            raise UserError(f"--gpu {gpu_name!r} of --gpu-file {gpu_file!r}: {said}; build it "
                            f"of the file's GPU with gpu={gpu_file} in the spec (the file's "
                            f"only GPU), not --gpu") from None
        # a GPU file's GPU of the fabric's type, else the one the fabric records
        if gpu_file:
            _file_has_fabric_gpu(gpu_file, found.gpu_type)
        gpu = found.gpu if gpu_file is None else resolve_gpu(found.gpu_type, gpu_file)
        comm = found.model
        desc = {"model": "fabric", "fabric": comm.graph.graph.get("spec") or str(fabric_ref),
                **routing_description(comm.placement, comm.algorithm),
                "fabric_gpus": comm.gpus}
        return gpu, comm, desc, comm.gpus
    gpu = resolve_gpu(gpu_name, gpu_file)
    return gpu, None, default_description(gpu, profiled), None


def _one_gpu_swap(scenario_ref: str, scen, gpu: GpuSpec, gpu_name: str | None,
                  gpu_file: str | None) -> None:
    """Refuse ``--scenario NAME@GPU`` with a ``--gpu`` (or ``--gpu-file``) of another GPU:
    each swaps the scenario's GPU, and one would win without a word (the same GPU twice is
    taken). A scenario without ``@`` takes ``--gpu`` in place of its own, as documented."""
    from compute.errors import UserError
    from netmodel.study.scenario_catalog import split_ref

    base, at, swapped = split_ref(scenario_ref)
    if at and gpu != scen.gpu_spec:
        typed = " of ".join(f"{flag} {text!r}" for flag, text in
                            (("--gpu", gpu_name), ("--gpu-file", gpu_file)) if text)
        other = repr(gpu.name) if gpu.name != scen.gpu else "another of that name"
        raise UserError(f"--scenario {scenario_ref!r} swaps in GPU {scen.gpu!r} and {typed} "
                        f"names {other}; give the GPU once: {base}@{swapped} alone, or "
                        f"--scenario {base} with {typed}")


def resolve_profile(ref: str | None, option: str = "--profile") -> EngineProfile | None:
    """The engine profile ``option`` (``--profile``, calibrate's ``--base``) names (None:
    the roofline)."""
    if ref is None:
        return None
    from compute.profiles import get_profile

    with value_refused_as(option, ref, "unknown profile", "profile ", "cannot read profile"):
        return get_profile(ref)


def dense_mlp_tp(text: str | None) -> int | str | None:
    """``--dense-mlp-tp``'s value: None unset, else the whole number it spells, or the text
    where it spells none: RooflineOptions checks the degree, and states its one range (1,
    or unset) for '5' and '0x10' alike, where a whole number's range (1 to 1,000,000,000)
    was said of a text that is none."""
    from compute.validate import read_number

    if text is None:
        return None
    v = read_number("--dense-mlp-tp", str(text), whole=True)
    return text if v is None else v


def _whole_text(text: object) -> bool:
    """Whether ``text`` writes a whole number exactly ('2', '2.0', '2e0'), not one a float
    rounds to ('1e-400', '2.0000000000000001').

    >>> _whole_text("2e0"), _whole_text("1e-400")
    (True, False)
    """
    from decimal import Decimal, InvalidOperation

    try:
        d = Decimal(str(text).strip())
    except (InvalidOperation, ValueError):
        return False
    return d.is_finite() and d == d.to_integral_value()


def mtp_settings(tokens: str | None, acceptance: str | None) -> dict:
    """``--mtp-tokens`` and ``--mtp-acceptance``'s values as RooflineOptions fields (unset:
    the fields' defaults; RooflineOptions checks the values' ranges)."""
    from compute.errors import UserError
    from compute.roofline_options import ACCEPTANCE_RANGE
    from compute.validate import ZeroAllowed, read_number

    out: dict = {}
    for field, text in (("mtp_tokens", tokens), ("mtp_acceptance", acceptance)):
        if text is None:
            continue
        v = read_number(f"--{field.replace('_', '-')}", str(text),   # the one grammar
                        allowed=ZeroAllowed(ACCEPTANCE_RANGE) if field == "mtp_acceptance"
                        else None)
        if v is None:
            v = str(text)   # not a number: the field's check names it (describe cuts it)
        if isinstance(v, float) and math.isinf(v) and "inf" not in str(text).lower():
            v = str(text)   # digits past a float's range ('1e400'): shown as typed, not 'inf'
        if field == "mtp_tokens" and isinstance(v, float) and v.is_integer() and abs(v) < 1e6:
            # a whole count as typed, not one rounded to it ('1e-400' read as 0, MTP off)
            v = int(v) if _whole_text(text) else str(text)
        out[field] = v
    if "mtp_acceptance" in out and not out.get("mtp_tokens"):
        raise UserError("--mtp-acceptance needs --mtp-tokens K >= 1 (draft tokens a step)")
    return out


#: Options of one phase only: (phase that ignores it, option, what it sets, what to give
#: instead). A step of the other phase never reads them (compute.phases.Workload: prefill
#: reads the prompt, decode the context; Slo.limit: TTFT for prefill, TBT for decode; MTP
#: drafts are verified in decode, compute.roofline.evaluate_grid).
_OTHER_PHASE_OPTIONS = (
    ("decode", "prompt", "sets a prefill's prompt",
     "give --context (the tokens in the KV cache)"),
    ("prefill", "context", "sets a decode step's context (the tokens in the KV cache)",
     "give --prompt (the tokens of each prompt)"),
    ("decode", "ttft", "is the prefill SLO", "give --tbt (the decode SLO)"),
    ("prefill", "tbt", "is the decode SLO", "give --ttft (the prefill SLO)"),
    ("prefill", "mtp_tokens", "drafts tokens in decode steps",
     "drop it (a prefill is costed as without MTP) or give {option} decode"),
    ("prefill", "mtp_acceptance", "is the acceptance of decode's draft tokens",
     "drop it (a prefill is costed as without MTP) or give {option} decode"),
)


def check_phase_options(phases, kw, option: str = "--phase") -> None:
    """Refuse an option typed on the command line that none of ``phases`` (one phase or a
    list: infer's and search's --phase, compare's and sweep's --phases, cost's list, blast-radius's
    and availability's) ever uses (it would be ignored, the run going ahead with the
    default), in one line. ``kw``: the command's parameters; options the command does not
    take are never typed, so one table serves every command. The option is quoted as typed
    (:func:`~netmodel.cli.options.as_typed`: ``--ttft '2s'``, which the command gets as 2.0
    seconds)."""
    from compute.errors import UserError
    from compute.validate import describe

    chosen = list(dict.fromkeys([phases] if isinstance(phases, str) else phases))
    for ignored_by, name, sets, instead in _OTHER_PHASE_OPTIONS:
        if chosen and all(p == ignored_by for p in chosen) and given_on_command_line(name):
            flag = "--" + name.replace("_", "-")
            raise UserError(f"{flag} {describe(as_typed(name))} {sets}; with {option} "
                            f"{','.join(chosen)} {instead.format(option=option)}")


def _catalog_name(names_of: Callable[[], Any]) -> Callable[[str], str]:
    def key(text: str) -> str:
        from compute.errors import find_name

        return find_name(names_of(), text) or text   # a file (or no name): its own text
    return key


def _scenario_key(text: str) -> object:
    import os

    from netmodel.study.scenario_catalog import get_scenario

    if text.lower().endswith(".toml"):   # a file: itself, however the path is spelled
        return ("file", os.path.realpath(text))
    return get_scenario(text).label   # its name and GPU as the catalogs spell them


def _model_names():
    from compute.models import model_names

    return model_names()


def _gpu_names():
    from compute.hardware import gpu_names

    return gpu_names()


#: What a name of each list option resolves to (a catalog matches names regardless of
#: case: h100-dgx and H100-DGX are one scenario, H100-SXM and h100-sxm one GPU, and
#: lite-flat one with lite-flat@Lite), so :func:`distinct_names` refuses a list naming one
#: thing twice however it is spelled.
NAME_KEYS: dict[str, Callable[[str], object]] = {
    "--models": _catalog_name(_model_names), "--gpus": _catalog_name(_gpu_names),
    "--scenarios": _scenario_key}


def distinct_names(option: str, texts: Sequence[str]) -> list[str]:
    """The comma-separated names of ``texts`` (``option``'s value, or each of its repeats:
    sweep's --scenarios), refused where one is empty or two name one thing
    (:func:`compute.validate.refuse_repeats` by :data:`NAME_KEYS`: the run would merge
    them without a word). Every list option of names reads its value with this.

    >>> distinct_names("--gpus", ["H100-SXM,Lite"])
    ['H100-SXM', 'Lite']
    >>> distinct_names("--gpus", ["H100-SXM,h100-sxm"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --gpus 'H100-SXM,h100-sxm' names one thing more than once ('H100-SXM' and 'h100-sxm'); give each once
    """
    from compute.validate import comma_list, refuse_repeats

    items = [n for text in texts for n in comma_list(option, text, "comma-separated names")]
    # a choice's names (--phases, --networks) as a catalog's: regardless of case (a file's
    # path by NAME_KEYS' own key)
    return refuse_repeats(option, items, NAME_KEYS.get(option, str.casefold),
                          text=",".join(texts))
