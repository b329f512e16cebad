"""Progressive filling in :func:`~netmodel.collectives.concurrent_time._paces` holds, in one
round, every link full first among its neighbours (no free group on it slower), not only
the slowest link of all: the same max-min fair shares, worked out here by hand, in as many
rounds as the longest chain of links each held after a busier neighbour."""

from __future__ import annotations

import numpy as np

from netmodel.collectives.concurrent_time import _ROUND, _paces


def _case(rows):
    """``(group, link, seconds per byte)`` rows as _paces's three arrays."""
    g, link, u = zip(*rows, strict=True)
    return np.array(g), np.array(link), np.array(u, dtype=float)


def test_links_full_first_among_their_neighbours_are_held_in_one_round():
    # A, B, C (groups 0-2) share link 0 (1 s each alone there: 3 s together); C and D share
    # link 1 (2 s), D and E link 2 (2 s), E alone on link 3 (1 s). Link 0 is the slowest
    # (3 s), link 2 the slowest among its own groups' links (D: max(2, 2), E: max(2, 1)):
    # both are full first. Max-min by hand: A, B, C 1/3 of link 0 each, 3 s; D, E 1/2 of
    # link 2, 2 s; link 1 then carries 1/3 + 1/2 = 5/6 of its capacity, link 3 1/2.
    # Filling one link a round (the slowest first) takes two rounds; this takes one.
    rows = [(0, 0, 1.0), (1, 0, 1.0), (2, 0, 1.0), (2, 1, 1.0), (3, 1, 1.0), (3, 2, 1.0),
            (4, 2, 1.0), (4, 3, 1.0)]
    T, looked = _paces(*_case(rows), 5, 4)
    assert T.tolist() == [3.0, 3.0, 3.0, 2.0, 2.0]
    assert looked == 8 + _ROUND   # one round over the 8 entries

    # a chain: A, B 1 s and C 2 s on link 0 (4 s); C 1 s and D 1.5 s on link 1 (2.5 s); D
    # and E 1 s each on link 2 (2 s); E alone on link 3 (1 s). Only link 0 is full first
    # (link 1's C is slower, link 2's D is held by link 1 at 2.5 s, link 3's E by link 2):
    # A, B, C 4 s, C taking 1/4 of link 1; D then has 3/4 of link 1, 1.5 / 0.75 = 2 s, tied
    # with link 2's 2 s: D and E 2 s (link 2 full, link 1 full, 1/4 + 1.5/2). Two rounds,
    # the second over D's and E's 4 entries.
    rows = [(0, 0, 1.0), (1, 0, 1.0), (2, 0, 2.0), (2, 1, 1.0), (3, 1, 1.5), (3, 2, 1.0),
            (4, 2, 1.0), (4, 3, 1.0)]
    T, looked = _paces(*_case(rows), 5, 4)
    assert T.tolist() == [4.0, 4.0, 4.0, 2.0, 2.0]
    assert looked == 8 + 4 + 2 * _ROUND


def test_a_link_used_to_the_last_bit_holds_no_group_forever():
    # group 0 alone on link 0 (1 s) and on link 1 beside group 1's load of one denormal
    # (5e-324 s); group 1 also on link 2 (2 s) beside group 2 (1 s), group 2 alone on link 3
    # (4 s). Round one holds group 0 at 1 s (link 0 full first) and group 2 at 4 s (link 3):
    # group 0 takes 1/1 of link 1 to the last bit, leaving group 1 a capacity of 0 there
    # (exactly: 5e-324 / (1 + 5e-324) of it, at the same 1 s). Group 1 is held by link 2:
    # 2 s over what group 2 leaves of it, 1 - 1/4, 8/3 s; not 2 / 0, infinite
    rows = [(0, 0, 1.0), (0, 1, 1.0), (1, 1, 5e-324), (1, 2, 2.0), (2, 2, 1.0), (2, 3, 4.0)]
    T, looked = _paces(*_case(rows), 3, 4)
    assert T.tolist() == [1.0, 2.0 / 0.75, 4.0]
    assert looked == 6 + 2 + 2 * _ROUND   # filling one link a round: 12 entries, 3 rounds
