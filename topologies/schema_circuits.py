"""The circuits of an optical circuit switch fabric, as the schema reads them.

Which OCS an ``ocs-circuit`` edge's circuits pass (:func:`circuit_via`), how many circuits
a graph holds (:func:`circuit_count`), each circuit's bandwidth and lanes where a pair's
circuits differ (:func:`circuit_each`), an edge's bandwidth scaled with its circuits'
(:func:`scale_bandwidth`; a realized fabric's fibres with them, :func:`scale_cabling`),
the media that carry light, the only ones an OCS port takes (:data:`OPTICAL_MEDIA`), and
the checks of a graph's circuit edges (:func:`check_circuits`: each joins two GPUs through
OCS nodes of the graph, a GPU holds one circuit through each OCS, :func:`check_ports_held`,
and the graph has an OCS), for :mod:`topologies.schema`.

Each reads one edge's attributes (or a graph's edges) and refuses what it cannot read with
:class:`~compute.errors.UserError` ``invalid fabric graph: ...`` naming the edge and the
value; :func:`topologies.schema.validate` calls them on every circuit, and the degraded
fabric, the drawing and the collective model call the same readers. Importable from
:mod:`topologies.schema` as well, where they were first defined.

The OCS cabling a realized fabric carries (its graph attribute ``ocs_cabling``) is
checked here too: its per-fibre columns (:data:`CABLING_FIBRES`) by
:func:`check_cabling_columns`, once for columns (tuples) already checked (every graph
realized from one cabling shares them: :data:`_CHECKED_FIBRES`, under a lock), and the
record against the graph's OCS ports, circuits and nodes by :func:`check_cabling_fits`;
:func:`topologies.schema.validate` calls both.
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Collection, Hashable, Mapping

import networkx as nx
import numpy as np

from compute.errors import known
from compute.memo import Lru
from compute.validate import describe, is_whole
from topologies.limits import PHYSICAL_MAX, VALUE_RANGES, range_problem
from topologies.schema_text import invalid

__all__ = ["CABLING_FIBRES", "OPTICAL_MEDIA", "check_cabling_columns", "check_cabling_fits",
           "check_circuits", "check_ports_held", "circuit_count", "circuit_each", "circuit_via",
           "scale_bandwidth", "scale_cabling"]

#: The longest fibre, as an edge's cable (:data:`~topologies.limits.PHYSICAL_MAX`).
_MAX_LENGTH = PHYSICAL_MAX["length"][0]

#: The columns of ``ocs_cabling["fibres"]`` (one entry a GPU-OCS edge of the cabling):
#: its GPU and OCS nodes, its cables, bandwidth (bytes/s per direction, all its cables),
#: lanes and length (m) (:func:`topologies.optical.ocs_cabling`).
CABLING_FIBRES = ("gpu", "ocs", "cables", "bandwidth", "lanes", "length")
#: Media that carry light, the only ones an OCS port takes (its mirrors steer light from
#: fibre to fibre; Google's Palomar OCS, Jouppi et al., ISCA 2023).
OPTICAL_MEDIA = ("pluggable-optics", "co-packaged-optics", "fibre")
_MAX_LANES, _LANES_WHY = VALUE_RANGES["lanes"][1], VALUE_RANGES["lanes"][3]


def circuit_via(u: Hashable, v: Hashable, data: Mapping,
                nodes: Mapping | None = None) -> tuple[str, ...]:
    """The OCS nodes the ``u``-``v`` edge's circuits pass, in order, from its ``via``
    (the one reading of it: the schema's check, :func:`topologies.draw.figure`, and the
    degraded fabric's failed switches and fibres all call this).

    ``()`` for an edge that is not an ``ocs-circuit`` or whose ``via`` is absent or None
    (optional: a costing drops it to merge alike circuit sets). Otherwise ``via`` is a
    string of OCS node names joined by commas (``"ocs0,ocs2"``, as
    :func:`topologies.optical.realize` writes it; names are taken as written, spaces
    included), none empty; given the graph's ``nodes`` (``graph.nodes``), each one an OCS of
    it; no name twice (each GPU has one port on an OCS, so two circuits of a pair ride two
    OCS). Anything else (a list, a number, ``""``, ``"ocs0,,ocs1"``, ``"ocs0,ocs0"``) raises
    UserError naming the value.

    >>> circuit_via("gpu0", "gpu1", {"medium": "ocs-circuit", "via": "ocs0,ocs2"})
    ('ocs0', 'ocs2')
    >>> circuit_via("gpu0", "gpu1", {"medium": "ocs-circuit"})
    ()
    >>> circuit_via("gpu0", "gpu1", {"medium": "ocs-circuit", "via": "ocs0,"})
    Traceback (most recent call last):
    compute.errors.UserError: invalid fabric graph: circuit 'gpu0'-'gpu1' 'via' must name the OCS node(s) it passes (comma-separated), got 'ocs0,': an empty name
    """
    via = data.get("via")
    if via is None or data.get("medium") != "ocs-circuit":
        return ()
    names = tuple(via.split(",")) if isinstance(via, str) else ()
    if nodes is None:
        bad = next((o for o in names if not o), None)
    else:
        bad = next((o for o in names if o not in nodes or nodes[o].get("kind") != "ocs"),
                   None)
    if bad is None and len(set(names)) != len(names):
        twice = next(o for o in names if names.count(o) > 1)
        invalid(f"circuit {describe(u)}-{describe(v)} 'via' must name the OCS node(s) it passes "
             f"(comma-separated), got {describe(via)}: {describe(twice)} twice (a GPU has one "
             f"port on an OCS)")
    if not names or bad is not None:
        why = "" if bad is None else (": an empty name" if not bad else
                                       f": {describe(bad)} is not an OCS of the graph")
        invalid(f"circuit {describe(u)}-{describe(v)} 'via' must name the OCS node(s) it passes "
             f"(comma-separated), got {describe(via)}{why}")
    return names


def circuit_count(graph: nx.Graph) -> int:
    """The circuits of ``graph``: its ``ocs-circuit`` edges, each counted ``links`` times
    (parallel circuits of one pair are one edge). The graph attribute ``circuits`` is this
    count: :func:`topologies.optical.realize` writes it, and a degraded fabric
    (:func:`topologies.degrade.degrade`,
    :func:`netmodel.collectives.degraded.degrade`) recounts it.

    >>> g = nx.Graph()
    >>> g.add_edge("gpu0", "gpu1", medium="ocs-circuit", links=2)
    >>> g.add_edge("gpu2", "gpu3", medium="ocs-circuit")
    >>> g.add_edge("gpu0", "ocs0", medium="fibre")
    >>> circuit_count(g)
    3
    """
    return sum(int(d.get("links", 1)) for _, _, d in graph.edges(data=True)
               if d.get("medium") == "ocs-circuit")


def circuit_each(u: Hashable, v: Hashable,
                 data: Mapping) -> tuple[list[float], list[int]] | None:
    """Each circuit's bandwidth (bytes/s) and lanes of the ``u``-``v`` ``ocs-circuit``
    edge, in its ``via``'s order, from ``via_bandwidth`` and ``via_lanes``
    (:func:`topologies.optical.realize` writes them, comma-separated, where a pair's
    circuits differ); None where neither is given (equal circuits: equal shares). They
    must come together, one of each a circuit (``links``), bandwidths finite and >= 0,
    lanes whole and >= 1, summing to the edge's ``bandwidth`` (to 1e-9) and ``lanes``;
    anything else raises UserError naming both.

    >>> circuit_each("a", "b", {"bandwidth": 3.0, "lanes": 3, "links": 2,
    ...                         "via_bandwidth": "2.0,1.0", "via_lanes": "2,1"})
    ([2.0, 1.0], [2, 1])
    >>> circuit_each("a", "b", {"bandwidth": 9.0, "lanes": 3, "links": 2,
    ...                         "via_bandwidth": "2.0,1.0", "via_lanes": "2,1"})
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: circuit 'a'-'b' via_bandwidth '2.0,1.0' and via_lanes '2,1' must give each of its 2 circuits' bandwidth and lanes (comma-separated, summing to its bandwidth 9.0 and lanes 3)
    """
    rates, lanes = data.get("via_bandwidth"), data.get("via_lanes")
    if rates is None and lanes is None:
        return None
    count, bandwidth, total = data.get("links", 1), data.get("bandwidth"), data.get("lanes")
    try:
        each = ([float(x) for x in str(rates).split(",")],
                [int(x) for x in str(lanes).split(",")])
        fits = len(each[0]) == len(each[1]) == count and min(each[1]) >= 1 and \
            all(0 <= x < math.inf for x in each[0]) and \
            math.isclose(math.fsum(each[0]), float(bandwidth), rel_tol=1e-9) and \
            sum(each[1]) == total
    except (TypeError, ValueError):
        fits = False
    if not fits:
        invalid(f"circuit {describe(u)}-{describe(v)} via_bandwidth {describe(rates)} and "
             f"via_lanes {describe(lanes)} must give each of its {describe(count)} circuits' "
             f"bandwidth and lanes (comma-separated, summing to its bandwidth "
             f"{describe(bandwidth)} and lanes {describe(total)})")
    return each


def scale_bandwidth(data: dict, factor: float) -> None:
    """Scale the edge ``data``'s ``bandwidth`` by ``factor`` in place, and with it each
    circuit's of an ``ocs-circuit`` edge whose circuits differ (``via_bandwidth``, which
    :func:`circuit_each` holds to summing to the edge's): a fabric's links scaled as a
    whole (a scenario's ``bandwidth_scale``) stay valid, and a failed OCS then takes its
    circuit's scaled share.

    >>> d = {"bandwidth": 3.0, "lanes": 3, "links": 2, "via_bandwidth": "2.0,1.0",
    ...      "via_lanes": "2,1"}
    >>> scale_bandwidth(d, 0.5)
    >>> d["bandwidth"], d["via_bandwidth"], circuit_each("a", "b", d)
    (1.5, '1.0,0.5', ([1.0, 0.5], [2, 1]))
    """
    data["bandwidth"] = data["bandwidth"] * factor
    each = data.get("via_bandwidth")
    if each is not None:
        data["via_bandwidth"] = ",".join(repr(float(x) * float(factor))
                                         for x in str(each).split(","))



def scale_cabling(attrs: dict, factor: float) -> None:
    """Scale the fibres of a realized OCS fabric's cabling (the graph attributes
    ``attrs``' ``ocs_cabling``, :func:`topologies.optical.ocs_cabling`) with its links
    (:func:`scale_bandwidth`): each fibre's ``bandwidth`` times ``factor``, its cables,
    lanes and length as they are (a faster lane, the same cable in the ground). The
    record is replaced, not changed: the fabric it came from shares it (its other columns
    are shared still). Nothing to scale where there is no record, or no fibres in it (a
    fabric file saved before them: their rate is read back from the circuits, which are
    scaled), or ``factor`` is 1.

    >>> attrs = {"ocs_cabling": {"medium": "co-packaged-optics", "cables": 2, "lanes": 4,
    ...          "fibres": {"gpu": ("g0", "g1"), "ocs": ("o0", "o0"), "cables": (1, 1),
    ...                     "bandwidth": (2.0, 3.0), "lanes": (2, 2), "length": (10.0, 5.0)}}}
    >>> before = attrs["ocs_cabling"]
    >>> scale_cabling(attrs, 0.5)
    >>> attrs["ocs_cabling"]["fibres"]["bandwidth"], before["fibres"]["bandwidth"]
    ((1.0, 1.5), (2.0, 3.0))
    >>> attrs["ocs_cabling"]["fibres"]["length"] is before["fibres"]["length"]
    True
    """
    cabling = attrs.get("ocs_cabling")
    if cabling is None or "fibres" not in cabling or factor == 1:
        return
    fibres = cabling["fibres"]
    rates = np.asarray(fibres["bandwidth"], dtype=float) * float(factor)
    attrs["ocs_cabling"] = {**cabling, "fibres": {**fibres, "bandwidth": tuple(rates.tolist())}}


def _circuit_problem(u: Hashable, v: Hashable, data: dict, nodes: Mapping) -> None:
    """An ``ocs-circuit`` edge: two GPUs, ``via`` the OCS node(s) it passes, ``optics`` (if
    given) an optical medium."""
    name = f"circuit {describe(u)}-{describe(v)}"
    ends = [n for n in (u, v) if nodes[n].get("kind") != "gpu"]
    if ends:
        invalid(f"{name} ends on {nodes[ends[0]].get('kind')} {describe(ends[0])}: an ocs-circuit "
             f"joins two GPUs through an OCS (an edge to the OCS is a fibre)")
    via = circuit_via(u, v, data, nodes)
    links = data.get("links", 1)
    if via and len(via) != links:   # circuit_count counts links, drop_circuits the names
        invalid(f"{name} 'via' {describe(data['via'])} names {len(via)} OCS for "
             f"{describe(links)} circuits ('links'): one OCS a circuit")
    circuit_each(u, v, data)
    optics = data.get("optics")
    if optics is not None and optics not in OPTICAL_MEDIA:
        invalid(f"{name} optics {describe(optics)} must be the GPU ports' optical medium: "
             f"{known(OPTICAL_MEDIA)}")


def check_circuits(circuits: list, nodes: Mapping, ocs_ports: int) -> None:
    """Check the ``ocs-circuit`` edges ``circuits`` (``(u, v, data)``, in the graph's edge
    order) against the graph's nodes ``nodes`` (node -> attributes) and its OCS ports in
    all, ``ocs_ports``: each joins two GPUs through OCS nodes of the graph
    (:func:`_circuit_problem`), no GPU holds two circuits through one OCS
    (:func:`check_ports_held`), and the graph has an OCS to set them through; UserError
    naming the first circuit at fault."""
    for u, v, data in circuits:
        _circuit_problem(u, v, data, nodes)
    if circuits:
        check_ports_held(circuits)
    if circuits and not ocs_ports:
        u, v, _ = circuits[0]
        invalid(f"circuit {describe(u)}-{describe(v)} is an ocs-circuit but the graph has no OCS node "
             f"to set it through")


def check_ports_held(circuits: list) -> None:
    """Refuse two circuits through one OCS at one GPU: each GPU has one port on each OCS
    (its fibre to it), and a circuit holds that port, so the circuits through an OCS share
    no GPU (a matching; :func:`topologies.optical.realize` sets them so). The ``via`` of
    each of ``circuits`` (``(u, v, data)``, checked by :func:`_circuit_problem`) is read
    per GPU, its names joined and split once.

    >>> check_ports_held([("a", "b", {"medium": "ocs-circuit", "via": "o0"}),
    ...                    ("b", "c", {"medium": "ocs-circuit", "via": "o1,o0"})])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: GPU 'b' holds 2 circuits through OCS 'o0' (circuits 'a'-'b' and 'b'-'c'), but it has one port on each OCS
    """
    held: dict = {}
    for u, v, data in circuits:
        via = data.get("via")
        if isinstance(via, str):   # absent or None: a costing merged it away
            held.setdefault(u, []).append(via)
            held.setdefault(v, []).append(via)
    for gpu, vias in held.items():
        names = ",".join(vias).split(",")
        if len(set(names)) == len(names):
            continue
        seen: set = set()
        o = next(o for o in names if o in seen or seen.add(o))
        ends = [f"{describe(a)}-{describe(b)}" for a, b, d in circuits if gpu in (a, b)
                and o in str(d.get("via")).split(",")][:2]
        invalid(f"GPU {describe(gpu)} holds 2 circuits through OCS {describe(o)} (circuits "
             f"{' and '.join(ends)}), but it has one port on each OCS")


def _hashable_kind(data: Mapping, node: object, kind: str) -> bool:
    """Is ``node`` (from a file: any JSON value) a node of ``data`` of kind ``kind``?"""
    try:
        return data.get(node, {}).get("kind") == kind
    except TypeError:   # a list is no node id
        return False


def _absent(data: Mapping, node: object) -> bool:
    """Is ``node`` (from a file: any JSON value) a node id (text, as every node's) that is
    no node of ``data``? (A number was taken as a GPU outside the graph.)"""
    return isinstance(node, str) and node not in data


class _CheckedFibres:
    """A fibres record's columns that passed :func:`check_cabling_columns`, with their
    sums, their distinct ends (None where one is no hashable id) and whether no
    ``(gpu, ocs)`` pair is listed twice: what :func:`check_cabling_fits` reads."""

    __slots__ = ("columns", "cables", "lanes", "gpus", "ocs", "unique")

    def __init__(self, fibres: Mapping) -> None:
        self.columns = tuple(fibres[c] for c in CABLING_FIBRES)
        self.cables, self.lanes = sum(fibres["cables"]), sum(fibres["lanes"])
        try:
            self.gpus, self.ocs = frozenset(fibres["gpu"]), frozenset(fibres["ocs"])
            self.unique = len(set(zip(fibres["gpu"], fibres["ocs"], strict=True))) \
                == len(fibres["gpu"])
        except TypeError:   # a list (from a file) is no node id: named fibre by fibre
            self.gpus = self.ocs = None
            self.unique = False


_CHECKED_MAX = 4
#: The fibres records that passed :func:`check_cabling_columns`, by their columns' ids,
#: the least recently used dropped past :data:`_CHECKED_MAX`: each holds its columns
#: (tuples: unchanged while held, their ids not reused). Every graph realized from one
#: cabling shares its record (:func:`topologies.optical.ocs_cabling`): 524,288 fibres at
#: 4,096 ports a Lite, checked once, not once a graph.
_CHECKED_FIBRES = Lru(_CHECKED_MAX)
#: Guards :data:`_CHECKED_FIBRES` (fabrics validated on threads: a look-up checks its
#: entry's columns before it makes the entry the most recent).
_CHECKED_LOCK = threading.Lock()


def _checked_fibres(fibres: Mapping) -> _CheckedFibres | None:
    """The entry of :data:`_CHECKED_FIBRES` whose columns are ``fibres``' own objects
    (tuples), or None."""
    columns = tuple(fibres[c] for c in CABLING_FIBRES)
    if not all(c.__class__ is tuple for c in columns):
        return None
    key = tuple(map(id, columns))
    with _CHECKED_LOCK:
        hit = _CHECKED_FIBRES.get(key)
        if hit is None or not all(map(operator.is_, hit.columns, columns)):
            return None
        _CHECKED_FIBRES.move_to_end(key)
    return hit


def _fine_column(column: Collection, whole: bool, positive: bool) -> bool:
    """Whether every value of ``column`` passes, told at C speed: Python ints >= 1
    (``whole``), else finite Python ints or floats, > 0 (``positive``) or >= 0. False
    where it cannot be told so (another type, a huge int, a wrong value): the caller goes
    value by value and names the first wrong one."""
    if not column:
        return True
    types = set(map(type, column))
    if whole:
        return types == {int} and min(column) >= 1
    if not types <= {int, float}:
        return False
    try:
        a = np.fromiter(column, dtype=float, count=len(column))
    except OverflowError:
        return False
    return bool(np.isfinite(a).all() and ((a > 0).all() if positive else (a >= 0).all()))


def check_cabling_columns(fibres: object) -> None:
    """``ocs_cabling["fibres"]``'s shape and values (:data:`CABLING_FIBRES`: columns of
    one length, whole cables and lanes >= 1, bandwidth > 0, length >= 0, all finite)."""
    what = ("graph attribute 'ocs_cabling' 'fibres' must be {"
            + ", ".join(f"{c!r}: [...]" for c in CABLING_FIBRES) + "}, columns of one length")
    if not isinstance(fibres, dict) or set(fibres) != set(CABLING_FIBRES) or any(
            not isinstance(c, list | tuple) for c in fibres.values()) \
            or len({len(c) for c in fibres.values()}) != 1:
        invalid(f"{what}, got {describe(fibres)}")
    if _checked_fibres(fibres) is not None:
        return   # these very columns (tuples) passed already
    for key, low, whole in (("cables", 1, True), ("lanes", 1, True), ("bandwidth", 0, False),
                            ("length", 0, False)):
        # all of them at once, else value by value (the first wrong named)
        for x in () if _fine_column(fibres[key], whole, key == "bandwidth") else fibres[key]:
            fine = is_whole(x) and x >= low if whole else (
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                and (x > 0 if key == "bandwidth" else x >= 0))
            if not fine:
                invalid(f"graph attribute 'ocs_cabling' fibre {key} must be "
                     f"{'whole >= 1' if whole else ('> 0' if key == 'bandwidth' else '>= 0')},"
                     f" got {describe(x)}")
        if key == "bandwidth" and fibres[key]:   # an edge's bounds
            for x in (min(fibres[key]), max(fibres[key])):
                if (problem := range_problem("graph attribute 'ocs_cabling' fibre", key,
                                             x)) is not None:
                    invalid(problem)
        if key == "length" and fibres[key] and max(fibres[key]) > _MAX_LENGTH:
            # an edge's bound: the network bill prices each fibre by its length (1e300 m
            # printed a capex of 309 digits)
            most, unit, why = PHYSICAL_MAX["length"]
            invalid(f"graph attribute 'ocs_cabling' fibre length must be at most {most:g} "
                    f"{unit} ({why}), got {describe(max(fibres[key]))}")
    if all(c.__class__ is tuple for c in fibres.values()):   # kept: unchanged while held
        checked = _CheckedFibres(fibres)
        with _CHECKED_LOCK:
            _CHECKED_FIBRES.put(tuple(map(id, checked.columns)), checked)


def check_cabling_fits(graph: nx.Graph, ocs_ports: int) -> None:
    """``ocs_cabling`` (its types checked already) against the graph: every fibre ends on
    one OCS port, each circuit rides two fibres, and a cable has at least one lane."""
    cabling = graph.graph.get("ocs_cabling")
    if cabling is None:
        return
    cables, lanes = cabling["cables"], cabling["lanes"]
    circuits = sum(d.get("links", 1) for _, _, d in graph.edges(data=True)
                   if d["medium"] == "ocs-circuit")
    if cables > ocs_ports:
        invalid(f"graph attribute 'ocs_cabling' has {describe(cables)} cables but the graph's OCS "
             f"have {ocs_ports} ports (one fibre a port)")
    if cables < 2 * circuits - 1e-6:
        invalid(f"graph attribute 'ocs_cabling' has {describe(cables)} cables, fewer than the "
             f"2 x {circuits:g} its circuits ride on")
    if not cables <= lanes or (cables == 0) != (lanes == 0):
        invalid(f"graph attribute 'ocs_cabling' has {describe(lanes)} lanes on {describe(cables)} "
             f"cables; each cable has at least one lane")
    if lanes > cables * _MAX_LANES:   # an edge's own bound, a cable at a time (1e20 printed)
        invalid(f"graph attribute 'ocs_cabling' has {describe(lanes)} lanes on {describe(cables)} "
             f"cables; at most {_MAX_LANES:g} a cable ({_LANES_WHY})")
    fibres = cabling.get("fibres")
    if fibres is not None:   # the columns' sums are the record's, their ends the graph's
        # what the columns' check kept of them (every graph realized from one cabling
        # shares its columns), else read here
        checked = _checked_fibres(fibres) or _CheckedFibres(fibres)
        if checked.cables != cables or checked.lanes != lanes:
            invalid(f"graph attribute 'ocs_cabling' has {describe(cables)} cables and "
                 f"{describe(lanes)} lanes but its fibres {checked.cables} and "
                 f"{checked.lanes}")
        # every OCS stays a node; a GPU end may be outside the graph, where a part of a
        # cell (a placed instance's circuits) carries the whole cell's cabling, but not a
        # node of another kind: each distinct end looked up once, else fibre by fibre (the
        # first wrong one named)
        data = graph._node
        if checked.ocs is not None and checked.unique \
                and all(_hashable_kind(data, o, "ocs") for o in checked.ocs) \
                and all(_hashable_kind(data, g, "gpu") or _absent(data, g)
                        for g in checked.gpus):
            return
        for g, o in zip(fibres["gpu"], fibres["ocs"], strict=True):
            if not _hashable_kind(data, o, "ocs") or not (
                    _hashable_kind(data, g, "gpu") or _absent(data, g)):
                invalid(f"graph attribute 'ocs_cabling' has a fibre {describe(g)}-{describe(o)}; "
                     f"a fibre joins a GPU (a node of the graph, or the name of one outside "
                     f"it) to an OCS node of the graph")
        if len(set(zip(fibres["gpu"], fibres["ocs"], strict=True))) != len(fibres["gpu"]):
            invalid("graph attribute 'ocs_cabling' names a GPU-OCS fibre twice; one entry a pair")
