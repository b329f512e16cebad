"""compute.memo.Memo: the project's bounded caches of recent values, emptied whole when full
(h729)."""

import pytest

from compute.memo import Memo


def test_full_memo_is_emptied_before_the_next_put():
    m = Memo(3)
    for k in "abc":
        m.put(k, ord(k))
    assert dict(m) == {"a": 97, "b": 98, "c": 99}   # at the limit: all kept
    assert m.put("d", 100) == 100
    assert dict(m) == {"d": 100}                    # emptied, then the new entry
    # a key already kept is put again as any other: a full memo is emptied first
    m.put("e", 1), m.put("f", 2)
    m.put("f", 3)
    assert dict(m) == {"f": 3}


def test_get_or_make_makes_once_per_key():
    calls = []
    m = Memo(4)

    def make():
        calls.append(1)
        return len(calls)

    assert [m.get_or_make("k", make) for _ in range(3)] == [1, 1, 1]
    assert len(calls) == 1
    # a value of None is no value: made again each time, as the caches' `hit is None`
    assert m.get_or_make("none", lambda: None) is None and "none" in m
    assert m.get_or_make("none", make) == 2


def test_unhashable_key_is_worked_out_afresh_and_not_kept():
    m = Memo(2)
    made = [m.get_or_make({"x": [1]}, lambda: object()) for _ in range(2)]
    assert made[0] is not made[1] and len(m) == 0


def test_it_is_a_dict():
    m = Memo(2)
    m.put(("gpu", 1), 2.5)
    assert isinstance(m, dict) and m.get(("gpu", 1)) == 2.5 and ("gpu", 1) in m
    m.clear()
    assert not m and m.limit == 2


@pytest.mark.parametrize("limit", [0, -1, 2.0, True, "8", None])
def test_limit_is_a_whole_number_of_one_or_more(limit):
    with pytest.raises(ValueError, match="limit must be a whole number"):
        Memo(limit)
