"""Spec strings and structured specs: the user-facing front of :mod:`topologies.registry`.

Importing this module loads every builder module that
:data:`topologies.builder_names.BUILDERS` names (so each registers its builders) and checks
that every name there was registered (ImportError naming the missing;
:func:`topologies.registry.builder` refuses a name not there, or one defined in another
module); the names below are those of :mod:`topologies.registry`, where the grammar is
described.

>>> parse_spec("fat-tree:k=8, oversubscription=2,gpu=Lite")
('fat-tree', {'k': '8', 'oversubscription': '2', 'gpu': 'Lite'})
>>> build("fat-tree:k=4,bandwidth=100Gb/s").edges["gpu0", "leaf0"]["bandwidth"]
12500000000.0
>>> build("fat-tree", {"k": 8}).graph["spec"], build("fat_tree:K=8").graph["gpus"]
('fat-tree:k=8', 128)
"""

from __future__ import annotations

import importlib

from topologies.builder_names import BUILDERS, NAMES
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

for _module in dict.fromkeys(BUILDERS.values()):   # each registers its builders as it loads
    importlib.import_module(f"topologies.{_module}")

_UNREGISTERED = [name for name in NAMES if name not in REGISTRY]
if _UNREGISTERED:
    raise ImportError(f"no builder module registers {', '.join(map(repr, _UNREGISTERED))} of "
                      "BUILDERS in topologies/builder_names.py: register it (@builder) in the "
                      "module named there, or take it out of BUILDERS")
