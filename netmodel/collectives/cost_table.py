"""Lookup tables of collective costs for other programs: rows, CSV, JSON, nccl-tests logs
and Vidur's network profiles.

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
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from compute.errors import UserError
from compute.units import format_bytes
from compute.validate import describe, flag, is_whole, listed, of_type

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from netmodel.collectives.model import FabricCostModel

    #: A row of :data:`COLUMNS`: ``{"op": ..., "algorithm": ..., ...}``.
    Row = Mapping[str, Any]

__all__ = ["COLUMNS", "NCCL_TESTS", "VIDUR_COLUMNS", "check_groups", "cost_rows", "table_doc",
           "to_csv", "to_json", "to_nccl", "to_nccl_short", "to_nccl_tests", "vidur_files"]

COLUMNS = ("op", "algorithm", "protocol", "group_size", "bytes", "seconds", "algbw_GBps",
           "busbw_GBps")


def check_groups(groups: Iterable[int]) -> tuple:
    """``groups`` as a tuple of group sizes, each a whole number of GPUs >= 2 (the table's
    rule, which the command line checks before it builds a fabric).

    >>> check_groups([2, 8])
    (2, 8)
    >>> check_groups([4, 1])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: group sizes must be whole numbers of GPUs >= 2, got 1
    """
    groups = tuple(listed("groups", groups, "group sizes (whole numbers of GPUs >= 2)"))
    for p in groups:
        if not (is_whole(p) and p >= 2):
            raise UserError(f"group sizes must be whole numbers of GPUs >= 2, got {describe(p)}")
    return groups


def cost_rows(model: FabricCostModel, ops: Iterable[str], sizes: ArrayLike,
              groups: Iterable[int], algorithm: str | None = None) -> list[dict[str, Any]]:
    """Rows (dicts with :data:`COLUMNS`) for every op x group size x size.

    ``algorithm``: None or ``"auto"`` (the fastest per size), a name, or ``"all"`` (one
    row per valid algorithm, each with its fastest protocol).
    """
    from compute.comm import check_op
    from netmodel.collectives.cost import GroupCut
    from netmodel.collectives.model import FabricCostModel, check_sizes
    from netmodel.collectives.results import bus_factor

    of_type("model", model, FabricCostModel, "FabricCostModel(graph)", default=False)
    ops = tuple(check_op(op) for op in listed("ops", ops, "collective operations"))
    sizes = check_sizes(listed("sizes", sizes, "message sizes in bytes"), bounded=True,
                        param="sizes")
    groups = check_groups(groups)
    if not (algorithm is None or isinstance(algorithm, str)):
        raise UserError(f"algorithm must be a name, 'auto', 'all' or None, got {describe(algorithm)}")
    rows = []
    for op in ops:
        for p in groups:
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


def _series(model: FabricCostModel, op: str, sizes: np.ndarray, group: tuple[Hashable, ...],
            algorithm: str | None) -> list[tuple]:
    """[(algorithm or None, seconds, protocols[, algorithm per size])]; raises GroupCut."""
    from netmodel.collectives.cost import GroupCut

    if algorithm != "all":
        sw = model.sweep(op, sizes, group, algorithm)
        if not np.all(np.isfinite(sw.time)):
            raise GroupCut(group[0], group[-1])
        return [(None, sw.time, sw.protocol, sw.algorithm)]
    best: dict = {}
    cands = model.candidates(op, group, "auto")
    for (name, proto, _, _, _), t in zip(cands, model.candidate_times(cands, sizes),
                                         strict=True):
        if name not in best:
            best[name] = (t, np.full(len(sizes), proto, dtype=object))
        else:
            bt, bp = best[name]
            better = t < bt
            best[name] = (np.where(better, t, bt), np.where(better, proto, bp))
    return [(name, t, tuple(pr)) for name, (t, pr) in best.items()]


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e-3 else f"{v:.6f}".rstrip("0").rstrip(".")
    return str(v)


def to_csv(rows: Iterable[Row]) -> str:
    """CSV text with a header row of :data:`COLUMNS`."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_fmt(r[c]) for c in COLUMNS])
    return buf.getvalue()


