"""Engine profiles: the calibrated inference mode, beside the roofline.

The roofline (:mod:`compute.roofline`, the default) is a lower bound: every stage runs at the
GPU's peak FLOP/s or HBM bandwidth and nothing else costs time. Serving engines are slower:
their GEMMs and attention kernels reach a fraction of peak, and every layer and step pays
kernel launches, scheduling and sampling. An **engine profile** says, for one engine on one
system, what it achieves; with a profile (``RooflineOptions(profile=...)``, ``--profile`` on
the command line) a stage's times become

* GEMM stages (``qkv``, ``out_proj``, ``mlp_up``, ``mlp_down``, ``lm_head``): compute =
  FLOPs / (peak x ``gemm_efficiency``), where ``gemm_efficiency`` is one number or a curve
  over the stage's arithmetic intensity (FLOPs per HBM byte, interpolated in log intensity,
  constant beyond its ends);
* ``attention``: compute = FLOPs / (peak x ``attention_efficiency``), the fraction of peak
  FLOP/s the attention kernel reaches (its HBM time is every stage's: reading the KV cache
  in decode runs at the achievable bandwidth);
* every stage: memory = HBM bytes / (HBM bandwidth x ``hbm_fraction``);
* collectives: what the collective model says (unchanged: the fabric is not the engine's;
  without a scenario or fabric, NCCL's ring, :func:`compute.roofline.ring_comm`, as
  ``calibrate`` fits without one, not the roofline's lower bound: a profile's overheads
  absorb the collectives it was fitted with);

and the step adds overheads, once per step: ``step_overhead_s + layers x
layer_overhead_s``, plus ``batch x decode_sequence_overhead_s`` in decode (per-sequence work
of the engine: sampling, scheduling, detokenisation), plus ``tokens x layers x hidden x
token_overhead_s`` for the step's tokens (``batch x prompt`` in prefill, ``batch`` in
decode). The last is per-token work that grows with the model's width and not with its
FLOPs and is not divided among the tensor-parallel GPUs: what vLLM's measured prefills show
(a step costs what its tokens cost, whether one long prompt or many short ones, and 4x the
GPUs make it only 1.5x faster; see ``scripts/accuracy_inference.py``), which GEMM and
attention efficiencies alone cannot. Stage times still combine as the roofline's mode says
(``overlap``: the largest of compute, memory and network).

A profile may name the MoE exchanges its engine runs (``moe_exchanges``, in ``[profile]``:
names of :data:`compute.exchange_names.EXCHANGES`, ``all-to-all`` among them): an
expert-parallel cell then takes the cheapest of those only, as the engine would, where the
roofline takes the cheapest of all (left out: all, as the roofline). The shipped vLLM
profiles name vLLM's: the all-to-all backends (DeepEP, pplx) and the
``allgather_reducescatter`` gather beside data parallelism, the TP all-reduce of the experts'
outputs without it (docs.vllm.ai, 'Expert Parallel Deployment'; vllm-project/vllm,
vllm/distributed/device_communicators/all2all.py), not SGLang's DP-attention gather
(:mod:`compute.moe_dp_gather`, ``--moe-a2a-backend none``).

A profile with every efficiency 1 and no overhead is the roofline. A profile never changes
the roofline mode: without one, no code path here runs.

Profiles are TOML files (``compute/data/profiles/*.toml`` ship with the package; any path
works)::

    [profile]
    name = "vllm-dgx-h100"
    engine = "vLLM, FP16"
    system = "DGX-H100 (8x H100-SXM, NVSwitch)"
    gpu = "H100-SXM"                 # the GPU type it was fitted on
    collectives = "scenario h100-dgx"  # the collective model the fit used
    fitted_on = "..."                # what the numbers were fitted on
    moe_exchanges = ["all-to-all", "all-reduce", "vllm-gather"]   # optional (default: all)

    [parameters.gemm_efficiency]     # every parameter: value and source
    value = 0.45
    source = "fitted on ..."
    # or a curve: intensity = [FLOP/B, ...], efficiency = [fraction, ...]

    [[measurement]]                  # the measurements fitted on, with their source
    model = "Llama-2-70B"
    ...

The measured steps a profile is fitted on and keeps
(:class:`~compute.measurements.Measurement`, read from a CSV by
:func:`~compute.measurements.read_measurements`) are :mod:`compute.measurements`'.

>>> p = get_profile("vllm-dgx-h100")
>>> p.gpu, 0 < p.gemm_efficiency <= 1, p.layer_overhead_s > 0
('H100-SXM', True, True)
>>> neutral().overhead(80, 1.0, "decode")
0.0
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from os import PathLike
from pathlib import Path

import numpy as np

from compute import validate
from compute.config_files import check_keys, check_not_shipped_name, read_table
from compute.errors import UserError, chosen, known, lookalike
from compute.exchange_names import EXCHANGES
from compute.measurements import (
    MAX_MEASUREMENTS,
    MEASUREMENT_COLUMNS,
    Measurement,
    _measurement,
    _too_many_measurements,
)

__all__ = ["PARAMETERS", "EngineProfile", "Parameter", "check_moe_exchanges", "get_profile",
           "neutral", "profile_names", "read_profile"]


@dataclass(frozen=True)
class Parameter:
    """One number of a profile: its range, its neutral value (the roofline's) and what it
    means."""

    name: str
    minimum: float
    maximum: float
    neutral: float
    unit: str
    what: str
    #: typical magnitude, the step the fit moves a time parameter in (fractions move in log)
    scale: float = 1e-3


#: The parameters of a profile, in the order they are written and fitted.
PARAMETERS = {p.name: p for p in (
    Parameter("gemm_efficiency", 1e-4, 1.0, 1.0, "",
              "fraction of peak FLOP/s GEMMs reach (or a curve by arithmetic intensity)"),
    Parameter("attention_efficiency", 1e-4, 1.0, 1.0, "",
              "fraction of peak FLOP/s attention kernels reach"),
    Parameter("hbm_fraction", 1e-4, 1.0, 1.0, "",
              "fraction of HBM bandwidth every stage reaches"),
    Parameter("layer_overhead_s", 0.0, 1.0, 0.0, "s", "fixed time per layer per step"),
    Parameter("step_overhead_s", 0.0, 10.0, 0.0, "s", "fixed time per step"),
    Parameter("decode_sequence_overhead_s", 0.0, 1.0, 0.0, "s",
              "time per sequence per decode step"),
    Parameter("token_overhead_s", 0.0, 1e-6, 0.0, "s",
              "time per token per layer per unit of hidden size (per-token work outside "
              "the GEMMs' FLOPs, not divided by TP)", scale=1e-10),
)}

#: The range of a GEMM efficiency curve's arithmetic intensities (FLOP/B).
_MIN_INTENSITY, _MAX_INTENSITY = 1e-6, 1e9
#: The most points a GEMM efficiency curve holds (2 the fewest).
_CURVE_POINTS = 64


_PROFILE_KEYS = ("name", "engine", "system", "gpu", "collectives", "fitted_on")
_FIT_KEYS = ("parameters", "points", "rms_relative_error", "max_relative_error")




@dataclass(frozen=True)
class EngineProfile:
    """What one engine achieves on one system (see the module docstring). Every number
    has its source in ``sources`` (``(parameter, source)`` pairs)."""

    name: str
    gemm_efficiency: float = 1.0
    attention_efficiency: float = 1.0
    hbm_fraction: float = 1.0
    layer_overhead_s: float = 0.0
    step_overhead_s: float = 0.0
    decode_sequence_overhead_s: float = 0.0
    token_overhead_s: float = 0.0
    #: GEMM efficiency by arithmetic intensity: ``((FLOP/B, fraction), ...)`` by increasing
    #: intensity; empty: ``gemm_efficiency`` everywhere
    gemm_curve: tuple[tuple[float, float], ...] = ()
    engine: str = ""
    system: str = ""
    gpu: str = ""
    collectives: str = ""
    fitted_on: str = ""
    #: the MoE exchanges the engine runs (:data:`compute.exchange_names.EXCHANGES`, in that
    #: order), of which each expert-parallel cell takes the cheapest; empty: every one
    #: (the roofline's choice)
    moe_exchanges: tuple[str, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()
    measurements: tuple[Measurement, ...] = field(default=(), repr=False)
    #: (parameters fitted, points, rms relative error, max relative error), if fitted
    fit: tuple = ()

    def __post_init__(self):
        where = f"profile {self.name!r}"
        for p in PARAMETERS.values():
            v = validate.number(where, p.name, getattr(self, p.name), minimum=p.minimum,
                                maximum=p.maximum, unit=p.unit)
            if 0 < v < validate.SMALLEST_NUMBER:   # to_toml would write what no file reads
                # (a minimum of 0 only: 0 is allowed)
                words = validate.below_smallest_words(p.name, validate.range_words(
                    p.minimum, p.maximum, unit=p.unit))
                raise UserError(f"{where}: {p.name} {v!r}{' ' + p.unit if p.unit else ''} is "
                                f"{words}")
            object.__setattr__(self, p.name, v)
        # the texts, the exchanges and the curve as a file's are read (read_profile): a
        # curve of efficiency 2 ran faster than the roofline, moe_exchanges=0 or an engine
        # of 5 were kept, and to_toml wrote what no file reads
        check_profile_text(where, {k: getattr(self, k) for k in _PROFILE_KEYS})
        # None: the default (an array's == compared it elementwise: ValueError)
        if self.moe_exchanges is None or type(self.moe_exchanges) is tuple \
                and not self.moe_exchanges:
            object.__setattr__(self, "moe_exchanges", ())
        else:
            object.__setattr__(self, "moe_exchanges", check_moe_exchanges(
                where, self.moe_exchanges))
        object.__setattr__(self, "gemm_curve", _gemm_curve(where, self.gemm_curve))

    def gemm_efficiency_at(self, intensity: float | np.ndarray) -> float | np.ndarray:
        """GEMM efficiency at ``intensity`` FLOP/B (an array or a number).

        >>> p = EngineProfile("x", gemm_curve=((10.0, 0.2), (1000.0, 0.6)))
        >>> p.gemm_efficiency_at(np.array([1.0, 100.0, 1e6])).tolist()
        [0.2, 0.4, 0.6]
        """
        if not self.gemm_curve:
            return self.gemm_efficiency
        x = np.log10(np.maximum(np.asarray(intensity, dtype=float), 1e-300))
        xs = np.log10([c[0] for c in self.gemm_curve])
        return np.interp(x, xs, [c[1] for c in self.gemm_curve])

    def overhead(self, layers: int, batch: float | np.ndarray, phase: str,
                 tokens_per_sequence: int = 1, hidden: int = 0) -> float | np.ndarray:
        """Seconds a step adds beyond its stages: per step, per layer, in decode per
        sequence, and per token (``batch x tokens_per_sequence`` tokens, each through
        ``layers`` layers of width ``hidden``).

        >>> p = EngineProfile("x", layer_overhead_s=1e-4, decode_sequence_overhead_s=1e-3,
        ...                   token_overhead_s=1e-10)
        >>> round(p.overhead(80, 4, "prefill", 512, 8192) * 1e3, 6)  # 8 + 2048*80*8192e-7
        142.217728
        >>> round(p.overhead(80, 4, "decode", 1, 8192) * 1e3, 6)     # 8 + 4 + 0.262144
        12.262144
        """
        t = self.step_overhead_s + layers * self.layer_overhead_s
        if self.token_overhead_s:
            t = t + batch * tokens_per_sequence * layers * hidden * self.token_overhead_s
        if phase == "decode":
            return t + batch * self.decode_sequence_overhead_s
        return t + 0.0 * batch

    @property
    def fitted_models(self) -> tuple[str, ...]:
        """The models of the measurements the profile was fitted on, each once, in their
        order; empty where it lists none (a profile written by hand).

        >>> get_profile("vllm-h100-2024").fitted_models
        ('Llama-3-8B', 'Llama-3-70B', 'Mixtral-8x7B')
        """
        return tuple(dict.fromkeys(m.model for m in self.measurements))

    @property
    def fitted_gpus(self) -> tuple[str, ...]:
        """The GPUs the profile was fitted on: its ``gpu`` (``calibrate`` writes several as
        ``A, B``), or where it names none its measurements'; empty where it says none.

        >>> get_profile("vllm-dgx-h100").fitted_gpus, EngineProfile("x", gpu="A, B").fitted_gpus
        (('H100-SXM',), ('A', 'B'))
        """
        named = tuple(g.strip() for g in self.gpu.split(",") if g.strip())
        return named or tuple(dict.fromkeys(m.gpu for m in self.measurements))

    @property
    def is_neutral(self) -> bool:
        """True when the profile is the roofline itself (efficiencies 1, no overhead)."""
        return not self.gemm_curve and all(getattr(self, n) == p.neutral
                                           for n, p in PARAMETERS.items())

    def source(self, parameter: str) -> str:
        """Where ``parameter``'s value comes from ("" when not said)."""
        return dict(self.sources).get(parameter, "")

    def values(self) -> dict[str, float]:
        """Every parameter's value."""
        return {n: getattr(self, n) for n in PARAMETERS}

    def with_values(self, values: dict, sources: dict | None = None, **kw) -> EngineProfile:
        """A copy with some parameters (and their sources, and other fields) replaced."""
        src = dict(self.sources)
        src.update(sources or {})
        return replace(self, **values, sources=tuple(sorted(src.items())), **kw)

    def to_toml(self) -> str:
        """The profile as the TOML text :func:`read_profile` reads."""
        lines = ["# Engine profile for netmodel's calibrated inference mode (compute/profiles.py).",
                 "[profile]"]
        for k in _PROFILE_KEYS:
            v = getattr(self, k)
            if v:
                lines.append(f"{k} = {_toml(v)}")
        if self.moe_exchanges:
            lines.append(f"moe_exchanges = {_toml(list(self.moe_exchanges))}")
        if self.fit:
            names, points, rms, worst = self.fit
            lines += ["", "[fit]", f"parameters = {_toml(list(names))}", f"points = {points}",
                      f"rms_relative_error = {_toml(rms)}",
                      f"max_relative_error = {_toml(worst)}"]
        for n, p in PARAMETERS.items():
            lines += ["", f"[parameters.{n}]  # {p.what}"]
            if n == "gemm_efficiency" and self.gemm_curve:
                lines.append(f"intensity = {_toml([c[0] for c in self.gemm_curve])}")
                lines.append(f"efficiency = {_toml([c[1] for c in self.gemm_curve])}")
            else:
                lines.append(f"value = {_toml(getattr(self, n))}")
            said = self.source(n)   # a blank source reads back refused: written as none
            lines.append(f"source = {_toml(said if said.strip() else 'not given')}")
        for m in self.measurements:
            lines += ["", "[[measurement]]"]
            lines += [f"{k} = {_toml(v)}" for k, v in m.to_dict().items()]
        return "\n".join(lines) + "\n"


def _toml(v) -> str:
    """A TOML value: JSON's strings and lists are TOML's; floats in full precision."""
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"cannot write {v!r} to TOML")
        return repr(v)
    return json.dumps(v, ensure_ascii=False)


