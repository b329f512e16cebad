"""How a run's collectives and modes are said in words, one line each: the collective model
(:func:`describe_collectives` of a description :func:`netmodel.cli.resolve.resolve_collectives`
or a scenario makes), the calibrated mode with its notes (:func:`profile_line`) and the lines
of every mode that moves the numbers but no table shows (:func:`mode_lines`). infer's and
search's reports (:mod:`netmodel.study.roofline_report`) and the commands print them.

A report names a run's parameters as the program running it calls them (:func:`named`): by
their names (``overlap_collectives``), or on the command line, which says so
(:func:`parameters_named_by`), by its flags (``--overlap-collectives``). The library names
parameters, the command line its flags.

Only the standard library is imported at module level (the command modules read these
names, and ``netmodel --help`` stays fast).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["collectives_note", "default_description", "describe_collectives", "mode_lines", "named", "noted_settings",
           "overlap_line", "parameters_named_by", "profile_line", "profile_note",
           "ring_description"]

#: How the program running a report names a run's parameters (None: by their names).
_NAMING: ContextVar[Callable[[str], str] | None] = ContextVar("parameter_naming", default=None)


def named(parameter: str) -> str:
    """A run's ``parameter`` as a report names it: by its name, or as the program running
    the report calls it where it has said how (:func:`parameters_named_by`; the command
    line: by its flag).

    >>> named("max_batch")
    'max_batch'
    >>> with parameters_named_by(lambda p: "--" + p.replace("_", "-")):
    ...     named("max_batch")
    '--max-batch'
    """
    how = _NAMING.get()
    return parameter if how is None else how(parameter)


@contextmanager
def parameters_named_by(how: Callable[[str], str]) -> Iterator[None]:
    """Inside, :func:`named` names each parameter ``how(parameter)`` (the command line
    gives its flags: :class:`netmodel.cli.main.LazyGroup`)."""
    token = _NAMING.set(how)
    try:
        yield
    finally:
        _NAMING.reset(token)


def default_description(gpu, profiled: bool = False) -> dict:
    """The description of the collective model on ``gpu`` when no scenario or fabric is
    given (:func:`compute.roofline.default_comm`): the lower bound over the algorithms of
    its scale-up switch, or ``profiled`` (an engine profile, the calibrated mode) the ring
    alpha-beta over its scale-up bandwidth the profiles were fitted with; named by the
    model's ``label``.

    >>> from compute.hardware import get_gpu
    >>> print(describe_collectives(default_description(get_gpu("H100-SXM"))))
    lower bound over scale-up switch algorithms (the least of ring, one-shot, two-shot and in-switch all-reduce, direct other collectives; 450 GB/s at 100% link efficiency, 0.6 us per step; scenario or fabric for a fabric)
    >>> print(describe_collectives(default_description(get_gpu("A100-SXM-80GB"))))
    lower bound over scale-up switch algorithms (the least of ring, one-shot and two-shot all-reduce, direct other collectives; 300 GB/s at 100% link efficiency, 0.6 us per step; scenario or fabric for a fabric)
    >>> print(describe_collectives(default_description(get_gpu("H100-SXM"), profiled=True)))
    ring alpha-beta over scale-up bandwidth (450 GB/s at 92% link efficiency, 1.9 us per step; scenario or fabric for a fabric)
    """
    from compute.roofline import bound_comm, ring_comm

    comm = (ring_comm if profiled else bound_comm)(gpu)
    desc = {"model": comm.label, "bandwidth_Bps": comm.bandwidth,
            "step_latency_s": comm.step_latency, "efficiency": comm.efficiency}
    if not profiled:
        desc["in_switch"] = comm.in_switch
    return desc


def ring_description(gpu) -> dict:
    """The description of the ring alpha-beta over ``gpu``'s scale-up bandwidth
    (:func:`compute.roofline.ring_comm`, the calibrated mode's collectives).

    >>> from compute.hardware import get_gpu
    >>> print(describe_collectives(ring_description(get_gpu("H100-SXM"))))
    ring alpha-beta over scale-up bandwidth (450 GB/s at 92% link efficiency, 1.9 us per step; scenario or fabric for a fabric)
    """
    return default_description(gpu, profiled=True)


def describe_collectives(desc: dict) -> str:
    """The collective model in words (one line).

    >>> from compute.comm import RingAlphaBeta
    >>> ring = RingAlphaBeta(bandwidth=450e9)
    >>> print(describe_collectives({"model": ring.label, "bandwidth_Bps": ring.bandwidth,
    ...                             "step_latency_s": ring.step_latency,
    ...                             "efficiency": ring.efficiency}))
    ring alpha-beta over scale-up bandwidth (450 GB/s at 92% link efficiency, 1.9 us per step; scenario or fabric for a fabric)
    """
    if desc["model"] == "scenario":
        from netmodel.collectives.tuner_plugin import NO_TUNER

        tuner = f", tuner {desc['tuner']}" if desc["tuner"] != NO_TUNER else ""
        return (f"scenario {desc['scenario']} (placement {desc['placement']}, algorithm "
                f"{desc['algorithm']}{tuner}, instances {desc['instances']}), as compare "
                f"costs them")
    if desc["model"] == "fabric":
        return (f"fabric {desc['fabric']} (placement {desc['placement']}, algorithm "
                f"{desc['algorithm']})")
    # every number the time takes, so that the line gives it: bytes over bandwidth x
    # efficiency, plus a latency per step (the bound: the least of its algorithms)
    algorithms = ""
    if "in_switch" in desc:
        kinds = ("ring, one-shot, two-shot and in-switch" if desc["in_switch"] else
                 "ring, one-shot and two-shot")
        algorithms = f"the least of {kinds} all-reduce, direct other collectives; "
    return (f"{desc['model']} ({algorithms}{desc['bandwidth_Bps'] / 1e9:g} GB/s at "
            f"{100 * desc['efficiency']:.4g}% link efficiency, "
            f"{desc['step_latency_s'] * 1e6:g} us per step; {named('scenario')} or "
            f"{named('fabric')} for a fabric)")


def _listed(kind: str, names) -> str:
    """``model A`` or ``models A, B``."""
    return f"{kind}{'s' if len(names) > 1 else ''} {', '.join(names)}"


def profile_note(profile, models=(), gpus=()) -> str:
    """The note on a run of ``models`` on ``gpus`` (names) under ``profile`` that was
    fitted on other models or GPUs (its measurements' models and GPUs:
    :attr:`~compute.profiles.EngineProfile.fitted_models`, ``fitted_gpus``), an
    extrapolation; "" where every model and GPU is one it was fitted on, or where it lists
    none to compare with. Names are matched as the catalogs read them, regardless of case
    (:func:`~compute.errors.find_name`). On another GPU its efficiencies and fixed overheads
    are what an engine reached on the fitted one, carried over, not measured.

    >>> from compute.profiles import get_profile
    >>> p = get_profile("vllm-dgx-h100")
    >>> profile_note(p, ["Llama-2-70B"], ["h100-sxm"])
    ''
    >>> print(profile_note(p, ["Llama-3-70B"], ["H100-SXM"]))
    profile vllm-dgx-h100 was fitted on model Llama-2-70B on GPU H100-SXM; this is model Llama-3-70B on GPU H100-SXM: an extrapolation
    >>> print(profile_note(get_profile("vllm-h100-2024"), ["Llama-3-8B"], ["B200-HGX"]))
    profile vllm-h100-2024 was fitted on models Llama-3-8B, Llama-3-70B, Mixtral-8x7B on GPU H100-SXM; this is model Llama-3-8B on GPU B200-HGX: an extrapolation (on B200-HGX its efficiencies and fixed overheads are H100-SXM's, carried over, not measured; netmodel calibrate fits a profile from measurements on B200-HGX)
    """
    from compute.errors import find_name

    models = list(dict.fromkeys(m for m in models if m))
    gpus = list(dict.fromkeys(g for g in gpus if g))
    fitted_models, fitted_gpus = profile.fitted_models, profile.fitted_gpus
    other_models = [m for m in models if fitted_models and find_name(fitted_models, m) is None]
    other_gpus = [g for g in gpus if fitted_gpus and find_name(fitted_gpus, g) is None]
    if not (other_models or other_gpus):
        return ""
    fitted = " on ".join(([_listed("model", fitted_models)] if fitted_models else [])
                         + ([_listed("GPU", fitted_gpus)] if fitted_gpus else []))
    run = " on ".join(([_listed("model", models)] if models else [])
                      + ([_listed("GPU", gpus)] if gpus else []))
    note = f"profile {profile.name} was fitted on {fitted}; this is {run}: an extrapolation"
    if other_gpus:
        on, own = " and ".join(other_gpus), ", ".join(fitted_gpus)
        note += (f" (on {on} its efficiencies and fixed overheads are {own}'s, carried over, "
                 f"not measured; netmodel calibrate fits a profile from measurements on {on})")
    return note


def profile_line(profile, desc: dict | None = None, gpus=(), models=()) -> str:
    """The calibrated mode's line; a note when the profile was fitted with other
    collectives than this run's (its fitted overheads absorbed those, so the run does not
    reproduce its fit; scenarios are compared without their ``@GPU``), and one when it was
    fitted on other models or GPUs than the run's ``models`` and ``gpus`` (names):
    :func:`profile_note`."""
    fitted = f", fitted on {profile.fitted_on}" if profile.fitted_on else ""
    line = f"calibrated mode: engine profile {profile.name}{fitted}"
    note = profile_note(profile, models, gpus)
    if note:
        line += f"\nnote: {note}"
    note = "" if desc is None else \
        collectives_note(profile, [describe_collectives(desc).split(" (")[0]])
    if note:
        line += (f"\nnote: {note}; give the same {named('scenario')} or {named('fabric')} to "
                 f"reproduce its fit")
    return line


def collectives_note(profile, collectives) -> str:
    """The note on a run under ``profile`` that costs collectives otherwise than it was
    fitted with (its ``collectives`` key): its fitted overheads absorbed those, so the run
    does not reproduce its fit. ``collectives`` are the run's, each as the note says it (the
    model of :func:`describe_collectives`, the words before its first " (", compared, and
    scenarios without their ``@GPU``); "" where every one is the profile's, or the profile
    names none.

    >>> from compute.profiles import get_profile
    >>> p = get_profile("vllm-dgx-h100")
    >>> collectives_note(p, ["scenario h100-dgx@H100-SXM"])
    ''
    >>> print(collectives_note(p, ["ring alpha-beta over scale-up bandwidth",
    ...                            "lower bound over scale-up switch algorithms (networks bound)"]))
    profile vllm-dgx-h100 was fitted with collectives scenario h100-dgx, not this run's ring alpha-beta over scale-up bandwidth and lower bound over scale-up switch algorithms (networks bound)
    """
    import re

    if not profile.collectives:
        return ""
    bare = lambda s: re.sub(r"@[^,\s]+", "", s)  # noqa: E731
    other = [c for c in dict.fromkeys(collectives)
             if bare(c.split(" (")[0]) not in bare(profile.collectives)]
    if not other:
        return ""
    return (f"profile {profile.name} was fitted with collectives {profile.collectives}, not "
            f"this run's {' and '.join(other)}")


def noted_settings(settings: dict, options, rows) -> dict:
    """``settings`` (a comparison's, sweep's or study's) with ``profile_note``, the
    :func:`profile_note` of ``options.profile`` on the ``rows``' models and GPUs, where
    there is one."""
    if options is None or options.profile is None:
        return settings
    note = profile_note(options.profile, [r.model for r in rows], [r.gpu for r in rows])
    return {**settings, "profile_note": note} if note else settings


def overlap_line() -> str:
    """The line of a run costed with each collective hidden behind the GEMM feeding it
    (:class:`~compute.roofline_options.RooflineOptions` ``overlap_collectives``); by default
    each is a stage of its own, which no line says."""
    return ("overlapped collectives: each per-layer all-reduce hidden behind the GEMM "
            "producing its input, only the time it outlasts that GEMM counted "
            f"({named('overlap_collectives')})")


def mode_lines(options, desc: dict | None = None, gpus=(), models=()) -> list[str]:
    """The lines saying the modes ``options`` (a
    :class:`~compute.roofline_options.RooflineOptions`) cost with that move the numbers but
    no table shows: the calibrated mode (:func:`profile_line` of ``options.profile``, with
    ``desc``, ``gpus`` and ``models`` for its notes) and overlapped collectives (:func:`overlap_line`);
    none for the default roofline with each collective a stage of its own. infer and search
    print them under their collectives line, compare, sweep and study lite-gpu above their
    tables; with --json the options are in the document instead (a result's
    ``overlap_collectives``, a comparison's ``settings.options``).

    >>> from compute.roofline_options import RooflineOptions
    >>> mode_lines(RooflineOptions())
    []
    >>> mode_lines(RooflineOptions(overlap_collectives=True)) == [overlap_line()]
    True
    """
    lines = [] if options.profile is None else [profile_line(options.profile, desc, gpus,
                                                             models)]
    return lines + ([overlap_line()] if options.overlap_collectives else [])
