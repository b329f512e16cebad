"""A tuner plugin's choice of algorithm and protocol, for comparing with runs that used one.

NCCL lets a plugin override its tuner (``NCCL_TUNER_PLUGIN``). AWS's OFI NCCL plugin ships
one whose "region" tuner picks the all-reduce algorithm and protocol on p5 from fixed
polygons over (message size, ranks), in log2 space, choices NCCL's own cost model would not
make (ring/LL128 up to 1-2 GiB, tree/LL128 up to 288 MiB on 16-32 nodes). The polygons are
data (``netmodel/data/collective_tuner_plugins.toml``, with their source);
:class:`TunerPlugin` reads one platform's, and a
:class:`~netmodel.collectives.model.FabricCostModel` given it as ``tuner`` costs with the
plugin's choice where it makes one and its ``auto`` where it leaves the choice to NCCL.
The library's ``auto`` is NCCL's and stays so unless a tuner is named: :func:`tuner_names` lists the names
(``PLUGIN:SET``, from the data file's tables) that a scenario's ``[collective] tuner``,
``netmodel collective --tuner`` and :class:`~netmodel.collectives.model.FabricCostModel`'s
``tuner`` take, ``"none"`` (NCCL's own tuner) the default; :func:`get_tuner` loads one.

>>> tuner_names()
('none', 'aws-ofi-nccl:p5')
>>> get_tuner("aws-ofi-nccl:p5").label
'aws-ofi-nccl:p5'

>>> t = TunerPlugin.load("aws-ofi-nccl", "p5.48xlarge")
>>> t.choose("all-reduce", 2 ** 30, 64, 8)     # 1 GiB on 8 nodes: LL128 where NCCL has Simple
('ring', 'LL128')
>>> t.choose("all-reduce", 2 ** 30, 16, 2) is None    # 2 nodes: NCCL's own tuner
True
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Callable
from pathlib import Path

from compute.errors import UserError, known
from compute.validate import describe

__all__ = ["NO_TUNER", "PLUGINS_PATH", "TunerPlugin", "get_tuner", "tuner_names", "tuner_refusal"]

PLUGINS_PATH = Path(__file__).resolve().parent.parent / "data" / "collective_tuner_plugins.toml"
_EPS = 1e-10            # the plugin's edge tolerance, in log2 units
#: The tuner name for NCCL's own tuner (no plugin): the default everywhere.
NO_TUNER = "none"


@functools.lru_cache(maxsize=4)
def _data(path: str | Path = PLUGINS_PATH) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def tuner_names(path: str | Path = PLUGINS_PATH) -> tuple[str, ...]:
    """The tuner names a model takes: ``"none"`` (NCCL's own), then ``PLUGIN:SET`` for each
    region set of each plugin in the data file (``[aws-ofi-nccl.p5]``: ``aws-ofi-nccl:p5``)."""
    return (NO_TUNER, *(f"{plugin}:{key}" for plugin, sets in _data(path).items()
                        for key in sets))


def get_tuner(name: str | None, path: str | Path = PLUGINS_PATH) -> TunerPlugin | None:
    """The plugin ``name`` (one of :func:`tuner_names`) names, None for ``"none"`` or None
    (NCCL's own tuner); a :class:`TunerPlugin` is returned as given. Another name raises
    :class:`~compute.errors.UserError` listing the known ones."""
    if name is None or isinstance(name, TunerPlugin):
        return name
    names = tuner_names(path)
    if not isinstance(name, str) or name not in names:
        raise UserError(f"unknown tuner {describe(name)}; known: {known(names)}")
    if name == NO_TUNER:
        return None
    return _named(name, str(path))


def tuner_refusal(tuner: str | None, algorithm: str = "auto") -> str | None:
    """Why the tuner plugin ``tuner`` cannot choose here, in one line; None where it can, or
    where there is none (None or :data:`NO_TUNER`). The rule, said once: a plugin chooses
    the algorithm and protocol of each communicator under ``algorithm`` ``"auto"`` (a named
    algorithm leaves it nothing to choose), as AWS's plugin does per communicator, from its
    collective, size, ranks and nodes alone. So one group alone, a group after failures,
    every group of a size at once (each tuned apart) and a scenario's every instance at
    once (``instances = "all"``: compare's makespan, each instance tuned apart) all take
    it. The caller prefixes where it was given.

    >>> tuner_refusal("none", "ring") is None
    True
    >>> print(tuner_refusal("aws-ofi-nccl:p5", "ring"))
    tuner 'aws-ofi-nccl:p5' chooses under algorithm 'auto', and algorithm 'ring' names one
    >>> tuner_refusal("aws-ofi-nccl:p5", "auto") is None
    True
    """
    if tuner is None or tuner == NO_TUNER:
        return None
    if algorithm != "auto":
        return (f"tuner {tuner!r} chooses under algorithm 'auto', and algorithm "
                f"{algorithm!r} names one")
    return None


@functools.lru_cache(maxsize=8)
def _named(name: str, path: str) -> TunerPlugin:
    plugin, _, key = name.partition(":")
    spec = _data(path)[plugin][key]
    return TunerPlugin.from_spec(plugin, spec["platforms"][0], spec, label=name)


def _log2(v: float) -> float:
    return math.log2(v if v > 0 else 1e-6)   # the plugin reads 0 as 1e-6 before the log


def _extend(a, b, corner) -> tuple[float, float]:
    """The plugin's extended vertex (log2 space): the line through ``a`` and ``b`` continued
    to the corner's x, or to its y where the line would pass above the corner."""
    (ax, ay), (bx, by), (zx, zy) = a, b, corner
    if ax == bx:
        return ax, zy
    if ay == by:
        return zx, ay
    m = (ay - by) / (ax - bx)
    c = by - m * bx
    y = m * zx + c
    return (zx, y) if y < zy else ((zy - c) / m, zy)


def _on_segment(p, a, b) -> bool:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    if length2 == 0:
        return False
    t = ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2
    if t < -_EPS or t > 1 + _EPS:
        return False
    return math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy) < _EPS


def _contains(poly: list[tuple[float, float]], p: tuple[float, float]) -> bool:
    """Inside ``poly`` or on an edge (the plugin takes both), even-odd rule."""
    n = len(poly)
    if any(_on_segment(p, poly[i], poly[(i + 1) % n]) for i in range(n)):
        return True
    inside = False
    for i in range(n):
        (x1, y1), (x2, y2) = poly[i], poly[(i + 1) % n]
        if (y1 > p[1]) != (y2 > p[1]) and p[0] < x1 + (p[1] - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


class TunerPlugin:
    """One plugin's regions for one platform: ``{op: [(algorithm, protocol, polygon)]}``
    (polygons in log2 of bytes and ranks), applied on ``min_nodes`` nodes or more of
    ``ranks_per_node`` ranks each."""

    def __init__(self, name: str, platform: str, regions: dict, ranks_per_node: int,
                 min_nodes: int, label: str | None = None) -> None:
        self.name, self.platform = name, platform
        self.regions, self.ranks_per_node, self.min_nodes = regions, ranks_per_node, min_nodes
        #: the name :func:`get_tuner` takes (``PLUGIN:SET``)
        self.label = label or name

    def __repr__(self) -> str:
        return f"TunerPlugin({self.label!r})"

    @classmethod
    def load(cls, name: str, platform: str, path: str | Path = PLUGINS_PATH) -> TunerPlugin:
        """``name``'s regions for ``platform`` (an instance type its data lists)."""
        data = _data(path)
        # a str first: a list or dict raised TypeError (unhashable) at the lookup
        if not isinstance(name, str) or name not in data:
            raise UserError(f"unknown tuner plugin {describe(name)}; known: {known(data)}")
        sets = {p: key for key, s in data[name].items() for p in s["platforms"]}
        if not isinstance(platform, str) or platform not in sets:
            raise UserError(f"tuner plugin {name} has no regions for platform "
                            f"{describe(platform)}; known: {known(sets)}")
        return get_tuner(f"{name}:{sets[platform]}", path)

    @classmethod
    def from_spec(cls, name: str, platform: str, spec: dict,
                  label: str | None = None) -> TunerPlugin:
        """A plugin from one region set of the data file (``spec``: its table)."""
        corner = (_log2(spec["max_bytes"]), _log2(spec["max_ranks"]))
        ext = {k: _extend(*((_log2(x), _log2(y)) for x, y in ab), corner)
               for k, ab in spec.get("extend", {}).items()}

        def coord(v, axis):
            if isinstance(v, str):
                point, _, which = v.partition(".")
                return ext[point]["xy".index(which)]
            return _log2(v)

        def vertex(v):
            return ext[v] if isinstance(v, str) else (coord(v[0], 0), coord(v[1], 1))

        regions = {op: [(r["algorithm"], r["protocol"], [vertex(v) for v in r["vertices"]])
                        for r in spec[op]]
                   for op, rs in spec.items() if isinstance(rs, list) and rs
                   and isinstance(rs[0], dict)}
        return cls(name, platform, regions, int(spec["ranks_per_node"]),
                   int(spec["min_nodes"]), label)

    def choose(self, op: str, nbytes: float, ranks: int, nodes: int,
               available: Callable[[str, str], bool] | None = None
               ) -> tuple[str, str] | None:
        """The plugin's ``(algorithm, protocol)`` for ``op`` of ``nbytes`` on ``ranks`` ranks
        over ``nodes`` nodes, or None where it leaves the choice to NCCL (too few nodes,
        another ranks-per-node, an op or a point it has no region for). ``available``: whether
        NCCL can run a pair (the plugin skips a region whose pair NCCL marks unavailable)."""
        if nodes < self.min_nodes or ranks != self.ranks_per_node * nodes:
            return None
        p = (_log2(nbytes), _log2(ranks))
        for alg, proto, poly in self.regions.get(op, ()):
            if available is not None and not available(alg, proto):
                continue
            if _contains(poly, p):
                return alg, proto
        return None
