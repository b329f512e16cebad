"""The link rule of a fabric graph: what an edge carries, and the checks of it.

An edge is a full-duplex link of ``bandwidth`` (bytes/s per direction), ``latency`` (s),
``medium`` (one of :data:`MEDIA`; :data:`TRACE_MEDIA` are a board's or a package's wiring,
not cables) and ``lanes``, optionally ``links`` (the cables it stands for) and ``length``
(m): the full rule is :mod:`topologies.schema`'s module doc. :func:`check_edges` checks every
edge of a graph at C speed where it can, naming the first one at fault
(:func:`topologies.schema.validate` calls it); :func:`check_positive` and
:func:`check_length` are the rules a builder's link arguments obey too. The value tests the
node checks share (:func:`as_real`, :func:`finite_nonneg`, :func:`whole_from`,
:func:`check_value_range`) are here, below the schema.

>>> import networkx as nx
>>> g = nx.Graph()
>>> g.add_edge("gpu0", "gpu1", bandwidth=450e9, latency=1e-6, medium="copper", lanes=-1)
>>> check_edges(g._adj, [])
Traceback (most recent call last):
...
compute.errors.UserError: invalid fabric graph: edge 'gpu0'-'gpu1' lanes must be a whole number >= 1, got -1
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Hashable, Mapping

from compute.errors import UserError, known, lookalike
from compute.units import check_plausible
from compute.validate import describe, is_whole
from topologies.limits import PHYSICAL_MAX, PHYSICAL_MIN, VALUE_RANGES, range_problem
from topologies.schema_text import invalid

__all__ = ["EDGE_KEYS", "EDGE_TYPED", "MEDIA", "MEDIA_SET", "TRACE_MEDIA", "as_real",
           "check_edges", "check_length", "check_positive", "check_value_range",
           "finite_nonneg", "whole_from"]

MEDIA = ("on-package", "board", "copper", "pluggable-optics", "co-packaged-optics", "fibre",
         "ocs-circuit")
#: Media that are wiring of a package or a board, not cables (see the module doc): HGX H100
#: 8-GPU baseboard, eight H100 and four NVSwitch chips on one board, each GPU connected to
#: all four (NVIDIA, "Introducing NVIDIA HGX H100", developer blog, 2022; Fabric Manager
#: user guide, "GPU Baseboard Topologies").
TRACE_MEDIA = ("on-package", "board")
#: Required edge attributes.
EDGE_KEYS = ("bandwidth", "latency", "medium", "lanes")
#: :data:`MEDIA` as a set, for the per-edge checks.
MEDIA_SET = frozenset(MEDIA)
#: The edge attributes whose values the schema types: an edge with any other is passed to
#: :func:`~topologies.schema_text.check_attribute_texts`.
EDGE_TYPED = frozenset((*EDGE_KEYS, "links", "length"))
_INF = math.inf
_MIN_BW, _MAX_BW = VALUE_RANGES["bandwidth"][:2]
_MAX_LATENCY = VALUE_RANGES["latency"][1]
_MAX_LANES = VALUE_RANGES["lanes"][1]
_MIN_LINKS, _MAX_LINKS = VALUE_RANGES["links"][:2]
_MAX_LENGTH = PHYSICAL_MAX["length"][0]   # check_length's, tested per edge at C speed


def check_value_range(what: str, key: str, value: float) -> None:
    """Refuse a finite ``value`` of quantity ``key`` outside
    :data:`~topologies.limits.VALUE_RANGES`, naming ``what`` (a link, a switch, an OCS)."""
    if (problem := range_problem(what, key, value)) is not None:
        invalid(problem)


def as_real(value: object) -> float | None:
    """``value`` as a float if it is a real number (not a bool, not too large), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except (OverflowError, ValueError, TypeError):
        return None


def finite_nonneg(value: object) -> bool:
    """Whether ``value`` is a real number (:func:`as_real`), finite and >= 0.

    >>> finite_nonneg(0), finite_nonneg(2.5), finite_nonneg(float("inf")), finite_nonneg(True)
    (True, True, False, False)
    """
    x = as_real(value)
    return x is not None and 0 <= x < _INF


def whole_from(value: object, minimum: int) -> bool:
    """Whether ``value`` is a whole number (:func:`compute.validate.is_whole`) >= ``minimum``.

    >>> whole_from(4, 1), whole_from(0, 1), whole_from(4.0, 1), whole_from(True, 0)
    (True, False, False, False)
    """
    return is_whole(value) and value >= minimum  # type: ignore[operator]  # an integer compares


def _got(value: object) -> str:
    """``got VALUE`` for a refusal of a number; for a text, that it is one (a GraphML
    ``<key>`` of ``attr.type`` ``string``, as tools that export every attribute as text
    write it, or a JSON string): ``got '225000000000.0'`` read as a number refused as one.

    >>> _got(-1.0), _got("4.5e11")
    ('got -1.0', "got the text '4.5e11', not a number (a GraphML <key> of attr.type 'string' or a quoted JSON value; give the number itself)")
    """
    if isinstance(value, str):
        return (f"got the text {describe(value)}, not a number (a GraphML <key> of attr.type "
                f"'string' or a quoted JSON value; give the number itself)")
    return f"got {describe(value)}"


