"""A grid's result: every configuration x batch of one model, GPU and workload evaluated at once.

:class:`Grid` holds the arrays of :func:`compute.roofline.evaluate_grid` (each stage's work
and times, the step's latency, the memory fit, and what two-batch overlap, MTP or a profile
add) and gives one cell as an :class:`~compute.results.InferenceResult`
(:meth:`Grid.result`) and the step's time split by resource (:meth:`Grid.time_split`);
:class:`GridRates` is what it and :class:`~compute.evaluate_many.Evaluations` derive from
their latencies alike (tokens/s, per SM, the SLO met); :func:`stage_sum` adds a step's
stages one after another, as every path that costs a step does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from compute.dp_collectives import op_at
from compute.memory import describe_fit
from compute.moe_exchange import EXCHANGES, shown_name
from compute.parallel import expert_slots
from compute.results import RESOURCES, InferenceResult, StageResult
from compute.stages import STAGES

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Workload
    from compute.roofline_options import RooflineOptions

__all__ = ["Grid", "GridRates", "stage_sum"]


class GridRates:
    """What :class:`Grid` and :class:`~compute.evaluate_many.Evaluations` derive from their
    latencies alike: tokens/s, tokens/s per SM, whether each point meets the SLO and is
    feasible."""

    tokens_per_step: np.ndarray
    latency: np.ndarray
    latency_limit: float
    gpus: np.ndarray
    gpu: GpuSpec
    fits: np.ndarray
    #: seconds per batch in steady state where it differs from ``latency`` (a pipelined
    #: prefill; see :func:`compute.roofline.evaluate_grid`), else None
    interval: np.ndarray | None

    @property
    def tokens_per_s(self) -> np.ndarray:
        """Tokens per second of an instance serving a stream of batches (one every
        ``interval``; ``latency`` where none is given)."""
        return self.tokens_per_step / (self.latency if self.interval is None
                                       else self.interval)

    @property
    def tokens_per_s_per_sm(self) -> np.ndarray:
        return self.tokens_per_s / (self.gpus * self.gpu.sms)

    @property
    def meets_slo(self) -> np.ndarray:
        return self.latency <= self.latency_limit

    @property
    def feasible(self) -> np.ndarray:
        return self.fits & self.meets_slo


@dataclass(frozen=True, eq=False)
class Grid(GridRates):
    """Every configuration (rows: TP degrees, or :class:`~compute.parallel.Parallelism`
    configurations) x batch (columns) evaluated at once.

    Stage arrays have shape ``(stages, nc, nb)`` and are per GPU, per occurrence; ``counts``
    and ``groups`` ``(stages, nc)``; the others ``(nc, nb)``. ``result(i, j)`` gives the
    :class:`InferenceResult` of one cell. ``stages`` names the stages: :data:`~compute.stages.STAGES`
    for plain tensor parallelism, :data:`~compute.stages.EXTENDED_STAGES` when a row uses another dimension.
    """

    model: ModelSpec
    gpu: GpuSpec
    workload: Workload
    options: RooflineOptions
    tps: tuple[int, ...]      #: TP degree of each row
    batches: np.ndarray
    counts: np.ndarray        #: occurrences per step of each stage, shape (stages, nc)
    #: collective of each stage ("" for none; a :class:`~compute.dp_collectives.CellOps`
    #: where its cells run different ones)
    ops: tuple
    flops: np.ndarray
    hbm_bytes: np.ndarray
    net_bytes: np.ndarray
    compute_time: np.ndarray
    memory_time: np.ndarray
    network_time: np.ndarray
    stage_time: np.ndarray
    bound: np.ndarray         #: index into RESOURCES, shape (stages, nc, nb)
    latency: np.ndarray       #: step time, seconds
    weights: np.ndarray
    kv_cache: np.ndarray
    activations: np.ndarray
    usable: float
    fits: np.ndarray
    latency_limit: float
    configs: tuple = ()       #: the :class:`~compute.parallel.Parallelism` of each row
    stages: tuple[str, ...] = STAGES
    groups: np.ndarray | None = None  #: GPUs in each stage's collective, shape (stages, nc)
    micro_batches: np.ndarray | None = None  #: sequences per micro-batch, shape (nc, nb)
    expert_skew: float = 1.0
    #: with a profile: the step's fixed overheads (in ``latency``), shape (nc, nb)
    overhead: np.ndarray | None = None
    #: seconds per batch in steady state, shape (nc, nb), where a pipelined prefill row
    #: makes it differ from ``latency`` (None: the latency)
    interval: np.ndarray | None = None
    #: with ``options.two_batch_overlap``: the step run as two micro-batches, seconds,
    #: shape (nc, nb) (NaN where the batch does not split: batch 1, a decode rank of one
    #: sequence), and what it hides of the serial step where it is
    #: the faster (``latency`` is then the overlapped step; 0 where the serial step is
    #: taken); None without the option
    two_batch_latency: np.ndarray | None = None
    two_batch_hidden: np.ndarray | None = None
    #: with ``options.two_batch_overlap``, ``(grid, larger, smaller, sequences)``: the two
    #: micro-batches' grid, each batch's column there of its larger and of its smaller
    #: micro-batch, shape (nb,), and their sequences over every attention DP rank
    #: ``(larger, smaller)``, (nc, nb) each (:func:`compute.roofline._two_batch`); None without the option
    #: or where no cell splits
    two_batch_halves: tuple | None = None
    #: each cell's MoE exchange, its code in :data:`compute.moe_exchange.EXCHANGES`, shape
    #: (nc, nb); None: the all-to-alls wherever a row runs expert parallelism
    exchange: np.ndarray | None = None
    #: with ``options.mtp_tokens`` (decode): seconds of the step's draft passes of the MTP
    #: module (in ``latency``), shape (nc, nb), and the tokens a sequence emits a step on
    #: average (:func:`compute.mtp.expected_tokens`); None without the option
    mtp_time: np.ndarray | None = None
    mtp_expected: float | None = None
    #: the sequences each cell holds where not its ``batches`` column: two-batch overlap's
    #: micro-batches (:func:`compute.roofline._two_batch`), shape (1 or nc, nb), fractional where a rank's
    #: prompt is cut in two (each half counts it half: ``batches`` is its ceiling)
    sequences: np.ndarray | None = None

    @property
    def gpus(self) -> np.ndarray:
        """GPUs of each row's instance (``tp x pp``), shape (nc, 1)."""
        return np.asarray([c.gpus for c in self.configs], dtype=float).reshape(-1, 1)

    @property
    def tokens_per_step(self) -> np.ndarray:
        """Tokens a step produces or consumes, shape (1, nb) (with MTP: the expected
        tokens emitted, ``batch x`` :attr:`mtp_expected`)."""
        if self.mtp_expected is not None:
            return (self.batches * self.mtp_expected).reshape(1, -1).astype(float)
        if self.sequences is not None:   # a micro-batch's, a cut prompt counted half
            return self.sequences * float(self.workload.tokens_per_sequence)
        return (self.batches * self.workload.tokens_per_sequence).reshape(1, -1).astype(float)

    @property
    def meets_slo(self) -> np.ndarray:
        """Whether each cell meets the SLO: the step's latency, or with MTP the time per
        output token (the step over the expected tokens a sequence emits)."""
        if self.mtp_expected is not None:
            return self.latency / self.mtp_expected <= self.latency_limit
        return self.latency <= self.latency_limit

    def time_split(self) -> dict[str, np.ndarray]:
        """Step time split into compute, memory and network seconds, arrays ``(nc, nb)``
        that add up to ``latency`` (see :func:`compute.results.time_split`)."""
        c = self.counts[:, :, None]
        if self.options.mode == "serial":
            parts = (self.compute_time, self.memory_time, self.network_time)
            out = {r: stage_sum(c, p) for r, p in zip(RESOURCES, parts, strict=True)}
        else:   # stage after stage, as latency adds them (stage_sum), whatever the cells
            out = {r: stage_sum(c, np.where(self.bound == k, self.stage_time, 0.0))
                   for k, r in enumerate(RESOURCES)}
        if self.overhead is not None:  # a profile's fixed overheads
            out["overhead"] = np.broadcast_to(self.overhead, self.latency.shape)
        if self.two_batch_hidden is not None:  # what two-batch overlap hides (<= 0)
            out["two_batch_hidden"] = -self.two_batch_hidden
        if self.mtp_time is not None:  # the MTP module's draft passes
            out["mtp_draft"] = self.mtp_time
        return out

    def _idle(self, k: int, i: int, j: int) -> bool:
        """True where stage ``k`` is a collective alone that cell ``(i, j)`` does not run
        (its collective chosen cell by cell and ``""`` there, no work, no bytes: an EP
        layer's dispatch and combine under the all-reduce exchange,
        :mod:`compute.moe_exchange`; SGLang's ``SUM_LEN`` ``allreduce_attn``)."""
        op = self.ops[k]
        return (not isinstance(op, str) and op_at(op, i, j) == ""
                and self.flops[k, i, j] == 0.0 and self.hbm_bytes[k, i, j] == 0.0
                and self.net_bytes[k, i, j] == 0.0)

    def result(self, i: int, j: int) -> InferenceResult:
        """The configuration of row ``i`` and batch index ``j``, with its breakdown (a
        stage another dimension adds is listed where it occurs, named as it runs in that
        cell: :func:`compute.moe_exchange.shown_name`)."""
        code = 0 if self.exchange is None else int(self.exchange[i, j])
        stages = tuple(
            StageResult(name=shown_name(name, op_at(self.ops[k], i, j), code),
                        count=int(self.counts[k, i]),
                        flops=float(self.flops[k, i, j]),
                        hbm_bytes=float(self.hbm_bytes[k, i, j]),
                        collective=op_at(self.ops[k], i, j) if self.groups is None
                        or self.groups[k, i] > 1 else "",   # none among one GPU
                        collective_bytes=float(self.net_bytes[k, i, j]),
                        compute_time=float(self.compute_time[k, i, j]),
                        memory_time=float(self.memory_time[k, i, j]),
                        network_time=float(self.network_time[k, i, j]),
                        time=float(self.stage_time[k, i, j]),
                        bound=RESOURCES[int(self.bound[k, i, j])])
            for k, name in enumerate(self.stages) if self.counts[k, i] > 0
            and not self._idle(k, i, j))
        par, batch = self.configs[i], int(self.batches[j])
        copies = expert_slots(self.model.experts, par.ep)[1] if self.model.is_moe else 0
        fit = describe_fit(self.model, self.gpu, par.tp, batch, self.weights[i, j],
                           self.kv_cache[i, j], self.activations[i, j],
                           self.options.memory_reserve, label=par.describe(copies))
        return InferenceResult(
            model=self.model.name, gpu=self.gpu.name, phase=self.workload.phase, tp=par.tp,
            batch=batch, prompt_tokens=self.workload.prompt,
            context_tokens=self.workload.context, mode=self.options.mode,
            latency=float(self.latency[i, j]),
            tokens_per_step=float(self.tokens_per_step[
                i if self.sequences is not None and len(self.sequences) > 1 else 0, j]),
            sms=par.gpus * self.gpu.sms,
            stages=stages, memory=fit, latency_limit=self.latency_limit, pp=par.pp,
            ep=par.ep, attention_dp=par.attention_dp,
            moe_exchange=EXCHANGES[code] if self.model.is_moe and par.ep > 1 else "",
            micro_batch=int(self.micro_batches[i, j]) if self.micro_batches is not None
            else batch, expert_skew=self.expert_skew if par.ep > 1 else 1.0,
            **({} if self.interval is None or par.pp == 1 else
               {"interval": float(self.interval[i, j])}),
            **({} if self.overhead is None else
               {"overhead": float(self.overhead[i, j]), "profile": self.options.profile.name}),
            **({"overlap_collectives": True} if self.options.overlap_collectives else {}),
            **({"redundant_experts": copies} if copies else {}),
            **({} if self.two_batch_hidden is None else
               {"two_batch_hidden": float(self.two_batch_hidden[i, j])}),
            **({"dense_mlp_tp": self.options.dense_mlp_tp}
               if self.options.dense_mlp_tp is not None and par.attention_dp > 1 else {}),
            **({} if self.mtp_time is None else
               {"mtp_tokens": self.options.mtp_tokens, "mtp_expected": self.mtp_expected,
                "mtp_time": float(self.mtp_time[i, j])}))


def stage_sum(counts, times):
    """A step's ``count x time`` added stage after stage, in the stages' order, whatever
    the shape of the cells: as a grid of many cells has always added them (numpy's sum
    over the outer axis adds one row after another), as the pipelined grids' pass adds
    them (:func:`compute.grid_parts.stage_times`) and as :mod:`compute.evaluate_one`'s
    scalar path adds them, so every command gets one configuration's step to the last bit
    (numpy's ``sum(axis=0)`` adds a one-cell grid's stages pairwise instead, which put
    ``infer`` one unit in the last place off ``search`` and ``compare`` in about half the
    configurations).

    >>> import numpy as np
    >>> xs = np.array([0.1 * 3 ** k for k in range(18)]).reshape(9, 1, 2)
    >>> bool((stage_sum(np.ones((9, 1, 1)), xs) == xs.sum(axis=0)).all())
    True
    """
    total = counts[0] * times[0]
    for k in range(1, len(times)):
        total = total + counts[k] * times[k]
    return total
