"""GPU power: the draw when idle, in prefill and in decode, and a clock knob.

Draws are fractions of the GPU's TDP, rows of ``compute/data/economics.toml`` with their
sources: idle 0.115 (an H200 idles at 80 W of 700), prefill 0.9 (compute-bound, near TDP),
decode 0.428 (memory-bound: 137-300 W of 700 on an H200; power caps never bind).

The clock knob (the Lite-GPU paper's per-die power management): at ``r`` times the nominal
SM clock, FLOP/s scale by ``r`` (HBM and network bandwidth do not: they have clocks of their
own), and the draw above idle follows a clock-power law

    P(r) = P_idle + (P_phase - P_idle) x [c x r V(r)^2 + (1 - c)],   V(r) = max(v_min, r)

where ``c`` (``clock_core_share``) is the share of the above-idle draw in the SM clock
domain: dynamic power C f V^2 with the voltage following the clock (V ~ f) down to a floor
``v_min`` (``clock_voltage_floor``), below which only f falls. The rest (HBM, I/O) and the
idle draw (static) do not follow the clock. The rated power at a clock is the same law
applied to the TDP. Clock ratios are accepted between ``clock_ratio_min`` and
``clock_ratio_max``.

>>> round(gpu_power("H100-SXM", "decode"), 1), round(gpu_power("H100-SXM", "idle"), 1)
(299.6, 80.5)
>>> lite = overclocked_lite(1.2)
>>> lite.name, round(lite.flops_bf16 / get_gpu("Lite").flops_bf16, 3), round(lite.tdp, 1)
('Lite@1.2x', 1.2, 259.6)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from compute.errors import UserError, known
from compute.hardware import GpuSpec, get_gpu
from compute.yield_model import parameter

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from compute.results import InferenceResult

__all__ = ["POWER_STATES", "ClockPoint", "ClockPowerLaw", "clock_of", "clock_sweep",
           "gpu_at_clock", "gpu_power", "nominal_tdp", "overclocked_lite", "phase_fraction"]

#: The power states a GPU is in, and the economics.toml row of each one's share of TDP.
POWER_STATES = {"idle": "idle_fraction", "prefill": "prefill_fraction",
                "decode": "decode_fraction"}


def _fraction(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value < 0:
        raise UserError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class ClockPowerLaw:
    """How power follows the SM clock (see the module docstring). ``None`` fields take the
    shipped defaults."""

    core_share: float | None = None
    voltage_floor: float | None = None
    ratio_min: float | None = None
    ratio_max: float | None = None

    def __post_init__(self):
        for field, row in (("core_share", "clock_core_share"),
                           ("voltage_floor", "clock_voltage_floor"),
                           ("ratio_min", "clock_ratio_min"), ("ratio_max", "clock_ratio_max")):
            v = getattr(self, field)
            object.__setattr__(self, field, _fraction(field, parameter(row) if v is None else v))
        if self.core_share > 1:
            raise UserError(f"core_share must be <= 1, got {self.core_share!r}")
        if not 0 < self.ratio_min <= 1 <= self.ratio_max:
            raise UserError(f"clock ratios need 0 < ratio_min <= 1 <= ratio_max, got "
                            f"{self.ratio_min!r} and {self.ratio_max!r}")

    def check(self, ratio: float) -> float:
        """``ratio`` if it is a clock ratio the law covers, else a UserError."""
        r = _fraction("clock", ratio)
        if not self.ratio_min <= r <= self.ratio_max:
            raise UserError(f"clock {ratio!r} is outside the modelled range "
                            f"[{self.ratio_min:g}, {self.ratio_max:g}] x nominal")
        return r

    def scale(self, ratio: float) -> float:
        """The above-idle draw at ``ratio`` x nominal clock over the draw at nominal.

        >>> law = ClockPowerLaw(core_share=1.0, voltage_floor=0.5)
        >>> [round(law.scale(r), 4) for r in (1.0, 0.8, 0.25)]  # r^3 down to the floor, then r
        [1.0, 0.512, 0.0625]
        """
        r = self.check(ratio)
        v = max(self.voltage_floor, r)
        return self.core_share * r * v * v + (1 - self.core_share)

    def to_dict(self) -> dict:
        return asdict(self)


def phase_fraction(state: str, **fractions) -> float:
    """The share of TDP drawn in ``state`` (idle, prefill or decode); ``idle_fraction=...``
    and the like override the defaults."""
    if state not in POWER_STATES:
        raise UserError(f"unknown power state {state!r}; known: {known(POWER_STATES)}")
    key = POWER_STATES[state]
    v = fractions.get(key)
    return _fraction(key, parameter(key) if v is None else v)


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


def nominal_tdp(gpu: str | GpuSpec, law: ClockPowerLaw | None = None,
                idle_fraction: float | None = None) -> float:
    """The TDP (W) at nominal clock of a spec that may run at another clock."""
    spec = get_gpu(gpu)
    r = clock_of(spec)
    if r == 1.0:
        return spec.tdp
    law = law or ClockPowerLaw()
    i = phase_fraction("idle", idle_fraction=idle_fraction)
    return spec.tdp / (i + (1 - i) * law.scale(r))


def gpu_power(gpu: str | GpuSpec, state: str, *, clock: float = 1.0,
              law: ClockPowerLaw | None = None, idle_fraction: float | None = None,
              prefill_fraction: float | None = None, decode_fraction: float | None = None) -> float:
    """Watts one GPU draws in ``state`` (``"idle"``, ``"prefill"`` or ``"decode"``) at
    ``clock`` x its nominal SM clock (a spec from :func:`gpu_at_clock` carries its clock;
    then leave ``clock`` at 1). The idle draw does not follow the clock.

    >>> round(gpu_power("Lite", "prefill"), 2), round(gpu_power("Lite", "prefill", clock=0.5), 2)
    (157.5, 79.71)
    """
    spec = get_gpu(gpu)
    law = law or ClockPowerLaw()
    r = law.check(clock) * clock_of(spec)
    tdp = nominal_tdp(spec, law, idle_fraction)
    idle = phase_fraction("idle", idle_fraction=idle_fraction) * tdp
    if state == "idle":
        return idle
    frac = phase_fraction(state, prefill_fraction=prefill_fraction,
                          decode_fraction=decode_fraction)
    return idle + (frac * tdp - idle) * law.scale(r)


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
    law = law or ClockPowerLaw()
    r = law.check(ratio)
    if clock_of(spec) != 1.0:
        raise UserError(f"GPU {spec.name!r} already runs at another clock; start from the "
                        f"nominal one")
    if r == 1.0:
        return spec
    i = phase_fraction("idle", idle_fraction=idle_fraction)
    return replace(spec, name=f"{spec.name}@{r!r}x", flops_bf16=spec.flops_bf16 * r,
                   flops_fp8=spec.flops_fp8 * r,
                   tdp=spec.tdp * (i + (1 - i) * law.scale(r)),
                   source=f"{spec.name} at {r!r} x nominal clock (compute/power.py)")


def overclocked_lite(ratio: float = 1.2, base: str = "Lite") -> GpuSpec:
    """A Lite run above its nominal clock (a small die is easier to cool): the variant the
    catalog's Lite+BW+FLOPS assumes free of power cost, here with the clock-power law's."""
    if not (isinstance(ratio, int | float) and not isinstance(ratio, bool) and ratio > 1):
        raise UserError(f"an overclocked Lite needs a clock ratio > 1, got {ratio!r}")
    return gpu_at_clock(base, ratio)


@dataclass(frozen=True)
class ClockPoint:
    """The SLO search at one clock: the best configuration (None if none is feasible), the
    draw per GPU (W) and the GPUs' tokens per joule."""

    clock: float
    gpu: GpuSpec
    best: InferenceResult | None
    watts_per_gpu: float

    @property
    def tokens_per_joule(self) -> float | None:
        """Tokens per joule of GPU energy (None when infeasible)."""
        if self.best is None:
            return None
        return self.best.tokens_per_s / (self.best.tp * self.watts_per_gpu)

    def to_dict(self) -> dict:
        b = self.best
        return {"clock": self.clock, "gpu": self.gpu.name, "watts_per_gpu": self.watts_per_gpu,
                "tp": b.tp if b else None, "batch": b.batch if b else None,
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
    law = law or ClockPowerLaw()
    out = []
    for r in clocks:
        spec = gpu_at_clock(gpu, r, law)
        result = search(model, spec, phase, **search_args)
        out.append(ClockPoint(clock=float(r), gpu=spec, best=result.best,
                              watts_per_gpu=gpu_power(spec, phase, law=law)))
    return out
