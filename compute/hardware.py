"""GPU specifications: the catalog shipped in ``compute/data/gpus.toml``, user files, and
derived GPUs (the Lite family is a fraction of an H100, with bandwidth and FLOP/s
multipliers), and the one record of every GPU read with what its entry says beside the spec.

All fields are SI: FLOP/s, bytes, bytes/s per direction, watts. The record
(:func:`read_gpu`, by name: its die table, what it derives from, its host power) is what
:mod:`compute.gpu_facts` answers from.

>>> h100 = get_gpu("H100-SXM")
>>> h100.sms, h100.hbm_bandwidth
(132, 3350000000000.0)
>>> lite = get_gpu("Lite")
>>> lite.sms, lite.hbm_capacity == h100.hbm_capacity / 4, lite.scaleup_bandwidth / 1e9
(33, True, 112.5)
>>> h100.hbm_capacity == 81559 * 2**20, lite.max_instance  # nvidia-smi's total, 85.5 GB
(True, 32)
>>> get_gpu("Lite+BW+FLOPS").peak_flops("bf16") == 1.2 * lite.peak_flops("bf16")
True
>>> h100.flops_int8 / 1e12, lite.flops_int8 / 1e12, get_gpu("B200-HGX").flops_fp4 / 1e12
(1979.0, 494.75, 9000.0)
"""

from __future__ import annotations

import math
import tomllib
import unicodedata
import weakref
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from functools import cache, partial
from importlib import resources
from os import PathLike, fspath
from pathlib import Path
from typing import NamedTuple

from compute import validate
from compute.clock_power import rated_at_clock
from compute.config_files import check_keys, missing_named_file, read_table
from compute.dies import LogicDies, check_die_table
from compute.errors import (
    UserError,
    chosen,
    find_name,
    known,
    lookalike,
    one_line,
    refuse_lookalike_names,
)
from compute.gpu_ranges import SPEC_KEYS, check_peaks, spec_ranges
from compute.gpu_rows import (
    HOST_POWER_KEY,
    NAMED_KEYS,
    NO_SOURCE,
    die_entry,
    entry_source,
    host_power_entry,
    named_entries,
    row_value,
)
from compute.rows import Parameter
from compute.units import scaled

__all__ = ["DTYPES", "FLAG_FIELDS", "GpuSpec", "OPTIONAL_FIELDS", "ReadGpu", "UNSET_FIELDS",
           "catalog", "Step", "clock_lineage", "derive_gpu", "get_gpu", "gpu_names",
           "keep_read", "load_gpu_file", "read_gpu", "read_step", "unknown_gpu"]


@dataclass(frozen=True)
class GpuSpec:
    """One GPU type. Units: FLOP/s, bytes, bytes/s per direction, watts."""

    name: str
    sms: int
    flops_bf16: float          #: peak dense bf16 FLOP/s
    flops_fp8: float           #: peak dense fp8 FLOP/s (0 where unsupported)
    #: Peak dense int8 tensor-core operations/s (0: none; int8 GEMMs then run at the bf16
    #: peak). Keyword-only, optional: files saved before it existed lack it.
    flops_int8: float = field(default=0.0, kw_only=True)
    #: Peak dense fp4 tensor-core FLOP/s (0: none, as before Blackwell; fp4 weights then run
    #: weight-only at the bf16 peak). Keyword-only, optional, as ``flops_int8``.
    flops_fp4: float = field(default=0.0, kw_only=True)
    hbm_capacity: float        #: bytes
    hbm_bandwidth: float       #: bytes/s
    scaleup_bandwidth: float   #: bytes/s per direction per GPU (NVLink-class)
    #: NVLinks per GPU (a GPU entry's ``nvlinks`` key; the catalog's A100 12, H100, H200
    #: and Blackwell 18), which fabric builders wire a GPU's scale-up links and a scale-up
    #: switch's ports with; the links share :attr:`scaleup_bandwidth`. None where its entry
    #: gives none: builders and a scenario's ``"$nvlinks"`` then count them by one rule,
    #: :func:`compute.gpu_facts.nvlink_count`. A GPU derived from another
    #: (:func:`derive_gpu`, ``derive_from``) keeps its base's count, each link carrying its
    #: share: the fraction and ``network_bandwidth_multiplier`` scale the bandwidth, not
    #: the links (the Lite family, a quarter of an H100 in everything, keeps its 18
    #: NVLinks at a quarter of their rate, as gpus.toml says and lite-direct splits an
    #: H100's links among its 4 Lites; a quarter of 18 links is no whole count).
    #: Keyword-only, optional: files saved before it existed lack it.
    nvlinks: int | None = field(default=None, kw_only=True)
    scaleout_bandwidth: float  #: bytes/s per direction per GPU (NIC)
    tdp: float                 #: watts
    max_instance: int          #: largest tensor-parallel group it is used in
    source: str = ""
    #: Whether the switches of its scale-up domain can reduce data in the switch (NVLink
    #: SHARP, NCCL's NVLS: NVSwitch gen3 with Hopper and later; not A100's NVSwitch gen2).
    #: Fabric builders default a scale-up switch's ``in_network_reduction`` to it.
    scaleup_reduction: bool = True

    def __post_init__(self) -> None:
        # a GpuSpec built by hand (the API takes one) meets the ranges a GPU file's entry
        # does: None, NaN, 0 or 10**400 crashed the roofline and the builders with
        # TypeError, ZeroDivisionError or OverflowError, or gave NaN tokens/s
        _check_fields(self)

    def peak_flops(self, dtype: str = "bf16") -> float:
        """Peak dense FLOP/s for ``dtype``, one of :data:`DTYPES` (its ``flops_DTYPE``
        field; integer operations/s for int8).

        >>> get_gpu("B200-HGX").peak_flops("fp4") / 1e12, get_gpu("Lite").peak_flops("int8") / 1e12
        (9000.0, 494.75)
        >>> get_gpu("H100-SXM").peak_flops("fp4")
        Traceback (most recent call last):
        ...
        compute.errors.UserError: GPU 'H100-SXM' has no fp4 tensor cores; use bf16
        """
        if dtype not in DTYPES:
            typed, dtype = dtype, chosen(dtype, DTYPES)   # blanks at either end dropped
            if dtype is None:
                raise UserError(f"unknown compute dtype {validate.describe(typed)}"
                                f"{lookalike(typed, DTYPES)}; known: {known(DTYPES)}")
        value = getattr(self, f"flops_{dtype}")
        if value <= 0:
            raise UserError(f"GPU {self.name!r} has no {dtype} tensor cores; use bf16")
        return value

    def to_dict(self) -> dict:
        """SI fields as a plain dict (the shape of ``netmodel hardware NAME --json``)."""
        return asdict(self)


