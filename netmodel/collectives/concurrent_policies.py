"""Routing policies in a concurrent costing: each group on its own fastest policy, where no
other group can load its links.

A collective costed alone runs under the fastest of the fabric's routing policies
(:mod:`netmodel.collectives.route_policies`: on fabrics where a GPU pair has both a cable
and a wider path through a scale-up switch, a Lite group); groups costed together
(:mod:`netmodel.collectives.concurrent`) route every group's steps hop-shortest, and so
lay each one's channels as NCCL would not (NCCL lays each communicator's channels by
bandwidth, apart: src/graph/search.cc). Here each group whose links, under every
algorithm costed and every policy, no other group's transfers cross under any of them (a
group *isolated*: the groups' link sets, each the union of its own under every candidate,
are disjoint) also gets the lines of each of its algorithms under each other policy, those
of the group costed alone (:meth:`~netmodel.collectives.model.FabricCostModel.
compiled_variants`), as lines together too: whatever the others run, none loads its
links, so together is alone. A group that shares a link under some candidate keeps the
hop-shortest lines only, as before, since its time there would hang on the others'
choices. The hop-shortest lines stay among every group's candidates, so no group's time
grows; a fabric without policies, and NCCL's send/recv (one path a peer), are costed as
before, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import fields
from operator import attrgetter

import numpy as np

from netmodel.collectives.algorithms import SEND_RECV_OPS, NotApplicable, generate
from netmodel.collectives.cost import SEND_RECV, GroupCut, compile_steps
from netmodel.collectives.group_copies import link_map, worth_looking
from netmodel.collectives.route_policies import route_policies
from netmodel.collectives.step_cost import StepCost

__all__ = ["policy_options", "policy_rows"]


def _steps(model, op: str, name: str, members: tuple[Hashable, ...]) -> tuple:
    """``name``'s steps for ``op`` on ``members`` (none where it cannot run; kept with the
    model)."""
    key = (op, name, members, "policy steps")
    hit = model._compiled.get(key)
    if hit is None:
        try:
            hit = tuple(generate(name, op, model._ordered(members), model.graph))
        except NotApplicable:
            hit = ()
        model._compiled[key] = hit
    return hit


def _step_key(router, transfers) -> tuple:
    """``transfers`` by what routing them reads: their kind, ends and bytes, and PXN."""
    src, dst, frac = router._node_ids(transfers)
    return (type(transfers).__name__, getattr(transfers, "p2p", None), src.tobytes(),
            dst.tobytes(), frac.tobytes(), router.pxn_applies(transfers))


class _Kept:
    """``policy`` whose link loads of a step's transfers are kept with the model, by
    their ends and bytes (:func:`_step_key`): the isolation test (:func:`_links`) and the
    policy's compiled lines (:func:`_variants`) route each step under it once."""

    def __init__(self, model, policy):
        self._policy = policy
        self.name = policy.name
        self._kept = model._compiled.setdefault(("policy loads", policy.name), {})

    def __getattr__(self, attr: str):
        return getattr(self._policy, attr)

    def link_loads(self, router, transfers) -> tuple:
        key = _step_key(router, transfers)
        hit = self._kept.get(key)
        if hit is None:
            hit = self._kept[key] = self._policy.link_loads(router, transfers)
        return hit


def _links(model, op: str, name: str, members: tuple[Hashable, ...], policies) -> np.ndarray:
    """The links ``name``'s steps for ``op`` on ``members`` cross under the hop-shortest
    routes or any of ``policies`` (sorted link ids; kept with the model)."""
    key = (op, name, members, "policy links")
    hit = model._compiled.get(key)
    if hit is not None:
        return hit
    router = model.router
    kept = model._compiled.setdefault(("policy step links",), {})
    parts, seen = [], set()
    for st in _steps(model, op, name, members):
        t = st.transfers
        if id(t) in seen:
            continue
        seen.add(id(t))
        # one step's links by its transfers (ends and bytes): algorithms and ops share them
        step_key = _step_key(router, t)
        links = kept.get(step_key)
        if links is None:
            own = [router.link_loads(t)[0]]
            own.extend(_Kept(model, p).link_loads(router, t)[0] for p in policies
                       if p.moves(router, t))
            links = kept[step_key] = np.unique(np.concatenate(own))
        parts.append(links)
    hit = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    model._compiled[key] = hit
    return hit


