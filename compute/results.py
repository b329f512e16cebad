"""Results of the roofline model: frozen dataclasses that export to dict, JSON and CSV.

* :class:`StageResult`: one stage of a step (per GPU, per occurrence): FLOPs, HBM bytes,
  collective bytes, the compute, memory and network times and which of them bounds it.
* :class:`MemoryFit`: HBM needed per GPU against what is usable.
* :class:`InferenceResult`: one configuration (model, GPU, phase, TP degree and the other
  dimensions of :class:`~compute.parallel.Parallelism`, batch): the
  stages, the step latency (TTFT or TBT), tokens/s and tokens/s/SM, memory fit, SLO verdict.
* :class:`FrontPoint` and :class:`SearchResult`: the outcome of the SLO search.

Units: seconds, bytes, FLOP; tokens/s; tokens/s/SM divides by every SM of the instance.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from compute.phases import latency_name

__all__ = [
    "FRONT_CSV_FIELDS",
    "RESOURCES",
    "FrontPoint",
    "InferenceResult",
    "MemoryFit",
    "SearchResult",
    "StageResult",
    "time_split",
]

#: The three resources a stage can be bound by.
RESOURCES = ("compute", "memory", "network")

STAGE_CSV_FIELDS = ("stage", "count", "flops", "hbm_bytes", "collective", "collective_bytes",
                    "compute_time_s", "memory_time_s", "network_time_s", "time_s",
                    "total_time_s", "bound")


_T = TypeVar("_T")


def unchecked(cls: type[_T], values: dict) -> _T:
    """An instance of the frozen dataclass ``cls`` (one without ``__post_init__``) from
    ``values`` (every field without a default, any with one), built without the generated
    ``__init__``: equal to ``cls(**values)``, a few times faster, for the roofline's
    one-configuration path. ``values`` becomes the instance's ``__dict__`` (the caller
    hands over a dict of its own) when it holds every default, else a copy with the
    defaults it lacks.

    >>> s = unchecked(MemoryFit, dict(weights=1.0, kv_cache=2.0, activations=0.0,
    ...                               capacity=4.0, reserve_fraction=0.0))
    >>> s == MemoryFit(1.0, 2.0, 0.0, 4.0, 0.0), s.reason, s.fits
    (True, '', True)
    """
    obj = _new(cls)
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        defaults = field_defaults(cls)
    if defaults and not values.keys() >= defaults.keys():
        values = {**defaults, **values}
    _set(obj, "__dict__", values)
    return obj


_new, _set = object.__new__, object.__setattr__
_DEFAULTS: dict = {}


def field_defaults(cls) -> dict:
    """The dataclass ``cls``'s fields that have a default, ``{name: default}`` (worked out
    once per class; the dict is shared: copy it before changing it)."""
    hit = _DEFAULTS.get(cls)
    if hit is None:
        from dataclasses import MISSING, fields

        hit = _DEFAULTS[cls] = {f.name: f.default for f in fields(cls)
                                if f.default is not MISSING}
    return hit


def _num(x: float) -> float | None:
    """JSON-safe float (NaN and inf become null)."""
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class StageResult:
    """One stage of a step on one GPU. ``count`` is how often it occurs per step (the
    number of layers for per-layer stages); the other figures are per occurrence."""

    name: str
    count: int
    flops: float
    hbm_bytes: float
    collective: str          #: collective operation ("" for none)
    collective_bytes: float  #: message size, nccl-tests convention
    compute_time: float
    memory_time: float
    network_time: float
    time: float              #: max (overlap mode) or sum (serial mode) of the three
    bound: str               #: "compute", "memory" or "network"

    @property
    def total_time(self) -> float:
        """Seconds this stage contributes to the step (``count x time``)."""
        return self.count * self.time

    def to_dict(self) -> dict:
        """JSON-ready dict (the ``stages`` entries of ``netmodel infer --json``)."""
        return {
            "stage": self.name, "count": self.count, "flops": self.flops,
            "hbm_bytes": self.hbm_bytes, "collective": self.collective or None,
            "collective_bytes": self.collective_bytes, "compute_time_s": self.compute_time,
            "memory_time_s": self.memory_time, "network_time_s": self.network_time,
            "time_s": self.time, "total_time_s": self.total_time, "bound": self.bound,
        }


@dataclass(frozen=True)
class MemoryFit:
    """HBM per GPU (bytes): weights + KV cache + activation workspace against the capacity
    less a reserve fraction for the runtime."""

    weights: float
    kv_cache: float
    activations: float
    capacity: float
    reserve_fraction: float
    reason: str = ""  #: why it does not fit ("" when it does)

    @property
    def total(self) -> float:
        """Bytes needed per GPU."""
        return self.weights + self.kv_cache + self.activations

    @property
    def usable(self) -> float:
        """Bytes usable per GPU: capacity x (1 - reserve)."""
        return self.capacity * (1.0 - self.reserve_fraction)

    @property
    def fits(self) -> bool:
        """True when what is needed fits in what is usable."""
        return self.total <= self.usable

    def to_dict(self) -> dict:
        """JSON-ready dict (the ``memory`` entry of ``netmodel infer --json``)."""
        return {"weights_bytes": self.weights, "kv_cache_bytes": self.kv_cache,
                "activations_bytes": self.activations, "total_bytes": self.total,
                "capacity_bytes": self.capacity, "reserve_fraction": self.reserve_fraction,
                "usable_bytes": self.usable, "fits": self.fits, "reason": self.reason or None}


def time_split(stages: Iterable[StageResult], mode: str = "overlap") -> dict[str, float]:
    """A step's time split into compute, memory and network seconds that add up to it.

    In ``overlap`` mode each stage's time is charged to the resource that bounds it; in
    ``serial`` mode each resource's own time is charged to it.

    >>> s = StageResult("x", 2, 0, 0, "", 0, 3.0, 1.0, 0.0, 3.0, "compute")
    >>> time_split([s])
    {'compute': 6.0, 'memory': 0.0, 'network': 0.0}
    >>> time_split([StageResult("x", 2, 0, 0, "", 0, 3.0, 1.0, 0.0, 4.0, "compute")], "serial")
    {'compute': 6.0, 'memory': 2.0, 'network': 0.0}
    """
    out = dict.fromkeys(RESOURCES, 0.0)
    for s in stages:
        if mode == "serial":
            out["compute"] += s.count * s.compute_time
            out["memory"] += s.count * s.memory_time
            out["network"] += s.count * s.network_time
        else:
            out[s.bound] += s.total_time
    return out


#: Fields of :class:`InferenceResult` that may be built when first read.
_LAZY_FIELDS = ("stages", "memory")


@dataclass(frozen=True)
class InferenceResult:
    """One configuration evaluated: a step of ``phase`` for ``batch`` sequences on an
    instance of ``tp x pp`` GPUs (``tp`` per pipeline stage; ``ep`` and ``attention_dp``
    groups within a stage, see :mod:`compute.parallel`). Per-GPU figures are in ``stages``
    (with a pipeline: one micro-batch's pass, per GPU of a stage).

    :func:`compute.evaluate_one.evaluate` may leave ``stages`` and ``memory`` to be built when
    first read (the same values, built once); pickle and copy build them first."""

    model: str
    gpu: str
    phase: str
    tp: int
    batch: int
    prompt_tokens: int
    context_tokens: int
    mode: str
    latency: float           #: step time: TTFT (prefill) or TBT (decode), seconds
    tokens_per_step: float   #: prompt tokens (prefill) or generated tokens (decode)
    sms: int                 #: SMs of the whole instance (tp x pp x SMs per GPU)
    stages: tuple[StageResult, ...]
    memory: MemoryFit
    latency_limit: float = math.inf  #: the SLO (seconds)
    pp: int = 1              #: pipeline stages (the instance has tp x pp GPUs)
    ep: int = 1              #: expert-parallel groups per stage
    attention_dp: int = 1    #: attention data-parallel groups per stage
    micro_batch: int = 0     #: sequences per pipeline micro-batch (0: the whole batch)
    expert_skew: float = 1.0  #: busiest EP group's share of routed tokens over the mean
    #: the engine profile of the calibrated mode ("" for the roofline)
    profile: str = ""
    overhead: float = 0.0    #: with a profile: the step's fixed overheads, in ``latency``
    #: seconds per batch of an instance serving a stream of batches, where that differs
    #: from ``latency`` (a pipelined prefill: ``k x period``, ``k`` its micro-batches of one
    #: prompt an attention group, without the fill and
    #: drain); 0: the latency
    interval: float = 0.0
    #: redundant routed-expert copies the stage's EP groups hold, ``ep x ceil(experts /
    #: ep) - experts`` (:func:`compute.parallel.expert_slots`; 0: EP divides the experts)
    redundant_experts: int = 0
    #: with two-batch overlap allowed (:class:`~compute.roofline_options.RooflineOptions`
    #: ``two_batch_overlap``): seconds of the serial step the two micro-batches hide, 0
    #: where the serial step is the faster (``latency`` is the step taken; ``stages`` are
    #: the serial step's); None without the option
    two_batch_hidden: float | None = None
    #: the TP degree of an MoE model's dense MLP layers where it is not the stage's
    #: (:class:`~compute.roofline_options.RooflineOptions` ``dense_mlp_tp`` on a row with attention
    #: DP: 1, data-parallel); None: the stage's TP
    dense_mlp_tp: int | None = None
    #: decode with multi-token prediction (:class:`~compute.roofline_options.RooflineOptions`
    #: ``mtp_tokens``): draft tokens a step (0: off), the tokens a sequence emits a step on
    #: average (``tokens_per_step`` is ``batch`` times it) and the seconds of the step's
    #: draft passes of the MTP module (in ``latency``, not in ``stages``, which are the
    #: verification pass's)
    mtp_tokens: int = 0
    mtp_expected: float = 1.0
    mtp_time: float = 0.0
    #: costed with each per-layer all-reduce hidden behind the GEMM producing its input
    #: (:class:`~compute.roofline_options.RooflineOptions` ``overlap_collectives``); False:
    #: each collective a stage of its own
    overlap_collectives: bool = False
    #: an expert-parallel MoE model's exchange of its MoE layers' tokens, the cheapest of
    #: what engines run (:data:`compute.moe_exchange.EXCHANGES`: ``all-to-all``,
    #: ``all-reduce``, ``vllm-gather``, ``sglang-dp-gather``); "" without expert parallelism
    moe_exchange: str = ""

    def __getattr__(self, name: str):
        # Only for what normal lookup misses: a field of _LAZY_FIELDS that
        # compute.evaluate_one's one-configuration path builds when first read (it stores
        # (builder, *arguments) under "_lazy_" + name instead); built once, then an
        # ordinary field.
        if name in _LAZY_FIELDS:
            d = self.__dict__
            build = d.get("_lazy_" + name)
            if build is not None:
                value = d[name] = build[0](*build[1:])
                d.pop("_lazy_" + name, None)
                return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict:
        """The fields (lazy ones built first), for pickle and copy."""
        for name in _LAZY_FIELDS:
            if "_lazy_" + name in self.__dict__:
                getattr(self, name)
        return dict(self.__dict__)

    @property
    def gpus(self) -> int:
        """GPUs of the instance (``tp x pp``)."""
        return self.tp * self.pp

    @property
    def latency_name(self) -> str:
        """``'ttft'`` or ``'tbt'``."""
        return latency_name(self.phase)

    @property
    def tokens_per_s(self) -> float:
        """Tokens per second of the instance serving a stream of batches (one every
        ``interval``, else every ``latency``)."""
        return self.tokens_per_step / (self.interval or self.latency)

    @property
    def tokens_per_s_per_sm(self) -> float:
        """Tokens per second divided by every SM of the instance."""
        return self.tokens_per_s / self.sms

    @property
    def tpot(self) -> float:
        """Time per output token of a decode step: the step's latency, or with MTP the step
        over the tokens a sequence emits on average (seconds)."""
        return self.latency / self.mtp_expected if self.mtp_tokens else self.latency

    @property
    def meets_slo(self) -> bool:
        """True when the step's latency (with MTP: :attr:`tpot`) is within the SLO."""
        return (self.tpot if self.mtp_tokens else self.latency) <= self.latency_limit

    @property
    def feasible(self) -> bool:
        """Fits in memory and meets the SLO."""
        return self.memory.fits and self.meets_slo

    @property
    def reason(self) -> str:
        """Why the configuration is infeasible ("" when it is feasible)."""
        if not self.memory.fits:
            return self.memory.reason
        if not self.meets_slo:
            what = (f"TPOT {self.tpot * 1e3:.4g} ms (MTP)" if self.mtp_tokens else
                    f"{self.latency_name.upper()} {self.latency * 1e3:.4g} ms")
            return f"{what} exceeds the SLO of {self.latency_limit * 1e3:.4g} ms"
        return ""

    def time_split(self) -> dict[str, float]:
        """The step's time split into compute, memory and network seconds (sums to
        ``latency``); see :func:`time_split`. With a profile, also ``overhead``."""
        out = time_split(self.stages, self.mode)
        if self.profile:
            out["overhead"] = self.overhead
        if self.two_batch_hidden is not None:   # what two-batch overlap hides (<= 0)
            out["two_batch_hidden"] = -self.two_batch_hidden
        if self.mtp_tokens:   # the MTP module's draft passes
            out["mtp_draft"] = self.mtp_time
        return out

    def resource_times(self) -> dict[str, float]:
        """Each resource's own busy time over the step (seconds; these overlap in
        ``overlap`` mode, so they may add up to more than ``latency``)."""
        return time_split(self.stages, "serial")

    def to_dict(self) -> dict:
        """JSON-ready dict: the shape of ``netmodel infer --json`` (documented in docs/output-formats.md)."""
        return {
            "model": self.model, "gpu": self.gpu, "phase": self.phase, "tp": self.tp,
            "pp": self.pp, "ep": self.ep, "attention_dp": self.attention_dp,
            "gpus": self.gpus, "batch": self.batch,
            "micro_batch": self.micro_batch or self.batch,
            "expert_skew": self.expert_skew, "prompt_tokens": self.prompt_tokens,
            "context_tokens": self.context_tokens, "mode": self.mode,
            "latency_name": self.latency_name, "latency_s": self.latency,
            "latency_limit_s": _num(self.latency_limit), "meets_slo": self.meets_slo,
            "fits_memory": self.memory.fits, "feasible": self.feasible,
            "reason": self.reason or None,
            "tokens_per_step": self.tokens_per_step,
            # the seconds between batches tokens_per_s rests on: k x period (k micro-batches) for a
            # pipelined prefill served as a stream of batches, else the latency
            "interval_s": self.interval or self.latency, "tokens_per_s": self.tokens_per_s,
            "sms": self.sms, "tokens_per_s_per_sm": self.tokens_per_s_per_sm,
            "time_split_s": self.time_split(), "resource_times_s": self.resource_times(),
            "memory": self.memory.to_dict(),
            "stages": [s.to_dict() for s in self.stages],
            **({"profile": self.profile, "overhead_s": self.overhead} if self.profile else {}),
            **({"overlap_collectives": True} if self.overlap_collectives else {}),
            **({"redundant_experts": self.redundant_experts} if self.redundant_experts else {}),
            **({"moe_exchange": self.moe_exchange} if self.moe_exchange else {}),
            **({} if self.two_batch_hidden is None else
               {"two_batch_overlap": self.two_batch_summary()}),
            **({} if self.dense_mlp_tp is None else {"dense_mlp_tp": self.dense_mlp_tp}),
            **({} if not self.mtp_tokens else
               {"mtp": {"draft_tokens": self.mtp_tokens, "expected_tokens": self.mtp_expected,
                        "tpot_s": self.tpot, "draft_time_s": self.mtp_time}}),
        }

    def two_batch_summary(self) -> dict | None:
        """With two-batch overlap allowed, ``{used, serial_latency_s, hidden_s}`` (seconds):
        whether the overlapped step was taken, the serial step and what the overlap hid;
        None without the option (``to_dict``'s and ``serve``'s pools' ``two_batch_overlap``)."""
        if self.two_batch_hidden is None:
            return None
        return {"used": self.two_batch_hidden > 0,
                "serial_latency_s": self.latency + self.two_batch_hidden,
                "hidden_s": self.two_batch_hidden}

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def stage_rows(self) -> list[dict]:
        """One CSV row per stage (columns :data:`STAGE_CSV_FIELDS`)."""
        return [s.to_dict() for s in self.stages]

    def to_csv(self) -> str:
        """The per-stage breakdown as CSV text."""
        return rows_to_csv(self.stage_rows(), STAGE_CSV_FIELDS)


@dataclass(frozen=True)
class FrontPoint:
    """One feasible configuration on the search's front."""

    tp: int
    batch: int
    latency: float
    tokens_per_s: float
    tokens_per_s_per_sm: float
    pp: int = 1
    ep: int = 1
    attention_dp: int = 1

    def to_dict(self) -> dict:
        return {"tp": self.tp, "pp": self.pp, "ep": self.ep, "attention_dp": self.attention_dp,
                "batch": self.batch, "latency_s": self.latency,
                "tokens_per_s": self.tokens_per_s, "tokens_per_s_per_sm": self.tokens_per_s_per_sm}


#: Columns of :meth:`SearchResult.front_csv` (from :meth:`FrontPoint.to_dict`).
FRONT_CSV_FIELDS = ("tp", "pp", "ep", "attention_dp", "batch", "latency_s", "tokens_per_s",
                    "tokens_per_s_per_sm")


@dataclass(frozen=True, eq=False)
class SearchResult:
    """The SLO search for one model, GPU type and phase.

    ``best`` is the feasible configuration with the most tokens/s/SM (``None`` when none is
    feasible; ``reason`` then says why). ``front`` is the Pareto front of the feasible
    configurations (no other feasible one has both lower latency and more tokens/s/SM),
    by increasing latency. ``by_tp`` is the best feasible configuration of each TP degree.
    ``grid`` holds the whole evaluated grid (arrays) for callers that want more; cells
    that do not fit in memory carry no collective time there (NaN network time and
    latency: a search does not time what can never be feasible). ``configurations`` lists every configuration searched (``{"tp", "pp", "ep",
    "attention_dp"}``) and ``by_config`` the best feasible batch of each.
    """

    model: str
    gpu: str
    phase: str
    latency_limit: float
    tp_degrees: tuple[int, ...]
    max_batch: int
    evaluated: int          #: configurations evaluated (TP degrees x batches)
    fitting: int            #: of which fit in memory
    feasible: int           #: of which also meet the SLO
    best: InferenceResult | None
    front: tuple[FrontPoint, ...]
    by_tp: tuple[FrontPoint, ...]
    reason: str = ""
    grid: Any = field(default=None, repr=False)  #: a compute.roofline.Grid (None: dropped)
    configurations: tuple = ()
    by_config: tuple[FrontPoint, ...] = ()
    expert_skew: float = 1.0

    def to_dict(self, *, front: bool = True) -> dict:
        """JSON-ready dict: the shape of ``netmodel search --json`` (documented in docs/output-formats.md)."""
        d = {
            "model": self.model, "gpu": self.gpu, "phase": self.phase,
            "latency_name": latency_name(self.phase),
            "latency_limit_s": self.latency_limit, "tp_degrees": list(self.tp_degrees),
            "max_batch": self.max_batch, "evaluated": self.evaluated,
            "fitting": self.fitting, "feasible": self.feasible,
            "reason": self.reason or None,
            "best": self.best.to_dict() if self.best else None,
            "by_tp": [p.to_dict() for p in self.by_tp],
        }
        if any(c.get(k, 1) != 1 for c in self.configurations for k in ("pp", "ep",
                                                                        "attention_dp")):
            d["configurations"] = list(self.configurations)
            d["expert_skew"] = self.expert_skew
            d["by_config"] = [p.to_dict() for p in self.by_config]
        if front:
            d["front"] = [p.to_dict() for p in self.front]
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def front_csv(self) -> str:
        """The front as CSV (columns :data:`FRONT_CSV_FIELDS`)."""
        return rows_to_csv([p.to_dict() for p in self.front], FRONT_CSV_FIELDS)


def rows_to_csv(rows: Iterable[Mapping[str, object]], columns: Collection[str]) -> str:
    """CSV text with a header, from dicts (missing keys are empty; floats in full precision;
    a list or tuple its items joined by ``; ``).

    >>> print(rows_to_csv([{"a": 1, "b": 0.5, "c": ["x", "y"]}], ("a", "b", "c")), end="")
    a,b,c
    1,0.5,x; y
    """
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k)) for k in columns})
    return buf.getvalue()


def _cell(v: object) -> object:
    """A CSV cell's value: None empty, a list or tuple its items joined by ``; ``."""
    if v is None:
        return ""
    if isinstance(v, list | tuple):
        return "; ".join(str(x) for x in v)
    return v
