"""The candidates of a collective cost model: each valid (algorithm, protocol) line of a
group, which of them may be the fastest at the sizes asked, and their times at those sizes.

:class:`CandidateChoices` is a mixin of :class:`~netmodel.collectives.model.FabricCostModel`
(the methods stay on the model, as :mod:`netmodel.collectives.model_tuner`'s do):
:meth:`CandidateChoices.algorithm_names` says which algorithms to try for an op,
:meth:`CandidateChoices.candidates` gives their lines ``a + b n`` (each algorithm compiled
once by the model), :meth:`CandidateChoices.choices` those that may be the fastest at given
sizes (an everyone-to-everyone algorithm over many GPUs left out, unbuilt, where a lower
bound on its time exceeds another candidate's at every size), and
:meth:`CandidateChoices.candidate_times` and :meth:`CandidateChoices.fastest` their times.
:func:`candidate_lines` gives a model's lines as arrays for
:func:`~netmodel.collectives.cost.lines_time`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from compute.comm import check_op
from compute.errors import UserError, chosen, known
from netmodel.collectives.algorithms import (
    ALGORITHMS,
    SEND_RECV_OPS,
    NotApplicable,
    algorithms_for,
    quadratic,
    transfer_count,
    unknown_algorithm,
)
from netmodel.collectives.message_sizes import check_size_count
from netmodel.collectives.names import NCCL_OPS

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from netmodel.collectives.cost import CompiledCollective

    #: A valid ``(algorithm, protocol, a, b, compiled)``: ``time = a + b n``.
    Candidate = tuple[str, str, float, float, CompiledCollective]

__all__ = ["COSTLY_TRANSFERS", "CandidateChoices", "candidate_lines"]

#: Algorithms routing more transfers than this are costed only where a lower bound says
#: they might be the fastest (see :meth:`CandidateChoices.choices`).
COSTLY_TRANSFERS = 1 << 16


def candidate_lines(model, cands: list[Candidate]) -> tuple[np.ndarray, np.ndarray,
                                                             np.ndarray | None,
                                                             np.ndarray | None]:
    """``(a, b, lo, hi)`` of ``model``'s candidates ``cands`` for
    :func:`~netmodel.collectives.cost.lines_time`: each one's ``time = a + b n`` at the sizes
    ``lo < n <= hi`` it runs at (:meth:`CandidateChoices.candidate_ranges`; ``lo`` and
    ``hi`` None for a model without size ranges: every line at every size)."""
    ranges = getattr(model, "candidate_ranges", None)
    return (np.array([c[2] for c in cands]), np.array([c[3] for c in cands]),
            *(ranges(cands) if ranges is not None else (None, None)))


class CandidateChoices:
    """The candidates on a :class:`~netmodel.collectives.model.FabricCostModel` (a mixin: the
    methods stay on the model).

    Reads the model's ``algorithm``, ``algorithms``, ``scope``, ``max_transfers``,
    ``router``, ``calibration``, ``compiled_variants`` and what it has compiled
    (``_compiled``), and keeps there each group's lines (``_lines``) and each GPU's link
    rates summed for the lower bound (``_rate_out``).
    """

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
        op = check_op(op)
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
        if chosen(algorithm, ALGORITHMS) is None:
            raise unknown_algorithm(algorithm, ("auto", *ALGORITHMS))
        algorithm = chosen(algorithm, ALGORITHMS)   # blanks at either end dropped
        if op not in ALGORITHMS[algorithm]:
            raise UserError(f"algorithm {algorithm!r} does not implement {op!r}; "
                            f"algorithms for {op!r}: {known(algorithms_for(op))}")
        return [algorithm]

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

    def fastest(self, cands: list[Candidate], n: np.ndarray) -> np.ndarray:
        """The smallest time of ``cands`` at each size ``n`` (an array of any shape): each
        candidate's ``a + b n`` where it runs (:meth:`candidate_times`); at most
        :data:`~netmodel.collectives.message_sizes.MAX_SIZES` sizes."""
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
        :data:`~netmodel.collectives.message_sizes.MAX_SIZES` sizes."""
        check_size_count(np.size(n), "n")
        cal = self.calibration
        for _, proto, a, b, comp in cands:
            t = a + b * n
            lo, hi = comp.size_range(proto, cal, b=b)
            if lo > 0 or hi < math.inf:
                t = np.where((n > lo) & (n <= hi), t, np.inf)
            yield t
