"""Fabrics as networkx graphs: direct-connect, flat and hierarchical switched, optical
circuit-switched. See :mod:`topologies.schema` for the graph schema every builder obeys,
:mod:`topologies.registry` for spec strings and structured specs (``build(name, params)``),
and :mod:`topologies.limits` for the size limits.

>>> g = build("single-switch:n=8")
>>> g.graph["gpus"], g.edges["gpu0", "nvs0"]["bandwidth"]
(8, 450000000000.0)
>>> g = build("single-switch", {"n": 4, "gpu": "Lite"})
>>> g.graph["spec"], g.graph["builder"], g.graph["args"]
('single-switch:n=4,gpu=Lite', 'single-switch', {'n': 4, 'gpu': 'Lite'})
"""

from topologies.analysis import FabricSummary, summary
from topologies.direct import full_mesh, lite_groups, ring, torus
from topologies.draw import plot
from topologies.hierarchical import nvl72, rail_optimized, superpod
from topologies.io import read_graph, write_graph
from topologies.optical import circuits_for, ocs, realize
from topologies.schema import (
    EDGE_KEYS,
    MEDIA,
    NODE_KINDS,
    TRACE_MEDIA,
    UNITS,
    gpu_nodes,
    gpu_spec,
    gpu_types,
    validate,
)
from topologies.specs import (
    BuilderInfo,
    ParamInfo,
    build,
    builders,
    fabric_table,
    get_builder,
    parse_spec,
)
from topologies.switched import fat_tree, flat, leaf_spine, single_switch

__all__ = [
    "EDGE_KEYS", "MEDIA", "NODE_KINDS", "TRACE_MEDIA", "UNITS", "BuilderInfo", "FabricSummary",
    "ParamInfo", "build", "builders", "circuits_for", "fabric_table", "fat_tree", "flat", "full_mesh",
    "get_builder", "gpu_nodes", "gpu_spec", "gpu_types", "leaf_spine", "lite_groups", "nvl72",
    "ocs", "parse_spec", "plot", "rail_optimized", "read_graph", "realize", "ring",
    "single_switch", "summary", "superpod", "torus", "validate", "write_graph",
]
