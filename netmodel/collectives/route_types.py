"""The small types and constants the router's modules share.

They are :class:`NoPath`, :class:`Route`, :class:`Plan`, the growable tables the router keeps
(``Grow``, ``Rows``), node kind codes and the thresholds of the route search.

Its one job is to let :mod:`netmodel.collectives.routing`,
:mod:`netmodel.collectives.route_templates` and :mod:`netmodel.collectives.route_search`
share these without importing one another in a cycle. :mod:`netmodel.collectives.routing`
re-exports the public ones.

>>> r = Route(np.array([0, 2]), np.array([1.0, 1.0]), 2e-7, 2, False)
>>> r.links.tolist(), r.hops
([0, 2], 2)
>>> str(NoPath("gpu0", "gpu1"))
"no path joins 'gpu0' and 'gpu1'"
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from compute.errors import UserError
from netmodel.collectives.steps import NotApplicable

__all__ = ["NoPath", "Plan", "Route", "TooManyRouteLinks"]

#: Node kind codes, as the router's numpy tables hold a node's ``kind`` attribute.
KIND_GPU, KIND_SWITCH, KIND_OCS, KIND_OTHER = 0, 1, 2, 3
#: What :meth:`Router._describe` tells of each transfer.
TRANSFER_FIELDS = ("kind", "head", "tail", "l1", "l2", "latency", "hops", "scaleout")
#: A node ``kind`` attribute's code (any other kind: :data:`KIND_OTHER`).
KIND_CODE = {"gpu": KIND_GPU, "switch": KIND_SWITCH, "ocs": KIND_OCS}
#: Node kinds a route without a template may cross (GPUs forward on direct-connect fabrics).
TRANSIT_KINDS = frozenset(("gpu", "switch"))
#: Up to this many nodes that links join (``Router._dag_sized``), such routes come from one
#: search per destination, kept (:meth:`Router._dag`); beyond, from one bidirectional
#: search per pair.
DAG_NODES = 4096


class TooManyRouteLinks(NotApplicable, UserError):
    """Routing the pairs asked would hold more route links than the router allows
    (estimated from a sample before the rest are routed): an algorithm that asks for them
    is left out of the fastest-of choice (:class:`~netmodel.collectives.steps.NotApplicable`,
    with this message as the reason), and a caller that asked for it alone gets one line
    (:class:`~compute.errors.UserError`)."""


class NoPath(Exception):
    """No path joins two nodes (the fabric is cut between them)."""

    def __init__(self, a: Hashable, b: Hashable) -> None:
        super().__init__(f"no path joins {a!r} and {b!r}")
        self.pair = (a, b)


@dataclass(frozen=True)
class Route:
    """The traffic pattern of one unit transfer between two nodes.

    Attributes
    ----------
    links : numpy.ndarray
        Directed link ids (int) the transfer crosses.
    weights : numpy.ndarray
        Fraction of the transfer's bytes on each of those links (1 on a single path; ECMP
        splits it; the fractions leaving the source sum to 1).
    latency : float
        Seconds along the slowest of the shortest paths (links plus switch traversals).
    hops : int
        Links on each shortest path.
    scaleout : bool
        Whether any path crosses a scale-out link (one that touches a switch of tier >= 1).
    """

    links: np.ndarray
    weights: np.ndarray
    latency: float
    hops: int
    scaleout: bool


@dataclass
class Plan:
    """Many transfers routed at once (see :meth:`Router.plan`).

    Every transfer is either *templated* (``template[i] == 1``: a switched route between
    two GPUs, shared by every pair of GPUs wired alike) or routed on its own
    (``template[i] == -1``: its links and weights in ``route_links`` and ``route_weights``,
    one slice per such transfer).

    Attributes
    ----------
    frac : numpy.ndarray
        Bytes per byte of ``n`` of each transfer.
    template : numpy.ndarray
        1 for a templated transfer, -1 for one routed on its own.
    routed : numpy.ndarray
        Indices of the transfers routed on their own, ascending.
    route_ptr : numpy.ndarray
        Where each of those transfers' links start in ``route_links`` (one more entry than
        ``routed``: the last is the end).
    route_links, route_weights : numpy.ndarray
        Their links and the fraction of the transfer on each, route after route.
    route_hops : numpy.ndarray
        Links on each of their shortest paths.
    hop_index, hop_links, hop_weights : numpy.ndarray
        First and last hops of the templated transfers: transfer index, link, weight (per
        byte of the transfer).
    pieces, piece_of : numpy.ndarray
        For each (templated transfer, piece it crosses): the transfer index and the piece
        id (:meth:`Router.piece`; weights per byte of the transfer).
    latency : numpy.ndarray
        Route latency of every transfer (s).
    scaleout : numpy.ndarray
        Whether each transfer crosses the scale-out network.
    """

    frac: np.ndarray
    template: np.ndarray
    routed: np.ndarray
    route_ptr: np.ndarray
    route_links: np.ndarray
    route_weights: np.ndarray
    route_hops: np.ndarray
    hop_index: np.ndarray
    hop_links: np.ndarray
    hop_weights: np.ndarray
    pieces: np.ndarray
    piece_of: np.ndarray
    latency: np.ndarray
    scaleout: np.ndarray

    @property
    def routes(self) -> dict[int, Route]:
        """Transfer index -> :class:`Route` of each transfer routed on its own."""
        p = self.route_ptr.tolist()
        return {i: Route(self.route_links[p[k]:p[k + 1]], self.route_weights[p[k]:p[k + 1]],
                         float(self.latency[i]), int(self.route_hops[k]),
                         bool(self.scaleout[i]))
                for k, i in enumerate(self.routed.tolist())}


#: The fields of a :class:`Plan` after ``frac`` (what a kept plan holds).
PLAN_FIELDS = tuple(f.name for f in fields(Plan))[1:]


class Grow:
    """A growable 1-D array (capacity doubles): ``extend`` appends, ``a`` reads."""

    def __init__(self, dtype) -> None:
        self._a = np.zeros(16, dtype=dtype)
        self.n = 0

    def extend(self, x: np.ndarray) -> None:
        need = self.n + len(x)
        if need > len(self._a):
            grown = np.zeros(max(need, 2 * len(self._a)), dtype=self._a.dtype)
            grown[:self.n] = self._a[:self.n]
            self._a = grown
        self._a[self.n:need] = x
        self.n = need

    @property
    def a(self) -> np.ndarray:
        return self._a[:self.n]


class Rows:
    """A growable table of rows padded with ``fill``, for lookups by row id with numpy;
    rows are appended to a list and written into the array in one go when it is read."""

    def __init__(self, fill, dtype, width: int = 1):
        self.fill, self.dtype = fill, dtype
        self._a = np.full((16, max(width, 1)), fill, dtype=dtype)
        self._done = 0
        self._pending: list = []
        self.n = 0

    def add(self, row: Sequence[float]) -> int:
        self._pending.append(row)
        self.n += 1
        return self.n - 1

    @property
    def table(self) -> np.ndarray:
        if self._pending:
            rows, cols = self._a.shape
            width = max(cols, max(map(len, self._pending)))
            if self.n > rows or width > cols:
                grown = np.full((max(self.n, 2 * rows), width), self.fill, dtype=self.dtype)
                grown[:self._done, :cols] = self._a[:self._done]
                self._a = grown
            fill = self.fill
            block = [list(r) + [fill] * (width - len(r)) for r in self._pending]
            self._a[self._done:self.n, :width] = np.array(block, dtype=self.dtype).reshape(
                len(block), width)
            self._done, self._pending = self.n, []
        return self._a[:self.n]


class Ragged:
    """A growable table of rows of any lengths, kept flat: row ``r`` is
    ``flat[ptr[r]:ptr[r + 1]]``. Rows are appended to a list and written into the arrays in
    one go when they are read. Padded to the widest row (a :class:`Rows`), one GPU wired to
    2,000 NVSwitches, its route to a GPU of its own signature spread over all of them, made
    the 8,024 first- and last-hop patterns of a 64-GPU all-to-all 8,024 x 2,000 cells (529 MB
    traced).

    >>> rows = Ragged(float)
    >>> rows.add([0.5, 0.5]), rows.add([]), rows.add([1.0])
    (0, 1, 2)
    >>> [a.tolist() for a in rows.arrays]
    [[0, 2, 2, 3], [0.5, 0.5, 1.0]]
    """

    def __init__(self, dtype) -> None:
        self._ptr = Grow(np.int64)
        self._ptr.extend(np.zeros(1, dtype=np.int64))
        self._flat = Grow(dtype)
        self._pending: list = []
        self.n = 0

    def add(self, row: Sequence[float]) -> int:
        """Append ``row``; its index."""
        self._pending.append(row)
        self.n += 1
        return self.n - 1

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ptr, flat)``: row ``r`` at ``flat[ptr[r]:ptr[r + 1]]``."""
        if self._pending:
            count = np.fromiter(map(len, self._pending), np.int64, count=len(self._pending))
            at = self._flat.n
            self._flat.extend(np.fromiter((v for r in self._pending for v in r),
                                          self._flat.a.dtype, count=int(count.sum())))
            self._ptr.extend(at + np.cumsum(count))
            self._pending = []
        return self._ptr.a, self._flat.a


