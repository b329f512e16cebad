"""A bounded cache of recent values: a dict emptied whole when it is full (:class:`Memo`),
the rule the project's process-wide caches of recent values share.

A full memo is emptied before the next value is put, rather than its oldest entry dropped:
these caches hold what a run asks again and again (a comparison's plans, the specs of its
fabrics, a figure's text layouts), so a run that outgrows one fills it again at one miss per
entry, and nothing is spent keeping an order. A cache that must keep its most recent entries
(an LRU ``OrderedDict``, ``functools.lru_cache``) or that drops its oldest is another kind.

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
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["Memo"]


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
