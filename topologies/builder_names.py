"""The builders' names and modules, known without loading a builder (for help texts).

This module imports nothing, so the command line runs it from the package's folder without
the package, whose ``__init__`` loads every builder and with them networkx and numpy
(``netmodel topology show --help`` took 0.29 s, against 0.04 s for ``netmodel --help``).

:data:`BUILDERS` is the one registration of a builder: its name, at its place in listings,
and the module of ``topologies/`` that defines it. :mod:`topologies.specs` imports every
module named there (each registers its builders as it loads: :func:`topologies.registry.builder`)
and refuses to load while a name is not registered; :func:`topologies.registry.builder`
refuses a name not here, or registered from another module than the one named here, so
the table and the registry cannot part (a new builder is added here; the error says so).
:data:`NAMES` is its names, in order.

>>> NAMES[:4]
('single-switch', 'flat', 'leaf-spine', 'fat-tree')
>>> BUILDERS["torus"]
'direct'
"""

from __future__ import annotations

__all__ = ["BUILDERS", "NAMES"]

#: Every builder's name, in listing order (switched, hierarchical, direct, optical), and the
#: module of ``topologies/`` that defines it (``topologies.<module>``).
BUILDERS = {
    "single-switch": "switched", "flat": "switched", "leaf-spine": "switched",
    "fat-tree": "switched", "rail-optimized": "hierarchical", "superpod": "hierarchical",
    "nvl72": "hierarchical", "ring": "direct", "full-mesh": "direct", "torus": "direct",
    "lite-groups": "direct", "ocs": "optical",
}

#: Every builder's name, in listing order (the keys of :data:`BUILDERS`).
NAMES = tuple(BUILDERS)