class SetRows(Ragged):
    """Rows of distinct numbers ``0 <= x < base`` (a signature's switches), kept sparse: row
    ``r`` is ``keys[ptr[r]:ptr[r + 1]]``, each ``r * base + x``, sorted, so the keys of all
    rows are one sorted array (:func:`rows_meet` looks numbers up in it). Rows are appended
    to a list and written into the arrays in one go when they are read. One number a cell:
    padded to the widest row, one GPU wired to 4,000 NVSwitches made a 256-GPU all-to-all's
    rows 256 x 4,001 cells.

    >>> rows = SetRows(10)
    >>> rows.add([7, 2]), rows.add([]), rows.add([3])
    (0, 1, 2)
    >>> ptr, keys = rows.arrays
    >>> ptr.tolist(), keys.tolist()
    ([0, 2, 2, 3], [2, 7, 23])
    """

    def __init__(self, base: int) -> None:
        super().__init__(np.int64)
        self.base = int(base)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ptr, keys)``: row ``r``'s keys at ``keys[ptr[r]:ptr[r + 1]]``."""
        if self._pending:
            first = self.n - len(self._pending)
            count = np.fromiter(map(len, self._pending), np.int64, count=len(self._pending))
            x = np.fromiter((v for r in self._pending for v in r), np.int64,
                            count=int(count.sum()))
            row = np.repeat(np.arange(first, self.n, dtype=np.int64), count)
            keys = row * self.base + x
            keys.sort()   # rows in order, each row's numbers sorted
            self._flat.extend(keys)
            self._ptr.extend(self._flat.n - keys.size + np.cumsum(count))
            self._pending = []
        return self._ptr.a, self._flat.a


