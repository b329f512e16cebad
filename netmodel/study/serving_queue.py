"""The prefill cells' waits at a load, for :func:`netmodel.study.serving.serve`, taken only
where they can change the answer: a cell (configuration, batch ``B``) is a bulk-service
queue whose batch of ``k <= B`` takes its configuration's cycle at batch ``k``
(:func:`netmodel.study.queueing.bulk_wait`), from the search's grid, which holds every
batch from 1 to its cap.

A cell's wait costs a ``B x B`` solve (about a millisecond at ``B = 100``), so it is taken
only where it can change the answer: in the order of the cells' scores, best first, until
one meets the SLO with its wait, and then of the cells whose score ties with it
(:data:`compute.search.TIE_RTOL`, of which the lowest TTFT wins) those that can match or
beat the fastest TTFT found, shortest steps first (:func:`_tied_waits`); where none meets
it, in the order of the steps' TTFT until no cell's steps alone are shorter than the
fastest TTFT with its wait found. A cell's wait is its prefill batch's and, with a decode instance, its
decode slot's as its batches bring the requests (:func:`cell_waits`, M^X/D/c at the
cell's batch sizes: a second solve, of the decode batch's ``c`` roots). A cell whose steps
with a cheap floor of its wait (:func:`wait_floor`, plus M/D/c's slot wait, which bunches
only lengthen) cannot meet the SLO, or beat the fastest so far, is passed over. The cells
not taken hold ``nan``.

With a rate the pools are sized to it (:func:`sized_pools`): whole instances, and the
chosen cell's waits at the loads they run at, the decode slot's simulated for a few decode
instances (:mod:`netmodel.study.serving_sim`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from compute.search import TIE_RTOL
from netmodel.study.queueing import bulk_sizes, bulk_wait, mdc_wait, mxdc_wait
from netmodel.study.serving_sim import SIMULATED_DECODE, pools_slot_wait

__all__ = ["cell_waits", "decode_choices", "decode_waits", "fastest_waits", "prefill_waits",
           "routed_sizes", "sized_pools", "slot_floor", "slot_wait", "wait_floor"]

#: The share by which :func:`wait_floor` is lowered before it rules a cell out: the bulk
#: chain's solve rounds (a ``B x B`` system, ill-conditioned as ``rho -> 1``), the bound not.
_FLOOR_SLACK = 1e-6


def _check_batches(batches: np.ndarray) -> None:
    if not np.array_equal(np.asarray(batches).reshape(-1), np.arange(1, np.size(batches) + 1)):
        raise AssertionError("a cell's wait needs its row's cycles at every batch from 1")


def _services(cycle: np.ndarray, cell: int) -> np.ndarray:
    """The prefill cell ``cell``'s (flat index into ``cycle``) batch times ``S_1 .. S_B``:
    its row's cycles at every batch up to its own."""
    i, j = divmod(int(cell), cycle.shape[1])
    return cycle[i, :j + 1]


def cell_waits(load: float, cycle: np.ndarray, cell: int,
               slots: tuple | None = None) -> tuple[float, float]:
    """The prefill cell ``cell``'s (flat index into ``cycle``) mean wait for its batch
    (:func:`~netmodel.study.queueing.bulk_wait`) and, with ``slots`` (the decode pool's
    load, an instance's slots, its requests/s and optionally the pool's instances), for a
    decode slot as its batches bring the requests (:func:`slot_wait` at the cell's
    :func:`~netmodel.study.queueing.bulk_sizes`, :func:`routed_sizes`; 0 without
    ``slots``)."""
    services = _services(cycle, cell)
    wait = bulk_wait(load, services)
    if slots is None or not np.isfinite(wait):
        return wait, (0.0 if slots is None else np.inf)
    load_d, c, rate, *instances = slots
    sizes = routed_sizes(bulk_sizes(load, services), instances[0] if instances else None)
    return wait, slot_wait(load_d, c, rate, sizes=sizes)


