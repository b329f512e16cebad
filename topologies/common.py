"""Shared pieces of the builders: default latencies with their sources, parameter checks,
and small helpers that add schema-conforming nodes and links. (The builder registry lives
in :mod:`topologies.registry`; ``REGISTRY``, ``builder`` and ``format_value`` are
re-exported here for older imports.)

Defaults (SI units; each number's source or the assumption behind it):

* :data:`PROPAGATION_DELAY` = 5 ns per metre of fibre ("Fibre propagation: about 5 ns per
  metre", shared/reference/fabrics.md); copper twinax is within a few per cent of it, so the
  same figure is used for copper.
* Cable lengths (assumptions, no published figure): 2 m inside a scale-up rack
  (:data:`SCALEUP_LENGTH`), 1 m inside a Lite group (:data:`GROUP_LENGTH`), 20 m from a GPU's
  NIC to its leaf (:data:`NIC_LENGTH`, leaves sit in their own racks in a rail-optimized
  row), 50 m leaf to spine (:data:`LEAF_SPINE_LENGTH`), 100 m spine to core
  (:data:`SPINE_CORE_LENGTH`), 10 m from a GPU to an OCS (:data:`OCS_LENGTH`).
* :data:`CPO_DELAY` = 5 ns per co-packaged optical chiplet crossed ("about 5 ns per chiplet
  plus time of flight", Ayar Labs TeraPHY, fabrics.md); a CPO link crosses two.
* :data:`SWITCH_LATENCY` = 330 ns port to port for a packet switch (third-party figure
  "~330 ns" for Quantum-2, fabrics.md; the other quoted figure is "<150 ns").
* :data:`NVSWITCH_LATENCY` = 150 ns (assumption: no published NVSwitch port-to-port figure
  was found; taken as the lower of the two Quantum-2 figures).
* :data:`OCS_LATENCY` = 0 s: a MEMS circuit switch steers light with mirrors and adds no
  switching delay; the light's path is counted as fibre on both sides.
* :data:`OCS_RECONFIGURATION` = 10 ms (assumption within the published range: Palomar
  "millisecond-scale switching", Calient S320 "up to 200 ms").
* :data:`OCS_PORTS` = 136 (Google Palomar OCS: 136 x 136 ports, fabrics.md).
* :data:`LANE_RATE` = 12.5 GB/s per direction per lane (100 Gb/s SerDes: NDR InfiniBand is
  4 x 100 Gb/s; an NVLink4 link is 2 lanes for 25 GB/s), used to count lanes for the bill of
  materials.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Sequence

import networkx as nx

from compute.errors import UserError, known
from compute.hardware import GpuSpec, catalog, get_gpu
from topologies.bulk import Links, Nodes, assemble
from topologies.limits import MAX_RADIX, PHYSICAL_MAX
from topologies.registry import REGISTRY, builder, format_value  # noqa: F401  (old home)
from topologies.schema import MEDIA, _real, _show, validate

PROPAGATION_DELAY = 5e-9     # s per metre
SCALEUP_LENGTH = 2.0         # m
GROUP_LENGTH = 1.0           # m
NIC_LENGTH = 20.0            # m
LEAF_SPINE_LENGTH = 50.0     # m
SPINE_CORE_LENGTH = 100.0    # m
OCS_LENGTH = 10.0            # m
CPO_DELAY = 5e-9             # s per chiplet crossed
SWITCH_LATENCY = 330e-9      # s
NVSWITCH_LATENCY = 150e-9    # s
OCS_LATENCY = 0.0            # s
OCS_RECONFIGURATION = 10e-3  # s
OCS_PORTS = 136
LANE_RATE = 12.5e9           # bytes/s per direction per lane


def cable_latency(length: float, medium: str) -> float:
    """Seconds for a cable of ``length`` metres: propagation, plus two optical chiplets for
    co-packaged optics.

    >>> round(cable_latency(20, "pluggable-optics") * 1e9, 3)
    100.0
    >>> round(cable_latency(1, "co-packaged-optics") * 1e9, 3)
    15.0
    """
    extra = 2 * CPO_DELAY if medium == "co-packaged-optics" else 0.0
    return length * PROPAGATION_DELAY + extra


def lanes_for(bandwidth: float) -> int:
    """Lanes of :data:`LANE_RATE` needed to carry ``bandwidth`` bytes/s per direction.

    >>> lanes_for(450e9), lanes_for(50e9), lanes_for(1e9)
    (36, 4, 1)
    """
    return max(1, math.ceil(bandwidth / LANE_RATE - 1e-9))


def link(bandwidth: float, latency: float, medium: str, links: int = 1) -> dict:
    """Edge attributes for ``links`` parallel cables carrying ``bandwidth`` bytes/s per
    direction in total (``links`` is stored only when it is not 1, to save memory)."""
    attrs = {"bandwidth": float(bandwidth), "latency": float(latency), "medium": medium,
             "lanes": lanes_for(bandwidth)}
    if links != 1:
        attrs["links"] = links
    return attrs


def new_graph(name: str) -> nx.Graph:
    """An empty fabric graph; the registry fills in ``spec``, :func:`finish` the GPU count."""
    return nx.Graph(name=name, spec="", gpus=0)


def finish(graph: nx.Graph, gpus: int, *specs: GpuSpec) -> nx.Graph:
    """Record the GPU count and, in ``gpu_types``, every GPU type in ``specs`` (those the
    builder placed) that is not the catalog's own entry; validate (connectivity included)."""
    _record(graph, gpus, specs)
    return validate(graph)