#: The compute dtypes a GPU has a peak for: its ``flops_DTYPE`` fields, in field order.
DTYPES = tuple(f.name.removeprefix("flops_") for f in fields(GpuSpec)
               if f.name.startswith("flops_"))
#: GpuSpec fields with a default: optional in a saved fabric's gpu_types (files saved before
#: the field existed lack it).
OPTIONAL_FIELDS = tuple(f.name for f in fields(GpuSpec) if f.default is not MISSING)
#: GpuSpec fields that may be None, "not given" (their default: ``nvlinks``), in a GPU
#: file's entry (the key left out) and in a saved fabric's gpu_types (null).
UNSET_FIELDS = tuple(f.name for f in fields(GpuSpec) if f.default is None)


#: :func:`derive_gpu`'s multipliers, in the order its keywords and a GPU file's
#: ``derive_from`` entry name them.
_MULTIPLIERS = ("flops_multiplier", "hbm_bandwidth_multiplier", "network_bandwidth_multiplier",
                "hbm_capacity_multiplier")


#: How a GPU derives from another: ``step(spec)`` is ``(base, fraction)`` where ``spec`` is
#: ``fraction`` of ``base`` (:func:`derive_gpu`), None where it derives from none.
Step = Callable[[GpuSpec], "tuple[GpuSpec, float] | None"]


def read_step(spec: GpuSpec) -> tuple[GpuSpec, float] | None:
    """The :data:`Step` the GPUs read so far give (:func:`read_gpu`: the catalog's, a GPU
    file's, a saved fabric's): ``(base as read, fraction)`` of the GPU read under
    ``spec``'s name, None where it derives from none or was not read.

    Parameters
    ----------
    spec : GpuSpec

    Returns
    -------
    tuple of (GpuSpec, float) or None

    Examples
    --------
    >>> base, fraction = read_step(get_gpu("Lite+BW+FLOPS"))
    >>> base.name, fraction, read_step(get_gpu("H100-SXM"))
    ('H100-SXM', 0.25, None)
    """
    catalog()   # a catalog GPU unpickled in a worker: its lineage is the catalog's
    found = _READ.get(spec.name)
    if found is None or found.derived is None:
        return None
    base = _READ.get(found.derived[0])
    return None if base is None else (base.spec, found.derived[1])


