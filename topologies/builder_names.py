"""The builders' names, known without loading a builder (for help texts).

This module imports only the standard library, so the command line runs it from its file
without the package, whose ``__init__`` loads every builder and with them networkx and
numpy (``netmodel topology show --help`` took 0.29 s, against 0.04 s for ``netmodel
--help``).

The names are read from the registering lines themselves (``@builder("NAME")`` at the
start of a line in this package's modules, :func:`topologies.registry.builder`), so a new
builder is listed with no other edit; :func:`names` orders them as
:func:`topologies.registry.builders` does (:data:`ORDER`, the others after, in the order
they register). A test keeps the two equal.

>>> names()[:4]
('single-switch', 'flat', 'leaf-spine', 'fat-tree')
>>> set(ORDER) <= set(names())
True
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

#: Listing order: switched, hierarchical, direct, optical.
ORDER = ("single-switch", "flat", "leaf-spine", "fat-tree", "rail-optimized", "superpod", "nvl72",
         "ring", "full-mesh", "torus", "lite-groups", "ocs")

#: A line registering a builder: ``@builder("NAME")`` at the start of a line.
_REGISTERS = re.compile(r'^@builder\(\s*"([^"]+)"\s*\)', re.MULTILINE)


@cache
def names() -> tuple[str, ...]:
    """Every builder's name in listing order (:data:`ORDER` first), read from the
    registering lines of this package's modules, none of them imported (modules in the
    order of their names, which is the order :mod:`topologies.specs` loads them in)."""
    found: list[str] = []
    for path in sorted(Path(__file__).parent.glob("*.py")):
        found += _REGISTERS.findall(path.read_text(encoding="utf-8"))
    rank = {n: i for i, n in enumerate(ORDER)}
    return tuple(sorted(found, key=lambda n: rank.get(n, len(ORDER))))
