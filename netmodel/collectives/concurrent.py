"""Many collectives at once on one fabric: every TP group of a cluster in the same layer.

All groups run the same operation and size at the same time, step by step (step ``i`` of
every group overlaps step ``i`` of the others; groups of one size and algorithm have the
same steps). Links are shared fairly: during a step, a link carries the traffic of every
group routed across it and drains it at its achievable rate, so a group's step lasts until
its most loaded link (counting everyone's bytes on it) has drained. Each group's slowdown
is its time together over its time alone.

The algorithm is chosen once for all groups (per size): the valid (algorithm, protocol)
with the smallest makespan (the slowest group's time), among the model's candidates. Alone
times use each group's own best choice.

>>> import networkx as nx
>>> from netmodel.collectives.calibration import Calibration
>>> from netmodel.collectives.model import FabricCostModel
>>> g = nx.Graph(name="two leaves", spec="", gpus=4)
>>> for s in ("leaf0", "leaf1"):
...     g.add_node(s, kind="switch", tier=1, radix=4, latency=0.0, in_network_reduction=False)
>>> g.add_node("spine", kind="switch", tier=2, radix=2, latency=0.0, in_network_reduction=False)
>>> for i in range(4):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", f"leaf{i % 2}", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
>>> for s in ("leaf0", "leaf1"):
...     g.add_edge(s, "spine", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
>>> m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
>>> r = concurrent_cost(m, [("gpu0", "gpu1"), ("gpu2", "gpu3")], "send-recv", 1e9)
>>> r.alone[:, 0].tolist(), r.time[:, 0].tolist(), r.slowdown[:, 0].tolist()
([1.0, 1.0], [2.0, 2.0], [2.0, 2.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compute.comm import check_op
from compute.errors import UserError
from netmodel.collectives.algorithms import NotApplicable, generate
from netmodel.collectives.cost import GroupCut
from netmodel.collectives.model import FabricCostModel, check_sizes

__all__ = ["ConcurrentResult", "concurrent_cost", "concurrent_linear"]


@dataclass(frozen=True)
class ConcurrentResult:
    """Times of many groups running one collective together.

    Attributes
    ----------
    op : str
    groups : tuple of tuple
    nbytes : numpy.ndarray
        Message sizes (bytes), shape ``(S,)``.
    algorithm, protocol : tuple of str
        The shared choice per size.
    time : numpy.ndarray
        Seconds together, shape ``(G, S)``.
    alone : numpy.ndarray
        Seconds alone (each group's own best), shape ``(G, S)``.
    hotspots : tuple
        The most loaded directed links ``(u, v)`` at the largest size (at most five),
        with the number of groups sharing each: ``((u, v), groups)``.
    """

    op: str
    groups: tuple
    nbytes: np.ndarray
    algorithm: tuple
    protocol: tuple
    time: np.ndarray
    alone: np.ndarray
    hotspots: tuple

    @property
    def slowdown(self) -> np.ndarray:
        """Time together over time alone, shape ``(G, S)`` (>= 1)."""
        return self.time / self.alone

    @property
    def makespan(self) -> np.ndarray:
        """The slowest group's seconds per size, shape ``(S,)``."""
        return self.time.max(axis=0)


def _group_steps(model: FabricCostModel, op: str, algorithm: str, group: tuple):
    """Routed steps of one group: list of (links, coef, latency, scaleout, step)."""
    steps = generate(algorithm, op, model._ordered(group), model.graph)
    out, seen = [], {}
    for s in steps:
        hit = seen.get(s.transfers)
        if hit is None:
            hit = model.router.loads(s.transfers)
            seen[s.transfers] = hit
        links, coef, latency, scaleout = hit
        if s.route_latency is not None:
            latency = s.route_latency
        out.append((links, coef, latency, scaleout, s))
    return out


def _evaluate(model, op, algorithm, groups):
    """Per group and step: (alone beta, together beta, latency, scaleout, step); and the
    load of every link at every step index."""
    router, cal = model.router, model.calibration
    eff = np.where(router.scaleout, cal.scaleout_efficiency, cal.scaleup_efficiency)
    rate = router.bandwidth * eff
    per_group = [_group_steps(model, op, algorithm, g) for g in groups]
    n_steps = max(len(s) for s in per_group)
    G = len(groups)
    alone = np.zeros((G, n_steps))
    together = np.zeros((G, n_steps))
    hot = []
    for i in range(n_steps):
        members = [g for g in range(G) if i < len(per_group[g])]
        links = [per_group[g][i][0] for g in members]
        coefs = [per_group[g][i][1] for g in members]
        sizes = np.array([len(x) for x in links])
        gid = np.repeat(np.array(members, dtype=np.int64), sizes)
        lk = np.concatenate(links) if links else np.zeros(0, dtype=np.int64)
        cf = np.concatenate(coefs) if coefs else np.zeros(0)
        total = np.bincount(lk, cf, minlength=router.n_links)
        ratio = total[lk] / rate[lk]
        np.maximum.at(together[:, i], gid, ratio)
        key = gid * router.n_links + lk
        uniq, inv = np.unique(key, return_inverse=True)
        own = np.bincount(inv, cf)
        ulinks = uniq % router.n_links
        np.maximum.at(alone[:, i], uniq // router.n_links, own / rate[ulinks])
        util = total / rate
        top = np.argsort(util)[::-1][:5]
        users = np.bincount(ulinks, minlength=router.n_links)
        hot.append([(float(util[t]), int(t), int(users[t])) for t in top if util[t] > 0])
    return per_group, alone, together, hot


def _linear(per_group, beta, protocol, cal):
    """(a, b) arrays per group for one protocol, given per-step betas."""
    G = len(per_group)
    a = np.full(G, protocol.base_latency)
    b = np.zeros(G)
    gamma = cal.reduction_rate
    for g, steps in enumerate(per_group):
        for i, (_, _, latency, scaleout, step) in enumerate(steps):
            a[g] += step.repeat * step.stages * (protocol.step_latency(scaleout) + latency)
            b[g] += step.repeat * beta[g, i] / protocol.bandwidth_factor
            if gamma > 0:
                b[g] += step.repeat * step.reduce / gamma
    return a, b


def _prepare(model: FabricCostModel, groups, op: str, algorithm: str | None):
    """The groups as checked node tuples and the algorithm names to try."""
    check_op(op)
    if isinstance(groups, int | np.integer) and not isinstance(groups, bool):
        from netmodel.collectives.placement import partition

        groups = partition(model.graph, int(groups), model.placement, seed=model.seed,
                           gpus=model.router.gpu_list)
    groups = tuple(model.group(g) for g in groups)
    if not groups:
        raise UserError("concurrent_cost needs at least one group")
    if any(len(g) < 2 for g in groups):
        raise UserError("every concurrent group needs at least 2 GPUs")
    return groups, model.algorithm_names(op, algorithm)


def _options(model: FabricCostModel, groups: tuple, op: str, names) -> list:
    """Every valid (algorithm, protocol): ``(name, protocol, a_together, b_together,
    a_alone, b_alone, hot)``, the a/b arrays of shape ``(G,)``."""
    cal = model.calibration
    options, why = [], []
    for name in names:
        try:
            per_group, alone, together, hot = _evaluate(model, op, name, groups)
        except NotApplicable as exc:
            why.append(f"{name}: {exc}")
            continue
        except GroupCut as exc:
            raise UserError(f"a group is cut apart: {exc}") from None
        in_net = any(st.in_network for st in (s[4] for s in per_group[0]))
        protos = (cal.in_network,) if in_net else cal.protocols
        for proto in protos:
            at, bt = _linear(per_group, together, proto, cal)
            aa, ba = _linear(per_group, alone, proto, cal)
            options.append((name, proto.name, at, bt, aa, ba, hot))
    if not options:
        raise UserError(f"no algorithm can run {op} on these groups ({'; '.join(why)})")
    return options


def concurrent_linear(model: FabricCostModel, groups, op: str,
                      algorithm: str | None = None) -> tuple[tuple, np.ndarray, np.ndarray]:
    """The linear candidates of ``op`` run by all ``groups`` at once, compiled once so that
    any array of sizes costs a multiply-add: ``(choices, a, b)``.

    ``choices`` lists the valid ``(algorithm, protocol)``; ``a`` and ``b`` have shape
    ``(C, G)``: group ``g`` takes ``a[c, g] + b[c, g] * n`` seconds together under choice
    ``c``. The time of the collective at size ``n`` is then the makespan of the best shared
    choice, ``min_c max_g (a[c, g] + b[c, g] * n)``, as in :func:`concurrent_cost`.
    ``groups`` and ``algorithm`` as there.

    >>> import networkx as nx
    >>> from netmodel.collectives.calibration import Calibration
    >>> g = nx.Graph(name="one link", spec="", gpus=4)
    >>> g.add_node("sw", kind="switch", tier=0, radix=4, latency=0.0,
    ...            in_network_reduction=False)
    >>> for i in range(4):
    ...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    ...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    >>> m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
    >>> choices, a, b = concurrent_linear(m, [("gpu0", "gpu1"), ("gpu2", "gpu1")],
    ...                                   "send-recv")
    >>> choices[0][0], a.shape, b[0].tolist()  # both send into gpu1: 2 s per GB each
    ('direct', (1, 2), [2e-09, 2e-09])
    """
    groups, names = _prepare(model, groups, op, algorithm)
    options = _options(model, groups, op, names)
    return (tuple((o[0], o[1]) for o in options), np.stack([o[2] for o in options]),
            np.stack([o[3] for o in options]))


def concurrent_cost(model: FabricCostModel, groups, op: str, nbytes,
                    algorithm: str | None = None) -> ConcurrentResult:
    """Cost ``op`` of ``nbytes`` (scalar or array) run by all ``groups`` at once.

    ``groups``: explicit GPU lists, or an int size to cut the whole fabric into groups by
    the model's placement policy. ``algorithm``: one name, or None/"auto" for the model's
    choice. A group cut apart by a failure raises :class:`~compute.errors.UserError`.
    """
    check_op(op)
    n = np.atleast_1d(check_sizes(nbytes)).astype(float)
    groups, names = _prepare(model, groups, op, algorithm)
    options = _options(model, groups, op, names)
    t_all = np.stack([o[2][:, None] + o[3][:, None] * n[None, :] for o in options])
    a_all = np.stack([o[4][:, None] + o[5][:, None] * n[None, :] for o in options])
    best = np.argmin(t_all.max(axis=1), axis=0)  # per size: smallest makespan
    cols = np.arange(len(n))
    time = t_all[best, :, cols].T
    alone = a_all.min(axis=0)
    router = model.router
    hot = options[best[-1]][6]
    worst = max(hot, key=lambda h: h[0][0] if h else 0.0) if hot else []
    hotspots = tuple((router.link_name(t), users) for _, t, users in worst)
    return ConcurrentResult(op, groups, n, tuple(options[i][0] for i in best),
                            tuple(options[i][1] for i in best), time, alone, hotspots)
