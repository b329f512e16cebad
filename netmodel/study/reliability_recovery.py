"""How an instance a failure took down comes back on hot spares, and what the operator does
with the instances it slows: substitution of the members it lost on spares where they sit
(the instance's collectives re-costed with the spare, the swap kept only where the SLO
holds), else re-creation of the whole instance on spares of the cell or of the global pool
(:func:`recovery`, :func:`slow_recovery`, both together :func:`failure_recovery`), and a
failure's class split by the group whose spares it draws on (:func:`by_group`). Where
spares sit and how many each pool holds: :mod:`netmodel.study.reliability_spares`.

>>> from netmodel.study.reliability_cluster import build_cluster
>>> c = build_cluster("lite-flat", "Llama-3-70B", "decode")
>>> e = next(x for x in c.effects() if x.cls == "gpu-die")
>>> r = recovery(c, e, "pod")
>>> r.path, r.units, round(r.restored, 6)
('substitute 1 spare', 1, 0.0)
>>> recovery(build_cluster("lite-hier", "Llama-3-70B", "decode"), e, "pod").path
'no free port for a spare'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Any

from netmodel.study.reliability_spares import (
    _every,
    _groups,
    _live,
    _lost,
    _nearest,
    _plan,
    capacity,
    check_placement,
)
from netmodel.study.reliability_timings import recovery_times

__all__ = ["FailureRecovery", "Recovery", "SlowSwap", "by_group", "failure_recovery",
           "recovery", "restarts", "slow_recovery"]

#: Component classes that are a switch (or OCS): a spare site on one is on the failed switch.
_SWITCHES = ("nvswitch", "leaf", "spine", "core", "ocs")


@dataclass(frozen=True)
class Recovery:
    """How the instances one failure takes down come back on spares.

    ``units``: spare GPUs the failure holds until its repair (0: nothing to recover;
    None: spares cannot help, the instances wait for the repair); ``time_s``: from the
    failure to serving again on spares; ``restored``: capacity still lost (instances'
    worth, each instance weighted by its healthy tokens/s: ``Cluster.weights``) while the
    spares stand in (a spare on a farther port slows its instance).
    """

    path: str
    units: int | None
    time_s: float | None
    restored: float = 0.0
    #: spares each down instance takes where every one takes as many (an operator short
    #: of ``units`` free spares brings back as many whole instances as they allow); 0
    #: where they differ or none is needed
    per: int = 0
    #: spares each down instance takes, in the order of the effect's ``down`` (where
    #: they differ, the availability model gives them to the instances that restore the
    #: most capacity: ``Kind.each``, ``Kind.steps``);
    #: () where none is needed or spares cannot help
    each: tuple = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["per"], d["each"]   # the availability model's (Kind.per), not the path's
        return d


def by_group(cluster: Any, effect: Any) -> tuple:
    """``effect``'s class split by the group whose spares its failure draws on (with
    ``group`` placement each group is its own pool, and groups differ in where their sites
    sit and which a failure cuts off): ``(group index, the effect of a component of that
    group, parts, follows, shares)`` per group, the index that of :func:`_groups`' order.
    Each group's effect is evaluated on a component of it, so its recovery is its own
    group's.

    A component whose failure touches GPUs of several groups (a server holding two
    groups, a shared leaf) is taken with the others touching the same groups, evaluated on
    the first of them, and its effect split by the group each instance it takes down or
    slows sits in: one entry per such group, each that group's instances (their recovery
    draws on that group's sites only, :func:`recovery`), the first with ``follows`` False
    and the others True (the same failures: they strike together, each asking its own
    group's pool, and each waits for its repair where its own pool is empty). The
    instances that span several groups are one more entry, group -1, whose ``shares``
    (else None) are the spares their recovery takes of each group, ``((group, spares),
    ...)``: they come back only if every one of those pools has its share free (all or
    nothing, :attr:`~netmodel.study.availability_kinds.Kind.joint`). Where that recovery
    is not a substitution of members whose groups are known, or needs no spare, the
    entry has no shares: no pool is asked for them (none helps) or, failing that, one pool
    for all of them, as before. -1 too where it touches no group's GPU."""
    memo = cluster.__dict__.setdefault("_by_group", {})
    key = id(effect)
    if key in memo:
        return memo[key]
    index = {label: i for i, label in enumerate(_groups(cluster))}
    data = cluster.graph.nodes
    buckets: dict = {}
    for comp in cluster.class_members(effect):
        _, lost, wired, _ = cluster.local(comp)
        labels = sorted({index[data[n]["group"]] for n in lost | wired})
        g = labels[0] if len(labels) == 1 else tuple(labels) if labels else -1
        buckets.setdefault(g, []).append(comp)
    out = []
    keep = memo.setdefault("_effects", [])   # recovery() memoizes by id: keep them alive
    # components of one symmetry class fail alike (Cluster.effects): where the class's
    # failure takes no instance down and slows none, so does each group's (nothing for
    # a spare to do), and its effect is the class's, not evaluated again per group (a
    # NIC class of a 4,096-GPU rail-optimized cell re-costed an instance for each of
    # its 512 groups: 7 of its availability's 20 s CPU)
    harm = bool(effect.down or effect.slowed)
    for g, comps in buckets.items():
        rep = comps[0]
        parts = sum(c.parts for c in comps)
        if rep is effect.component and len(comps) == effect.components:
            e = effect
        elif rep is effect.component:   # evaluated already: only its count is the group's
            e = replace(effect, components=len(comps), parts=parts)
            keep.append(e)
        else:   # a failure costing no instance anything costs none in any group
            r = cluster.evaluate(rep, *cluster.local(rep)[1:]) if harm else {}
            e = replace(effect, example=rep.name, components=len(comps), parts=parts,
                        component=rep, **r)
            keep.append(e)
        split = _split_by_group(cluster, e, index) if isinstance(g, tuple) else None
        if split is None:
            out.append((g if isinstance(g, int) else -1, e, parts, False, None))
            continue
        keep.extend(sub for _, sub in split)
        for j, (h, sub) in enumerate(split):
            shares = _shares(cluster, sub, index) if h < 0 else None
            out.append((h, sub, parts, j > 0, shares))
    memo[key] = out = tuple(out)
    return out


def _split_by_group(cluster: Any, effect: Any, index: dict) -> list | None:
    """``effect`` (a failure touching several groups) as ``(group, the effect on that
    group's instances)`` per group whose instances it takes down or slows, in group order,
    then ``(-1, the effect on the instances that span groups)`` if any; None where it
    touches no instance, or only instances that span groups (the effect as it is)."""
    data = cluster.graph.nodes
    insts = cluster.instances

    def home(i):
        labels = {data[m]["group"] for m in insts[i]}
        return index[labels.pop()] if len(labels) == 1 else -1

    down = {i: home(i) for i in effect.down}
    slowed = {i: home(i) for i, _ in effect.slowed}
    homes = {*down.values(), *slowed.values()}
    if not homes - {-1} and not (homes and _shares(cluster, effect, index)):
        return None
    members = dict(zip(effect.down, effect.down_members or (0,) * len(effect.down),
                       strict=True))
    out = []
    for h in sorted(homes - {-1}) + [-1] * (-1 in homes):
        d = tuple(i for i in effect.down if down[i] == h)
        s = tuple((i, x) for i, x in effect.slowed if slowed[i] == h)
        out.append((h, effect if homes == {-1} else replace(
            effect, instances_down=len(d), down=d, down_members=tuple(members[i] for i in d),
            slowed=s, slow=sum(x for _, x in s))))
    return out


def _shares(cluster: Any, effect: Any, index: dict) -> tuple | None:
    """The spares ``effect``'s recovery with ``group`` spares (:func:`recovery`,
    :func:`slow_recovery`, as :mod:`~netmodel.study.availability_kinds` adds them) takes
    of each group, ``((group, spares), ...)`` in group order, where it substitutes members
    of more than one group (each member's spare is of its own group); None where it needs
    no spare, or none helps, or it takes them otherwise."""
    memo = cluster.__dict__.setdefault("_group_shares", {})
    if id(effect) in memo:
        return memo[id(effect)][1]
    data = cluster.graph.nodes
    comp = effect.component
    count: Counter = Counter()
    units = 0
    rec = recovery(cluster, effect, "group")
    if effect.instances_down:
        if rec.units is None:   # the down instances wait for their repair
            memo[id(effect)] = (effect, None)
            return None
        units += rec.units
        if rec.units:
            count.update(index[data[m]["group"]] for _, gone in _replace(cluster, comp, effect)
                         for m in gone)
    sw = slow_recovery(cluster, effect, "group")
    if sw.units:
        units += sw.units
        for i, loss in effect.slowed:   # the slowed instances _slow_recovery swaps
            one = replace(effect, instances_down=1, down=(i,))
            r = _recovery(cluster, one, "group")
            if r.units is None or r.units <= 0 or r.restored >= loss * cluster.weights[i]:
                continue
            count.update(index[data[m]["group"]] for _, gone in _replace(cluster, comp, one)
                         for m in gone)
    out = tuple(sorted(count.items())) if units and sum(count.values()) == units \
        and len(count) > 1 else None
    memo[id(effect)] = (effect, out)   # the effect kept: its id stays its own
    return out


def _replace(cluster, comp, effect):
    """Per down instance: (members, the members to replace: lost or stopped; where its
    members were cut apart, every one outside the cell's largest connected part of GPUs
    (keeping the larger side replaced a healthy member on an even split, and only some of
    the members a failed leaf cuts off one by one); else those wired to the failed
    part)."""
    _, lost, wired, _ = cluster.local(comp)
    # the cell's parts only where an instance lost no member (a GPU's failure, each
    # recovery of its 8,192 on a 16,384-GPU cell with group spares: a dict of every node)
    parts = main = None
    out = []
    for i in effect.down:
        inst = cluster.instances[i]
        gone = [m for m in inst if m in lost]
        if not gone:
            if parts is None:
                parts = cluster.partition([comp])
            sides: dict = {}
            for m in inst:
                sides.setdefault(parts[m], []).append(m)
            if len(sides) > 1:  # the members off the cell's main part are cut off
                if main is None:
                    main = cluster.main_part(parts)
                gone = [m for m in inst if parts[m] != main]
            else:
                gone = [m for m in inst if m in wired]
        out.append((inst, gone))
    return out


def _memoized(cluster: Any, memo_name: str, work: Any, effect: Any, placement: str) -> Any:
    """``work(cluster, effect, placement)``, computed once per effect and placement and kept
    on the cluster (its effects live as long as it does, so their ids are not reused)."""
    placement = check_placement(placement)
    memo = cluster.__dict__.setdefault(memo_name, {})
    key = (id(effect), placement)
    if key not in memo:
        memo[key] = work(cluster, effect, placement)
    return memo[key]


def recovery(cluster: Any, effect: Any, placement: str = "pod") -> Recovery:
    """How the instances ``effect`` takes down come back on spares of ``placement``
    (assuming the pool has enough free spares; the pool's size is the availability
    model's business)."""
    return _memoized(cluster, "_recoveries", _recovery, effect, placement)


def _recovery(cluster, effect, placement: str) -> Recovery:
    if not effect.instances_down:
        return Recovery("none needed", 0, 0.0)
    swap = recovery_times(cluster).swap_s()
    recreate = cluster.instance_gpus * effect.instances_down
    if placement == "global":
        return Recovery(f"re-create on {recreate} spares", recreate, swap,
                        per=cluster.instance_gpus,
                        each=(cluster.instance_gpus,) * effect.instances_down)
    comp = effect.component
    todo = _replace(cluster, comp, effect)
    need = sum(len(gone) for _, gone in todo)
    # each down instance against its own healthy cost as placed (Cluster.healthy): one
    # that straddles two leaves serves a smaller batch healthy, and a spare that keeps
    # that batch serves as it did
    own = [cluster.healthy[i] for i in effect.down]
    # what a spare costs an instance, in instances' worth of the cell's capacity (its own
    # share of its rate times its weight: Cluster.weights, 1 where instances serve alike)
    weight = [cluster.weights[i] for i in effect.down]
    if placement == "group":
        groups = _groups(cluster)
        data = cluster.graph.nodes
        like = [g for _, gone in todo for m in gone for g in groups[data[m]["group"]]]
        like = list(dict.fromkeys(like))
    else:
        like = None
    plan = _plan(cluster, max(need, recreate), like or None)
    if plan and _lost(cluster, comp, like or None):   # spares it stops or cuts off
        plan = _live(cluster, comp, _every(cluster, like or None), like or None)[
            :max(need, recreate)]
        if not plan:
            where = "the failed switch" if comp.cls in _SWITCHES else \
                f"the {comp.cls}'s own switch"
            return Recovery(f"every spare site is on {where}", None, None)
    if not plan:
        return Recovery("no free port for a spare", None, None)
    spares = [name for name, _, _ in plan]
    home_of = {name: {n for n, _ in edges} for name, _, edges in plan}
    removed = set(comp.nodes)
    group_of = {name: attrs.get("group") for name, attrs, _ in plan}
    g = cluster.graph
    def substitute(items):
        """The capacity lost with a spare in for each member to replace of ``items``
        ((members, to replace), own healthy, weight), the nearest free first; None where
        one has nothing to replace, no spare of its group or misses the SLO."""
        free, lost, data = list(spares), 0.0, g.nodes
        for (inst, gone), mine, w in items:
            if not gone:
                return None
            picks = []
            for m in gone:  # the nearest spare: on the member's own switches if one is
                pool = [s for s in free if placement != "group"
                        or group_of[s] == data[m].get("group")]
                if not pool:
                    return None
                pick = _nearest(pool, set(g.neighbors(m)), home_of.__getitem__, removed)
                picks.append(pick)
                free.remove(pick)
            sub = dict(zip(gone, picks, strict=True))
            members = tuple(sub.get(m, m) for m in inst)
            # the instance costed with its own spares in: the plan's others hang idle off
            # switches (GPUs forward nothing here), so they change no cost, only the
            # problem's key (with them every plan size was a costing of its own)
            mine_sites = [p for p in plan if p[0] in sub.values()] \
                if not cluster.direct else plan
            r = _serves(cluster, cluster.recost_graph([comp], members, mine_sites), members,
                        mine)
            if r is None:
                return None
            lost += _loss(r.tokens_per_s, mine.tokens_per_s) * w
        return lost

    items = list(zip(todo, own, weight, strict=True))
    extra = " (circuits re-set)" if cluster.scenario.is_ocs else ""
    each = tuple(len(gone) for _, gone in todo)
    per = each[0] if len(set(each)) == 1 else 0
    if need and len(spares) >= need:
        lost = substitute(items)
        if lost is not None:
            return Recovery(f"substitute {need} spare{'s' * (need > 1)}{extra}", need, swap,
                            lost, per, each)
    # with sites for fewer members than the failure took, the instances whose members
    # they hold are substituted and the rest wait for the repair, as re-creation below
    # (Recovery.per: every instance replaces as many members; the same guard where the
    # failure stops some of the pool's sites), where each takes fewer spares than
    # re-creating it whole: as many instances back or more (a host taking 4 members of
    # each of 8 spread instances, 16 sites: 4 substituted, where 1 is re-created), each
    # holding fewer spares to the repair (9 members of 16 each: 1 back either way, on 9
    # spares, not 16), so a failure finding fewer free gets more back. Where an instance
    # replaces every member (per = size) the two take the same spares: re-creation.
    # Instances replacing different numbers of members are substituted fewest first, as
    # far as the sites reach (as many back as any order brings, and as many or more than
    # re-creation; the availability model's grant, Kind.steps, picks by capacity)
    k, size = effect.instances_down, cluster.instance_gpus
    first = sorted(items, key=lambda item: len(item[0][1]))   # stable: fewest first
    fit = _reach(sorted(each), len(spares)) if len(spares) < need else 0
    if placement == "pod" and fit and (per or 0) < size and fit >= _reach(
            sorted(each), capacity(cluster, placement)):
        lost = substitute(first[:fit])
        if lost is not None:
            # the substituted instances' mean loss for each down one (the model scales
            # it by the share granted, as re-creation's)
            taken = sum(len(gone) for (_, gone), _, _ in first[:fit])
            return Recovery(f"substitute {taken} of {need} spares ({fit} of {k} "
                            f"instances; {len(spares)} free port(s); the rest repair)"
                            f"{extra}", need, swap, lost * k / fit, per, each)
    # re-creating needs a site for every GPU of every instance the failure took down at
    # once (two instances of 16 on a host of 32 Lites: 32 sites, not 16); with sites for
    # fewer, as many whole instances as they hold come back and the rest wait for the
    # repair (Recovery.per: the availability model grants floor(free / per) of them, the
    # free spares at most the pool's sites; where the failure stops some of the pool's
    # sites, fewer than its grants would place, it stays all or nothing)
    fit = min(effect.instances_down, len(spares) // cluster.instance_gpus)
    if placement == "pod" and fit and (fit == effect.instances_down or fit >= min(
            effect.instances_down, capacity(cluster, placement) // cluster.instance_gpus)):
        block = tuple(spares[:cluster.instance_gpus])
        r = cluster.instance_result(cluster.recost_graph(
            [comp], block, plan if cluster.direct else plan[:len(block)]), block)
        if r is not None and r.feasible:
            # per healthy rate, times the instances at it (a sum of equal shares rounds
            # otherwise); every down instance's, as if all came back (the model scales it
            # by the share granted)
            lost = sum(_loss(r.tokens_per_s, t) * n * w
                       for (t, w), n in Counter((x.tokens_per_s, w) for x, w
                                                in zip(own, weight, strict=True)).items())
            whole = (cluster.instance_gpus,) * effect.instances_down
            if fit == effect.instances_down:
                return Recovery(f"re-create on {recreate} spares", recreate, swap, lost,
                                cluster.instance_gpus, whole)
            return Recovery(f"re-create {fit} of {effect.instances_down} on "
                            f"{fit * cluster.instance_gpus} spares ({len(spares)} free "
                            f"port(s); the rest repair)", recreate, swap, lost,
                            cluster.instance_gpus, whole)
    if len(spares) < need and len(spares) < recreate:
        return Recovery(f"only {len(spares)} free port(s) for {min(need, recreate)} spares",
                        None, None)
    if placement == "group":
        return Recovery("no spare in the group meets the SLO", None, None)
    return Recovery("no reachable spare meets the SLO", None, None)


def _reach(needs: list, sites: int | None) -> int:
    """How many of the instances needing ``needs`` spares (in order) the ``sites`` hold,
    as far as they reach (None: all)."""
    if sites is None:
        return len(needs)
    taken = n = 0
    for u in needs:
        if taken + u > sites:
            break
        taken, n = taken + u, n + 1
    return n


@dataclass(frozen=True)
class SlowSwap:
    """What the operator does with the instances one failure slows (re-balanced or not):
    for each, the better of staying slow until the repair and swapping spares in as for a
    down instance (:func:`recovery`: same placement rules and swap time), where the fabric
    reaches spares on which it serves faster. With the swap the instance stays slow until
    the swap completes, then loses only what it loses on the spares until the repair.

    ``units``: spare GPUs held until the repair (0: none swapped); ``swapped``: the share
    the swapped instances lose until the swap completes (instances' worth); ``restored``:
    what they still lose on the spares; ``path``: what is done.
    """

    path: str
    units: int
    swapped: float
    restored: float
    #: spares each swapped instance takes where every one takes as many (0: they differ,
    #: or none is swapped); ``count``: the instances swapped
    per: int = 0
    count: int = 0
    #: spares each swapped instance takes, in the order of the slowed (``count`` of them)
    each: tuple = ()
    #: what each swapped instance loses slowed (instances' worth: its loss x its weight),
    #: as ``each``: what swapping it restores (the availability model's grant, Kind.worths)
    worths: tuple = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        # the availability model's (Kind.per, Kind.each, Kind.worths)
        del d["per"], d["count"], d["each"], d["worths"]
        return d


def slow_recovery(cluster: Any, effect: Any, placement: str = "pod") -> SlowSwap:
    """The operator's choice for the instances ``effect`` slows (see :class:`SlowSwap`):
    spares are swapped in for a slowed instance when that loses less capacity over the
    repair, ``slow x swap + restored x (hold - swap) < slow x hold``, i.e. when the swap
    completes before the repair and the instance loses less on the spares than slowed.
    Each slowed instance is placed on spares as if it alone were down (so the units
    add up; a failure that slows several instances on one switch may in fact share
    nearer sites).

    >>> from netmodel.study.reliability_cluster import build_cluster
    >>> c = build_cluster("lite-ocs", "Llama-3-70B", "decode")
    >>> e = next(x for x in c.effects() if x.cls == "cpo-engine")
    >>> s = slow_recovery(c, e, "pod")
    >>> s.units, round(s.swapped, 4) == round(e.slow, 4), s.restored
    (1, True, 0.0)
    >>> s.path
    'swap 1 of 1 slowed: substitute 1 spare (circuits re-set)'
    """
    return _memoized(cluster, "_slow_recoveries", _slow_recovery, effect, placement)


def _slow_recovery(cluster, effect, placement: str) -> SlowSwap:
    slowed = getattr(effect, "slowed", ())
    if not slowed:
        return SlowSwap("none slowed", 0, 0.0, 0.0)
    if recovery_times(cluster).swap_s() >= recovery_times(cluster).hold_s(effect.cls):
        return SlowSwap("stay slow: the swap outlasts the repair", 0, 0.0, 0.0)
    units, swapped, restored, paths, each, worths = 0, 0.0, 0.0, [], [], []
    for i, loss in slowed:
        rec = _recovery(cluster, replace(effect, instances_down=1, down=(i,)), placement)
        if rec.units is None or rec.units <= 0 or rec.restored >= loss * cluster.weights[i]:
            continue
        units += rec.units
        each.append(rec.units)
        worths.append(loss * cluster.weights[i])
        swapped += loss * cluster.weights[i]   # instances' worth, as rec.restored
        restored += rec.restored
        paths.append(rec.path)
    if not units:
        return SlowSwap("stay slow: no spare serves faster", 0, 0.0, 0.0)
    how = "; ".join(dict.fromkeys(paths))
    rest = "; the rest stay slow" if len(paths) < len(slowed) else ""
    return SlowSwap(f"swap {len(paths)} of {len(slowed)} slowed: {how}{rest}", units, swapped,
                    restored, each[0] if len(set(each)) == 1 else 0, len(paths), tuple(each),
                    tuple(worths))


@dataclass(frozen=True)
class FailureRecovery:
    """What the operator does after one failure with spares of one placement at hand: the
    instances it takes down come back as :func:`recovery` says, and each one it slows is
    swapped onto spares where :func:`slow_recovery` finds that loses less than staying slow
    until the repair; where the down instances wait for their repair (spares cannot help
    them) the failure asks no spare, and its slowed instances stay slow too. The
    availability model's event kinds (:mod:`~netmodel.study.availability_kinds`) and the
    blast-radius table's recovery column (:mod:`~netmodel.study.blast_radius`) both read
    it (:func:`failure_recovery`).

    ``instances_down``, ``slowed``: instances the failure takes down and slows;
    ``swap_s``: seconds from the failure to a swapped instance serving on its spares;
    ``slowed_s``: seconds a slowed instance not swapped stays slow (detection and
    repair); ``restarts``: the slowed instances the failure first restarts
    (:func:`restarts`: ``(index, share of its tokens/s lost slowed)`` each; their count
    :attr:`restarted`), each out for ``restart_s`` (swapped or not: a swapped one's
    restart is its swap)."""

    down: Recovery
    slow: SlowSwap
    instances_down: int
    slowed: int
    swap_s: float
    slowed_s: float
    restarts: tuple = ()
    restart_s: float = 0.0

    @property
    def restarted(self) -> int:
        """How many slowed instances the failure first restarts."""
        return len(self.restarts)

    @property
    def units(self) -> int | None:
        """Spare GPUs the failure holds until its repair, the down instances' and the
        swapped slowed ones'; None where spares cannot help the down instances."""
        return None if self.down.units is None else self.down.units + self.slow.units

    @property
    def slow_time_s(self) -> float | None:
        """Seconds the slowed instances lose their share: until the swap where they are
        swapped (the rest of ``slow``'s choice), else until the repair; None where none is
        slowed."""
        if not self.slowed:
            return None
        return self.swap_s if self.slow.units else self.slowed_s

    @property
    def path(self) -> str:
        """The recovery in words: the down instances' path, then the slowed ones'."""
        if not self.slowed:
            return self.down.path
        return f"{self.down.path}; {self.slow.path}" if self.instances_down \
            else self.slow.path


def failure_recovery(cluster: Any, effect: Any, placement: str = "pod") -> FailureRecovery:
    """The recovery from one failure of ``effect`` with spares of ``placement`` (see
    :class:`FailureRecovery`; the pool assumed to hold enough free spares).

    >>> from netmodel.study.reliability_cluster import build_cluster
    >>> c = build_cluster("lite-ocs", "Llama-3-70B", "decode")
    >>> ocs = next(x for x in c.effects() if x.cls == "ocs")
    >>> r = failure_recovery(c, ocs, "pod")
    >>> r.path, r.units, r.slowed, round(r.slow_time_s / 3600, 4)
    ('stay slow: no spare serves faster', 0, 8, 24.0083)
    >>> failure_recovery(c, ocs, "global").path
    'swap 8 of 8 slowed: re-create on 16 spares'
    """
    rec = recovery(cluster, effect, placement)
    slowed = len(getattr(effect, "slowed", ()))
    if slowed and effect.instances_down and rec.units is None:
        sw = SlowSwap("stay slow: the down instances wait for their repair", 0, 0.0, 0.0)
    else:   # 'none slowed' where nothing is slowed: slow_recovery says it
        sw = slow_recovery(cluster, effect, placement)
    rt = recovery_times(cluster)
    return FailureRecovery(rec, sw, effect.instances_down, slowed, rt.swap_s(),
                           rt.slowed_s(effect.cls), restarts(cluster, effect),
                           rt.restart_s())


def restarts(cluster: Any, effect: Any) -> tuple:
    """The instances ``effect`` slows that restart first: ``(index, share of its tokens/s
    lost slowed)`` of each slowed instance a member of which the failure takes a link of
    (a GPU at the end of a link it removes or thins, or wired to a switch or OCS it
    removes). NCCL has no link failover (``restart_source`` in
    ``netmodel/data/failures.toml``): the instance's communicator aborts and the engine
    restarts on the links left, out for
    :meth:`~netmodel.study.reliability_timings.RecoveryTimes.restart_s` before it serves
    degraded. An instance slowed only by its routes (a spine's loss, a cable between
    switches, which the fabric routes around below the transport's retry timeout) keeps
    serving: no restart.

    >>> from netmodel.study.reliability_cluster import build_cluster
    >>> c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    >>> plane = next(x for x in c.effects() if x.cls == "leaf")
    >>> len(restarts(c, plane)) == len(plane.slowed) == 8
    True
    """
    slowed = getattr(effect, "slowed", ())
    if not slowed or effect.component is None:
        return ()
    _, _, wired, _ = cluster.local(effect.component)
    insts = cluster.instances
    return tuple((i, share) for i, share in slowed if any(m in wired for m in insts[i]))


def _serves(cluster, graph, members, own):
    """The instance ``members`` (spares in) on ``graph`` where it serves as the instance
    it stands for did healthy (``own``: :attr:`Cluster.healthy`), at that batch or the
    searched one: its InferenceResult, else None. An instance the search costed must meet
    the SLO at the searched batch; one placed across leaves, at the smaller batch it
    served."""
    if own.batch >= cluster.batch:
        r = cluster.instance_result(graph, members)
        return r if r is not None and r.feasible else None
    r = cluster.rebalanced(graph, members)
    return r if r is not None and r.batch >= own.batch else None


def _loss(tokens_per_s: float, healthy: float) -> float:
    """Share of an instance's tokens/s lost (rounding noise below 1e-9 is none)."""
    loss = 1.0 - tokens_per_s / healthy
    return loss if loss > 1e-9 else 0.0