def check_moe_exchanges(where: str, value) -> tuple[str, ...]:
    """``value`` (a profile's ``moe_exchanges``) as a tuple in
    :data:`compute.exchange_names.EXCHANGES`' order: a list of those names, each at most once,
    ``all-to-all`` among them (the schedule each expert-parallel cell is evaluated under
    first, the others taken where cheaper); else one line naming the allowed ones. Each name
    is read as every choice is (:func:`compute.errors.chosen`: blanks at either end dropped),
    and one in letters that print as an allowed one (a Cyrillic 'а') is asked about.

    >>> check_moe_exchanges("p", ["vllm-gather", " all-to-all "])
    ('all-to-all', 'vllm-gather')
    >>> check_moe_exchanges("p", ["all-to-all", "deepep"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: p: moe_exchanges must be a list of 'all-reduce', 'all-to-all', 'sglang-dp-gather', 'vllm-gather', each at most once, 'all-to-all' among them; got ['all-to-all', 'deepep']
    """
    names = [chosen(x, EXCHANGES) for x in value] if isinstance(value, list | tuple) else []
    if not (names and None not in names and len(set(names)) == len(names)
            and "all-to-all" in names):
        odd = next((x for x, n in zip(value, names, strict=True) if n is None), None) \
            if names else None
        raise UserError(f"{where}: moe_exchanges must be a list of {known(EXCHANGES)}, each "
                        f"at most once, 'all-to-all' among them; got "
                        f"{validate.describe(list(value) if isinstance(value, tuple) else value)}"
                        f"{lookalike(odd, EXCHANGES)}")
    return tuple(x for x in EXCHANGES if x in names)