#: The lineages :func:`clock_lineage` has walked under a step a caller gave, by the step
#: (gone with it) and then by the derived spec's id (the spec kept beside it, so an id
#: reused by another object is not taken for it).
_LINEAGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def clock_lineage(spec: GpuSpec, step: Step | None = None) -> tuple[GpuSpec, float, float]:
    """``(root, fraction, clock)``: the GPU derived from none that ``spec`` derives from
    (``step``, default :func:`read_step`, followed to its end), the fraction of its
    silicon ``spec`` is (each step's, multiplied) and the clock its SMs run at, over the
    root's (each step's ``flops_multiplier``, multiplied): ``(spec, 1, 1)`` for a GPU
    derived from none. Each step is taken only where its TDP is the one
    :func:`derive_gpu` rates it at, the root's fraction at that clock: a spec that only
    bears a derived GPU's name (built in code) is not that GPU, and the lineage starts
    there.

    Parameters
    ----------
    spec : GpuSpec
    step : Step, optional
        How a GPU derives (:data:`Step`); default :func:`read_step`.

    Returns
    -------
    tuple of (GpuSpec, float, float)
        ``(root, fraction, clock)``.

    Examples
    --------
    >>> root, fraction, clock = clock_lineage(get_gpu("Lite+BW+FLOPS"))
    >>> root.name, fraction, round(clock, 12)
    ('H100-SXM', 0.25, 1.2)
    """
    # A step given by the caller (a GPU file's own table) keeps the lineages it has walked,
    # by object, so that a file's chain of n derivations is read in O(n), not O(n^2).
    memo = _LINEAGES.setdefault(step, {}) if step is not None else {}
    step = step or read_step
    chain, seen, known = [], {spec.name}, None
    while (hit := memo.get(id(spec))) is None or hit[0] is not spec:
        found = step(spec)
        if found is None or found[0].name in seen:
            break
        chain.append((spec, *found))
        seen.add(found[0].name)
        spec = found[0]
    else:
        known = hit[1]
    root, fraction, clock = known or (spec, 1.0, 1.0)
    for derived, base, part in reversed(chain):   # from the root up
        c = derived.flops_bf16 / (base.flops_bf16 * part) if base.flops_bf16 else 1.0
        if math.isclose(derived.tdp, rated_at_clock(root.tdp * fraction * part, clock * c,
                                                    checked=False), rel_tol=1e-9):
            fraction, clock = fraction * part, clock * c
        else:
            root, fraction, clock = derived, 1.0, 1.0
        memo[id(derived)] = (derived, (root, fraction, clock))
    return root, fraction, clock


