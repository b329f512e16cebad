"""A torus fabric's ``dims`` graph attribute, as the schema reads it.

:func:`check_dims` holds the attribute (its type checked already by
:func:`topologies.schema.check_graph_attributes`) against the graph: its sides, its GPUs'
names and its GPU-GPU edges; :func:`topologies.schema.validate` calls it on every graph
that carries ``dims``. Refusals are :class:`~compute.errors.UserError` ``invalid fabric
graph: ...``, naming the attribute, the GPU or the edge at fault.
"""

from __future__ import annotations

import math
from itertools import chain, repeat

import networkx as nx
import numpy as np

from compute.validate import describe, number_text, read_number
from topologies.schema_text import invalid

__all__ = ["check_dims"]


def check_dims(graph: nx.Graph, gpus: list) -> None:
    """A torus's ``dims`` (its type checked already) against the graph: 1 to 3 sides >= 2
    joined by ``x``, GPUs ``gpu0`` ... numbered row-major below their product (a degraded
    torus may lack some), and every GPU-GPU edge joining neighbours of that torus (the
    torus algorithm reads the shape from ``dims``; a ring labelled ``2x2`` would be
    costed as a torus it is not)."""
    dims = graph.graph["dims"]
    sides = [read_number("invalid fabric graph: graph attribute 'dims'", x, whole=True)
             for x in number_text("invalid fabric graph: graph attribute 'dims'", dims)
             .lower().split("x")]   # the one number grammar ('٢x٢', '1_0x2')
    if None in sides:
        sides = []
    if not 1 <= len(sides) <= 3 or min(sides) < 2:
        invalid(f"graph attribute 'dims' must be 1 to 3 torus sides >= 2 joined by 'x' (e.g. "
             f"'4x4'), got {describe(dims)}")
    total = math.prod(sides)
    if total >= 2**62:   # '1e400x2' is no float: its power of ten ({:.3g} raised OverflowError)
        shown = f"{total:.3g}" if total.bit_length() < 1000 else \
            f"about 10^{int(total.bit_length() * 0.30103)}"
        invalid(f"graph attribute 'dims' {describe(dims)} is a torus of {shown} GPUs; its sides' "
             f"product must be below 2^62")
    index = np.empty(len(gpus), dtype=np.int64)
    for k, g in enumerate(gpus):
        name = g if isinstance(g, str) else ""
        tail = name[3:]   # ASCII digits: isdigit() takes '²' (int() refuses) and '٣' (3)
        i = int(tail) if name.startswith("gpu") and tail.isascii() and tail.isdigit() else -1
        if not 0 <= i < total:
            invalid(f"graph attribute 'dims' {describe(dims)} numbers the torus's GPUs gpu0 to "
                 f"gpu{total - 1} row-major, but it has GPU {describe(g)}")
        index[k] = i
    pos = {g: k for k, g in enumerate(gpus)}
    rows = list(map(graph._adj.__getitem__, gpus))
    degree = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    other = np.fromiter(map(pos.get, chain.from_iterable(rows), repeat(-1)), dtype=np.int64,
                        count=int(degree.sum()))
    mine = np.repeat(np.arange(len(gpus)), degree)
    keep = other > mine   # GPU-GPU edges, each once
    ends = np.stack([mine[keep], other[keep]], axis=1)
    if not len(ends):
        return
    a, b = index[ends[:, 0]], index[ends[:, 1]]
    moved = np.zeros(len(a), dtype=np.int64)   # dimensions in which the ends differ
    near = np.ones(len(a), dtype=bool)         # ... each by one step round its ring
    stride = 1
    for side in reversed(sides):
        off = (b // stride % side - a // stride % side) % side
        moved += off != 0
        near &= (off == 0) | (off == 1) | (off == side - 1)
        stride *= side
    bad = np.flatnonzero((moved != 1) | ~near)
    if len(bad):
        u, v = gpus[ends[bad[0], 0]], gpus[ends[bad[0], 1]]
        invalid(f"edge {describe(u)}-{describe(v)} does not join neighbours of the {dims} torus "
             f"that graph attribute 'dims' says it is")
