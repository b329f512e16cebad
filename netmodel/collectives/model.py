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
(:class:`~netmodel.collectives.model_tuner.TunedChoices`, a mixin of the model); the
candidates themselves (an op's algorithms, their lines on a group, which of them may be the
fastest at given sizes, and their times) :mod:`netmodel.collectives.model_candidates`'s
(:class:`~netmodel.collectives.model_candidates.CandidateChoices`, another mixin); how many
message sizes one call costs, and which are sizes,
:mod:`netmodel.collectives.message_sizes`'s (imported here, and importable from here).

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
from collections.abc import Callable, Hashable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from compute.comm import check_op
from compute.errors import UserError, chosen, known, lookalike
from compute.validate import describe, flag, is_whole, of_type, refuse_repeats
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
from netmodel.collectives.message_sizes import MAX_SIZES, check_size_count, check_sizes
from netmodel.collectives.model_candidates import (
    COSTLY_TRANSFERS,
    CandidateChoices,
    candidate_lines,
)
from netmodel.collectives.model_tuner import TunedChoices
from netmodel.collectives.names import PLACEMENTS
from netmodel.collectives.placement import check_group, check_seed, place
from netmodel.collectives.results import CollectiveResult, SweepResult, bus_factor
from netmodel.collectives.route_policies import route_policies
from netmodel.collectives.route_sharing import router_for
from topologies.schema import check_graph, validate

if TYPE_CHECKING:
    import networkx as nx
    from numpy.typing import ArrayLike

    from netmodel.collectives.model_candidates import Candidate

__all__ = ["COSTLY_TRANSFERS", "MAX_SIZES", "MAX_TRANSFERS", "RING_ORDERS", "FabricCostModel",
           "candidate_lines", "check_size_count", "check_sizes", "faster_ring_order"]

#: Default of :class:`FabricCostModel`'s ``max_transfers``: the most point-to-point transfers
#: one algorithm may route for one group (everyone-to-everyone over 16,384 GPUs is 268
#: million; 20 million take a few GB to route).
MAX_TRANSFERS = 20_000_000
#: What a named algorithm of :class:`FabricCostModel` governs (its ``scope``).
SCOPES = ("every-op", "collectives")
#: The ring orders of :class:`FabricCostModel` (its ``ring_order``), the group's first.
RING_ORDERS = ("given", "greedy")