def _gemm_curve(where: str, curve) -> tuple[tuple[float, float], ...]:
    """``curve`` (an :class:`EngineProfile`'s ``gemm_curve``) as a tuple of
    ``(intensity, efficiency)`` pairs, checked as a file's ``intensity`` and ``efficiency``
    lists are (:func:`_parameter`): 2 to 64 points, each intensity from 1e-6 to 1e9 FLOP/B
    and increasing, each efficiency gemm_efficiency's range; None or empty: no curve.

    >>> _gemm_curve("p", [(10, 0.2), (1e3, 0.6)])
    ((10.0, 0.2), (1000.0, 0.6))
    >>> _gemm_curve("p", ((10, 0.2), (1e3, 2.0)))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: p: gemm_curve efficiency must be a number from 0.0001 to 1, got 2.0
    """
    if curve is None or (isinstance(curve, list | tuple) and not curve):
        return ()
    if not (isinstance(curve, list | tuple) and 2 <= len(curve) <= _CURVE_POINTS
            and all(isinstance(c, list | tuple) and len(c) == 2 for c in curve)):
        raise UserError(f"{where}: gemm_curve must be 2 to {_CURVE_POINTS} (intensity FLOP/B, "
                        f"efficiency) pairs by increasing intensity, got {validate.describe(curve)}")
    return _curve_points(where, curve, "gemm_curve ", "gemm_efficiency intensities must "
                         "increase")


