"""A tuner plugin's choice of algorithm and protocol, for comparing with runs that used one.

NCCL lets a plugin override its tuner (``NCCL_TUNER_PLUGIN``). AWS's OFI NCCL plugin ships
one whose "region" tuner picks the all-reduce algorithm and protocol on p5 from fixed
polygons over (message size, ranks), in log2 space, choices NCCL's own cost model would not
make (ring/LL128 up to 1-2 GiB, tree/LL128 up to 288 MiB on 16-32 nodes). The polygons are
data (``netmodel/data/collective_tuner_plugins.toml``, with their source);
:class:`TunerPlugin` reads one platform's and :func:`tuned_sweep` costs a sweep on a
:class:`~netmodel.collectives.model.FabricCostModel` with the plugin's choice where it makes
one and the model's ``auto`` where it leaves the choice to NCCL. The library's ``auto`` is
NCCL's and stays so; this is for comparison with nccl-tests runs under the plugin.

>>> t = TunerPlugin.load("aws-ofi-nccl", "p5.48xlarge")
>>> t.choose("all-reduce", 2 ** 30, 64, 8)     # 1 GiB on 8 nodes: LL128 where NCCL has Simple
('ring', 'LL128')
>>> t.choose("all-reduce", 2 ** 30, 16, 2) is None    # 2 nodes: NCCL's own tuner
True
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path

import numpy as np

from compute.errors import UserError, known
from compute.validate import describe

__all__ = ["PLUGINS_PATH", "TunerPlugin", "tuned_sweep"]

PLUGINS_PATH = Path(__file__).resolve().parent.parent / "data" / "collective_tuner_plugins.toml"
_EPS = 1e-10            # the plugin's edge tolerance, in log2 units


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
                 min_nodes: int) -> None:
        self.name, self.platform = name, platform
        self.regions, self.ranks_per_node, self.min_nodes = regions, ranks_per_node, min_nodes

    @classmethod
    def load(cls, name: str, platform: str, path: str | Path = PLUGINS_PATH) -> TunerPlugin:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        if name not in data:
            raise UserError(f"unknown tuner plugin {describe(name)}; known: {known(data)}")
        sets = {p: key for key, s in data[name].items() for p in s["platforms"]}
        if platform not in sets:
            raise UserError(f"tuner plugin {name} has no regions for platform "
                            f"{describe(platform)}; known: {known(sets)}")
        spec = data[name][sets[platform]]
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
                   int(spec["min_nodes"]))

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


def tuned_sweep(model, plugin: TunerPlugin, op: str, sizes: Iterable[float],
                group: int | Iterable[Hashable]):
    """``model.sweep(op, sizes, group)`` with ``plugin``'s choice where it makes one: each
    size's time is that of the model's candidate of the chosen algorithm and protocol (its
    fastest line of that pair), else the model's ``auto`` choice. The group's nodes are its
    scale-up domains."""
    from netmodel.collectives.cost import SweepResult
    from netmodel.collectives.group_domains import domains

    auto = model.sweep(op, sizes, group)
    n = np.asarray(auto.nbytes, dtype=float)
    grp = model.group(group)
    nodes = len(domains(model.graph, grp))
    cands = model.choices(op, grp, n)
    times = np.array(list(model.candidate_times(cands, n)))
    pairs = [(c[0], c[1]) for c in cands]
    time, algs, protos = auto.time.copy(), list(auto.algorithm), list(auto.protocol)
    for j, size in enumerate(n):
        pick = plugin.choose(op, float(size), len(grp), nodes,
                             lambda a, p, j=j: any(q == (a, p) and np.isfinite(times[i, j])
                                                   for i, q in enumerate(pairs)))
        if pick is None:
            continue
        time[j] = min(times[i, j] for i, q in enumerate(pairs) if q == pick)
        algs[j], protos[j] = pick
    return SweepResult(auto.op, auto.group, n, time, tuple(algs), tuple(protos))
