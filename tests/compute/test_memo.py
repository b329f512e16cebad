"""compute.memo: the project's bounded caches of recent values, Memo (a dict emptied whole
when full, h729) and Lru (an ordered dict dropping its oldest past a limit, h730)."""

import pytest

from compute.memo import Lru, Memo


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


# compute.memo.Lru: the caches that drop their oldest entry past a limit (h730)

def test_lru_read_by_recall_drops_the_least_recently_used():
    r = Lru(3)
    for k in "abc":
        r.put(k, ord(k))
    assert r.recall("a") == 97 and r.recall("zz") is None and r.recall("zz", 0) == 0
    r.put("d", 100)                              # "b": put before "c", read since by none
    assert list(r) == ["c", "a", "d"]
    r.put("e", 101)
    assert list(r) == ["a", "d", "e"] and len(r) == r.limit


def test_lru_read_by_get_drops_the_oldest_put():
    r = Lru(2)
    r.put("a", 1), r.put("b", 2)
    assert r.get("a") == 1                       # a plain read keeps the order of put
    r.put("c", 3)
    assert dict(r) == {"b": 2, "c": 3}


def test_a_kept_value_of_none_is_told_from_none_kept():
    r = Lru(2)
    r.put("none", None)
    assert r.recall("none", r) is None and r.recall("other", r) is r


def test_sized_lru_keeps_at_most_most_in_all_save_the_newest():
    r = Lru(10, size=len, most=6)
    r.put("a", "xx"), r.put("b", "yyy")
    assert r.held == 5
    r.put("c", "zz")                             # 7 > 6: "a" (2) dropped
    assert list(r) == ["b", "c"] and r.held == 5
    r.put("d", "w" * 9)                          # alone past most: kept, all else dropped
    assert list(r) == ["d"] and r.held == 9
    r.put("d", "v")                              # replaced where it stands, size with it
    assert dict(r) == {"d": "v"} and r.held == 1
    r.clear()
    assert not r and r.held == 0


def test_lru_copies_and_pickles_with_its_limits_order_and_sizes():
    import copy
    import pickle

    r = Lru(3, size=len, most=10)
    r.put("a", "xx"), r.put("b", "yyy")
    for c in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert type(c) is Lru and list(c.items()) == [("a", "xx"), ("b", "yyy")]
        assert (c.limit, c.size, c.most, c.held) == (3, len, 10, 5)


@pytest.mark.parametrize("limit", [0, -1, 2.0, True, "8", None])
def test_lru_limit_is_a_whole_number_of_one_or_more(limit):
    with pytest.raises(ValueError, match="limit must be a whole number"):
        Lru(limit)


@pytest.mark.parametrize("size, most", [(len, None), (None, 8)])
def test_lru_size_and_most_go_together(size, most):
    with pytest.raises(ValueError, match="size and most go together"):
        Lru(4, size=size, most=most)
