"""The spare pools' Markov chains built level by level (availability_chain._breadth_first):
the chain of the busy count (availability_busy._chain_states) and the chain of holdings
(availability_threshold._HeldChain).

Both were built by a breadth-first search over dictionaries, one state at a time; they are
now built a level at a time with each state one integer (a mixed radix of the count of each
failure type). The references below are the searches as they were, written out plainly: the
states must come in the same order (the steady state's floats depend on it), with the same
spares busy and the same transitions in the same order, on random pools and classes (one
and two pools, asks granted in part, one pool's rules, repeated holds, zero rates; for the
holdings, random grants and refusal marks), with the keys as machine integers and as
Python's; past the state limit both give up."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study import availability_busy as ab
from netmodel.study import availability_chain as ac
from netmodel.study import availability_solve as solve
from netmodel.study import availability_threshold as at


def _states_met():
    """The references' list of states met, in order (each a sorted tuple of a dict's
    items, the empty one first), and ``at(d)``: ``d``'s index, a new one where it is new."""
    index, states = {(): 0}, [()]

    def at(d):
        key = tuple(sorted(d.items()))
        if key not in index:
            index[key] = len(states)
            states.append(key)
        return index[key]

    return states, at


def reference(caps: tuple, classes: list, limit: int | None = None):
    """The chain as a plain breadth-first search over dictionaries: states (sorted tuples
    of ((hold index, spares of each pool), count)), spares busy, rows, cols, rates."""
    m = len(caps)
    holds = sorted({hold for _, hold, _ in classes})
    states, at = _states_met()
    rows, cols, vals, busy = [], [], [], []

    i = 0
    while i < len(states):
        st_ = states[i]
        used = [sum(vec[j] * n for (_, vec), n in st_) for j in range(m)]
        busy.append(used)
        for lam, hold, asks in classes:
            if callable(asks):
                vec = (int(asks(caps[0] - used[0])),)
            else:
                got = [0] * m
                for (pool, u, _), ok in zip(asks, ab._granted(caps, used, asks), strict=True):
                    got[pool] += u if ok else 0
                vec = tuple(got)
            if any(vec) and lam > 0:
                d = dict(st_)
                key = (holds.index(hold), vec)
                d[key] = d.get(key, 0) + 1
                rows.append(i)
                cols.append(at(d))
                vals.append(lam)
        for (h, vec), n in st_:
            d = dict(st_)
            d[(h, vec)] -= 1
            if not d[(h, vec)]:
                del d[(h, vec)]
            rows.append(i)
            cols.append(at(d))
            vals.append(n / holds[h])
        i += 1
        if limit is not None and len(states) > limit:
            return None
    return states, np.array(busy, dtype=np.int64).reshape(-1, m), rows, cols, vals


def _rule(cap: int, sizes: tuple):
    """One pool's rule: the largest of ``sizes`` that fits the free spares, else 0."""
    return lambda free: max([s for s in sizes if s <= free], default=0)


@st.composite
def chains(draw):
    m = draw(st.integers(1, 2))
    caps = tuple(draw(st.lists(st.integers(0, 6), min_size=m, max_size=m)))
    holds = draw(st.lists(st.sampled_from([0.5, 1.0, 3.0, 7.0]), min_size=1, max_size=2))
    classes = []
    for _ in range(draw(st.integers(1, 4))):
        lam = draw(st.sampled_from([0.0, 0.3, 1.0, 2.5]))
        hold = draw(st.sampled_from(holds))
        if m == 1 and draw(st.booleans()):
            asks = _rule(caps[0], tuple(draw(st.lists(st.integers(1, 4), min_size=1,
                                                      max_size=3))))
        else:
            asks = [(draw(st.integers(0, m - 1)), draw(st.integers(1, 3)),
                     draw(st.sampled_from([0.5, 1.0, 2.0])))
                    for _ in range(draw(st.integers(1, 3)))]
        classes.append((lam, hold, asks))
    return caps, classes


def _check(caps, classes):
    ref = reference(caps, classes)
    got = ab._chain_states(caps, classes)
    states, busy, rows, cols, vals = ref
    # the same states in the same order
    mine = [tuple(sorted((got.types[t], int(n)) for t, n in enumerate(row) if n))
            for row in got.counts.tolist()]
    assert mine == states
    np.testing.assert_array_equal(got.busy, busy)
    # the same transitions in the same order: the generator's rows alike
    assert got.rows.tolist() == rows
    assert got.cols.tolist() == cols
    assert got.vals.tolist() == vals
    # each state's spares busy are its failures' holdings, within the pools
    held = got.counts @ np.array([vec for _, vec in got.types], dtype=np.int64
                                 ).reshape(-1, len(caps))
    np.testing.assert_array_equal(held, got.busy)
    assert (got.busy <= np.array(caps)).all()
    # the steady state the same floats, solved as the chain of its pools is (several pools:
    # the coupled solver past DIRECT_STATES)
    if len(states) > 1:
        pi = ab._chain_of(caps, classes)[1]
        assert pi.tobytes() == solve._steady_state(len(states), rows, cols, vals,
                                                   coupled=len(caps) > 1).tobytes()


