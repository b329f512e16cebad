"""Disaggregated serving (Splitwise, DistServe): a prefill pool and a decode pool on one
fabric, the KV cache of every request sent between them, and the pool ratio that balances
them for a workload.

**The pools.** Each pool runs its own best configuration: compute's SLO search
(:func:`compute.search.search`) of its phase, on the scenario's fabric
(:class:`~netmodel.study.scenario_collectives.ScenarioCollectives`), optionally on its own GPU type
(``prefill_gpu``, ``decode_gpu``: the scenario swapped to that GPU, as Splitwise's
heterogeneous clusters). The search space is TP x PP x EP x attention DP by default
(``dimensions="all"``; ``"tp"``: plain tensor parallelism), one instance of each pool fitting
on the fabric together (at most half its GPUs each). Prefill runs the request's prompt and
produces its first token; decode produces the other ``output - 1`` tokens at a context of
``prompt + output`` (the longest step, as :mod:`compute.phases`); with MTP a step emits
no more than are left (:func:`compute.mtp.mean_steps`). Of one output token there is no
decode step: the TBT SLO (and a decode GPU, MTP) not used, as a note says.

**The KV-cache transfer.** A request's cache is ``layers x kv_elements_per_token x
kv_bytes x prompt`` bytes (the latent once with multi-head latent attention). It moves on
``streams`` GPU pairs at once: the smaller of the two instances' counts of distinct KV
shards the batch's caches lie on (GPUs over KV copies, :func:`compute.parallel.kv_copies`;
with attention data parallelism a request's cache is in one attention group, so a batch
of ``b`` requests lies on ``min(b, attention_dp)`` groups' shards, and the busiest group
holds ``ceil(b / attention_dp)`` whole requests, which its pairs carry: a pair moves the
larger of ``b x bytes / streams`` and that group's share, on either instance). One pair's
time is the fabric model's ``send-recv`` between the first GPU of the prefill pool and the first of the
decode pool, the pools on the two halves of the fabric (the scenario's placement of two
groups of half its GPUs: on ``h100-dgx`` servers 0-1 and 2-3, so the caches cross the
scale-out rails; on an optical circuit-switched fabric, the circuits of the optical ports
each GPU sets aside for the KV cache, its instance's circuits set on the others, the split
searched: :mod:`netmodel.study.serving_transfer`);
with the pools' GPUs differing, each side at its own rate: a prefill GPU's bytes at the prefill
scenario's pair rate, a decode GPU's at the decode one's, the slower of the two (an H100 at
TP 1 x PP 2 sending 245.76 MB to 8 Lites of a decode stage is held by its own 50 GB/s NIC,
each Lite taking 30.72 MB at 12.5 GB/s). A prefill step of ``b`` prompts sends ``b`` caches:
``T = send-recv(b x bytes / streams)`` (or the busiest group's share, above). With one
output token there is no decode pool and nothing is sent (``T = 0``, no streams).

**Overlap, layer by layer** (Splitwise): layer ``i``'s cache is sent as soon as the prefill
has computed layer ``i``, while the later layers compute, so only the part of the transfer
that outlasts the rest of the prefill shows in the time to first token::

    visible = max(T_last, T - TTFT_prefill x (layers - 1) / layers)
    TTFT    = TTFT_prefill + visible          (must meet the TTFT SLO)

``T_last`` the last layer's part of ``T``: ``T / layers`` when every layer keeps the same
tokens; with sliding-window or chunked layers the last layer is a full-attention one (as
in gpt-oss, Gemma and Llama-4), which holds the whole prompt, ``T x prompt / (layers x
tokens held per layer on average)``. The last layer moves on the pairs that hold it: with
pipeline stages only the last stage's GPUs hold it (a layer's distinct KV shards are an
attention group's ``tp / attention_dp`` GPUs over its KV copies, not times ``pp``), so
where one layer's shards on either instance are fewer than ``streams``, ``T_last`` grows
by the ratio of a layer's stream bytes to ``T``'s: Llama-3-70B prefilled at TP 1 x PP 2
sends its last layer's 6.144 MB on one pair, ``T x 2 / 80``, not ``T / 80``. A pipelined
prefill runs its micro-batches one after the other (one prompt an attention group each:
:func:`compute.parallel.micro_batch`), so only the last micro-batch's last layer is left at
its end, one prompt's on each pair: ``1 / b`` of the batch's at TP 1 x PP 2 and batch 4,
``T x 2 / (80 x 4)``. And the last stage's pairs carry its layers only while it
computes, from when the first micro-batch reaches it to the end of the TTFT, so with pipeline
stages the part left is also at least what they cannot send in that window
(:func:`~netmodel.study.serving_cells._last_stage_left`): at TP 1 x PP 2 over a 0.5 GB/s
link, 245.76 MB a pair, T = 491.5 ms, of which 388.6 ms outlasts a 211.2 ms TTFT whose second half alone feeds the
second stage's pair (T - 211.2 x 79 / 80 = 283.0 ms were the stages' pairs busy from the
start).

and a prefill instance takes a new batch every ``max(I, T)`` (the transfer of one batch
overlaps the next batch's compute), ``I`` the prefill's latency, or with ``pp`` pipeline
stages the grid's steady-state interval
(:func:`~netmodel.study.serving_cells._prefill_interval`). The prefill
configuration is chosen on the search's whole grid with the transfer included (the most
prompt tokens/s/SM under the TTFT SLO), the decode one by its own search (under a load, of
its cells that meet the TBT SLO the best whose waits, below, let a prefill cell meet the
TTFT SLO: :func:`~netmodel.study.serving_queue.decode_choices`).

**The balance.** With ``R_p`` requests/s per prefill instance (``b / max(I, T)``)
and ``R_d`` per decode instance (``b / TBT / (output - 1)``), serving ``lambda`` requests/s
needs ``lambda / R_p`` prefill and ``lambda / R_d`` decode instances: the GPU ratio
``(G_d / R_d) / (G_p / R_p)`` decode GPUs per prefill GPU, and
``requests/s/SM = 1 / (S_p / R_p + S_d / R_d)`` (S: an instance's SMs). Tokens/s/SM counts
every token the service processes, ``(prompt + output) x requests/s/SM``; output tokens/s/SM
the generated ones. With a request ``rate``, whole instances are counted (``ceil``).

**Queueing.** Without a ``load`` the TTFT is that of the steps (no queueing). With the
workload's ``load`` ``rho`` (requests arriving, Poisson, at that fraction of the pools'
capacity) a request first waits for a prefill batch: the mean wait of a bulk-service
queue (batches of up to ``b`` prompts, a batch of ``k`` taking the cycle ``max(I, T)`` of
batch ``k``; M/D/1, DistServe's model, at batch 1; :mod:`netmodel.study.queueing`) is added
to the TTFT of each cell that can be chosen (:mod:`netmodel.study.serving_queue`), and the
SLO is checked on the sum, so a higher load may take a smaller batch. A request then
waits for a free slot of a decode instance (its batch's ``c`` sequences, each held for a
request's decode, ``c / R_d``; the requests come in the bunches the prefill cell's batches
send, of the sizes its bulk queue's batches take: M^X/D/c,
:func:`~netmodel.study.serving_queue.slot_wait`, each batch sent whole to one decode
instance at random, so with a rate's ``n`` decode instances ``1 / n`` of an instance's
requests are taken one by one, :func:`~netmodel.study.serving_queue.routed_sizes`; with
up to :data:`~netmodel.study.serving_sim.SIMULATED_DECODE` of them, whose arrivals are
correlated over many holds, the pools simulated, :mod:`netmodel.study.serving_sim`,
``decode_wait_se_s`` its standard error, ``decode_wait_model`` how it was found), before
its KV cache, which needs the slot's room, is sent: that wait is in the TTFT too,
and so is the wait to join the batch at its next step, half a step on average (steps of a
fixed length, a request ready at any phase of one; ``join_wait_s``); its TBT is that of
the full batch, at any load below capacity. With a rate too, the pools are sized
to run at that load: ``ceil(rate / (rho x R))`` instances of each. The search picks the
configuration at the stated load (the design point); whole instances then run at most at
it, and the waits and TTFT reported are those at the pools' achieved loads,
``rate / (instances x R)`` (the prefill pool's is ``achieved_load``; no longer than at the
stated load, so the SLO still holds; a simulated slot wait is not proven so, but was
below M^X/D/c at the stated load in every case measured: a TTFT over the SLO is said,
``ttft_within_slo`` false). Tokens/s/SM is the pools'
capacity; with a load they deliver ``rho x``
it (``delivered_tokens_per_s_per_sm``; with a rate, the rate's tokens/s over the SMs of
the sized pools' instances). Instances are costed alone on the fabric, as in
the rest of the study.

>>> r = serve("Llama-3-8B", "lite-flat", "coding", dimensions="tp", max_batch=64)
>>> r.feasible, r.workload.prompt, r.workload.output, r.ttft_s >= r.prefill.latency
(True, 1500, 13, True)
>>> r.kv_bytes_per_request == 32 * 2 * 8 * 128 * 2 * 1500
True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from compute import validate
from compute.comm import as_comm
from compute.errors import UserError
from compute.hardware import get_gpu
from compute.models import get_model
from compute.mtp import capped_best
from compute.parallel import SEARCH_PP, search_pp
from compute.phases import Slo, Workload, check_slo
from compute.roofline import check_options, check_skew
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH, best_of_equal, check_max_batch, search
from netmodel.study.queueing import load_text
from netmodel.study.rows import gpu_difference
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.serving_cells import _prefill_interval, cell_transfer  # noqa: F401
from netmodel.study.serving_queue import (
    cell_waits,
    decode_choices,
    decode_waits,
    fastest_waits,
    prefill_waits,
    sized_pools,
)
from netmodel.study.serving_result import DECODE_WAIT_MODELS, ServingResult
from netmodel.study.serving_transfer import (
    KvTransfer,
    best_split,
    check_kv_ports,
    kv_circuits,
    kv_splits,
    pool_scenario,
)
from netmodel.study.serving_workload import (
    MAX_RATE,
    MAX_TOKENS,
    MIN_RATE,
    SPLITWISE,
    WORKLOADS,
    ServingWorkload,
    get_workload,
    load_workload,
    number_allowed,
    with_load,
    with_rate,
)

if TYPE_CHECKING:
    from compute.comm import CommLike
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from netmodel.study.scenarios import Scenario

# the workload's names (netmodel.study.serving_workload) are said from here too
__all__ = ["DECODE_WAIT_MODELS", "DIMENSIONS", "MAX_RATE", "MAX_TOKENS", "MIN_RATE",
           "SPLITWISE", "WORKLOADS", "ServingResult", "ServingWorkload", "get_workload", "kv_bytes_per_request",
           "load_workload", "number_allowed", "serve", "with_load", "with_rate"]

#: Search spaces of the pools: every dimension, or plain tensor parallelism.
DIMENSIONS = ("all", "tp")
#: Pipeline depths tried by default (:data:`compute.parallel.SEARCH_PP`).
DEFAULT_PP = SEARCH_PP
def _check_context(model: ModelSpec, wl: ServingWorkload) -> None:
    """Refuse a workload whose requests outgrow ``model``'s ``max_context``: the prefill
    holds ``prompt`` tokens, the last decode step ``prompt + output`` (one output token: the
    prefill's alone). Said of the workload's two numbers, not of a context no one typed.

    >>> from compute.errors import UserError
    >>> try:
    ...     _check_context(get_model("Llama-3-8B"), ServingWorkload("long", 8000, 500))
    ... except UserError as exc:
    ...     print(exc)
    workload 'long': prompt 8000 + output 500 tokens is a context of 8500, past \
Llama-3-8B's max_context of 8192 tokens; allowed: prompt + output up to 8192 (a shorter \
workload, or a model file with a larger max_context)
    """
    tokens = wl.prompt + (wl.output if wl.output > 1 else 0)
    if model.max_context and tokens > model.max_context:
        raise UserError(f"workload {wl.name!r}: prompt {wl.prompt} + output {wl.output} "
                        f"tokens is a context of {tokens}, past {model.name}'s max_context "
                        f"of {model.max_context} token{'' if model.max_context == 1 else 's'}; "
                        f"allowed: prompt + output up to "
                        f"{model.max_context} (a shorter workload, or a model file with a "
                        f"larger max_context)")


def kv_bytes_per_request(model: str | ModelSpec, prompt: int) -> float:
    """Bytes of one request's KV cache after its prefill (every layer; the latent once
    with multi-head latent attention; a sliding-window layer keeps only its last window
    of tokens, a chunked layer the tokens of its current chunk,
    :meth:`compute.models.ModelSpec.kv_tokens_after_prefill`).

    >>> kv_bytes_per_request("Llama-3-70B", 1500) / 1e6
    491.52
    """
    m = get_model(model)
    prompt = validate.number("", "prompt", prompt, minimum=1, maximum=MAX_TOKENS, integer=True)
    return float(m.layers * m.kv_elements_per_token * m.kv_bytes * m.kv_tokens_after_prefill(prompt))


def _space(model, dimensions, pp, ep, attention_dp):
    """The search keywords of a pool: every dimension (PP among :data:`DEFAULT_PP` up to
    the layers, every EP and attention-DP degree) or plain TP; explicit ones win."""
    dimensions = validate.choice("serve", "dimensions", dimensions, DIMENSIONS)
    if dimensions == "all":
        pp = pp if pp is not None else search_pp(model)
        ep = ep if ep is not None else (True if model.is_moe else None)
        attention_dp = attention_dp if attention_dp is not None else True
    return {"pp": pp, "ep": ep, "attention_dp": attention_dp}


def _one_gpu_a_name(scen: Scenario, pre_s: Scenario, dec_s: Scenario) -> None:
    """Refuse two different GPUs of one name among the scenario's and the pools' (two GPU
    files defining ``Mine`` differently): the pools' collectives are kept by the scenario's
    label, ``NAME@GPU``, so the second would be costed on the first's fabric model, and
    the table would name both pools alike."""
    roles = (("the scenario's GPU", scen), ("prefill_gpu", pre_s), ("decode_gpu", dec_s))
    for i, (who_a, a) in enumerate(roles):
        for who_b, b in roles[i + 1:]:
            if a.gpu == b.gpu and a.gpu_spec != b.gpu_spec:
                key, va, vb = gpu_difference(a.gpu_spec, b.gpu_spec)
                raise UserError(f"{who_a} and {who_b} are two different GPUs named {a.gpu!r} "
                                f"({key} {va!r} and {vb!r}); give each its own name")


def serve(model: str | ModelSpec, scenario: str | Scenario,
          workload: str | Path | ServingWorkload = "coding", *,
          prefill_gpu: str | GpuSpec | None = None, decode_gpu: str | GpuSpec | None = None,
          slo: Slo | None = None, options: RooflineOptions | None = None,
          comm: CommLike | None = None, transfer: CommLike | None = None, dimensions: str = "all",
          tp: int | Sequence[int] | None = None, pp: int | Sequence[int] | None = None,
          ep: int | Sequence[int] | Literal[True] | None = None,
          attention_dp: int | Sequence[int] | Literal[True] | None = None,
          expert_skew: float = 1.0, max_batch: int = DEFAULT_MAX_BATCH,
          collectives: dict | None = None, kv_ports: int | None = None) -> ServingResult:
    """Disaggregated serving of ``model`` on ``scenario`` for ``workload`` (see the module
    docstring).

    Parameters
    ----------
    model : str or ModelSpec
    scenario : str or Scenario
        A shipped scenario, a ``.toml`` path, ``NAME@GPU``.
    workload : str, path or ServingWorkload
        ``coding`` (default) or ``conversation`` (Splitwise medians), or a workload file.
        Its ``load`` (:func:`with_load`) adds the mean wait for a prefill batch to the TTFT
        the SLO is checked on (see the module docstring); without one, no queueing.
    prefill_gpu, decode_gpu : str or GpuSpec, optional
        Each pool's GPU type (default the scenario's).
    slo, options
        As compute's search (default TTFT <= 1 s, TBT <= 50 ms). ``options.profile`` (an
        :class:`~compute.profiles.EngineProfile`) is the calibrated mode: both pools' step
        times are the profile's, as compare's; the KV transfer stays the fabric model's.
        ``options.two_batch_overlap``: each pool's steps may run as two micro-batches
        (:mod:`compute.two_batch`; the lesser of serial and overlapped, per configuration
        and batch); modelled on one pipeline stage, so the pools search PP 1 unless
        ``pp`` is given (PP > 1 is then refused).
    comm : CollectiveCostModel or callable, optional
        Replaces the fabric's collectives in both pools (and, unless ``transfer`` is given,
        the KV transfer's ``send-recv``); e.g. ``NoCommunication()`` for a free network.
    transfer : CollectiveCostModel or callable, optional
        Replaces the KV transfer's cost (``collective_time("send-recv", bytes, 2)``).
    dimensions : {"all", "tp"}
        The pools' search space (see :func:`_space`); ``tp``, ``pp``, ``ep``,
        ``attention_dp``, ``expert_skew`` and ``max_batch`` are passed to the search.
    collectives : dict, optional
        A cache of :class:`~netmodel.study.scenario_collectives.ScenarioCollectives` by scenario
        label, reused across calls.
    kv_ports : int, optional
        On an optical circuit-switched fabric, the ports each GPU sets aside for static KV
        circuits (:mod:`netmodel.study.serving_transfer`); default: the best split
        (:func:`~netmodel.study.serving_transfer.best_split`), or none with ``comm`` or
        ``transfer`` given. Refused on other fabrics.
    """
    from netmodel.study.fabric_search import instance_cap
    from netmodel.study.scenario_collectives import ScenarioCollectives

    model = get_model(model)
    scen = get_scenario(scenario)
    if kv_ports is not None:
        kv_ports = check_kv_ports(scen, kv_ports)
    elif comm is None and transfer is None and kv_splits(scen) != (0,):   # an OCS's best
        return best_split([serve(
            model, scen, workload, prefill_gpu=prefill_gpu, decode_gpu=decode_gpu, slo=slo,
            options=options, dimensions=dimensions, tp=tp, pp=pp, ep=ep,
            attention_dp=attention_dp, expert_skew=expert_skew, max_batch=max_batch,
            collectives=collectives, kv_ports=k) for k in kv_splits(scen)])
    wl = get_workload(workload)
    _check_context(model, wl)
    slo = check_slo(slo)
    options = check_options(options)
    # Python's numbers in the settings: numpy's int64 and float32 failed to_json
    max_batch, expert_skew = check_max_batch(max_batch), check_skew(expert_skew)
    cache = validate.of_type("collectives", collectives, dict, "{}")
    cache = cache if cache is not None else {}

    pooled: dict = {}   # pool_scenario of this call's scenarios (alive throughout), by id

    def coll_for(s: Scenario, kv: int = 0) -> ScenarioCollectives:
        # a cached one of another scenario of this label (a GPU file defining the name
        # differently, an earlier call's) is not this one's: made again, as compare's
        # (an OCS's pools with ports set aside for the KV: kept apart, by their ports)
        key = s.label if not kv else f"{s.label} with {kv} KV ports"
        hit = pooled.get((id(s), kv))
        if hit is None:   # asked of the pools, the fabric and the instance cap
            hit = pooled[(id(s), kv)] = pool_scenario(s, kv)
        s = hit
        if key not in cache or cache[key].scenario != s:
            cache[key] = ScenarioCollectives(s)
        return cache[key]

    pre_s = scen if prefill_gpu is None else scen.with_gpu(get_gpu(prefill_gpu))
    dec_s = scen if decode_gpu is None else scen.with_gpu(get_gpu(decode_gpu))
    _one_gpu_a_name(scen, pre_s, dec_s)
    fabric = coll_for(scen).gpus
    if fabric < 2:
        raise UserError(f"scenario {scen.label!r} has {fabric} GPU; disaggregated serving needs "
                        f"at least 2 (a prefill and a decode instance)")
    override = None if comm is None else as_comm(comm)
    kvp = kv_ports or 0   # an OCS's ports a GPU sets aside for the KV circuits
    pre_c = override or coll_for(pre_s, kvp)
    dec_c = override or coll_for(dec_s, kvp)
    moved = as_comm(transfer) if transfer is not None else override
    pools = {s.label: s for s in (pre_s, dec_s)}
    xfer = KvTransfer([coll_for(s) for s in pools.values()] if moved is None else [], moved)
    xfer.sides = None if moved is not None or len(pools) < 2 else (coll_for(pre_s),
                                                                   coll_for(dec_s))
    xfer.kv_ports = kvp
    if (options.two_batch_overlap or options.mtp_tokens) and pp is None:
        pp = 1   # two-batch overlap and MTP are modelled on one pipeline stage: no PP searched
    space = _space(model, dimensions, pp, ep, attention_dp)
    cap = instance_cap(coll_for(scen, kvp))   # e.g. an OCS with one port per GPU: 2
    most = fabric // 2 if cap is None else min(fabric // 2, cap)
    common = dict(options=options, slo=slo, tp=tp, expert_skew=expert_skew,
                  max_gpus=most, max_batch=max_batch, **space)
    kv = kv_bytes_per_request(model, wl.prompt)
    settings = {"slo": slo.to_dict(), "dimensions": dimensions,
                "prefill_gpu": pre_s.gpu, "decode_gpu": dec_s.gpu,
                "network": "custom" if override is not None else "fabric",
                "transfer": "custom" if transfer is not None else
                ("custom" if override is not None else "fabric send-recv"),
                "expert_skew": expert_skew, "max_batch": max_batch, "max_gpus": most,
                "options": options.to_dict()}
    if kvp:
        settings["kv_ports"] = kvp
    base = dict(model=model.name, scenario=scen.label, workload=wl, kv_bytes_per_request=kv,
                ttft_limit_s=slo.ttft, tbt_limit_s=slo.tbt, fabric_gpus=fabric,
                settings=settings)
    # the pools' instances = "all" charges that fall back to the lockstep past the schedule
    # in time's budget, noted in the settings as compare notes them (not_computed)
    watched = [c for c in dict.fromkeys((pre_c, dec_c))
               if isinstance(c, ScenarioCollectives) and c.concurrent]
    marks = [c.budget_mark() for c in watched]

    def noted() -> dict:
        for c, mark in zip(watched, marks, strict=True):
            said = c.schedule_notes(mark)
            if said:
                settings.setdefault("not_computed", {}).update(said)
        return base

    decode_tokens = wl.output - 1            # the first token comes out of the prefill
    dec = None
    if not decode_tokens:   # what is set for decode goes unused: said, not silently dropped
        unused = [f"the TBT SLO ({slo.tbt * 1e3:g} ms)",
                  *(["the decode GPU"] if decode_gpu is not None else []),
                  *(["the MTP drafts"] if options.mtp_tokens else [])]
        settings.setdefault("not_computed", {})["decode"] = (
            f"one output token, the prefill's: no decode step, so {', '.join(unused[:-1])}"
            f"{' and ' if len(unused) > 1 else ''}{unused[-1]} {'are' if len(unused) > 1 else 'is'} "
            f"not used")
    if decode_tokens > 0:
        dres = search(model, dec_s.gpu_spec, Workload("decode", prompt=wl.prompt,
                                                      context=wl.prompt + wl.output),
                      comm=dec_c, **common)
        dec, why = capped_best(dres, decode_tokens)   # MTP: no more than are left
        if dec is None:
            return ServingResult(feasible=False, reason=f"decode: {why}", **noted())
    pres = search(model, pre_s.gpu_spec, Workload("prefill", prompt=wl.prompt), comm=pre_c,
                  **common)
    grid = pres.grid
    if not grid.fits.any():
        return ServingResult(feasible=False, reason=f"prefill: {pres.reason}", **noted(),
                             decode=dec)

    def cells(dec):
        """Each prefill cell with the decode instance ``dec``: its transfer and cycle, and
        with a load the waits (a prefill batch's bulk service, :mod:`netmodel.study.
        queueing`, and a decode slot's as that cell's batches bring the requests, M^X/D/c,
        of the cells it can choose among, :mod:`netmodel.study.serving_queue`; nan
        elsewhere, never ok; and half a step to join)."""
        streams, t_x, visible, cycle = cell_transfer(model, wl, grid, dec, kv, xfer)
        score = grid.tokens_per_step / cycle / (grid.gpus * grid.gpu.sms)
        d_rate = None if dec is None else dec.tokens_per_step / dec.latency / decode_tokens
        slots, join = (None, None) if wl.load is None or dec is None else (
            (wl.load, dec.batch, d_rate), decode_waits(wl.load, dec, decode_tokens)[1])
        # a decode slot first (the KV's room; in the cell's wait), then the step it joins at
        steps = grid.latency + visible + (join or 0.0)
        ttft, wait = steps, None
        if wl.load is not None:
            wait = prefill_waits(wl.load, cycle, grid.batches, steps, grid.fits, slo.ttft, score,
                                 slots)
            ttft = steps + wait
        return streams, t_x, visible, cycle, score, d_rate, slots, join, steps, ttft, wait

    # under a load the decode instance's waits count against the TTFT SLO as the prefill's:
    # of the decode cells that meet the TBT SLO, the best whose waits let a prefill cell
    # meet it (decode_choices: the search's best first, then only those that wait less)
    first = dec
    for dec in ([first] if wl.load is None or first is None else
                decode_choices(dres, decode_tokens, wl.load, first)):
        streams, t_x, visible, cycle, score, d_rate, slots, join, steps, ttft, wait = cells(dec)
        if (grid.fits & (ttft <= slo.ttft)).any():
            break
    else:   # none: the search's best decode instance is said
        if dec is not first:
            dec = first
            streams, t_x, visible, cycle, score, d_rate, slots, join, steps, ttft, wait = (
                cells(dec))
    ok = grid.fits & (ttft <= slo.ttft)
    if not ok.any():
        if wait is not None:   # the fastest with its wait, of every cell that fits
            wait = fastest_waits(wl.load, cycle, steps, grid.fits, wait, slots)
            ttft = steps + wait
        i, j = np.unravel_index(int(np.argmin(np.where(grid.fits & ~np.isnan(ttft), ttft,
                                                       np.inf))), ttft.shape)
        q_wait, d_wait = (None, None) if wait is None else cell_waits(
            wl.load, cycle, np.ravel_multi_index((i, j), ttft.shape), slots)
        waited = "" if wait is None else (f", {q_wait * 1e3:.4g} ms waiting for its batch "
                                           f"at load {load_text(wl.load)}" + (
                                               "" if slots is None else
                                               f", {d_wait * 1e3:.3g} ms for a decode slot "
                                               f"and {join * 1e3:.3g} ms to its step"))
        return ServingResult(
            feasible=False, decode=dec, **noted(),
            reason=f"prefill: no configuration that fits in memory meets TTFT <= "
                   f"{slo.ttft * 1e3:.4g} ms with the KV transfer"
                   f"{'' if wait is None else ' and the queueing wait'}; the fastest "
                   f"({grid.configs[i].label}, batch {int(grid.batches[j])}) takes "
                   + (f"{ttft[i, j] * 1e3:.4g} ms ({visible[i, j] * 1e3:.3g} ms of transfer"
                      f"{waited})" if np.isfinite(visible[i, j]) else "forever: no optical "
                      "port is free at both ends for the KV cache"))
    # of the equal best rates (a pipelined pool's differ only by rounding), the lowest TTFT
    i, j = np.unravel_index(best_of_equal(np.where(ok, score, -np.inf), ok, ttft), score.shape)
    pre = grid.result(int(i), int(j))

    p_rate = pre.batch / float(cycle[i, j])
    s_p = pre.gpus * pre_s.gpu_spec.sms
    sm_s = s_p / p_rate                       # SM-seconds per request
    gpu_p = pre.gpus / p_rate
    ratio = 0.0
    if dec is not None:   # d_rate: MTP's expected tokens a step
        sm_s += dec.gpus * dec_s.gpu_spec.sms / d_rate
        ratio = (dec.gpus / d_rate) / gpu_p
    rps = 1.0 / sm_s
    if kvp and dec is not None and moved is None:   # the chosen pair's KV circuits
        settings["kv_circuits"] = kv_circuits(kvp, max(kv_splits(scen)) + 1, pre.gpus,
                                              dec.gpus)
    extra = {}
    cell = np.ravel_multi_index((i, j), ttft.shape)
    wait_ij, d_wait = (None, None) if wait is None else cell_waits(wl.load, cycle, cell, slots)
    if wl.rate is not None:   # with a load, instances enough to run at it
        extra, wait_ij, d_wait = sized_pools(wl.rate, wl.load, p_rate, d_rate, pre, dec,
                                             cycle, cell, slots, wait_ij, d_wait)
        n_p, n_d = extra["prefill_instances"], extra["decode_instances"]
    ttft_ij = float(steps[i, j]) + (wait_ij or 0.0) + (d_wait or 0.0)
    if slots is None:
        d_wait = None
    elif "decode_wait_model" not in extra:
        extra["decode_wait_model"] = "M^X/D/c"
    tokens = (wl.prompt + wl.output) * rps
    if wl.load is not None:   # what the pools deliver: at the load, or the sized pools' rate
        extra["delivered_tokens_per_s_per_sm"] = wl.load * tokens
        if wl.rate is not None:
            sms = n_p * s_p + (n_d * dec.gpus * dec_s.gpu_spec.sms if dec is not None else 0)
            extra["delivered_tokens_per_s_per_sm"] = wl.rate * (wl.prompt + wl.output) / sms
    return ServingResult(
        feasible=True, prefill=pre, decode=dec, **noted(),
        transfer_streams=int(streams[i, j]), transfer_s=float(t_x[i, j]),
        transfer_visible_s=float(visible[i, j]), ttft_s=ttft_ij, queue_wait_s=wait_ij,
        decode_wait_s=d_wait, join_wait_s=join,
        tbt_s=None if dec is None else dec.tpot, prefill_rate=p_rate, decode_rate=d_rate,
        decode_gpus_per_prefill_gpu=ratio, requests_per_s_per_sm=rps,
        tokens_per_s_per_sm=tokens, output_tokens_per_s_per_sm=wl.output * rps, **extra)
