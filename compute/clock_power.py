"""The clock-power law: how a GPU's rated power follows its SM clock.

Its constants are rows of ``compute/data/economics.toml`` with their sources;
:mod:`compute.power` says the law and is where callers take it from. It has a module of
its own below :mod:`compute.hardware`, which rates by it a derived GPU whose
``flops_multiplier`` raises its clock (:func:`~compute.hardware.derive_gpu`), as
:mod:`compute.power` imports the GPU catalog.

>>> round(rated_at_clock(700.0, 1.0), 1), round(rated_at_clock(700.0, 0.8), 1)
(700.0, 473.3)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from compute import validate
from compute.errors import UserError
from compute.rows import check_number, parameter

__all__ = ["ClockPowerLaw", "idle_frac", "rated_at_clock"]


@dataclass(frozen=True)
class ClockPowerLaw:
    """How a GPU's power follows its SM clock (:mod:`compute.power` says the law; ``None``
    fields take the shipped defaults, ``compute/data/economics.toml``): at ``r`` x the
    nominal clock the draw above idle is ``c x r V(r)^2 + (1 - c)`` times the nominal one,
    ``V(r) = max(voltage_floor, r)``, ``c`` the ``core_share``. It rates a GPU run at
    another clock (:func:`compute.power.gpu_at_clock`) and a derived GPU whose
    ``flops_multiplier`` raises its clock (:func:`compute.hardware.derive_gpu`), by
    :func:`rated_at_clock`."""

    core_share: float | None = None
    voltage_floor: float | None = None
    ratio_min: float | None = None
    ratio_max: float | None = None

    def __post_init__(self):
        for field_, row in (("core_share", "clock_core_share"),
                            ("voltage_floor", "clock_voltage_floor"),
                            ("ratio_min", "clock_ratio_min"), ("ratio_max", "clock_ratio_max")):
            v = getattr(self, field_)
            object.__setattr__(self, field_, check_number(field_, parameter(row) if v is None
                                                          else v))
        if self.core_share > 1:
            raise UserError(f"core_share must be <= 1, got {self.core_share!r}")
        if not 0 < self.ratio_min <= 1 <= self.ratio_max:
            raise UserError(f"clock ratios need 0 < ratio_min <= 1 <= ratio_max, got "
                            f"{self.ratio_min!r} and {self.ratio_max!r}")

    def allowed(self) -> str:
        """The clock ratios the law covers, in :meth:`check`'s words.

        >>> ClockPowerLaw().allowed()
        'in the modelled range [0.05, 1.5] x nominal'
        """
        return f"in the modelled range [{self.ratio_min:g}, {self.ratio_max:g}] x nominal"

    def check(self, ratio: float) -> float:
        """``ratio`` if it is a clock ratio the law covers, else a UserError."""
        r = check_number("clock", ratio)
        if not self.ratio_min <= r <= self.ratio_max:
            raise UserError(f"clock {validate.describe(ratio)} is outside "
                            f"{self.allowed().removeprefix('in ')}")
        return r

    def scale(self, ratio: float, *, checked: bool = True) -> float:
        """The above-idle draw at ``ratio`` x nominal clock over the draw at nominal
        (``checked=False``: past the accepted range too, the same formula).

        >>> law = ClockPowerLaw(core_share=1.0, voltage_floor=0.5)
        >>> [round(law.scale(r), 4) for r in (1.0, 0.8, 0.25)]  # r^3 down to the floor, then r
        [1.0, 0.512, 0.0625]
        """
        r = self.check(ratio) if checked else check_number("clock", ratio)
        v = max(self.voltage_floor, r)
        return self.core_share * r * v * v + (1 - self.core_share)

    def to_dict(self) -> dict:
        return asdict(self)


def idle_frac(value: float | None = None) -> float:
    """The share of TDP drawn idle (``value`` overrides the shipped default)."""
    v = check_number("idle_fraction", parameter("idle_fraction") if value is None else value)
    if v > 1:
        raise UserError(f"idle_fraction must be <= 1, got {validate.describe(value)}")
    return v


def rated_at_clock(tdp: float, ratio: float, law: ClockPowerLaw | None = None,
                   idle_fraction: float | None = None, *, checked: bool = True) -> float:
    """The rated power (W) of a GPU rated ``tdp`` at its nominal clock, run at ``ratio`` x
    that clock: its idle share (``idle_fraction`` of ``tdp``) as it is, the rest scaled by
    the clock-power law (:class:`ClockPowerLaw`; ``checked=False`` takes a ratio past the
    law's accepted range by the same formula).

    >>> round(rated_at_clock(175.0, 1.2), 2)   # a Lite at 1.2x: 175 x (0.115 + 0.885 x 1.546)
    259.56
    """
    law = validate.of_type("law", law, ClockPowerLaw, "ClockPowerLaw(core_share=0.8)") \
        or ClockPowerLaw()
    i = idle_frac(idle_fraction)
    return tdp * (i + (1 - i) * law.scale(ratio, checked=checked))