def _curve_points(where: str, pairs, prefix: str, increase: str) -> tuple:
    """``pairs`` of (intensity, efficiency) checked point by point, as an
    :class:`EngineProfile`'s ``gemm_curve`` and a file's ``intensity`` and ``efficiency``
    lists both are: each intensity from 1e-6 to 1e9 FLOP/B, each efficiency in
    gemm_efficiency's range (named ``prefix + 'intensity'``, ...), the intensities
    increasing (else ``increase``, the words of the refusal)."""
    eff = PARAMETERS["gemm_efficiency"]
    out = tuple((validate.number(where, f"{prefix}intensity", x, minimum=_MIN_INTENSITY,
                                 maximum=_MAX_INTENSITY, unit="FLOP/B"),
                 validate.number(where, f"{prefix}efficiency", y, minimum=eff.minimum,
                                 maximum=eff.maximum)) for x, y in pairs)
    xs = [x for x, _ in out]
    if any(b <= a for a, b in zip(xs, xs[1:], strict=False)):
        raise UserError(f"{where}: {increase}, got {xs}")
    return out


def neutral(name: str = "roofline") -> EngineProfile:
    """The profile that is the roofline (every efficiency 1, no overhead)."""
    return EngineProfile(name)


# ---- reading ---------------------------------------------------------------------------

