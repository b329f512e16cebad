"""Shared pieces of the builders: default latencies with their sources, parameter checks,
and small helpers that add schema-conforming nodes and links.

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

import functools
import inspect
import math
import numbers

import networkx as nx

from compute.errors import UserError, known
from compute.hardware import GpuSpec, get_gpu
from topologies.schema import MEDIA

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


def finish(graph: nx.Graph, gpus: int) -> nx.Graph:
    """Record the GPU count and validate (connectivity included)."""
    from topologies.schema import validate

    graph.graph["gpus"] = gpus
    return validate(graph)


def switch_attrs(tier: int, radix: int, latency: float, in_network_reduction: bool) -> dict:
    """Node attributes of a switch."""
    return {"kind": "switch", "tier": tier, "radix": int(radix), "latency": float(latency),
            "in_network_reduction": bool(in_network_reduction)}


# ---------------------------------------------------------------- parameter checks

def gpu_type(name) -> GpuSpec:
    """The catalog GPU ``name`` (UserError listing the known ones otherwise)."""
    if not isinstance(name, str | GpuSpec):
        raise UserError(f"gpu must be a GPU name, got {name!r}")
    return get_gpu(name)


def check_int(what: str, value, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``; bools and non-integral numbers are refused.

    >>> check_int("n", 4.0)
    4
    >>> check_int("n", 0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: n must be an integer >= 1, got 0
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(value) and value == int(value) and value >= minimum
    if not ok:
        raise UserError(f"{what} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive(what: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (>= 0 with ``allow_zero``)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        rule = ">= 0" if allow_zero else "> 0"
        raise UserError(f"{what} must be a finite number {rule}, got {value!r}")
    return float(value)


def check_medium(what: str, medium) -> str:
    """``medium`` if it is one of the schema's media."""
    if medium not in MEDIA:
        raise UserError(f"{what} {medium!r} is not a known medium; known: {known(MEDIA)}")
    return medium


def check_choice(what: str, value, choices) -> str:
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        raise UserError(f"{what} {value!r} is not allowed; allowed: {known(choices)}")
    return value


def bandwidth_or(what: str, value, default: float) -> float:
    """``value`` checked as a bandwidth (bytes/s), or ``default`` when it is None."""
    return default if value is None else check_positive(what, value)


# ---------------------------------------------------------------- the builder registry

#: Spec name -> builder function, filled by :func:`builder` as the builder modules load.
REGISTRY: dict = {}


def format_value(value) -> str | None:
    """A parameter value as it is written in a spec string, or None when it has no spelling
    (a graph object, a GpuSpec)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        text = repr(value) if isinstance(value, float) else str(value)
        return f"[{text}]" if any(c in text for c in ",[]") else text
    if isinstance(value, tuple | list) and all(isinstance(v, int) for v in value):
        return "x".join(str(v) for v in value)
    return None


def builder(name: str):
    """Register a builder under its spec ``name``; the graph it returns gets the spec string
    that rebuilds it (the parameters that differ from their defaults) in ``graph['spec']``."""

    def register(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def build(*args, **kwargs):
            graph = fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            parts = []
            for key, value in bound.arguments.items():
                if value is sig.parameters[key].default or value == sig.parameters[key].default:
                    continue
                text = format_value(value)
                if text is None:
                    parts = None
                    break
                parts.append(f"{key}={text}")
            graph.graph["spec"] = "" if parts is None else \
                name + (":" + ",".join(parts) if parts else "")
            # what the builder made, so analysis trusts closed forms only for this graph
            graph.graph["nodes_built"] = graph.number_of_nodes()
            graph.graph["edges_built"] = graph.number_of_edges()
            return graph

        REGISTRY[name] = build
        return build

    return register