def routed_sizes(sizes: np.ndarray, instances: int | None) -> np.ndarray:
    """The law of the bunches one of ``instances`` decode instances gets, each prefill batch
    (of law ``sizes``) sent whole to one chosen at random: their superposition split at
    random. Without ``instances`` (a pool of any size, as without a rate) the prefill's law
    as it is: the random split of ``q = 1 / instances`` of a pool's batches tends, as ``q ->
    0``, to batches at Poisson instants (Renyi's thinning theorem), M^X/D/c's arrivals. A
    sized pool is not that limit: over a hold's window the requests a prefill pool sends
    are Poisson, its queues only delaying them, so an instance's count varies as ``q`` of
    it one by one and ``1 - q`` in bunches (its index of dispersion ``q + (1 - q) E[K^2] /
    E[K]``, the split's); taken so, ``1 - q`` of the requests in the prefill's bunches and
    ``q`` alone. An approximation, measured against a simulation of the pools
    (``tests/netmodel/test_decode_bunched_arrivals.py``); one instance gives M/D/c.

    >>> [round(float(p), 4) for p in routed_sizes(np.array([0.0, 1.0]), 2)]   # pairs, one of two
    [0.6667, 0.3333]
    """
    sizes = np.asarray(sizes, dtype=float)
    if instances is None or instances <= 0:
        return sizes
    q = 1.0 / instances
    law = (1 - q) * sizes / float(np.arange(1, sizes.size + 1) @ sizes)
    law[0] += q
    return law / law.sum()


def _wait(load: float, cycle: np.ndarray, cell: int, slots: tuple | None = None,
          past: float = np.inf, low: float = 0.0) -> float:
    """:func:`cell_waits`' sum, or ``nan`` (not taken) where the prefill batch's wait and
    ``low``, the slot wait's floor (:func:`slot_floor`), already pass ``past``: the slot's
    solve spared."""
    if slots is None:
        return cell_waits(load, cycle, cell)[0]
    if bulk_wait(load, _services(cycle, cell)) + low > past:
        return np.nan
    return sum(cell_waits(load, cycle, cell, slots))


