"""What ``netmodel infer`` and ``netmodel search`` print, each made by one call: one
configuration's per-stage roofline with its collectives (:func:`infer_report`, an
:class:`InferReport`: the serial step, and with ``two_batch`` the overlapped one beside it)
and the best configuration under the SLO (:func:`search_report`, a :class:`SearchReport`),
each with ``to_dict()`` (the ``--json`` document) and ``table()`` (the text).

The collectives are those of a scenario, a fabric or the GPU-only ring, as
:func:`netmodel.cli.resolve.resolve_collectives` makes them: the cost model ``comm`` and its
description ``collectives`` (said in words by
:func:`~netmodel.study.run_words.describe_collectives`).

>>> from compute.hardware import get_gpu
>>> from compute.models import get_model
>>> from compute.roofline import make_workload
>>> from compute.roofline_options import RooflineOptions
>>> from netmodel.study.run_words import ring_description
>>> gpu = get_gpu("H100-SXM")
>>> r = infer_report(get_model("Llama-3-70B"), gpu, 8, 8, make_workload("prefill", 1500, 1513),
...                  options=RooflineOptions(), collectives=ring_description(gpu))
>>> r.table().splitlines()[0]
'Llama-3-70B on 8 x H100-SXM, prefill, batch 8, prompt 1500 tokens, overlap mode, roofline (a lower bound)'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from netmodel.study.run_words import describe_collectives, mode_lines, named, profile_note
from netmodel.study.summary_words import sig3

if TYPE_CHECKING:
    from compute.results import InferenceResult, SearchResult
    from compute.roofline_options import RooflineOptions
    from compute.two_batch import TwoBatchResult

__all__ = ["InferReport", "SearchReport", "check_fits", "infer_report", "search_report",
           "stage_table", "summary_lines"]


# ---- one configuration in words ----------------------------------------------------------

def _label(r) -> str:
    """``TP 8 x PP 2 x EP 8 x DP-attention 2`` of a result or front point; an EP holding
    redundant expert copies says how many (``EP 144 (32 redundant experts)``)."""
    from compute.parallel import Parallelism

    return Parallelism.of(r).describe(getattr(r, "redundant_experts", 0))


#: The time split's keys in words, where the key is not one (``time_split_s`` keeps the keys).
_SPLIT_WORDS = {"two_batch_hidden": "hidden by two-batch overlap",
                "mtp_draft": "MTP draft passes"}


def summary_lines(r: InferenceResult) -> list[str]:
    """The summary of one configuration: what runs where, the latency against its SLO and
    the throughput, memory per GPU, the time split, and the MTP and two-batch lines where
    they apply (infer's text opens with it, search's ``best:`` is it)."""
    from compute.units import format_time

    m = r.memory
    split = r.time_split()
    verdict = "met" if r.meets_slo else "MISSED"
    where = f"{r.tp} x {r.gpu}" if (r.pp, r.ep, r.attention_dp) == (1, 1, 1) else \
        f"{r.gpus} x {r.gpu} ({_label(r)}" + (
            f", dense MLP TP {r.dense_mlp_tp})" if getattr(r, "dense_mlp_tp", None) else ")")
    micro = f" in micro-batches of {r.micro_batch}" if r.pp > 1 else ""
    return [
        f"{r.model} on {where}, {r.phase}, batch {r.batch}{micro}, "
        + (f"prompt {_tokens(r.prompt_tokens)}" if r.phase == "prefill"
           else f"context {_tokens(r.context_tokens)}") + f", {r.mode} mode"
        + (f", engine profile {r.profile}" if r.profile else ", roofline (a lower bound)"),
        (f"TPOT {format_time(r.tpot)} (step {format_time(r.latency)} / "
         f"{_tokens(r.mtp_expected)}; SLO {format_time(r.latency_limit)}: "
         if getattr(r, "mtp_tokens", 0) else
         f"{r.latency_name.upper()} {format_time(r.latency)} (SLO {format_time(r.latency_limit)}: ")
        + f"{verdict}); {r.tokens_per_s:.5g} tokens/s"
        + (f" (a batch every {format_time(r.interval)}, steady state)" if r.interval else "")
        + f"; {sig3(r.tokens_per_s_per_sm)} tokens/s/SM ({r.sms} SMs)",
        f"memory per GPU: weights {m.weights / 1e9:.2f} + KV cache {m.kv_cache / 1e9:.2f} + "
        f"activations {m.activations / 1e9:.2f} = {m.total / 1e9:.2f} GB of "
        f"{m.usable / 1e9:.2f} GB usable ({'fits' if m.fits else 'does NOT fit'})",
        "time split: " + ", ".join(f"{_SPLIT_WORDS.get(k, k.replace('_', ' '))} "
                                   f"{v / r.latency:.1%}" for k, v in split.items()),
    ] + ([] if not getattr(r, "mtp_tokens", 0) else [
        f"MTP: {r.mtp_tokens} draft token(s) a step, {r.mtp_expected:.4g} expected "
        f"token{'' if r.mtp_expected == 1 else 's'} a sequence; the MTP module's passes "
        f"{format_time(r.mtp_time)} of the step (the "
        f"stages below are the verification pass's, {r.mtp_tokens + 1} tokens a sequence)"]
    ) + ([] if r.two_batch_hidden is None else [
        f"two-batch overlap: {'taken' if r.two_batch_hidden > 0 else 'not taken'} (serial "
        f"step {format_time(r.latency + r.two_batch_hidden)}; the stages are the serial "
        f"step's)"])


def _tokens(n: float) -> str:
    """``n`` tokens in words, one said as one (a prompt of 1, MTP's 1 expected token at an
    acceptance of 0: '1 tokens' before).

    >>> _tokens(1500), _tokens(1), _tokens(2.71)
    ('1500 tokens', '1 token', '2.71 tokens')
    """
    value = f"{n:.4g}" if isinstance(n, float) else f"{n}"
    return f"{value} token{'' if n == 1 else 's'}"


def stage_table(result: InferenceResult) -> list[str]:
    """The per-stage table: a header, a row per stage (count, GFLOP, HBM and collective
    MB, compute, memory and network time, share of the step, what bounds it) and, in the
    calibrated mode, the profile's fixed overhead."""
    from compute.units import format_time as _ft
    from netmodel.study.rows import column

    def format_time(t: float) -> str:
        return _ft(t) if t > 0 else "-"

    # the name column as wide as the longest name shown (allreduce_attn_ep: 17)
    w = max([15] + [len(s.name) + 1 for s in result.stages])
    lines = [f"{'stage':<{w}}{'x':>4}{'GFLOP':>10}{'HBM MB':>10}{'coll MB':>9}{'compute':>11}"
             f"{'memory':>11}{'network':>11}{'step share':>11}  bound"]
    for s in result.stages:
        share = s.total_time / result.latency if result.latency else 0.0
        # each column after a blank however wide its value (a network time of
        # '7.274e+04 s' after no memory time printed '-7.274e+04 s')
        lines.append(f"{s.name:<{w}}{s.count:>4}{column(f'{s.flops / 1e9:.4g}', 10)}"
                     f"{column(f'{s.hbm_bytes / 1e6:.4g}', 10)}"
                     f"{column(f'{s.collective_bytes / 1e6:.4g}', 9)}"
                     f"{column(format_time(s.compute_time), 11)}"
                     f"{column(format_time(s.memory_time), 11)}"
                     f"{column(format_time(s.network_time), 11)}"
                     f"{share:>10.1%}  {s.bound}")
    if result.profile:
        share = result.overhead / result.latency if result.latency else 0.0
        lines.append(f"{'overhead':<{w}}{1:>4}{'':>10}{'':>10}{'':>9}{'':>11}{'':>11}{'':>11}"
                     f"{share:>10.1%}  fixed (profile {result.profile})")
    return lines


