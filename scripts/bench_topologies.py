#!/usr/bin/env python
"""Fabric speed and memory: build + validate and summary times, peak resident memory.

Targets (issue 3): a 16,384-GPU three-tier fat tree built and validated in < 10 s and
< 2 GB resident; 131,072 GPUs in < 60 s; the summary of a 16,384-GPU fabric in < 10 s.
Issue 12 counts the 131,072-GPU build in a budget of 1.5 s with its first collective.
Export (the GraphML writer streamed its lines since the 131,072-GPU case took 14.5 s, the
JSON writer its pieces since json.dump's indent=1 took 2.8 s CPU):
``netmodel topology export`` of a 16,384- and a 131,072-GPU fat tree to GraphML and JSON
(:func:`topologies.io.write_graph`: validate + write), timed after the build.
Import (GraphML read by networkx's ElementTree reader took 4x JSON's time and 5x its memory):
:func:`topologies.io.read_graph` (parse, build, validate) of a 16,384-, 65,536- and
131,072-GPU fat tree's GraphML and JSON, and of a 1,024,000-GPU one's JSON, each file read
in a fresh process of its own.
Each case runs in its own Python process so that its peak RSS is its own. A build line
gives wall seconds and CPU seconds (the steadier figure on a shared machine), split into
the check the builder ran while building (validate, or the block checks of
:func:`topologies.common.check_blocks`) and the rest; ``full validate`` is a separate
:func:`topologies.validate` of the finished graph (what a graph from a file costs).

``netmodel topology show`` of a 1,000,000-GPU torus (:data:`SHOW_CASES`): time and peak memory.

`python scripts/bench_topologies.py [--quick] [--show] [--root DIR]` (``--quick`` skips the
131,072-GPU cases, the 1,024,000-GPU import and the 1,000,000-GPU show; ``--show`` runs
the show alone; ``--root`` measures another checkout of the project, e.g. an older commit
unpacked with ``git archive``, for before/after figures).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench_child import IMPORT_LINE, run_child

ROOT = Path(__file__).resolve().parents[1]

# (label, spec, run summary?, time target s, memory target GB)
CASES = [
    ("16,384-GPU fat tree (k=64, 16 pods): build+validate", "fat-tree:k=64,pods=16", False,
     10, 2),
    ("16,384-GPU fat tree (k=64, 16 pods): summary", "fat-tree:k=64,pods=16", True, 10, None),
    ("16,384 Lites in pairs on a k=32 fat tree: summary (no closed form)",
     "lite-groups:base=[fat-tree:k=32],lites=2", True, 10, None),
    ("SuperPOD 4 SU as 4,064 Lites: summary (exact max-flow + BFS)",
     "lite-groups:base=[superpod:sus=4],lites=4", True, None, None),
    ("131,072-GPU fat tree (k=128, 32 pods): build+validate", "fat-tree:k=128,pods=32", False,
     60, None),
    # direct fabrics built in blocks (edge by edge before: CPU 2.1 s and 0.94 s
    # for the 131,072-GPU torus and ring, 6.9 s for the 2,048-GPU mesh's 2.1 M links)
    ("131,072-GPU 3D torus (64x64x32): build+validate", "torus:dims=64x64x32", False, None,
     None),
    ("131,072-GPU ring: build+validate", "ring:n=131072", False, None, None),
    ("2,048-GPU full mesh: build+validate", "full-mesh:n=2048", False, None, None),
    # OCS cabling built in blocks (CPU 0.87 s edge by edge before)
    ("32,768 GPUs x 8 ports on 8 OCS of 32,768 ports: build+validate",
     "ocs:gpus=32768,ports=8,ocs_ports=32768", False, None, None),
    # Lite groups built in blocks (edge by edge before)
    ("131,072 Lites in pairs on a k=64 fat tree: build+validate",
     "lite-groups:base=[fat-tree:k=64],lites=2", False, None, None),
    # the bill of materials from one pass of arrays (summary CPU 1.66 -> 1.25 s:
    # PART_CASES); then summary(validated=True) for the built fabric, as topology show:
    # this case 1.09 / 0.97 -> 0.73 / 0.74 s, CLI topology show 1.90 / 2.11 -> 1.70 / 1.65 s,
    # peak RSS 0.29 / 0.28 GB both (2 shared cores); then summary's connectivity from
    # the first GPU's path-diversity search (it ran a second search of its own): summary
    # CPU best of 5 in one process 0.83 -> 0.73 s; this case (loaded) 2.94 / 2.45 ->
    # 1.96 / 1.81 s wall, peak RSS 0.28-0.29 GB both; CLI topology show user CPU
    # 1.30-1.39 -> 1.21-1.22 s
    ("131,072-GPU 3D torus (64x64x32): summary", "torus:dims=64x64x32", True, None, None),
]


def _run(program: str, root: Path, **fields):
    """The JSON that ``program`` (a case's text, its fields ``root`` and ``fields``) prints
    last, run in a process of its own that reads its memory with bench_child."""
    return run_child(IMPORT_LINE + program.format(root=str(root), **fields))


_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import topologies.common as common
from topologies import build, validate
from topologies.analysis import summary

checking = [0.0]


def timed(fn):
    def run(*args, **kwargs):
        c = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            checking[0] += time.process_time() - c
    return run


# the check a builder runs: validate (called by finish, or by assemble when its block
# checks are unsure) or the block checks (check_blocks, where the builders have them)
common.validate = timed(common.validate)
if hasattr(common, "check_blocks"):
    common.check_blocks = timed(common.check_blocks)
build("fat-tree:k=4")
checking[0] = 0.0
t1 = time.perf_counter()
c1 = time.process_time()
g = build({spec!r})
t2 = time.perf_counter()
c2 = time.process_time()
validate(g)
c3 = time.process_time()
tv = time.perf_counter() - t2
# a built fabric not checked again (summary's validated=, as topology show does);
# a checkout before it: its summary, which validates the fabric again
import inspect
told = "validated" in inspect.signature(summary).parameters
ts = time.perf_counter()
s = (summary(g, validated=True) if told else summary(g)) if {summarise} else None
t3 = time.perf_counter()
print(json.dumps({{"gpus": g.graph["gpus"], "nodes": g.number_of_nodes(),
                  "edges": g.number_of_edges(), "build": t2 - t1, "summary": t3 - ts,
                  "build_cpu": c2 - c1, "check_cpu": checking[0], "validate_cpu": c3 - c2,
                  "rss_gb": peak_rss_gb(),
                  "diameter": s and [s.diameter, s.diameter_method],
                  "bisection": s and [s.bisection_bandwidth, s.bisection_method]}}))
"""


EXPORT_CASES = [
    ("16,384-GPU fat tree (k=64, 16 pods): export", "fat-tree:k=64,pods=16"),
    ("131,072-GPU fat tree (k=128, 32 pods): export", "fat-tree:k=128,pods=32"),
]

_EXPORT_CHILD = """
import json, os, sys, tempfile, time
sys.path.insert(0, {root!r})
from topologies import build
from topologies.io import write_graph

g = build({spec!r})
out = {{"gpus": g.graph["gpus"], "after_build": status_gb("VmRSS:")}}
with tempfile.TemporaryDirectory() as tmp:
    for suffix in (".graphml", ".json"):
        path = os.path.join(tmp, "fabric" + suffix)
        t, c = time.perf_counter(), time.process_time()
        write_graph(g, path)
        out[suffix] = [time.perf_counter() - t, time.process_time() - c,
                       os.path.getsize(path), status_gb("VmHWM:")]
        os.unlink(path)
print(json.dumps(out))
"""


def _export(label, spec, root=ROOT):
    r = _run(_EXPORT_CHILD, root, spec=spec)
    parts = [f"{fmt[1:]} {r[fmt][0]:.2f} s (CPU {r[fmt][1]:.2f} s, {r[fmt][2] / 1e6:.0f} MB, "
             f"peak RSS {r[fmt][3]:.2f} GB)" for fmt in (".graphml", ".json")]
    print(f"{label}: " + "; ".join(parts) + f"; {r['gpus']:,} GPUs, RSS after the build "
          f"{r['after_build']:.2f} GB (GraphML first: its peak is the process's until then)")


IMPORT_CASES = [
    ("16,384-GPU fat tree (k=64, 16 pods): import", "fat-tree:k=64,pods=16"),
    ("65,536-GPU fat tree (k=64): import", "fat-tree:k=64"),
    ("131,072-GPU fat tree (k=128, 32 pods): import", "fat-tree:k=128,pods=32"),
    # JSON only (its GraphML takes minutes to write); parsed without a Python call per
    # object and its bytes let go once decoded: before, on a loaded 2-core machine,
    # CPU 14.4 s, peak RSS 3.21 GB
    ("1,024,000-GPU fat tree (k=160): import", "fat-tree:k=160", (".json",)),
]

_WRITE_CHILD = """
import sys
sys.path.insert(0, {root!r})
from topologies import build
from topologies.io import write_graph

g = build({spec!r})
for path in {paths!r}:
    write_graph(g, path)
"""

_READ_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from topologies.io import read_graph

t, c = time.perf_counter(), time.process_time()
g = read_graph({path!r})
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps([wall, cpu, peak_rss_gb(), g.graph["gpus"], g.number_of_nodes(),
                  g.number_of_edges()]))
