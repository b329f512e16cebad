"""The decode slot's wait where a few decode instances take a sized prefill pool's every
batch, by a seeded simulation of the pools, for :func:`netmodel.study.serving.serve` with
a rate.

M^X/D/c (:func:`netmodel.study.queueing.mxdc_wait`) takes the prefill's batches at Poisson
instants, which a large decode pool's random split makes exact (Renyi). One decode
instance takes the prefill pool's whole output, whose batches a busy prefill instance sends
a cycle apart: its counts are bunched over a short span and smoother than Poisson over a
long one, correlated over many holds, and no model of a single hold's count gives its
wait (M/D/c is 10% and 53% under and 7.8 times over in three simulated cases); a few
take a large share of it each (:func:`~netmodel.study.serving_queue.routed_sizes`'
approximation is -3% to +8% of a simulation at 2 and 4 instances, but 5 times over for
Llama-3-70B's 2 at 100 requests/s, ``vllm-dgx-h100``, load 0.9). So up to
:data:`SIMULATED_DECODE` decode instances the pools are simulated
(:func:`pools_slot_wait`), exactly as they are modelled:

* each of ``n_p`` prefill instances gets Poisson arrivals at ``lambda``; a free instance
  takes every waiting request up to ``B`` (an idle one the first to come, alone), a batch
  of ``k`` taking ``S_k``. Only its batch ends and sizes matter, so it is run by its
  embedded chain: from ``x`` waiting at a batch's end the next takes ``k = min(x, B)`` (or
  1 after an idle wait, exponential), ends ``S_k`` later with ``x - k`` plus a Poisson
  ``lambda S_k`` waiting. One step a batch, every instance of every replication at once
  (a numpy array across them), so the loop runs once per batch of one instance;
* each batch's ``k`` requests go whole to one of ``n_d`` decode instances chosen at random
  (every one to the one), arriving at the batch's end;
* a decode instance of ``c`` slots each held ``D``, first come first served, starts its
  ``i``-th request at ``s_i = max(a_i, s_(i-c) + D)`` (requests start in the order they
  come, and the slot that frees first is the ``(i - c)``-th's); by ``i mod c`` that is ``c``
  single-server Lindley chains ``s_m = max(a_m, s_(m-1) + D)``, ``s_m = m D + max_(j <= m)
  (a_j - j D)``: a running maximum (``np.maximum.accumulate``), no loop, and the wait
  ``s_m - a_m`` the running maximum of ``a_j - j D`` less its own.

The mean is over the requests of independent replications (each its own prefill
instances and decode instances, from empty), those that come in the first quarter of each
dropped: the ratio of the replications' summed waits to their counts, its standard error
the ratio's (by the replications' residuals, ``sum_r (W_r - mean N_r)^2``). A replication
runs 16 relaxation times of the slower queue (of each, ``4 W / (1 - rho) + S``, ``W`` its
mean wait, ``S`` its service: a queue's heavy-traffic relaxation time is twice its
variance over its drift squared, ``4 W / (1 - rho)`` in a service's units), so four are
dropped; and at least 8 requests a slot. Where 16 of them would take more than the first
round's share of :data:`MAX_BATCHES` or :data:`MAX_REQUESTS` (:data:`MIN_REPS`
replications) or :data:`MAX_STEPS` a replication, it runs that, and drops less than four
(a load near 1): what is left of the start from empty biases the mean low, which the
standard error does not count, so the result says so (:attr:`SlotWait.cut`). Replications are added, round by round, until the standard error is at
most :data:`REL_SE` of the mean or :data:`ABS_SE`, within :data:`MAX_BATCHES` batches and
:data:`MAX_REQUESTS` requests in all (one replication's requests in memory at a time).
A fixed seed: the same arguments give the same figures.

Where no window of a hold can bring more than ``c`` requests (a batch of ``k`` takes
``S_k``, so an instance ends at most ``B + D max_k k / S_k`` requests' batches within ``D``),
no request ever waits, and the wait is 0 without a simulation: the ``i``-th waits only if
the ``(i - c)``-th to the ``i``-th came within ``D`` (a lightly loaded instance of many
slots; :attr:`SlotWait.simulated` false).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["ABS_SE", "MAX_BATCHES", "MAX_REQUESTS", "MAX_STEPS", "REL_SE", "SIMULATED_DECODE",
           "SlotWait", "pools_slot_wait"]

#: :func:`netmodel.study.serving.serve` simulates a sized decode pool of this many instances
#: or fewer (more take :func:`netmodel.study.serving_queue.routed_sizes`)
SIMULATED_DECODE = 4

#: The standard error wanted, relative to the mean wait
REL_SE = 0.02
#: ... or absolute, seconds (the table's last digit, 0.01 ms)
ABS_SE = 1e-5
#: The most batches simulated in all (every prefill instance of every replication)
MAX_BATCHES = 2_000_000
#: The most requests simulated in all (a batch brings up to ``B``)
MAX_REQUESTS = 32_000_000
#: The most steps of the loop (batches of one instance) in one replication
MAX_STEPS = 20_000
#: Replications a round, at least
MIN_REPS = 16
#: Prefill instances a round (over every replication), at least
MIN_LANES = 128
#: Requests of the first round, at most (where MIN_REPS replications hold fewer)
PILOT = 200_000


class SlotWait(NamedTuple):
    """:func:`pools_slot_wait`'s answer."""

    #: the mean wait for a decode slot, seconds
    wait_s: float
    #: its standard error, seconds (0 where not simulated)
    se_s: float
    #: false where no hold can bring more than ``c`` requests: 0 exactly, nothing simulated
    simulated: bool = True
    #: the budget cut every replication short, so less than four relaxation times were
    #: dropped (a load near 1): the start from empty left in biases the mean low, and the
    #: standard error, which does not count it, understates the error
    cut: bool = False


