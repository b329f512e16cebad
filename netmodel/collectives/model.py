"""A collective cost model bound to a fabric graph: compute's protocol over a real fabric.

:class:`FabricCostModel` answers ``collective_time(op, nbytes, group_size)`` (the protocol
of :mod:`compute.comm`) for groups placed in the fabric by a placement policy, and gives
full results (:meth:`FabricCostModel.cost`: algorithm, protocol, per-step breakdown,
bottleneck links) for explicit groups.

Each (op, group, algorithm) is routed and costed once; its time is then the smallest of a
few lines in the size for every protocol (one line unless a pipeline fills), so arrays of
sizes cost a numpy multiply-add per candidate line, and ``algorithm="auto"`` takes the
fastest valid (algorithm, protocol) per size, as NCCL's tuner does. With the shipped
defaults the constants of the fabric's GPU generation apply
(:meth:`~netmodel.collectives.calibration.Calibration.resolve`). A tuner's choice, and
what NCCL's own tuner reads of a group's topology, are
:mod:`netmodel.collectives.model_tuner`'s
(:class:`~netmodel.collectives.model_tuner.TunedChoices`, a mixin of the model).

>>> import networkx as nx
>>> g = nx.Graph(name="star", spec="", gpus=4)
>>> g.add_node("sw", kind="switch", tier=0, radix=4, latency=0.0, in_network_reduction=False)
>>> for i in range(4):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", "sw", bandwidth=100e9, latency=0.0, medium="copper", lanes=8)
>>> m = FabricCostModel(g, algorithm="ring", calibration=Calibration.ideal(alpha=1e-6))
>>> float(m.collective_time("all-reduce", 4e9, 4))  # 2*3*1us + 2*3/4*4e9/1e11 s
0.060006
>>> r = m.cost("all-reduce", 4e9, 4)
>>> r.algorithm, round(r.busbw / 1e9, 3), r.bottleneck[0]
('ring', 99.99, ('sw', 'gpu0'))
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from compute.comm import check_op
from compute.errors import UserError, known
from compute.limits import check
from compute.validate import describe, is_whole, of_type
from netmodel.collectives.algorithms import (
    ALGORITHMS,
    SEND_RECV_OPS,
    NotApplicable,
    algorithms_for,
    generate,
    precheck,
    quadratic,
    transfer_count,
    unknown_algorithm,
)
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.cost import CompiledCollective, GroupCut, compile_steps
from netmodel.collectives.model_tuner import TunedChoices
from netmodel.collectives.names import NCCL_OPS, PLACEMENTS
from netmodel.collectives.placement import check_group, check_seed, place
from netmodel.collectives.results import CollectiveResult, SweepResult, bus_factor
from netmodel.collectives.route_policies import route_policies
from netmodel.collectives.route_sharing import router_for
from topologies.schema import check_graph, validate

if TYPE_CHECKING:
    import networkx as nx
    from numpy.typing import ArrayLike

    #: A valid ``(algorithm, protocol, a, b, compiled)``: ``time = a + b n``.
    Candidate = tuple[str, str, float, float, CompiledCollective]

__all__ = ["MAX_SIZES", "MAX_TRANSFERS", "FabricCostModel", "candidate_lines", "check_size_count",
           "check_sizes"]

#: Default of :class:`FabricCostModel`'s ``max_transfers``: the most point-to-point transfers
#: one algorithm may route for one group (everyone-to-everyone over 16,384 GPUs is 268
#: million; 20 million take a few GB to route).
MAX_TRANSFERS = 20_000_000
#: What a named algorithm of :class:`FabricCostModel` governs (its ``scope``).
SCOPES = ("every-op", "collectives")
#: Algorithms routing more transfers than this are costed only where a lower bound says
#: they might be the fastest (see :meth:`FabricCostModel.choices`).
COSTLY_TRANSFERS = 1 << 16
#: The most message sizes one call costs at once (``NETMODEL_MAX_MESSAGE_SIZES``
#: overrides; :func:`check_size_count`). Measured with tracemalloc, 10**6 sizes on a
#: k=8 fat tree and a 4-server B200 rail-optimized fabric: ``collective_time`` peaks at
#: 24-33 bytes a size (all-reduce, all-to-all, all-gather, send-recv), ``sweep`` at 8
#: bytes a size per candidate (algorithm x protocol) and a size's names: 48-352 (an
#: all-reduce's candidates), so at most about 1.4 GB at this limit; 10**8 sizes raised
#: MemoryError. A search's grid asks at most
#: ``NETMODEL_MAX_SEARCH_CONFIGURATIONS`` (2,000,000) sizes a call.
MAX_SIZES = 4_000_000


def check_size_count(count: int, param: str = "nbytes") -> None:
    """Refuse ``count`` message sizes given as ``param`` above :data:`MAX_SIZES` (or
    ``NETMODEL_MAX_MESSAGE_SIZES``), before any is costed. Up to 1,000 sizes are never
    refused (the setting is not read on the hot path of a search's few sizes).

    >>> check_size_count(10 ** 8, "sizes")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: sizes: about 100,000,000 message sizes, over the limit of 4,000,000; cost fewer sizes a call (about 350 bytes each while costed), or raise NETMODEL_MAX_MESSAGE_SIZES
    """
    if count > 1000:   # the hot path (a search's one size, a grid's few) reads no setting
        check(param, "message sizes", count, MAX_SIZES, "NETMODEL_MAX_MESSAGE_SIZES",
              "cost fewer sizes a call (about 350 bytes each while costed)")


def check_sizes(nbytes: ArrayLike, *, bounded: bool = False, param: str = "nbytes"
                ) -> np.ndarray:
    """``nbytes`` as a float array, refusing zero, negative, NaN or infinite sizes and what is
    not a number of bytes (compute.comm.check_nbytes: bools, strings, complex, dates), and,
    ``bounded``, sizes above 1 PiB (:data:`compute.units.MAX_MESSAGE_BYTES`: more than any
    GPU's memory holds). The entry points that cost sizes a user gives (:meth:`FabricCostModel.cost`,
    ``sweep``, ``curves``, :func:`netmodel.api.collective_time`, ``cost_table``,
    :func:`~netmodel.collectives.concurrent.concurrent_cost`) bound them; the collective-cost
    protocol that compute calls (:meth:`FabricCostModel.collective_time`,
    ``moe_all_to_all_time``, and
    :func:`~netmodel.collectives.concurrent.concurrent_own_makespan`, which a scenario of
    instances = all charges a search with) does not: a search's grid costs every batch at
    once, including batches that fit in no GPU's memory (left out afterwards), whose messages
    may be larger. Every one refuses more than :data:`MAX_SIZES` sizes (``param``: the
    argument's name, said in the message; :func:`check_size_count`)."""
    from compute.comm import check_nbytes

    if isinstance(nbytes, np.ndarray):   # counted before any copy
        check_size_count(nbytes.size, param)
    elif isinstance(nbytes, list | tuple):
        check_size_count(len(nbytes), param)
    n = np.asarray(check_nbytes(nbytes, positive=True), dtype=float)
    check_size_count(n.size, param)
    if bounded:
        from compute.units import check_message_bytes

        check_message_bytes(n)
    return n


def candidate_lines(model, cands: list[Candidate]) -> tuple[np.ndarray, np.ndarray,
                                                             np.ndarray | None,
                                                             np.ndarray | None]:
    """``(a, b, lo, hi)`` of ``model``'s candidates ``cands`` for
    :func:`~netmodel.collectives.cost.lines_time`: each one's ``time = a + b n`` at the sizes
    ``lo < n <= hi`` it runs at (:meth:`FabricCostModel.candidate_ranges`; ``lo`` and
    ``hi`` None for a model without size ranges: every line at every size)."""
    ranges = getattr(model, "candidate_ranges", None)
    return (np.array([c[2] for c in cands]), np.array([c[3] for c in cands]),
            *(ranges(cands) if ranges is not None else (None, None)))


class FabricCostModel(TunedChoices):
    """Collective costs on one fabric graph (implements compute's collective-cost protocol).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric obeying :mod:`topologies.schema` (validated here; connectivity is not
        required, so degraded fabrics are accepted).
    placement : str
        How :meth:`collective_time` places a group of a given size: one of
        :data:`~netmodel.collectives.names.PLACEMENTS`.
    algorithm : str
        ``"auto"`` (the fastest valid algorithm and protocol per size) or an algorithm name
        from :data:`~netmodel.collectives.algorithms.ALGORITHMS`.
    algorithms : tuple of str, a comma list or "nccl", optional
        The candidates ``auto`` chooses from (default: all; ``"ring,tree"`` as the command
        line's ``--algorithms`` takes it). ``"nccl"`` restricts them,
        op by op, to those NCCL has for the op
        (:data:`~netmodel.collectives.names.NCCL_OPS`); use it to compare with
        nccl-tests. Kept as the string ``"nccl"`` in :attr:`algorithms`.
    calibration : Calibration, optional
        Model parameters (default: the shipped, sourced defaults, resolved for the
        generation of the fabric's GPUs; a calibration without generations is used as
        given).
    seed : int
        Seed of the ``random`` placement.
    ring_order : {"given", "greedy"}
        Ring order: the group's order, or re-embedded greedily (each next GPU the nearest
        in hops), useful on degraded fabrics.
    max_transfers : int
        The most point-to-point transfers one algorithm may route for one group (the work
        is counted before anything is built); beyond it, an algorithm that may be the
        fastest raises :class:`~compute.errors.UserError` saying so.
    scope : {"every-op", "collectives"}
        What a named ``algorithm`` governs: every op (the default: an op it does not
        implement is refused), or, as NCCL_ALGO does, NCCL's collectives only: all-to-all
        and send-recv (:data:`~netmodel.collectives.algorithms.SEND_RECV_OPS`, groups of
        sends and receives in NCCL) then choose as under ``auto`` unless the algorithm
        implements them. A scenario's ``[collective] algorithm`` has this scope.
    tuner : str, TunerPlugin or NcclTuner, optional
        A tuner that replaces the model's choice under ``auto``, by name (one of
        :func:`~netmodel.collectives.tuner_plugin.tuner_names`; ``"none"`` or None, the
        default: the fastest candidate, standing for NCCL's own tuner; ``"nccl"``: NCCL's
        own tuner emulated, :class:`~netmodel.collectives.tuner_plugin.NcclTuner`, which
        reads the group's :meth:`nccl_graph`). Where the tuner chooses an
        (algorithm, protocol) the model can run at a size, the time is that pair's (its
        fastest line); elsewhere ``auto``'s (:mod:`netmodel.collectives.tuner_plugin`). A
        tuner beside a named ``algorithm`` is refused (it would have nothing to choose:
        :func:`~netmodel.collectives.tuner_plugin.tuner_refusal`); an algorithm named to
        one call (:meth:`cost`'s ``algorithm``) is costed as named, untuned.
    validated : bool
        Whether ``graph`` was already checked against :mod:`topologies.schema` (as
        :func:`topologies.build` and :func:`topologies.read_graph` do): skip checking it
        again (a multigraph, which the schema refuses, is refused either way: the model
        reads one edge between two nodes). Default False: check it.
    """

    def __init__(self, graph: nx.Graph, placement: str = "contiguous", algorithm: str = "auto",
                 *, algorithms: Literal["nccl"] | Iterable[str] | None = None,
                 calibration: Calibration | None = None, seed: int = 0,
                 ring_order: str = "given", max_transfers: int = MAX_TRANSFERS,
                 scope: str = "every-op", tuner=None, validated: bool = False) -> None:
        from netmodel.collectives.tuner_plugin import get_tuner, tuner_refusal

        if not validated:
            validate(graph, check_connected=False)
        elif check_graph(graph).is_multigraph():   # validate's refusal, with validated=True
            # parallel edges: the model reads one edge's attributes per pair (KeyError before)
            raise UserError(f"graph must be a simple networkx Graph or DiGraph (one edge "
                            f"between two nodes, as topologies.build and read_graph make), got "
                            f"{type(graph).__name__}")
        # a string first: an array compared with one raised numpy's ambiguous-truth ValueError
        if not isinstance(placement, str) or placement not in PLACEMENTS:
            raise UserError(f"unknown placement {describe(placement)}; known: {known(PLACEMENTS)}")
        if not isinstance(algorithm, str) or (algorithm != "auto" and algorithm not in ALGORITHMS):
            raise unknown_algorithm(algorithm, ("auto", *ALGORITHMS))
        if isinstance(algorithms, str) and algorithms != "nccl":
            # one name or a comma list, as the command line's --algorithms takes them (not
            # the string's characters: 'two-shot' was "unknown algorithm 't'")
            algorithms = tuple(a.strip() for a in algorithms.split(","))
        if not (isinstance(algorithms, str) and algorithms == "nccl"):
            if algorithms is None:
                algorithms = tuple(ALGORITHMS)
            elif isinstance(algorithms, Iterable) and not isinstance(algorithms, bytes) and \
                    not (isinstance(algorithms, np.ndarray) and algorithms.ndim == 0):
                algorithms = tuple(algorithms)
            else:
                raise UserError(f"algorithms must be 'nccl', a comma list or a sequence of "
                                f"algorithm names, got {describe(algorithms)}")
            if not algorithms:   # not 'no algorithm can run ...' at the first cost
                raise UserError(f"algorithms is empty; give 'nccl' or one or more of "
                                f"{known(ALGORITHMS)} (or None for all)")
            for a in algorithms:
                if not isinstance(a, str) or a not in ALGORITHMS:
                    raise unknown_algorithm(a)
        if not isinstance(scope, str) or scope not in SCOPES:
            raise UserError(f"scope must be one of {known(SCOPES)}, got {describe(scope)}")
        if not isinstance(ring_order, str) or ring_order not in ("given", "greedy"):
            raise UserError(f"ring_order must be 'given' or 'greedy', got {describe(ring_order)}")
        self.graph = graph
        self.placement = placement
        self.algorithm = algorithm
        self.algorithms = algorithms
        self.scope = scope
        #: the tuner choosing under auto (None: auto's own, the fastest of the model's costs)
        self.tuner = get_tuner(tuner)
        refusal = tuner_refusal(None if self.tuner is None else self.tuner.label, algorithm)
        if refusal is not None:
            raise UserError(f"{refusal}; give algorithm='auto' or tuner='none'")
        # a name ('default') or a number raised AttributeError ('str' object has no
        # attribute 'pxn') at the router; 0 or '' ran the defaults silently
        self._calibration = of_type("calibration", calibration, Calibration,
                                    "Calibration.ideal(alpha=1e-6)") or default_calibration()
        self.seed = check_seed(seed)
        self.ring_order = ring_order
        if not is_whole(max_transfers) or max_transfers < 1:
            raise UserError(f"max_transfers must be a whole number >= 1, got {describe(max_transfers)}")
        self.max_transfers = int(max_transfers)
        self.router = router_for(graph, pxn=self._calibration.pxn)
        self.gpus = len(self.router.gpu_list)
        self.calibration = self._calibration.resolve(graph, self.router.gpu_list)
        self._lines: dict = {}
        self._groups: dict = {}
        self._cabling: bool | None = None   # an OCS's physical cabling (_refuse_cabling)
        self._gpu_set: frozenset | None = None   # the GPU nodes, for groups()
        self._rate_out: np.ndarray | None = None
        self._compiled: dict = {}
        self._step_cache: dict = {}
        self._tuner_seen: dict = {}   # tuner_pair's answers
        #: Groups prepared for concurrent costing, with the loads of their steps, kept
        #: for the next costing of the same groups (another op; see
        #: :func:`netmodel.collectives.concurrent.concurrent_linear`).
        self._concurrent: dict = {}

    def __repr__(self) -> str:
        return (f"FabricCostModel({self.graph.graph.get('name', 'fabric')!r}, "
                f"placement={self.placement!r}, algorithm={self.algorithm!r}"
                + (f", tuner={self.tuner.label!r})" if self.tuner is not None else ")"))

    # ----------------------------------------------------------------- groups
    def group(self, group: int | Iterable[Hashable]) -> tuple[Hashable, ...]:
        """The group for an int size (placed by the policy) or an explicit node list."""
        if is_whole(group):
            key = int(group)
            hit = self._groups.get(key)
            if hit is None:
                hit = place(self.graph, key, self.placement, seed=self.seed,
                            gpus=self.router.gpu_list)
                self._groups[key] = hit
            return hit
        if isinstance(group, str) or not hasattr(group, "__iter__") or \
                isinstance(group, np.ndarray) and group.ndim == 0:   # __iter__ but no items
            raise UserError(f"group must be a size (int) or a list of GPU nodes, got {describe(group)}")
        return check_group(self.graph, group)

    def groups(self, groups: Iterable[Iterable[Hashable]]) -> tuple[tuple[Hashable, ...], ...]:
        """Many explicit groups, each as :meth:`group` makes it. Tuples of GPUs, none in
        two groups or twice in one (what a placement's partition gives: 8,192 groups of 2
        on a 16,384-GPU fabric) are checked all at once; anything else group by group, with
        :meth:`group`'s errors."""
        groups = tuple(groups)
        if groups and all(type(g) is tuple and g for g in groups):
            if self._gpu_set is None:
                self._gpu_set = frozenset(self.router.gpu_list)
            flat = [x for g in groups for x in g]
            try:
                if len(set(flat)) == len(flat) and self._gpu_set.issuperset(flat):
                    return groups
            except TypeError:   # an unhashable member: group() names it
                pass
        return tuple(self.group(g) for g in groups)

    def _refuse_cabling(self) -> None:
        """Refuse, where a group is cut apart, an optical switch's physical cabling (every
        edge a GPU-OCS fibre, no circuit set: :func:`topologies.optical.ocs` without
        ``logical``), over which nothing routes: :meth:`collective_time` and :meth:`sweep`
        return bare seconds, where every operation's ``inf`` said nothing of why.
        :meth:`cost` keeps its cut result (``connected`` False and the pair cut apart,
        which ``netmodel collective`` prints with the same advice), and a fabric whose
        circuits were set and then cut (failed circuits, GPUs or OCS:
        :mod:`~netmodel.collectives.degraded`) keeps no fibre and stays ``inf`` where cut."""
        if self._cabling is None:
            node = self.graph.nodes
            self._cabling = self.graph.number_of_edges() > 0 and all(
                "ocs" in (node[u].get("kind"), node[v].get("kind")) for u, v in self.graph.edges)
        if self._cabling:
            name = self.graph.graph.get("spec") or self.graph.graph.get("name", "fabric")
            raise UserError(f"fabric {name!r} is an OCS's physical cabling (GPU-OCS fibres, no "
                            f"circuits), over which nothing routes: set its circuits with "
                            f"logical= (e.g. 'ocs:gpus=8,ports=2,logical=ring', or "
                            f"logical='torus:AxB', 'full-mesh', '0-1;1-2')")

    def _ordered(self, group: tuple[Hashable, ...]) -> tuple[Hashable, ...]:
        if self.ring_order == "given" or len(group) <= 2:
            return group
        left = list(group[1:])
        order = [group[0]]
        while left:
            here = order[-1]
            best = min(left, key=lambda g: (self._hops(here, g), 0))
            left.remove(best)
            order.append(best)
        return tuple(order)

    def _hops(self, a: Hashable, b: Hashable) -> float:
        r = self.router.route(a, b)
        return math.inf if r is None else r.hops

    # ----------------------------------------------------------------- compilation
    def compiled(self, op: str, algorithm: str, group: tuple[Hashable, ...]
                 ) -> CompiledCollective:
        """Steps of ``algorithm`` for ``op`` on ``group``, costed (cached).

        Raises NotApplicable or GroupCut.
        """
        key = (op, algorithm, group)
        hit = self._compiled.get(key)
        if hit is None:
            try:
                precheck(algorithm, op, group, self.graph)
            except NotApplicable as exc:
                self._compiled[key] = str(exc)
                raise NotApplicable(str(exc)) from None
            self._check_work(op, algorithm, len(group))
            try:
                steps = generate(algorithm, op, self._ordered(group), self.graph)
                hit = compile_steps(self.router, op, algorithm, group, steps, self.calibration,
                                    self._step_cache)
            except NotApplicable as exc:
                # the reason, not the exception: a cached exception raised again keeps
                # every raise's frames (and the callers' arrays) in its traceback
                hit = str(exc)
            self._compiled[key] = hit
        if isinstance(hit, str):
            raise NotApplicable(hit)
        return hit

    def compiled_variants(self, op: str, algorithm: str, group: tuple[Hashable, ...]
                          ) -> list[CompiledCollective]:
        """:meth:`compiled`, then ``algorithm`` compiled under each other routing policy
        of the fabric that moves any of its transfers
        (:func:`~netmodel.collectives.route_policies.route_policies`: where a GPU pair has
        both a cable and a wider path through a switch; one item elsewhere, and for NCCL's
        send/recv, :data:`~netmodel.collectives.algorithms.SEND_RECV_OPS`, which gives a
        peer one path). The fastest line of them all is the algorithm's time, so no policy
        makes a collective slower.

        Raises NotApplicable or GroupCut.
        """
        comp = self.compiled(op, algorithm, group)
        # NCCL's send/recv (all-to-all, send-recv) gives a peer one path
        policies = () if op in SEND_RECV_OPS else route_policies(self.router)
        hit = self._compiled.get((op, algorithm, group, "routings")) if policies else [comp]
        if hit is None:
            steps = generate(algorithm, op, self._ordered(group), self.graph)
            hit = self._compiled[op, algorithm, group, "routings"] = [comp] + [
                compile_steps(self.router, op, algorithm, group, steps, self.calibration,
                              self._step_cache, p) for p in policies
                if any(p.moves(self.router, s.transfers) for s in steps)]
        return hit

    def _check_work(self, op: str, algorithm: str, p: int) -> None:
        """UserError when a :func:`quadratic` algorithm would route more than
        ``max_transfers`` transfers (the others route ``O(p log p)``)."""
        count = transfer_count(algorithm, op, p)
        if quadratic(algorithm, op) and count > self.max_transfers:
            raise UserError(
                f"{algorithm} {op} on {p} GPUs routes {count:,} point-to-point transfers, "
                f"more than the limit of {self.max_transfers:,} (max_transfers): leave it out "
                f"(algorithms=...), ask only for sizes where another algorithm is faster, "
                f"or raise the limit")

    def _lower_bound(self, op: str, algorithm: str, group: tuple[Hashable, ...]
                     ) -> list[tuple[str, float, float]] | None:
        """``[(protocol, a, b)]`` with ``a + b n`` no larger than ``algorithm``'s time under
        each protocol at every size, computed without routing it, for the algorithms whose
        transfers grow as ``p**2`` (every GPU sends to every other); None for the others.

        Every transfer leaves its source through the source's own links, so a step in which
        each GPU sends ``e`` bytes (per byte of ``n``) lasts at least ``e`` over the sum of
        a GPU's achievable link rates (the smallest such sum in the group); latencies are
        at least the protocol's per-step latency, route latency at least 0.
        """
        p = len(group)
        if not quadratic(algorithm, op):
            return None
        if algorithm == "direct":
            per = (p - 1) * (1.0 if op == "all-reduce" else 1 / p)
            steps = [(1, per, {"all-reduce": p - 1.0, "reduce-scatter": (p - 1) / p}.get(op, 0.0))]
        elif algorithm == "two-shot":  # direct reduce-scatter, then direct all-gather
            steps = [(1, (p - 1) / p, (p - 1) / p), (1, (p - 1) / p, 0.0)]
        else:  # pairwise all-to-all: p - 1 shifts of 1/p
            steps = [(p - 1, 1 / p, 0.0)]
        r, cal = self.router, self.calibration
        if self._rate_out is None:
            eff = np.where(r.scaleout, cal.scaleout_efficiency, cal.scaleup_efficiency)
            self._rate_out = np.bincount(r._src, r.bandwidth * eff, minlength=r._n)
        rate = self._rate_out[[r._nid[g] for g in group]].min()
        gamma = cal.reduction_rate
        out = []
        for proto in cal.protocols:
            a = proto.base_latency
            b = 0.0
            lat = min(proto.step_latency(True), proto.step_latency(False))
            for repeat, egress, reduce in steps:
                a += repeat * lat
                b += repeat * (egress / rate) / proto.bandwidth_factor
                if gamma > 0:
                    b += repeat * reduce / gamma
            out.append((proto.name, a, b))
        return out

    def choices(self, op: str, group: tuple[Hashable, ...], nbytes: ArrayLike,
                algorithm: str | None = None) -> list[Candidate]:
        """The candidates (as :meth:`candidates`) that may be the fastest at the sizes
        ``nbytes``: an algorithm that routes more than 65,536 transfers (everyone to
        everyone over more than 256 GPUs), or more than ``max_transfers``, is left out,
        without being built, where a lower bound on its time exceeds another candidate's
        time at every one of these sizes. The
        fastest candidate at each size, and its time, are those of :meth:`candidates`."""
        names = self.algorithm_names(op, algorithm)
        p = len(group)
        limit = min(COSTLY_TRANSFERS, self.max_transfers)
        costly = {a for a in names if quadratic(a, op) and transfer_count(a, op, p) > limit
                  and (op, a, group) not in self._compiled}
        if not costly:
            return self.candidates(op, group, algorithm)
        rest = [a for a in names if a not in costly]
        cands = self._candidates(op, group, rest, allow_none=True)
        n = np.atleast_1d(np.asarray(nbytes, dtype=float))
        best = self.fastest(cands, n) if cands else None
        keep = set(rest)
        for name in costly:
            lb = self._lower_bound(op, name, group)
            low = np.min([a + b * n for _, a, b in lb], axis=0)
            if best is None or not np.all(low > best * (1 + 1e-9)):
                keep.add(name)
        return self.candidates(op, group, [a for a in names if a in keep])

    def algorithm_names(self, op: str, algorithm: str | None = None) -> list[str]:
        """The algorithms to try for ``op``: the model's candidates that implement it under
        ``auto``, else the one named (which must exist and implement ``op``; the model's
        own, with ``scope="collectives"``, only for an op outside
        :data:`~netmodel.collectives.algorithms.SEND_RECV_OPS` or one it implements)."""
        check_op(op)
        if algorithm is not None and type(algorithm) is not str:   # a numpy array: no truth value
            raise unknown_algorithm(algorithm, ("auto", *ALGORITHMS))
        if algorithm is None:
            algorithm = self.algorithm
            if (self.scope == "collectives" and op in SEND_RECV_OPS and algorithm != "auto"
                    and op not in ALGORITHMS[algorithm]):
                algorithm = "auto"   # NCCL_ALGO leaves sends and receives alone
        if algorithm == "auto":
            if isinstance(self.algorithms, str):  # "nccl": NCCL's own for this op
                return list(NCCL_OPS[op])
            return [a for a in self.algorithms if op in ALGORITHMS[a]]
        if algorithm not in ALGORITHMS:
            raise unknown_algorithm(algorithm, ("auto", *ALGORITHMS))
        if op not in ALGORITHMS[algorithm]:
            raise UserError(f"algorithm {algorithm!r} does not implement {op!r}; "
                            f"algorithms for {op!r}: {known(algorithms_for(op))}")
        return [algorithm]

    def _one_gpu(self, op: str, algorithm: str | None = None) -> None:
        """Check ``algorithm`` (the model's if None) against ``op`` for a group of one GPU,
        which communicates nothing but gets the same refusals as a larger group: an
        algorithm that does not implement ``op``, or no candidate that does."""
        if not self.algorithm_names(op, algorithm):
            raise UserError(f"no algorithm can run {op} (none of the candidates implements "
                            f"it); algorithms for {op!r}: {known(algorithms_for(op))}")

    def candidates(self, op: str, group: tuple[Hashable, ...],
                   algorithm: str | list[str] | None = None) -> list[Candidate]:
        """Valid ``(algorithm, protocol, a, b, compiled)`` with ``time = a + b n``; an
        (algorithm, protocol) whose pipeline fills appears once per size range (its time is
        the smallest of its lines, see :meth:`CompiledCollective.lines
        <netmodel.collectives.cost.CompiledCollective.lines>`), so the time at any size is
        the smallest ``a + b n`` of all that run at that size (every candidate runs at
        every size, except NCCL's send/recv, which picks LL or Simple by size:
        :meth:`candidate_times`, :meth:`fastest`).

        ``algorithm``: None or ``"auto"`` (the model's candidates), a name, or a list of
        names. An explicit algorithm that cannot run raises UserError; under ``auto`` such
        algorithms are skipped.
        """
        if isinstance(algorithm, list):
            names = algorithm
        else:
            names = self.algorithm_names(op, algorithm)
        return self._candidates(op, group, names)

    def candidate_parts(self, op: str, group: tuple[Hashable, ...],
                        algorithm: str | list[str] | None = None) -> tuple[np.ndarray, ...]:
        """The candidates of :meth:`candidates` (same order) split by what bounds them:
        ``(a_fixed, a_fill, b_link, b_reduce, b_least)`` arrays with ``a = a_fixed +
        a_fill`` and ``b = max(b_link, b_least) + b_reduce``. ``a_fill`` (pipeline fill) and
        ``b_link`` are bound by link bandwidth (they scale as ``1/k`` when every link's
        bandwidth is multiplied by ``k``), ``a_fixed`` by latency, ``b_reduce`` by the GPUs'
        reduction rate (0 unless the calibration sets one), ``b_least`` by NCCL's tree
        channel cap (0 but on a tree across domains:
        :attr:`~netmodel.collectives.calibration.Calibration.tree_channel_bandwidth`) or,
        under LL, its LL cap of a ring or tree across nodes
        (:func:`~netmodel.collectives.pipeline_fill.ll_cap_rate`), which faster or slower
        links leave as it is."""
        names = algorithm if isinstance(algorithm, list) else \
            self.algorithm_names(op, algorithm)
        cal = self.calibration
        gamma = cal.reduction_rate
        rows = []
        for name in names:
            try:
                comps = self.compiled_variants(op, name, group)
            except NotApplicable:
                continue
            for comp in comps:
                red = sum(s.repeat * s.reduce for s in comp.steps if s.member) / gamma \
                    if gamma > 0 else 0.0
                for proto in comp.protocols(cal):
                    for a, _, fill, b_link, b_least in comp.line_parts(proto, cal):
                        rows.append((a - fill, fill, b_link, red, b_least))
        if not rows:
            self._candidates(op, group, names)  # raises the one-line error
        return tuple(np.array(col, dtype=float) for col in zip(*rows, strict=True))

    def _candidates(self, op: str, group: tuple[Hashable, ...], names: Iterable[str],
                    allow_none: bool = False) -> list[Candidate]:
        cal = self.calibration
        out, why = [], []
        for name in names:
            try:
                comps = self.compiled_variants(op, name, group)
            except NotApplicable as exc:
                why.append(f"{name}: {exc}")
                continue
            for comp in comps:
                key = (op, name, group) if comp.routing == "shortest" else \
                    (op, name, group, comp.routing)
                lines = self._lines.get(key)
                if lines is None or lines[0] is not comp:
                    lines = self._lines[key] = (comp, [(proto.name, comp.lines(proto, cal))
                                                       for proto in comp.protocols(cal)])
                for proto_name, ls in lines[1]:
                    for a, b in ls:
                        out.append((name, proto_name, a, b, comp))
        if not out and not allow_none:
            raise UserError(f"no algorithm can run {op} on this group of {len(group)} GPUs "
                            f"({'; '.join(why) or 'none implements it'})")
        return out

    # ----------------------------------------------------------------- the protocol
    def collective_time(self, op: str, nbytes: float | np.ndarray, group_size: int
                        ) -> np.ndarray:
        """Seconds for ``op`` of ``nbytes`` (scalar or array) among ``group_size`` GPUs
        placed by the model's placement policy; ``inf`` where the group is cut apart."""
        check_op(op)
        n = check_sizes(nbytes)   # unbounded: a grid's sizes (check_sizes)
        group = self.group(group_size)
        if len(group) == 1:
            self._one_gpu(op)
            return np.zeros_like(n)
        try:
            cands = self.choices(op, group, n)
        except GroupCut:
            self._refuse_cabling()
            return np.full_like(n, np.inf)
        if self.tuned():
            flat = np.asarray(n, dtype=float).reshape(-1)
            check_size_count(flat.size, "n")
            return self._best_index(cands, flat, op, group)[1].reshape(np.shape(n))
        return self.fastest(cands, n)

    def fastest(self, cands: list[Candidate], n: np.ndarray) -> np.ndarray:
        """The smallest time of ``cands`` at each size ``n`` (an array of any shape): each
        candidate's ``a + b n`` where it runs (:meth:`candidate_times`); at most
        :data:`MAX_SIZES` sizes."""
        check_size_count(np.size(n), "n")
        best = None
        for t in self.candidate_times(cands, n):
            best = t if best is None else np.minimum(best, t)
        return best

    def candidate_ranges(self, cands: list[Candidate]) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)``: each candidate runs at the sizes ``lo < n <= hi`` (``(0, inf)``
        unless NCCL's send/recv picks its protocol by size there:
        :meth:`CompiledCollective.size_range
        <netmodel.collectives.cost.CompiledCollective.size_range>`), arrays in the order of
        ``cands``, for :func:`~netmodel.collectives.cost.lines_time`."""
        cal = self.calibration
        ranges = [c[4].size_range(c[1], cal, b=c[3]) for c in cands]
        return (np.array([r[0] for r in ranges], dtype=float),
                np.array([r[1] for r in ranges], dtype=float))

    def candidate_times(self, cands: list[Candidate], n: np.ndarray) -> Iterator[np.ndarray]:
        """Each candidate's time at the sizes ``n``: ``a + b n`` where it runs, ``inf`` at
        sizes its protocol does not run at (NCCL's send/recv picks LL or Simple by size:
        :meth:`CompiledCollective.size_range
        <netmodel.collectives.cost.CompiledCollective.size_range>`); at most
        :data:`MAX_SIZES` sizes."""
        check_size_count(np.size(n), "n")
        cal = self.calibration
        for _, proto, a, b, comp in cands:
            t = a + b * n
            lo, hi = comp.size_range(proto, cal, b=b)
            if lo > 0 or hi < math.inf:
                t = np.where((n > lo) & (n <= hi), t, np.inf)
            yield t

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """Seconds for an MoE all-to-all of ``nbytes`` a GPU (``copies`` copies of each
        token) among ``group_size`` GPUs placed by the policy, crossing the network once a
        server (DeepEP's normal kernels, :mod:`netmodel.collectives.moe`; ``reach(units)``:
        the distinct units one token's experts sit on). compute asks it for its prefill
        dispatch and combine (:func:`compute.moe_routing.moe_comm`), as it asks a
        scenario's (:meth:`netmodel.study.scenario_collectives.ScenarioCollectives.
        moe_all_to_all_time`): both are :func:`~netmodel.collectives.moe.
        once_a_server_time`, the faster of that way and every copy's
        :meth:`collective_time`, every copy's alone where the group's scale-up domains
        differ in size or each GPU is its own; ``inf`` where the group is cut apart."""
        from netmodel.collectives.moe import once_a_server_time

        n = check_sizes(nbytes)   # unbounded: a grid's sizes (check_sizes)
        group = self.group(group_size)

        def every() -> np.ndarray:
            return self.collective_time("all-to-all", n, group_size)

        if len(group) == 1:
            return every()
        try:
            return once_a_server_time(self, group, n, copies, reach, every)
        except GroupCut:        # every copy's, inf where cut (sizes are > 0 here)
            return every()

    # ----------------------------------------------------------------- results
    def _best_index(self, cands: list[Candidate], n: np.ndarray, op: str | None = None,
                    group: tuple[Hashable, ...] | None = None, algorithm: str | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
        times = np.array(list(self.candidate_times(cands, np.atleast_1d(n))))
        return self.chosen(times, cands, n, op, group, algorithm)

    def chosen(self, times: np.ndarray, pairs, n: np.ndarray, op: str | None = None,
               group: tuple[Hashable, ...] | None = None, algorithm: str | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(index, time)`` per size of ``n`` (1-d): the row of ``times`` (``(lines,
        sizes)``, each line's time at each size, ``inf`` where it does not run) chosen,
        the smallest, or where the model's tuner chooses (``op`` and ``group`` given,
        :meth:`tuned`) the fastest row of its (algorithm, protocol); ``pairs``: each row's
        ``(algorithm, protocol, ...)``. Every costing of a communicator chooses so: this
        model's, and lines re-scored elsewhere (the crossovers' links scaled)."""
        idx = np.argmin(times, axis=0)
        if op is not None and self.tuned(algorithm):
            idx = idx.copy()
            for j, pick in self._tuner_picks(op, group, pairs, times, np.atleast_1d(n)):
                idx[j] = pick
        return idx, times[idx, np.arange(times.shape[1])]

    def tuner_choice(self, op: str, nbytes: float, group: int | Iterable[Hashable]
                     ) -> tuple[str, str] | None:
        """The model's tuner's ``(algorithm, protocol)`` for ``op`` of ``nbytes`` on
        ``group``, where it chooses one the model can run; None where it leaves the choice
        to auto (or no tuner is set)."""
        # checked as cost() checks them: -5 bytes got the plugin's tree/LL128, 'x' a ValueError
        check_op(op)
        n = check_sizes(nbytes, bounded=True)
        if n.size != 1:
            raise UserError(f"tuner_choice takes one message size, got {n.size}")
        if self.tuner is None:
            return None
        n = n.reshape(1)
        group = self.group(group)
        try:
            cands = self.choices(op, group, n, "auto")
        except GroupCut:
            return None
        times = np.array(list(self.candidate_times(cands, n)))
        for _, i in self._tuner_picks(op, group, cands, times, n):
            return cands[i][0], cands[i][1]
        return None

    def cost(self, op: str, nbytes: float, group: int | Iterable[Hashable],
             algorithm: str | None = None) -> CollectiveResult:
        """Full result for one size: time, algbw, busbw, algorithm, protocol, per-step
        breakdown and bottleneck links. ``group``: a size (placed) or explicit nodes."""
        check_op(op)
        n = check_sizes(nbytes, bounded=True)
        if n.size != 1:
            raise UserError(f"cost takes one message size, got {n.size} (sweep costs several)")
        n = float(n.reshape(()))
        group = self.group(group)
        if len(group) == 1:
            self._one_gpu(op, algorithm)
            return CollectiveResult(op, group, n, 0.0, math.inf, math.inf, "none", "none",
                                    0.0, (), ())
        try:
            cands = self.choices(op, group, np.array([n]), algorithm)
        except GroupCut as exc:
            return CollectiveResult(op, group, n, math.inf, 0.0, 0.0, "none", "none", 0.0,
                                    (), (), connected=False, cut=exc.pair)
        idx, t = self._best_index(cands, np.array([n]), op, group, algorithm)
        name, proto_name, _, _, comp = cands[int(idx[0])]
        proto = self.calibration.in_network if comp.in_network else \
            self.calibration.protocol(proto_name)
        steps = comp.timings(proto, self.calibration, n)
        worst = max(s.time for s in steps)
        costliest = [s for s in steps if s.time >= worst * (1 - 1e-9)]
        # where NCCL's channel cap bounds the line (its phases' sum over the links' bound,
        # a pipeline's other phases overlapping them), the capped phases, not the longest
        _, _, _, b_link, b_least = min(comp.line_parts(proto, self.calibration),
                                       key=lambda x: x[0] + x[1] * n)
        capped = [s for s in steps if s.tree_cap]
        line_cap = capped and b_least > b_link
        if line_cap:
            costliest = capped
        bneck = tuple(dict.fromkeys(s.bottleneck for s in costliest if s.bottleneck))
        cap = next((s.tree_cap for s in costliest if s.tree_cap), None)
        if line_cap:   # the whole collective's slowdown: its steady time over the links'
            cap = replace(cap, slowdown=b_least / b_link if b_link > 0 else math.inf)
        # the in-switch ceiling: where it sets a costliest step's rate, or its pipeline's
        top = None if cap else \
            next((s.in_switch_ceiling for s in costliest if s.in_switch_ceiling), None)
        if top is not None:
            bneck = ()
        time = float(t[0])
        algbw = n / time
        return CollectiveResult(op, group, n, time, algbw, algbw * bus_factor(op, len(group)),
                                name, proto_name, proto.base_latency, steps, bneck,
                                tree_cap=cap, in_switch_ceiling=top, routing=comp.routing)

    def sweep(self, op: str, sizes: ArrayLike, group: int | Iterable[Hashable],
              algorithm: str | None = None) -> SweepResult:
        """Costs over an array of sizes (the fastest candidate per size)."""
        check_op(op)
        n = np.atleast_1d(check_sizes(sizes, bounded=True, param="sizes")).astype(float)
        group = self.group(group)
        if len(group) == 1:
            self._one_gpu(op, algorithm)
            return SweepResult(op, group, n, np.zeros_like(n), ("none",) * len(n),
                               ("none",) * len(n))
        try:
            cands = self.choices(op, group, n, algorithm)
        except GroupCut:
            self._refuse_cabling()
            return SweepResult(op, group, n, np.full_like(n, np.inf), ("none",) * len(n),
                               ("none",) * len(n))
        idx, t = self._best_index(cands, n, op, group, algorithm)
        return SweepResult(op, group, n, t, tuple(cands[i][0] for i in idx),
                           tuple(cands[i][1] for i in idx))

    def curves(self, op: str, sizes: ArrayLike, group: int | Iterable[Hashable]
               ) -> dict[str, np.ndarray]:
        """Seconds per algorithm (its best protocol per size) over ``sizes``, for every
        algorithm that can run (and routes at most ``max_transfers`` transfers):
        ``{algorithm: ndarray}``."""
        check_op(op)
        n = np.atleast_1d(check_sizes(sizes, bounded=True, param="sizes")).astype(float)
        group = self.group(group)
        out: dict[str, np.ndarray] = {}
        if len(group) == 1:
            return out
        names = [a for a in self.algorithm_names(op, "auto") if not quadratic(a, op)
                 or transfer_count(a, op, len(group)) <= self.max_transfers]
        try:
            cands = self._candidates(op, group, names, allow_none=True)
        except GroupCut:
            return out
        for c, t in zip(cands, self.candidate_times(cands, n), strict=True):
            name = c[0]
            out[name] = t if name not in out else np.minimum(out[name], t)
        return out
