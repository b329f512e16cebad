"""The failure and repair catalog (``netmodel/data/failures.toml``) as objects, and the
units of time the reliability commands take.

:func:`catalog` reads the shipped file once; :meth:`Catalog.with_` returns a copy with a
user's overrides (the area share of the GPU rate, local or vendor repair, a class's rate or
repair time, detection, warm-up, where weights load from). :meth:`Catalog.rates` turns it
into a rate per part per second for one GPU type: the GPU's rate is the reference GPU's
(H100, where it was observed) split into the part that grows with silicon, scaled by the
GPU's SMs (die) and HBM capacity (stacks), and the part that comes once per package.

>>> c = catalog()
>>> r = c.rates("Lite")
>>> round(r["gpu-die"] * 3600 / 1.26e-5, 4), round(r["gpu-package"] * 3600 / 1.26e-5, 3)
(0.1595, 0.362)
>>> round(c.with_(area_share=0.914).rates("H100-SXM")["gpu-die"] * 3600, 10)
1.15164e-05
>>> parse_duration("1y") / 3600, parse_duration("90min")
(8766.0, 5400.0)
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from compute.errors import UserError, known, lookalike
from compute.hardware import get_gpu, spec_ranges
from compute.units import SECONDS_PER_YEAR, scaled, split_number
from compute.validate import (
    MAX_WHOLE,
    ZeroAllowed,
    choice,
    describe,
    is_finite,
    is_whole,
    not_below_smallest,
    number,
)
from netmodel.study.choice_names import LOAD_SOURCES, REPAIRS
from topologies.enclosures import hosts
from topologies.failure_domains import CLASSES, GPU_CLASSES

if TYPE_CHECKING:
    import networkx as nx

    from compute.hardware import GpuSpec

__all__ = ["LOAD_SOURCES", "REPAIRS", "Catalog", "ClassData", "catalog", "check_class",
           "duration_text", "parse_duration", "percent"]

#: LOAD_SOURCES: where a spare loads its weight shard from; REPAIRS: which repair time
#: applies (a local pool of parts, or the vendor's RMA): :mod:`netmodel.study.choice_names`
HOUR = 3600.0
#: Seconds per unit of :func:`parse_duration` (a year is 365.25 days).
_DURATION_UNITS = {"": 1.0, "s": 1.0, "min": 60.0, "h": HOUR, "d": 24 * HOUR, "w": 168 * HOUR,
                   "y": SECONDS_PER_YEAR}


def parse_duration(text: str | float, what: str = "duration", *, allow_zero: bool = False,
                   rule: str | None = None) -> float:
    """Seconds from ``'1y'``, ``'30d'``, ``'2w'``, ``'24h'``, ``'90min'``, ``'30s'`` or a
    number of seconds (a year is 365.25 days). ``rule``: what a refusal of a value that is
    no finite number above 0 (at least 0 with ``allow_zero``) says is allowed, where the
    caller holds a range (``a duration from 1 h to 100 y``).

    >>> parse_duration("0")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: duration must be a finite number > 0, got '0'
    >>> parse_duration("1e-320s", "detection", allow_zero=True)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: detection '1e-320s' is below the smallest number netmodel reads (2.225e-308); detection must be a finite number >= 0
    """
    if isinstance(text, bool):
        raise UserError(f"{what} must be a number with a unit, got {text!r}")
    if isinstance(text, int | float):
        v = _finite(text)   # an integer past a float's range (10**400) overflowed float()
        value = math.nan if v is None else v
    else:
        split = split_number(str(text), what)   # a unit in any case: 1Y, 90MIN
        if split is None or split[1].lower() not in _DURATION_UNITS:
            raise UserError(f"{what} {str(text)!r} is not a duration (a number with one of "
                            f"the units {', '.join(u for u in _DURATION_UNITS if u)})")
        value = scaled(split[0], _DURATION_UNITS[split[1].lower()])  # 1.1h == 66min
        if allow_zero:   # '1e-320s' is no time netmodel reads: 0 is written 0
            not_below_smallest(what, text, split[0], value,
                               allowed=ZeroAllowed(rule or "a finite number >= 0"))
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        rule = rule or f"a finite number {'>= 0' if allow_zero else '> 0'}"
        raise UserError(f"{what} must be {rule}, got {describe(text)}")
    return value


def duration_text(seconds: float) -> str:
    """A time in the largest of :func:`parse_duration`'s y, d, h, min it fills at least
    once, else s (a horizon of one second read '3.17e-08 y').

    >>> duration_text(SECONDS_PER_YEAR), duration_text(30 * 86400), duration_text(1.0)
    ('1 y', '30 d', '1 s')
    >>> duration_text(5400.0)
    '1.5 h'
    """
    for unit in ("y", "d", "h", "min"):
        size = _DURATION_UNITS[unit]
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def percent(share: float) -> str:
    """A share as a percentage of up to 4 significant digits (a threshold of 99.9% is not
    rounded to '100%').

    >>> percent(0.99), percent(0.999), percent(0.005), percent(1 - 0.999)
    ('99%', '99.9%', '0.5%', '0.1%')
    """
    return f"{100 * share:.4g}%"


def check_class(name: str, also: tuple[str, ...] = ()) -> str:
    """``name`` if it is a component class (:data:`~topologies.failure_domains.CLASSES`)
    or one of the names ``also`` taken besides them (listed first when refused)."""
    if name not in (*also, *CLASSES):
        raise UserError(f"unknown component class {name!r}"
                        f"{lookalike(name, (*also, *CLASSES))}; known: "
                        f"{known((*also, *CLASSES))}")
    return name


#: Largest failure rate of one part taken (per hour): once an hour, 10^4-10^5 times the
#: catalog's rates; a part that fails more often is never up.
MAX_RATE_PER_HOUR = 1.0
#: Longest repair, detection or warm-up time taken (s): a century, the longest horizon
#: the availability model simulates.
MAX_TIME_S = 100 * SECONDS_PER_YEAR
#: Highest storage bandwidth of a host its spares load their shards from (bytes/s): 1 PB/s, a bound on
#: input (an absurd value is refused), not a published figure; the CLI states it with the
#: 1 MB/s floor.
MAX_STORAGE_BANDWIDTH = 1e15


def _finite(value) -> float | None:
    """``value`` as a float if it is a finite real number (not a bool; numpy's too,
    :func:`compute.validate.is_finite`) within a float's range, else None."""
    if not is_finite(value):
        return None
    try:
        v = float(value)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def _rate(what: str, value, high: float = MAX_RATE_PER_HOUR, unit: str = " per hour") -> float:
    v = _finite(value)
    if v is None or not 0 <= v <= high:
        raise UserError(f"{what} must be a number from 0 to {high:g}{unit}, got "
                        f"{describe(value)}")
    return v