def _floor(load: float, cycle: np.ndarray,
           slots: tuple | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`wait_floor`, plus with ``slots`` a floor of the decode slot's wait
    (:func:`slot_floor` without ``busy``: the grid's ``O(B^2)`` mean floor is taken cell by
    cell, :func:`_cell_slot_floor`); and :func:`wait_floor` alone."""
    floor = wait_floor(load, cycle)
    if slots is None:
        return floor, floor
    return floor + slot_floor(load, cycle, slots, busy=False), floor


def slot_floor(load: float, cycle: np.ndarray, slots: tuple, busy: bool = True) -> np.ndarray:
    """A lower bound on each prefill cell's decode slot wait (:func:`cell_waits`, M^X/D/c
    at the cell's batch sizes ``K``), lowered by :data:`_FLOOR_SLACK`: the larger of

    * M/D/c's (one by one): a bunch of ``k`` is above ``k`` lone arrivals in the convex
      order, and Lindley's ``max(Y + A - c, 0)`` is increasing and convex, so bunches only
      lengthen the wait;
    * ``D / 2 (E[K^2] / E[K] / (c - a) - 1)``: in :func:`~netmodel.study.queueing.
      mxdc_wait`'s ``E[max(X - c, 0)]`` each root's ``1 / (1 - z_k)`` has a real part of at
      least 1/2 (``|z_k| <= 1``), and ``E[A (A - 1)] = a E[K^2] / E[K] + a^2 - a``; with
      ``E[K^2] / E[K] >= E[K] >= E[max(1, min(B, N))]``, ``N`` Poisson of mean ``lambda
      S_min`` (``S_min`` the shortest batch up to ``B``): every batch but the first takes
      at least the requests that came during the one before it, up to ``B``, or one
      after an idle wait; or, with ``busy``, ``E[K] >=`` :func:`_mean_floor`'s, the
      instance never busy more than all the time. Tight in heavy traffic, where the
      bunches are full.

    Less ``1e-12 / rho`` of a hold: the roots' sum, about ``(c - 1) / 2``, cancels to the
    queue, so the computed waits round by about that.

    >>> cycle = np.array([[0.5, 0.6, 0.7, 0.8]])
    >>> f = slot_floor(0.9, cycle, (0.9, 8, 20.0))
    >>> all(f[0, j] <= cell_waits(0.9, cycle, j, (0.9, 8, 20.0))[1] for j in range(4))
    True
    """
    from scipy.special import gammainc, gammaincc

    rho, c, rate = slots[:3]
    one = slot_wait(rho, c, rate)
    cycle = np.asarray(cycle, dtype=float)
    b = np.arange(1, cycle.shape[1] + 1, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        a = load * b / cycle * np.minimum.accumulate(cycle, axis=1)   # lambda S_min
        # E[max(1, min(B, N))] = a P(N <= B - 2) + B P(N >= B) + P(N = 0)
        low = np.where(b >= 2, gammaincc(np.maximum(b - 1, 1), a), 0.0)
        mean = a * low + b * gammainc(b, a) + np.exp(-a)
        if busy:
            mean = np.maximum(mean, _mean_floor(load, cycle))
    return _slot_bound(mean, one, slots)


def _slot_bound(mean: np.ndarray, one: float, slots: tuple) -> np.ndarray:
    """:func:`slot_floor` at a floor ``mean`` of ``E[K]`` and M/D/c's wait ``one``."""
    rho, c, rate = slots[:3]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        bound = c / rate / 2 * (mean / (c * (1 - rho)) - 1)
    bound = np.where(np.isfinite(bound), bound, 0.0)
    # less the rounding of the roots' sum (about c / 2, cancelling to the wait's a c)
    return np.maximum(np.maximum(bound, one) * (1 - _FLOOR_SLACK) - c / rate * 1e-12 / rho, 0.0)


def _cell_slot_floor(load: float, cycle: np.ndarray, cell: int, slots: tuple | None,
                     cheap: float) -> float:
    """:func:`slot_floor` of one cell from ``cheap``, its floor without ``busy``: the larger
    of that and the bound at :func:`_mean_floor`'s mean (the bound grows with the mean), the
    mean of the cell's row alone (``O(B)``, not the grid's ``O(B^2)``); 0 without ``slots``."""
    if slots is None:
        return 0.0
    mean = float(_mean_floor(load, _services(cycle, cell)[None], last=True)[0, -1])
    if not mean > 0:   # no busy bound: the cheap one
        return cheap
    return max(cheap, float(_slot_bound(mean, _one(*slots[:3]), slots)))


@functools.lru_cache(maxsize=64)
def _one(load: float, slots: int, rate: float) -> float:
    """:func:`slot_wait` one by one (M/D/c), kept for :func:`_cell_slot_floor`."""
    return slot_wait(load, slots, rate)


def _mean_floor(load: float, cycle: np.ndarray, last: bool = False) -> np.ndarray:
    """A lower bound on each prefill cell's mean batch size ``E[K]`` (cell ``(i, j)``: batches
    of ``k <= B = j + 1`` at ``S_k = cycle[i, k - 1]``, :func:`~netmodel.study.queueing.
    bulk_sizes`' law), from the instance's time: batches start at some rate ``r`` and take
    ``E[S_K]`` each, busy ``r E[S_K] <= 1`` of the time, and bring the requests, ``lambda =
    r E[K]`` (``lambda = rho B / S_B``), so ``lambda E[S_K] <= E[K]``. Each ``S_k`` is on or
    above the line through ``(B, S_B)`` of the largest slope to a point before it, ``S_k >=
    alpha + beta k`` with ``alpha = min_{k < B} (B S_k - k S_B) / (B - k)`` and ``beta B =
    S_B - alpha``; so ``E[K] (1 - lambda beta) >= lambda alpha``, and with ``alpha > 0``
    (then ``1 - lambda beta = ((1 - rho) S_B + rho alpha) / S_B > 0``)

        ``E[K] >= rho B alpha / ((1 - rho) S_B + rho alpha)``,

    which tends to ``B`` as ``rho -> 1`` where a batch has a fixed cost (``alpha``: the
    cost of a batch that no request adds to). 0 where ``alpha <= 0`` (a row whose batch
    time only grows with its requests): nothing then. ``alpha`` is lowered by ``1e-12 B
    S_B`` for its rounding (its products' about ``2 eps B S_B``). With ``last`` the last
    column's alone (the others 0).

    >>> b = np.arange(1.0, 5.0)
    >>> [round(float(m), 3) for m in _mean_floor(0.99, 0.2 + 0.1 * b[None, :])[0]]
    [0.99, 1.96, 2.926, 3.882]
    >>> float(_mean_floor(0.99, 0.1 * b[None, :])[0, 3])   # no fixed cost: no floor
    0.0
    """
    cycle = np.asarray(cycle, dtype=float)
    n = cycle.shape[1]
    b = np.arange(1, n + 1, dtype=float)
    alpha = np.empty_like(cycle)
    alpha[:, :1] = cycle[:, :1]       # one request a batch: the line of slope 0
    alpha[:, 1:] = np.inf
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if last and n > 1:            # B = n: every point before it at once
            k = b[:-1]
            alpha[:, :-1] = -np.inf
            alpha[:, -1] = np.min((n * cycle[:, :-1] - k * cycle[:, -1:]) / (n - k), axis=1)
        for k in range(1, 1 if last else n):   # the points k, every B > k (nan propagates)
            alpha[:, k:] = np.minimum(alpha[:, k:],
                                      (b[k:] * cycle[:, k - 1:k] - k * cycle[:, k:]) / (b[k:] - k))
        alpha = alpha - 1e-12 * b * cycle
        mean = load * b * alpha / ((1 - load) * cycle + load * alpha)
    return np.where(np.isfinite(mean) & (alpha > 0), mean, 0.0)


def wait_floor(load: float, cycle: np.ndarray) -> np.ndarray:
    """A lower bound on each cell's :func:`~netmodel.study.queueing.bulk_wait` (cell ``(i,
    j)``: batches up to ``j + 1`` at ``cycle[i, :j + 1]``), in one pass over the grid, so
    that a cell that cannot meet a limit is ruled out without its ``B x B`` solve.

    With ``d = min_k S_k / k`` (a batch of ``k`` takes at least ``k d``), a request's
    batch starts no earlier than it would start service in an M/D/1 queue of service ``d``
    at the same arrivals, ``lambda = rho B / S_B``, less ``d`` for each request ahead of it
    in its own batch (by induction over batches: the first of each starts no earlier than
    in the M/D/1 queue, where those after it follow ``d`` apart); a batch of ``k``'s
    requests have ``(k - 1) / 2 <= (B - 1) / 2`` ahead on average. So ``W >= lambda d^2 /
    (2 (1 - lambda d)) - (B - 1) d / 2`` (``lambda d <= rho < 1``): at ``B = 1`` M/D/1
    itself, and as ``rho -> 1`` within ``S_B`` of the wait (which grows as ``S_B / (2 B (1 -
    rho))``). Lowered by :data:`_FLOOR_SLACK` and never below 0.

    >>> cycle = np.array([[1.0, 1.5, 2.0]])
    >>> floor = wait_floor(0.9, cycle)
    >>> from netmodel.study.queueing import bulk_wait
    >>> all(floor[0, j] <= bulk_wait(0.9, cycle[0, :j + 1]) for j in range(3))
    True
    >>> round(float(floor[0, 0]), 4), round(bulk_wait(0.9, cycle[0, :1]), 4)   # M/D/1
    (4.5, 4.5)
    """
    cycle = np.asarray(cycle, dtype=float)
    b = np.arange(1, cycle.shape[1] + 1, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        d = np.minimum.accumulate(cycle / b, axis=1)
        lam = load * b / cycle
        r = np.minimum(lam * d, load)          # lambda d <= rho (rounding aside)
        floor = r * d / (2 * (1 - r)) - (b - 1) * d / 2
    floor = np.where(np.isfinite(floor), floor, 0.0)
    return np.maximum(floor * (1 - _FLOOR_SLACK), 0.0)


def prefill_waits(load: float, cycle: np.ndarray, batches: np.ndarray, steps: np.ndarray,
                  fits: np.ndarray, limit: float, score: np.ndarray,
                  slots: tuple | None = None) -> np.ndarray:
    """The waits (``nan`` where not taken) of the cells that fit and whose ``steps`` TTFT
    meets ``limit``, best ``score`` first, until the best that meets it with its wait and
    the cells tied with it are known. A cell's wait is its prefill batch's and, with
    ``slots`` (:func:`cell_waits`), its decode slot's.

    >>> cycle = np.array([[1.0, 1.5, 2.0]])       # one configuration, batches 1 .. 3
    >>> w = prefill_waits(0.5, cycle, np.arange(1, 4), np.array([[0.1, 0.2, 0.3]]),
    ...                   np.array([[True, True, True]]), 2.0, np.array([[1.0, 4 / 3, 1.5]]))
    >>> bool(np.isnan(w[0, 0])), bool(w[0, 2] > 0)   # batch 3 met it: batch 1 not taken
    (True, True)
    """
    _check_batches(batches)
    wait = np.full(steps.shape, np.nan)
    # a cell whose wait's floor takes it past the limit cannot meet it: not taken (nan, as
    # a taken cell that does not meet it is never chosen)
    floor, bulk = _floor(load, cycle, slots)
    cand = np.flatnonzero(fits & (steps <= limit) & (steps + floor <= limit))
    order = cand[np.argsort(-score.flat[cand], kind="stable")]
    for pos, cell in enumerate(order):
        low = _cell_slot_floor(load, cycle, cell, slots, floor.flat[cell] - bulk.flat[cell])
        if steps.flat[cell] + (bulk.flat[cell] + low) > limit:
            continue   # its floor with the busy bound misses: not taken
        wait.flat[cell] = w = _wait(load, cycle, cell, slots, limit - steps.flat[cell], low)
        if steps.flat[cell] + w <= limit:   # the best that meets it: then those tied with it
            best = float(score.flat[cell])
            rest = order[pos + 1:]
            tied = rest[score.flat[rest] >= best - abs(best) * TIE_RTOL]
            _tied_waits(load, cycle, steps, tied, float(steps.flat[cell] + w), wait, floor,
                        bulk, slots)
            break
    return wait


def _tied_waits(load: float, cycle: np.ndarray, steps: np.ndarray, tied: np.ndarray,
                fastest: float, wait: np.ndarray, floor: np.ndarray, bulk: np.ndarray,
                slots: tuple | None) -> None:
    """Into ``wait``, of the ``tied`` cells (scores tied with the best that meets the SLO,
    whose TTFT with its wait is ``fastest``), those that can have the lowest TTFT (the
    tied cells' choice, :func:`compute.search.best_of_equal`): shortest ``steps`` first,
    passing over a cell whose steps with its wait's floor exceed the fastest TTFT found, and
    stopping at the first whose steps alone do. A cell passed over has a TTFT above one
    that meets the SLO, so the choice is the one of every tied cell's wait: with a linear
    cycle (a KV transfer longer than the step, of one stream) every batch ties, and each
    wait is a ``B x B`` solve and ``c`` roots (``serve`` Llama-3-8B on ``h100-dgx``, prompt
    100, output 10, load 0.8: 370 cells, about 28 s of CPU, where 1 to 3 decide it)."""
    for cell in tied[np.argsort(steps.flat[tied], kind="stable")]:
        s = float(steps.flat[cell])
        if s > fastest:
            break
        if s + floor.flat[cell] > fastest:
            continue
        low = _cell_slot_floor(load, cycle, cell, slots, floor.flat[cell] - bulk.flat[cell])
        if s + (bulk.flat[cell] + low) > fastest:
            continue
        wait.flat[cell] = w = _wait(load, cycle, cell, slots, fastest - s, low)
        if w == w:   # nan: above the fastest, not taken
            fastest = min(fastest, s + w)


def fastest_waits(load: float, cycle: np.ndarray, steps: np.ndarray, fits: np.ndarray,
                  wait: np.ndarray, slots: tuple | None = None) -> np.ndarray:
    """``wait`` with the cells that fit taken, shortest ``steps`` first, until no cell left
    can beat the fastest TTFT with its wait (a wait is never negative; with ``slots`` the
    decode slot's too, as :func:`prefill_waits`)."""
    wait = wait.copy()
    done = fits & ~np.isnan(wait)
    fastest = float(np.min(steps[done] + wait[done])) if done.any() else np.inf
    todo = np.flatnonzero(fits & np.isnan(wait))
    floor, bulk = _floor(load, cycle, slots)
    for cell in todo[np.argsort(steps.flat[todo], kind="stable")]:
        if not steps.flat[cell] < fastest:
            break
        if steps.flat[cell] + floor.flat[cell] > fastest:   # cannot beat it: not taken
            continue
        low = _cell_slot_floor(load, cycle, cell, slots, floor.flat[cell] - bulk.flat[cell])
        if steps.flat[cell] + (bulk.flat[cell] + low) > fastest:
            continue   # its floor with the busy bound cannot beat it: not taken
        wait.flat[cell] = w = _wait(load, cycle, cell, slots, fastest - steps.flat[cell], low)
        if w == w:   # nan: cannot beat it, not taken
            fastest = min(fastest, float(steps.flat[cell] + w))
    return wait


def slot_wait(load: float, slots: int, rate: float, sizes: np.ndarray | None = None) -> float:
    """Mean seconds a request waits for a free slot of a decode instance running ``slots``
    sequences at once (its batch; continuous batching: a sequence leaves when done, another
    joins) that finishes ``rate`` requests/s, at ``load`` of that, each request holding a
    slot ``slots / rate`` seconds. The requests come in the bunches a prefill batch sends
    at once, ``sizes[k - 1]`` of the batches holding ``k``
    (:func:`~netmodel.study.queueing.bulk_sizes` of the prefill cell), at Poisson instants:
    M^X/D/c, ``c = slots`` (:func:`netmodel.study.queueing.mxdc_wait`); without ``sizes``
    one by one, M/D/c (:func:`~netmodel.study.queueing.mdc_wait`), never more. The
    request's KV cache needs the slot's room, so the wait comes before the transfer, in
    the TTFT.

    >>> slot_wait(0.5, 1, 2.0)          # one slot held 0.5 s: M/D/1, half of it at 0.5
    0.25
    >>> slot_wait(0.5, 1, 2.0, [0.0, 1.0])   # pairs: 0.5 s for the pair's, 0.25 behind the first
    0.75
    """
    if sizes is None:
        return mdc_wait(load, slots, slots / rate)
    return mxdc_wait(load, slots, slots / rate, sizes)


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
    wait is computed only where half its step is less than the least wait so far. The
    slot waits weighed are one by one's (M/D/c): the bunched ones, which the TTFT takes,
    turn on the prefill cell too, so the order is by their floor, not proven for them.
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
    latency = np.broadcast_to(np.asarray(grid.latency, dtype=float), ok.shape)
    half = latency / 2
    # a cell's waits from the grid's arrays, as decode_waits takes them from its result
    # (the same floats: grid.result copies them), the result made only for those yielded
    per_step = grid.tokens_per_step
    rows = grid.sequences is not None and len(grid.sequences) > 1
    for cell in np.argsort(-score, axis=None, kind="stable")[:int(ok.sum())]:
        if half.flat[cell] >= least:
            continue
        i, j = (int(k) for k in np.unravel_index(cell, ok.shape))
        step = float(latency[i, j])
        rate = float(per_step[i if rows else 0, j]) / step / tokens
        waits = sum((slot_wait(load, int(grid.batches[j]), rate), step / 2))
        if waits < least:
            least = waits
            yield grid.result(i, j)


def sized_pools(rate: float, load: float | None, p_rate: float, d_rate: float | None, pre,
                dec, cycle: np.ndarray, cell: int, slots: tuple | None,
                wait: float | None, d_wait: float | None) -> tuple[dict, float | None,
                                                                   float | None]:
    """The pools of :func:`netmodel.study.serving.serve` sized to ``rate``: whole instances
    enough to run it at ``load`` (all of their capacity without one) and, with a load, the
    prefill cell's waits at the loads those whole instances run at (no more than the stated
    load's, so the SLO still holds): its batch's (:func:`cell_waits`) and its decode slot's,
    up to :data:`~netmodel.study.serving_sim.SIMULATED_DECODE` decode instances by the
    pools simulated (:func:`~netmodel.study.serving_sim.pools_slot_wait`), beyond by
    M^X/D/c of the bunches as routed to them (:func:`routed_sizes`).

    Parameters
    ----------
    rate : float
        Requests/s the pools are sized for.
    load : float or None
        The stated load (fraction of the pools' capacity), None without one.
    p_rate, d_rate : float, float or None
        Requests/s of one prefill instance and of one decode instance (None or 0 without a
        decode instance).
    pre, dec : InferenceResult, InferenceResult or None
        The chosen prefill and decode instances (``dec`` None without one).
    cycle : numpy.ndarray
        The prefill cells' cycles, seconds (configurations x batches).
    cell : int
        The chosen prefill cell, a flat index into ``cycle``.
    slots : tuple or None
        The decode pool's load, an instance's slots and its requests/s at the stated load
        (as :func:`cell_waits` takes them), None without a load or a decode instance.
    wait, d_wait : float or None
        The cell's waits at the stated load, for its batch and for a decode slot
        (:func:`cell_waits`), None without a load.

    Returns
    -------
    extra : dict
        ``prefill_instances``, ``decode_instances``, ``gpus_used`` and, with a load,
        ``achieved_load`` and, with a decode slot's wait, ``decode_wait_model`` (with
        ``decode_wait_se_s`` where simulated): fields of
        :class:`~netmodel.study.serving_result.ServingResult`.
    wait, d_wait : float or None
        The cell's waits at the sized pools' loads (those given without a load).
    """
    need = rate / (load or 1.0)
    n_p = math.ceil(need / p_rate)
    n_d = math.ceil(need / d_rate) if d_rate else 0
    extra = dict(prefill_instances=n_p, decode_instances=n_d,
                 gpus_used=n_p * pre.gpus + n_d * (dec.gpus if dec else 0))
    if wait is not None:   # whole instances run below the load: the waits at theirs
        achieved = rate / (n_p * p_rate)   # (no more than the stated load's: the
        extra["achieved_load"] = achieved  # SLO still holds), the decode pool's too
        sim = slots is not None and n_d <= SIMULATED_DECODE
        wait, d_wait = cell_waits(achieved, cycle, cell, None if slots is None or sim
                                  else (min(rate / (n_d * d_rate), load),
                                        dec.batch, d_rate, n_d))
        if sim:   # a few decode instances: the pools simulated (serving_sim)
            got = pools_slot_wait(achieved, _services(cycle, cell), n_p, dec.batch,
                                  dec.batch / d_rate, n_d)
            d_wait = got.wait_s
            extra["decode_wait_se_s"] = got.se_s if got.simulated else None
            extra["decode_wait_model"] = ("none waits" if not got.simulated else
                                          "simulated, cut by the budget" if got.cut
                                          else "simulated")
        elif slots is not None:
            extra["decode_wait_model"] = "M^X/D/c, routed"
    return extra, wait, d_wait
