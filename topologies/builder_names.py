"""The builders' names, known without loading a builder (for help texts).

This module imports nothing, so the command line runs it from the package's folder without
the package, whose ``__init__`` loads every builder and with them networkx and numpy
(``netmodel topology show --help`` took 0.29 s, against 0.04 s for ``netmodel --help``).

:data:`NAMES` is the one list of the builders' names, in listing order:
:func:`topologies.registry.builder` refuses to register a name not in it, and
:mod:`topologies.specs` a name in it that no builder module registers, so the list and the
registry cannot part (a new builder's name is added here; the error says so).

>>> NAMES[:4]
('single-switch', 'flat', 'leaf-spine', 'fat-tree')
"""

from __future__ import annotations

__all__ = ["NAMES"]

#: Every builder's name, in listing order: switched, hierarchical, direct, optical.
NAMES = ("single-switch", "flat", "leaf-spine", "fat-tree", "rail-optimized", "superpod", "nvl72",
         "ring", "full-mesh", "torus", "lite-groups", "ocs")
