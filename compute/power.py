"""GPU power: the draw when idle, in prefill and in decode, and a clock knob.

The draw follows the step's load (rows of ``compute/data/economics.toml`` with their sources):

    P = P_idle + (TDP - P_idle) x a,   a = <min(1, u_c / f_tdp + m x u_m)>

(``<>``: the time average over the step's stages) where ``u_c`` and ``u_m`` are the shares of a stage's time the
roofline keeps the tensor cores (at peak FLOP/s) and HBM (at peak bandwidth) busy,
``f_tdp`` (``flop_utilization_at_tdp``, 0.7) the FLOP utilization at
which a GPU draws its TDP (Epoch measured an H100 at 700 W at 70%) and ``m``
(``memory_power_share``, 0.354) the share of the above-idle range a step streaming HBM the
whole time draws (batch-1 decode: 300 W on an H100). Idle is 0.115 of TDP (an H200 idles
at 80 W of 700), the TDP at the GPU's own clock (:func:`unclocked_tdp`: a clock it runs at
only under load, a derived GPU's raised one included, moves no idle draw). A collective's
time counts in ``u_m``: its kernels stream the message with the tensor cores idle, the
state batch-1 decode measures (an assumption: no published
draw of a GPU in an all-reduce; the links' own 1.3 pJ/bit at 450 GB/s is 5 W).
So decode draws more as its batch grows (more FLOPs per weight byte), prefill near TDP,
never more than TDP nor less than idle. A derived GPU (the Lite family) moves an HBM byte at
its base's energy: its HBM's share of the stream draws :func:`hbm_share` in place of ``m``
(a doubled HBM twice its fraction's watts while streaming). One whose ``flops_multiplier``
raises its clock is the same die run at that clock and is costed so (:func:`unclocked`:
Lite+BW+FLOPS is Lite+BW at 1.2x, the clock knob's law below on both).

The clock knob (the Lite-GPU paper's per-die power management): at ``r`` times the nominal
SM clock, FLOP/s scale by ``r`` (HBM and network bandwidth do not: they have clocks of their
own), and the draw above idle follows a clock-power law

    P(r) = P_idle + (P_load - P_idle) x [c x r V(r)^2 + (1 - c)],   V(r) = max(v_min, r)

where ``c`` (``clock_core_share``) is the share of the above-idle draw in the SM clock
domain: dynamic power C f V^2 with the voltage following the clock (V ~ f) down to a floor
``v_min`` (``clock_voltage_floor``), below which only f falls. The rest (HBM, I/O) and the
idle draw (static) do not follow the clock. The rated power at a clock is the same law
applied to the TDP. Clock ratios are accepted between ``clock_ratio_min`` and
``clock_ratio_max``.

>>> from compute.evaluate_one import evaluate
>>> one, many = (evaluate("Llama-3-8B", "H100-SXM", 1, b) for b in (1, 128))
>>> round(gpu_power("H100-SXM", "idle"), 1), round(gpu_power("H100-SXM", "decode", one), 1)
(80.5, 302.9)
>>> round(gpu_power("H100-SXM", "decode", many), 1)
447.8
>>> lite = overclocked_lite(1.2)
>>> lite.name, round(lite.flops_bf16 / get_gpu("Lite").flops_bf16, 3), round(lite.tdp, 1)
('Lite@1.2x', 1.2, 259.6)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from compute.clock_power import ClockPowerLaw, idle_frac, rated_at_clock
from compute.errors import UserError, chosen, known, lookalike
from compute.hardware import GpuSpec, clock_lineage, get_gpu
from compute.rows import check_number
from compute.validate import describe, listed, of_type
from compute.yield_model import parameter

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from compute.results import InferenceResult

__all__ = ["LOAD_PARAMETERS", "POWER_STATES", "ClockPoint", "ClockPowerLaw", "activity",
           "clock_of", "clock_sweep", "gpu_at_clock", "gpu_power", "hbm_share", "idle_frac",
           "nominal_spec", "nominal_tdp", "overclocked_lite", "unclocked", "unclocked_tdp"]

#: The power states a GPU is in.
POWER_STATES = ("idle", "prefill", "decode")
#: The economics.toml rows that turn a step's load into its activity (see the module doc).
LOAD_PARAMETERS = ("flop_utilization_at_tdp", "memory_power_share")


def _fraction(name: str, value: object) -> float:
    """``value`` as a float if it is a finite number >= 0 (numpy's and fractions too; an
    integer past a float's range is refused by name, as compute.rows.check_number does)."""
    return check_number(name, value)


def _law(law: object) -> ClockPowerLaw:
    """``law``, or the shipped :class:`ClockPowerLaw` for None; anything else refused by
    name (a float raised AttributeError inside)."""
    return of_type("law", law, ClockPowerLaw, "ClockPowerLaw(core_share=0.8)") or ClockPowerLaw()


def activity(step: InferenceResult, *, flop_utilization_at_tdp: float | None = None,
             memory_power_share: float | None = None,
             hbm_power_share: float | None = None) -> float:
    """The share of the above-idle range (TDP - idle) a GPU draws serving ``step``: the
    time average over its stages of ``min(1, u_c / flop_utilization_at_tdp +
    memory_power_share x u_m)``, ``u_c`` and ``u_m`` the shares of the stage's time the
    tensor cores and HBM (or, in a collective, the links) are busy at peak rate.

    >>> from compute.evaluate_one import evaluate
    >>> round(activity(evaluate("Llama-3-8B", "H100-SXM", 1, 1)), 3)  # memory-bound
    0.359
    >>> round(activity(evaluate("Llama-3-8B", "H100-SXM", 1, 4, "prefill")), 3)  # GEMMs at TDP
    0.998
    """
    f = _fraction("flop_utilization_at_tdp", parameter("flop_utilization_at_tdp")
                  if flop_utilization_at_tdp is None else flop_utilization_at_tdp)
    m = _fraction("memory_power_share", parameter("memory_power_share")
                  if memory_power_share is None else memory_power_share)
    if not 0 < f <= 1:
        raise UserError(f"flop_utilization_at_tdp must be in (0, 1], got "
                        f"{flop_utilization_at_tdp!r}")
    if m > 1:
        raise UserError(f"memory_power_share must be <= 1, got {memory_power_share!r}")
    h = m if hbm_power_share is None else _fraction("hbm_power_share", hbm_power_share)
    step_time = step.latency
    if not (math.isfinite(step_time) and step_time > 0):
        raise UserError(f"step time must be a finite number > 0, got {step_time!r}")
    # stage by stage (the draw is capped at TDP at every instant, not on average); a
    # collective streams its message with tensor cores idle: it draws as HBM streaming
    # does; a profile's fixed overheads (in the step time, in no stage) draw idle power
    busy = 0.0
    for s in step.stages:
        if s.time > 0:
            stream = min(1.0, (s.memory_time + s.network_time) / s.time)
            if h == m:
                draw = m * stream
            else:   # the HBM's share of the stream at its own draw, the links' at m
                hbm = stream * s.memory_time / (s.memory_time + s.network_time)
                draw = h * hbm + m * (stream - hbm)
            busy += s.count * s.time * min(1.0, s.compute_time / s.time / f + draw)
    return min(1.0, busy / step_time)


def clock_of(gpu: str | GpuSpec) -> float:
    """The clock ratio a spec from :func:`gpu_at_clock` runs at (1 for any other).

    >>> clock_of(gpu_at_clock("Lite", 0.8)), clock_of("Lite")
    (0.8, 1.0)
    """
    name = get_gpu(gpu).name
    if "@" in name and name.endswith("x"):
        try:
            return float(name.rsplit("@", 1)[1][:-1])
        except ValueError:
            pass
    return 1.0


#: The spec at nominal clock each spec :func:`gpu_at_clock` made was made from, by spec: its
#: TDP a published constant of the GPU, not to be recovered with whatever idle share a
#: caller sweeps; its name the one its per-system rows (host power) are kept under.
_NOMINAL: dict[GpuSpec, GpuSpec] = {}


def nominal_spec(gpu: str | GpuSpec) -> GpuSpec:
    """The spec at nominal clock that :func:`gpu_at_clock` made ``gpu`` from (``gpu``
    itself for any other spec, or a clocked one made in another process).

    >>> nominal_spec(gpu_at_clock("GB300-NVL72", 0.8)) == get_gpu("GB300-NVL72")
    True
    """
    spec = get_gpu(gpu)
    return _NOMINAL.get(spec, spec)


def _at_flops(spec: GpuSpec, times: float = 1.0, over: float = 1.0, **changes: Any
              ) -> GpuSpec:
    """``spec`` with every FLOP/s rate times ``times`` over ``over`` (a clock that ratio of
    its own; a multiplication or a division, each exact as before) and ``changes``."""
    return replace(spec, **{f: getattr(spec, f) * times / over for f in
                            ("flops_bf16", "flops_fp8", "flops_int8", "flops_fp4")}, **changes)


def _made_from(spec: GpuSpec, law: ClockPowerLaw | None = None,
               idle_fraction: float | None = None) -> GpuSpec:
    """The spec :func:`gpu_at_clock` made ``spec`` from (``spec`` itself where it runs at
    its own clock). One made in another process: the GPU its name gives, where that GPU at
    its ratio is it, else ``spec`` with its FLOP/s and its rated power (at ``law`` and
    ``idle_fraction``) undone."""
    r = clock_of(spec)
    if r == 1.0 or spec in _NOMINAL:
        return _NOMINAL.get(spec, spec)
    law = _law(law)
    name = spec.name.rsplit("@", 1)[0]
    try:
        if gpu_at_clock(name, r, law, idle_fraction) == spec:
            return _NOMINAL[spec]
    except UserError:
        pass
    i = idle_frac(idle_fraction)
    return _at_flops(spec, over=r, name=name,
                     tdp=spec.tdp / (i + (1 - i) * law.scale(r, checked=False)))


def nominal_tdp(gpu: str | GpuSpec, law: ClockPowerLaw | None = None,
                idle_fraction: float | None = None) -> float:
    """The TDP (W) at nominal clock of a spec that may run at another clock: the TDP of the
    GPU :func:`gpu_at_clock` made it from, whatever ``idle_fraction`` (that spec's rated
    power was set with the idle share it was made with); for a clocked spec made elsewhere
    (unpickled in another process), its rated power undone by the clock-power law at
    ``law`` and ``idle_fraction``.

    >>> lite = gpu_at_clock("Lite", 1.2)
    >>> nominal_tdp(lite, idle_fraction=0.5) == get_gpu("Lite").tdp
    True
    """
    return _made_from(get_gpu(gpu), law, idle_fraction).tdp


def unclocked(gpu: str | GpuSpec, law: ClockPowerLaw | None = None,
              idle_fraction: float | None = None) -> tuple[GpuSpec, float]:
    """``(twin, ratio)``: ``gpu`` as the same die at its SMs' own nominal clock (``twin``)
    run at ``ratio`` x that clock, the one form every draw is costed in
    (:func:`gpu_power`, :func:`gpu_at_clock`'s rating), so that the same hardware
    described two ways draws the same. A derived GPU whose ``flops_multiplier`` raises its
    clock (:func:`compute.hardware.derive_gpu`) is its derivation without it (its
    fraction's FLOP/s and TDP, its own bandwidths) at that clock: ``Lite+BW+FLOPS`` is
    ``Lite+BW`` at 1.2x. A spec from :func:`gpu_at_clock` is the twin of the spec it was
    made from at that spec's clock times its ratio; any other GPU itself at 1.

    >>> twin, r = unclocked("Lite+BW+FLOPS")
    >>> twin.tdp, twin.flops_bf16 == get_gpu("Lite+BW").flops_bf16, round(r, 12)
    (175.0, True, 1.2)
    >>> [round(x, 12) for x in unclocked(gpu_at_clock("Lite+BW+FLOPS", 0.5))[1:]]
    [0.6]
    """
    spec = get_gpu(gpu)
    ratio = clock_of(spec)
    spec = _made_from(spec, law, idle_fraction)
    root, fraction, clock = clock_lineage(spec)
    if clock == 1.0:
        return spec, ratio
    twin = _at_flops(spec, over=clock, tdp=fraction * root.tdp,
                   source=f"{spec.name} at its fraction's clock (compute/power.py)")
    return twin, ratio * clock


def unclocked_tdp(gpu: str | GpuSpec, law: ClockPowerLaw | None = None,
                  idle_fraction: float | None = None) -> float:
    """The TDP (W) of ``gpu`` at its SMs' own nominal clock (its :func:`unclocked` twin's),
    what its idle share (``idle_fraction``) is of: idle is leakage and the fixed draw at
    the idle clock, which a clock raised or lowered under load does not move. A derived
    GPU's is its fraction of its base's, whatever clock its ``flops_multiplier`` rates it
    at; a spec from :func:`gpu_at_clock` that of the GPU it was made from; any other GPU
    its TDP.

    >>> unclocked_tdp("Lite+BW+FLOPS"), round(get_gpu("Lite+BW+FLOPS").tdp, 2)  # rated at 1.2x
    (175.0, 259.56)
    >>> unclocked_tdp(gpu_at_clock("H100-SXM", 0.8)), unclocked_tdp("H100-SXM")
    (700.0, 700.0)
    """
    return unclocked(gpu, law, idle_fraction)[0].tdp


def hbm_share(gpu: str | GpuSpec, memory_power_share: float) -> float:
    """The share of ``gpu``'s above-idle range a stream at its peak HBM bandwidth draws, at
    any clock (the law scales the stream's draw as it scales the range):
    ``memory_power_share`` for a GPU derived from none; for a derived GPU (the Lite family,
    a GPU file's ``derive_from``) that times its HBM bandwidth over its fraction's of its
    root's (its ``hbm_bandwidth_multiplier``), so that at its own SMs' clock it moves each
    HBM byte at its root's energy (a doubled HBM draws twice its fraction's watts while
    streaming); at most 1 (the draw is capped at TDP).

    >>> round(hbm_share("Lite", 0.354), 3), round(hbm_share("Lite+MemBW", 0.354), 3)
    (0.354, 0.708)
    >>> round(hbm_share("Lite+BW+FLOPS", 0.354), 3)   # Lite+BW's, at 1.2x its clock
    0.708
    """
    spec = _made_from(get_gpu(gpu))
    root, fraction, _ = clock_lineage(spec)
    return min(1.0, memory_power_share * spec.hbm_bandwidth
               / (fraction * root.hbm_bandwidth))


def gpu_power(gpu: str | GpuSpec, state: str, step: InferenceResult | None = None, *,
              clock: float = 1.0, law: ClockPowerLaw | None = None,
              idle_fraction: float | None = None,
              flop_utilization_at_tdp: float | None = None,
              memory_power_share: float | None = None) -> float:
    """Watts one GPU draws in ``state``: ``"idle"``, or ``"prefill"`` / ``"decode"``
    serving ``step`` (an :class:`~compute.results.InferenceResult` of that phase, whose load
    sets the draw, see :func:`activity`), at ``clock`` x its nominal SM clock (a spec from
    :func:`gpu_at_clock` carries its clock; then leave ``clock`` at 1). The idle draw does
    not follow the clock.

    >>> from compute.evaluate_one import evaluate
    >>> s = evaluate("Llama-3-8B", "Lite", 1, 4, "prefill")   # compute-bound: near TDP
    >>> round(gpu_power("Lite", "prefill", s), 2), round(gpu_power("Lite", "prefill", s, clock=0.5), 2)
    (174.62, 87.14)
    """
    if chosen(state, POWER_STATES) is None:   # blanks at either end dropped, as every choice's
        raise UserError(f"unknown power state {describe(state)}"
                        f"{lookalike(state, POWER_STATES)}; known: {known(POWER_STATES)}")
    state = chosen(state, POWER_STATES)
    law = _law(law)
    twin, ratio = unclocked(gpu, law, idle_fraction)
    r = law.check(clock) * ratio
    i = idle_frac(idle_fraction)
    tdp = twin.tdp
    if state == "idle":
        return i * tdp
    if step is None:
        raise UserError(f"the {state} draw follows the step's load: give step (the "
                        f"configuration served)")
    if step.phase != state:
        raise UserError(f"step is a {step.phase} configuration, not {state}")
    m = _fraction("memory_power_share", parameter("memory_power_share")
                  if memory_power_share is None else memory_power_share)
    a = activity(step, flop_utilization_at_tdp=flop_utilization_at_tdp,
                 memory_power_share=memory_power_share,
                 hbm_power_share=hbm_share(gpu, m))
    return i * tdp + (1 - i) * tdp * a * law.scale(r, checked=False)


def gpu_at_clock(gpu: str | GpuSpec, ratio: float, law: ClockPowerLaw | None = None,
                 idle_fraction: float | None = None) -> GpuSpec:
    """``gpu`` run at ``ratio`` x its nominal SM clock: FLOP/s x ``ratio``, TDP by the
    clock-power law, memory and network unchanged; named ``NAME@RATIOx`` (ratio 1 returns
    the spec itself).

    >>> g = gpu_at_clock("H100-SXM", 0.5)
    >>> g.name, g.flops_bf16 / 1e12, g.hbm_bandwidth == get_gpu("H100-SXM").hbm_bandwidth
    ('H100-SXM@0.5x', 494.7, True)
    """
    spec = get_gpu(gpu)
    law = _law(law)
    r = law.check(ratio)
    if clock_of(spec) != 1.0:
        raise UserError(f"GPU {spec.name!r} already runs at another clock; start from the "
                        f"nominal one")
    if r == 1.0:
        return spec
    clocked = _at_flops(spec, r, name=f"{spec.name}@{r!r}x",
                        tdp=_rated(spec, r, law, idle_fraction),
                      source=f"{spec.name} at {r!r} x nominal clock (compute/power.py)")
    _NOMINAL.setdefault(clocked, spec)
    return clocked


def _rated(spec: GpuSpec, ratio: float, law: ClockPowerLaw,
           idle_fraction: float | None) -> float:
    """``spec``'s rated power (W) at ``ratio`` x its clock: its :func:`unclocked` twin's
    TDP rated by the clock-power law at the clock that twin then runs at
    (:func:`~compute.clock_power.rated_at_clock`)."""
    twin, r = unclocked(spec, law, idle_fraction)
    return rated_at_clock(twin.tdp, r * ratio, law, idle_fraction, checked=False)


def overclocked_lite(ratio: float = 1.2, base: str = "Lite") -> GpuSpec:
    """A Lite run above its nominal clock (a small die is easier to cool), rated by the
    clock-power law as the catalog's Lite+BW+FLOPS (Lite+BW at 1.2x) is."""
    r = _fraction("clock", ratio)
    if not r > 1:
        raise UserError(f"an overclocked Lite needs a clock ratio > 1, got {describe(ratio)}")
    return gpu_at_clock(base, ratio)


@dataclass(frozen=True)
class ClockPoint:
    """The SLO search at one clock: the best configuration (None if none is feasible), the
    draw per GPU (W) and the GPUs' tokens per joule."""

    clock: float
    gpu: GpuSpec
    best: InferenceResult | None
    watts_per_gpu: float | None  #: None when infeasible

    @property
    def tokens_per_joule(self) -> float | None:
        """Tokens per joule of GPU energy: an instance's tokens/s over the draw of its
        GPUs, all of them (``tp x pp``: a pipeline's stages draw too); None when
        infeasible."""
        if self.best is None or not self.watts_per_gpu:
            return None
        return self.best.tokens_per_s / (self.best.gpus * self.watts_per_gpu)

    def to_dict(self) -> dict:
        b = self.best
        return {"clock": self.clock, "gpu": self.gpu.name, "watts_per_gpu": self.watts_per_gpu,
                "tp": b.tp if b else None, "gpus": b.gpus if b else None,
                "batch": b.batch if b else None,
                "latency_s": b.latency if b else None,
                "tokens_per_s": b.tokens_per_s if b else None,
                "tokens_per_joule": self.tokens_per_joule}


def clock_sweep(model: str | ModelSpec, gpu: str | GpuSpec, phase: str = "decode",
                clocks: Iterable[float] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
                *, law: ClockPowerLaw | None = None, **search_args: Any) -> list[ClockPoint]:
    """The SLO search (:func:`compute.search.search`, same keyword arguments, e.g.
    ``comm=``) at every clock ratio; the point with the most tokens per joule is the clock
    the paper's per-die power management would pick.

    >>> pts = clock_sweep("Llama-3-70B", "H100-SXM", "decode", clocks=(0.6, 1.0))
    >>> [p.best.feasible for p in pts], pts[0].tokens_per_joule > pts[1].tokens_per_joule
    ([True, True], True)
    """
    from compute.phases import check_phase
    from compute.search import search

    phase = check_phase(phase)
    law = _law(law)
    # a keyword search takes not, refused naming clock_sweep before any search (Python's
    # TypeError named search(), a function the caller never called)
    import inspect

    allowed = [k for k, p in inspect.signature(search).parameters.items()
               if p.kind is p.KEYWORD_ONLY]
    unknown = [k for k in search_args if k not in allowed]
    if unknown:
        raise UserError(f"clock_sweep() takes no keyword {unknown[0]!r}; allowed: model, "
                        f"gpu, phase, clocks, law, {', '.join(allowed)}")
    out = []
    for r in listed("clocks", clocks, "clock ratios"):
        spec = gpu_at_clock(gpu, r, law)
        result = search(model, spec, phase, **search_args)
        best = result.best
        watts = gpu_power(spec, phase, best, law=law) if best is not None else None
        out.append(ClockPoint(clock=float(r), gpu=spec, best=best, watts_per_gpu=watts))
    return out
