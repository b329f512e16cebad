"""Each group's own choice in a concurrent costing, as NCCL's communicators tune apart.

The candidates of every group (:func:`own_options`: an algorithm that runs on some groups
only, :func:`_runs_on`, costed on those), the (algorithm, protocol) fastest for each group
alone and its time beside the others' (:func:`own_times`, :func:`own_lean`), and the lines
together of groups that run different algorithms, their steps routed together
(:func:`mixed_classes`, :func:`mixed_lines`, :func:`mixed_sizes`).
"""

from __future__ import annotations

import math
from collections.abc import Container, Hashable

import numpy as np

from compute.errors import UserError
from netmodel.collectives.algorithms import PRECHECKS, NotApplicable, generate, precheck
from netmodel.collectives.concurrent_groups import PreparedGroups, prepared_groups
from netmodel.collectives.concurrent_options import (
    masked_times,
    option_ranges,
    p2p_channels,
    valid_options,
)
from netmodel.collectives.concurrent_policies import policy_options
from netmodel.collectives.cost import SEND_RECV, combine, step_shape
from netmodel.collectives.in_network import has_in_network
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.protocol_lines import step_protocols

#: Algorithms that reduce in switches: none runs where no switch of the fabric reduces.
_NEEDS_REDUCTION = ("in-network", "in-network-tree", "collnet-direct", "collnet-chain")


def _runs_on(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
             name: str, hot: bool = True) -> np.ndarray:
    """Which ``groups`` algorithm ``name`` can run on, as a mask: its check of each group
    (:func:`~netmodel.collectives.algorithms.precheck`) and its steps, generated once per
    class of groups that share them. ``hot``: the costing's (:func:`own_options`'), so that
    where every group passes the check the costing's prepared groups, their classes worked
    out, are looked up (only their classes are read here, never their loads)."""
    runs = np.ones(len(groups), dtype=bool)
    if name in _NEEDS_REDUCTION and not has_in_network(model.graph):
        return ~runs   # no group can: their steps are never generated (2,048 TP-8 groups)
    if (name, op) in PRECHECKS:
        for g, members in enumerate(groups):
            try:
                precheck(name, op, members, model.graph)
            except NotApplicable:
                runs[g] = False
    where = np.flatnonzero(runs)
    if not len(where):
        return runs
    sub = prepared_groups(model, tuple(groups[g] for g in where.tolist()), True, hot)
    # hierarchical's steps are refused by the GPUs' domains alone (algorithms.
    # rails_or_refuse): one look per class of groups whose domains fall alike
    for idx in (sub.classes("tree") if name == "hierarchical" else sub.classes(name)):
        try:
            generate(name, op, sub.ordered[idx[0]], sub.graph)
        except NotApplicable:
            runs[where[idx]] = False
    return runs


def _embed(o: tuple, where: np.ndarray, G: int) -> tuple:
    """Option ``o`` of :func:`valid_options` costed on the groups ``where`` of ``G``, as one of
    all ``G`` groups: no time (inf) on the others."""
    def full(x, fill):
        out = np.full(G, fill, dtype=np.asarray(x).dtype)
        out[where] = x
        return out

    name, proto, at, bt, aa, ba, hot, crosses = o
    return (name, proto, full(at, np.inf), full(bt, 0.0), full(aa, np.inf), full(ba, 0.0),
            hot, full(crosses, False))


def own_options(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
                names: list[str], n: np.ndarray | None, hot: bool = True) -> tuple:
    """Every group's candidates: ``(options, lo, hi, whole)``, the options of
    :func:`valid_options` and their sizes (:func:`option_ranges`; ``lo``, ``hi`` both None
    where every option runs at every size) over all groups, an algorithm that runs on some groups only
    (two-shot on a Lite package's mesh, in-network within a scale-up domain) costed on
    those and inf on the others; ``whole``, the algorithms costed on every group together
    (only their loads together are the groups' own when all run one of them), each with
    the schedule that shared its links (``{name: schedule}``, :func:`valid_options`'
    ``schedules``). ``hot``: as :func:`valid_options`'."""
    why: dict[str, list[str]] = {}
    schedules: dict[str, str] = {}
    options = valid_options(model, groups, op, names, nbytes=n, why_out=why, hot=hot,
                       schedules=schedules)
    G = len(groups)
    lo, hi = ((option_ranges(model, groups, op, options) or (None, None)) if options
              else (None, None))
    whole = {o[0]: schedules[o[0]] for o in options}
    extra, ranges = [], []
    for name in names:
        if not why.get(name):
            continue
        runs = _runs_on(model, groups, op, name, hot)
        if runs.all() or not runs.any():   # runs.all(): left out for another reason
            continue
        where = np.flatnonzero(runs)
        sub = tuple(groups[g] for g in where.tolist())
        sub_opts = valid_options(model, sub, op, [name], nbytes=n, why_out={}, hot=hot)
        if not sub_opts:
            continue
        slo, shi = option_ranges(model, sub, op, sub_opts) or (None, None)
        for j, o in enumerate(sub_opts):
            extra.append(_embed(o, where, G))
            r_lo, r_hi = np.zeros(G), np.full(G, math.inf)
            if slo is not None:
                r_lo[where], r_hi[where] = slo[j], shi[j]
            ranges.append((r_lo, r_hi))
    if not options and not extra:
        reasons = "; ".join(w for ws in why.values() for w in ws)
        raise UserError(f"no algorithm can run {op} on these groups ({reasons})")
    if extra:
        if lo is None:
            lo, hi = np.zeros((len(options), G)), np.full((len(options), G), math.inf)
        options = options + extra
        lo = np.vstack([lo] + [r[0][None] for r in ranges])
        hi = np.vstack([hi] + [r[1][None] for r in ranges])
        if not (lo > 0).any() and not (hi < math.inf).any():
            lo = hi = None
    # each isolated group's lines under other routing policies too, as alone
    options, lo, hi = policy_options(model, groups, op, options, lo, hi, n)
    return options, lo, hi, whole


