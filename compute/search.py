"""The SLO search: the configuration and batch with the most tokens/s/SM that fit in
memory and meet the latency SLO, for one model, GPU type and phase.

By default every TP degree from 1 to the GPU's largest instance that divides the attention
heads, and every batch from 1 to ``max_batch`` (default 1024), is evaluated at once with
numpy (:func:`compute.roofline.evaluate_grid`); pipeline stages, expert-parallel and
attention data-parallel degrees (``pp``, ``ep``, ``attention_dp``) add rows to the same
grid when asked for. The collective-cost model is asked once per (operation, group size)
for every message size of the grid. Configurations that do
not fit in memory or miss the SLO are never returned as best; when none is feasible the
result says why.

>>> r = search("Llama-3-70B", "H100-SXM", "decode")
>>> r.best.tp in r.tp_degrees and r.best.feasible
True
>>> r.best.latency <= 0.050
True
>>> from compute.hardware import derive_gpu, get_gpu
>>> tiny = derive_gpu(get_gpu("H100-SXM"), "Eighth", fraction=0.125)   # 10 GB, TP <= 8
>>> none = search("GPT-3-175B", tiny, "decode")
>>> none.best is None, none.reason.split(";")[0]
(True, 'GPT-3-175B on Eighth (decode): nothing fits in memory at any TP degree up to 8')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from compute.comm import NoCommunication
from compute.errors import UserError
from compute.hardware import get_gpu
from compute.limits import check as check_size
from compute.memo import Lru
from compute.models import get_model
from compute.parallel import configurations
from compute.phases import Slo, check_slo
from compute.results import FrontPoint, SearchResult, unchecked
from compute.roofline import MAX_CONFIGURATIONS as ROOFLINE_MAX_CONFIGURATIONS
from compute.roofline import check_options, default_comm, evaluate_grid, make_workload
from compute.validate import an_int, describe, is_whole

if TYPE_CHECKING:
    from compute.comm import CommLike
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Workload
    from compute.roofline_options import RooflineOptions

__all__ = ["DEFAULT_MAX_BATCH", "MAX_CONFIGURATIONS", "check_max_batch", "pareto_front", "search"]

#: Largest batch the search tries.
DEFAULT_MAX_BATCH = 1024
#: Most configurations x batches one search evaluates (about 1 kB each while it runs;
#: ``NETMODEL_MAX_SEARCH_CONFIGURATIONS`` overrides): the grid's limit,
#: :data:`compute.roofline.MAX_CONFIGURATIONS`.
MAX_CONFIGURATIONS = ROOFLINE_MAX_CONFIGURATIONS


def check_max_batch(max_batch: object) -> int:
    """``max_batch`` as a Python int if it is a whole number >= 1 (a numpy integer too: kept
    as numpy's, it failed the JSON of every report that records it), else a
    :class:`UserError`. The one check of a search's, a comparison's and a sweep's
    ``max_batch``.

    >>> check_max_batch(np.int64(64)), type(check_max_batch(np.uint16(8))).__name__
    (64, 'int')
    >>> check_max_batch(8.0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: max_batch must be a whole number >= 1 (an int), got 8.0
    """
    if isinstance(max_batch, bool) or not is_whole(max_batch) or max_batch < 1:
        raise UserError(f"max_batch must be a whole number >= 1{an_int(max_batch)}, got "
                        f"{describe(max_batch)}")
    return int(max_batch)


def pareto_front(latency: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both lower latency and higher score,
    by increasing latency (ties in latency keep the higher score). A point whose latency
    or score is NaN (an untimed cell) is on no front and hides no other point.

    >>> pareto_front(np.array([1.0, 2.0, 3.0, 2.5]), np.array([1.0, 3.0, 2.0, 4.0])).tolist()
    [0, 1, 3]
    >>> pareto_front(np.array([1.0, np.nan, 2.0]), np.array([np.nan, 5.0, 1.0])).tolist()
    [2]
    """
    latency, score = np.asarray(latency), np.asarray(score)
    if latency.ndim != 1 or latency.shape != score.shape:   # the pre-filter would index past
        raise UserError(f"latency and score must be 1-D arrays of one length, got shapes "
                        f"{latency.shape} and {score.shape}")
    if latency.dtype.kind not in "iuf" or score.dtype.kind not in "iuf":
        raise UserError(f"latency and score must be arrays of numbers, got dtypes "
                        f"{latency.dtype} and {score.dtype}")
    timed = ~(np.isnan(latency) | np.isnan(score))
    if not timed.all():   # a NaN score made every later point's 'best so far' NaN: none kept
        keep = np.flatnonzero(timed)
        return keep[pareto_front(latency[keep], score[keep])]
    if latency.size > 64 and not (np.isnan(latency).any() or np.isnan(score).any()):
        # A point can be on the front only if its score beats every point of lower
        # latency: one sort by latency finds those few (a search has 1e5 points, its
        # front 1e3); among them the same answer as among all (the best score of every
        # lower latency is one of them), so only they are sorted by (latency, -score).
        order = np.argsort(latency)
        lat, sc = latency[order], score[order]
        ahead = np.maximum.accumulate(sc)                 # best score up to each point
        start = np.concatenate([[True], lat[1:] != lat[:-1]])  # first of each latency
        first = np.maximum.accumulate(np.where(start, np.arange(lat.size), 0))
        lower = np.concatenate([[-np.inf], ahead[:-1]])[first]  # best of lower latencies
        keep = np.sort(order[sc > lower])
        return keep[_pareto_sorted(latency[keep], score[keep])]
    return _pareto_sorted(latency, score)


def _pareto_sorted(latency: np.ndarray, score: np.ndarray) -> np.ndarray:
    """:func:`pareto_front` by a sort on (latency, -score, index)."""
    order = np.lexsort((-score, latency))
    best = np.maximum.accumulate(score[order])
    prev = np.concatenate([[-np.inf], best[:-1]])
    return order[score[order] > prev]


def search(model: str | ModelSpec, gpu: str | GpuSpec, phase: str | Workload = "decode", *,
           prompt: int | None = None, context: int | None = None,
           comm: CommLike | None = None, options: RooflineOptions | None = None,
           slo: Slo | None = None, tp: int | Sequence[int] | None = None,
           pp: int | Sequence[int] | None = None,
           ep: int | Sequence[int] | Literal[True] | None = None,
           attention_dp: int | Sequence[int] | Literal[True] | None = None,
           expert_skew: float = 1.0, max_gpus: int | None = None,
           max_batch: int = DEFAULT_MAX_BATCH) -> SearchResult:
    """Search configuration x batch for the most tokens/s/SM under the SLO.

    The default search space is plain tensor parallelism: every TP degree from 1 to the
    GPU's largest instance dividing the heads, batches 1..``max_batch``. Pipeline, expert
    and attention data parallelism are opt-in (``pp``, ``ep``, ``attention_dp``): each
    combination (:func:`compute.parallel.configurations`) is a row of the same vectorised
    grid, under the same SLO.

    Parameters
    ----------
    model, gpu : str or spec
        Catalog names (or :class:`~compute.models.ModelSpec` / :class:`~compute.hardware.GpuSpec`).
    phase : str or Workload
        ``"prefill"`` (TTFT SLO) or ``"decode"`` (TBT SLO).
    prompt, context : int, optional
        Tokens per prompt (prefill) and per decode context (defaults 1500 and 1513).
    comm : CollectiveCostModel or callable, optional
        Collective costs among a group of GPUs: an object with ``collective_time`` or a
        plain function ``(op, nbytes_array, group_size) -> seconds_array``; default the
        lower bound over the GPU's scale-up switch, or with an engine profile NCCL's ring
        (:func:`compute.roofline.default_comm`). Called once per (operation, group size)
        with an array of message sizes.
    options : RooflineOptions, optional
        Overlap/serial mode, efficiency factors, compute dtype, memory reserve.
    slo : Slo, optional
        Latency limits (default TTFT <= 1 s, TBT <= 50 ms).
    tp : iterable of int, optional
        TP degrees to try (default: every one from 1 to ``gpu.max_instance`` dividing the
        heads).
    pp : iterable of int, optional
        Pipeline stages to try (default ``(1,)``), each from 1 to the layers
        (:data:`~compute.parallel_rules.PP_RULE`: uneven stages split as vLLM splits them).
    ep : iterable of int or True, optional
        Expert-parallel degrees (default ``(1,)``; ``True``: every divisor of the experts),
        one given that does not divide the experts places redundant copies
        (:func:`compute.parallel.expert_slots`); tried with the TP degrees it divides.
    attention_dp : iterable of int or True, optional
        Attention data-parallel degrees (default ``(1,)``; ``True``: every divisor of each
        TP degree).
    expert_skew : float
        Under EP, the busiest GPU's share of routed tokens over the mean (1: uniform).
    max_gpus : int, optional
        Largest instance (``tp x pp``) tried.
    max_batch : int
        Batches 1..max_batch are tried.

    Returns
    -------
    SearchResult
        ``best`` (or ``None`` with ``reason``), the Pareto ``front``, the best of each TP
        degree (``by_tp``) and of each configuration (``by_config``), and the evaluated
        ``grid``.
    """
    model, gpu = get_model(model), get_gpu(gpu)
    workload = make_workload(phase, prompt, context)
    slo = check_slo(slo)
    check_options(options)
    limit = slo.limit(workload.phase)
    max_batch = check_max_batch(max_batch)
    configs = configurations(model, gpu.max_instance, tp=tp, pp=pp, ep=ep,
                             attention_dp=attention_dp, max_gpus=max_gpus)
    check_size("search", "configurations", len(configs) * int(max_batch), MAX_CONFIGURATIONS,
               "NETMODEL_MAX_SEARCH_CONFIGURATIONS",
               "search fewer TP/PP/EP/attention-DP degrees or a smaller max_batch")
    tps = tuple(sorted({c.tp for c in configs}))
    comm = comm if comm is not None else default_comm(gpu, options)
    run = dict(comm=comm, options=options, latency_limit=limit, expert_skew=expert_skew)
    cap = _memory_cap(model, gpu, configs, workload, int(max_batch), run)
    # cells that do not fit are never feasible: their collectives are not timed
    grid = evaluate_grid(model, gpu, configs, np.arange(1, cap + 1), workload, **run,
                         time_unfit=False)
    if cap < max_batch and grid.fits[:, -1].any():  # not affine after all: search it all
        cap = int(max_batch)
        grid = evaluate_grid(model, gpu, configs, np.arange(1, cap + 1), workload, **run,
                             time_unfit=False)
    feasible = grid.feasible
    score = grid.tokens_per_s_per_sm
    common = dict(model=model.name, gpu=gpu.name, phase=workload.phase, latency_limit=limit,
                  tp_degrees=tps, max_batch=int(max_batch),
                  evaluated=len(configs) * int(max_batch),
                  fitting=int(grid.fits.sum()), feasible=int(feasible.sum()), grid=grid,
                  configurations=tuple(c.to_dict() for c in configs),
                  expert_skew=grid.expert_skew)
    if not feasible.any():
        return SearchResult(best=None, front=(), by_tp=(), reason=_why_none(grid), **common)

    masked = np.where(feasible, score, -np.inf)
    first, cols = _picks(masked, feasible, grid)
    i, j = np.unravel_index(first, masked.shape)
    best = grid.result(int(i), int(j))
    assert best.feasible

    rate = grid.tokens_per_s

    def points(rows: np.ndarray, cols: np.ndarray) -> tuple[FrontPoint, ...]:
        # the cells' values read as whole arrays (tolist gives the Python ints and floats
        # int() and float() would), the points built without dataclass __init__ (a
        # search's front holds tens of them, a study's searches tens of thousands)
        cells = zip([configs[i] for i in rows.tolist()],
                    np.asarray(grid.batches)[cols].tolist(), grid.latency[rows, cols].tolist(),
                    rate[rows, cols].tolist(), score[rows, cols].tolist(), strict=True)
        return tuple(unchecked(FrontPoint, {
            "tp": c.tp, "batch": b, "latency": lat, "tokens_per_s": r,
            "tokens_per_s_per_sm": sc, "pp": c.pp, "ep": c.ep,
            "attention_dp": c.attention_dp}) for c, b, lat, r, sc in cells)

    ii, jj = np.nonzero(feasible)
    k = pareto_front(grid.latency[ii, jj], score[ii, jj])
    front = points(ii[k], jj[k])
    rows = np.flatnonzero(feasible.any(axis=1))
    by_config = points(rows, cols[rows])
    by_tp = tuple(max((p for p in by_config if p.tp == t), key=lambda p: p.tokens_per_s_per_sm)
                  for t in tps if any(p.tp == t for p in by_config))
    return SearchResult(best=best, front=front, by_tp=by_tp, reason="", by_config=by_config,
                        **common)


def _picks(masked: np.ndarray, feasible: np.ndarray, grid) -> tuple[int, np.ndarray]:
    """The best cell (flat index) and each row's best column of ``masked`` (the score,
    ``-inf`` where infeasible). A pipelined prefill streams one prompt a period whatever
    its batch, so its rates at every batch are equal but for rounding: there (a grid with
    an ``interval``), of the scores within 1e-12 of the best, the lowest latency wins."""
    if grid.interval is None:
        return int(np.argmax(masked)), np.argmax(masked, axis=1)
    tops = masked.max(axis=1, keepdims=True)
    near = feasible & (masked >= tops - np.abs(tops) * TIE_RTOL)
    return best_of_equal(masked, feasible, grid.latency), \
        np.argmax(np.where(near, -grid.latency, -np.inf), axis=1)


#: Scores within this relative distance of the best are equal (a pipelined prefill's rates
#: at every batch differ only by rounding).
TIE_RTOL = 1e-12


def best_of_equal(masked: np.ndarray, feasible: np.ndarray, latency: np.ndarray) -> int:
    """The flat index of the lowest-``latency`` cell among the feasible cells whose score
    (``masked``, ``-inf`` where infeasible) is within :data:`TIE_RTOL` of the best: equal
    throughput, so the shorter wait wins.

    >>> best_of_equal(np.array([1.0, 1.0 + 1e-15, 0.5]), np.array([True, True, True]),
    ...               np.array([2.0, 3.0, 0.1]))
    0
    """
    top = masked.max()
    near = feasible & (masked >= top - abs(top) * TIE_RTOL)
    return int(np.argmax(np.where(near, -latency, -np.inf)))


def _memory_cap(model, gpu, configs, workload, max_batch: int, run: dict) -> int:
    """The batches worth evaluating: up to one past the largest that fits in memory under
    any configuration, at most ``max_batch``. Memory is affine in the batch (weights, plus
    KV cache and activations per sequence), so two batches give every configuration's
    limit; the caller checks that the batch past the cap fits nowhere. A batch that does
    not fit is never feasible, so the search's answer does not change; it only skips the
    grid's columns that cannot matter (most of them: a Lite holds tens to hundreds of
    sequences, the range is 1,024)."""
    if max_batch <= 8:
        return max_batch
    options = run["options"]
    key = None
    try:  # a search asked again under another network has the same cap: kept
        key = (model, gpu, tuple(configs), workload, max_batch, run["expert_skew"],
               None if options is None else (options.compute_dtype, options.flops_efficiency,
                                             options.memory_efficiency,
                                             options.memory_reserve, options.profile))
        hit = _CAPS.get(key)
    except TypeError:  # an unhashable field: not kept
        key = hit = None
    if hit is not None:
        return hit
    # memory does not depend on the collectives: probe without them
    probe = evaluate_grid(model, gpu, configs, np.array([1, 2]), workload,
                          **{**run, "comm": NoCommunication()})
    need = probe.weights + probe.kv_cache + probe.activations
    per_sequence = need[:, 1] - need[:, 0]
    fixed = need[:, 0] - per_sequence
    with np.errstate(divide="ignore", invalid="ignore"):
        most = np.where(per_sequence > 0, np.floor((probe.usable - fixed) / per_sequence),
                        max_batch)
    cap = int(min(max_batch, max(2, int(np.nanmax(most)) + 1)))
    if key is not None:
        _CAPS.put(key, cap)
    return cap


#: :func:`_memory_cap` of recent searches, by model, GPU, configurations, workload, batch
#: range, expert skew and the options memory depends on (read with ``get``: the oldest
#: dropped past 1,024).
_CAPS = Lru(1024)


def _why_none(grid) -> str:
    """Why no configuration of the grid is feasible, in one line."""
    name = f"{grid.model.name} on {grid.gpu.name} ({grid.workload.phase})"
    plain = all(c.is_plain for c in grid.configs)
    if not grid.fits.any():
        need = grid.weights[:, 0] + grid.kv_cache[:, 0] + grid.activations[:, 0]
        i = int(np.argmin(need / grid.usable))
        why = grid.result(i, 0).memory.reason
        space = f"TP degree up to {max(grid.tps)}" if plain else \
            f"configuration tried (up to {max(c.gpus for c in grid.configs)} GPUs)" + (
                "; wider stages need attention data parallelism" if all(
                    c.attention_dp == 1 for c in grid.configs) and any(
                    c.ep > 1 for c in grid.configs) else "")
        return f"{name}: nothing fits in memory at any {space}; best case: {why}"
    lat = np.where(grid.fits, grid.latency, np.inf)
    i, j = np.unravel_index(int(np.argmin(lat)), lat.shape)
    what = grid.workload.latency_name.upper()
    return (f"{name}: no configuration that fits in memory meets {what} <= "
            f"{grid.latency_limit * 1e3:.4g} ms; the fastest ({grid.configs[i].label}, batch "
            f"{int(grid.batches[j])}) takes {grid.latency[i, j] * 1e3:.4g} ms")
