"""Two-batch overlap: a step run as two micro-batches, one's collectives hidden behind the
other's compute.

SGLang (``--enable-two-batch-overlap``; the SGLang Team, "Deploying DeepSeek with PD
Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs", LMSYS blog, May 5 2025)
and DeepSeek's own serving (DeepSeek-V3/R1 Inference System Overview, Feb 2025,
github.com/deepseek-ai/open-infra-index, "Day 6": "a dual-batch overlap strategy ... the
computation of one micro-batch overlaps with the communication of the other") split a
step's batch in two. The roofline (:func:`compute.evaluate_one.evaluate`) runs one batch
whose collectives add to its compute; this module times the same step as those engines
schedule it, from the roofline's own stage times (:func:`evaluate_two_batch`):

* each attention data-parallel rank cuts its own sequences in two, as the engines do
  (SGLang's ``python/sglang/srt/batch_overlap/two_batch_overlap.py``, run on each DP
  rank's own batch: decode by sequences, prefill by sequences balancing the tokens, or
  at half the rank's tokens, one prompt cut in two, where a side would hold less than
  ``--tbo-token-distribution-threshold`` 0.48 of them;
  :func:`compute.micro_batches.rank_halves`): a micro-batch is the ranks' halves (a cut
  prompt counts half, its two chunks' attention each taken at their mean), its busiest
  rank's half what attention, the router, the shared experts and the all-to-all's
  busiest sender run (without attention DP: ``ceil(batch / 2)`` and ``floor(batch / 2)``
  sequences, but an odd prefill batch below 25 cut at half its tokens; a decode rank of
  one sequence does not split, and then no rank does: :func:`~compute.micro_batches.splits`).
  Halving the
  whole batch instead left one prompt on a rank holding one (DeepSeek-V3 at TP = EP =
  DP-attention 32, batch 32) a whole prompt in each micro-batch. Each micro-batch is
  evaluated by the roofline at its own size (:func:`compute.roofline.evaluate_grid`'s
  grid of micro-batches), so what a half batch loses (GEMMs that read the same weights
  for half the tokens, an all-to-all's fixed latency paid twice) is the roofline's at
  that size, with no efficiency constant of its own; without ``overlap_collectives``
  (each collective a segment in full: the other micro-batch's compute is what hides it,
  not its own producer GEMM; :func:`compute.micro_batches.halves_options`);
* each micro-batch is a chain of *segments*, a compute part then a communication part:
  the embedding; each layer's attention (``qkv``, ``attention``, ``out_proj``) then the
  collectives before the MLP (the MoE dispatch, or the gathers and all-reduce of a layer
  whose MLP is tensor-parallel), then the MLP (``mlp_up``, ``mlp_down``) then the
  collectives after it (the MoE combine, the scatters); the LM head. Dense layers come
  first (DeepSeek-V3's first three), each stage time the roofline's per occurrence (the
  MLP's, as the roofline's pass, the average of its dense and MoE layers);
* two streams, one computing and one communicating, each take the segments in the order
  the engines issue them (segment ``i`` of the first micro-batch, then of the second),
  each segment starting when its stream is free and its micro-batch's previous segment
  is done (:func:`two_batch_time`).

With equal micro-batches, ``L`` layers of one segment each (compute ``c``, communication
``a`` a micro-batch) take ``2 L max(c, a) + min(c, a)``: each layer the slower stream's
work for both micro-batches, and once the first compute (nothing to hide behind) or the
last communication (nothing left to hide it) alone. The step is never shorter than
either stream's total nor than one micro-batch's chain, and never longer than the two
micro-batches run one after the other (at any instant one stream is busy).

Not modelled: the SMs DeepEP's kernels take from the GEMMs while they run (the roofline
gives both streams the whole GPU; DeepSeek gives 20 of the H800's 132 SMs to
communication, DeepSeek-V3 Technical Report Section 3.2.2), a finer split than one
segment per side of the MLP (DeepSeek's decode splits attention in two stages), the
activation memory a half batch saves (the memory fit stays the whole batch's), pipeline
parallelism and the calibrated mode (refused).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.micro_batches import AFTER_MLP as _AFTER_MLP
from compute.micro_batches import ATTENTION as _ATTENTION
from compute.micro_batches import BEFORE_MLP as _BEFORE_MLP
from compute.micro_batches import MLP as _MLP
from compute.micro_batches import splits, two_batch_time
from compute.models import get_model
from compute.moe_exchange import slot_of
from compute.parallel import Parallelism, dense_data_parallel, layout
from compute.phases import Workload
from compute.results import InferenceResult
from compute.roofline import check_options, evaluate_grid
from compute.roofline_options import (
    MTP_TWO_BATCH_REFUSED,
    RooflineOptions,
    profile_two_batch_refused,
)
from compute.stages import layer_counts

__all__ = ["TwoBatchResult", "evaluate_two_batch", "step_segments", "two_batch_time"]

def step_segments(result: InferenceResult, model=None) -> list[tuple[float, float]]:
    """One step of ``result`` (one pipeline stage, the roofline's stage times) as the chain
    of ``(compute, communication)`` segments :func:`two_batch_time` takes (see the module
    docstring): its ``(compute, communication)`` sums add up to the step's latency."""
    model = get_model(model if model is not None else result.model)
    if result.pp != 1:
        raise UserError(f"two-batch overlap models one pipeline stage; got PP {result.pp}; "
                        f"allowed: PP 1")
    st = {slot_of(s.name): s for s in result.stages}   # the grid's stages, as counted
    configs = [Parallelism(result.tp, 1, result.ep, result.attention_dp)]
    sh = layout(model, configs)
    if result.dense_mlp_tp is not None:   # dense MLPs data-parallel: counted as evaluated
        sh = dense_data_parallel(model, configs, sh, result.dense_mlp_tp)

    def t(name: str) -> float:
        return st[name].time if name in st else 0.0

    def layer(moe: bool) -> list[tuple[float, float]]:
        counts = layer_counts(model, sh, 1.0, 1.0 if moe else 0.0)
        comm = [sum(float(counts[k][0]) * t(k) for k in side)
                for side in (_BEFORE_MLP, _AFTER_MLP)]
        return [(sum(t(k) for k in _ATTENTION), comm[0]), (sum(t(k) for k in _MLP), comm[1])]

    moe = model.moe_layers
    chain = [(t("embedding"), 0.0)]
    chain += layer(False) * (model.layers - moe) + layer(True) * moe
    chain.append((t("lm_head"), 0.0))
    return chain


@dataclass(frozen=True)
class TwoBatchResult:
    """A step run as two micro-batches (:func:`evaluate_two_batch`): ``serial`` the whole
    batch's roofline result, ``halves`` the two micro-batches' (the larger first, each
    rank's sequences cut in two: :func:`~compute.micro_batches.rank_halves`), ``latency`` the overlapped step's seconds; ``compute`` and ``network``
    the two streams' busy seconds (both micro-batches), ``fill`` what neither hides (the
    latency less the busier stream's time)."""

    serial: InferenceResult
    halves: tuple[InferenceResult, InferenceResult]
    latency: float
    compute: float
    network: float
    #: the sequences each micro-batch holds over every attention DP rank, the larger
    #: first (:func:`~compute.micro_batches.rank_halves`): fractional where a rank's
    #: prompt is cut in two (a half's ``tokens_per_step`` counts such a prompt half, its
    #: ``batch`` is the ceiling of its sequences)
    micro_batches: tuple = ()

    @property
    def fill(self) -> float:
        # at least 0: the schedule is never shorter than a stream's work; the two sums add
        # the same segments in other orders, so a step of one stream could leave -1e-17
        return max(0.0, self.latency - max(self.compute, self.network))

    @property
    def tokens_per_s(self) -> float:
        """Tokens a second: the step's tokens (the whole batch's) over the overlapped
        step."""
        return self.serial.tokens_per_step / self.latency

    @property
    def taken(self) -> InferenceResult:
        """The serial result as a search with two-batch overlap allowed gives it: the lesser
        of the two steps as ``latency`` and what the overlap hid as ``two_batch_hidden``
        (0 where the serial step is the faster), by the grid's arithmetic
        (:func:`compute.roofline.evaluate_grid`: ``serial - overlapped`` where it is
        faster)."""
        faster = self.latency < self.serial.latency
        return replace(self.serial,
                       latency=self.latency if faster else self.serial.latency,
                       two_batch_hidden=self.serial.latency - self.latency if faster else 0.0)

    def to_dict(self) -> dict:
        """JSON-ready: ``{used, serial_latency_s, hidden_s}``, the shape of every
        ``two_batch_overlap`` entry (``infer``'s, ``search``'s ``best``, ``serve``'s pools),
        made by one helper (:meth:`~compute.results.InferenceResult.two_batch_summary` of
        :attr:`taken`)."""
        return self.taken.two_batch_summary()

    def schedule_dict(self) -> dict:
        """JSON-ready: the overlapped step's schedule (``two_batch_schedule`` in ``netmodel
        infer --json``): its seconds, the two micro-batches' sequences, each stream's busy
        seconds, the seconds neither hides and its tokens a second."""
        return {"latency_s": self.latency, "micro_batches": list(self.micro_batches),
                "compute_stream_s": self.compute, "network_stream_s": self.network,
                "fill_s": self.fill, "tokens_per_s": self.tokens_per_s}


def evaluate_two_batch(model, gpu, tp: int, batch: int, phase="decode", **kwargs
                       ) -> TwoBatchResult:
    """The step of :func:`~compute.evaluate_one.evaluate` (same arguments) run as two
    micro-batches whose collectives overlap the other's compute (see the module docstring).
    Needs a batch of at least 2 (in decode 2 a rank: :func:`~compute.micro_batches.splits`),
    one pipeline stage and the roofline (no profile)."""
    model = get_model(model)
    options = kwargs.get("options")
    check_options(options)   # a float raised AttributeError ('no attribute profile')
    if options is not None and options.profile is not None:
        raise UserError(profile_two_batch_refused(options.profile))
    if options is not None and options.mtp_tokens:   # the halves' chains leave the drafts out
        raise UserError(MTP_TWO_BATCH_REFUSED)
    if options is not None and options.two_batch_overlap:   # the serial step
        kwargs = {**kwargs, "options": replace(options, two_batch_overlap=False)}
    if kwargs.get("pp", 1) != 1:
        raise UserError(f"two-batch overlap models one pipeline stage; got PP {kwargs['pp']}; "
                        f"allowed: PP 1")
    serial = evaluate(model, gpu, tp, batch, phase, **kwargs)
    if serial.batch < 2:
        raise UserError(f"two-batch overlap needs a batch of at least 2 (two micro-batches); "
                        f"got {serial.batch}")
    if not splits(serial.phase, serial.batch, serial.attention_dp):
        raise UserError(f"two-batch overlap needs every attention DP rank's decode batch "
                        f"split in two, at least 2 sequences a rank; got batch "
                        f"{serial.batch} over attention_dp {serial.attention_dp}; allowed: "
                        f"a batch of at least {2 * serial.attention_dp}")
    # the micro-batches as the grid cuts them, each rank's own sequences in two
    # (rank_halves), each collective in full on the communication stream (halves_options)
    grid = evaluate_grid(model, gpu, [Parallelism(serial.tp, 1, serial.ep, serial.attention_dp)],
                         [serial.batch], Workload(serial.phase, serial.prompt_tokens,
                                                  serial.context_tokens),
                         comm=kwargs.get("comm"), options=replace(
                             options if options is not None else RooflineOptions(),
                             two_batch_overlap=True),
                         latency_limit=serial.latency_limit,
                         expert_skew=kwargs.get("expert_skew", 1.0))
    g, big, small, seqs = grid.two_batch_halves
    halves = (g.result(0, int(big[0])), g.result(0, int(small[0])))
    chains = [step_segments(h, model) for h in halves]
    return TwoBatchResult(serial=serial, halves=halves, latency=two_batch_time(chains),
                          compute=sum(c for ch in chains for c, _ in ch),
                          network=sum(a for ch in chains for _, a in ch),
                          micro_batches=(_whole(seqs[0][0, 0]), _whole(seqs[1][0, 0])))


def _whole(x: float) -> int | float:
    """``x`` as an int where it is whole (sequences), else the float."""
    return int(x) if float(x).is_integer() else float(x)