"""


def _import(label, spec, suffixes=(".graphml", ".json"), root=ROOT):
    import os
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        paths = [os.path.join(tmp, "fabric" + suffix) for suffix in suffixes]
        subprocess.run([sys.executable, "-c", _WRITE_CHILD.format(
            root=str(root), spec=spec, paths=paths)], check=True)
        parts, counts = [], None
        for path in paths:
            wall, cpu, peak, *counts = _run(_READ_CHILD, root, path=path)
            parts.append(f"{path.rsplit('.', 1)[1]} {wall:.2f} s (CPU {cpu:.2f} s, "
                         f"{os.path.getsize(path) / 1e6:.0f} MB, peak RSS {peak:.2f} GB)")
    gpus, nodes, edges = counts
    print(f"{label}: " + "; ".join(parts) + f"; {gpus:,} GPUs, {nodes:,} nodes, "
          f"{edges:,} links")


def _case(label, spec, summarise, t_target, m_target, root=ROOT):
    r = _run(_CHILD, root, spec=spec, summarise=summarise)
    seconds = r["summary"] if summarise else r["build"]
    verdict = ""
    if t_target:
        verdict += f" (target < {t_target} s: {'ok' if seconds < t_target else 'MISSED'})"
    if m_target:
        verdict += f"; peak RSS {r['rss_gb']:.2f} GB (target < {m_target} GB: " \
                   f"{'ok' if r['rss_gb'] < m_target else 'MISSED'})"
    else:
        verdict += f"; peak RSS {r['rss_gb']:.2f} GB"
    print(f"{label}: {seconds:.2f} s{verdict}")
    print(f"    {r['gpus']:,} GPUs, {r['nodes']:,} nodes, {r['edges']:,} links"
          + (f"; build {r['build']:.2f} s" if summarise else
             f"; CPU: build {r['build_cpu'] - r['check_cpu']:.3f} s + check "
             f"{r['check_cpu']:.3f} s; full validate {r['validate_cpu']:.3f} s"))
    if summarise:
        bis = r["bisection"]
        bis_text = "n/a" if bis[0] is None else f"{bis[0] / 1e12:.4g} TB/s"
        print(f"    diameter {r['diameter'][0]} ({r['diameter'][1]}); bisection {bis_text} "
              f"({bis[1]})")


COMPARE_CASES = [
    ("65,536-GPU fat tree (k=64) against a ring: topology compare", "fat-tree:k=64"),
    ("524,288-GPU fat tree (k=128) against a ring: topology compare", "fat-tree:k=128"),
]

_COMPARE_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from netmodel.study.topology_compare import compare_topologies

t, c = time.perf_counter(), time.process_time()
r = compare_topologies([{spec!r}, "ring:n=8"])
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({{"links": sum(row.links for row in r.rows), "wall": wall, "cpu": cpu,
                  "rss_gb": peak_rss_gb()}}))
"""