def derive_gpu(base: GpuSpec, name: str, *, fraction: float = 1.0, flops_multiplier: float = 1.0,
               hbm_bandwidth_multiplier: float = 1.0, network_bandwidth_multiplier: float = 1.0,
               hbm_capacity_multiplier: float = 1.0, max_instance: int | None = None,
               source: str = "", lineage: Step | None = None) -> GpuSpec:
    """A GPU that is ``fraction`` of ``base`` in everything (SMs, FLOP/s, HBM capacity and
    bandwidth, network bandwidth, TDP), then scaled by the multipliers. It keeps the
    base's NVLinks (:attr:`GpuSpec.nvlinks`), each carrying its share of the scaled
    scale-up bandwidth.

    Its SMs are the fraction's, so ``flops_multiplier`` is a clock ratio: its TDP is the
    fraction's rated at that clock by the clock-power law
    (:func:`~compute.clock_power.rated_at_clock`, the law ``netmodel cost --clock`` uses;
    past the law's accepted clock range by the same formula). A ``base`` that is itself
    derived with a raised clock (``lineage``: how it derives, default :func:`read_step`;
    :func:`clock_lineage`) is that die run faster still: the TDP is its root's fraction
    rated at the product of the clocks, what one derivation at that product is rated, not
    the base's rated power rated again. The bandwidth and capacity multipliers add no TDP: the TDP is drawn in
    compute-bound steps, which move the same bytes at any peak bandwidth
    (``compute/data/gpus.toml`` says what this leaves out).

    Parameters
    ----------
    base : GpuSpec
        The GPU it is a fraction of.
    name : str
        The derived GPU's name.
    fraction : float
        Its share of ``base``'s silicon (``compute/data/limits.toml``'s range).
    flops_multiplier, hbm_bandwidth_multiplier, network_bandwidth_multiplier, \
hbm_capacity_multiplier : float
        Each scales its fields after the fraction: the clock (FLOP/s and the TDP), HBM
        bandwidth, scale-up and scale-out bandwidth, HBM capacity.
    max_instance : int, optional
        Its largest tensor-parallel group; default ``base``'s.
    source : str
        Where its figures come from; default ``"derived from BASE"``.
    lineage : Step, optional
        How ``base`` derives (:data:`Step`); default :func:`read_step`.

    Returns
    -------
    GpuSpec

    Raises
    ------
    UserError
        A fraction or multiplier out of its range, or a derived field out of a GPU's
        range (the message says whether a smaller or a larger one is wanted).

    Examples
    --------
    >>> lite, fast = get_gpu("Lite"), get_gpu("Lite+BW+FLOPS")   # 1.2x clock
    >>> lite.tdp, round(fast.tdp, 2)
    (175.0, 259.56)

    >>> g = derive_gpu(get_gpu("H100-SXM"), "Half", fraction=0.5, hbm_bandwidth_multiplier=2)
    >>> g.sms, g.hbm_bandwidth == get_gpu("H100-SXM").hbm_bandwidth
    (66, True)
    >>> a = derive_gpu(get_gpu("A100-SXM-80GB"), "HalfA100", fraction=0.5)
    >>> a.nvlinks, a.scaleup_bandwidth / a.nvlinks / 1e9   # 12 links of 12.5 GB/s
    (12, 12.5)
    >>> twice = derive_gpu(fast, "Faster", flops_multiplier=1.2)   # Lite+BW at 1.44x
    >>> once = derive_gpu(get_gpu("H100-SXM"), "Once", fraction=0.25, flops_multiplier=1.44)
    >>> round(twice.tdp, 2), round(once.tdp, 2)
    (405.68, 405.68)
    """
    # the ranges a GPU file's derive_from entry is held to (compute/data/limits.toml): a
    # multiplier of 10**400 passed 'finite and > 0' and overflowed the multiplications
    validate.of_type("base", base, GpuSpec, "get_gpu('H100-SXM')", default=False)
    here = f"GPU {validate.describe(name)}"
    source = validate.string(here, "source", source)   # an array: no truth value
    f = validate.in_range(here, "gpu", "fraction", fraction)
    multipliers = {label: validate.in_range(here, "gpu", "multiplier", v, key=label)
                   for label, v in zip(_MULTIPLIERS, (flops_multiplier, hbm_bandwidth_multiplier,
                                                      network_bandwidth_multiplier,
                                                      hbm_capacity_multiplier), strict=True)}
    flops_multiplier, hbm_bandwidth_multiplier, network_bandwidth_multiplier, \
        hbm_capacity_multiplier = multipliers.values()
    largest = base.max_instance if max_instance is None else _pos_int(name, "max_instance",
                                                                      max_instance)
    root, parts, clock = clock_lineage(base, lineage)
    scaled_fields = dict(
        sms=max(1, round(base.sms * f)),
        flops_bf16=base.flops_bf16 * f * flops_multiplier,
        flops_fp8=base.flops_fp8 * f * flops_multiplier,
        flops_int8=base.flops_int8 * f * flops_multiplier,
        flops_fp4=base.flops_fp4 * f * flops_multiplier,
        hbm_capacity=base.hbm_capacity * f * hbm_capacity_multiplier,
        hbm_bandwidth=base.hbm_bandwidth * f * hbm_bandwidth_multiplier,
        scaleup_bandwidth=base.scaleup_bandwidth * f * network_bandwidth_multiplier,
        scaleout_bandwidth=base.scaleout_bandwidth * f * network_bandwidth_multiplier,
        tdp=rated_at_clock(root.tdp * parts * f, clock * flops_multiplier, checked=False),
        max_instance=largest,
        source=source or f"derived from {base.name}",
    )
    try:
        return replace(base, name=name, **scaled_fields)
    except UserError as e:   # a scaled field out of a GPU's range: say what gave it
        if not str(e).startswith(here + ": "):
            raise
        scaled = [f"{label} {v:g}" for label, v in multipliers.items() if v != 1]
        # a field past a GPU's most (a clock of 1000x rates its TDP at 465 GW) asks for a
        # smaller fraction or multiplier, not a larger one
        over = any(isinstance(v, int | float) and v > spec_ranges()[k][1]
                   for k, v in scaled_fields.items() if k in spec_ranges())
        raise UserError(f"{here}, fraction {f:g} of {base.name!r}"
                        f"{''.join(', ' + x for x in scaled)}: "
                        f"{str(e).removeprefix(here + ': ')}; give a "
                        f"{'smaller' if over else 'larger'} fraction"
                        f"{' or multiplier' if scaled else ''}") from None