class FabricCostModel(CandidateChoices, TunedChoices):
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
        in hops), useful on degraded fabrics (:func:`faster_ring_order` takes the faster).
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

        # 'yes' or 1 was taken as its truth: a graph left unchecked ('no' too)
        if not flag("FabricCostModel", "validated", validated):
            validate(graph, check_connected=False)
        elif check_graph(graph).is_multigraph():   # validate's refusal, with validated=True
            # parallel edges: the model reads one edge's attributes per pair (KeyError before)
            raise UserError(f"graph must be a simple networkx Graph or DiGraph (one edge "
                            f"between two nodes, as topologies.build and read_graph make), got "
                            f"{type(graph).__name__}")
        # a string first: an array compared with one raised numpy's ambiguous-truth ValueError
        if chosen(placement, PLACEMENTS) is None:   # blanks at either end dropped
            raise UserError(f"unknown placement {describe(placement)}"
                            f"{lookalike(placement, PLACEMENTS)}; known: {known(PLACEMENTS)}")
        placement = chosen(placement, PLACEMENTS)
        if chosen(algorithm, ("auto", *ALGORITHMS)) is None:
            raise unknown_algorithm(algorithm, ("auto", *ALGORITHMS))
        algorithm = chosen(algorithm, ("auto", *ALGORITHMS))
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
                if chosen(a, ALGORITHMS) is None:
                    raise unknown_algorithm(a)
            # one candidate given twice ('ring', 'RING'), as --algorithms refuses it: taken
            # as one without a word
            refuse_repeats("algorithms", [a.strip() for a in algorithms], str.casefold)
            algorithms = tuple(chosen(a, ALGORITHMS) for a in algorithms)
        if chosen(scope, SCOPES) is None:
            raise UserError(f"scope must be one of {known(SCOPES)}, got {describe(scope)}")
        scope = chosen(scope, SCOPES)
        if chosen(ring_order, RING_ORDERS) is None:
            raise UserError(f"ring_order must be 'given' or 'greedy', got {describe(ring_order)}")
        ring_order = chosen(ring_order, RING_ORDERS)
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
        #: the steps :meth:`compiled` generated, ``((op, algorithm, group), steps)``, for
        #: :meth:`compiled_variants` to route under its other policies: kept only while
        #: that call asks for them (``True``), taken at once, never held after it
        self._made_steps: tuple | bool | None = None
        self._orders: dict = {}  # _ordered's, by group
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
                            gpus=self.router.gpu_list, checked=True)
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
        hit = self._orders.get(group)
        if hit is not None:   # each algorithm's steps, and the degraded side's healthy ring
            return hit
        left = list(group[1:])
        order = [group[0]]
        while left:
            here = order[-1]
            best = min(left, key=lambda g: (self._hops(here, g), 0))
            left.remove(best)
            order.append(best)
        self._orders[group] = hit = tuple(order)
        return hit

    def _hops(self, a: Hashable, b: Hashable) -> float:
        return self.router.hop_count(a, b)

    # ----------------------------------------------------------------- compilation
    def share_loads_of(self, base: FabricCostModel) -> bool:
        """Cost each step that ``base`` has routed with ``base``'s loads (its bottleneck,
        rates and path rate: :func:`~netmodel.collectives.step_cost.cost_step`), routing
        here only its latencies, where this model's fabric is ``base``'s with only its
        links' latencies changed (a per-hop latency added: the re-scoring's slopes,
        :func:`~netmodel.study.adjusted_comm.hop_latency_slopes`) and its calibration is
        ``base``'s: routes are hop-shortest paths split by bandwidth, so the same links
        carry the same loads. Returns whether they are shared (not where anything else
        differs: nodes, kinds, tiers, switch latencies, cables, bandwidths, PXN, GPU
        servers, calibration; nor on a fabric too large for routes to be compared,
        :func:`~netmodel.collectives.route_sharing.router_for`'s). A step neither has
        routed is routed on ``base``'s fabric and kept by both (under a routing policy,
        here)."""
        from netmodel.collectives.step_cost import LOADS_OF, ROUTED_BY

        mine, theirs = self.router, base.router
        a, b = mine._shape, theirs._shape
        # a router's shape, what its routes depend on: its nodes (0-4: their order, kinds,
        # tiers, switch latencies, link counts) and PXN's (9-11) the same; its links the
        # same (by ends, in either's order of them, 5-6: a copied graph may list a
        # node's neighbours in another order) with the same bandwidths (7); their
        # latencies (8) aside
        if a is None or b is None or a[:5] != b[:5] or a[9:] != b[9:] \
                or not np.array_equal(mine._keys, theirs._keys) \
                or not np.array_equal(mine.bandwidth[mine._order],
                                      theirs.bandwidth[theirs._order]) \
                or self.calibration != base.calibration:
            return False
        self._step_cache[LOADS_OF] = base._step_cache
        base._step_cache[ROUTED_BY] = base.router   # a step neither routed: routed there
        return True

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
                # the routes all the steps search, estimated together (each step's alone
                # when it is routed): refused before they are searched
                self.router.check_steps(steps)
                hit = compile_steps(self.router, op, algorithm, group, steps, self.calibration,
                                    self._step_cache)
                if self._made_steps is True:   # compiled_variants wants them
                    self._made_steps = (key, steps)
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
        self._made_steps = True   # the steps compiled() generates now, if it does
        try:
            comp = self.compiled(op, algorithm, group)
        finally:
            made, self._made_steps = self._made_steps, None
        made = made if isinstance(made, tuple) else None
        # NCCL's send/recv (all-to-all, send-recv) gives a peer one path
        policies = () if op in SEND_RECV_OPS else route_policies(self.router)
        hit = self._compiled.get((op, algorithm, group, "routings")) if policies else [comp]
        if hit is None:
            # the steps compiled() generated just now (the same list generate gives
            # again: frozen steps of the op, algorithm, group and this model's graph)
            steps = made[1] if made is not None and made[0] == (op, algorithm, group) else \
                generate(algorithm, op, self._ordered(group), self.graph)
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

    def _one_gpu(self, op: str, algorithm: str | None = None) -> None:
        """Check ``algorithm`` (the model's if None) against ``op`` for a group of one GPU,
        which communicates nothing but gets the same refusals as a larger group: an
        algorithm that does not implement ``op``, or no candidate that does."""
        if not self.algorithm_names(op, algorithm):
            raise UserError(f"no algorithm can run {op} (none of the candidates implements "
                            f"it); algorithms for {op!r}: {known(algorithms_for(op))}")

    # ----------------------------------------------------------------- the protocol
    def collective_time(self, op: str, nbytes: float | np.ndarray, group_size: int
                        ) -> np.ndarray:
        """Seconds for ``op`` of ``nbytes`` (scalar or array) among ``group_size`` GPUs
        placed by the model's placement policy; ``inf`` where the group is cut apart."""
        op = check_op(op)
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
        from netmodel.collectives.moe import check_once_a_server, once_a_server_time

        copies = check_once_a_server("moe_all_to_all_time", copies, reach)
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
        op = check_op(op)
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
        op = check_op(op)
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
        op = check_op(op)
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
        op = check_op(op)
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


_R = TypeVar("_R")


def faster_ring_order(cost: Callable[[str], _R | None], time: Callable[[_R], float],
                      settled: Callable[[_R], bool] = lambda result: False
                      ) -> tuple[str, _R | None]:
    """The faster of the ring orders (:data:`RING_ORDERS`) for one cost, as a communicator
    lays its rings on the links there are (NCCL's topology search, at init and again after
    a failure): ``cost(order)`` is the result with rings in ``order`` (:class:`FabricCostModel`'s
    ``ring_order``; None where it cannot be costed) and ``time(result)`` its time. The
    group's order is costed first, the greedy nearest-neighbour one next unless that result
    is None or ``settled`` (fast enough already); a later order wins only where strictly
    faster. Returns the order and its result.

    >>> times = {"given": 2.0, "greedy": 1.0}
    >>> faster_ring_order(times.get, float)
    ('greedy', 1.0)
    >>> faster_ring_order(times.get, float, settled=lambda t: t <= 2.0)
    ('given', 2.0)
    >>> faster_ring_order({"given": 1.0, "greedy": 1.0}.get, float)
    ('given', 1.0)
    """
    order, best = RING_ORDERS[0], cost(RING_ORDERS[0])
    if best is None or settled(best):
        return order, best
    for other in RING_ORDERS[1:]:
        result = cost(other)
        if result is not None and time(result) < time(best):
            order, best = other, result
    return order, best
