"""Lookup tables of collective costs for other programs: rows, CSV, JSON and nccl-tests text.

Row schema (one row per op x group size x message size, and per algorithm when every
algorithm is asked for), in this column order:

==============  =======  ==========================================================
column          type     meaning
==============  =======  ==========================================================
op              str      collective (all-reduce, reduce-scatter, all-gather, ...)
algorithm       str      the algorithm (under ``auto``: the fastest for that size)
protocol        str      LL, LL128 or Simple (NCCL's protocols)
group_size      int      GPUs in the group
bytes           int      message size, nccl-tests convention (full buffer per rank)
seconds         float    time of one collective
algbw_GBps      float    bytes / seconds / 1e9
busbw_GBps      float    algbw x nccl-tests bus factor (2(p-1)/p for all-reduce, ...)
==============  =======  ==========================================================

>>> import networkx as nx
>>> from netmodel.collectives.calibration import Calibration
>>> from netmodel.collectives.model import FabricCostModel
>>> g = nx.Graph(name="star", spec="", gpus=2)
>>> g.add_node("sw", kind="switch", tier=0, radix=2, latency=0.0, in_network_reduction=False)
>>> for i in range(2):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
>>> m = FabricCostModel(g, algorithm="ring", calibration=Calibration.ideal(alpha=1e-6))
>>> rows = cost_rows(m, ["all-gather"], [1e6], [2])
>>> print(to_csv(rows), end="")
op,algorithm,protocol,group_size,bytes,seconds,algbw_GBps,busbw_GBps
all-gather,ring,ideal,2,1000000,0.000501,1.996008,0.998004
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from compute.errors import UserError
from compute.units import format_bytes

__all__ = ["COLUMNS", "cost_rows", "to_csv", "to_json", "to_nccl"]

COLUMNS = ("op", "algorithm", "protocol", "group_size", "bytes", "seconds", "algbw_GBps",
           "busbw_GBps")


def cost_rows(model, ops, sizes, groups, algorithm: str | None = None) -> list[dict]:
    """Rows (dicts with :data:`COLUMNS`) for every op x group size x size.

    ``algorithm``: None or ``"auto"`` (the fastest per size), a name, or ``"all"`` (one
    row per valid algorithm, each with its fastest protocol).
    """
    from netmodel.collectives.cost import GroupCut, bus_factor

    sizes = np.asarray(sizes, dtype=float)
    rows = []
    for op in ops:
        for p in groups:
            if p < 2:
                raise UserError(f"group sizes must be >= 2 GPUs, got {p}")
            group = model.group(int(p))
            try:
                series = _series(model, op, sizes, group, algorithm)
            except GroupCut as exc:
                raise UserError(f"the group of {p} GPUs is cut apart: {exc}") from None
            factor = bus_factor(op, len(group))
            for entry in series:
                name, t, protos = entry[0], entry[1], entry[2]
                names = entry[3] if name is None else (name,) * len(sizes)
                for i, n in enumerate(sizes):
                    algbw = n / t[i] / 1e9
                    rows.append({"op": op, "algorithm": names[i], "protocol": protos[i],
                                 "group_size": len(group), "bytes": int(round(n)),
                                 "seconds": float(t[i]), "algbw_GBps": float(algbw),
                                 "busbw_GBps": float(algbw * factor)})
    return rows


def _series(model, op, sizes, group, algorithm):
    """[(algorithm or None, seconds, protocols[, algorithm per size])]; raises GroupCut."""
    from netmodel.collectives.cost import GroupCut

    if algorithm != "all":
        sw = model.sweep(op, sizes, group, algorithm)
        if not np.all(np.isfinite(sw.time)):
            raise GroupCut(group[0], group[-1])
        return [(None, sw.time, sw.protocol, sw.algorithm)]
    best: dict = {}
    for name, proto, a, b, _ in model.candidates(op, group, "auto"):
        t = a + b * sizes
        if name not in best:
            best[name] = (t, np.full(len(sizes), proto, dtype=object))
        else:
            bt, bp = best[name]
            better = t < bt
            best[name] = (np.where(better, t, bt), np.where(better, proto, bp))
    return [(name, t, tuple(pr)) for name, (t, pr) in best.items()]


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e-3 else f"{v:.6f}".rstrip("0").rstrip(".")
    return str(v)


def to_csv(rows) -> str:
    """CSV text with a header row of :data:`COLUMNS`."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_fmt(r[c]) for c in COLUMNS])
    return buf.getvalue()


def to_json(rows, meta: dict) -> str:
    """JSON text: ``{"schema": [...columns], "units": {...}, **meta, "rows": [...]}``."""
    doc = {"schema": list(COLUMNS),
           "units": {"bytes": "bytes", "seconds": "s", "algbw_GBps": "1e9 bytes/s",
                     "busbw_GBps": "1e9 bytes/s"},
           **meta, "rows": rows}
    return json.dumps(doc, indent=1) + "\n"


def to_nccl(rows, title: str = "") -> str:
    """nccl-tests-like text, one block per op and group size (size, time, algbw, busbw)."""
    out = [f"# {title}"] if title else []
    key = None
    for r in rows:
        k = (r["op"], r["group_size"])
        if k != key:
            key = k
            out.append(f"#\n# {r['op']}, {r['group_size']} GPUs")
            out.append(f"# {'size':>12} {'count':>12} {'time(us)':>10} {'algbw':>8} "
                       f"{'busbw':>8}  algorithm/protocol")
            out.append(f"# {'(B)':>12} {'(elements)':>12} {'':>10} {'(GB/s)':>8} {'(GB/s)':>8}")
        out.append(f"  {r['bytes']:>12d} {r['bytes'] // 4:>12d} {r['seconds'] * 1e6:>10.2f} "
                   f"{r['algbw_GBps']:>8.2f} {r['busbw_GBps']:>8.2f}  "
                   f"{r['algorithm']}/{r['protocol']}")
    if rows:
        out.append(f"# {len(rows)} rows, sizes {format_bytes(rows[0]['bytes'])} .. "
                   f"{format_bytes(max(r['bytes'] for r in rows))}")
    return "\n".join(out) + "\n"
