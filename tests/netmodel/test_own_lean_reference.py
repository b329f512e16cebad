"""collectives.own_lean (the makespan's choice by choice, its lines worked out in reused
arrays) against own_times (every option's table of lines), its reference: the same
times together and alone and the same choices, to the bit, where some choices' lines
together are their lines alone (taken from alone's) and some are not, with and without
the sizes each option runs at."""

import numpy as np
import pytest

from netmodel.collectives.concurrent_choice import own_lean, own_times


def _options(rng, n_options: int, groups: int, alike: float) -> list[tuple]:
    """Options of 1-3 algorithms x 2 protocols, side by side by (algorithm, protocol);
    an option's lines together are its lines alone (the same arrays) with chance
    ``alike``, else slower together (shared links)."""
    names = sorted(rng.choice(["direct", "ring", "tree"], n_options).tolist())
    out = []
    for i, name in enumerate(names):
        a_alone = rng.uniform(1e-6, 1e-4, groups)
        b_alone = rng.uniform(1e-11, 1e-9, groups)
        if rng.random() < alike:
            a_together, b_together = a_alone, b_alone.copy()
        else:
            a_together, b_together = a_alone * 1.25, b_alone * rng.uniform(1.0, 3.0, groups)
        out.append((name, "LL" if i % 2 else "Simple", a_together, b_together, a_alone,
                    b_alone))
    out.sort(key=lambda o: (o[0], o[1]))   # each choice's options side by side
    return out


def _bits(x) -> bytes:
    return np.ascontiguousarray(x).tobytes()


@pytest.mark.parametrize("seed", range(40))
def test_own_lean_is_own_times(seed):
    rng = np.random.default_rng(seed)
    groups = int(rng.integers(1, 4))
    options = _options(rng, int(rng.integers(2, 9)), groups, alike=[0.0, 0.5, 1.0][seed % 3])
    n = np.sort(rng.uniform(1e3, 1e9, 64))
    lo = hi = None
    if seed % 4 == 3:   # each option at its own sizes (send/recv's LL and Simple)
        lo = rng.uniform(0, 1e8, (len(options), groups))
        hi = lo + rng.uniform(1e7, 1e9, (len(options), groups))
    lean = own_lean(options, lo, hi, n)
    time, alone, own, _, pairs, _ = own_times(options, lo, hi, n)
    assert lean is not None
    assert lean[3] == pairs
    assert np.array_equal(lean[2], own)
    assert _bits(lean[1]) == _bits(alone)
    assert _bits(lean[0]) == _bits(time)


def test_together_from_alone_only_where_the_lines_are_the_same():
    """Two groups, one choice each of two algorithms: ring's lines together are its lines
    alone, direct's are twice as slow together; each group takes the faster alone, and its
    time together is its own choice's line together (hand-derived: a + b n)."""
    n = np.array([1e3, 1e9])
    ring = ("ring", "Simple", np.array([1e-5, 1e-5]), np.array([1e-9, 1e-9]),
            np.array([1e-5, 1e-5]), np.array([1e-9, 1e-9]))
    direct = ("direct", "Simple", np.array([2e-6, 4e-4]), np.array([4e-9, 4e-9]),
              np.array([1e-6, 2e-4]), np.array([2e-9, 2e-9]))
    time, alone, own, pairs = own_lean([direct, ring], None, None, n)
    assert pairs == [("direct", "Simple"), ("ring", "Simple")]
    # group 0: direct alone 1e-6 + 2e-9 n is the faster at 1 kB (3e-6 s vs 1.1e-5 s), ring
    # at 1 GB (1.00001 s vs 2.000001 s); group 1: ring at both (direct's a is 2e-4 s)
    assert own.tolist() == [[0, 1], [1, 1]]
    assert alone.tolist() == [[1e-6 + 2e-9 * 1e3, 1e-5 + 1e-9 * 1e9],
                              [1e-5 + 1e-9 * 1e3, 1e-5 + 1e-9 * 1e9]]
    assert time.tolist() == [[2e-6 + 4e-9 * 1e3, 1e-5 + 1e-9 * 1e9],
                             [1e-5 + 1e-9 * 1e3, 1e-5 + 1e-9 * 1e9]]