def _nonzero_range(key: str) -> str | None:
    """What a profile's number ``key`` must be (an efficiency or fraction, an intensity or
    efficiency of a curve, an overhead, whose range holds 0), in :func:`_parameter`'s words,
    for a number below the smallest a file holds; None where the key names no range (a
    parameter table's ``value`` is asked for by the table's name:
    :meth:`compute.config_files.FloatOverflow.message`)."""
    gemm = PARAMETERS["gemm_efficiency"]
    ranges = {p.name: (p.minimum, p.maximum, p.unit) for p in PARAMETERS.values()} | {
        "intensity": (_MIN_INTENSITY, _MAX_INTENSITY, "FLOP/B"),
        "efficiency": (gemm.minimum, gemm.maximum, "")}
    if key not in ranges:
        return None
    least, most, unit = ranges[key]
    return validate.range_words(least, most, unit=unit)


def _parameter(where: str, key: str, table) -> tuple[float | None, tuple, str]:
    """(value, curve, source) of one ``[parameters.KEY]`` table."""
    p = PARAMETERS[key]
    where = f"{where}: [parameters.{key}]"
    validate.table(where, table)
    curve_keys = ("intensity", "efficiency") if key == "gemm_efficiency" else ()
    check_keys(where, table, ("source",), ("value", *curve_keys))
    source = validate.string(where, "source", table["source"], max_length=2000)
    if not source.strip():   # as a GPU, model or scenario file's: a source says where from
        raise UserError(f"{where}: source is blank; say where the value comes from (a fit, a "
                        f"measurement, a paper, or 'what-if: ...' for a value of your own)")
    if "value" in table:
        if any(k in table for k in curve_keys):
            raise UserError(f"{where}: give value or intensity and efficiency, not both")
        return validate.number(where, "value", table["value"], minimum=p.minimum,
                               maximum=p.maximum, unit=p.unit), (), source
    if not curve_keys or not all(k in table for k in curve_keys):
        raise UserError(f"{where}: missing key value" + (" (or intensity and efficiency)"
                                                         if curve_keys else ""))
    xs, ys = table["intensity"], table["efficiency"]
    if not (isinstance(xs, list) and isinstance(ys, list)
            and 2 <= len(xs) == len(ys) <= _CURVE_POINTS):
        raise UserError(f"{where}: intensity and efficiency must be lists of the same length "
                        f"(2 to {_CURVE_POINTS} points), got {validate.describe(xs)} and "
                        f"{validate.describe(ys)}")
    # named with the file here: EngineProfile's own check names only the profile
    curve = _curve_points(where, zip(xs, ys, strict=True), "",
                          "intensities must increase from point to point")
    return None, curve, source