def _compare(label, spec, root=ROOT):
    """``netmodel topology compare`` of a large fat tree and a ring (netmodel/study/
    topology_compare.py): its per-link time and memory, which MAX_LINKS's estimate uses
    (SECONDS_PER_LINK, BYTES_PER_LINK; at first k=128 took 65 s and 2.95 GB before, 53 s and
    2.5 GB after; then, k=64: CPU 8.57 -> 7.32 s, peak RSS 0.36 -> 0.37 GB, the bill of
    materials and network bill's port use from arrays; then, loaded 2-core machine, CPU
    seconds of two runs each: k=64 6.15 / 5.63 -> 4.36 / 4.55 s, k=128 51.9 / 43.7 ->
    37.6 / 39.5 s, peak RSS 0.37 -> 0.36 GB and 2.59 -> 2.45 GB: hardware_radius's
    articulation points and bridges from one low-point pass over integer positions, a
    component's signature from ints, a node or link alone decided without one, its
    cutter's edges read in one pass, the GPUs' die and package components apart from the
    rest, and the summary not validating the built fabric again; what is left is
    failure_domains.components (a Component a link end) and network_bill's loops).
    Then (hardware_radius from failure_domains.component_arrays, network_bill's optics and
    cables from the edge arrays, one edge_arrays for both), loaded 2-core machine, HEAD
    export against HEAD + that change run back to back: k=64 4.46 -> 2.37 s wall, CPU 4.43 -> 1.85
    s, peak RSS 0.36 -> 0.26 GB; k=128 49.8 -> 24.6 s wall (15.5 s when quieter), CPU 37.1
    -> 14.8 s, peak RSS 2.45 -> 1.65 GB. Then (the summary reads the same edge arrays),
    netmodel topology compare fat-tree:k=128 ring:n=8 by the CLI, loaded 2-core machine, back
    to back: 16.1 -> 15.2 s wall, user + sys 16.8 -> 15.5 s, peak RSS 1.307 -> 1.302 GB."""
    r = _run(_COMPARE_CHILD, root, spec=spec)
    print(f"{label}: {r['wall']:.2f} s (CPU {r['cpu']:.2f} s); peak RSS {r['rss_gb']:.2f} GB")
    print(f"    {r['links']:,} links: {r['wall'] / r['links'] * 1e6:.1f} us and "
          f"{r['rss_gb'] * 1e9 / r['links']:,.0f} B a link")