def _two_batch_lines(r: InferenceResult, tbo: TwoBatchResult) -> list[str]:
    """The overlapped step beside the serial one."""
    from compute.units import format_time

    a, b = tbo.micro_batches   # sequences; a prompt cut in two counts half in each
    return [f"two-batch overlap: {r.latency_name.upper()} {format_time(tbo.latency)} "
            f"({tbo.latency / r.latency:.1%} of the serial step); {tbo.tokens_per_s:.5g} "
            f"tokens/s; micro-batches of {a} + {b}: compute {format_time(tbo.compute)}, "
            f"network {format_time(tbo.network)}, neither hidden {format_time(tbo.fill)} "
            f"(the stages below are the serial step's)"]


def _skew_note(model, ep: int, skew: float) -> list[str]:
    """A note when ``expert_skew`` asks more than ``ep`` groups allow (it is costed at the
    ceiling, compute.stage_mlp.skew_ceiling)."""
    if getattr(model, "experts", 0) <= 1 or ep <= 1:
        return []
    from compute.stage_mlp import skew_ceiling

    top = skew_ceiling(model, ep)
    if skew <= top:
        return []
    return [f"note: {named('expert_skew')} {skew:g} exceeds what EP {ep} allows for "
            f"{model.name} (the "
            f"busiest of {ep} groups receives at most every routed copy it holds an expert "
            f"for: {top:g}x the mean); costed at {top:g}"]