def check_profile_text(where: str, head: Mapping[str, object]) -> dict[str, str]:
    """The ``[profile]`` texts of ``head`` (``name`` and the others of ``_PROFILE_KEYS``
    given), checked as :func:`read_profile` reads them: the name a table name (at most 200
    characters, no control character), the others text of at most 2,000 characters. A
    profile written with other values could not be read back."""
    meta = {k: validate.string(where, k, head[k], max_length=2000)
            for k in _PROFILE_KEYS if k in head and k != "name"}   # the name: stricter
    if "name" in head:
        meta["name"] = validate.name(where, "profile", head["name"])
    return meta


def read_profile(path: str | PathLike[str]) -> EngineProfile:
    """The profile in a TOML (or JSON) file; unknown keys, values out of range (negative
    or NaN overheads, efficiencies outside (0, 1]), missing or blank sources and a shipped
    profile's name (:func:`check_not_shipped`) are one-line :class:`UserError` s."""
    with validate.file_values(path):   # a JSON file's null said as null
        profile = _read_profile(path)
    check_not_shipped(str(path), profile)
    return profile


def shipped_name(name: str) -> str | None:
    """The shipped profile ``name`` names, case aside (:func:`profile_names`), or None.

    >>> shipped_name("VLLM-DGX-H100"), shipped_name("mine")
    ('vllm-dgx-h100', None)
    """
    folded = name.casefold()
    return next((n for n in profile_names() if n.casefold() == folded), None)