# (label, spec): CPU seconds of each analysis that reads every link, after the build
PART_CASES = [
    ("131,072-GPU 3D torus (64x64x32): analyses", "torus:dims=64x64x32"),
    ("27,648-GPU fat tree (k=48): analyses", "fat-tree:k=48"),
]

_PART_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from topologies import build
from topologies.analysis import summary
from topologies.inventory import bill_of_materials, port_use
from netmodel.study.network_bill import network_bill
from netmodel.study.topology_compare import _gpus_per_host
from topologies.hardware_radius import hardware_radius

g = build({spec!r})
out = {{"links": g.number_of_edges()}}
for name, fn in [("bill_of_materials", bill_of_materials), ("port_use", port_use),
                 ("summary", summary), ("network_bill", network_bill),
                 ("hardware_radius", lambda g: hardware_radius(
                     g, gpus_per_host=_gpus_per_host(g)))]:
    c = time.process_time()
    fn(g)
    out[name] = time.process_time() - c
out["rss_gb"] = peak_rss_gb()
print(json.dumps(out))
"""


def _parts(label, spec, root=ROOT):
    """CPU of each analysis of one fabric. 536efab (the links read once into arrays,
    shared by the bill of materials and port use), loaded 2-core machine, torus:dims=64x64x32
    after its build, best of 3 in one process, before -> after: bill_of_materials 0.49 ->
    0.24 s, port_use 0.30 -> 0.22 s, summary 1.66 -> 1.25 s, network_bill 2.22 -> 1.43 s;
    hardware_radius unchanged (7-9 s here: failure_domains.components makes a Component
    a link, _cut_points a biconnected-components pass in Python); peak RSS 0.56 GB both.
    Then, torus, back to back on a loaded 2-core machine: hardware_radius 4.34 -> 1.13 s
    (its classes as arrays: failure_domains.component_arrays), network_bill 1.32 -> 0.47 s
    (optics and cables from the edge arrays), peak RSS 0.51 -> 0.33 GB."""
    r = _run(_PART_CHILD, root, spec=spec)
    parts = ", ".join(f"{k} {r[k]:.2f} s" for k in ("bill_of_materials", "port_use", "summary",
                                                      "network_bill", "hardware_radius"))
    print(f"{label}: CPU {parts}; peak RSS {r['rss_gb']:.2f} GB ({r['links']:,} links)")


# (label, spec): the CLI's topology show, its own process (build, analysis and table)
SHOW_CASES = [
    ("1,000,000-GPU 3D torus (100x100x100): topology show", "torus:dims=100x100x100"),
]

_SHOW_CHILD = """
import contextlib, io, json, sys, time
sys.path.insert(0, {root!r})
sys.argv = ["netmodel", "topology", "show", {spec!r}]
t, c = time.perf_counter(), time.process_time()
from netmodel.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            raise
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({{"wall": wall, "cpu": cpu, "rss_gb": peak_rss_gb(),
                  "lines": len(out.getvalue().splitlines())}}))
