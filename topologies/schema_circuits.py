"""The circuits of an optical circuit switch fabric, as the schema reads them.

Which OCS an ``ocs-circuit`` edge's circuits pass (:func:`circuit_via`), how many circuits
a graph holds (:func:`circuit_count`), each circuit's bandwidth and lanes where a pair's
circuits differ (:func:`circuit_each`), an edge's bandwidth scaled with its circuits'
(:func:`scale_bandwidth`; a realized fabric's fibres with them, :func:`scale_cabling`),
and the rule that a GPU holds one circuit through each OCS
(:func:`check_ports_held`), for :mod:`topologies.schema`.

Each reads one edge's attributes (or a graph's edges) and refuses what it cannot read with
:class:`~compute.errors.UserError` ``invalid fabric graph: ...`` naming the edge and the
value; :func:`topologies.schema.validate` calls them on every circuit, and the degraded
fabric, the drawing and the collective model call the same readers. Importable from
:mod:`topologies.schema` as well, where they were first defined.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import NoReturn

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.validate import describe
from topologies.schema_text import INVALID

__all__ = ["check_ports_held", "circuit_count", "circuit_each", "circuit_via",
           "scale_bandwidth", "scale_cabling"]


def _bad(msg: str) -> NoReturn:
    raise UserError(f"{INVALID}: {msg}")


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
        _bad(f"circuit {describe(u)}-{describe(v)} 'via' must name the OCS node(s) it passes "
             f"(comma-separated), got {describe(via)}: {describe(twice)} twice (a GPU has one "
             f"port on an OCS)")
    if not names or bad is not None:
        why = "" if bad is None else (": an empty name" if not bad else
                                       f": {describe(bad)} is not an OCS of the graph")
        _bad(f"circuit {describe(u)}-{describe(v)} 'via' must name the OCS node(s) it passes "
             f"(comma-separated), got {describe(via)}{why}")
    return names


def circuit_count(graph: nx.Graph) -> int:
    """The circuits of ``graph``: its ``ocs-circuit`` edges, each counted ``links`` times
    (parallel circuits of one pair are one edge). The graph attribute ``circuits`` is this
    count: :func:`topologies.optical.realize` writes it, and a degraded fabric
    (:func:`topologies.failure_domains.degrade`,
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
        _bad(f"circuit {describe(u)}-{describe(v)} via_bandwidth {describe(rates)} and "
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


def check_ports_held(circuits: list) -> None:
    """Refuse two circuits through one OCS at one GPU: each GPU has one port on each OCS
    (its fibre to it), and a circuit holds that port, so the circuits through an OCS share
    no GPU (a matching; :func:`topologies.optical.realize` sets them so). The ``via`` of
    each of ``circuits`` (``(u, v, data)``, checked by :func:`topologies.schema._circuit_problem`) is read
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
        _bad(f"GPU {describe(gpu)} holds 2 circuits through OCS {describe(o)} (circuits "
             f"{' and '.join(ends)}), but it has one port on each OCS")
