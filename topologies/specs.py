"""Spec strings and structured specs: the user-facing front of :mod:`topologies.registry`.

Importing this module loads every builder module (so each registers itself) and checks
that every name of :data:`topologies.builder_names.NAMES` was registered (ImportError
naming the missing; :func:`topologies.registry.builder` refuses a name not there); the names
below are those of :mod:`topologies.registry`, where the grammar is described.

>>> parse_spec("fat-tree:k=8, oversubscription=2,gpu=Lite")
('fat-tree', {'k': '8', 'oversubscription': '2', 'gpu': 'Lite'})
>>> build("fat-tree:k=4,bandwidth=100Gb/s").edges["gpu0", "leaf0"]["bandwidth"]
12500000000.0
>>> build("fat-tree", {"k": 8}).graph["spec"], build("fat_tree:K=8").graph["gpus"]
('fat-tree:k=8', 128)
"""

from __future__ import annotations

from topologies import direct, hierarchical, optical, switched  # noqa: F401  (registers)
from topologies.builder_names import NAMES
from topologies.registry import (
    REGISTRY,
    BuilderInfo,
    ParamInfo,
    bound_arguments,
    build,
    build_arguments,
    builders,
    fabric_table,
    get_builder,
    parse_spec,
)

__all__ = ["REGISTRY", "BuilderInfo", "ParamInfo", "bound_arguments", "build",
           "build_arguments", "builders", "fabric_table", "get_builder", "parse_spec"]

_UNREGISTERED = [name for name in NAMES if name not in REGISTRY]
if _UNREGISTERED:
    raise ImportError(f"no builder module registers {', '.join(map(repr, _UNREGISTERED))} of "
                      "NAMES in topologies/builder_names.py: register it (@builder) in a module "
                      "that topologies.specs imports, or take it out of NAMES")