def schedule_notes(comm) -> dict[str, str]:
    """compare's ``settings.not_computed`` note for a scenario whose ``instances = "all"``
    charge fell back to the lockstep past the schedule in time's budget
    (:attr:`~netmodel.study.scenario_collectives.ScenarioCollectives.past_budget`), keyed as
    compare keys it (``schedule of SCENARIO``); empty for anything else."""
    from netmodel.study.scenario_collectives import ScenarioCollectives

    return comm.schedule_notes() if isinstance(comm, ScenarioCollectives) else {}


def _noted(options, model: str, gpu: str) -> dict[str, str]:
    """``{"profile_note": ...}`` where the run's profile was fitted on another model or GPU
    (:func:`~netmodel.study.run_words.profile_note`), else empty."""
    note = "" if options.profile is None else profile_note(options.profile, [model], [gpu])
    return {"profile_note": note} if note else {}


def check_fits(gpus: int, fabric_gpus: int | None, collectives: dict) -> None:
    """Refuse an instance of ``gpus`` larger than the fabric it is placed on (``fabric_gpus``;
    None: no fabric, the ring)."""
    from compute.errors import UserError

    if fabric_gpus is not None and gpus > fabric_gpus:
        where = collectives.get("scenario") or collectives.get("fabric")
        raise UserError(f"an instance of {gpus} GPUs does not fit {collectives['model']} "
                        f"{where!r} ({fabric_gpus} GPUs)")