def _edge_problem(u: Hashable, v: Hashable, data: dict) -> None:

    if u == v:
        invalid(f"edge {describe(u)}-{describe(v)} joins a node to itself (self-loops are not links)")
    missing = [k for k in EDGE_KEYS if k not in data]
    if missing:
        invalid(f"edge {describe(u)}-{describe(v)} lacks attribute(s) {', '.join(missing)}")
    bw = data["bandwidth"]
    if not (finite_nonneg(bw) and bw > 0):
        invalid(f"edge {describe(u)}-{describe(v)} bandwidth must be finite and > 0 bytes/s, {_got(bw)}")
    if not finite_nonneg(data["latency"]):
        invalid(f"edge {describe(u)}-{describe(v)} latency must be finite and >= 0 s, "
             f"{_got(data['latency'])}")
    check_value_range(f"edge {describe(u)}-{describe(v)}", "bandwidth", bw)
    check_value_range(f"edge {describe(u)}-{describe(v)}", "latency", data["latency"])
    lanes = data["lanes"]
    if not whole_from(lanes, 1):
        x = as_real(lanes)
        if x is None or not math.isfinite(x) or x < 1 or x != int(x):
            invalid(f"edge {describe(u)}-{describe(v)} lanes must be a whole number >= 1, {_got(lanes)}")
    links = data.get("links", 1)
    if not (finite_nonneg(links) and links > 0):
        invalid(f"edge {describe(u)}-{describe(v)} links must be finite and > 0 cables, {_got(links)}")
    check_value_range(f"edge {describe(u)}-{describe(v)}", "lanes", lanes)
    check_value_range(f"edge {describe(u)}-{describe(v)}", "links", links)
    medium = data["medium"]
    if not isinstance(medium, str) or medium not in MEDIA_SET:
        invalid(f"edge {describe(u)}-{describe(v)} medium {describe(medium)} is not one of "
                f"{known(MEDIA)}{lookalike(medium, MEDIA)}")


def check_positive(what: str, value: object, *, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (>= 0 with ``allow_zero``), and, for a physical
    quantity whose name ends in one of :data:`~topologies.limits.PHYSICAL_MAX`'s (latency,
    bandwidth, length, reconfiguration_time), at most its plausible maximum; a bandwidth
    or latency within a link's range (:func:`compute.units.check_plausible`,
    ``link_bandwidth``, ``link_latency``).

    >>> check_positive("reconfiguration_time", 1e300)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: reconfiguration_time must be at most 3600 s (MEMS circuit switches reconfigure in about 10 ms, patch panels by hand in minutes), got 1e+300
    """
    x = as_real(value)
    if x is None or not math.isfinite(x) or not (x >= 0 if allow_zero else x > 0):
        rule = ">= 0" if allow_zero else "> 0"
        raise UserError(f"{what} must be a finite number {rule}, got {describe(value)}")
    for name in ("bandwidth", "latency"):   # a link's plausible range (limits.toml)
        if what.endswith(name) and x > 0:
            check_plausible(f"link_{name}", x, what)
    for name, (most, unit, why) in PHYSICAL_MAX.items():
        if what.endswith(name) and x > most:
            raise UserError(f"{what} must be at most {most:g} {unit} ({why}), got "
                            f"{describe(value)}")
    for name, (least, unit, why) in PHYSICAL_MIN.items():
        if what.endswith(name) and 0 < x < least:
            raise UserError(f"{what} must be at least {least:g} {unit} ({why}), got "
                            f"{describe(value)}")
    return x


def check_length(value: object) -> float:
    """A cable length in metres: finite, >= 0."""
    return check_positive("length", value, allow_zero=True)


def _length_problem(u: Hashable, v: Hashable, length: object) -> None:
    """Refuse an edge's cable ``length`` (m) that a builder's ``length`` would refuse
    (:func:`check_length`: finite, >= 0, at most 100 km): the network bill and
    :func:`topologies.optical.ocs_cabling` read it (the ``ocs`` builder's fibres carry
    it), and a hand-built graph's NaN, -1, inf or ``'2m'`` passed where every builder says
    no."""
    try:
        check_length(length)
    except UserError as exc:
        invalid(f"edge {describe(u)}-{describe(v)} {exc}")


_FOUR = operator.itemgetter("bandwidth", "latency", "lanes", "medium")


def check_edges(adj: Mapping, untyped: list) -> tuple[bool, list]:
    """Check every edge of the adjacency ``adj``, walked in ``graph.edges`` order (each
    node's neighbours in turn, an edge met again from its other end skipped) so that the
    first bad edge is the one named; whether any edge has a ``links`` count, and the
    circuit edges ``(u, v, data)`` (checked against the nodes later); appends to ``untyped``
    the edges with attributes the schema does not type."""
    cables = False
    circuits = []
    seen: set = set()
    add = seen.add
    for u, nbrs in adj.items():
        for v, data in nbrs.items():
            if v in seen:
                continue
            try:
                bw, lat, lanes, medium = _FOUR(data)
            except KeyError:
                _edge_problem(u, v, data)  # names what it lacks
            links = 1
            if len(data) > 4:
                if "links" in data:
                    links = data["links"]
                    cables = True
                if "length" in data:
                    x = data["length"]
                    if not (x.__class__ is float and 0 <= x <= _MAX_LENGTH):
                        _length_problem(u, v, x)   # an int passes; names what is wrong
                if not data.keys() <= EDGE_TYPED:
                    untyped.append((u, v, data))
            if not (bw.__class__ is float and _MIN_BW <= bw <= _MAX_BW and lat.__class__ is float
                    and 0 <= lat <= _MAX_LATENCY and lanes.__class__ is int
                    and 1 <= lanes <= _MAX_LANES
                    and (links.__class__ is int and 1 <= links <= _MAX_LINKS
                         or links.__class__ is float and _MIN_LINKS <= links <= _MAX_LINKS)
                    and medium.__class__ is str and medium in MEDIA_SET and u != v):
                _edge_problem(u, v, data)
            if medium == "ocs-circuit":
                circuits.append((u, v, data))
        add(u)  # after its neighbours, as the edge view does (a self-loop is listed)
    return cables, circuits