def table_doc(rows: Sequence[Row], meta: Mapping[str, Any]) -> dict:
    """The table as a JSON-ready document: ``{"schema": [...columns], "units": {...},
    **meta, "rows": [...]}``."""
    return {"schema": list(COLUMNS),
            "units": {"bytes": "bytes", "seconds": "s", "algbw_GBps": "1e9 bytes/s",
                      "busbw_GBps": "1e9 bytes/s"},
            **meta, "rows": rows}


def to_json(rows: Sequence[Row], meta: Mapping[str, Any]) -> str:
    """JSON text of :func:`table_doc`."""
    return json.dumps(table_doc(rows, meta), indent=1) + "\n"


def to_nccl_short(rows: Sequence[Row], title: str = "") -> str:
    """A short nccl-tests-like table, one block per op and group size (size, count, time,
    algbw, busbw, and the algorithm/protocol chosen), for people rather than log parsers."""
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


#: The short table's former name (``--format nccl``).
to_nccl = to_nccl_short

#: op -> (nccl-tests binary, redop, root, count divisor): what nccl-tests prints in its
#: type/redop/root columns and how its element count relates to the size (per
#: NVIDIA/nccl-tests src/*.cu: all-gather, reduce-scatter and all-to-all count the
#: per-rank part, ``size / 4 / p`` floats; the reductions print ``sum``, the others ``none``;
#: only broadcast and reduce have a root).
NCCL_TESTS = {
    "all-reduce": ("all_reduce_perf", "sum", -1, False),
    "reduce-scatter": ("reduce_scatter_perf", "sum", -1, True),
    "all-gather": ("all_gather_perf", "none", -1, True),
    "broadcast": ("broadcast_perf", "none", 0, False),
    "reduce": ("reduce_perf", "sum", 0, False),
    "all-to-all": ("alltoall_perf", "none", -1, True),
    "send-recv": ("sendrecv_perf", "sum", -1, False),
}

# nccl-tests' printf layouts (src/common.cu): a title line over the two column groups, the
# column names, their units, then one line per size (parameters, then out-of-place and
# in-place results).
_NT_GROUPS = ("# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
              "in-place          ")
_NT_NAMES = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s"
_NT_UNITS = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s"
_NT_PARAMS = "%12d  %12d  %8s  %6s  %6d"
_NT_RESULT = "  %7s  %6.2f  %6.2f  %5d"


def _nt_time(us: float) -> str:
    """nccl-tests' time column: fewer decimals as the time grows."""
    if us >= 10000.0:
        return format(us, "7.0f")
    if us >= 100.0:
        return format(us, "7.1f")
    return format(us, "7.2f")