def finish_blocks(graph: nx.Graph, gpus: int, nodes: Sequence[Nodes], links: Sequence[Links],
                  *specs: GpuSpec) -> nx.Graph:
    """:func:`finish` for a builder that describes its fabric in blocks: record the GPU
    count and types, fill the empty ``graph`` from the blocks and check it in bulk (see
    :mod:`topologies.bulk`; the same graph and the same errors as adding the nodes and
    edges one by one and calling :func:`finish`)."""
    _record(graph, gpus, specs)
    return assemble(graph, nodes, links)


def _record(graph: nx.Graph, gpus: int, specs: Sequence[GpuSpec]) -> None:
    graph.graph["gpus"] = gpus
    own = {s.name: s for s in specs if catalog().get(s.name) != s}
    if own:
        graph.graph["gpu_types"] = own


def switch_attrs(tier: int, radix: int, latency: float, in_network_reduction: bool) -> dict:
    """Node attributes of a switch."""
    return {"kind": "switch", "tier": tier, "radix": int(radix), "latency": float(latency),
            "in_network_reduction": bool(in_network_reduction)}


# ---------------------------------------------------------------- parameter checks

def gpu_type(name: object, what: str = "gpu") -> GpuSpec:
    """The GPU ``name`` names: a GpuSpec itself, a catalog name or a GPU file path
    (UserError listing the known ones otherwise)."""
    if not isinstance(name, str | GpuSpec):
        raise UserError(f"{what} must be a GPU name or a GpuSpec, got {_show(name)}")
    return get_gpu(name)


def check_int(what: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int in ``minimum..maximum``; bools and non-integral numbers are
    refused.

    >>> check_int("n", 4.0)
    4
    >>> check_int("n", 0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: n must be an integer >= 1, got 0
    """
    number: int | None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
    else:
        x = _real(value)
        number = int(x) if x is not None and math.isfinite(x) and x == int(x) else None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        rule = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum:,}"
        raise UserError(f"{what} must be an integer {rule}, got {_show(value)}")
    return number


def check_radix(what: str, value: object, minimum: int = 1) -> int:
    """A port count: an integer in ``minimum`` .. :data:`~topologies.limits.MAX_RADIX`."""
    return check_int(what, value, minimum, MAX_RADIX)


def check_positive(what: str, value: object, *, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (>= 0 with ``allow_zero``), and, for a physical
    quantity whose name ends in one of :data:`~topologies.limits.PHYSICAL_MAX`'s (latency,
    bandwidth, length, reconfiguration_time), at most its plausible maximum.

    >>> check_positive("latency", 1e300)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: latency must be at most 1 s (a switch hop takes 0.1-1 us and a cable 5 ns/m; 1 s is a million hops), got 1e+300
    """
    x = _real(value)
    if x is None or not math.isfinite(x) or not (x >= 0 if allow_zero else x > 0):
        rule = ">= 0" if allow_zero else "> 0"
        raise UserError(f"{what} must be a finite number {rule}, got {_show(value)}")
    for name, (most, unit, why) in PHYSICAL_MAX.items():
        if what.endswith(name) and x > most:
            raise UserError(f"{what} must be at most {most:g} {unit} ({why}), got "
                            f"{_show(value)}")
    return x


def check_length(value: object) -> float:
    """A cable length in metres: finite, >= 0."""
    return check_positive("length", value, allow_zero=True)


def check_medium(what: str, medium: object) -> str:
    """``medium`` if it is one of the schema's media."""
    if not isinstance(medium, str) or medium not in MEDIA:
        raise UserError(f"{what} {_show(medium)} is not a known medium; known: {known(MEDIA)}")
    return medium


def check_choice(what: str, value: object, choices: Collection[str]) -> str:
    """``value`` if it is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise UserError(f"{what} {_show(value)} is not allowed; allowed: {known(choices)}")
    return value


def bandwidth_or(what: str, value: object, default: float) -> float:
    """``value`` checked as a bandwidth (bytes/s), or ``default`` when it is None."""
    return default if value is None else check_positive(what, value)