def _isolated(model, op: str, groups: tuple[tuple[Hashable, ...], ...], names, policies,
              copies: dict[int, tuple[int, np.ndarray]]) -> np.ndarray:
    """Per group: whether no other group crosses any of its links, each group's links
    those of every algorithm of ``names`` under every routing candidate (:func:`_links`;
    a copy's, ``copies``: those of the group it copies, mapped)."""
    sets: list = []
    for g, members in enumerate(groups):
        f, image = copies.get(g, (g, None))
        if image is None:
            sets.append(np.unique(np.concatenate([_links(model, op, n, members, policies)
                                                  for n in names])))
        else:
            sets.append(np.sort(image[sets[f]]))
    users = np.bincount(np.concatenate(sets).astype(np.int64),
                        minlength=model.router.n_links)
    return np.array([bool((users[s] == 1).all()) for s in sets], dtype=bool)


def _variants(model, op: str, name: str, members: tuple[Hashable, ...], policies) -> list:
    """``name`` compiled on ``members`` under each of ``policies`` that moves any of its
    transfers (:meth:`~netmodel.collectives.model.FabricCostModel.compiled_variants`'
    others, the hop-shortest one not compiled again; kept with the model)."""
    names = tuple(p.name for p in policies)
    key = (op, name, members, "routings")
    hit = model._compiled.get(key)
    if hit is not None:
        return [c for c in hit[1:] if c.routing in names]
    key = (op, name, members, "policy variants", names)
    hit = model._compiled.get(key)
    if hit is None:
        router = model.router
        steps = _steps(model, op, name, members)
        hit = model._compiled[key] = [
            compile_steps(router, op, name, members, steps, model.calibration,
                          model._step_cache, _Kept(model, p))
            for p in policies if any(p.moves(router, s.transfers) for s in steps)]
    return hit


def _lines(comp, proto, cal, kept: dict) -> list[tuple[float, float]]:
    """``comp.lines(proto, cal)``, once per collective of the same steps' costs (groups
    that are translates of each other: the bottleneck's name aside, every field alike)."""
    key = (comp.op, comp.algorithm, len(comp.group), comp.nic, proto.name,
           tuple(_fields(s) for s in comp.steps))
    hit = kept.get(key)
    if hit is None:
        hit = kept[key] = comp.lines(proto, cal)
    return hit


_FIELDS = tuple(f.name for f in fields(StepCost) if f.name != "bottleneck")
_fields = attrgetter(*_FIELDS)


def _copies(model, groups: tuple[tuple[Hashable, ...], ...], cls: list, moved: np.ndarray
            ) -> dict[int, tuple[int, np.ndarray]]:
    """``{g: (f, image)}``: each moved group ``g`` shown a copy (:func:`~netmodel.
    collectives.group_copies.link_map`: the fabric relabelled onto itself, ``f``'s members
    onto ``g``'s in order; ``image``: each link's picture) of an earlier moved group ``f``
    alike (the same hop-shortest lines, ``cls``) that is costed: ``g``'s links and lines
    under every policy are ``f``'s, mapped. Each group is tried against the first
    :data:`COPY_TRIES` costed groups of its class; the others are not in it (nor any
    where the fabric is too large for its groups to look:
    :func:`~netmodel.collectives.group_copies.worth_looking`)."""
    out: dict[int, tuple[int, np.ndarray]] = {}
    costed: dict[int, list[int]] = {}
    if not groups or not worth_looking(model.router, min(map(len, groups))):
        return out
    for g in np.flatnonzero(moved).tolist():
        reps = costed.setdefault(cls[g], [])
        for f in reps[:COPY_TRIES]:
            image = link_map(model.router, groups[f], groups[g])
            if image is not None:
                out[g] = (f, image)
                break
        else:
            reps.append(g)
    return out