def _prefill(lam: float, s: np.ndarray, lanes: int, horizon: float,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The batch ends and sizes (steps x ``lanes``) of ``lanes`` independent bulk-service
    instances from empty, each run past ``horizon`` seconds."""
    b = s.size
    f = np.zeros(lanes)
    x = np.zeros(lanes, dtype=np.int64)
    held = np.r_[0.0, s]            # by k: a batch's time, and the Poisson mean of the
    came = lam * held               # arrivals while it runs
    chunk = 64
    ends = np.empty((chunk, lanes))
    sizes = np.empty((chunk, lanes), dtype=np.int64)
    step = 0
    while True:
        if step % chunk == 0:
            if step and f.min() >= horizon:
                return ends[:step], sizes[:step]
            if step == ends.shape[0]:
                ends = np.concatenate([ends, np.empty_like(ends)])
                sizes = np.concatenate([sizes, np.empty_like(sizes)])
            gaps = rng.exponential(1 / lam, (chunk, lanes))
        idle = x == 0
        k = np.minimum(np.maximum(x, 1), b)   # an idle instance: the first to come, alone
        f += held[k]
        f += idle * gaps[step % chunk]
        x += idle
        x -= k
        x += rng.poisson(came[k])
        ends[step] = f
        sizes[step] = k
        step += 1


def _decode_waits(ends: np.ndarray, sizes: np.ndarray, reps: int, n_d: int, slots: int,
                  hold: float, horizon: float, warm: float,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Each replication's summed decode slot wait and count of its requests that come after
    ``warm`` of ``horizon`` (every request before ``horizon`` queues), its prefill instances'
    batches (``ends``, ``sizes``: steps x lanes, replication-major lanes) sent whole to one
    of ``n_d`` instances at random; and the requests simulated."""
    # a replication's instances one after the other: sorted runs, which a stable sort merges
    t = ends.T.reshape(reps, -1)
    k = sizes.T.reshape(reps, -1).copy()
    k[t >= horizon] = 0
    order = np.argsort(t, axis=1, kind="stable")
    t = np.take_along_axis(t, order, axis=1)
    k = np.take_along_axis(k, order, axis=1)
    if n_d > 1:   # each batch to one instance: grouped by instance, in time (a radix sort)
        to = rng.integers(n_d, size=t.shape, dtype=np.int8)
        order = np.argsort(to, axis=1, kind="stable")
        t = np.take_along_axis(t, order, axis=1)
        k = np.take_along_axis(k, order, axis=1)
        to = np.take_along_axis(to, order, axis=1)
        counts = np.bincount((np.arange(reps)[:, None] * n_d + to).ravel(),
                             weights=k.ravel(), minlength=reps * n_d).astype(np.int64)
    else:
        counts = k.sum(axis=1)
    counts = counts.reshape(reps, n_d)
    steps = np.arange(-(-int(counts.max()) // slots))[:, None] * hold
    sums, kept = np.zeros(reps), np.zeros(reps, dtype=np.int64)
    for r in range(reps):   # an instance's requests, rows of c, a chain a column
        flat = np.repeat(t[r], k[r])
        start = 0
        for n in counts[r]:
            if n:
                a = flat[start:start + n]
                m = -(-n // slots)   # the last row filled after the last: no wait moves
                b = np.full(m * slots, a[-1])
                b[:n] = a
                b = b.reshape(m, slots) - steps[:m]
                w = np.maximum.accumulate(b, axis=0)
                w -= b
                first = int(np.searchsorted(a, warm * horizon))
                sums[r] += w.ravel()[first:n].sum()
                kept[r] += n - first
            start += n
    return sums, kept, int(counts.sum())


def pools_slot_wait(load: float, services, prefill: int, slots: int, hold: float,
                    decode: int = 1, seed: int = 0, rel_se: float = REL_SE,
                    abs_se: float = ABS_SE) -> SlotWait:
    """The mean wait for a decode slot and its standard error, seconds, of ``prefill``
    bulk-service instances at ``load`` (batches up to ``B = len(services)``, a batch of
    ``k`` taking ``services[k - 1]`` seconds; Poisson arrivals at ``load B / S_B`` each)
    whose batches go whole to one of ``decode`` instances chosen at random, each of
    ``slots`` slots held ``hold`` seconds, first come first served (the module's
    simulation), and whether it was simulated and its warm-up cut by the budget
    (:class:`SlotWait`).

    A prefill of a microsecond at a millionth of its capacity passes Poisson arrivals of
    1/s on, one at a time: M/D/1 at 0.5, a wait of ``rho D / (2 (1 - rho)) = 0.25`` s:

    >>> w, se, simulated, cut = pools_slot_wait(1e-6, [1e-6], 1, 1, 0.5)
    >>> abs(w - 0.25) < 4 * se < 0.02, simulated, cut
    (True, True, False)

    Four instances whose batches of up to 2 end at least 0.5 s apart bring at most ``4 (2 +
    0.5 x 2 / 0.5) = 16`` requests within a hold of 0.5 s: 16 slots never wait.

    >>> pools_slot_wait(0.9, [0.4, 0.5], 4, 16, 0.5)
    SlotWait(wait_s=0.0, se_s=0.0, simulated=False, cut=False)
    """
    from netmodel.study.queueing import bulk_sizes, bulk_wait, mxdc_wait

    s = np.asarray(services, dtype=float).reshape(-1)
    if not (s.size and np.all(s > 0) and np.all(np.isfinite(s)) and 0 < load < 1
            and hold > 0 and min(prefill, slots, decode) >= 1):
        raise ValueError(f"pools_slot_wait: no queue at load {load!r}, services {services!r}, "
                         f"{prefill} prefill, {slots} slots of {hold!r} s, {decode} decode")
    b = s.size
    lam = load * b / s[-1]
    rho_d = prefill * lam * hold / (slots * decode)
    if not 0 < rho_d < 1:
        raise ValueError(f"pools_slot_wait: the decode load {float(rho_d)!r} is not below 1")
    # a batch of k takes S_k, so an instance ends at most B + D max_k k / S_k requests'
    # batches within a hold D; where the pool's cannot exceed c, none ever waits
    if prefill * (b + hold * float(np.max(np.arange(1, b + 1) / s))) <= slots:
        return SlotWait(0.0, 0.0, simulated=False)
    law = bulk_sizes(load, s)
    mean_k = float(np.arange(1, b + 1) @ law)
    w_p = bulk_wait(load, s)
    w_d = mxdc_wait(rho_d, slots, hold, law)
    relax = max(4 * w_p / (1 - load) + s[-1], 4 * w_d / (1 - rho_d) + hold)
    # a quarter dropped: four relaxation times, within the budget the first round's
    # MIN_REPS replications may take; and at least 8 requests a slot's chain
    rate = lam / mean_k   # batches a second of one instance
    most = min(min(MAX_STEPS, MAX_BATCHES / (MIN_REPS * prefill)) / rate,
               MAX_REQUESTS / (MIN_REPS * prefill * lam))
    horizon = max(min(16 * relax, most), 8 * slots * decode / (prefill * lam))
    cut = bool(horizon < 16 * relax)   # less than four relaxation times dropped
    rng = np.random.default_rng(seed)
    sums, kept = np.empty(0), np.empty(0, dtype=np.int64)
    # the first round: enough instances for the loop's arrays, within PILOT requests
    per_rep = prefill * lam * horizon
    reps = max(MIN_REPS, min(-(-MIN_LANES // prefill), int(PILOT / per_rep)))
    budget, left = MAX_BATCHES, MAX_REQUESTS
    while True:
        ends, sizes = _prefill(lam, s, reps * prefill, horizon, rng)
        budget -= ends.size
        got, n, done = _decode_waits(ends, sizes, reps, decode, slots, hold, horizon, 1 / 4,
                                     rng)
        left -= done
        sums, kept = np.r_[sums, got], np.r_[kept, n]
        # the mean over every kept request of every replication, a ratio of their sums: its
        # standard error by the replications' residuals (none kept: none waited)
        mean = float(sums.sum() / max(int(kept.sum()), 1))
        per = float(kept.mean())
        se = float(np.sqrt(np.sum((sums - mean * kept) ** 2) / (sums.size * (sums.size - 1)))
                   / per) if per else 0.0
        goal = max(rel_se * mean, abs_se)
        # the replications the goal wants besides (the standard error as 1 / sqrt(n)),
        # within the budgets
        more = min(math.ceil(sums.size * ((se / goal) ** 2 - 1)),
                   int(budget / (ends.size / reps)), int(left / max(done / reps, 1)))
        if se <= goal or more < 2:
            return SlotWait(mean, se, cut=cut)
        reps = more
