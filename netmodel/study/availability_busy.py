"""The spares busy in a pool, in closed form: the Markov chain of the failures in progress
and the spares each holds (:func:`_chain`, one pool or pools asked together, each
failure's asks granted as :func:`~netmodel.study.availability_kinds.best_grant` picks),
built a level at a time and solved for its steady state; past
:data:`MAX_SEQUENTIAL_STATES` states the chain with one repair time, and past that
Kaufman-Roberts' recursion over the spares busy (:func:`_busy_recursion`, an Erlang loss
system of many rates). The fallbacks' names and how the notes say them
(:func:`fallback_words`). Split from :mod:`netmodel.study.availability_analytic`, which
turns the failure kinds into the chains' classes and reads their blocking.

Neither the chain nor the recursion is monotone in the pool's size where grants are in
part (a failure that finds one spare more may take more and leave the next short), and
the recursion bumps where the chain does not (:func:`_busy_recursion`): no search over
the pool assumes either falls as it grows
(:func:`~netmodel.study.availability._smallest_pool`; the analytic summary scans every
size).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from compute.memo import Lru
from compute.units import counted
from netmodel.study.availability_chain import _breadth_first, _one_pool_reads, _States
from netmodel.study.availability_kinds import best_grant
from netmodel.study.availability_solve import _steady_state, _Unsettled

__all__ = ["FALLBACK_APART", "FALLBACK_INDEPENDENT", "FALLBACK_ONE_HOLD",
           "FALLBACK_ONE_HOLD_TOGETHER", "MAX_COUPLED_STATES", "MAX_SEQUENTIAL_STATES",
           "fallback_words"]


#: Most states of one chain (:func:`_chain`: one pool's in
#: :func:`~netmodel.study.availability_analytic._sequential`, the pools asked together in
#: :func:`~netmodel.study.availability_analytic._coupled_blocking`), both built a level at a
#: time (:func:`_chain_states`) and solved by :func:`_steady_state` (GMRES past its direct
#: limit), the solve most of the time and its memory growing about in proportion: one
#: global pool of Llama-3-8B prefill on 2,048 lite-flat GPUs (vendor repair; a host's
#: failure takes the free spares up to 32, a Lite failure one) at 25 spares is 9,296
#: states of 54,109 transitions, 0.18 s built and 0.38 s solved (13 MB at the peak); 26,
#: 11,732, 0.17 + 0.56 s (17 MB); 28, 18,460, 0.20 + 1.03 s (27 MB); 30, 28,629, 0.32 +
#: 1.23 s (42 MB); 33, 53,962, 0.33 + 2.36 s (81 MB) (two busy cores). Past it the chain
#: with one repair time (:func:`_chain`), and past that too Kaufman-Roberts' recursion
#: over the spares busy with each failure's grant whole (:func:`_busy_recursion`; the
#: pools apart), an approximation. Pools asked together stop at
#: :data:`MAX_COUPLED_STATES` instead.
MAX_SEQUENTIAL_STATES = 30_000
#: Most states of the chain of pools asked together
#: (:func:`~netmodel.study.availability_analytic._coupled_blocking`), past which it too
#: falls back to one repair time (:data:`FALLBACK_ONE_HOLD_TOGETHER`). Its
#: steady state is solved by BiCGSTAB (:func:`~netmodel.study.availability_solve.
#: _bicgstab`), not GMRES nor SuperLU (whose fill-in on these chains runs to 89 million
#: entries at 26,663 states): two pools asked by an instance spanning both (9 Erlangs)
#: and each by its own kind of another repair time (0.3 Erlangs) built and solved 7,942
#: states (9 spares each) in 0.04 s CPU, 6 MB over the process's start; 26,663 (12) 0.13 s,
#: 20 MB; 93,993 (16) 0.50 s, 69 MB; 159,334 (18) 0.92 s, 123 MB; where by GMRES 0.15 s,
#: 13 MB; 0.64 s, 41 MB; 2.36 s, 142 MB; 4.91 s, 232 MB. It was 10,000 while GMRES
#: solved it, then one pool's 30,000 (:data:`MAX_SEQUENTIAL_STATES`).
MAX_COUPLED_STATES = 100_000
#: The closed form's fallbacks past :data:`MAX_SEQUENTIAL_STATES` (each an approximation),
#: as :attr:`~netmodel.study.availability_analytic.Analytic.fallback` names them: the chain
#: with every repair time taken as one (of one pool; of pools asked together, past
#: :data:`MAX_COUPLED_STATES`);
#: a pool's failures each granted one ask of the size its grant takes, over the spares busy
#: alone (Kaufman-Roberts' recursion, :func:`_busy_recursion`); pools that one failure
#: asks together taken apart.
FALLBACK_ONE_HOLD = "one repair time"
FALLBACK_ONE_HOLD_TOGETHER = "one repair time for pools asked together"
FALLBACK_INDEPENDENT = "the spares busy alone"
FALLBACK_APART = "pools taken apart"


def fallback_words(fallback: Iterable[str]) -> str:
    """What the closed form did past the spare chain's limit, named by ``fallback``
    (:attr:`~netmodel.study.availability_analytic.Analytic.fallback`'s names), as availability's and
    compare's notes say it (the limit read from this module when called).

    >>> fallback_words([FALLBACK_ONE_HOLD])
    "passed the spare chain's limit (30,000 states) and fell back to one repair time"
    >>> fallback_words([FALLBACK_APART])
    "passed the spare chain's limit (100,000 states of pools asked together) and fell back to pools taken apart"
    >>> fallback_words([FALLBACK_ONE_HOLD_TOGETHER])
    "passed the spare chain's limit (100,000 states of pools asked together) and fell back to one repair time for pools asked together"
    """
    fallback = list(fallback)
    limits = [counted(MAX_SEQUENTIAL_STATES, "state")] \
        if set(fallback) & {FALLBACK_ONE_HOLD, FALLBACK_INDEPENDENT} else []
    if set(fallback) & {FALLBACK_APART, FALLBACK_ONE_HOLD_TOGETHER}:
        limits.append(f"{counted(MAX_COUPLED_STATES, 'state')} of pools asked together")
    return (f"passed the spare chain's limit ({'; '.join(limits)}) "
            f"and fell back to {', '.join(fallback)}")


def _busy_recursion(cap: int, classes: list) -> np.ndarray:
    """The share of time (and of arrivals, PASTA) that each number of a pool's ``cap``
    spares is busy, where ``classes`` ``(load, grants)`` offer ``load`` Erlangs (rate x
    mean hold) of failures that take ``grants[j]`` spares with ``j`` busy (at most the
    ``cap - j`` free; 0: refused all): Kaufman-Roberts' recursion with each failure's grant
    one ask of its size, ``n q(n) = sum_k load_k sum_{j + g = n} g q(j)``, ``g =
    grants_k[j] > 0``. Exact where each grant is one size whatever is free (all or
    nothing: Kaufman-Roberts itself); a grant of what is free up to some size (a failure
    re-creating as many instances as the free spares hold) takes it as Kaufman's retries,
    asking each smaller size where the larger does not fit (an approximation: it keeps a
    failure's spares together, taken and given back at once, where independent asks of
    one spare each spread them over single holds).

    Not monotone in ``cap`` where grants are in part, as the chain is not either (kinds
    (load, n, g) = (4, 3, 1), (2, 4, 3): the chain's instances lost a second rise 13.290 ->
    13.334 from 11 to 12 spares, a grant of all four of the second kind's instances fitting
    an empty pool of 12 and holding it whole); it also bumps where the chain does not. Its
    flow into a level ``n`` counts a grant in part only where it lands, and its flow back
    down leaves from there, where in the chain the failure holds it as others leave: levels
    reached only so are lost (three kinds at 2 Erlangs, (n, g) = (2, 1), (2, 1), (5, 2), 11
    spares: every whole grant even, the recursion puts no weight on odd levels but the full
    pool, the chain 0.011-0.110 on each of 1, 3, .., 9), and its error turns with the pool's
    parity, 11 -> 12 spares losing 11.339 -> 11.364 instances a second where the chain loses
    11.511 -> 11.267 (tests/netmodel/test_recursion_not_monotone_known.py). Over 200 random
    sets of one to three kinds (loads 0.25-4 Erlangs, 1-5 instances of 1-3 spares), pools of
    0-20: 5 sets bump against the chain's 2 (it reproduces both, and 13 steps of its own),
    its instances lost within 5.4% of the chain's (mean 0.39%). No monotone form can be
    right where the chain is not; the recursion for batches of independent holds (Kaufman
    and Rege, 1996: a grant's instances each released apart, a truncation of one sequence
    whatever the pool) does not bump there but misses the chain by up to 99% (mean 9%), so
    it is not used. On a shipped case, ``lite-flat`` Llama-3-8B prefill with global spares
    (the recursion from 31), the time below 99% rises 4.48846e-6 -> 4.48909e-6 from 34 to 40
    spares where the whole chain (its limit raised) reads 4.48819e-6 -> 4.48818e-6: far
    below the 0.1% that sizes the pool.

    Erlang B(2, 1) = 0.2: one spare each, 1 Erlang; a failure taking the 2 free or, where
    1 is, that one, at 0.5 Erlangs, fills the pool (as exact: 2 busy 0.5 / 1.5 of the time):

    >>> [round(float(v), 6) for v in _busy_recursion(2, [(1.0, [1, 1, 0])])]
    [0.4, 0.4, 0.2]
    >>> [round(float(v), 6) for v in _busy_recursion(2, [(0.5, [2, 1, 0])])]
    [0.666667, 0.0, 0.333333]
    """
    q = np.zeros(cap + 1)
    q[0] = 1.0
    ahead = np.zeros(cap + 1)   # each level's sum of load x spares x q(from), so far
    for j in range(cap + 1):
        if j:
            q[j] = ahead[j] / j
        if q[j] > 1e250:   # keep the floats in range: the shares are what count
            ahead /= q[j]
            q /= q[j]
        for load, grants in classes:
            g = int(grants[j])
            if g > 0 and load > 0:
                ahead[j + g] += load * g * q[j]
    return q / q.sum()


def _chain(caps: tuple, classes: list,
           notes: set | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Pools of ``caps`` spares asked by ``classes``: ``(rate, hold, asks)`` each, its
    failures at ``rate`` a second asking ``(pool, spares, restores)`` (each pool's asks
    granted as :func:`~netmodel.study.availability_kinds.best_grant` picks) and holding what
    they were granted for ``hold`` s (exponential). The Markov chain of the failures in
    progress by hold and the spares each holds, in its steady state: the spares busy in
    each pool (states x pools) and each state's probability, which an arrival sees
    (PASTA); None where a hold is 0.

    Past :data:`MAX_SEQUENTIAL_STATES` states (several pools: :data:`MAX_COUPLED_STATES`),
    the chain with every hold taken as one,
    each class's offered load (rate x hold) kept: a state is then the spares each failure
    in progress holds, far fewer (the same values where each failure's grant is one size,
    the loss system being insensitive; else another approximation of the fixed holds,
    where the recursion over the spares busy below it keeps only their count; ``notes``, where given, gets
    :data:`FALLBACK_ONE_HOLD`, several pools :data:`FALLBACK_ONE_HOLD_TOGETHER`); None
    past that limit too.

    Two kinds of one spare each, loads 1 and 0.5 x 3 Erlangs, on a pool of 2: Erlang
    B(2, 2.5) = 3.125 / 6.625 whatever the holds, so with one hold too:

    >>> busy, p = _chain_of((2,), [(1.0, 1.0, [(0, 1, 1.0)]), (0.5, 3.0, [(0, 1, 1.0)])])
    >>> len(p), round(float(p @ (busy[:, 0] == 2)), 12) == round(3.125 / 6.625, 12)
    (6, True)
    >>> busy, p = _chain_of((2,), [(1 / 3, 3.0, [(0, 1, 1.0)]), (0.5, 3.0, [(0, 1, 1.0)])])
    >>> len(p), round(float(p @ (busy[:, 0] == 2)), 12) == round(3.125 / 6.625, 12)
    (3, True)
    """
    if any(hold <= 0 for _, hold, _ in classes):
        return None
    out = _chain_of(caps, classes)
    if out is None and len({hold for _, hold, _ in classes}) > 1:
        one = max(hold for _, hold, _ in classes)
        out = _chain_of(caps, [(lam * hold / one, one, asks) for lam, hold, asks in classes])
        if out is not None and notes is not None:
            notes.add(FALLBACK_ONE_HOLD if len(caps) == 1 else FALLBACK_ONE_HOLD_TOGETHER)
    return out


def _chain_of(caps: tuple, classes: list) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_chain`'s Markov chain as the classes give it (:func:`_chain_states`), in
    its steady state; None past :data:`MAX_SEQUENTIAL_STATES` states (several pools:
    :data:`MAX_COUPLED_STATES`)."""
    key = None
    if len(caps) == 1:   # one pool: named by what its chain reads (_one_pool_reads)
        arrivals = _arrivals(caps, classes, {})   # each count's answers read once
        key = (_one_pool_reads(caps[0], arrivals),
               tuple(lam for lam, _, _ in classes), MAX_SEQUENTIAL_STATES,
               _breadth_first, _steady_state)
        hit = _KEPT.recall(key, _KEPT)   # _KEPT itself: none kept (None is a value)
        if hit is not _KEPT:
            return hit
    out = _solved(caps, classes, arrivals if key is not None else None)
    if key is not None:
        if out is not None:   # kept: read-only, shared by the pools that read alike
            for a in out:
                a.flags.writeable = False
        _KEPT.put(key, out)   # threads share it unlocked: Lru tolerates that
    return out


#: Steady states of one pool's chain of the busy count kept (:func:`_chain_of`), the
#: least recently read dropped first, by what the chain reads of its classes
#: (:func:`~netmodel.study.availability_chain._one_pool_reads`), its rates, its limit and
#: the functions that build and solve it: the spare search and the spare curve ask the
#: same chain again for the next pool where no grant can take its one spare more
#: (``study lite-gpu``'s blast radius: 140 chains, 41 distinct, each met again at most
#: 26 chains later; the same floats, bit for bit, as building and solving it again).
_KEPT_CHAINS = 32
_KEPT = Lru(_KEPT_CHAINS)


def _solved(caps: tuple, classes: list, arrivals=None
            ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_chain_of`, built and solved (not kept); ``arrivals``: the classes'
    (:func:`_arrivals`), if made already."""
    chain = _chain_states(caps, classes, arrivals)
    if chain is None:
        return None
    try:
        return chain.busy, _steady_state(len(chain.busy), chain.rows, chain.cols,
                                         chain.vals, coupled=len(caps) > 1)
    except _Unsettled:   # pools asked together, unsettled (never seen): as past the limit
        return None


def _chain_states(caps: tuple, classes: list, arrivals=None) -> _States | None:
    """:func:`_chain`'s Markov chain as the classes give it (:func:`_breadth_first`): a
    failure in progress is its hold and the spares it holds of each pool (its type: those
    alike leave alike; types ordered by hold, then spares), each class's arrival adding
    the type its grant makes (:func:`_grants`, or one pool's rule) where it takes any
    spare; None past :data:`MAX_SEQUENTIAL_STATES` states (several pools: past
    :data:`MAX_COUPLED_STATES` instead).

    >>> chain = _chain_states((2,), [(1.0, 1.0, [(0, 1, 1.0)]), (0.5, 3.0, [(0, 1, 1.0)])])
    >>> chain.types, chain.counts.tolist(), chain.busy[:, 0].tolist()
    ([(0, (1,)), (1, (1,))], [[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]], [0, 1, 1, 2, 2, 2])
    >>> [(int(i), int(j), float(v)) for i, j, v in zip(chain.rows[:4], chain.cols[:4],
    ...                                                 chain.vals[:4], strict=True)]
    [(0, 1, 1.0), (0, 2, 0.5), (1, 3, 1.0), (1, 4, 0.5)]
    """
    return _breadth_first(caps, [lam for lam, _, _ in classes],
                          arrivals or _arrivals(caps, classes),
                          MAX_SEQUENTIAL_STATES if len(caps) == 1 else MAX_COUPLED_STATES)


def _arrivals(caps: tuple, classes: list, memo: dict | None = None):
    """:func:`_chain_states`' ``arrivals`` for :func:`_breadth_first`: each class's
    arrival with ``used`` busy adds the type ``(its hold's place among the holds, the
    spares granted of each pool)``, None where it takes none; ``memo``: a dict its
    answers are kept in, by ``used`` (the caller's: for one pool's chain and its
    name, :func:`_chain_of`)."""
    holds = sorted({hold for _, hold, _ in classes})

    def arrivals(used: tuple) -> list:
        if memo is not None and used in memo:
            return memo[used]
        out = []
        for lam, hold, asks in classes:
            # asks: a list, or one pool's rule (free -> spares taken)
            vec = (int(asks(caps[0] - used[0])),) if callable(asks) \
                else _grants(caps, used, asks)
            out.append(((holds.index(hold), vec), vec, hold) if any(vec) and lam > 0
                       else None)
        if memo is not None:
            memo[used] = out
        return out

    return arrivals


def _grants(caps, used, asks) -> tuple[int, ...]:
    """The spares one failure's ``asks`` ``(pool, spares, restores)`` are granted of each
    pool with ``used`` busy (:func:`_granted`)."""
    got = [0] * len(caps)
    for (pool, u, _), ok in zip(asks, _granted(caps, used, asks), strict=True):
        got[pool] += u if ok else 0
    return tuple(got)


def _granted(caps, used, asks) -> list[bool]:
    """Whether each of one failure's ``asks`` ``(pool, spares, restores)`` is granted
    with ``used`` busy: each pool's asks as :func:`~netmodel.study.availability_kinds.
    best_grant` picks from its free spares."""
    out = [False] * len(asks)
    for pool in sorted({a[0] for a in asks}):
        ix = [i for i, a in enumerate(asks) if a[0] == pool]
        picks = best_grant(tuple(asks[i][1] for i in ix), tuple(asks[i][2] for i in ix),
                           caps[pool] - used[pool])
        for i, ok in zip(ix, picks, strict=True):
            out[i] = ok
    return out
