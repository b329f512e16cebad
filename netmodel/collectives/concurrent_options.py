"""The options of a concurrent costing: each (algorithm, protocol)'s lines for all groups at once.

Together and alone, from the loads of its steps (:mod:`netmodel.collectives.concurrent_loads`:
:func:`valid_options`, :func:`_name_options`); an algorithm routing everyone to everyone left out
where a lower bound shows it cannot matter (:func:`_costly`, :func:`_useless`); the sizes
each option runs at (:func:`option_ranges`: NCCL's send/recv picks LL or Simple by size) and the
shared choices they make (:func:`choice_keys`, :func:`by_choice`, :func:`masked_times`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable

import numpy as np

from compute.errors import UserError
from netmodel.collectives.algorithms import PRECHECKS, NotApplicable, precheck
from netmodel.collectives.concurrent_groups import PreparedGroups, prepared_groups
from netmodel.collectives.concurrent_loads import evaluate_loads
from netmodel.collectives.cost import SEND_RECV, GroupCut, combine, step_shape
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.protocol_lines import channel_lines, p2p_size_range, step_protocols
from netmodel.collectives.step_cost import group_nic
from netmodel.collectives.steps import unique


def _costly(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
            names: list[str]) -> set[str]:
    """The algorithms of ``names`` routing more than 65,536 transfers (or more than
    ``max_transfers``) for some group: everyone to everyone over more than 256 GPUs, left
    out by :func:`valid_options` at sizes where a lower bound shows they cannot matter."""
    from netmodel.collectives.algorithms import quadratic, transfer_count
    from netmodel.collectives.model import COSTLY_TRANSFERS

    limit = min(COSTLY_TRANSFERS, model.max_transfers)
    p = max(len(g) for g in groups)
    return {a for a in names if quadratic(a, op) and transfer_count(a, op, p) > limit}


def _check_total_work(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...],
                      op: str, name: str) -> None:
    """UserError when a quadratic algorithm would route more than ``max_transfers``
    transfers for all ``groups`` together (each group alone is checked by
    FabricCostModel._check_work): 128 groups of 1,024 GPUs on a 131,072-GPU fabric route
    134 million transfers for a direct all-to-all, some 40 GB."""
    from netmodel.collectives.algorithms import quadratic, transfer_count

    if len(groups) < 2 or not quadratic(name, op):
        return
    total = sum(transfer_count(name, op, len(g)) for g in groups)
    if total > model.max_transfers:
        sizes = sorted({len(g) for g in groups})
        size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        raise UserError(
            f"{name} {op} on {len(groups):,} groups of {size} GPUs at once routes {total:,} "
            f"point-to-point transfers, more than the limit of {model.max_transfers:,} "
            f"(max_transfers, all groups together): use fewer or smaller groups, leave it "
            f"out (algorithms=...), or raise the limit")


def _useless(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
             name: str, n: np.ndarray, options: list[tuple],
             lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> bool:
    """Whether ``name`` (a :func:`_costly` algorithm) can change neither the choice nor
    the time alone of :func:`~netmodel.collectives.concurrent.concurrent_cost` at the sizes
    ``n``, by a lower bound on its time alone (FabricCostModel._lower_bound: what each GPU
    must send over its own links; together is never faster than alone) against ``options`` (the other algorithms'):
    above the best makespan and above every group's best time alone at every size.
    ``lo``, ``hi`` (shape ``(O, G)``, :func:`option_ranges`; None: every option at every size):
    an option counts only at the sizes its group runs it at (NCCL's send/recv picks LL or
    Simple by size), so that a line cheaper than the protocol that runs there prunes
    nothing.

    >>> from netmodel.collectives.calibration import Calibration
    >>> import networkx as nx
    >>> g = nx.Graph(name="pair", spec="", gpus=2)
    >>> g.add_node("sw", kind="switch", tier=0, radix=2, latency=0.0,
    ...            in_network_reduction=False)
    >>> for i in range(2):
    ...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    ...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    >>> m = FabricCostModel(g, calibration=Calibration.ideal())
    >>> [(p, a, float(b)) for p, a, b in m._lower_bound("all-to-all", "direct",
    ...                                               ("gpu0", "gpu1"))]  # n/2 at 1 GB/s
    [('ideal', 0.0, 5e-10)]
    >>> one = np.ones(1)   # a line of 0.1 ns per byte: 0.1 s at 1 GB, under the bound's 0.5 s
    >>> o = [("x", "LL", one * 0, one * 1e-10, one * 0, one * 1e-10, [], one > 0)]
    >>> _useless(m, (("gpu0", "gpu1"),), "all-to-all", "direct", np.array([1e9]), o)
    True
    >>> # ... but that line runs only up to 1 MB: at 1 GB it is no option
    >>> _useless(m, (("gpu0", "gpu1"),), "all-to-all", "direct", np.array([1e9]), o,
    ...          np.zeros((1, 1)), np.full((1, 1), 1e6))
    False
    """
    if not options:
        return False
    low = []
    for g in groups:
        lb = model._lower_bound(op, name, g)
        if lb is None:
            return False
        low.append(np.min([a + b * n for _, a, b in lb], axis=0))
    low = np.array(low)                                                    # (G, N)
    t = masked_times(np.stack([o[2][:, None] + o[3][:, None] * n for o in options]), lo, hi, n)
    a = masked_times(np.stack([o[4][:, None] + o[5][:, None] * n for o in options]), lo, hi, n)
    # the best shared choice's makespan (LL and Simple of one send/recv algorithm one
    # choice where groups run them at different sizes: concurrent_makespan's)
    keys = choice_keys(op, [o[0] for o in options], not one_class(lo, hi))
    together = by_choice(t, keys).max(axis=1).min(axis=0)                 # (N,)
    alone = a.min(axis=0)                                                  # (G, N)
    margin = 1 + 1e-9
    return bool(np.all(low.max(axis=0) > together * margin)
                and np.all(low > alone * margin))


def valid_options(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
                  names: Iterable[str], alone_too: bool = True,
                  nbytes: np.ndarray | None = None,
                  why_out: dict[str, list[str]] | None = None, hot: bool = True,
                  schedules: dict[str, str] | None = None) -> list[tuple]:
    """Every valid (algorithm, protocol): ``(name, protocol, a_together, b_together,
    a_alone, b_alone, hot, crosses)``, the a/b arrays of shape ``(G,)``; without
    ``alone_too`` ``(name, protocol, a_together, b_together, crosses)`` only (the rest is
    not computed). With ``nbytes`` (and ``alone_too``), a :func:`_costly` algorithm whose
    lower bound shows it can change neither the best choice nor the best time alone at any
    of these sizes (:func:`_useless`) is left out without being routed. ``why_out``: filled
    with why each algorithm that cannot run on every group was left out (by name), and
    no error where none can (the list is then empty). Without ``hot``, no hot spots
    (empty lists: their search is most of the time of a step of few transfers on a large
    fabric). ``schedules``: filled with the schedule that shared the links of each
    algorithm routed (by name: :func:`~netmodel.collectives.concurrent_loads.evaluate_loads`'s,
    from the costing that gave its options)."""
    names = list(names)
    prepared = prepared_groups(model, groups, alone_too, hot)
    why: dict[str, list[str]] = {name: [] for name in names}
    for name in list(names):  # ruled out by a look at the groups: no work counted
        if (name, op) not in PRECHECKS:   # nothing to look at (8,192 groups of 2: 0.4 s)
            continue
        try:
            for g in groups:
                precheck(name, op, g, model.graph)
        except NotApplicable as exc:
            why[name].append(f"{name}: {exc}")
            names.remove(name)
    for name in names:
        for p in unique(prepared.sizes).tolist():
            model._check_work(op, name, p)
    costly = _costly(model, groups, op, names) if nbytes is not None and alone_too else set()

    def routed(name):
        if nbytes is not None:
            _check_total_work(model, groups, op, name)
        return _name_options(model, op, name, groups, prepared, alone_too, why[name],
                             schedules)

    by_name = {name: routed(name) for name in names if name not in costly}
    cheap = [o for name in names if name not in costly for o in by_name[name]]
    ranges = (option_ranges(model, groups, op, cheap) or (None, None)) if costly and cheap \
        else (None, None)
    for name in names:
        if name in costly and not _useless(model, groups, op, name, nbytes, cheap, *ranges):
            by_name[name] = routed(name)
    options = [o for name in names for o in by_name.get(name, ())]
    if why_out is not None:
        why_out.update(why)
        return options
    if not options:
        reasons = "; ".join(w for ws in why.values() for w in ws)
        raise UserError(f"no algorithm can run {op} on these groups ({reasons})")
    return options


def _name_options(model: FabricCostModel, op: str, name: str,
                  groups: tuple[tuple[Hashable, ...], ...], prepared: PreparedGroups,
                  alone_too: bool, why: list[str],
                  schedules: dict[str, str] | None = None) -> list[tuple]:
    """The options of :func:`valid_options` of one algorithm (none, its reason added to
    ``why``, when it cannot run); its schedule set in ``schedules`` (optional) when it
    runs."""
    cal = model.calibration
    options: list[tuple] = []
    try:
        table, alone, together, latency, lat_up, scaleout, hot, schedule = evaluate_loads(
            model, op, name, prepared, alone_too)
    except NotApplicable as exc:
        why.append(f"{name}: {exc}")
        return options
    except GroupCut as exc:
        raise UserError(f"a group is cut apart: {exc}") from None
    if schedules is not None:
        schedules[name] = schedule
    on, innet = table["on"], table["in_network"]
    protos = step_protocols(bool((on & innet).any()),
                            bool((on & table["member"] & ~innet).any()), cal,
                            (op, name) in SEND_RECV)
    shape = step_shape(table)
    crosses = scaleout.any(axis=1)   # per group: a step crosses the scale-out network
    for proto in protos:
        # send/recv's channels on each group's path: LL's rate, Simple's line per share of
        # its rate (option_ranges: their sizes)
        shares, path = p2p_channels(model, op, name, proto.name, groups, crosses)
        for share, _, _ in shares:
            lt = combine(table, together, latency, lat_up, scaleout, proto, cal, shape,
                         share=share, path=path)
            if not alone_too:
                options.extend((name, proto.name, at, bt, crosses) for at, bt, _ in lt)
                continue
            la = combine(table, alone, latency, lat_up, scaleout, proto, cal, shape,
                         share=share, path=path)
            for (at, bt, _), (aa, ba, _) in zip(lt, la, strict=True):
                options.append((name, proto.name, at, bt, aa, ba, hot, crosses))
    return options


def option_ranges(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
                  options: list[tuple]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(lo, hi)`` of shape ``(O, G)``: option ``o`` runs for group ``g`` at the sizes
    ``lo < n <= hi``, those of the group's own collective costed alone (NCCL's send/recv
    picks LL or Simple by size, whatever else runs beside it:
    :func:`~netmodel.collectives.protocol_lines.p2p_size_range`); None where every option runs at
    every size. A group whose steps cross the scale-out network needs only its size for
    that (unless the calibration is ``scaleup_everywhere``); one that stays on the scale-up
    network needs its links' rate too, read off the
    first such group of its size compiled alone
    (:meth:`~netmodel.collectives.cost.CompiledCollective.size_range`): the groups of one
    size share their steps (:data:`SEND_RECV`'s algorithms do), and compiling each alone
    would route every group's transfers twice (64 all-to-alls of 256 GPUs: 4.2 million).
    Groups of one size whose scale-up links differ in rate (a placement mixing a Lite
    package's mesh and its NVSwitch ports) then take the first one's channels. Simple
    send-recv's lines by its channels (:func:`~netmodel.collectives.protocol_lines.channel_lines`,
    one option each, in order) run at their own sizes within those."""
    cal = model.calibration
    if not any((op, o[0]) in SEND_RECV for o in options):
        return None
    lo = np.zeros((len(options), len(groups)))
    hi = np.full((len(options), len(groups)), math.inf)
    if cal.p2p_ll_threshold > 0:
        _protocol_ranges(model, groups, op, options, lo, hi)
    # Simple send-recv's and all-to-all's lines by their channels, in the order
    # _name_options made them: each share's lines (as many a share: combine's, one per
    # pipeline fill plus one) one after another
    count = Counter((o[0], o[1]) for o in options)
    lines: dict[tuple[str, str], tuple[list, int]] = {}
    for i, o in enumerate(options):
        own, k = lines.get((o[0], o[1])) or (_channel_lines(model, op, o[0], o[1], groups,
                                                            o[-1]), 0)
        if own:
            j = k // max(1, count[(o[0], o[1])] // len(own))
            lo[i], hi[i] = np.maximum(lo[i], own[j][1]), np.minimum(hi[i], own[j][2])
            lines[(o[0], o[1])] = (own, k + 1)
    if not (lo > 0).any() and not (hi < math.inf).any():
        return None
    return lo, hi


def p2p_channels(model: FabricCostModel, op: str, name: str, protocol: str,
                 groups: tuple[tuple[Hashable, ...], ...], crosses: np.ndarray
                 ) -> tuple[list[tuple], np.ndarray | None]:
    """``(shares, path)``: what :func:`~netmodel.collectives.cost.combine` takes for
    ``groups`` running ``name`` under ``protocol`` (``crosses``: whether each group's steps
    cross the scale-out network), the groups' own channels of NCCL's send/recv. ``shares``:
    ``[(share, lo, hi)]``, Simple's lines by channel (:func:`_channel_lines`), else one
    ``(None, 0, inf)``: combine's ``share`` at the sizes ``lo < n <= hi``; ``path``: under LL
    each group's slowest path (:func:`_path_rates`), else None. A concurrent costing takes
    them from here whether its groups run one algorithm or several."""
    path = _path_rates(model, op, name, groups, crosses) \
        if protocol == "LL" and (op, name) in SEND_RECV else None
    return (_channel_lines(model, op, name, protocol, groups, crosses)
            or [(None, 0.0, math.inf)]), path


def _channel_lines(model: FabricCostModel, op: str, name: str, protocol: str,
                   groups: tuple[tuple[Hashable, ...], ...], crosses: np.ndarray
                   ) -> list[tuple[np.ndarray, ...]]:
    """:func:`~netmodel.collectives.protocol_lines.channel_lines` of ``groups`` (``crosses``:
    whether each group's steps cross the scale-out network), each on its slowest path as
    NCCL sees it, read off the first group of its size that stays on the scale-up network
    compiled alone (:meth:`~netmodel.collectives.cost.CompiledCollective.path_rate`), as
    :func:`option_ranges` reads its channels: the groups of one size share their steps.
    Nothing is compiled for an op, algorithm or protocol without lines by channel."""
    cal = model.calibration
    sizes = [len(g) for g in groups]
    if not channel_lines(op, name, protocol, sizes, crosses, cal):
        return []
    return channel_lines(op, name, protocol, sizes, crosses, cal,
                         _path_rates(model, op, name, groups, crosses))


def _path_rates(model: FabricCostModel, op: str, name: str,
                groups: tuple[tuple[Hashable, ...], ...], crosses: np.ndarray) -> np.ndarray:
    """Each group's slowest path as NCCL sees it (bytes/s; 0 for a group whose steps cross
    the scale-out network), read off the first group of its size that stays on the
    scale-up network compiled alone
    (:meth:`~netmodel.collectives.cost.CompiledCollective.path_rate`): the groups of one
    size share their steps."""
    crosses = np.broadcast_to(crosses, (len(groups),))
    first: dict[int, float] = {}
    rates = np.zeros(len(groups))
    for g, members in enumerate(groups):
        if not crosses[g]:
            if len(members) not in first:
                first[len(members)] = model.compiled(op, name, members).path_rate()
            rates[g] = first[len(members)]
    return rates


def _protocol_ranges(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...],
                     op: str, options: list[tuple], lo: np.ndarray, hi: np.ndarray) -> None:
    """:func:`option_ranges`' sizes of each option's protocol, set in ``lo`` and ``hi``."""
    cal = model.calibration
    first: dict[tuple, tuple[float, float]] = {}
    nics: dict[int, tuple[float, int] | None] = {}   # a crossing group's NICs, read once
    # the groups of each (size, crosses, NICs), in order of their first group: worked out
    # once per algorithm (its options share ``crosses``), not per option and group
    alike: dict[str, tuple[np.ndarray, list]] = {}
    for i, o in enumerate(options):
        if (op, o[0]) not in SEND_RECV:
            continue
        crosses = o[-1]
        hit_alike = alike.get(o[0])
        if hit_alike is None or hit_alike[0] is not crosses:
            where: dict[tuple, list[int]] = {}
            for g, members in enumerate(groups):
                net = bool(crosses[g]) and not cal.scaleup_everywhere
                if net and g not in nics:
                    nics[g] = group_nic(model.router, members)
                k = (len(members), bool(crosses[g]), nics.get(g) if net else None)
                where.setdefault(k, []).append(g)
            hit_alike = alike[o[0]] = (crosses, [(k, np.array(gs)) for k, gs in where.items()])
        for k, gs in hit_alike[1]:
            key = (o[0], o[1]) + k
            hit = first.get(key)
            if hit is None:
                members = groups[gs[0]]
                if k[1] and not cal.scaleup_everywhere:   # crosses the network
                    hit = p2p_size_range(o[1], op, len(members), True, (), cal, 1.0, k[2])
                else:
                    hit = model.compiled(op, o[0], members).size_range(o[1], cal)
                first[key] = hit
            lo[i, gs], hi[i, gs] = hit


