"""The result of disaggregated serving (:func:`netmodel.study.serving.serve`): the pools'
configurations, the KV-cache transfer, the waits, the pool ratio and the rates of one model
on one scenario for one workload, as a table and as ``netmodel serve --json``'s dict."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from compute.parallel import Parallelism
from compute.units import counted
from netmodel.study.queueing import load_text
from netmodel.study.serving_workload import ServingWorkload
from netmodel.study.summary_words import request_lengths, sig3

if TYPE_CHECKING:
    from compute.results import InferenceResult


def _config(r) -> dict | None:
    if r is None:
        return None
    tbo = r.two_batch_summary()   # with two-batch overlap allowed: was it taken
    return {"tp": r.tp, "pp": r.pp, "ep": r.ep, "attention_dp": r.attention_dp,
            "gpus": r.gpus, "gpu": r.gpu, "batch": r.batch, "latency_s": r.latency,
            "latency_name": r.latency_name, **({} if tbo is None else {"two_batch_overlap": tbo}),
            **({} if r.dense_mlp_tp is None else {"dense_mlp_tp": r.dense_mlp_tp}),
            **({} if not r.mtp_tokens else {"mtp": r.to_dict()["mtp"]})}


def _num(x):
    return None if x is None or not math.isfinite(x) else float(x)


#: How :attr:`ServingResult.decode_wait_s` is found with a load (its ``decode_wait_model``):
#: M^X/D/c of the prefill cell's bunches (no rate); of the bunches as routed to more than
#: :data:`~netmodel.study.serving_sim.SIMULATED_DECODE` sized instances; the sized pools
#: simulated, the run whole or cut by the budget (the warm-up dropped short: the standard
#: error an underestimate); and 0 with no simulation where no hold can bring more than
#: the decode batch's slots
DECODE_WAIT_MODELS = ("M^X/D/c", "M^X/D/c, routed", "simulated", "simulated, cut by the budget",
                      "none waits")


@dataclass(frozen=True, eq=False)
class ServingResult:
    """The disaggregated service of one model on one scenario for one workload (see
    :mod:`netmodel.study.serving`'s docstring). Figures are None where the service is
    infeasible (``reason``)."""

    model: str
    scenario: str                     #: label of the scenario (``name@gpu``)
    workload: ServingWorkload
    feasible: bool
    reason: str = ""
    prefill: InferenceResult | None = None  #: the prefill instance's InferenceResult
    decode: InferenceResult | None = None   #: the decode instance's (None when output is 1)
    kv_bytes_per_request: float = 0.0
    transfer_streams: int = 0         #: GPU pairs the caches move on at once
    transfer_s: float | None = None   #: sending one prefill batch's caches
    transfer_visible_s: float | None = None   #: what of it shows in the TTFT
    ttft_s: float | None = None       #: prefill + visible transfer (+ queue_wait_s)
    queue_wait_s: float | None = None   #: with a load: mean wait for a prefill batch
    decode_wait_s: float | None = None  #: with a load: mean wait for a decode slot (M^X/D/c)
    #: with a load and a rate whose decode pool is
    #: :data:`~netmodel.study.serving_sim.SIMULATED_DECODE` instances or fewer:
    #: ``decode_wait_s`` is simulated (:mod:`netmodel.study.serving_sim`), this its
    #: standard error (None where no hold can bring more than its slots: 0, not simulated)
    decode_wait_se_s: float | None = None
    #: how ``decode_wait_s`` was found: one of :data:`DECODE_WAIT_MODELS` (None without one)
    decode_wait_model: str | None = None
    join_wait_s: float | None = None    #: with a load: to the decode's next step, half one
    #: with a load and a rate: the load the sized prefill pool runs at, ``rate / (instances
    #: x R_p)`` (at most the stated one), at which ``queue_wait_s`` and ``ttft_s`` are taken
    achieved_load: float | None = None
    tbt_s: float | None = None
    ttft_limit_s: float = 0.0
    tbt_limit_s: float = 0.0
    prefill_rate: float | None = None  #: requests/s of one prefill instance
    decode_rate: float | None = None   #: requests/s of one decode instance
    decode_gpus_per_prefill_gpu: float | None = None   #: the balanced pool ratio
    requests_per_s_per_sm: float | None = None
    tokens_per_s_per_sm: float | None = None          #: prompt + output tokens
    output_tokens_per_s_per_sm: float | None = None

    #: with a load: the tokens/s/SM the pools deliver, ``load x`` :attr:`tokens_per_s_per_sm`
    #: (their capacity, at load 1); with a rate too, that of the sized pools, ``rate x``
    #: (prompt + output) over the SMs of every instance they hold
    delivered_tokens_per_s_per_sm: float | None = None
    prefill_instances: int | None = None   #: with a rate: whole instances needed
    decode_instances: int | None = None
    gpus_used: int | None = None
    fabric_gpus: int = 0
    settings: dict = field(default_factory=dict)

    @property
    def fits_fabric(self) -> bool | None:
        """With a rate: whether the pools fit the scenario's GPUs."""
        return None if self.gpus_used is None else self.gpus_used <= self.fabric_gpus

    @property
    def ttft_within_slo(self) -> bool | None:
        """Whether the TTFT reported meets the TTFT SLO (None where infeasible). The
        configuration is chosen by the waits at the stated load; with a rate the waits
        reported are the sized pools', the decode slot's simulated with a few decode
        instances, which no bound ties to the one it was chosen by: it may miss."""
        if not self.feasible:
            return None
        return self.ttft_s <= self.ttft_limit_s * (1 + 1e-12)   # the search's, rounded

    def why_ttft_unmet(self) -> str:
        """Why a reported TTFT may miss the SLO its configuration was chosen to meet."""
        w, how = self.workload, self.decode_wait_model or ""
        return ("the configuration was chosen to meet it"
                + ("" if w.load is None else f" at load {load_text(w.load)}")
                + ("" if self.achieved_load is None else
                   "; this is the sized pools' TTFT at their loads"
                   + (", the decode slot's wait simulated" if how.startswith("simulated")
                      else "")))

    def to_dict(self) -> dict:
        """JSON-ready dict (the shape of ``netmodel serve --json``)."""
        return {
            "model": self.model, "scenario": self.scenario, "workload": self.workload.to_dict(),
            "feasible": self.feasible, "reason": self.reason or None,
            "prefill": _config(self.prefill), "decode": _config(self.decode),
            "kv_bytes_per_request": self.kv_bytes_per_request,
            "transfer_streams": self.transfer_streams, "transfer_s": _num(self.transfer_s),
            "transfer_visible_s": _num(self.transfer_visible_s), "ttft_s": _num(self.ttft_s),
            "queue_wait_s": _num(self.queue_wait_s), "decode_wait_s": _num(self.decode_wait_s),
            "decode_wait_se_s": _num(self.decode_wait_se_s),
            "decode_wait_model": self.decode_wait_model,
            "join_wait_s": _num(self.join_wait_s), "achieved_load": _num(self.achieved_load),
            "tbt_s": _num(self.tbt_s), "ttft_limit_s": self.ttft_limit_s,
            "ttft_within_slo": self.ttft_within_slo,
            "tbt_limit_s": self.tbt_limit_s, "prefill_rate_per_s": _num(self.prefill_rate),
            "decode_rate_per_s": _num(self.decode_rate),
            "decode_gpus_per_prefill_gpu": _num(self.decode_gpus_per_prefill_gpu),
            "requests_per_s_per_sm": _num(self.requests_per_s_per_sm),
            "tokens_per_s_per_sm": _num(self.tokens_per_s_per_sm),
            "output_tokens_per_s_per_sm": _num(self.output_tokens_per_s_per_sm),
            "delivered_tokens_per_s_per_sm": _num(self.delivered_tokens_per_s_per_sm),
            "prefill_instances": self.prefill_instances,
            "decode_instances": self.decode_instances, "gpus_used": self.gpus_used,
            "fabric_gpus": self.fabric_gpus, "fits_fabric": self.fits_fabric,
            "settings": self.settings,
        }

    def _waited(self) -> float:
        """Seconds of the TTFT spent waiting (a prefill batch, a decode slot, its step)."""
        return sum(w or 0.0 for w in (self.queue_wait_s, self.decode_wait_s, self.join_wait_s))

    def _slot_wait(self) -> str:
        """The decode slot's wait, and how it was found where not by a closed form."""
        how = self.decode_wait_model
        if how == "none waits":
            return (f"0 ms for a decode slot (no hold can bring more than its "
                    f"{self.decode.batch} slots)")
        said = f"{self.decode_wait_s * 1e3:.2f} ms for a decode slot"
        if how not in ("simulated", "simulated, cut by the budget"):
            return said
        return (f"{said} (simulated, standard error {self.decode_wait_se_s * 1e3:.2f} ms"
                + ("" if how == "simulated" else ", cut by the budget: an underestimate")
                + ")")

    def _circuits(self) -> str:
        """On an OCS: the KV circuits a stream has and the ports they take."""
        kv, c = self.settings.get("kv_ports"), self.settings.get("kv_circuits")
        return "" if c is None else (f" on {counted(c, 'circuit')} each ({kv} of each "
                                     f"GPU's optical ports set aside for the KV)")

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def _delivered_at(self) -> str:
        """Where :attr:`delivered_tokens_per_s_per_sm` is taken, in words."""
        w = self.workload
        if self.gpus_used is not None:
            return f"by the sized pools at {w.rate:g} requests/s"
        return f"at load {load_text(w.load)}"

    def table(self) -> str:
        """A plain-text summary."""
        w = self.workload
        head = (f"{self.model} on {self.scenario}, workload {w.name} ("
                + request_lengths(w.prompt, w.output)
                + (f", {w.rate:g} requests/s" if w.rate else "")
                + (f", load {load_text(w.load)}" if w.load is not None else "") + ")")
        notes = [f"note: {k}: {v}" for k, v in self.settings.get("not_computed", {}).items()]
        if not self.feasible:
            return "\n".join([head, f"infeasible: {self.reason}", *notes])
        lines = [head]
        for label, r in (("prefill", self.prefill), ("decode", self.decode)):
            if r is None:
                lines.append(f"  {label:<8} none (one output token: prefill produces it)")
                continue
            par = Parallelism.of(r).label
            capped = " (the search's largest batch: a larger one may do better)" \
                if r.batch == self.settings.get("max_batch") else ""
            most = self.settings.get("max_gpus")
            wide = (f" (the widest instance a pool may take, {most} of the fabric's "
                    f"{self.fabric_gpus} GPUs: a wider one may do better)") \
                if most is not None and r.gpus >= most else ""
            tbo = r.two_batch_summary()
            tbo = "" if tbo is None else (
                f" (two-batch overlap {'taken' if tbo['used'] else 'not taken'}: serial step "
                f"{tbo['serial_latency_s'] * 1e3:.2f} ms)")
            if r.mtp_tokens:   # MTP decode: the step and its expected tokens
                e = f"{r.mtp_expected:.3g}"
                tbo += (f" (MTP {r.mtp_tokens} draft, {e} token{'' if e == '1' else 's'} a step: "
                        f"TPOT {r.tpot * 1e3:.2f} ms)")
            lines.append(f"  {label:<8} {r.gpus} x {r.gpu} ({par}){wide}, batch {r.batch}{capped}, "
                         f"{r.latency_name.upper()} {r.latency * 1e3:.2f} ms{tbo}, "
                         f"{(self.prefill_rate if label == 'prefill' else self.decode_rate):.4g} "
                         f"requests/s per instance")
        lines += [
            f"  KV cache {self.kv_bytes_per_request / 1e6:.4g} MB per request, "
            + (f"{counted(self.transfer_streams, 'stream')}{self._circuits()}: "
               f"{self.transfer_s * 1e3:.3g} ms per "
               f"prefill batch, {self.transfer_visible_s * 1e3:.3g} ms of it in the TTFT (layer "
               f"by layer)" if self.decode is not None else "not sent (no decode pool)"),
            f"  TTFT {self.ttft_s * 1e3:.2f} ms" + (
                " of the steps, no queueing" if self.queue_wait_s is None else
                f": {(self.ttft_s - self._waited()) * 1e3:.2f} "
                f"ms of the steps + {self.queue_wait_s * 1e3:.2f} ms waiting for a prefill batch"
                + ("" if self.achieved_load is None else
                   f" at the sized pool's load {load_text(self.achieved_load, 3)}")
                + ("" if self.decode_wait_s is None else
                   f" + {self._slot_wait()} + "
                   f"{self.join_wait_s * 1e3:.2f} ms to its next step"))
            + f" (SLO {self.ttft_limit_s * 1e3:g} ms"
            + ("" if self.ttft_within_slo else f": NOT met, {self.why_ttft_unmet()}") + ")"
            + (f", TBT {self.tbt_s * 1e3:.2f} ms (SLO {self.tbt_limit_s * 1e3:g} ms)"
               if self.tbt_s is not None else ""),
            f"  pools: {self.decode_gpus_per_prefill_gpu:.3g} decode GPUs per prefill GPU; "
            f"{sig3(self.requests_per_s_per_sm)} requests/s/SM, {sig3(self.tokens_per_s_per_sm)} "
            f"tokens/s/SM ({sig3(self.output_tokens_per_s_per_sm)} output tokens/s/SM) at "
            f"capacity" + ("" if self.delivered_tokens_per_s_per_sm is None else
                           f"; delivered {self._delivered_at()}: "
                           f"{sig3(self.delivered_tokens_per_s_per_sm)} tokens/s/SM"),
        ]
        if self.gpus_used is not None:
            lines.append(f"  at {w.rate:g} requests/s: {self.prefill_instances} prefill + "
                         f"{self.decode_instances} decode instances, {self.gpus_used} GPUs of "
                         f"{self.fabric_gpus} ({'fits' if self.fits_fabric else 'does NOT fit'}"
                         f" the fabric)")
        return "\n".join(lines + notes)