#: The most numbers :func:`rows_meet` looks up at once (8 bytes each, a few copies).
MEET_CHUNK = 1 << 20


def rows_meet(rows: SetRows, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Whether rows ``ia[i]`` and ``ib[i]`` of ``rows`` hold a number in common: each of
    the shorter row's numbers is looked up among the longer row's keys (a binary search in
    the sorted keys of all rows), at most :data:`MEET_CHUNK` numbers at a time, so the
    work and memory follow the shorter rows. A padded table compared every pair's widest
    rows: one GPU wired to 4,000 NVSwitches made a 256-GPU all-to-all's 65,153 pairs of
    rows sort 65,153 x 8,002 cells (2.5 s), and by broadcasting a 64-GPU one's
    4,001 x 4,001 x 4,001 cells (59.6 GiB).

    >>> rows = SetRows(10)
    >>> for r in ([1, 5, 9, 2, 3], [7, 9], [4], [5, 6, 8, 0, 1], []):
    ...     _ = rows.add(r)
    >>> ia, ib = np.array([0, 2, 4, 0, 3, 1]), np.array([1, 3, 4, 3, 0, 3])
    >>> rows_meet(rows, ia, ib).tolist()
    [True, False, False, True, True, False]
    """
    ptr, keys = rows.arrays
    ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
    out = np.zeros(len(ia), dtype=bool)
    if not len(keys) or not len(ia):
        return out
    la, lb = ptr[ia + 1] - ptr[ia], ptr[ib + 1] - ptr[ib]
    short = np.where(la <= lb, ia, ib)
    shift = (ia + ib - 2 * short) * rows.base   # the longer row's keys less the shorter's
    count = np.minimum(la, lb)
    ends = np.cumsum(count)
    last = len(keys) - 1
    lo = 0
    while lo < len(ia):
        done = int(ends[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, done + MEET_CHUNK, side="right")))
        c = count[lo:hi]
        total = int(ends[hi - 1]) - done
        if total:
            pair = np.repeat(np.arange(hi - lo), c)
            at = np.repeat(ptr[short[lo:hi]] - (np.cumsum(c) - c), c) + np.arange(total)
            want = keys[at] + shift[lo:hi][pair]
            found = keys[np.minimum(np.searchsorted(keys, want), last)] == want
            out[lo:hi] = np.bincount(pair[found], minlength=hi - lo) > 0
        lo = hi
    return out
