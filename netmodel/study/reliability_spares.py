"""Hot spares: where a fabric can hold them and how many each pool holds; how an instance a
failure took down comes back on them is :mod:`netmodel.study.reliability_recovery`'s.

**Where spares sit** (``placement``):

* ``group``: in the failed GPU's ``group`` (a Lite package group, an NVSwitch domain),
  wired as the group's GPUs are, on free ports of the same switches; a directly wired
  group (a mesh) has no free port, so no spare can join it. Needs ``group`` labels.
* ``pod``: in the same copy of the scenario's fabric (the cell), on free ports of its
  switches or OCS, wired as a GPU of the cell is (:func:`~topologies.spares.add_spares`).
  A spare stands in for each member the failure took (*substitution*); the instance's
  collectives are re-costed with the spare where it sits (a spare on another leaf adds
  hops) and the swap holds only if the SLO still does. Where it does not, the instance is
  re-created whole on spares of the cell (*re-creation*) if they meet the SLO.
* ``global``: spares kept together as whole instances' worth of GPUs anywhere in the
  cluster, outside the cells; every instance a failure took down is re-created on its
  ``tp x pp`` of them (they meet the SLO as a healthy instance does). No free port is needed.

A spare stays in use until the failed part is repaired and returns to the pool as a spare
(the pool is a loss system: :mod:`netmodel.study.availability`). The swap takes detection +
circuit reconfiguration (OCS) + loading the weight shard + warm-up
(:meth:`~netmodel.study.reliability_timings.RecoveryTimes.swap_s`); spares themselves are assumed not to
fail while idle.

>>> from netmodel.study.reliability_cluster import build_cluster
>>> capacity(build_cluster("lite-flat", "Llama-3-70B", "decode"), "pod")
16
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compute.errors import UserError, chosen, known, lookalike
from compute.validate import describe, is_whole
from netmodel.study.choice_names import SPARE_PLACEMENTS
from topologies.failure_domains import stops
from topologies.schema import gpu_nodes
from topologies.spares import free_ports, place_spare, plan_spares

__all__ = ["PLACEMENTS", "SparePools", "capacity", "group_capacities", "spare_pools"]

#: Where spares sit (see the module doc): :data:`netmodel.study.choice_names.SPARE_PLACEMENTS`.
PLACEMENTS = SPARE_PLACEMENTS


def check_placement(placement: str) -> str:
    text = chosen(placement, PLACEMENTS)   # blanks at either end dropped, as every choice's
    if text is None:
        raise UserError(f"unknown spare placement {describe(placement)}"
                        f"{lookalike(placement, PLACEMENTS)}; known: {known(PLACEMENTS)}")
    return text


def _groups(cluster) -> dict:
    """The cell's GPUs by their ``group`` label, ``{label: (gpu, ...)}`` in the cell's
    order: worked out once per cluster (kept beside :func:`capacity`'s answers; a failure's
    recovery, :func:`~netmodel.study.reliability_recovery.by_group` and the pools each ask,
    ~900 times on a 16,384-GPU cell)."""
    memo = cluster.__dict__.setdefault("_spare_capacity", {})
    if "members" in memo:
        return memo["members"]
    data = cluster.graph.nodes
    out: dict = {}
    for g in gpu_nodes(cluster.graph):
        if "group" not in data[g]:
            raise UserError(f"spare placement 'group' needs GPUs labelled with their group; "
                            f"{cluster.scenario.label}'s fabric has none (use pod or global)")
        out.setdefault(data[g]["group"], []).append(g)
    memo["members"] = out = {label: tuple(members) for label, members in out.items()}
    return out


def capacity(cluster: Any, placement: str) -> int | None:
    """Spares one pool can hold: free ports of a cell (``pod``) or of the largest group
    (``group``; each group's: :func:`group_capacities`); None (no limit) for ``global``."""
    placement = check_placement(placement)
    key = (placement,)
    memo = cluster.__dict__.setdefault("_spare_capacity", {})
    if key not in memo:
        if placement == "global":
            memo[key] = None
        elif placement == "pod":
            memo[key] = len(_plan(cluster, cluster.cell_gpus))
        else:   # the largest group's (group_capacities: each its own)
            memo[key] = max(group_capacities(cluster), default=0)
    return memo[key]


def group_capacities(cluster: Any) -> tuple:
    """Spares each group (in the order of :func:`_groups`) can hold on free ports of its
    own switches: groups differ where their switches' free ports do (a group on full leaves
    holds none where another, on leaves with room, holds some). Groups sharing a switch
    (rail leaves) split its free ports (:func:`_group_sites`)."""
    memo = cluster.__dict__.setdefault("_spare_capacity", {})
    if "groups" not in memo:
        memo["groups"] = tuple(len(_every(cluster, members))
                               for members in _groups(cluster).values())
    return memo["groups"]


def _plan(cluster, count: int, like=None) -> list:
    """The first ``count`` spare sites of the cell (sites fill in a fixed order, so one
    plan of every site serves every count; cached per template set)."""
    return _every(cluster, like)[:count]


def _every(cluster, like=None) -> list:
    """Every spare site of the cell (:func:`_plan` of them all; the cached list itself, not
    to be changed); with ``like`` (whole groups' GPUs, ``group`` placement) those groups'
    sites of :func:`_group_sites`, in its order."""
    memo = cluster.__dict__.setdefault("_spare_plans", {})
    key = None if like is None else tuple(like)
    if key not in memo:
        if like is None:
            memo[key] = plan_spares(cluster.graph, cluster.cell_gpus)
        else:
            data = cluster.graph.nodes
            labels = {data[n].get("group") for n in like}
            memo[key] = [s for s in _group_sites(cluster) if s[1].get("group") in labels]
    return memo[key]


def _group_sites(cluster) -> list:
    """The ``group`` spare sites of the cell: each group's spares wired as its GPUs are
    (:func:`~topologies.spares.plan_spares`' rule: each distinct attachment in
    turn, while every switch it needs has a free port), the groups taking one site each in
    turn from the same free ports: groups that share a switch (rail leaves) split its free
    ports, and together hold no more than the cell's ports can (each group planned alone
    on every free port counted a shared leaf's ports once per group: 6 sites each for two
    servers under 8 leaves of one free port). Sites carry their group's label (a
    template's attributes); names ``spare0``, ``spare1``, ... in planning order."""
    memo = cluster.__dict__.get("_group_site_plan")
    if memo is not None:
        return memo
    g = cluster.graph
    data = g.nodes
    free = free_ports(g)
    orders = []
    for members in _groups(cluster).values():
        templates: dict = {}
        for m in members:
            nbrs = list(g.neighbors(m))
            if any(data[n]["kind"] == "gpu" for n in nbrs):
                continue
            templates.setdefault(frozenset(nbrs), m)
        orders.append([list(templates.values()), 0, 0])   # templates, next, placed
    plan, taken = [], set()
    live = [o for o in orders if o[0]]
    while live:
        still = []
        for o in live:   # one site for each group in turn
            tmpl = o[0]
            while tmpl and o[2] < cluster.cell_gpus:
                if o[1] >= len(tmpl):   # the next round of its attachments
                    o[1] = 0
                if not place_spare(g, tmpl[o[1]], free, plan, taken):
                    del tmpl[o[1]]   # ports only ever fill: it never fits again
                    continue
                o[1] += 1
                o[2] += 1
                still.append(o)
                break
        live = still
    cluster.__dict__["_group_site_plan"] = plan
    return plan


def _lost(cluster: Any, comp: Any, like=None) -> frozenset:
    """The sites (names) of the cell ``comp`` leaves unusable: those wired to a tier-0
    switch it removes (an NVSwitch, or the one its host or rack holds: a spare there stops
    with it) and those whose every switch it removes (a spare on a failed leaf of a
    leaf-spine is cut off with it)."""
    kinds = cluster.kinds
    removed = {n for n in comp.nodes if kinds[n] != "gpu"}
    if not removed:
        return frozenset()
    memo = cluster.__dict__.setdefault("_spare_sites_on", {})
    key = None if like is None else tuple(like)
    on = memo.get(key)
    if on is None:   # switch -> the sites wired to it: (name, its switches that stop it
        on = memo[key] = {}   # failed, all its switches), worked out once per cell
        g = cluster.graph
        for name, _, edges in _every(cluster, like):
            nbrs = frozenset(n for n, _ in edges)
            site = (name, frozenset(n for n in nbrs if stops(g, n)), nbrs)
            for n in nbrs:
                on.setdefault(n, []).append(site)
    # set operations, not a walk over each site's switches per failure: an OCS site is
    # wired to every OCS (ocs:ports=4096, 4,096 switches a site, each failure)
    return frozenset(name for sw in removed for name, stopping, nbrs in on.get(sw, ())
                     if not stopping.isdisjoint(removed) or nbrs <= removed)


def _live(cluster: Any, comp: Any, plan: list, like=None) -> list:
    """The sites of ``plan`` a failure of ``comp`` leaves usable (:func:`_lost`);
    ``plan`` itself where it loses none."""
    lost = _lost(cluster, comp, like)
    return [p for p in plan if p[0] not in lost] if lost else plan


def sites_lost(cluster: Any, comp: Any) -> int:
    """How many of the cell's spare sites (``pod``, every free port) ``comp`` stops or cuts
    off (:func:`_lost`): the symmetry classes keep components apart where this differs (the
    sites fill the first switches' free ports, so one NVSwitch may hold them all and
    another none)."""
    return len(_lost(cluster, comp))


def _nearest(free, home, nbrs, removed):
    """The free site (of ``free``, in order) nearest a member wired to the switches
    ``home``: the most of them it shares that the failure leaves (a failed leaf is no
    common switch: a spare on it is cut off from the network as the member was), then the
    fewest of the failed ``removed``; the first of equals. ``nbrs(site)``: its switches.
    :func:`~netmodel.study.reliability_recovery._recovery` and
    :func:`~netmodel.study.reliability_recovery_key.recovery_key` pick by it."""
    live = home - removed if removed else home
    return max(free, key=lambda s: (len(live & nbrs(s)), -len(removed & nbrs(s))))


@dataclass(frozen=True)
class SparePools:
    """``spares`` bought, split over ``pools`` pools; ``reachable``: spares per pool the
    fabric can hold (one entry per pool); spares beyond that have no port and change
    nothing."""

    placement: str
    spares: int
    pools: int
    reachable: tuple
    #: pools per cell (``group`` placement: one per group, pool ``cell x groups + g``)
    groups: int = 1

    @property
    def reachable_total(self) -> int:
        return int(sum(self.reachable))

    def to_dict(self) -> dict:
        return {"placement": self.placement, "spares": self.spares, "pools": self.pools,
                "reachable": self.reachable_total,
                "per_pool": sorted(set(self.reachable))}


def spare_pools(cluster: Any, spares: int, placement: str = "pod") -> SparePools:
    """Split ``spares`` over the pools of ``placement`` (as evenly as whole GPUs allow)."""
    placement = check_placement(placement)
    if not is_whole(spares) or spares < 0:   # numpy's too, as Python's int
        raise UserError(f"spares must be a whole number >= 0, got {describe(spares)}")
    spares = int(spares)
    if placement == "global":
        pools = 1
    elif placement == "pod":
        pools = cluster.cells
    else:
        pools = cluster.cells * len(_groups(cluster))
    base, extra = divmod(spares, pools)
    per = [base + (1 if i < extra else 0) for i in range(pools)]
    if placement == "group":   # each group's pool holds what its own switches can
        caps = group_capacities(cluster)
        reach = tuple(min(p, caps[i % len(caps)]) for i, p in enumerate(per))
        return SparePools(placement, spares, pools, reach, len(caps))
    cap = capacity(cluster, placement)
    reach = tuple(p if cap is None else min(p, cap) for p in per)
    return SparePools(placement, spares, pools, reach)