def _time(what: str, value) -> float:
    v = _finite(value)
    if v is None or not 0 <= v <= MAX_TIME_S:
        raise UserError(f"{what} must be a number of seconds from 0 to {MAX_TIME_S:.4g} (a "
                        f"century), got {describe(value)}")
    return v


@dataclass(frozen=True)
class ClassData:
    """One component class: rate per part (per hour, as written; None for the two GPU
    classes, whose rates come from the GPU split), repair times (s) and sources."""

    name: str
    description: str
    per: str
    rate_per_hour: float | None
    rate_range: tuple | None
    source: str
    confidence: str
    repair_local_s: float
    repair_vendor_s: float
    repair_source: str


@dataclass(frozen=True)
class Catalog:
    """The catalog with any overrides (see the module doc). Times in seconds."""

    classes: dict
    reference_gpu: str
    gpu_rate_per_hour: float
    area_share: float
    area_share_range: tuple
    hbm_share: float
    gpu_source: str
    detection_s: float
    warmup_s: float
    load_from: str
    host_storage_bandwidth: float   #: bytes/s of a host's storage ports, shared by its GPUs
    host_sms: int
    host_gpus: int = 8
    repair: str = "local"
    sources: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        """One made in code (``dataclasses.replace`` of :func:`catalog`) is checked as the
        file's is: its numbers in their ranges, its choices among theirs (a NaN
        ``host_sms`` raised ValueError from ``round`` where a host was sized, text
        TypeError, ``host_gpus=0`` made hosts of no GPU)."""
        def put(key: str, value: object) -> None:
            object.__setattr__(self, key, value)

        for key in ("host_sms", "host_gpus"):
            put(key, number("Catalog", key, getattr(self, key), minimum=1, maximum=MAX_WHOLE,
                            integer=True))
        put("gpu_rate_per_hour", _rate("Catalog: gpu_rate_per_hour", self.gpu_rate_per_hour))
        for key in ("detection_s", "warmup_s"):
            put(key, _time(f"Catalog: {key}", getattr(self, key)))
        put("host_storage_bandwidth", _rate("Catalog: host_storage_bandwidth",
                                            self.host_storage_bandwidth,
                                            high=MAX_STORAGE_BANDWIDTH, unit=" bytes/s"))
        hbm = _finite(self.hbm_share)
        if hbm is None or not 0 <= hbm <= 1:
            raise UserError(f"Catalog: hbm_share must be a number from 0 to 1, got "
                            f"{describe(self.hbm_share)}")
        put("hbm_share", hbm)
        area = _finite(self.area_share)
        if area is None or not hbm <= area <= 1:
            raise UserError(f"Catalog: area_share must be {self.area_share_allowed()}, got "
                            f"{describe(self.area_share)}")
        put("area_share", area)
        for key, allowed in (("repair", REPAIRS), ("load_from", LOAD_SOURCES)):
            put(key, choice("Catalog", key, getattr(self, key), allowed))

    def with_(self, *, gpu_rate_per_hour: float | None = None,
              area_share: float | None = None, repair: str | None = None,
              rates: dict | None = None, repair_hours: dict | None = None,
              detection_s: float | None = None, warmup_s: float | None = None,
              load_from: str | None = None, host_storage_bandwidth: float | None = None
              ) -> Catalog:
        """A copy with overrides: ``gpu_rate_per_hour`` is the reference GPU's whole rate
        (before the die/package split); ``rates`` and ``repair_hours`` map a class to a
        rate per part per hour or a repair time in hours (for the chosen ``repair``)."""
        out = self
        if gpu_rate_per_hour is not None:
            out = replace(out, gpu_rate_per_hour=_rate("gpu_rate_per_hour", gpu_rate_per_hour))
        if area_share is not None:
            a = _finite(area_share)
            if a is None or not self.hbm_share <= a <= 1:
                raise UserError(f"area_share must be {self.area_share_allowed()}, got "
                                f"{area_share!r}")
            out = replace(out, area_share=a)
        if repair is not None:
            if repair not in REPAIRS:
                raise UserError(f"repair {repair!r} is not allowed; allowed: {known(REPAIRS)}")
            out = replace(out, repair=repair)
        for param, table, example in (("rates", rates, "{'nic': 1e-06} per part per hour"),
                                      ("repair_hours", repair_hours, "{'nic': 24} hours")):
            if table is not None and not isinstance(table, Mapping):   # .items() raised
                raise UserError(f"{param} must be a table of failure class to value (e.g. "
                                f"{example}), got {describe(table)}")
        classes = dict(out.classes)
        for name, value in (rates or {}).items():
            check_class(name)
            if name in GPU_CLASSES:
                raise UserError(f"the rate of {name!r} comes from the GPU split; set "
                                f"gpu_rate_per_hour (the reference GPU's whole rate; 0 turns "
                                f"GPU failures off) or area_share instead")
            classes[name] = replace(classes[name], rate_per_hour=_rate(f"rate of {name}", value),
                                    source="set by the user", confidence="user")
        for name, hours in (repair_hours or {}).items():
            check_class(name)
            h = _finite(hours)   # hours past a float's range: refused by _time, not overflowed
            s = _time(f"repair time of {name}", hours if h is None else h * HOUR)
            key = "repair_local_s" if out.repair == "local" else "repair_vendor_s"
            classes[name] = replace(classes[name], repair_source="set by the user", **{key: s})
        out = replace(out, classes=classes)
        if detection_s is not None:
            out = replace(out, detection_s=_time("detection time", detection_s))
        if warmup_s is not None:
            out = replace(out, warmup_s=_time("warm-up time", warmup_s))
        if load_from is not None:
            if load_from not in LOAD_SOURCES:
                raise UserError(f"load_from {load_from!r} is not allowed; allowed: "
                                f"{known(LOAD_SOURCES)}")
            out = replace(out, load_from=load_from)
        if host_storage_bandwidth is not None:
            bw = _rate("storage bandwidth", host_storage_bandwidth, high=MAX_STORAGE_BANDWIDTH,
                       unit=" bytes/s")
            floor = spec_ranges()["scaleup_bandwidth"][0]   # the CLI's floor too
            if bw < floor:
                raise UserError(f"host_storage_bandwidth must be >= {floor:g} bytes/s "
                                f"({floor / 1e6:g} MB/s, the least a GPU's bandwidth may be: "
                                f"compute/data/limits.toml), got "
                                f"{describe(host_storage_bandwidth)}")
            if out.load_from != "storage":
                raise UserError(f"host_storage_bandwidth applies only with load_from "
                                f"'storage', not {out.load_from!r} (spares load from a peer "
                                f"over the fabric)")
            out = replace(out, host_storage_bandwidth=bw)
        return out

    def area_share_allowed(self) -> str:
        """The ``area_share`` :meth:`with_` takes, in its refusal's words (0 is outside it).

        >>> catalog().area_share_allowed()
        'in [0.269, 1] (at least the HBM share of the GPU rate)'
        """
        return f"in [{self.hbm_share:g}, 1] (at least the HBM share of the GPU rate)"

    def rates(self, gpu: str | GpuSpec) -> dict[str, float]:
        """Rate per part per second of every class for GPU type ``gpu``."""
        gpu, ref = get_gpu(gpu), get_gpu(self.reference_gpu)
        base = self.gpu_rate_per_hour / HOUR
        die = base * (self.area_share - self.hbm_share) * gpu.sms / ref.sms
        hbm = base * self.hbm_share * gpu.hbm_capacity / ref.hbm_capacity
        out = {}
        for name, c in self.classes.items():
            if name == "gpu-die":
                out[name] = die + hbm
            elif name == "gpu-package":
                out[name] = base * (1 - self.area_share)
            else:
                out[name] = c.rate_per_hour / HOUR
        return out

    def repair_s(self, name: str) -> float:
        """Repair time of class ``name`` (s) under the chosen ``repair``."""
        c = self.classes[check_class(name)]
        return c.repair_local_s if self.repair == "local" else c.repair_vendor_s

    def load_bandwidth(self, gpu: str | GpuSpec, host_gpus: int) -> float:
        """Line rate a spare loads its weight shard at: the GPU's scale-up bandwidth
        (``load_from = "fabric"``, from a peer; :attr:`RecoveryTimes.load_bandwidth
        <netmodel.study.reliability_timings.RecoveryTimes.load_bandwidth>` takes the payload share
        of it the collective model applies) or its share of the host's storage bandwidth,
        shared by the ``host_gpus`` GPUs of its host (:meth:`host_size`).

        >>> c = catalog().with_(load_from="storage")
        >>> c.load_bandwidth("H100-SXM", 8) / 1e9, c.load_bandwidth("Lite", 32) / 1e9
        (12.5, 3.125)
        """
        if self.load_from == "fabric":
            return get_gpu(gpu).scaleup_bandwidth
        return self.host_storage_bandwidth / _whole("host_gpus", host_gpus)

    def gpus_per_host(self, gpu: str | GpuSpec) -> int:
        """GPUs per host where the fabric has no server labels: ``host_gpus`` (8, as on
        every DGX/HGX baseboard: A100, H100, H200, B200) for a full-size GPU, one with
        more than half the reference GPU's SMs; a smaller die (a Lite) takes the silicon
        of an 8-GPU host of the reference GPU, ``host_sms`` over its SMs.

        >>> c = catalog()
        >>> [c.gpus_per_host(g) for g in ("H100-SXM", "A100-SXM-80GB", "B200-HGX", "Lite")]
        [8, 8, 8, 32]
        """
        spec, ref = get_gpu(gpu), get_gpu(self.reference_gpu)
        if 2 * spec.sms > ref.sms:
            return self.host_gpus
        return max(1, round(self.host_sms / spec.sms))

    def host_size(self, graph: nx.Graph, gpu: str | GpuSpec) -> int:
        """GPUs of a host of fabric ``graph`` of GPU ``gpu``: the largest ``server`` label's
        GPUs where every GPU carries one (:func:`topologies.enclosures.hosts`), else
        :meth:`gpus_per_host`. The most GPUs a spare's host shares its storage with.

        >>> from topologies.specs import build
        >>> c = catalog()
        >>> c.host_size(build("rail-optimized:domains=2"), "H100-SXM")
        8
        >>> c.host_size(build("flat:n=6,planes=2,radix=8"), "Lite")
        32
        """
        labelled = hosts(graph)
        return max(map(len, labelled)) if labelled else self.gpus_per_host(gpu)

    def to_dict(self) -> dict:
        """The catalog as a JSON-ready dict (rates per hour, times in seconds)."""
        return {
            "reference_gpu": self.reference_gpu, "gpu_rate_per_hour": self.gpu_rate_per_hour,
            "area_share": self.area_share, "area_share_range": list(self.area_share_range),
            "hbm_share": self.hbm_share, "gpu_source": self.gpu_source, "repair": self.repair,
            "detection_s": self.detection_s, "warmup_s": self.warmup_s,
            "load_from": self.load_from,
            "host_storage_bandwidth": self.host_storage_bandwidth,
            "host_sms": self.host_sms, "host_gpus": self.host_gpus,
            "sources": dict(self.sources),
            "classes": {n: {"description": c.description, "per": c.per,
                            "rate_per_hour": c.rate_per_hour,
                            "rate_range_per_hour": list(c.rate_range) if c.rate_range else None,
                            "source": c.source, "confidence": c.confidence,
                            "repair_s": c.repair_local_s if self.repair == "local"
                            else c.repair_vendor_s, "repair_source": c.repair_source}
                        for n, c in self.classes.items()},
        }


