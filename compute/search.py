"""The SLO search: the TP degree and batch with the most tokens/s/SM that fit in memory
and meet the latency SLO, for one model, GPU type and phase.

Every TP degree from 1 to the GPU's largest instance that divides the attention heads, and
every batch from 1 to ``max_batch`` (default 1024), is evaluated at once with numpy
(:func:`compute.roofline.evaluate_grid`); the collective-cost model is asked once per
(operation, TP degree) for every message size of the batch grid. Configurations that do
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

import numpy as np

from compute.errors import UserError
from compute.hardware import get_gpu
from compute.models import get_model
from compute.phases import Slo
from compute.results import FrontPoint, SearchResult
from compute.roofline import default_comm, evaluate_grid, make_workload
from compute.sharding import check_tp, valid_tp_degrees

__all__ = ["DEFAULT_MAX_BATCH", "pareto_front", "search"]

#: Largest batch the search tries.
DEFAULT_MAX_BATCH = 1024


def pareto_front(latency: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both lower latency and higher score,
    by increasing latency (ties in latency keep the higher score).

    >>> pareto_front(np.array([1.0, 2.0, 3.0, 2.5]), np.array([1.0, 3.0, 2.0, 4.0])).tolist()
    [0, 1, 3]
    """
    order = np.lexsort((-score, latency))
    best = np.maximum.accumulate(score[order])
    prev = np.concatenate([[-np.inf], best[:-1]])
    return order[score[order] > prev]


def search(model, gpu, phase="decode", *, prompt=None, context=None, comm=None, options=None,
           slo: Slo | None = None, tp=None, max_batch: int = DEFAULT_MAX_BATCH) -> SearchResult:
    """Search TP degree x batch for the most tokens/s/SM under the SLO.

    Parameters
    ----------
    model, gpu : str or spec
        Catalog names (or :class:`~compute.models.ModelSpec` / :class:`~compute.hardware.GpuSpec`).
    phase : str or Workload
        ``"prefill"`` (TTFT SLO) or ``"decode"`` (TBT SLO).
    prompt, context : int, optional
        Tokens per prompt (prefill) and per decode context (defaults 1500 and 1513).
    comm : CollectiveCostModel or callable, optional
        Collective costs among a TP group: an object with ``collective_time`` or a plain
        function ``(op, nbytes_array, group_size) -> seconds_array``; default ring
        alpha-beta over the GPU's scale-up bandwidth. Called once per (operation, TP degree)
        with an array of message sizes.
    options : RooflineOptions, optional
        Overlap/serial mode, efficiency factors, compute dtype, memory reserve.
    slo : Slo, optional
        Latency limits (default TTFT <= 1 s, TBT <= 50 ms).
    tp : iterable of int, optional
        TP degrees to try (default: every one from 1 to ``gpu.max_instance`` dividing the
        heads).
    max_batch : int
        Batches 1..max_batch are tried.

    Returns
    -------
    SearchResult
        ``best`` (or ``None`` with ``reason``), the Pareto ``front``, the best of each TP
        degree (``by_tp``) and the evaluated ``grid``.
    """
    model, gpu = get_model(model), get_gpu(gpu)
    workload = make_workload(phase, prompt, context)
    slo = slo or Slo()
    limit = slo.limit(workload.phase)
    if isinstance(max_batch, bool) or not isinstance(max_batch, int | np.integer) or max_batch < 1:
        raise UserError(f"max_batch must be a whole number >= 1, got {max_batch!r}")
    if tp is None:
        tps = valid_tp_degrees(model, gpu.max_instance)
    else:
        tps = tuple(sorted({check_tp(model, t, gpu.max_instance) for t in np.atleast_1d(tp)}))
        if not tps:
            raise UserError("no TP degree given to search")
    comm = comm if comm is not None else default_comm(gpu)
    grid = evaluate_grid(model, gpu, tps, np.arange(1, int(max_batch) + 1), workload,
                         comm=comm, options=options, latency_limit=limit)
    feasible = grid.feasible
    score = grid.tokens_per_s_per_sm
    common = dict(model=model.name, gpu=gpu.name, phase=workload.phase, latency_limit=limit,
                  tp_degrees=tps, max_batch=int(max_batch), evaluated=int(feasible.size),
                  fitting=int(grid.fits.sum()), feasible=int(feasible.sum()), grid=grid)
    if not feasible.any():
        return SearchResult(best=None, front=(), by_tp=(), reason=_why_none(grid), **common)

    masked = np.where(feasible, score, -np.inf)
    i, j = np.unravel_index(int(np.argmax(masked)), masked.shape)
    best = grid.result(int(i), int(j))
    assert best.feasible

    rate = grid.tokens_per_s

    def point(i, j) -> FrontPoint:
        return FrontPoint(tp=tps[i], batch=int(grid.batches[j]),
                          latency=float(grid.latency[i, j]),
                          tokens_per_s=float(rate[i, j]),
                          tokens_per_s_per_sm=float(score[i, j]))

    ii, jj = np.nonzero(feasible)
    front = tuple(point(ii[k], jj[k])
                  for k in pareto_front(grid.latency[ii, jj], score[ii, jj]))
    by_tp = tuple(point(r, int(np.argmax(masked[r]))) for r in range(len(tps))
                  if feasible[r].any())
    return SearchResult(best=best, front=front, by_tp=by_tp, reason="", **common)


def _why_none(grid) -> str:
    """Why no configuration of the grid is feasible, in one line."""
    name = f"{grid.model.name} on {grid.gpu.name} ({grid.workload.phase})"
    if not grid.fits.any():
        i = int(np.argmin(grid.weights[:, 0] + grid.kv_cache[:, 0] + grid.activations[:, 0]))
        why = grid.result(i, 0).memory.reason
        return (f"{name}: nothing fits in memory at any TP degree up to "
                f"{max(grid.tps)}; best case: {why}")
    lat = np.where(grid.fits, grid.latency, np.inf)
    i, j = np.unravel_index(int(np.argmin(lat)), lat.shape)
    what = grid.workload.latency_name.upper()
    return (f"{name}: no configuration that fits in memory meets {what} <= "
            f"{grid.latency_limit * 1e3:.4g} ms; the fastest (TP {grid.tps[i]}, batch "
            f"{int(grid.batches[j])}) takes {grid.latency[i, j] * 1e3:.4g} ms")