@settings(max_examples=150, deadline=None)
@given(chains())
def test_the_levels_build_the_searchs_chain(case):
    _check(*case)


@settings(max_examples=60, deadline=None)
@given(chains())
def test_python_integer_keys_build_the_same_chain(case):
    # keys past the machine integers' limit (forced low here) are Python's
    with mock.patch.object(ac, "_INT_KEYS", 4):
        _check(*case)


@settings(max_examples=60, deadline=None)
@given(chains(), st.integers(1, 30))
def test_past_the_state_limit_both_give_up(case, limit):
    caps, classes = case
    # one pool's limit, or the pools' asked together (each its own)
    with mock.patch.object(ab, "MAX_SEQUENTIAL_STATES", limit), \
            mock.patch.object(ab, "MAX_COUPLED_STATES", limit):
        got = ab._chain_states(caps, classes)
    ref = reference(caps, classes, limit)
    assert (got is None) == (ref is None)
    if ref is not None:
        assert len(got.busy) == len(ref[0]) <= limit


def test_two_pools_by_hand():
    # two pools of 1 spare; one class asks 1 of each (both granted or each alone as it
    # fits), at rate 1, hold 1: states {}, {(1,1)}; then nothing fits
    caps, classes = (1, 1), [(1.0, 1.0, [(0, 1, 1.0), (1, 1, 1.0)])]
    got = ab._chain_states(caps, classes)
    assert got.types == [(0, (1, 1))]
    assert got.counts.tolist() == [[0], [1]]
    assert got.busy.tolist() == [[0, 0], [1, 1]]
    assert (got.rows.tolist(), got.cols.tolist(), got.vals.tolist()) == (
        [0, 1], [1, 0], [1.0, 1.0])
    # half the time busy: rate 1 in, 1 out
    np.testing.assert_allclose(ab._chain_of(caps, classes)[1], [0.5, 0.5], rtol=1e-15)


def held_reference(classes: tuple, cap: int, n_types: int):
    """The chain of holdings as a plain breadth-first search over dictionaries: states
    (sorted tuples of ((hold, spares, refusal mark), count)), rows, cols, rates, each
    state's timer arrivals of each mark and refusals carried of each mark."""
    states, at_ = _states_met()
    rows, cols, vals, timer = [], [], [], []

    i = 0
    while i < len(states):
        st_ = states[i]
        used = sum(t * n for (_, t, _), n in st_)
        here = [0.0] * n_types
        for rate, takes, marks, hold in classes:
            t, m = takes[cap - used], marks[cap - used]
            if t > 0:
                d = dict(st_)
                d[(hold, t, m)] = d.get((hold, t, m), 0) + 1
                rows.append(i)
                cols.append(at_(d))
                vals.append(rate)
            elif m >= 0:
                here[m] += rate
        timer.append(here)
        for key, n in st_:
            d = dict(st_)
            d[key] -= 1
            if not d[key]:
                del d[key]
            rows.append(i)
            cols.append(at_(d))
            vals.append(n / key[0])
        i += 1
    carried = np.zeros((n_types, len(states)), dtype=np.int64)
    for j, st_ in enumerate(states):
        for (_, _, m), n in st_:
            if m >= 0:
                carried[m, j] += n
    return states, rows, cols, vals, np.array(timer).reshape(len(states), n_types), carried


@st.composite
def holdings(draw):
    cap = draw(st.integers(1, 7))
    n_types = draw(st.integers(1, 3))
    classes = []
    for _ in range(draw(st.integers(1, 3))):
        takes = tuple(draw(st.integers(0, f)) for f in range(cap + 1))
        marks = tuple(draw(st.integers(-1, n_types - 1)) for _ in range(cap + 1))
        classes.append((draw(st.sampled_from([0.2, 1.0, 3.0])), takes, marks,
                        draw(st.sampled_from([0.5, 1.0, 4.0]))))
    return tuple(classes), cap, n_types


@settings(max_examples=120, deadline=None)
@given(holdings())
def test_the_levels_build_the_searchs_chain_of_holdings(case):
    from scipy.sparse import coo_matrix

    classes, cap, n_types = case
    states, rows, cols, vals, timer, carried = held_reference(classes, cap, n_types)
    chain = at._HeldChain(classes, cap, n_types, 10 ** 6, solve.GMRES_ITERATIONS)
    assert chain.n == len(states)
    np.testing.assert_array_equal(chain.arrive, timer.T)
    np.testing.assert_array_equal(chain.carried, carried)
    n = len(states)
    if n > 1:
        pi = solve._steady_state(n, rows, cols, vals, solve.GMRES_ITERATIONS,
                              unsettled_raises=True)
        assert chain.pi.tobytes() == pi.tobytes()
    # -Q' as the search's transitions give it (stored as (I - Q') - I: to rounding)
    gen = coo_matrix((vals, (rows, cols)), shape=(n, n)).toarray()
    np.testing.assert_allclose(chain.minus.toarray(), -(gen - np.diag(gen.sum(axis=1))).T,
                               rtol=1e-14, atol=1e-14)
    # past a limit below its states, none
    if n > 1:
        assert at._held_chain.__wrapped__(classes, cap, n_types, n - 1,
                                          solve.GMRES_ITERATIONS) is None