def mixed_classes(groups: PreparedGroups, op: str, assignment: np.ndarray) -> list:
    """:func:`~netmodel.collectives.concurrent_groups.group_steps` of groups running
    different algorithms (``assignment``: each group's), each algorithm's classes of groups
    that share steps cut to its groups."""
    out = []
    for name in dict.fromkeys(assignment.tolist()):
        mine = assignment == name
        for idx in groups.classes(name):
            sub = idx[mine[idx]]
            if len(sub):
                steps = generate(name, op, groups.ordered[sub[0]], groups.graph)
                out.append((steps, groups.rows(sub), sub))
    return out


def mixed_lines(model: FabricCostModel, op: str, groups: tuple[tuple[Hashable, ...], ...],
                evaluated: tuple, rows: np.ndarray, name: str, proto: str
                ) -> tuple[np.ndarray, ...]:
    """``(a, b, lo, hi)`` of shape ``(lines, len(rows))``: the lines together of the groups
    ``rows`` (of ``groups``), all running ``name`` with protocol ``proto``, from the loads
    of every group's steps (:func:`~netmodel.collectives.concurrent_loads.evaluate_loads`
    of :func:`mixed_classes`), each line a group's at the sizes ``lo < n <= hi``: send/recv's
    channels on each group's own path, as beside groups on one algorithm
    (:func:`~netmodel.collectives.concurrent_options.p2p_channels`)."""
    table, _, together, latency, lat_up, scaleout = evaluated[:6]
    cal = model.calibration
    sub = {k: v[rows] for k, v in table.items()}
    on, innet = sub["on"], sub["in_network"]
    protos = step_protocols(bool((on & innet).any()),
                            bool((on & sub["member"] & ~innet).any()), cal,
                            (op, name) in SEND_RECV)
    protocol = next(p for p in (*protos, *cal.protocols, cal.in_network) if p.name == proto)
    so = scaleout[rows]
    shares, path = p2p_channels(model, op, name, proto,
                                tuple(groups[g] for g in rows.tolist()), so.any(axis=1))
    out = []
    for share, lo, hi in shares:
        for a, b, _ in combine(sub, together[rows], latency[rows], lat_up[rows], so,
                               protocol, cal, step_shape(sub), share=share, path=path):
            out.append((a, b, np.broadcast_to(lo, a.shape), np.broadcast_to(hi, a.shape)))
    return tuple(np.stack(x) for x in zip(*out, strict=True))


def own_times(options: list[tuple], lo, hi, n: np.ndarray, tuned=None) -> tuple:
    """Each group's own choice and times at the sizes ``n`` from ``options``
    (:func:`own_options`, with their sizes ``lo``, ``hi``): ``(time, alone, own, keys,
    pairs, t_all)``: seconds together, each running its own choice beside the others'
    (every group on one algorithm's loads: :func:`mixed_sizes` says where that is not
    so), seconds alone, each group's choice (an index into ``pairs``, the (algorithm,
    protocol) choices), each option's choice, and every option's lines together at ``n``
    (``(O, G, S)``). ``tuned(g, s, col)``: the option a tuner plugin chooses for group
    ``g`` at size index ``s`` from ``col``, every option's time alone there
    (:meth:`FabricCostModel.tuner_row
    <netmodel.collectives.model.FabricCostModel.tuner_row>`, as a group alone is costed),
    or None (auto's, the fastest alone)."""
    t_all = masked_times(np.stack([o[2][:, None] + o[3][:, None] * n[None, :] for o in options]),
                    lo, hi, n)
    a_all = masked_times(np.stack([o[4][:, None] + o[5][:, None] * n[None, :] for o in options]),
                    lo, hi, n)
    # each group's choices: (algorithm, protocol), its lines one choice (the least at n)
    pairs: dict[tuple[str, str], int] = {}
    keys = np.array([pairs.setdefault((o[0], o[1]), len(pairs)) for o in options],
                    dtype=np.intp)
    G, S = t_all.shape[1:]
    # each group's own choice: the one holding its least line alone (the first such)
    best = np.argmin(a_all, axis=0)                        # (G, S): an option
    if tuned is not None:
        for g, s in np.ndindex(G, S):
            pick = tuned(g, s, a_all[:, g, s])
            if pick is not None:
                best[g, s] = pick
    own = keys[best]                                       # (G, S): its choice
    gi, si = np.arange(G)[:, None], np.arange(S)[None, :]
    alone = a_all[best, gi, si]
    # together: the least of the own choice's lines (gathered line by line, not reduced
    # over every option: 2,048 groups x 30 sizes x 40 options)
    order = np.argsort(keys, kind="stable")
    count = np.bincount(keys)
    first = (np.cumsum(count) - count)[own]
    time = np.full((G, S), np.inf)
    for j in range(int(count.max())):
        o = order[np.minimum(first + j, len(order) - 1)]
        np.minimum(time, np.where(j < count[own], t_all[o, gi, si], np.inf), out=time)
    return time, alone, own, keys, list(pairs), t_all