def _check_fields(spec: GpuSpec) -> None:
    """Check (and make plain ``int``/``float``) every field of ``spec`` (UserError, one
    line naming the GPU and the field)."""
    # on one line and visible: a newline or a blank name broke every table and one-line
    # error that prints it, as a GPU file's name check (validate.name) says
    if not isinstance(spec.name, str) or not spec.name.strip() \
            or len(spec.name) > validate.MAX_TEXT_LENGTH or one_line(spec.name) != spec.name \
            or spec.name.strip() != spec.name \
            or any(unicodedata.category(c) == "Cf" for c in spec.name):
        raise UserError(f"a GpuSpec's name must be non-empty text of at most "
                        f"{validate.MAX_TEXT_LENGTH:,} characters on one line, without control "
                        f"or format characters (such as U+202E) and no blank at either end, "
                        f"got {validate.describe(spec.name)}")
    here = f"GPU {validate.describe(spec.name)}"
    for name, (lo, hi, integer, or_zero, unit) in spec_ranges().items():
        v = getattr(spec, name)
        if v is None and name in UNSET_FIELDS:
            continue
        if type(v) is not (int if integer else float) or not lo <= v <= hi:
            # a 0 (or_zero: none) too, which validate.number stores as 0.0 (-0.0 printed '-0')
            object.__setattr__(spec, name, validate.number(
                here, name, v, minimum=lo, maximum=hi, integer=integer, or_zero=or_zero,
                unit=unit))
    for name in FLAG_FIELDS:   # numpy's bool kept as Python's
        object.__setattr__(spec, name, validate.flag(here, name, getattr(spec, name)))
    check_peaks(here, {d: getattr(spec, f"flops_{d}") for d in DTYPES})
    if not isinstance(spec.source, str):
        raise UserError(f"{here}: source must be text, got {validate.describe(spec.source)}")


#: The keys of :data:`SPEC_KEYS` given as a sourced row ``{value, unit, source,
#: confidence}``, with the unit the row must name.
ROW_UNITS = {"int8_dense_TOPs": "TOPS", "fp4_dense_TFLOPs": "TFLOPS"}
#: The keys of :data:`SPEC_KEYS` an entry may leave out (0: no such tensor cores; None
#: for the fields of :data:`UNSET_FIELDS`).
_OPTIONAL_KEYS = ("fp8_dense_TFLOPs", *ROW_UNITS,
                  *(k for k, (f, _) in SPEC_KEYS.items() if f in UNSET_FIELDS))
_DERIVE_KEYS = ("derive_from", "fraction", *_MULTIPLIERS, "max_instance")
#: GpuSpec's true/false fields: optional keys of either kind of catalog entry (and of a
#: saved fabric's gpu_types), by the field's name.
FLAG_FIELDS = tuple(f.name for f in fields(GpuSpec) if f.type in (bool, "bool"))


def _flags(here: str, entry: dict) -> dict:
    """The optional true/false keys of ``entry`` (removed from it), checked."""
    out = {}
    for key in FLAG_FIELDS:
        if key in entry:
            v = entry.pop(key)
            out[key] = validate.flag(here, key, v)
    return out


#: What joins a GPU's name to its clock ratio in a GPU at another clock (compute.power:
#: ``H100-SXM@0.5x``); a GPU read from a file may not use it
#: (:data:`compute.validate.NAME_MARKS`).
CLOCK_MARK = "@"


class ReadGpu(NamedTuple):
    """A GPU as read, with the facts its entry gives beside the spec (each None where it
    gives none): its die table ``(table, where, checked dies)`` (optional ``die`` key: rows
    of die and package data, checked when the entry is read, compute.dies, and priced by
    compute.yield_model), what it derives from ``(base GPU, fraction of its silicon)`` (the
    catalog's Lite family, a GPU file's ``derive_from`` entries) and its ``host_power_W``
    row, and ``named``: what its entry names the GPU (:data:`compute.gpu_rows.NAMED_KEYS`:
    its collective generation, its compute capability, its host's CPU architecture;
    ``(key, value)`` pairs of those it names, none where it names none: a tuple, as every
    field, so the record pickles). A
    GpuSpec holds performance only; the rest is kept beside it so that saved fabrics and the
    ``hardware --json`` shape stay as they are (:mod:`compute.gpu_facts` answers from it)."""

    spec: GpuSpec
    die: tuple[dict, str, LogicDies] | None
    derived: tuple[str, float] | None
    host_power: Parameter | None
    named: tuple[tuple[str, str], ...] = ()


#: Every GPU read so far, by name (the catalog's, a GPU file's, a saved fabric's noted by
#: compute.gpu_facts.note_gpu_file_facts), with its entry's facts: the one record of them.
#: A GPU file's entry may derive from another of the same file, which get_gpu (the catalog)
#: does not know.
_READ: dict[str, ReadGpu] = {}


def keep_read(gpus: dict[str, GpuSpec], dies: dict[str, tuple[dict, str, LogicDies]],
              derived: dict[str, tuple[str, float]],
              hosts: dict[str, Parameter] | None = None,
              named: dict[str, dict[str, str]] | None = None) -> None:
    """Record ``gpus`` with their die tables, derivations, host power rows and named facts
    by name once they are all read (a GPU read again without one loses the one read
    before)."""
    hosts, named = hosts or {}, named or {}
    for name, spec in gpus.items():
        _READ[name] = ReadGpu(spec, dies.get(name), derived.get(name), hosts.get(name),
                              tuple(named.get(name, {}).items()))


