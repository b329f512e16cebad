"""Hostile-input round h287 on spine_count (topologies/hierarchical.py), public since it
took its ``unit`` this session: its counts went unchecked, so a float ``uplinks`` raised
TypeError from ``range``, a string or None raised TypeError from a comparison, a negative or
zero ``leaves`` returned one spine, and an ``uplinks`` of 10**30 ran the divisor search for
ever. Each is now refused in one line naming the parameter, before the search."""

import pytest

from compute.errors import UserError
from topologies.hierarchical import spine_count


@pytest.mark.parametrize("where,bad", [(0, 0), (0, -1), (0, "8"), (0, None), (0, float("nan")),
                                       (1, 2.5), (1, float("inf")), (1, 0), (1, "32"),
                                       (1, 10**30), (2, None), (2, -0.0), (2, [64])])
def test_counts_are_checked_by_name(where, bad):
    args = [8, 32, 64]
    args[where] = bad
    name = ("leaves", "uplinks", "spine_radix")[where]
    # refused by the check, before the divisor search (10**30 uplinks never finished)
    with pytest.raises(UserError, match=rf"^{name} must be an integer "):
        spine_count(*args)


def test_unit_must_be_one_line_of_text():
    with pytest.raises(UserError, match=r"^unit must be text"):
        spine_count(100, 32, 64, unit=None)
    with pytest.raises(UserError, match=r"control character"):
        spine_count(100, 32, 64, unit="racks\nerror: forged")


def test_whole_floats_and_numpy_counts_are_counts():
    import numpy as np

    # the SuperPOD's 2 SUs: 16 leaves x 32 uplinks on 64-port spines -> 8 spines of 64 cables
    assert spine_count(16.0, np.int64(32), 64.0) == 8 == spine_count(16, 32, 64)
    # the largest search, a million uplinks: a million leaves each take one port of every
    # one of a million spines (s divides 10**6 and 10**6 x 10**6 / s <= 10**6: s = 10**6);
    # one leaf more fits no spine tier
    assert spine_count(10**6, 10**6, 10**6) == 10**6
    with pytest.raises(UserError, match=r"^1000001 leaves are too many .* \(at most 1000000\)"):
        spine_count(10**6 + 1, 10**6, 10**6)


@pytest.mark.parametrize("size", [55_560, 800_000, 10**30])
def test_a_domain_too_large_for_its_nvswitch_names_domain_size(size):
    # rail_optimized's NVSwitch defaults to domain_size x NVLinks ports (H100: 18): past the
    # 1,000,000 a switch may have, the refusal named nvswitch_radix, which was not given
    from topologies.hierarchical import rail_optimized

    with pytest.raises(UserError, match=rf"^domain_size {size:,} GPUs x 18 NVLinks needs an "
                                        rf"NVSwitch of {18 * size:,} ports, over the "
                                        r"1,000,000 a switch may have; use a smaller "
                                        r"domain_size$"):
        rail_optimized(domains=1, domain_size=size)
    # 55,552 x 18 = 999,936 ports fit: one scale-up domain, built
    assert rail_optimized(domains=1, domain_size=55_552).graph["gpus"] == 55_552