def mixed_sizes(own: np.ndarray, pair_list: list, whole: Container[str]) -> np.ndarray:
    """Per size, whether the groups' own choices ``own`` (``(G, S)``, indices into
    ``pair_list``) run different algorithms, or one not costed on every group together
    (not in ``whole``): their loads together are then no single algorithm's."""
    alg_names = list(dict.fromkeys(p[0] for p in pair_list))
    alg = np.array([alg_names.index(p[0]) for p in pair_list], dtype=np.intp)[own]
    in_whole = np.array([name in whole for name in alg_names])
    return (alg != alg[:1]).any(axis=0) | ~in_whole[alg[0]]


def own_lean(options: list[tuple], lo, hi, n: np.ndarray) -> tuple | None:
    """:func:`own_times`' ``(time, alone, own, pairs)`` choice by choice, without the
    tables of every option (the fabric search asks for hundreds of thousands of sizes at
    once), where each choice's options lie side by side (else None): per choice its least
    line alone and together, a group's own the first with the least alone, as there.

    Each line is worked out into one of a few arrays of the result's shape, reused (the
    same sums, products and minima as new arrays would hold: a fresh array of 30,000 sizes
    is fresh pages the kernel zeroes, much of the time of a 16,384-GPU compare's 1,912
    makespans)."""
    pairs: dict[tuple[str, str], int] = {}
    keys = [pairs.setdefault((o[0], o[1]), len(pairs)) for o in options]
    if any(k < j for j, k in zip(keys, keys[1:], strict=False)):   # numbered as first seen
        return None
    blocks = [[i for i, key in enumerate(keys) if key == k] for k in range(len(pairs))]
    shape = (len(np.asarray(options[0][2])), len(n))
    row = n[None, :]
    scratch = np.empty(shape)

    def least(k, a, b, out):   # choice k's least line (its a, b fields) written in out
        for j, i in enumerate(blocks[k]):
            t = out if j == 0 else scratch
            np.multiply(np.asarray(options[i][b])[:, None], row, out=t)
            np.add(t, np.asarray(options[i][a])[:, None], out=t)   # a + b n
            if lo is not None and hi is not None:
                np.copyto(t, np.inf, where=~((row > lo[i][:, None]) & (row <= hi[i][:, None])))
            if j:
                np.minimum(out, t, out=out)
        return out

    alone = least(0, 4, 5, np.empty(shape))
    own = np.zeros(shape, dtype=np.intp)
    a_k, better = np.empty(shape), np.empty(shape, dtype=bool)
    for k in range(1, len(pairs)):
        least(k, 4, 5, a_k)
        np.less(a_k, alone, out=better)
        np.copyto(alone, a_k, where=better)
        own[better] = k
    # together: only the choices some group takes somewhere, and of those only the ones
    # whose lines together are not their lines alone bit for bit (groups that share no
    # link: every option of a 16,384-GPU compare's fat tree), whose least line together is
    # then its least alone, the one ``alone`` holds where it is the group's own
    chosen = np.unique(own).tolist()
    apart = [k for k in chosen if not all(_same_bits(options[i][2], options[i][4])
                                          and _same_bits(options[i][3], options[i][5])
                                          for i in blocks[k])]
    if len(apart) == len(chosen):
        time = least(chosen[0], 2, 3, np.empty(shape))
        apart = chosen[1:]
    else:
        time = alone.copy()
    for k in apart:
        np.copyto(time, least(k, 2, 3, a_k), where=own == k)
    return time, alone, own, list(pairs)


def _same_bits(x, y) -> bool:
    """Whether the arrays ``x`` and ``y`` hold the same values to the bit (NaN and -0.0
    included), of one shape and type.

    >>> _same_bits(np.array([0.0, 1.0]), np.array([-0.0, 1.0]))
    False
    """
    x, y = np.asarray(x), np.asarray(y)
    return x is y or (x.shape == y.shape and x.dtype == y.dtype
                      and x.tobytes() == y.tobytes())