"""


def _show(label, spec, root=ROOT):
    """``netmodel topology show`` of a 1,000,000-GPU torus (under the 2,000,000-node
    limit), imports included, in a process of its own. With its analysis on the edge
    arrays: the first GPU's search and path count by scipy and numpy, not dicts a node;
    the link count, the GPU list and the edge arrays' neighbour positions in C), loaded
    2-core machine (CPU pressure ~98%), this case for HEAD 2b176c50's export against the
    change with _fill's chunks (bfe0b698): 122.0 -> 69.9 s wall, CPU 33.4 -> 19.1 s, peak
    RSS 1.85 -> 1.69 GB. What is left is the networkx graph itself: its build (a dict a
    node, a row and a dict a link: ~6-8 s CPU and 1.2 GB resident) and reading its links
    into arrays (~6 s)."""
    r = _run(_SHOW_CHILD, root, spec=spec)
    print(f"{label}: {r['wall']:.2f} s (CPU {r['cpu']:.2f} s); peak RSS {r['rss_gb']:.2f} GB"
          f" ({r['lines']} lines)")


def main(argv: list[str] | None = None) -> None:
    args = list(argv if argv is not None else sys.argv[1:])
    quick = "--quick" in args
    show_only = "--show" in args
    root = Path(args[args.index("--root") + 1]).resolve() if "--root" in args else ROOT
    if root != ROOT:
        print(f"(measuring {root})")
    # --quick skips the largest fabric of each kind of case
    for cases, run, largest in ((CASES, _case, ("131,072",)),
                                (EXPORT_CASES, _export, ("131,072",)),
                                (IMPORT_CASES, _import, ("131,072", "1,024,000")),
                                (PART_CASES, _parts, ("131,072",)),
                                (SHOW_CASES, _show, ("1,000,000",)),
                                (COMPARE_CASES, _compare, ("524,288",))):
        for case in cases:
            if show_only and run is not _show:
                continue
            if quick and any(size in case[0] for size in largest):
                print(f"{case[0]}: skipped (--quick)")
                continue
            run(*case, root=root)

if __name__ == "__main__":
    main()