def _whole(what: str, value) -> int:
    if not is_whole(value) or value < 1:   # numpy's too, as Python's int
        raise UserError(f"{what} must be a whole number >= 1, got {describe(value)}")
    return int(value)


def _range(where: str, rng, rate: float | None) -> tuple[float, float] | None:
    """A class's ``range_per_hour``: two rates, low <= high, holding the default rate (a
    default outside its own plausible range is a defect of the file); None where absent."""
    if rng is None:
        return None
    if not isinstance(rng, list) or len(rng) != 2:
        raise UserError(f"{where} range_per_hour must be [low, high], got {describe(rng)}")
    lo, hi = (_rate(f"{where} range_per_hour", v) for v in rng)
    if lo > hi:
        raise UserError(f"{where} range_per_hour must be [low, high] with low <= high, got "
                        f"[{lo:g}, {hi:g}]")
    if rate is not None and not lo <= rate <= hi:
        raise UserError(f"{where} rate_per_hour {rate:g} lies outside its range_per_hour "
                        f"[{lo:g}, {hi:g}]")
    return lo, hi


def _need(where: str, table: dict, key: str):
    if key not in table:
        raise UserError(f"{where} lacks {key!r}")
    return table[key]


def _parse(data: dict, where: str) -> Catalog:
    gpu = _need(where, data, "gpu")
    rec = _need(where, data, "recovery")
    ref = _need(where, data, "reference")
    classes = {}
    table = _need(where, data, "class")
    for name in CLASSES:
        c = _need(f"{where} [class]", table, name)
        w = f"{where} [class.{name}]"
        rate = None if "rate_from" in c else _rate(f"{w} rate_per_hour",
                                                   _need(w, c, "rate_per_hour"))
        rng = _range(w, c.get("range_per_hour"), rate)
        classes[name] = ClassData(
            name=name, description=_need(w, c, "description"), per=_need(w, c, "per"),
            rate_per_hour=rate, rate_range=rng,
            source=c.get("source", gpu.get("source", "")),
            confidence=c.get("confidence", gpu.get("confidence", "")),
            repair_local_s=_time(f"{w} repair_local_h", _need(w, c, "repair_local_h") * HOUR),
            repair_vendor_s=_time(f"{w} repair_vendor_h", _need(w, c, "repair_vendor_h") * HOUR),
            repair_source=_need(w, c, "repair_source"))
    extra = sorted(set(table) - set(CLASSES))
    if extra:
        raise UserError(f"{where} has unknown class(es) {', '.join(extra)}")
    if rec["load_from"] not in LOAD_SOURCES:
        raise UserError(f"{where} load_from must be one of {known(LOAD_SOURCES)}")
    return Catalog(
        classes=classes, reference_gpu=get_gpu(ref["gpu"]).name,
        gpu_rate_per_hour=_rate(f"{where} [gpu] rate_per_hour", gpu["rate_per_hour"]),
        area_share=float(gpu["area_share"]),
        area_share_range=(float(gpu["area_share_low"]), float(gpu["area_share_high"])),
        hbm_share=float(gpu["hbm_share"]), gpu_source=gpu["source"],
        detection_s=_time("detection_s", rec["detection_s"]),
        warmup_s=_time("warmup_s", rec["warmup_s"]), load_from=rec["load_from"],
        host_storage_bandwidth=float(_need(where, rec, "storage_GBps_per_host")) * 1e9,
        host_sms=int(rec["host_sms"]), host_gpus=_whole(f"{where} host_gpus",
                                                        _need(where, rec, "host_gpus")),
        sources={"reference": ref["source"], "gpu_split": gpu["reasoning"],
                 "detection": rec["detection_source"], "warmup": rec["warmup_source"],
                 "restart": rec.get("restart_source", ""),
                 "storage": rec["storage_source"], "host": rec["host_source"],
                 "host_gpus": _need(where, rec, "host_gpus_source")})


@cache
def catalog() -> Catalog:
    """The shipped catalog (``netmodel/data/failures.toml``), read once."""
    text = resources.files("netmodel").joinpath("data/failures.toml").read_text(encoding="utf-8")
    return _parse(tomllib.loads(text), "netmodel/data/failures.toml")
