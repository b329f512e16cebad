"""One pool's chains kept by what they read of their classes (h723).

The spare search and the spare curve ask one pool's chain of the busy count
(availability_busy._chain_of) and of holdings (availability_threshold._HeldChain) for pool
after pool; where no grant can take the pool's spare more (failures taking 4 of a pool of 5
after the pool of 4), the chain is the same: the same states met in the same order, the
same transitions. Such chains are now built and solved once and kept
(availability_chain._one_pool_reads names them: what the breadth-first search can read of
the classes, at every count of spares busy it may reach). These tests check the claim the
keeping rests on (pools whose reads are equal build the same arrays, byte for byte) on random
classes, and that what is kept is what building again gives: the steady states, -Q', the
timer arrivals and the moments, bit for bit, and that the pool one spare larger is not
built again.
"""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study import availability_busy as ab
from netmodel.study import availability_chain as ac
from netmodel.study import availability_threshold as at
from netmodel.study.availability_solve import GMRES_ITERATIONS


def _take(free: int, n: int, g: int) -> int:
    """A failure granted in part: ``g`` spares for each of its ``n`` instances that fit."""
    return g * min(n, free // g)


def _busy_classes(kinds) -> list:
    return [(lam, hold, partial(_take, n=n, g=g)) for lam, hold, n, g in kinds]


def _fresh_busy(cap: int, classes: list):
    return ab._solved((cap,), classes)


kinds_strategy = st.lists(st.tuples(st.sampled_from([0.0, 0.3, 1.0, 2.5]),
                                    st.sampled_from([1.0, 2.0, 5.0]),
                                    st.integers(1, 3), st.integers(1, 4)),
                          min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(kinds_strategy)
def test_pools_that_read_alike_build_the_same_chain(kinds):
    classes = _busy_classes(kinds)
    by_reads: dict = {}
    for cap in range(0, 13):
        reads = ac._one_pool_reads(cap, ab._arrivals((cap,), classes))
        by_reads.setdefault(reads, []).append(cap)
    for caps in by_reads.values():
        built = [_fresh_busy(cap, classes) for cap in caps]
        first = built[0]
        for other in built[1:]:   # the same busy counts and steady state, byte for byte
            assert (first is None) == (other is None)
            if first is not None:
                assert first[0].tobytes() == other[0].tobytes()
                assert first[1].tobytes() == other[1].tobytes()


@settings(max_examples=40, deadline=None)
@given(kinds_strategy)
def test_kept_busy_chains_are_the_ones_built_again(kinds):
    classes = _busy_classes(kinds)
    ab._KEPT.clear()
    for cap in list(range(0, 11)) + [3, 7]:   # in the search's order, and again
        kept = ab._chain_of((cap,), classes)
        fresh = _fresh_busy(cap, classes)
        assert (kept is None) == (fresh is None)
        if kept is not None:
            assert kept[0].tobytes() == fresh[0].tobytes()
            assert kept[1].tobytes() == fresh[1].tobytes()
            assert not kept[1].flags.writeable   # shared: read-only


def test_one_spare_no_grant_takes_is_not_built_again(monkeypatch):
    # failures taking 4 spares (a host's instances) and 2: pools of 4 and 5 reach 0, 2,
    # 4 busy alike; a pool of 6 reaches 6 too
    classes = [(0.5, 2.0, partial(_take, n=1, g=4)), (1.0, 1.0, partial(_take, n=1, g=2))]
    built = []
    real = ab._breadth_first

    def counted(*args):
        built.append(args[0])
        return real(*args)

    monkeypatch.setattr(ab, "_breadth_first", counted)
    ab._KEPT.clear()
    four, five, six = (ab._chain_of((cap,), classes) for cap in (4, 5, 6))
    assert built == [(4,), (6,)]
    assert five is four
    assert six[0][:, 0].max() == 6


def _held_classes(cap: int, rows) -> tuple:
    """Held-chain classes ``(rate, takes, marks, hold)`` on a pool of ``cap``: each a
    failure taking ``g`` spares where ``g`` fit, else refused (its mark)."""
    return tuple((rate, tuple(g if f >= g else 0 for f in range(cap + 1)),
                  tuple(-1 if f >= g else mark for f in range(cap + 1)), hold)
                 for rate, g, mark, hold in rows)


held_strategy = st.lists(st.tuples(st.sampled_from([0.2, 1.0, 3.0]), st.integers(1, 4),
                                   st.integers(0, 1), st.sampled_from([1.0, 4.0])),
                         min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(held_strategy)
def test_kept_chains_of_holdings_are_the_ones_built_again(rows):
    at._LAST_CORE.clear()
    for cap in range(1, 10):
        classes = _held_classes(cap, rows)
        at._held_chain.cache_clear()
        kept = at._HeldChain(classes, cap, 2, 10 ** 6, GMRES_ITERATIONS)
        kept_moments = at._moments_of.__wrapped__(classes, cap, 2, (2.0, 1.0), 3, 10 ** 6,
                                                  GMRES_ITERATIONS)
        last = list(at._LAST_CORE)
        at._LAST_CORE.clear()
        at._held_chain.cache_clear()
        fresh = at._HeldChain(classes, cap, 2, 10 ** 6, GMRES_ITERATIONS)
        assert at._moments_of.__wrapped__(classes, cap, 2, (2.0, 1.0), 3, 10 ** 6,
                                          GMRES_ITERATIONS) == kept_moments
        at._LAST_CORE[:] = last   # the next pool reads the kept one
        assert kept.n == fresh.n
        for name in ("pi", "arrive", "carried", "diagonal"):
            assert getattr(kept, name).tobytes() == getattr(fresh, name).tobytes(), name
        assert kept.minus.data.tobytes() == fresh.minus.data.tobytes()
        assert kept.minus.indices.tobytes() == fresh.minus.indices.tobytes()
        assert at._LAST_CORE[0][1] is kept.core and fresh.core is not kept.core


def test_held_moments_with_the_kept_chain_are_the_ones_built_again(monkeypatch):
    # a host's failure takes 4 (refused: type 0), a GPU's 1 (refused: type 1): pools of 4,
    # 5 and 6 ... each read and solved with and without the chains kept
    def moments(cap):
        classes = _held_classes(cap, [(0.1, 4, 0, 4.0), (1.0, 1, 1, 1.0)])
        at._moments_of.cache_clear()
        at._held_chain.cache_clear()
        return at._moments_of(classes, cap, 2, (4.0, 1.0), 4, 10 ** 6, GMRES_ITERATIONS)

    kept = {cap: moments(cap) for cap in range(3, 9)}
    fresh = {}
    for cap in range(3, 9):
        at._LAST_CORE.clear()
        fresh[cap] = moments(cap)
    assert kept.keys() == fresh.keys()
    for cap in kept:
        assert kept[cap] == fresh[cap]   # every moment, float for float
        assert len(kept[cap]) > 3


@pytest.mark.parametrize("cap", [4, 5])
def test_the_pool_one_larger_shares_the_chain_of_holdings(cap):
    # one failure kind taking 4: a pool of 5 holds the same chain as a pool of 4
    at._LAST_CORE.clear()
    four = at._HeldChain(_held_classes(4, [(1.0, 4, 0, 2.0)]), 4, 1, 10 ** 6,
                         GMRES_ITERATIONS)
    other = at._HeldChain(_held_classes(cap, [(1.0, 4, 0, 2.0)]), cap, 1, 10 ** 6,
                          GMRES_ITERATIONS)
    assert other.pi is four.pi and other.lus is four.lus
    assert four.n == 2