def to_nccl_tests(rows: Iterable[Row], title: str = "", *, per_algorithm: bool = False) -> str:
    """Text laid out exactly as nccl-tests' ``*_perf`` binaries print it.

    One block per op and group size (and per algorithm when ``per_algorithm``), each as
    one run of the matching binary (``all_reduce_perf`` ...) would print it: the
    ``# Collective test starting`` line, the three header lines, one line per size with
    size, count (4-byte floats), type, redop, root and the out-of-place and in-place
    time (us), algbw and busbw (GB/s) and ``#wrong`` (13 columns), and the
    ``# Out of bounds values`` and ``# Avg bus bandwidth`` footer. A model moves no data,
    so ``#wrong`` is 0, and in-place equals out-of-place. ``title`` goes on a comment
    line first.

    >>> row = {"op": "all-reduce", "group_size": 8, "bytes": 1048576, "seconds": 2e-5,
    ...        "algbw_GBps": 52.4288, "busbw_GBps": 91.7504, "algorithm": "ring",
    ...        "protocol": "LL128"}
    >>> print(to_nccl_tests([row]).splitlines()[7])
         1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0
    """
    per_algorithm = flag("", "per_algorithm", per_algorithm)
    blocks: dict = {}
    for r in rows:
        key = (r["op"], r["group_size"], r["algorithm"] if per_algorithm else None)
        blocks.setdefault(key, []).append(r)
    out = []
    for (op, p, algo), block in blocks.items():
        binary, redop, root, per_rank = NCCL_TESTS[op]
        sizes = [r["bytes"] for r in block]
        if title:
            out.append(f"# {title}")
        out.append(f"# Collective test starting: {binary}")
        out.append(f"# nThread 1 nGpus {p} minBytes {min(sizes)} maxBytes {max(sizes)}")
        chosen = algo or ", ".join(dict.fromkeys(r["algorithm"] for r in block))
        out.append(f"# netmodel: {op} on {p} GPUs by {chosen} (modelled, not measured: "
                   f"#wrong is 0, in-place equals out-of-place)")
        out.append("#")
        out.append(_NT_GROUPS % ("", "", "", "", ""))
        out.append(_NT_NAMES % ("size", "count", "type", "redop", "root", "time", "algbw",
                                "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"))
        out.append(_NT_UNITS % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "",
                                "(us)", "(GB/s)", "(GB/s)", ""))
        busbw = []
        for r in block:
            count = r["bytes"] // 4 // (p if per_rank else 1)
            res = _NT_RESULT % (_nt_time(r["seconds"] * 1e6), r["algbw_GBps"], r["busbw_GBps"],
                                0)
            out.append(_NT_PARAMS % (r["bytes"], count, "float", redop, root) + res + res)
            busbw += [r["busbw_GBps"]] * 2  # out-of-place and in-place
        out.append("# Out of bounds values : 0 OK")
        out.append(f"# Avg bus bandwidth    : {sum(busbw) / len(busbw):g} ")
        out.append("#")
    return "\n".join(out) + "\n" if out else ""


#: Columns of Vidur's network profiles (microsoft/vidur data/profiling/network/*/
#: all_reduce.csv and send_recv.csv): an unnamed index column, then the time statistics of
#: the collective in milliseconds, and what was measured; ``{c}`` is the collective
#: (``all_reduce``, ``send_recv``).
VIDUR_COLUMNS = ("", "time_stats.{c}.min", "time_stats.{c}.max", "time_stats.{c}.mean",
                 "time_stats.{c}.median", "time_stats.{c}.std", "rank", "num_workers", "size",
                 "collective", "devices_per_node", "max_devices_per_node")


def vidur_files(model: FabricCostModel, rows: Iterable[Row]) -> dict[str, bytes]:
    """Vidur network profiles: ``{"all_reduce.csv": bytes, "send_recv.csv": ...}``, one file
    per op of ``rows`` (the op's name with underscores, as Vidur names them).

    Columns: :data:`VIDUR_COLUMNS`. A model has one time per size, so min, max, mean and
    median are that time (ms) and std is 0; ``rank`` is 0, ``num_workers`` the group size,
    ``size`` the message size (bytes), ``devices_per_node`` the most group members in one
    scale-up domain (Vidur reads all-reduce rows with ``devices_per_node == num_workers``,
    tensor parallelism inside a node, and send-recv rows with 1, across nodes, or 2) and
    ``max_devices_per_node`` the fabric's largest scale-up domain. Rows must hold one
    algorithm per size (not ``algorithm="all"``).
    """
    from netmodel.collectives.group_domains import domains

    graph = model.graph
    node = max(len(d) for d in domains(graph, model.router.gpu_list))
    per_node: dict = {}
    tables: dict = {}
    for r in rows:
        c = r["op"].replace("-", "_")
        p = r["group_size"]
        if p not in per_node:
            per_node[p] = max(len(d) for d in domains(graph, model.group(p)))
        ms = r["seconds"] * 1e3
        tables.setdefault(c, []).append(
            [repr(ms), repr(ms), repr(ms), repr(ms), "0.0", "0", str(p), str(r["bytes"]), c,
             str(per_node[p]), str(node)])
    out = {}
    for c, body in tables.items():
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([col.format(c=c) for col in VIDUR_COLUMNS])
        for i, line in enumerate(body):
            w.writerow([str(i), *line])
        out[f"{c}.csv"] = buf.getvalue().encode()
    return out
