"""Bounded caches of recent values, the two rules the project's process-wide caches share:
a dict emptied whole when it is full (:class:`Memo`), and an ordered dict that drops its
oldest entry past a limit (:class:`Lru`).

A full memo is emptied before the next value is put, rather than its oldest entry dropped:
these caches hold what a run asks again and again (a comparison's plans, the specs of its
fabrics, a figure's text layouts), so a run that outgrows one fills it again at one miss per
entry, and nothing is spent keeping an order. A cache whose entries are dear to make again
(a built fabric, a router, a grid's arrays) keeps its most recent ones instead
(:class:`Lru`): read with :meth:`Lru.recall`, the least recently used is dropped first;
read with ``get``, the oldest put (first in, first out).

Examples
--------
>>> m = Memo(2)
>>> m.put("a", 1), m.put("b", 2)
(1, 2)
>>> m.put("c", 3)      # full: emptied, then "c" kept
3
>>> dict(m)
{'c': 3}
>>> m.get_or_make("c", lambda: 0), m.get_or_make("d", lambda: 4), dict(m)
(3, 4, {'c': 3, 'd': 4})
>>> m.get_or_make(["unhashable"], lambda: 5), len(m)   # worked out afresh, not kept
(5, 2)
>>> r = Lru(2)
>>> r.put("a", 1), r.put("b", 2), r.recall("a")   # "a" now the most recent
(1, 2, 1)
>>> r.put("c", 3), list(r)                          # "b", the least recent, dropped
(3, ['a', 'c'])
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import suppress
from typing import Any

__all__ = ["Lru", "Memo"]


class Memo(dict):
    """A dict of at most ``limit`` entries, emptied when full before another is put
    (:meth:`put`); read and cleared as any dict (``get``, ``in``, ``clear``).

    Parameters
    ----------
    limit : int
        The most entries kept (at least 1).
    """

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        if type(limit) is not int or limit < 1:
            raise ValueError(f"limit must be a whole number of entries >= 1, got {limit!r}")
        self.limit = limit

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep ``value`` under ``key``, the memo emptied first when it holds :attr:`limit`
        entries; returns ``value``."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value

    def get_or_make(self, key: Any, make: Callable[[], Any]) -> Any:
        """The value kept under ``key``, else ``make()`` kept there (:meth:`put`); a key
        that does not hash: ``make()`` worked out afresh, not kept. A kept value of None
        counts as none kept."""
        try:
            hit = self.get(key)
        except TypeError:
            return make()
        if hit is None:
            hit = self.put(key, make())
        return hit


class Lru(OrderedDict):
    """An ordered dict of at most ``limit`` entries (and, given ``size``, of at most
    ``most`` in all), the oldest dropped first when :meth:`put` passes either; read with
    :meth:`recall` (the entry read becomes the most recent: least recently used dropped
    first) or with ``get`` (the order is that of :meth:`put`: first in, first out).

    Safe where threads share it without a lock (each step one dict operation): an entry
    another thread let go between a look-up and its move, or between the count and the
    drop, is no error.

    Parameters
    ----------
    limit : int
        The most entries kept (at least 1).
    size : callable, optional
        A value's size (an int: its array elements, say); with ``most``, the sizes of the
        entries kept add up to at most ``most``, save the most recent entry, always kept.
        None: entries are counted only.
    most : int, optional
        The most of ``size`` kept in all (needs ``size``).

    Examples
    --------
    >>> r = Lru(3, size=len, most=5)
    >>> r.put("ab", "ab"), r.put("cd", "cd"), r.held
    ('ab', 'cd', 4)
    >>> r.recall("ab"), r.recall("zz", 0)
    ('ab', 0)
    >>> r.put("efg", "efg"), list(r), r.held   # 7 > 5: "cd", the least recent, dropped
    ('efg', ['ab', 'efg'], 5)
    >>> r.put("hijkl_", "hijkl_"), list(r), r.held   # the most recent kept, whatever its size
    ('hijkl_', ['hijkl_'], 6)
    """

    def __init__(self, limit: int, size: Callable[[Any], int] | None = None,
                 most: int | None = None) -> None:
        super().__init__()
        if type(limit) is not int or limit < 1:
            raise ValueError(f"limit must be a whole number of entries >= 1, got {limit!r}")
        if (size is None) != (most is None):
            raise ValueError(f"size and most go together, got size={size!r}, most={most!r}")
        self.limit = limit
        self.size = size
        self.most = most
        #: The sizes of the entries kept, added up (0 where there is no ``size``).
        self.held = 0

    def recall(self, key: Hashable, default: Any = None) -> Any:
        """The value kept under ``key``, made the most recent; ``default`` where none."""
        hit = self.get(key, self)
        if hit is self:
            return default
        with suppress(KeyError):   # let go by another thread meanwhile
            self.move_to_end(key)
        return hit

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep ``value`` under ``key``, a new key as the most recent entry (a kept one's
        value replaced where it stands), then drop the oldest while more than
        :attr:`limit` are kept, or (given ``size``) more than ``most`` in all and more
        than one; returns ``value``."""
        size = self.size
        if size is not None:
            old = self.get(key, self)
            self.held += size(value) - (0 if old is self else size(old))
        self[key] = value
        while len(self) > 1 and (len(self) > self.limit
                                 or (size is not None and self.held > self.most)):
            with suppress(KeyError):   # emptied by another thread meanwhile
                dropped = self.popitem(last=False)[1]
                if size is not None:
                    self.held -= size(dropped)
        return value

    def clear(self) -> None:
        """Drop every entry."""
        super().clear()
        self.held = 0

    def __reduce__(self):
        # OrderedDict's would make the copy with no limit: made with this one's, then filled
        return type(self), (self.limit, self.size, self.most), vars(self), None, \
            iter(self.items())