def read_gpu(name: str) -> ReadGpu | None:
    """The GPU ``name`` as read so far with its entry's facts (:class:`ReadGpu`), or None:
    the catalog's GPUs once it is read (:func:`catalog`), a GPU file's once it is.

    Examples
    --------
    >>> read_gpu(catalog()["Lite"].name).derived
    ('H100-SXM', 0.25)
    """
    return _READ.get(name)


def _pos_int(name, key, v):
    if not (isinstance(v, int) and not isinstance(v, bool) and v > 0):
        raise UserError(f"GPU {name!r}: {key} must be a positive integer, got {v!r}")
    return v


def _gpu_from_entry(name: str, entry, known_gpus: Mapping[str, GpuSpec], where: str,
                    dies: dict[str, tuple[dict, str]],
                    derived: dict[str, tuple[str, float]], lineage: Step,
                    named: dict[str, dict[str, str]]) -> GpuSpec:
    """One ``[gpu.NAME]`` table, every value checked against ``compute/data/limits.toml``."""
    validate.typed_name(where, "GPU", name)   # no CLOCK_MARK, ',', '=', ':' (NAME_MARKS)
    here = f"{where}: GPU {name!r}"
    entry = dict(validate.table(here, entry))
    given = entry.pop("source", NO_SOURCE)   # required: checked after the other keys
    flags = _flags(here, entry)
    die = die_entry(here, entry)
    if die is not None:
        dies[name] = die
    said = named_entries(here, entry)
    if said:
        named[name] = said
    if "derive_from" in entry:
        own = dict(flags)   # an nvlinks key of its own replaces the base's count
        if "nvlinks" in entry:
            own["nvlinks"] = validate.in_range(here, "gpu", "nvlinks", entry.pop("nvlinks"))
        unknown = sorted(set(entry) - set(_DERIVE_KEYS))
        if unknown:
            raise UserError(f"{here} has unknown key(s) {', '.join(k[:60] for k in unknown)}; "
                            f"a derived GPU allows: {', '.join(_DERIVE_KEYS)}, "
                            f"{', '.join(FLAG_FIELDS)}, die, nvlinks, {HOST_POWER_KEY}, "
                            f"{', '.join(NAMED_KEYS)}, source")
        typed = entry.pop("derive_from")
        # a GPU looked up, as --gpu reads one: blanks at either end dropped, case aside
        base_name = find_name(known_gpus, typed) if isinstance(typed, str) else None
        if base_name is None:
            raise UserError(f"{here} derives from unknown GPU {validate.describe(typed)}"
                            f"{lookalike(typed, known_gpus)}; known: {known(known_gpus)}")
        kw = {key: validate.in_range(here, "gpu", "fraction" if key == "fraction" else
                                     "max_instance" if key == "max_instance" else "multiplier",
                                     v, key=key)
              for key, v in entry.items()}
        derived[name] = (base_name, float(kw.get("fraction", 1.0)))
        try:
            spec = derive_gpu(known_gpus[base_name], name, **kw, lineage=lineage)
        except UserError as e:   # a scaled field out of range: the file named, as every key's
            raise UserError(f"{where}: {e}") from None
        return replace(spec, source=entry_source(here, given), **own)
    unknown = sorted(set(entry) - set(SPEC_KEYS))
    missing = sorted(set(SPEC_KEYS) - set(entry) - set(_OPTIONAL_KEYS))
    if unknown:
        raise UserError(f"{here} has unknown key(s) {', '.join(k[:60] for k in unknown)}; "
                        f"allowed: {', '.join(SPEC_KEYS)}, {', '.join(FLAG_FIELDS)}, "
                        f"die, {HOST_POWER_KEY}, {', '.join(NAMED_KEYS)}, source "
                        f"(or derive_from with "
                        f"{', '.join(_DERIVE_KEYS[1:])})")
    if missing:
        raise UserError(f"{here} lacks key(s) {', '.join(missing)}")
    for key, unit in ROW_UNITS.items():
        if key in entry:
            entry[key] = row_value(here, key, unit, entry[key])
    values = {}
    for key, (name_of, factor) in SPEC_KEYS.items():
        if key not in entry and name_of in UNSET_FIELDS:
            continue   # not given: the GpuSpec's default (None)
        v = validate.in_range(here, "gpu", key, entry.get(key, 0))
        values[name_of] = v if isinstance(v, int) else scaled(v, factor)  # 2.039 TB/s exact
    check_peaks(here, {d: values.get(f"flops_{d}", 0) for d in DTYPES})   # with the file's name
    return GpuSpec(name=name, source=entry_source(here, given), **values, **flags)


