"""The collective model's parameters: link efficiencies, protocols and their latencies.

The defaults live in ``netmodel/data/collective_defaults.toml``, every number with its
source: NCCL's own tuning constants (``src/graph/tuning.cc``, tabulated in
``../shared/reference/nccl_tuning_constants.csv``) and published achieved link rates. They
are taken once, not fitted to any measurement the accuracy tests compare against.

How they enter the cost of a step (see :mod:`netmodel.collectives.cost`): a link of line rate ``B``
moves ``B * efficiency * protocol.bandwidth_factor`` bytes/s of payload (``efficiency`` is
``scaleup_efficiency`` or ``scaleout_efficiency`` by the link's side of the fabric); every
step pays ``protocol.step_latency_scaleup`` (or ``_scaleout`` when it crosses the scale-out
network) on top of its route latency; a collective pays ``protocol.base_latency`` once.

>>> cal = default_calibration()
>>> [p.name for p in cal.protocols], cal.scaleup_efficiency
(['LL', 'LL128', 'Simple'], 0.824)
>>> ideal = Calibration.ideal(alpha=1e-6)
>>> ideal.protocols[0].step_latency_scaleup, ideal.scaleup_efficiency
(1e-06, 1.0)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from pathlib import Path

from compute.config_files import check_keys, read_table
from compute.errors import UserError, known

__all__ = ["DEFAULTS_PATH", "Calibration", "Protocol", "default_calibration", "load_calibration"]

DEFAULTS_PATH = Path(__file__).resolve().parent.parent / "data" / "collective_defaults.toml"

_PROTOCOL_KEYS = ("bandwidth_factor", "base_latency", "step_latency_scaleup",
                  "step_latency_scaleout")


@dataclass(frozen=True)
class Protocol:
    """A way of moving data between GPUs, with its bandwidth/latency trade-off.

    Attributes
    ----------
    name : str
    bandwidth_factor : float
        Fraction (0, 1] of the achievable link rate delivered as payload.
    base_latency : float
        Seconds paid once per collective.
    step_latency_scaleup, step_latency_scaleout : float
        Seconds paid per algorithm step (alpha), for a step on the scale-up side only or one
        that crosses the scale-out network.
    """

    name: str
    bandwidth_factor: float
    base_latency: float
    step_latency_scaleup: float
    step_latency_scaleout: float

    def __post_init__(self):
        if not (0 < self.bandwidth_factor <= 1):
            raise UserError(f"protocol {self.name!r}: bandwidth_factor must be in (0, 1], got "
                            f"{self.bandwidth_factor!r}")
        for key in _PROTOCOL_KEYS[1:]:
            v = getattr(self, key)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise UserError(f"protocol {self.name!r}: {key} must be a finite number >= 0 s, "
                                f"got {v!r}")

    def step_latency(self, scaleout: bool) -> float:
        """Alpha of one step (s)."""
        return self.step_latency_scaleout if scaleout else self.step_latency_scaleup


@dataclass(frozen=True)
class Calibration:
    """Every parameter of the collective model.

    Attributes
    ----------
    protocols : tuple of Protocol
        Point-to-point protocols the tuner may choose from.
    in_network : Protocol
        Constants of in-network reduction (NVLS / SHARP).
    scaleup_efficiency, scaleout_efficiency : float
        Fraction of line rate achievable on scale-up / scale-out links.
    reduction_rate : float
        Gamma: bytes/s a GPU reduces; 0 leaves reduction cost out.
    """

    protocols: tuple
    in_network: Protocol
    scaleup_efficiency: float = 1.0
    scaleout_efficiency: float = 1.0
    reduction_rate: float = 0.0

    def __post_init__(self):
        if not self.protocols:
            raise UserError("a calibration needs at least one protocol")
        for key in ("scaleup_efficiency", "scaleout_efficiency"):
            v = getattr(self, key)
            if not (isinstance(v, int | float) and 0 < v <= 1):
                raise UserError(f"{key} must be in (0, 1], got {v!r}")
        r = self.reduction_rate
        if not (isinstance(r, int | float) and math.isfinite(r) and r >= 0):
            raise UserError(f"reduction_rate must be a finite number >= 0 bytes/s, got {r!r}")

    @classmethod
    def ideal(cls, alpha: float = 0.0, *, in_network_alpha: float | None = None,
              reduction_rate: float = 0.0) -> Calibration:
        """Textbook Hockney parameters: one protocol at full line rate, ``alpha`` seconds per
        step, no start-up latency (the model then equals the textbook formulas)."""
        a = float(alpha)
        b = a if in_network_alpha is None else float(in_network_alpha)
        return cls(protocols=(Protocol("ideal", 1.0, 0.0, a, a),),
                   in_network=Protocol("in-network", 1.0, 0.0, b, b),
                   reduction_rate=reduction_rate)

    def with_(self, **changes) -> Calibration:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def protocol(self, name: str) -> Protocol:
        """The protocol called ``name``."""
        for p in self.protocols:
            if p.name == name:
                return p
        raise UserError(f"unknown protocol {name!r}; known: {known(p.name for p in self.protocols)}")


def _protocol(where: str, name: str, table) -> Protocol:
    check_keys(where, table, _PROTOCOL_KEYS)
    for k in _PROTOCOL_KEYS:
        if not isinstance(table[k], int | float) or isinstance(table[k], bool):
            raise UserError(f"{where}.{k} must be a number, got {table[k]!r}")
    return Protocol(name, *(float(table[k]) for k in _PROTOCOL_KEYS))


def load_calibration(path: str | Path = DEFAULTS_PATH) -> Calibration:
    """Read a calibration TOML file (same layout as the shipped defaults).

    Unknown or missing keys raise :class:`~compute.errors.UserError` naming them.
    """
    path = Path(path)
    data = read_table(path, "calibration file", suffixes=(".toml",))
    check_keys(str(path), data, ("links", "protocols", "in_network", "reduction"))
    check_keys(f"{path}: [links]", data["links"], ("scaleup_efficiency", "scaleout_efficiency"))
    check_keys(f"{path}: [reduction]", data["reduction"], ("rate",))
    protos = data["protocols"]
    if not isinstance(protos, dict) or not protos:
        raise UserError(f"{path}: [protocols] must hold at least one [protocols.NAME] table")
    return Calibration(
        protocols=tuple(_protocol(f"{path}: [protocols.{n}]", n, t) for n, t in protos.items()),
        in_network=_protocol(f"{path}: [in_network]", "Simple", data["in_network"]),
        scaleup_efficiency=float(data["links"]["scaleup_efficiency"]),
        scaleout_efficiency=float(data["links"]["scaleout_efficiency"]),
        reduction_rate=float(data["reduction"]["rate"]),
    )


@functools.cache
def default_calibration() -> Calibration:
    """The shipped defaults (read once)."""
    return load_calibration(DEFAULTS_PATH)