# ---- infer ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class InferReport:
    """One configuration costed: the serial step ``result`` with its stages, the
    overlapped step ``two_batch`` where asked, the collectives' description, and the
    notes the text adds."""

    result: InferenceResult
    two_batch: TwoBatchResult | None
    collectives: dict
    options: RooflineOptions
    gpu_name: str
    #: compare's ``not_computed`` notes (:func:`schedule_notes`), keyed as compare keys them.
    not_computed: dict[str, str] = field(default_factory=dict)
    #: lines said under the collectives line (an expert skew past what EP allows).
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The result's document with its collectives, the overlapped step and schedule
        where asked (the entry search's best and serve's pools carry too), and
        ``not_computed`` where any."""
        tbo = self.two_batch
        extra = {"two_batch_overlap": tbo.to_dict(),
                 "two_batch_schedule": tbo.schedule_dict()} if tbo is not None else {}
        return {**self.result.to_dict(), "collectives": self.collectives, **extra,
                **_noted(self.options, self.result.model, self.gpu_name),
                **({"not_computed": self.not_computed} if self.not_computed else {})}

    def csv(self) -> str:
        """The serial step's per-stage breakdown as CSV (the result's own)."""
        return self.result.to_csv()

    def table(self) -> str:
        """The summary, the reason where one, the collectives and modes, the notes, a blank
        line, the stage table and the ``not_computed`` notes (no trailing newline)."""
        r = self.result
        extra = mode_lines(self.options, self.collectives, [self.gpu_name],
                           [r.model]) + list(self.notes)
        if self.two_batch is not None:
            extra += _two_batch_lines(r, self.two_batch)
        return "\n".join(summary_lines(r) + (["reason: " + r.reason] if r.reason else [])
                         + ["collectives: " + describe_collectives(self.collectives)] + extra
                         + [""] + stage_table(r)
                         + [f"note: {k}: {v}" for k, v in self.not_computed.items()])


def infer_report(model, gpu, tp: int, batch: int, workload, *, pp: int = 1, ep: int = 1,
                 attention_dp: int = 1, expert_skew: float = 1.0,
                 options: RooflineOptions, slo=None, comm=None, collectives: dict,
                 fabric_gpus: int | None = None, two_batch: bool = False) -> InferReport:
    """Cost one configuration (:func:`compute.evaluate_one.evaluate`; with ``two_batch``
    :func:`compute.two_batch.evaluate_two_batch`, whose serial step is the result) on the
    collectives ``comm`` described by ``collectives``; an instance larger than the fabric's
    ``fabric_gpus`` is refused, and so is ``options.dense_mlp_tp`` on plain TP, as the grid
    refuses it."""
    from compute.evaluate_one import evaluate

    check_fits(tp * pp, fabric_gpus, collectives)
    args = dict(pp=pp, ep=ep, attention_dp=attention_dp, expert_skew=expert_skew,
                options=options, slo=slo, comm=comm)
    tbo = None
    if two_batch:
        from compute.two_batch import evaluate_two_batch

        tbo = evaluate_two_batch(model, gpu, tp, batch, workload, **args)
        r = tbo.serial
    else:
        r = evaluate(model, gpu, tp, batch, workload, **args)
    if options.dense_mlp_tp is not None and pp == ep == attention_dp == 1:
        # plain TP's scalar paths leave dense_mlp_tp unread: refuse it as the grid does
        from compute.parallel import Parallelism, dense_data_parallel, layout

        c = [Parallelism(tp)]
        dense_data_parallel(model, c, layout(model, c), options.dense_mlp_tp)
    return InferReport(r, tbo, collectives, options, gpu.name, schedule_notes(comm),
                       tuple(_skew_note(model, ep, expert_skew)))


# ---- search --------------------------------------------------------------------------------

@dataclass(frozen=True)
class SearchReport:
    """The search's result with its collectives, modes and notes."""

    result: SearchResult
    collectives: dict
    options: RooflineOptions
    gpu_name: str
    not_computed: dict[str, str] = field(default_factory=dict)
    #: a mixture-of-experts model searched by plain TP alone: its name (the text says what
    #: else compare searches); None otherwise.
    plain_moe: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The search's document with the best configuration's in full, the collectives and
        ``not_computed`` where any."""
        r = self.result
        out = r.to_dict()
        if r.best is not None:
            out["best"] = r.best.to_dict()
        return {**out, "collectives": self.collectives,
                **_noted(self.options, r.model, self.gpu_name),
                **({"not_computed": self.not_computed} if self.not_computed else {})}

    def space(self) -> str:
        """The space searched in words: ``TP 1, 2, 4, 8``, or beyond plain TP
        ``N configurations of TP ..., PP ..., EP ..., DP-attention ...``."""
        r = self.result
        space = f"TP {', '.join(map(str, r.tp_degrees))}"
        if self._plain():
            return space
        return f"{len(r.configurations)} configurations of {space}, " + ", ".join(
            f"{name} {', '.join(map(str, sorted({c[key] for c in r.configurations})))}"
            for name, key in (("PP", "pp"), ("EP", "ep"), ("DP-attention", "attention_dp")))

    def _plain(self) -> bool:
        return all(c == {**c, "pp": 1, "ep": 1, "attention_dp": 1}
                   for c in self.result.configurations)

    def table(self, front: bool = False) -> str:
        """What was searched and how much fits and meets the SLO, the collectives and
        modes, the best configuration's summary (or why none), the best per TP degree (per
        configuration beyond plain TP), with ``front`` the latency / tokens-per-s-per-SM
        Pareto front, and the notes (no trailing newline)."""
        from compute.phases import latency_name
        from compute.units import format_time

        r = self.result
        lat = latency_name(r.phase).upper()
        mtp = bool(getattr(r.best, "mtp_tokens", 0))   # tables: the step; the SLO: TPOT
        out = [f"searched {r.evaluated} configurations ({self.space()} x batch "
               f"1..{r.max_batch}): {r.fitting} fit in memory, {r.feasible} also meet "
               f"{'TPOT' if mtp else lat} <= {format_time(r.latency_limit)}"]
        if mtp:
            lat = "step"
        out.append("collectives: " + describe_collectives(self.collectives))
        out += mode_lines(self.options, self.collectives, [self.gpu_name], [r.model])
        if r.best is None:
            out.append(f"no feasible configuration: {r.reason}")
        else:
            out += self._best(r, lat, front)
        out += [f"note: {k}: {v}" for k, v in self.not_computed.items()]
        if self.plain_moe is not None:
            out.append(f"note: plain tensor parallelism only; {self.plain_moe} is a mixture "
                       f"of experts, which compare ({named('parallelism')} auto) also "
                       f"spreads by expert and attention data parallelism: add "
                       f"{named('ep')} all {named('attention_dp')} all to search that too")
        return "\n".join(out)

    def _best(self, r: SearchResult, lat: str, front: bool) -> list[str]:
        out = ["best: " + "\n      ".join(summary_lines(r.best))]
        if r.best.batch == r.max_batch:   # the best sits at the largest batch searched
            from netmodel.study.rows import batch_limit_note

            out.append(f"      {batch_limit_note(r.max_batch)}")
        out.append("")
        if self._plain():
            out.append(f"best per TP degree:\n{'tp':>4}{'batch':>7}{lat + ' ms':>10}"
                       f"{'tokens/s':>11}{'tokens/s/SM':>13}")
            out += [f"{p.tp:>4}{p.batch:>7}{p.latency * 1e3:>10.2f}{p.tokens_per_s:>11.5g}"
                    f"{sig3(p.tokens_per_s_per_sm):>13}" for p in r.by_tp]
        else:
            out.append(f"best per configuration:\n{'tp':>4}{'pp':>4}{'ep':>5}{'dp-attn':>8}"
                       f"{'batch':>7}{lat + ' ms':>10}{'tokens/s':>11}{'tokens/s/SM':>13}")
            out += [f"{p.tp:>4}{p.pp:>4}{p.ep:>5}{p.attention_dp:>8}{p.batch:>7}"
                    f"{p.latency * 1e3:>10.2f}{p.tokens_per_s:>11.5g}"
                    f"{sig3(p.tokens_per_s_per_sm):>13}" for p in r.by_config]
        if front:
            out.append(f"\nPareto front ({len(r.front)} points):\n{'tp':>4}{'batch':>7}"
                       f"{lat + ' ms':>10}{'tokens/s/SM':>13}")
            out += [f"{p.tp:>4}{p.batch:>7}{p.latency * 1e3:>10.2f}"
                    f"{p.tokens_per_s_per_sm:>13.4g}" for p in r.front]
        return out


def search_report(model, gpu, workload, *, options: RooflineOptions, slo=None, comm=None,
                  collectives: dict, fabric_gpus: int | None = None, tp=None, pp=None,
                  ep=None, attention_dp=None, expert_skew: float = 1.0,
                  max_gpus: int | None = None, max_batch: int | None = None) -> SearchReport:
    """Search TP degrees (``tp``; with ``pp``, ``ep`` and ``attention_dp``, those too: a
    list, or True for ``ep``/``attention_dp``: every degree) and batches for the most
    tokens/s/SM under the SLO (:func:`compute.search.search`) on the collectives ``comm``;
    on a fabric of ``fabric_gpus`` every TP degree must fit it and instances stay within it
    (``max_gpus`` capped at it, as compare searches them)."""
    from compute.search import search

    if fabric_gpus is not None:
        for t in tp or ():
            check_fits(t, fabric_gpus, collectives)
        max_gpus = fabric_gpus if max_gpus is None else min(max_gpus, fabric_gpus)
    kwargs = {} if max_batch is None else {"max_batch": max_batch}
    r = search(model, gpu, workload, options=options, slo=slo, tp=tp, comm=comm, pp=pp, ep=ep,
               attention_dp=attention_dp, expert_skew=expert_skew, max_gpus=max_gpus,
               **kwargs)
    plain_moe = model.name if getattr(model, "experts", 0) > 1 and ep is None \
        and attention_dp is None else None
    return SearchReport(r, collectives, options, gpu.name, schedule_notes(comm), plain_moe)