#: The most costed groups of a class a group is tried as a copy of (:func:`_copies`).
COPY_TRIES = 4


#: A group's algorithms looked at under other policies: those among its NEAREST fastest
#: hop-shortest ones at some size.
NEAREST = 3

#: The sizes (bytes) at which a policy's lines are looked at where none are given.
_GRID = np.logspace(3, 12, 37)


def policy_options(model, groups: tuple[tuple[Hashable, ...], ...], op: str,
                   options: list[tuple], lo: np.ndarray | None, hi: np.ndarray | None,
                   sizes: np.ndarray | None = None
                   ) -> tuple[list[tuple], np.ndarray | None, np.ndarray | None]:
    """``(options, lo, hi)`` of :func:`~netmodel.collectives.concurrent_choice.own_options`
    with, right after each (algorithm, protocol)'s own, its lines under each other routing
    policy on the isolated groups (:func:`_isolated`) it moves transfers of, alone and
    together alike (inf on every other group), where one of them is faster than every
    hop-shortest line of the group alone at one of ``sizes`` (None: a grid from 1 kB to
    1 TB, :data:`_GRID`; the groups are looked at for isolation only then); ``options``
    itself where none is added. The groups that take them are kept for
    :func:`policy_rows`."""
    policies = () if op in SEND_RECV_OPS else route_policies(model.router)
    if not policies or not options:
        return options, lo, hi
    cal = model.calibration
    G = len(groups)
    rows = np.zeros(G, dtype=bool)
    model._compiled[op, groups, "policy rows"] = rows
    names = list(dict.fromkeys(o[0] for o in options))
    # a group's pairs that some policy moves: none, no other lines
    router = model.router
    keys = np.unique(np.concatenate([p.keys for p in policies]))
    n_nodes = router._n
    moved = np.zeros(G, dtype=bool)
    for g, members in enumerate(groups):
        ids = np.fromiter((router._nid[x] for x in members), np.int64, len(members))
        pairs = (ids[:, None] * n_nodes + ids[None, :]).ravel()
        moved[g] = np.isin(pairs, keys).any()
    if not moved.any():
        return options, lo, hi
    # each moved group's lines under the other policies, kept where one is faster than
    # every hop-shortest line alone at some size (``sizes``, else a grid of sizes)
    n = np.asarray(sizes, dtype=float) if sizes is not None else _GRID
    best = np.stack([o[4][:, None] + o[5][:, None] * n[None, :] for o in options]).min(axis=0)
    # each group's time alone under its NEAREST-th fastest algorithm (hop-shortest)
    per_name = np.stack([np.stack([o[4][:, None] + o[5][:, None] * n[None, :]
                                   for o in options if o[0] == name]).min(axis=0)
                         for name in names])
    per_name.sort(axis=0)
    ranks = per_name[min(NEAREST, len(names)) - 1]
    # groups alike (every hop-shortest line the same): the policies that help none but
    # the first's are not compiled for the others (never slower: only fewer candidates)
    cols = np.stack([np.concatenate([o[4], o[5]]).reshape(2, G) for o in options], axis=0)
    _, cls = np.unique(cols.transpose(2, 0, 1).reshape(G, -1), axis=0, return_inverse=True)
    cls = cls.ravel().tolist()
    # the least share of a pair's bytes left on its cable when split by capacity
    ratio = min(float(np.min(1.0 - p.share)) for p in policies if p.name == "split")
    kept: dict = model._compiled.setdefault(("policy lines",), {})
    # groups that are copies of an earlier one: its lines and links, not costed again
    copies = _copies(model, groups, cls, moved)
    found: dict[int, list] = {}
    for name in names:
        if (op, name) in SEND_RECV:
            continue
        mine = [o for o in options if o[0] == name]
        # no policy sends a pair's bytes faster than over its cable and switch path at
        # once: a line whose slope, so shrunk, loses to the group's best at every size
        # (latency aside) is not compiled
        slope = np.min([o[5] for o in mine], axis=0) * ratio
        near = (slope[:, None] * n[None, :] < best).any(axis=1)
        # and only an algorithm among a group's fastest few hop-shortest ones somewhere
        own = np.stack([o[4][:, None] + o[5][:, None] * n[None, :] for o in mine]).min(axis=0)
        near &= (own <= ranks).any(axis=1)
        wins: dict[int, set] = {}   # per class of groups alike: the policies useful to its first
        mine_lines: dict[int, list] = {}   # each costed group's lines of this algorithm
        for g in np.flatnonzero(moved & near & np.isfinite(mine[0][4])).tolist():
            first = cls[g] not in wins
            tried = policies if first else tuple(p for p in policies
                                                 if p.name in wins[cls[g]])
            if first:
                wins[cls[g]] = set()
            if not tried:
                continue
            f = copies.get(g, (None,))[0]
            if f in mine_lines:
                # a copy of a group costed: that one's lines under the policies tried
                found.setdefault(g, []).extend(x for x in mine_lines[f] if x[2] in wins[cls[g]])
                if not found[g]:
                    del found[g]
                continue
            mine_lines[g] = []
            try:
                comps = _variants(model, op, name, groups[g], tried)
            except (NotApplicable, GroupCut):
                continue
            for comp in comps:
                crosses = any(s.scaleout for s in comp.steps)
                for proto in comp.protocols(cal):
                    for j, (a, b) in enumerate(_lines(comp, proto, cal, kept)):
                        line = (name, proto.name, comp.routing, j, a, b, crosses)
                        found.setdefault(g, []).append(line)
                        mine_lines[g].append(line)
                        if first and (a + b * n < best[g]).any():
                            wins[cls[g]].add(comp.routing)
    useful = [g for g, ls in found.items()
              if any((a + b * n < best[g]).any() for *_, a, b, _ in ls)]
    if not useful:
        return options, lo, hi
    iso = _isolated(model, op, groups, names, policies, copies)
    extra: dict[tuple[str, str], dict[tuple[str, int], list]] = {}
    for g in useful:
        if not iso[g]:
            continue
        rows[g] = True
        for name, proto_name, routing, j, a, b, crosses in found[g]:
            line = extra.setdefault((name, proto_name), {}).setdefault(
                (routing, j), [np.full(G, math.inf), np.zeros(G), np.zeros(G, dtype=bool)])
            line[0][g], line[1][g], line[2][g] = a, b, crosses
    if not extra:
        return options, lo, hi
    last = {(o[0], o[1]): i for i, o in enumerate(options)}
    out, where = [], []
    for i, o in enumerate(options):
        out.append(o)
        where.append(i)
        if last[o[0], o[1]] != i:
            continue
        for _, (a, b, crosses) in sorted(extra.pop((o[0], o[1]), {}).items()):
            out.append((o[0], o[1], a, b, a, b, [], crosses))
            where.append(-1)
    if lo is not None and hi is not None:
        idx = np.array(where)
        lo = np.where(idx[:, None] >= 0, lo[np.maximum(idx, 0)], 0.0)
        hi = np.where(idx[:, None] >= 0, hi[np.maximum(idx, 0)], math.inf)
    return out, lo, hi


def policy_rows(model, op: str, groups: tuple[tuple[Hashable, ...], ...]
                ) -> np.ndarray | None:
    """The groups :func:`policy_options` gave lines under other policies (isolated:
    together is alone, whatever the others run), or None (none)."""
    if op in SEND_RECV_OPS or not route_policies(model.router):
        return None
    rows = model._compiled.get((op, groups, "policy rows"))
    return rows if rows is not None and rows.any() else None