def check_not_shipped(where: str, profile: EngineProfile) -> None:
    """Refuse the profile read at ``where`` when its name is a shipped profile's (case
    aside) and it is not that profile, field for field: its figures would be reported under
    the shipped profile's name, as a GPU file's GPU of a catalog GPU's name would be
    (:func:`compute.hardware.load_gpu_file`). A copy of the shipped file (its own path
    too) is the shipped profile, and is taken."""
    check_not_shipped_name(where, f"[profile] name {profile.name!r}", profile.name, "profile", profile_names(),
                           lambda n: replace(profile, name=n) == _shipped_profile(n))


def _read_profile(path: str | PathLike[str]) -> EngineProfile:
    """:func:`read_profile`'s reading and checks."""
    where = str(path)
    doc = read_table(path, "profile", allowed=_nonzero_range)
    check_keys(where, doc, ("profile", "parameters"), ("fit", "measurement"))
    head = validate.table(f"{where}: [profile]", doc["profile"])
    check_keys(f"{where}: [profile]", head, ("name",), _PROFILE_KEYS[1:] + ("moe_exchanges",))
    meta = check_profile_text(f"{where}: [profile]", head)
    if "moe_exchanges" in head:
        meta["moe_exchanges"] = check_moe_exchanges(f"{where}: [profile]",
                                                    head["moe_exchanges"])
    params = validate.table(f"{where}: [parameters]", doc["parameters"])
    check_keys(f"{where}: [parameters]", params, (), tuple(PARAMETERS))
    values, sources, curve = {}, {}, ()
    for key, table in params.items():
        v, c, s = _parameter(where, key, table)
        if v is not None:
            values[key] = v
        curve = curve or c
        sources[key] = s
    rows = doc.get("measurement", [])
    if not isinstance(rows, list):
        raise UserError(f"{where}: measurement must be a list of tables ([[measurement]]), "
                        f"got {validate.describe(rows)}")
    if len(rows) > MAX_MEASUREMENTS:   # each is checked against its model and GPU: ~0.1 ms
        raise _too_many_measurements(where)
    measurements = []
    for i, row in enumerate(rows, 1):
        w = f"{where}: measurement {i}"
        validate.table(w, row)
        required, optional = MEASUREMENT_COLUMNS
        check_keys(w, row, required, tuple(c for c in optional if c != "note"))
        measurements.append(_measurement(w, row))
    _check_fitted_gpus(f"{where}: [profile]", meta.get("gpu", ""), measurements)
    fit = ()
    if "fit" in doc:
        f = validate.table(f"{where}: [fit]", doc["fit"])
        check_keys(f"{where}: [fit]", f, _FIT_KEYS)
        names = f["parameters"]
        # isinstance first: a table or list in the list is no key of PARAMETERS (unhashable)
        if not (isinstance(names, list) and names
                and all(isinstance(n, str) and n in PARAMETERS for n in names)
                and len(set(names)) == len(names)):
            raise UserError(f"{where}: [fit]: parameters must be a list of "
                            f"{known(PARAMETERS)}, each at most once, got "
                            f"{validate.describe(names)}")
        fit = (tuple(names),
               validate.number(f"{where}: [fit]", "points", f["points"], minimum=1,
                               maximum=MAX_MEASUREMENTS, integer=True),
               validate.number(f"{where}: [fit]", "rms_relative_error",
                               f["rms_relative_error"], minimum=0, maximum=1e6),
               validate.number(f"{where}: [fit]", "max_relative_error",
                               f["max_relative_error"], minimum=0, maximum=1e6))
        _check_fit(f"{where}: [fit]", fit, len(measurements))
    return EngineProfile(**meta, **values, gemm_curve=curve,
                         sources=tuple(sorted(sources.items())),
                         measurements=tuple(measurements), fit=fit)


