"""The spare pools' Markov chains of the failures in progress, built breadth first a level
at a time: each failure in progress a type (what it holds, how long), a state the count of
each type (one integer key), each level's arrivals, departures and new states found by
array operations. The chains of the busy count
(:func:`~netmodel.study.availability_busy._chain_states`) and of holdings
(:class:`~netmodel.study.availability_threshold._HeldChain`) are built by it; what it reads
of one pool's classes, the same for pools whose chains are the same
(:func:`_one_pool_reads`), names a chain for both to keep its steady state by.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class _States(NamedTuple):
    """A chain's states in the order met (breadth first from no failure in progress) and
    its transitions (:func:`_breadth_first`)."""

    types: list          #: each type of failure in progress: its key, as the caller gave it
    counts: np.ndarray   #: states x types: the failures in progress of each type
    busy: np.ndarray     #: states x pools: the spares busy
    rows: np.ndarray     #: each transition's state from, ...
    cols: np.ndarray     #: ... to, ...
    vals: np.ndarray     #: ... and rate (1/s); each state's arrivals by class, then its
    #: departures by type in the types' sorted order


#: A chain's state keys (:func:`_breadth_first`) are machine integers while their mixed
#: radix stays below this; past it Python's (an object array: slower, as exact).
_INT_KEYS = 2 ** 62


def _breadth_first(caps: tuple, rates: list, arrivals, limit: int) -> _States | None:
    """The Markov chain of the failures in progress on pools of ``caps`` spares, met
    breadth first from none in progress: classes of failures arriving at ``rates`` a
    second, ``arrivals(used)`` (``used``: the spares busy of each pool) giving each class's
    arrival the failure type it adds, ``(key, spares it holds of each pool, hold)`` (a
    grant never takes more than is free), or None where it adds none; a failure leaves
    at 1 / its hold a second. A state is the count of each type in progress, its
    transitions its classes' arrivals, then one departure of each type it holds, the
    types in their keys' order (the state's index by breadth first search, so that its
    steady state's floats do not hang on how it was built); None past ``limit`` states
    (:func:`~netmodel.study.availability_busy._chain_states`,
    :class:`~netmodel.study.availability_threshold._HeldChain`).

    A state is one integer, each type's count a digit of a mixed radix (a type's count is
    at most the spares of a pool over its grant there), so a level of the search is a few
    array operations: the spares busy of its states, each distinct count's arrivals
    worked out once, arrivals add a type's place, departures take it off, and the states
    not met before are numbered in the order they are first reached (their counts: the
    state first reaching each, one failure more or less). A level's arrays hold at most
    its states (at most ``limit``, checked after each level) times the classes and types.

    Two classes of one spare each on a pool of 2, holds 1 and 3 s:

    >>> chain = _breadth_first((2,), [1.0, 0.5], lambda used: [
    ...     (("a",), (1,), 1.0) if used[0] < 2 else None,
    ...     (("b",), (1,), 3.0) if used[0] < 2 else None], 10)
    >>> chain.counts.tolist(), chain.busy[:, 0].tolist()
    ([[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]], [0, 1, 1, 2, 2, 2])
    >>> [round(float(v), 3) for v in chain.vals[chain.rows == 4]]   # one of each: out
    [1.0, 0.333]
    >>> _breadth_first((2,), [1.0], lambda used: [(("a",), (1,), 1.0) if used[0] < 2
    ...                                            else None], 2)   # 3 states
    """
    m = len(caps)
    types: list = []          # their keys, in the order met
    seen: dict = {}           # key -> the type's index
    place: list = []          # each type's place in a key (its count's digit)
    vecs: list = []           # the spares each holds of each pool
    holds: list = []
    span = [1]                # the next type's place: every key so far is below it

    def lookup(used: tuple) -> list[int]:   # each class's arrival's type, -1: none
        out = []
        for got in arrivals(used):
            if got is None:
                out.append(-1)
                continue
            key, vec, hold = got
            if any(v > cap - u for v, cap, u in zip(vec, caps, used, strict=True)):
                raise ValueError(f"arrivals: a grant of {vec} spares where {used} of caps "
                                 f"{caps} are busy takes more than are free")
            if key not in seen:
                seen[key] = len(types)
                types.append(key)
                vecs.append(tuple(vec))
                holds.append(hold)
                place.append(span[0])   # its count: at most a pool's spares over its grant
                span[0] *= 1 + min(cap // v for cap, v in zip(caps, vec, strict=True) if v > 0)
            out.append(seen[key])
        return out

    lams = np.array(rates, dtype=float)
    # the spares busy as one number (a code per pool, each below its spares + 1)
    stride = np.cumprod([1, *(c + 1 for c in caps[:-1])], dtype=object)
    stride = stride.astype(np.int64) if math.prod(c + 1 for c in caps) < _INT_KEYS else stride
    met = np.zeros(0, dtype=stride.dtype)   # the spares busy met (as codes), sorted, and
    grants = np.zeros((0, len(rates)), dtype=np.int64)   # the type each class's arrival
    # adds with them (-1: none)
    keys = np.zeros(1, dtype=np.int64)   # each state's, in the order met
    ordered, index = keys.copy(), np.zeros(1, dtype=np.int64)   # keys sorted, their states
    busy, rows, cols, vals = [np.zeros((0, m), dtype=np.int64)], [], [], []
    counts = [np.zeros((1, 0), dtype=np.int64)]   # each level's states' count of each type
    lo = 0
    while lo < len(keys):
        front, hi, held, count = keys[lo:], len(keys), len(types), counts[-1]
        used = count @ np.array(vecs, dtype=np.int64).reshape(-1, m)
        code = used @ stride
        where = np.searchsorted(met, code)
        if len(met) == 0 or (met[np.minimum(where, len(met) - 1)] != code).any():
            new, first = np.unique(code, return_index=True)
            fresh = ~np.isin(new, met)
            grants = np.insert(grants, np.searchsorted(met, new[fresh]),
                               [lookup(tuple(u)) for u in used[first[fresh]].tolist()],
                               axis=0)
            met = np.union1d(met, new)
            where = np.searchsorted(met, code)
        if span[0] > _INT_KEYS and keys.dtype != object:
            keys, ordered, front = (a.astype(object) for a in (keys, ordered, front))
        at = np.array([*place, 0], dtype=keys.dtype)   # -1, no arrival: 0
        arrive = grants[where]
        by = sorted(range(held), key=types.__getitem__)   # a state's departures' order
        go = np.concatenate([arrive >= 0, count[:, by] > 0], axis=1)
        state, slot = np.nonzero(go)
        to = np.concatenate([front[:, None] + at[arrive], front[:, None] - at[by][None, :]],
                            axis=1)[go]
        rate = np.concatenate([np.broadcast_to(lams, arrive.shape),
                               count[:, by] / np.array(holds, dtype=float)[by]],
                              axis=1)[go]
        # the states reached, each once (sorted), the first transition reaching each
        sort = np.argsort(to)
        head = np.ones(len(to), dtype=bool)
        head[1:] = to[sort[1:]] != to[sort[:-1]]
        reached = to[sort[head]]
        first = np.minimum.reduceat(sort, np.flatnonzero(head)) if len(to) else sort
        where = np.searchsorted(ordered, reached)
        known = ordered[np.minimum(where, len(ordered) - 1)] == reached
        number = np.empty(len(reached), dtype=np.int64)
        number[known] = index[where[known]]
        new = np.flatnonzero(~known)
        if len(new):   # numbered in the order first reached
            seq = new[np.argsort(first[new])]
            number[seq] = len(keys) + np.arange(len(new))
            keys = np.concatenate([keys, reached[seq]])
            ordered = np.insert(ordered, where[new], reached[new])
            index = np.insert(index, where[new], number[new])
            # their counts: the state each is first reached from, one more or less
            i, j = state[first[seq]], slot[first[seq]] - arrive.shape[1]   # < 0: arrival
            kind = np.where(j < 0, arrive[i, np.minimum(j, -1)],
                            np.array([*by, 0])[np.maximum(j, 0)])
            counts.append(np.zeros((len(seq), len(types)), dtype=np.int64))
            counts[-1][:, :held] = count[i]
            counts[-1][np.arange(len(seq)), kind] += np.where(j < 0, 1, -1)
        col = np.empty(len(to), dtype=np.int64)
        col[sort] = number[np.cumsum(head) - 1]
        busy.append(used)
        rows.append(lo + state)
        cols.append(col)
        vals.append(rate)
        if len(keys) > limit:
            return None
        lo = hi
    every = np.zeros((len(keys), len(types)), dtype=np.int64)   # the levels' counts
    at = 0
    for count in counts:
        every[at:at + len(count), :count.shape[1]] = count
        at += len(count)
    return _States(types, every, np.concatenate(busy),
                   *(np.concatenate(a) for a in (rows, cols, vals)))


def _one_pool_reads(cap: int, arrivals) -> tuple:
    """What :func:`_breadth_first` ``((cap,), rates, arrivals, limit)`` can read of
    ``arrivals``: ``((used, arrivals((used,))), ...)`` at every count of spares busy the
    chain may reach from none (each arrival's grant taken, and any grant met given back
    where as many are busy: a superset of the states' counts). The chain's states and
    transitions hang on these answers and ``rates`` alone (not on ``cap``, which only
    bounds them), so two pools with the same reads and rates have the same chain, to the
    last bit: the spare search's next pool, one spare more that no grant can take
    (``study lite-gpu``'s blast radius: 140 chains of the busy count, 41 of them
    distinct; 108 chains of holdings, 45).

    >>> take = lambda used: [(("a",), (2,), 1.0) if used[0] + 2 <= cap else None]
    >>> cap = 5; five = _one_pool_reads(cap, take)
    >>> cap = 4; four = _one_pool_reads(cap, take)
    >>> [u for u, _ in five], five == four   # 5 and 4 spares: 0, 2, 4 busy, alike
    ([0, 2, 4], True)
    >>> cap = 6; [u for u, _ in _one_pool_reads(cap, take)]   # 6: a third grant
    [0, 2, 4, 6]
    """
    reads: dict = {}
    grants: set = set()   # every grant met: a departure gives one back
    todo = [0]
    while todo:
        used = todo.pop()
        if used in reads or not 0 <= used <= cap:
            continue
        got = reads[used] = tuple(arrivals((used,)))
        for a in got:
            if a is None:
                continue
            todo.append(used + a[1][0])
            if a[1][0] not in grants:   # given back from every count met so far
                grants.add(a[1][0])
                todo += [u - a[1][0] for u in reads]
        todo += [used - g for g in grants]
    return tuple(sorted(reads.items()))