def _parse_gpu_table(data, where: str, base: dict[str, GpuSpec],
                     dies: dict[str, tuple[dict, str, LogicDies]],
                     derived: dict[str, tuple[str, float]],
                     hosts: dict[str, Parameter] | None = None,
                     named: dict[str, dict[str, str]] | None = None) -> dict[str, GpuSpec]:
    """The GPUs of a parsed ``{"gpu": {NAME: entry}}`` table; their die tables into
    ``dies``, derivations into ``derived``, ``host_power_W`` rows into ``hosts`` (None: the
    key is refused, as in the catalog, whose host power rows are economics.toml's), named
    facts (:data:`compute.gpu_rows.NAMED_KEYS`) into ``named``."""
    named = {} if named is None else named
    if isinstance(data, dict) and isinstance(data.get("gpu"), dict):   # beside it, a stray key
        check_keys(f"{where} (top level)", data, ("gpu",))   # (told 'expected a table gpu')
    if not isinstance(data, dict) or set(data) != {"gpu"} or not isinstance(data["gpu"], dict):
        got = f", got gpu {validate.describe(data['gpu'])}" if isinstance(data, dict) \
            and "gpu" in data else ""
        raise UserError(f"{where}: expected a top-level table 'gpu' of GPU entries "
                        f"([gpu.NAME] in TOML, {{\"gpu\": {{NAME: {{...}}}}}} in JSON){got}")
    if not data["gpu"]:
        raise UserError(f"{where}: the 'gpu' table is empty")
    out: dict[str, GpuSpec] = {}
    raw: dict[str, tuple[dict, str]] = {}

    def lineage(spec: GpuSpec) -> tuple[GpuSpec, float] | None:
        """This table's derivations, then those read before (the catalog's)."""
        if spec.name not in out:
            return read_step(spec)
        step = derived.get(spec.name)
        return None if step is None else (seen[step[0]], step[1])

    seen = ChainMap(out, base)   # live: each entry may derive from one before it (a dict
    for name, entry in data["gpu"].items():   # copied per entry made n entries O(n^2))
        host = None
        if isinstance(entry, dict) and HOST_POWER_KEY in entry:
            if hosts is None:
                raise UserError(f"{where}: GPU {name!r}: {HOST_POWER_KEY} is for a GPU file; a "
                                f"catalog GPU's host power is a row of compute/data/"
                                f"economics.toml [host_power_per_gpu]")
            host, entry = entry, {k: v for k, v in entry.items() if k != HOST_POWER_KEY}
        base_name = entry.get("derive_from") if isinstance(entry, dict) else None
        if isinstance(base_name, str) and base_name not in seen and base_name in data["gpu"]:
            # itself or an entry after it: told 'unknown GPU', the known listed without it
            raise UserError(f"{where}: GPU {name!r} derives from "
                            + ("itself" if base_name == name else
                               f"{base_name!r}, which the file gives after it; give {base_name!r} "
                               "first")
                            + " (a GPU derives from a catalog GPU or one given before it)")
        out[name] = _gpu_from_entry(name, entry, seen, where, raw, derived, lineage, named)
        if host is not None:
            hosts[name] = host_power_entry(f"{where}: GPU {name!r}", host)
        if name in raw:  # its die table checked where it is read, against the GPU's SMs
            table, here = raw[name]
            dies[name] = (table, here, check_die_table(name, table, here, out[name].sms))
    return out


@cache
def catalog() -> dict[str, GpuSpec]:
    """The shipped GPU catalog, by name (read once).

    Returns
    -------
    dict of str to GpuSpec
        Every GPU of ``compute/data/gpus.toml``, in file order (shared: do not modify).

    Raises
    ------
    UserError
        Where the shipped file breaks a rule of a GPU file (a packaging fault).

    Examples
    --------
    >>> catalog()["H100-SXM"].sms
    132
    """
    text = resources.files("compute").joinpath("data/gpus.toml").read_text(encoding="utf-8")
    dies: dict[str, tuple[dict, str, LogicDies]] = {}
    derived: dict[str, tuple[str, float]] = {}
    named: dict[str, dict[str, str]] = {}
    gpus = _parse_gpu_table(tomllib.loads(text), "compute/data/gpus.toml", {}, dies, derived,
                            named=named)
    keep_read(gpus, dies, derived, named=named)
    return gpus


def gpu_names() -> tuple[str, ...]:
    """Names of the shipped GPUs, in catalog order.

    Returns
    -------
    tuple of str
        The names of :func:`catalog`.

    Examples
    --------
    >>> gpu_names()[:3]
    ('A100-SXM-80GB', 'H100-SXM', 'H200-SXM')
    """
    return tuple(catalog())


