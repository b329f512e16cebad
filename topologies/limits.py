"""How large a fabric netmodel builds or reads before refusing: estimated before any memory
is spent, settable.

A built fabric costs about 400 bytes of memory per node or edge (networkx dicts; measured
on the 131,072-GPU fat tree: 532,480 nodes and edges, 0.2 GB). Every builder estimates its
node and edge counts from its parameters and calls :func:`check_size` before adding
anything; fabric files are refused above :func:`max_file_bytes` before they are parsed, and
their node and edge lists are counted before a graph is made.

Defaults, and the environment variables that override them (a whole number >= 1 in the one
number grammar, read by :func:`compute.limits.setting`: ``1e7`` is read, ``1_000`` refused):

========================  ===============================  =========================
limit                     default                          environment variable
========================  ===============================  =========================
nodes (GPUs + switches)   2,000,000                        ``NETMODEL_MAX_FABRIC_NODES``
edges                     10,000,000 (about 4 GB)          ``NETMODEL_MAX_FABRIC_EDGES``
fabric file size          1 GiB                            ``NETMODEL_MAX_FABRIC_FILE_BYTES``
========================  ===============================  =========================

Fixed limits (not settable: beyond them a value is not physical): a switch or OCS has at
most :data:`MAX_RADIX` ports; a fabric file nests at most :data:`MAX_DEPTH` levels.

>>> check_size("fat-tree", nodes=1_000, edges=3_000)
>>> check_size("ring", nodes=10**12, edges=10**12)
Traceback (most recent call last):
...
compute.errors.UserError: ring: the fabric would have about 1,000,000,000,000 nodes and 1,000,000,000,000 edges, over the limit of 2,000,000 nodes and 10,000,000 edges; build a smaller fabric, or raise NETMODEL_MAX_FABRIC_NODES / NETMODEL_MAX_FABRIC_EDGES if the machine has the memory (about 400 bytes per node or edge)
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from compute.errors import UserError
from compute.limits import setting
from compute.units import counted  # the one count-and-noun rule
from compute.validate import describe, range_words

__all__ = ["DEFAULTS", "ENV", "MAX_DEPTH", "MAX_RADIX", "MAX_TIER", "PHYSICAL_MAX",
           "PHYSICAL_MIN", "VALUE_RANGES", "capped", "check_size", "max_edges", "max_file_bytes",
           "max_nodes", "nonzero_range", "physical_range", "range_problem"]

#: Default limits (nodes, edges, file bytes).
DEFAULTS = {"nodes": 2_000_000, "edges": 10_000_000, "file_bytes": 2**30}
#: The environment variable that overrides each limit.
ENV = {"nodes": "NETMODEL_MAX_FABRIC_NODES", "edges": "NETMODEL_MAX_FABRIC_EDGES",
       "file_bytes": "NETMODEL_MAX_FABRIC_FILE_BYTES"}
#: Most ports a switch or OCS may have (a logical NVLink switch of 576 GPUs x 18 links has
#: 10,368; a million is past any physical device).
MAX_RADIX = 1_000_000
#: Largest value a builder takes for each physical parameter (not settable: beyond them a
#: value is a unit slip or hostile, not hardware). ``(maximum, unit, why)``.
PHYSICAL_MAX = {
    "latency": (1.0, "s", "a switch hop takes 0.1-1 us and a cable 5 ns/m; 1 s is a million "
                          "hops"),
    "reconfiguration_time": (3600.0, "s", "MEMS circuit switches reconfigure in about 10 ms, "
                                          "patch panels by hand in minutes"),
    "bandwidth": (1e15, "bytes/s", "NVLink 5 moves 900 GB/s per direction per GPU; 1 PB/s "
                                   "per link is about 1,000x that"),
    "length": (1e5, "m", "a data-centre cable runs metres to kilometres; 100 km spans a "
                         "metro region"),
}
#: Smallest value of a physical parameter a fabric may hold, as :data:`PHYSICAL_MAX`.
PHYSICAL_MIN = {
    "bandwidth": (1.0, "bytes/s", "below a byte a second a link moves nothing a model "
                                  "costs: 1 MB would take 12 days; 1e-308 overflows every "
                                  "transfer time to infinity"),
}
#: The range a graph's bandwidths and times may take. Wider than a builder's
#: (:data:`~topologies.limits.PHYSICAL_MAX`, ``PHYSICAL_MIN``): a scenario's adjustments
#: scale a built fabric (bandwidth_scale 1e-9 to 1e15, latency_scale up to 1e6) and the
#: ideal calibration multiplies bandwidth by 1e12; beyond these a value is hostile and
#: overflows transfer times to inf. ``(least, most, unit, why)``.
VALUE_RANGES = {
    "bandwidth": (1e-9, 1e30, "bytes/s", "a scenario's bandwidth_scale 1e-9 to 1e15 of a "
                                         "builder's 1 byte/s to 1 PB/s"),
    "latency": (0.0, 1e7, "s", "a scenario's latency_scale 1e6 of a builder's 1 s, and "
                               "more: 1e7 s is 116 days a hop"),
    "reconfiguration_time": (0.0, 1e7, "s", "a patch panel rewired by hand takes minutes; "
                                            "1e7 s is 116 days"),
    # an edge sums the cables between two nodes: two 144-port switches share at most 144
    # cables of 8 lanes; past a million a file's count is hostile (1e308 lanes printed a
    # bill of materials of 309 digits)
    "lanes": (1, 1e6, "lanes", "two 144-port switches share at most 144 cables of 8 lanes"),
    # a breakout gives a port a share of one cable (lite-direct's 4 Lites a quarter each;
    # 800G into 8 x 100G an eighth); 1e-300 overflowed a NIC port's rate to infinity
    "links": (1e-3, 1e6, "cables", "a breakout cable gives a port at least an eighth of "
                                   "it; two 144-port switches share at most 144 cables"),
}
#: Highest switch tier (0 scale-up, 1 leaf, 2 spine, 3 core: shipped fabrics use 0-3; 64
#: tiers of 4-port switches would hold 2^64 GPUs). Routing sizes tables by tier.
MAX_TIER = 64
#: Deepest nesting of lists/objects (JSON) or elements (GraphML) in a fabric file; node-link
#: JSON needs 4, GraphML 4 (a nested graph is not a fabric).
MAX_DEPTH = 32
BYTES_PER_ITEM = 400  # memory per node or edge, measured (see the module docstring)


def nonzero_range(key: str) -> str | None:
    """What a fabric's quantity ``key`` must be (its :data:`VALUE_RANGES`: a bandwidth and
    lanes leave out 0, a latency holds it), for a number below the smallest a file holds,
    in the words every reader's range takes (:func:`compute.validate.range_words`); None
    where ``key`` has none there.

    >>> nonzero_range("lanes"), nonzero_range("latency")
    ('a number from 1 to 1,000,000 lanes', 'a number from 0 to 10,000,000 s')
    """
    if key not in VALUE_RANGES:
        return None
    least, most, unit, _ = VALUE_RANGES[key]
    return range_words(least, most, unit=unit)


def physical_range(key: str) -> str | None:
    """What a builder's physical parameter ``key`` must be, 0 (or its
    :data:`PHYSICAL_MIN`) up to its :data:`PHYSICAL_MAX`, in
    :func:`compute.validate.range_words`' words, for a number below the smallest; None
    where ``key`` has no such range.

    >>> physical_range("length"), physical_range("n")
    ('a number from 0 to 100,000 m', None)
    """
    if key not in PHYSICAL_MAX:
        return None
    most, unit, _ = PHYSICAL_MAX[key]
    return range_words(PHYSICAL_MIN.get(key, (0,))[0], most, unit=unit)


def range_problem(what: str, key: str, value: float) -> str | None:
    """Why a finite ``value`` of quantity ``key`` that ``what`` holds is outside
    :data:`VALUE_RANGES`, or None (the schema prefixes its own words).

    >>> range_problem("edge 'a'-'b'", "latency", 2e7)
    "edge 'a'-'b' latency must be at most 1e+07 s (a scenario's latency_scale 1e6 of a builder's 1 s, and more: 1e7 s is 116 days a hop), got 20000000.0"
    >>> range_problem("edge 'a'-'b'", "latency", 0.0) is None
    True
    """
    least, most, unit, why = VALUE_RANGES[key]
    if value > most or 0 < value < least:
        bound = f"at most {most:g}" if value > most else f"at least {least:g}"
        return f"{what} {key} must be {bound} {unit} ({why}), got {describe(value)}"
    return None


def _limit(key: str) -> int:
    return setting(ENV[key], DEFAULTS[key])


def max_nodes() -> int:
    """Most nodes a fabric may have (``NETMODEL_MAX_FABRIC_NODES``, default 2,000,000)."""
    return _limit("nodes")


def max_edges() -> int:
    """Most edges a fabric may have (``NETMODEL_MAX_FABRIC_EDGES``, default 10,000,000)."""
    return _limit("edges")


def max_file_bytes() -> int:
    """Largest fabric file read (``NETMODEL_MAX_FABRIC_FILE_BYTES``, default 1 GiB)."""
    return _limit("file_bytes")


#: A tighter bound on the next builds than the limits (``((nodes, why), (edges, why))``),
#: set by :func:`capped`: a rebuild that checks a file's claim refuses what is far larger,
#: the reliability models a fabric past the GPUs they take, a router one past the links it
#: indexes. Each bound keeps the why of the block that set it.
_CAP: contextvars.ContextVar[tuple[tuple[int, str | None], tuple[int, str | None]] | None] = \
    contextvars.ContextVar("cap", default=None)


@contextlib.contextmanager
def capped(nodes: int, edges: int, why: str | None = None) -> Iterator[None]:
    """Builds in this block refuse fabrics estimated over ``nodes`` nodes or ``edges`` edges
    (or the limits, or an enclosing block's cap, if lower), before allocating; ``why``, when
    given, ends a refusal by a bound of this cap's own, below the limits, in place of the
    advice to raise the limits (this cap is not theirs). Inside another block each bound
    is the tighter of the two, with the why of the block that set it (a routed build inside
    the reliability models' cap: a fabric past their nodes is refused for their reason,
    one past the router's links for its own).

    >>> with capped(10, 10, why="the caller takes 10 nodes"):
    ...     check_size("ring", nodes=11, edges=11)
    Traceback (most recent call last):
    compute.errors.UserError: ring: the fabric would have about 11 nodes and 11 edges, over the limit of 10 nodes and 10 edges; the caller takes 10 nodes

    >>> with capped(10, 10):
    ...     check_size("ring", nodes=11, edges=11)
    Traceback (most recent call last):
    compute.errors.UserError: ring: the fabric would have about 11 nodes and 11 edges, over the limit of 10 nodes and 10 edges; build a smaller fabric, or raise NETMODEL_MAX_FABRIC_NODES / NETMODEL_MAX_FABRIC_EDGES if the machine has the memory (about 400 bytes per node or edge)

    >>> with capped(10, 100, why="ten nodes at most"), capped(100, 20, why="twenty edges"):
    ...     check_size("ring", nodes=11, edges=11)
    Traceback (most recent call last):
    compute.errors.UserError: ring: the fabric would have about 11 nodes and 11 edges, over the limit of 10 nodes and 20 edges; ten nodes at most
    """
    bounds = ((nodes, why), (edges, why))
    outer = _CAP.get()
    if outer is not None:   # a block inside another keeps the tighter bound, and its why
        bounds = tuple(o if o[0] <= b[0] else b for o, b in zip(outer, bounds, strict=True))
    token = _CAP.set(bounds)
    try:
        yield
    finally:
        _CAP.reset(token)


def check_size(what: str, nodes: int, edges: int) -> None:
    """Refuse a fabric estimated at ``nodes`` nodes and ``edges`` edges when either is over
    its limit; the message names the estimate, the limits and how to proceed."""
    top_n, top_e = max_nodes(), max_edges()
    cap = _CAP.get()
    whys: list[str] = []
    if cap is not None:
        for (bound, why), count, top in zip(cap, (nodes, edges), (top_n, top_e), strict=True):
            if why and count > bound and bound < top and why not in whys:
                whys.append(why)   # a bound of a cap's own, below the limits, refuses it
        top_n, top_e = min(top_n, cap[0][0]), min(top_e, cap[1][0])
    why = "; ".join(whys) or None
    if nodes <= top_n and edges <= top_e:
        return
    advice = why or (f"build a smaller fabric, or raise {ENV['nodes']} / {ENV['edges']} if "
                     f"the machine has the memory (about {BYTES_PER_ITEM} bytes per node or "
                     f"edge)")
    raise UserError(
        f"{what}: the fabric would have about {counted(nodes, 'node')} and "
        f"{counted(edges, 'edge')}, over the limit of {counted(top_n, 'node')} and "
        f"{counted(top_e, 'edge')}; {advice}")
