"""The prefill cells' waits at a load, for :func:`netmodel.study.serving.serve`, taken only
where they can change the answer: a cell (configuration, batch ``B``) is a bulk-service
queue whose batch of ``k <= B`` takes its configuration's cycle at batch ``k``
(:func:`netmodel.study.queueing.bulk_wait`), from the search's grid, which holds every
batch from 1 to its cap.

A cell's wait costs a ``B x B`` solve (about a millisecond at ``B = 100``), so it is taken
only where it can change the answer: in the order of the cells' scores, best first, until
one meets the SLO with its wait, and then every cell whose score ties with it
(:data:`compute.search.TIE_RTOL`, of which the lowest TTFT wins); where none meets it, in
the order of the steps' TTFT until no cell's steps alone are shorter than the fastest TTFT
with its wait found. The cells not taken hold ``nan``.
"""

from __future__ import annotations

import numpy as np

from compute.search import TIE_RTOL
from netmodel.study.queueing import bulk_wait, mdc_wait

__all__ = ["decode_choices", "decode_waits", "fastest_waits", "prefill_waits", "slot_wait"]


def _check_batches(batches: np.ndarray) -> None:
    if not np.array_equal(np.asarray(batches).reshape(-1), np.arange(1, np.size(batches) + 1)):
        raise AssertionError("a cell's wait needs its row's cycles at every batch from 1")


def _wait(load: float, cycle: np.ndarray, cell: int) -> float:
    i, j = divmod(int(cell), cycle.shape[1])
    return bulk_wait(load, cycle[i, :j + 1])


def prefill_waits(load: float, cycle: np.ndarray, batches: np.ndarray, steps: np.ndarray,
                  fits: np.ndarray, limit: float, score: np.ndarray) -> np.ndarray:
    """The waits (``nan`` where not taken) of the cells that fit and whose ``steps`` TTFT
    meets ``limit``, best ``score`` first, until the best that meets it with its wait and
    the cells tied with it are known.

    >>> cycle = np.array([[1.0, 1.5, 2.0]])       # one configuration, batches 1 .. 3
    >>> w = prefill_waits(0.5, cycle, np.arange(1, 4), np.array([[0.1, 0.2, 0.3]]),
    ...                   np.array([[True, True, True]]), 2.0, np.array([[1.0, 4 / 3, 1.5]]))
    >>> bool(np.isnan(w[0, 0])), bool(w[0, 2] > 0)   # batch 3 met it: batch 1 not taken
    (True, True)
    """
    _check_batches(batches)
    wait = np.full(steps.shape, np.nan)
    cand = np.flatnonzero(fits & (steps <= limit))
    best = None
    for cell in cand[np.argsort(-score.flat[cand], kind="stable")]:
        sc = float(score.flat[cell])
        if best is not None and sc < best - abs(best) * TIE_RTOL:
            break
        wait.flat[cell] = w = _wait(load, cycle, cell)
        if best is None and steps.flat[cell] + w <= limit:
            best = sc
    return wait


def fastest_waits(load: float, cycle: np.ndarray, steps: np.ndarray, fits: np.ndarray,
                  wait: np.ndarray) -> np.ndarray:
    """``wait`` with the cells that fit taken, shortest ``steps`` first, until no cell left
    can beat the fastest TTFT with its wait (a wait is never negative)."""
    wait = wait.copy()
    done = fits & ~np.isnan(wait)
    fastest = float(np.min(steps[done] + wait[done])) if done.any() else np.inf
    todo = np.flatnonzero(fits & np.isnan(wait))
    for cell in todo[np.argsort(steps.flat[todo], kind="stable")]:
        if not steps.flat[cell] < fastest:
            break
        wait.flat[cell] = w = _wait(load, cycle, cell)
        fastest = min(fastest, float(steps.flat[cell] + w))
    return wait


def slot_wait(load: float, slots: int, rate: float) -> float:
    """Mean seconds a request waits for a free slot of a decode instance running ``slots``
    sequences at once (its batch; continuous batching: a sequence leaves when done, another
    joins) that finishes ``rate`` requests/s, at ``load`` of that: M/D/c, ``c = slots``, each
    held ``slots / rate`` seconds (:func:`netmodel.study.queueing.mdc_wait`). The request's
    KV cache needs the slot's room, so the wait comes before the transfer, in the TTFT.

    >>> slot_wait(0.5, 1, 2.0)          # one slot held 0.5 s: M/D/1, half of it at 0.5
    0.25
    """
    return mdc_wait(load, slots, slots / rate)


def decode_waits(load: float, dec, tokens: int) -> tuple[float, float]:
    """A request's mean waits at the decode instance ``dec`` (an
    :class:`~compute.results.InferenceResult` of ``tokens`` decode tokens a request) at
    ``load``: for a slot (:func:`slot_wait`, at the instance's requests/s) and, once its
    KV cache is in, to join the batch at its next step, half a step (steps of one fixed
    length, a request ready at any phase of one: the residual of a fixed interval)."""
    return slot_wait(load, dec.batch, dec.tokens_per_step / dec.latency / tokens), dec.latency / 2


def decode_choices(res, tokens: int, load: float, best):
    """The decode instances a loaded service weighs, in order: ``best`` (the search's,
    :func:`compute.mtp.capped_best`), then of the cells of the decode search ``res`` that
    meet the TBT SLO, in decreasing tokens/s/SM, each whose waits (:func:`decode_waits`)
    are less than every one before it (a cell that waits as long, scoring less, cannot let
    a prefill cell meet the TTFT SLO where those before could not). Lazy: a cell's slot
    wait is computed only where half its step is less than the least wait so far.
    """
    yield best
    least = sum(decode_waits(load, best, tokens))
    grid = res.grid
    if grid.mtp_expected is not None:   # MTP: the tokens a step capped as capped_best's
        from dataclasses import replace

        from compute.mtp import mean_steps

        o = grid.options
        grid = replace(grid, mtp_expected=tokens / mean_steps(o.mtp_tokens, o.mtp_acceptance,
                                                              tokens))
    ok = grid.feasible
    score = np.where(ok, grid.tokens_per_s_per_sm, -np.inf)
    half = np.broadcast_to(np.asarray(grid.latency, dtype=float) / 2, ok.shape)
    for cell in np.argsort(-score, axis=None, kind="stable")[:int(ok.sum())]:
        if half.flat[cell] >= least:
            continue
        dec = grid.result(*(int(k) for k in np.unravel_index(cell, ok.shape)))
        waits = sum(decode_waits(load, dec, tokens))
        if waits < least:
            least = waits
            yield dec