def _check_fitted_gpus(where: str, gpu: str, measurements) -> None:
    """Refuse a ``gpu`` (``A, B`` for several, as ``calibrate`` writes it) that names other
    GPUs than the ``measurements`` the profile lists (where it names some and lists some):
    :attr:`EngineProfile.fitted_gpus` reads it first, so a profile of H100-SXM rows saying
    ``gpu = "Lite"`` was said to be fitted on Lite, run on Lite with no word of carrying it
    over and on H100-SXM as "an extrapolation ... its efficiencies are Lite's"."""
    named = [g.strip() for g in gpu.split(",") if g.strip()]
    measured = list(dict.fromkeys(m.gpu for m in measurements))
    if named and measured and \
            {g.casefold() for g in named} != {g.casefold() for g in measured}:
        raise UserError(f"{where}: gpu {gpu!r} must name the GPUs its [[measurement]] tables "
                        f"were measured on ({', '.join(measured)}): a profile run on another "
                        f"GPU is said to be carried over from them")


def _check_fit(where: str, fit: tuple, listed: int) -> None:
    """Refuse a ``[fit]`` record no fit makes (:func:`compute.profile_fit.fit_profile` writes
    its points and every measurement it fitted): points other than the ``listed``
    ``[[measurement]]`` tables (where some are), or a worst relative error below the RMS one
    (the root mean square of errors is at most their largest)."""
    _, points, rms, worst = fit
    if listed and points != listed:
        raise UserError(f"{where}: points {points:,} must be the number of [[measurement]] "
                        f"tables the profile lists ({listed:,})")
    if rms > worst * (1 + 1e-9):
        raise UserError(f"{where}: max_relative_error {worst:g} must be at least "
                        f"rms_relative_error {rms:g} (a root mean square is at most the "
                        f"largest of its values)")


def _shipped() -> Path:
    return Path(str(resources.files("compute").joinpath("data/profiles")))


@cache
def profile_names() -> tuple[str, ...]:
    """The names of the profiles shipped with the package."""
    return tuple(sorted(p.stem for p in _shipped().glob("*.toml")))


@cache
def _shipped_profile(name: str) -> EngineProfile:
    """The shipped profile of file ``name``.toml, whose ``[profile] name`` must be ``name``:
    a profile is found by its file's name and reported by its own, so a copied file that
    kept its original's name ran as the new profile and was reported as the old one."""
    path = _shipped() / f"{name}.toml"
    with validate.file_values(path):
        profile = _read_profile(path)
    if profile.name != name:
        raise UserError(f"compute/data/profiles/{name}.toml: [profile] name "
                        f"{profile.name!r} is not its file's name {name!r} (a shipped "
                        f"profile is found by its file's name: give both the same)")
    return profile


def _is_folder(text: str) -> bool:
    """Whether ``text`` names a folder; a name over the file system's limits names none
    (``Path.is_dir`` raised OSError for it: a profile name of 300 characters was a
    traceback)."""
    try:
        return Path(text).is_dir()
    except OSError:
        return False


def get_profile(ref: str | Path | EngineProfile) -> EngineProfile:
    """A profile by shipped name (:func:`profile_names`), a path to a ``.toml`` file, or the
    profile itself.

    >>> get_profile("no-such-engine")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compute.errors.UserError: unknown profile 'no-such-engine'; known: ... (or a path to a .toml profile)
    >>> get_profile(".")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compute.errors.UserError: profile '.' is a folder; give a shipped profile (...) or a path to a .toml profile file
    """
    if isinstance(ref, EngineProfile):
        return ref
    if not isinstance(ref, str | Path):
        raise UserError(f"a profile is a name or a path, got {validate.describe(ref)}")
    text = str(ref)
    shipped = chosen(text, profile_names())   # blanks at either end dropped, as every name's
    if shipped is not None:
        return _shipped_profile(shipped)
    if text.lower().endswith((".toml", ".json")):
        return read_profile(text)
    if text.strip() and _is_folder(text):
        raise UserError(f"profile {text!r} is a folder; give a shipped profile "
                        f"({known(profile_names())}) or a path to a .toml profile file")
    raise UserError(f"unknown profile {text!r}{lookalike(text, profile_names())}; known: "
                    f"{known(profile_names())} (or a path to a .toml profile)")


# ---- measurements CSV ------------------------------------------------------------------
