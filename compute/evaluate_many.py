"""Many (configuration, batch) pairs scored at once, as arrays (:func:`evaluate_many`).

Entry ``i`` equals :func:`compute.evaluate_one.evaluate` of pair ``i`` to the last bit:
the pairs run through the grid's body (:func:`compute.roofline.grid_body`) as one column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from compute.comm import CommLike, as_comm
from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import GpuSpec, get_gpu
from compute.limits import check as check_size
from compute.models import ModelSpec, get_model
from compute.moe_routing import moe_comm
from compute.parallel import Parallelism, check_parallelism, layout
from compute.phases import Slo, Workload, check_slo, latency_name
from compute.results import InferenceResult
from compute.roofline import (
    MAX_CONFIGURATIONS,
    GridRates,
    check_batches,
    check_context,
    check_options,
    check_skew,
    default_comm,
    grid_body,
    make_workload,
)
from compute.roofline_options import RooflineOptions
from compute.sharding import Shards, check_tp, shards
from compute.validate import describe

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Evaluations", "evaluate_many"]


@dataclass(frozen=True, eq=False)
class Evaluations(GridRates):
    """Configurations scored by :func:`evaluate_many`: arrays with one entry per
    (configuration, batch) pair, in the order given. Entry ``i`` equals
    :func:`evaluate` of pair ``i`` (``result(i)`` gives its breakdown)."""

    model: ModelSpec
    gpu: GpuSpec
    workload: Workload
    options: RooflineOptions
    configs: tuple                 #: the :class:`~compute.parallel.Parallelism` of each
    batch: np.ndarray              #: sequences per step, int64
    latency: np.ndarray            #: step time (TTFT or TBT), seconds
    tokens_per_step: np.ndarray
    gpus: np.ndarray               #: GPUs of the instance (tp x pp)
    weights: np.ndarray            #: bytes per GPU
    kv_cache: np.ndarray
    activations: np.ndarray
    usable: float                  #: bytes usable per GPU
    fits: np.ndarray
    latency_limit: float
    compute_s: np.ndarray          #: the step's time split (adds up to ``latency``)
    memory_s: np.ndarray
    network_s: np.ndarray
    overhead_s: np.ndarray         #: a profile's fixed overheads (zeros without one)
    comm: CommLike | None = None
    expert_skew: float = 1.0
    #: seconds per batch in steady state (a pipelined prefill's ``k x period``, ``k`` its
    #: micro-batches (:func:`compute.parallel.micro_batch`), else
    #: the latency); tokens/s are per ``interval``
    interval: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.latency)

    def result(self, i: int) -> InferenceResult:
        """The :class:`InferenceResult` of pair ``i`` (evaluated again, one configuration)."""
        c = self.configs[i]
        return evaluate(self.model, self.gpu, c.tp, int(self.batch[i]), self.workload,
                        pp=c.pp, ep=c.ep, attention_dp=c.attention_dp,
                        expert_skew=self.expert_skew if c.ep > 1 else 1.0, comm=self.comm,
                        options=self.options,
                        slo=Slo(**{latency_name(self.workload.phase): self.latency_limit}))


def _check_pairs(configs, batches) -> None:
    """Refuse more pairs than an SLO search's grid evaluates
    (:data:`compute.roofline.MAX_CONFIGURATIONS`, about 1 kB each while they run;
    ``NETMODEL_MAX_SEARCH_CONFIGURATIONS`` overrides), counted before any array of them:
    10^7 pairs ran for two minutes, where the grid refuses as many at once.

    >>> _check_pairs([8] * 3_000_000, 1)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: evaluate_many: about 3,000,000 configuration-batch pairs, over the limit of 2,000,000; give fewer pairs, or raise NETMODEL_MAX_SEARCH_CONFIGURATIONS
    """
    try:
        n = max(len(configs), int(np.size(batches)))
    except (TypeError, ValueError):   # no sequence, a ragged list: the checks below say so
        return
    check_size("evaluate_many", "configuration-batch pairs", n, MAX_CONFIGURATIONS,
               "NETMODEL_MAX_SEARCH_CONFIGURATIONS", "give fewer pairs")


def _config_rows(configs) -> np.ndarray:
    """``configs`` as an ``(n, 4)`` int array of (tp, pp, ep, attention_dp)."""
    if isinstance(configs, np.ndarray) and configs.dtype != object:
        raw = configs
    else:
        configs = list(configs)
        if configs and all(isinstance(c, Parallelism) for c in configs):
            rows = [(c.tp, c.pp, c.ep, c.attention_dp) for c in configs]
            for row in rows:      # a degree that is no number (Parallelism(8, "2"), None)
                for name, v in zip(_DIMENSIONS, row, strict=True):
                    if not isinstance(v, int | float | np.integer | np.floating):
                        raise UserError(f"{name} degree must be a whole number >= 1, got "
                                        f"{describe(v)}")
            raw = np.array(rows)
        else:
            try:
                raw = np.asarray(configs)
            except (ValueError, TypeError):   # rows of unequal lengths, a mix
                raise UserError(f"configs must be TP degrees, Parallelism objects or rows "
                                f"of ({', '.join(_DIMENSIONS)}), got rows of unequal lengths "
                                f"or a mix of them") from None
    if raw.size == 0:
        raise UserError("no configuration given to evaluate")
    if raw.dtype == bool or raw.dtype.kind not in "iuf" or raw.ndim not in (1, 2) or \
            (raw.ndim == 2 and raw.shape[1] != len(_DIMENSIONS)):
        raise UserError(f"configs must be TP degrees, Parallelism objects or rows of "
                        f"({', '.join(_DIMENSIONS)}), got an array of shape {raw.shape} "
                        f"and type {raw.dtype}")
    if raw.ndim == 1:
        raw = np.stack([raw] + [np.ones_like(raw)] * (len(_DIMENSIONS) - 1), axis=1)
    bad = ~np.isfinite(raw) | (raw < 1) | (raw != np.floor(raw)) if raw.dtype.kind == "f" \
        else raw < 1
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise UserError(f"{_DIMENSIONS[j]} degree must be a whole number >= 1, got "
                        f"{raw[i, j].item()!r}")
    return raw.astype(np.int64)


_DIMENSIONS = ("tp", "pp", "ep", "attention_dp")


def evaluate_many(model: str | ModelSpec, gpu: str | GpuSpec,
                  configs: Sequence[int | Parallelism] | np.ndarray, batches: ArrayLike,
                  phase: str | Workload = "decode", *, prompt: int | None = None,
                  context: int | None = None, comm: CommLike | None = None,
                  options: RooflineOptions | None = None, slo: Slo | None = None,
                  expert_skew: float = 1.0) -> Evaluations:
    """Score a list of (configuration, batch) pairs at once, as arrays.

    Parameters
    ----------
    model, gpu : str or spec
        Catalog names or specs.
    configs : sequence
        One configuration per pair: TP degrees (ints), :class:`~compute.parallel.Parallelism`
        objects, or an ``(n, 4)`` array of (tp, pp, ep, attention_dp) rows. Each distinct
        configuration is checked once, as :func:`evaluate` checks it.
    batches : int or sequence of int
        The batch of each pair (one number: the same for every pair).
    phase, prompt, context, comm, options, slo, expert_skew
        As :func:`evaluate`; the collective model is asked once per (operation, group
        size) with every message size of the pairs.

    Returns
    -------
    Evaluations
        Arrays in the order given; entry ``i`` equals :func:`evaluate` of pair ``i`` to
        the last bit.

    Examples
    --------
    >>> e = evaluate_many("Llama-3-70B", "H100-SXM", [8, 8, 4], [1, 64, 16], "decode")
    >>> e.latency.shape, bool(e.latency[1] > e.latency[0])
    ((3,), True)
    >>> float(e.latency[2]) == evaluate("Llama-3-70B", "H100-SXM", 4, 16).latency
    True
    """
    model, gpu = get_model(model), get_gpu(gpu)
    workload = make_workload(phase, prompt, context)
    options = check_options(options)
    skew = check_skew(expert_skew)
    limit = check_slo(slo).limit(workload.phase)
    user_comm = comm
    comm = as_comm(comm) if comm is not None else default_comm(gpu, options)
    comm = moe_comm(comm, model, workload.phase)
    check_context(model, workload)
    _check_pairs(configs, batches)
    rows = _config_rows(configs)
    n = len(rows)
    batches = check_batches(batches)
    if batches.size == 1:
        batches = np.broadcast_to(batches, (n,))
    elif batches.size != n:
        raise UserError(f"batches has {batches.size} entries for {n} configurations; give "
                        f"one batch per configuration, or one for all")
    width = int(rows.max()) + 1
    if width ** rows.shape[1] < 2 ** 62:  # one int64 key per row: a fast 1-D unique
        keys = rows[:, 0]
        for j in range(1, rows.shape[1]):
            keys = keys * width + rows[:, j]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        unique = rows[first]
    else:
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    checked = []
    for tp, pp, ep, adp in unique.tolist():
        if pp == ep == adp == 1:
            checked.append(Parallelism(check_tp(model, tp, gpu.max_instance)))
        else:
            checked.append(check_parallelism(model, Parallelism(tp, pp, ep, adp),
                                             gpu.max_instance))
    objs = np.empty(len(checked), dtype=object)
    objs[:] = checked
    is_plain = np.array([c.is_plain for c in checked])[inverse]
    out = {k: np.zeros(n) for k in ("latency", "interval", "weights", "kv_cache", "activations",
                                    "compute_s", "memory_s", "network_s", "overhead_s")}
    fits = np.empty(n, dtype=bool)
    usable = 0.0
    for plain in (True, False):
        idx = np.flatnonzero(is_plain == plain)
        if not idx.size:
            continue
        u, inv = np.unique(inverse[idx], return_inverse=True)
        cu = [checked[i] for i in u]
        sh_u = shards(model, [c.tp for c in cu]) if plain else layout(model, cu)
        sh = Shards(**{f: (v[inv.reshape(-1)] if isinstance(v, np.ndarray) else v)
                       for f, v in vars(sh_u).items() if f in Shards.__dataclass_fields__})
        b = batches[idx].astype(float).reshape(-1, 1)
        g = grid_body(model, gpu, tuple(objs[inverse[idx]]), sh, plain, batches[idx], b,
                      workload, comm, options, skew, limit, paired=True)
        out["latency"][idx] = g.latency[:, 0]
        out["interval"][idx] = (g.latency if g.interval is None else g.interval)[:, 0]
        out["weights"][idx] = g.weights[:, 0]
        out["kv_cache"][idx] = g.kv_cache[:, 0]
        out["activations"][idx] = g.activations[:, 0]
        for r, v in g.time_split().items():
            out[f"{r}_s"][idx] = v[:, 0]
        fits[idx] = g.fits[:, 0]
        usable = g.usable
    gpus = np.array([c.gpus for c in checked], dtype=float)[inverse]
    return Evaluations(
        model=model, gpu=gpu, workload=workload, options=options,
        configs=tuple(objs[inverse]), batch=np.asarray(batches, dtype=np.int64).copy(),
        tokens_per_step=(batches * workload.tokens_per_sequence).astype(float),
        gpus=gpus, usable=usable, fits=fits, latency_limit=float(limit), comm=user_comm,
        expert_skew=skew, **out)