def one_class(lo: np.ndarray | None, hi: np.ndarray | None) -> bool:
    """Whether every group runs each option at the same sizes (``lo``, ``hi`` of shape
    ``(O, G)``; None: at every size)."""
    return lo is None or hi is None or bool((lo == lo[:, :1]).all() and (hi == hi[:, :1]).all())


def choice_keys(op: str, names: list[str], ranged: bool) -> np.ndarray:
    """The shared choice each option belongs to: its own, except that where groups run
    an option at different sizes (``ranged``) the options of one send/recv algorithm
    (:data:`~netmodel.collectives.cost.SEND_RECV`) are one choice, each group running the
    protocol its size picks (where all run each option at the same sizes, LL and Simple
    are never both possible at one size, and each stays its own choice)."""
    keys, seen = [], {}
    for i, name in enumerate(names):
        k = name if ranged and (op, name) in SEND_RECV else i
        keys.append(seen.setdefault(k, len(seen)))
    return np.array(keys, dtype=np.intp)


def by_choice(t: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Per shared choice (:func:`choice_keys`) and group, the smallest of its options'
    times ``t`` (shape ``(O, G, ...)``)."""
    if len(keys) == 0 or keys[-1] == len(keys) - 1:   # every option its own choice
        return t
    out = np.full((int(keys.max()) + 1,) + t.shape[1:], np.inf)
    np.minimum.at(out, keys, t)
    return out


def masked_times(t: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, n) -> np.ndarray:
    """``t`` (shape ``(O, G) + n.shape``) with ``inf`` where an option does not run."""
    if lo is None or hi is None:
        return t
    shape = lo.shape + (1,) * np.ndim(n)
    return np.where((n > lo.reshape(shape)) & (n <= hi.reshape(shape)), t, np.inf)
