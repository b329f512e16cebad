"""One result row: the best configuration a search found, as the study, compare and sweep
report it.

:class:`BestRow` holds what every report says of a search's best configuration (TP
degree, batch, latency against its SLO, tokens/s and tokens/s/SM, the compute / memory /
network split of the step). Each report extends it with the fields that say *where* the
row comes from (a network label, a scenario, a sweep point) and its own extras. Columns
are the dataclass fields: the identifying fields (marked ``key``) first, then the rest in
declaration order, ``reason`` last. Adding a column is adding a field (and, where it is
computed, a line in the builder). A field made by :func:`when_set` (multi-token
prediction's) is a column of a result only where one of its rows sets it, so results
without it keep their columns.

>>> from compute.search import search
>>> r = search("Llama-3-8B", "H100-SXM", "decode", max_batch=64)
>>> row = BestRow.from_search(r)
>>> row.tp, row.latency_name, row.feasible
(1, 'tbt', True)
>>> BestRow.columns()[:4]
('model', 'gpu', 'phase', 'feasible')
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Self

from compute.errors import UserError
from compute.phases import latency_name
from compute.results import rows_to_csv

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from compute.model_spec import ModelSpec
    from compute.results import SearchResult

__all__ = ["BestRow", "FabricRow", "RowsResult", "batch_limit_note", "column", "distinct_gpus",
           "distinct_models", "gpu_difference", "group", "key", "mtp_note", "ratio_text", "when_set"]


_ATOMS = (float, int, str, bool, type(None))


def _plain(v: Any) -> Any:
    """``v`` as :func:`dataclasses.asdict` gives a field's value: containers copied,
    dataclasses turned into dicts; numbers, strings and None as they are (immutable, as
    ``asdict``'s deep copy leaves them)."""
    if isinstance(v, _ATOMS):
        return v
    if isinstance(v, dict):
        return type(v)((_plain(k), _plain(x)) for k, x in v.items())
    if isinstance(v, list | tuple) and not hasattr(v, "_fields"):
        return type(v)(_plain(x) for x in v)
    return asdict(v) if hasattr(type(v), "__dataclass_fields__") else copy.deepcopy(v)


def key(**kwargs: Any) -> Any:
    """A dataclass field that identifies a row (listed first among the columns)."""
    meta = {"key": True}
    return field(metadata=meta, **kwargs)


#: :meth:`BestRow.when_set_fields` by row class.
_WHEN_SET: dict[type, tuple[str, ...]] = {}
#: :meth:`FabricRow.group_fields` by (row class, group).
_GROUPS: dict[tuple[type, str], tuple[str, ...]] = {}


def when_set() -> Any:
    """An optional field (default None) that is a column of a result only where one of its
    rows sets it (:meth:`RowsResult.columns`, :meth:`RowsResult.to_dicts`); a row's own
    :meth:`BestRow.to_dict` has every field."""
    return field(default=None, metadata={"when_set": True})


def group(name: str) -> Any:
    """An optional dataclass field (default None) filled by one summary: the fields of a
    group are named as that summary's ``to_dict`` keys, so filling them is one call."""
    return field(default=None, metadata={"group": name})


@dataclass(frozen=True, kw_only=True)
class BestRow:
    """The best configuration of one model x GPU x phase (``None`` where none is feasible;
    ``reason`` then says why). ``compute_s + memory_s + network_s (+ overhead_s with an
    engine profile, + mtp_draft_s with multi-token prediction) == latency_s`` and
    ``network_share = network_s / latency_s``; with two-batch overlap ``network_s`` is the
    collectives' time the overlap leaves exposed."""

    model: str = key()
    gpu: str = key()
    phase: str = key()
    feasible: bool              #: whether any configuration fits and meets the SLO
    tp: int | None = None            #: tensor-parallel degree
    pp: int | None = None            #: pipeline stages
    ep: int | None = None            #: expert-parallel groups per stage
    attention_dp: int | None = None  #: attention data-parallel groups per stage
    instance_gpus: int | None = None  #: GPUs of the instance (tp x pp)
    batch: int | None = None         #: sequences per step of one instance
    latency_name: str           #: ``ttft`` (prefill) or ``tbt`` (decode; TPOT / ITL)
    latency_s: float | None = None   #: the step time, TTFT or TBT (s)
    latency_limit_s: float      #: the SLO (s)
    tokens_per_s: float | None = None  #: of one instance (of all, with every instance at once)
    tokens_per_s_per_sm: float | None = None  #: ``tokens_per_s`` over the SMs of its GPUs
    vs_baseline: float | None = None   #: tokens/s/SM over the baseline's (same model, phase)
    compute_s: float | None = None   #: step time charged to compute-bound stages (s)
    memory_s: float | None = None    #: ... to memory-bound stages (s)
    network_s: float | None = None   #: ... to collectives (s; with two-batch overlap, those it leaves exposed)
    network_share: float | None = None  #: ``network_s / latency_s``
    overhead_s: float | None = None   #: calibrated mode only: the profile's fixed overheads
    reason: str = ""                #: why nothing is feasible (empty when feasible)

    #: Fields listed last among the columns.
    LAST: ClassVar[tuple[str, ...]] = ("reason",)

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """Column names: key fields first, then the others in declaration order, then
        :attr:`LAST` (every field, :func:`when_set` ones too: a result's columns are
        :meth:`RowsResult.columns`)."""
        fs = fields(cls)
        keys = [f.name for f in fs if f.metadata.get("key")]
        rest = [f.name for f in fs if not f.metadata.get("key") and f.name not in cls.LAST]
        return tuple(keys + rest + [n for n in cls.LAST if n in {f.name for f in fs}])

    @staticmethod
    def search_fields(result: SearchResult) -> dict:
        """The fields a :class:`~compute.results.SearchResult` fills (its best
        configuration's, or the infeasible ones with the reason)."""
        out = {"model": result.model, "gpu": result.gpu, "phase": result.phase,
               "latency_name": latency_name(result.phase),
               "latency_limit_s": result.latency_limit}
        b = result.best
        if b is None:
            return {**out, "feasible": False, "reason": result.reason}
        split = b.time_split()
        # two-batch overlap: what it hid is collectives run behind the other micro-batch's
        # compute, so network_s is what stays exposed and the split still sums to latency_s
        network = split["network"] + split.get("two_batch_hidden", 0.0)
        return {**out, "feasible": True, "tp": b.tp, "pp": b.pp, "ep": b.ep,
                "attention_dp": b.attention_dp, "instance_gpus": b.gpus, "batch": b.batch,
                "latency_s": b.latency,
                "tokens_per_s": b.tokens_per_s, "tokens_per_s_per_sm": b.tokens_per_s_per_sm,
                "compute_s": split["compute"], "memory_s": split["memory"],
                "network_s": network, "network_share": network / b.latency,
                "overhead_s": split.get("overhead"),
                "reason": ""}

    @classmethod
    def from_search(cls, result: SearchResult, **extra: Any) -> Self:
        """The row of ``result``'s best configuration, with ``extra`` fields set."""
        return cls(**{**cls.search_fields(result), **extra})

    def with_ratio(self, reference: float | None) -> Self:
        """A copy with ``vs_baseline`` = tokens/s/SM over ``reference`` (None where either
        is missing)."""
        ok = self.feasible and reference
        return replace(self, vs_baseline=self.tokens_per_s_per_sm / reference if ok else None)

    @classmethod
    def when_set_fields(cls) -> tuple[str, ...]:
        """The :func:`when_set` fields, in column order (worked out once per class)."""
        hit = _WHEN_SET.get(cls)
        if hit is None:
            flagged = {f.name for f in fields(cls) if f.metadata.get("when_set")}
            hit = _WHEN_SET[cls] = tuple(c for c in cls.columns() if c in flagged)
        return hit

    def to_dict(self, drop: Collection[str] = ()) -> dict:
        """The row as a dict in column order (nested dicts and lists copied, as
        :func:`dataclasses.asdict` does, without its deep copy of every number: a study
        writes thousands of rows), less the columns in ``drop`` (a result's
        :func:`when_set` columns that none of its rows sets)."""
        return {c: _plain(getattr(self, c)) for c in self.columns() if c not in drop}


@dataclass(frozen=True, kw_only=True)
class FabricRow(BestRow):
    """A best configuration on a fabric, with what it costs and how it fails.

    The ``cost`` group comes from :func:`netmodel.study.cost.cost_summary` (tokens/s per W
    of IT power, tokens per J at the meter, USD per million tokens, the network's shares
    of capex and power); the ``reliability`` group from
    :func:`netmodel.study.reliability_summary.reliability_summary` (SMs out of service per GPU
    failure in hardware and in software, mean availability, goodput per SM bought with the
    reference spare pool, the smallest pool for 99% of capacity 99.9% of the time). Both
    are None where not computed or not available (e.g. no die data for a GPU).

    With every instance of the cluster running at once (``instances = "all"``), a row is
    charged for the whole cluster: ``tokens_per_s`` is every instance's, and
    ``tokens_per_s_per_sm`` divides it by every SM of the fabric, stranded GPUs included
    (``packed_fraction`` is the share of GPUs in instances).

    With multi-token prediction (``options.mtp_tokens``, decode rows only: prefill is
    costed as without it) ``latency_s`` is the step (the verification pass and the draft
    passes), ``tpot_s`` the time per output token the TBT SLO checks (the step over
    ``mtp_expected_tokens``) and ``mtp_draft_s`` the draft passes' share of the step
    (outside ``compute_s``, ``memory_s`` and ``network_s``, which split the verification
    pass); ``tokens_per_s`` counts the expected tokens. The three are columns only where
    a row sets them."""

    instances: int | None = None       #: with every instance at once: how many run
    packed_fraction: float | None = None  #: their share of the fabric's GPUs (rest stranded)
    #: MTP decode only: time per output token, ``latency_s / mtp_expected_tokens`` (s)
    tpot_s: float | None = when_set()
    #: MTP decode only: tokens a sequence emits a step on average, 1 + a + ... + a^K
    mtp_expected_tokens: float | None = when_set()
    #: MTP decode only: the step's K draft passes of the MTP module (s; in ``latency_s``)
    mtp_draft_s: float | None = when_set()
    #: two-batch overlap allowed only: the collectives the best step's overlap hid (s; 0
    #: where the serial step is faster; the serial step is ``latency_s`` + this)
    two_batch_hidden_s: float | None = when_set()
    tokens_per_s_per_w: float | None = group("cost")   #: the cluster's, per W of IT power
    tokens_per_j: float | None = group("cost")   #: per J at the meter (IT power x PUE)
    usd_per_mtoken: float | None = group("cost")   #: USD per million tokens
    network_share_capex: float | None = group("cost")   #: the network's share of capex
    network_share_power: float | None = group("cost")   #: ... of IT power
    #: per GPU failure, the SMs lost or cut off (hardware radius)
    sms_down_per_gpu_failure_hw: float | None = group("reliability")
    #: per GPU failure, the SMs of the instances it takes down (software radius)
    sms_down_per_gpu_failure_sw: float | None = group("reliability")
    availability: float | None = group("reliability")  #: mean capacity without spares (0-1)
    #: healthy tokens/s over every SM of the cluster's GPUs, idle ones included (no spares):
    #: ``tokens_per_s_per_sm`` (over the SMs serving) x serving GPUs / GPUs
    healthy_tokens_per_s_per_sm: float | None = group("reliability")
    #: mean delivered tokens/s over every SM bought (GPUs, idle ones and the reference spare
    #: pool, 1% of the GPUs, included)
    goodput_tokens_per_s_per_sm_with_spares: float | None = group("reliability")
    #: the fewest spares for 99% of capacity 99.9% of the time
    spares_needed: int | None = group("reliability")
    #: the fallbacks the closed form took past the spare chain's limit for this row's
    #: reliability figures (an approximation; ``[]`` where none; in CSV joined by ``; ``)
    analytic_fallback: tuple | None = group("reliability")
    #: whether the closed-form time below the threshold that decided ``spares_needed`` is
    #: in the regime where it reads low (the count may be low: availability's Monte Carlo
    #: tells; ``Analytic.threshold_low``); false where no count was found
    #: (``spares_needed`` null)
    threshold_low: bool | None = group("reliability")

    @staticmethod
    def search_fields(result: SearchResult) -> dict:
        """:meth:`BestRow.search_fields`, with multi-token prediction's fields where the
        best configuration drafts (an MTP decode step), and what two-batch overlap hid
        where it was allowed (the line compare's table prints under its rows)."""
        out = BestRow.search_fields(result)
        b = result.best
        if b is not None and b.mtp_tokens:
            out.update(tpot_s=b.tpot, mtp_expected_tokens=b.mtp_expected,
                       mtp_draft_s=b.time_split()["mtp_draft"])
        if b is not None and b.two_batch_hidden is not None:
            out.update(two_batch_hidden_s=b.two_batch_hidden)
        return out

    @classmethod
    def group_fields(cls, name: str) -> tuple[str, ...]:
        """The fields of one group (``"cost"`` or ``"reliability"``), worked out once per
        class (every row of a comparison fills its cost group)."""
        hit = _GROUPS.get((cls, name))
        if hit is None:
            hit = _GROUPS[(cls, name)] = tuple(
                f.name for f in fields(cls) if f.metadata.get("group") == name)
        return hit

    def with_group(self, name: str, values: dict) -> Self:
        """A copy with group ``name`` filled from ``values`` (a summary's ``to_dict()``)."""
        return replace(self, **{k: values[k] for k in self.group_fields(name)})


def mtp_note(options: Mapping) -> str | None:
    """What a compare or sweep row means with multi-token prediction (``options``: a
    RooflineOptions dict with ``mtp_tokens``), in one line; None without it.

    >>> print(mtp_note({"mtp_tokens": 1, "mtp_acceptance": 0.9}))
    MTP decode: 1 draft token a step, each accepted with probability 0.9: 1.9 tokens a sequence a step; a decode row's TBT is the step (the main model's pass on 2 tokens a sequence and 1 pass of the MTP module), the SLO checks TPOT = step / 1.9, tokens/s count the expected tokens; prefill is costed as without MTP
    """
    from compute.mtp import expected_tokens

    k = options.get("mtp_tokens")
    if not k:
        return None
    a = options["mtp_acceptance"]
    e = f"{expected_tokens(k, a):.4g}"
    return (f"MTP decode: {k} draft token{'s' if k > 1 else ''} a step, each accepted with "
            f"probability {a:g}: {e} tokens a sequence a step; a decode row's TBT is the "
            f"step (the main model's pass on {k + 1} tokens a sequence and {k} pass"
            f"{'es' if k > 1 else ''} of the MTP module), the SLO checks TPOT = step / {e}, "
            f"tokens/s count the expected tokens; prefill is costed as without MTP")


def ratio_text(x: float | None) -> str:
    """``1.23x``, or ``-`` for a missing ratio."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}x"


def column(text: str, width: int) -> str:
    """``text`` right-aligned in a table's column of ``width``, after a blank however wide
    it is: a value as wide as its column or wider ran into the one before (compare's
    '0.0007,016.019', 0.000 tokens/s/W then $7,016 a million tokens; infer's stage table
    '-7.274e+04 s', no memory time then a network time, read as a negative time).

    >>> column("0.328", 8), column("7,016.019", 8), column("7.274e+04 s", 11)
    ('   0.328', ' 7,016.019', ' 7.274e+04 s')
    """
    return f"{text:>{width}}" if len(text) < width else f" {text}"


@dataclass(frozen=True, eq=False)
class RowsResult:
    """What every report holds: its rows (of one :class:`BestRow` type) and settings."""

    rows: tuple = ()
    settings: dict = field(default_factory=dict)

    #: The row type (columns come from its fields).
    ROW: ClassVar[type[BestRow]] = BestRow

    @property
    def models(self) -> tuple[str, ...]:
        """The rows' models in first-seen order."""
        return tuple(dict.fromkeys(r.model for r in self.rows))

    @property
    def phases(self) -> tuple[str, ...]:
        """The rows' phases in first-seen order."""
        return tuple(dict.fromkeys(r.phase for r in self.rows))

    def to_dicts(self) -> list[dict]:
        unset = self.unset_columns()
        return [r.to_dict(unset) for r in self.rows]

    def unset_columns(self) -> frozenset[str]:
        """The row type's :func:`when_set` fields that no row sets (not columns here)."""
        return frozenset(c for c in self.ROW.when_set_fields()
                         if all(getattr(r, c, None) is None for r in self.rows))

    def columns(self) -> tuple[str, ...]:
        """The row type's columns, less its :func:`when_set` fields that no row sets."""
        unset = self.unset_columns()
        return tuple(c for c in self.ROW.columns() if c not in unset)

    def to_csv(self) -> str:
        """One line per row, the row type's columns."""
        return rows_to_csv(self.to_dicts(), self.columns())

    def batch_limit_line(self, where: str = "") -> str | None:
        """The line naming each ``label model phase`` whose best batch is the search's
        largest (``settings["max_batch"]``: an optimum may lie beyond it; ``where``
        qualifies it, e.g. " at some points"), or None."""
        limit = self.settings.get("max_batch")
        capped = dict.fromkeys(f"{r.label} {r.model} {r.phase}" for r in self.rows
                               if limit is not None and r.batch == limit)
        if not capped:
            return None
        return (f"batch at the search's limit ({limit}; a larger max batch may do better)"
                f"{where}: " + ", ".join(capped))


def batch_limit_note(limit: int) -> str:
    """The note on one best configuration at the search's largest batch ``limit`` (an
    optimum may lie beyond it), as search, cost, blast-radius and availability print it
    (a report of many rows names them: :meth:`RowsResult.batch_limit_line`)."""
    from netmodel.study.run_words import named

    return f"batch at the search's limit ({limit}): a larger {named('max_batch')} may do better"


def distinct_gpus(gpus: Iterable[GpuSpec]) -> list[GpuSpec]:
    """``gpus`` once each, refusing two different GPUs of one name (two GPU files defining
    one): the study keys its rows, and each row's ratio to the baseline and to the ideal
    network, by GPU name.

    >>> from compute.hardware import get_gpu
    >>> [g.name for g in distinct_gpus([get_gpu("Lite")] * 2)]
    ['Lite']
    """
    return _distinct(gpus, "GPUs", gpu_difference)


def gpu_difference(first: GpuSpec, other: GpuSpec) -> tuple[str, Any, Any]:
    """The first field two GPUs of one name differ in and its two values (``source`` where
    only that differs), so that a refusal says which two files were meant.

    >>> from dataclasses import replace
    >>> from compute.hardware import get_gpu
    >>> h = get_gpu("H100-SXM")
    >>> gpu_difference(h, replace(h, sms=100))
    ('sms', 132, 100)
    """
    a, b = first.to_dict(), other.to_dict()
    key = next((k for k in a if a[k] != b.get(k)), "source")
    return key, a[key], b.get(key)


def distinct_models(models: Iterable[ModelSpec]) -> list[ModelSpec]:
    """``models`` once each, refusing two different models of one name: compare and sweep
    key their rows (and each row's ratio to the baseline) by model name.

    >>> from compute.models import get_model
    >>> [m.name for m in distinct_models([get_model("Llama-3-8B")] * 2)]
    ['Llama-3-8B']
    """
    def differ(first: ModelSpec, m: ModelSpec) -> tuple[str, Any, Any]:
        key = next((f.name for f in fields(m)
                    if getattr(first, f.name) != getattr(m, f.name)), "source")
        return key, getattr(first, key), getattr(m, key)

    return _distinct(models, "models", differ, "; a HuggingFace config.json takes its "
                     "folder's name, another .json file its own, unless it names itself")


def _distinct(items: Iterable, noun: str, differ: Callable[[Any, Any], tuple[str, Any, Any]],
              note: str = "") -> list:
    """``items`` once each by name, refusing two different ones of one name (two files
    defining one, ``noun`` saying what they are), naming the first field they differ in
    (``differ(first, other)``: its name and the two values; ``note`` after them) so that
    which two files were meant is plain."""
    out: dict = {}
    for x in items:
        first = out.setdefault(x.name, x)
        if first != x:
            key, a, b = differ(first, x)
            raise UserError(f"two different {noun} are named {x.name!r} ({key} {a!r} and "
                            f"{b!r}{note}); give each its own name")
    return list(out.values())