def load_gpu_file(path: str | PathLike[str]) -> dict[str, GpuSpec]:
    """GPUs from a user's TOML or JSON file (same keys as the shipped catalog; an entry
    may ``derive_from`` a catalog GPU or one the file gives before it).

    Parameters
    ----------
    path : path
        A ``.toml`` or ``.json`` file of ``[gpu.NAME]`` entries, each with its ``source``.

    Returns
    -------
    dict of str to GpuSpec
        The file's GPUs, in file order; each is recorded with its die table, derivation
        and ``host_power_W`` row (:func:`read_gpu`).

    Raises
    ------
    UserError
        A missing or unreadable file, an entry out of ``compute/data/limits.toml``'s
        ranges or without a source, or a name a catalog GPU already has.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "half.toml")
    >>> with open(path, "w") as f:
    ...     _ = f.write('[gpu.Half]\\nderive_from = "H100-SXM"\\nfraction = 0.5\\n'
    ...                 'source = "what-if: half an H100"\\n')
    >>> load_gpu_file(path)["Half"].sms
    66
    """
    path = Path(path)
    table = catalog()
    dies: dict[str, tuple[dict, str, LogicDies]] = {}
    derived: dict[str, tuple[str, float]] = {}
    hosts: dict[str, Parameter] = {}
    named: dict[str, dict[str, str]] = {}
    with validate.file_values(path):   # a JSON file's null said as null
        gpus = _parse_gpu_table(read_table(path, "GPU file", allowed=partial(
            validate.limit_allowed, "gpu")), str(path), table, dies,
                                derived, hosts, named)
    taken = [n for n in gpus if find_name(table, n) is not None]   # case too
    if taken:  # its figures would be reported under the catalog's name
        raise UserError(f"{path}: {', '.join(repr(n) for n in taken)} already name(s) a "
                        f"catalog GPU; give yours another name (derive_from = "
                        f"{find_name(table, taken[0])!r} "
                        f"starts from it)")
    refuse_lookalike_names(gpus, table, str(path), "GPU")
    keep_read(gpus, dies, derived, hosts, named)
    return gpus


def get_gpu(name: str | GpuSpec) -> GpuSpec:
    """A GPU by catalog name, or the spec itself if given one; a path to a .toml/.json file
    holding exactly one GPU also works.

    Parameters
    ----------
    name : str, path or GpuSpec
        A catalog name (case aside: :func:`~compute.errors.find_name`), the path of a GPU
        file of one entry (:func:`load_gpu_file`), or a spec, returned as it is.

    Returns
    -------
    GpuSpec

    Raises
    ------
    UserError
        An unknown name (:func:`unknown_gpu`), a missing file, or a file of more than one
        GPU.

    Examples
    --------
    >>> get_gpu("h100-sxm").name
    'H100-SXM'
    """
    if isinstance(name, GpuSpec):
        return name
    if isinstance(name, PathLike):   # a GPU file as a Path, as the API's GpuLike says
        name = fspath(name)
    if not isinstance(name, str):   # a list or table is unhashable: a TypeError in the look-up
        raise UserError(f"a GPU is a catalog name, a GPU file path or a GpuSpec, got "
                        f"{validate.describe(name)}")
    table = catalog()
    key = find_name(table, name)
    if key is not None:
        return table[key]
    missing = missing_named_file(name, "GPU file", table, "the catalog's GPU")
    if missing is not None:
        raise missing
    if isinstance(name, str) and name.lower().endswith((".toml", ".json")):
        gpus = load_gpu_file(name)
        if len(gpus) != 1:
            few = known(list(gpus)[:4]) + (", ..." if len(gpus) > 4 else "")
            raise UserError(f"{name} holds {len(gpus)} GPUs ({few}); a GPU given as "
                            f"a file path must be the file's only entry (copy the GPU you "
                            f"mean into a file of its own)")
        return next(iter(gpus.values()))
    raise unknown_gpu(name)


def unknown_gpu(name: object) -> UserError:
    """The error for a GPU name neither the catalog nor a file path: the catalog's names,
    and that a GPU file's path is taken too.

    Parameters
    ----------
    name : object
        What was given for a GPU.

    Returns
    -------
    UserError
        The error, for the caller to raise.

    Examples
    --------
    >>> str(unknown_gpu("MI300X")).endswith("; or the path of a GPU file (.toml or .json)")
    True
    """
    return UserError(f"unknown GPU {validate.describe(name)}{lookalike(name, catalog())}; "
                     f"known: {known(catalog())}; or the path of a GPU file (.toml or .json)")
