#!/usr/bin/env python
"""Benchmark of the collective model on a 16,384-GPU fat tree (k=64, 16 pods).

Prints ``name: figure (target)`` lines. Graph build and model set-up (indexing the links)
are timed and printed but excluded from the targets; every timed query starts from a fresh
model (cold caches), as a user's first question would.

Targets (issue 4): one all-reduce of a 64-GPU group < 50 ms; all 2,048 TP-8 groups of the
fabric at once < 5 s; a sweep over 30 message sizes costs little more than one size.

Scale targets (issue 12), each case in its own Python process (so that its peak resident
memory, VmHWM, is its own; capped at 8 GB of address space and 300 s so that a case that
would exhaust the machine reports it instead): the whole-cluster all-reduce over 16,384 GPUs
with ``auto`` over every algorithm < 1 s and < 0.5 GB; ``auto`` on a 4,096-GPU group < 1 s
with growth in the group size close to p log p at most; all 2,048 TP-8 groups at once with
random placement and ``auto`` < 1 s and < 0.5 GB; the 131,072-GPU fat tree built and its
first 64-GPU all-reduce costed < 1.5 s. Graphs come from :func:`topologies.build`, which
checks them, so the models are made with ``validated=True`` (the graph is checked once).
Wall and CPU seconds are both printed: on a shared machine the CPU time is the steadier
figure. ``python scripts/bench_collectives.py scale`` runs only these.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = "fat-tree:k=64,pods=16"


def _timed(fn, repeats=3):
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from netmodel.collectives.concurrent import concurrent_cost
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    t0 = time.perf_counter()
    graph = build(SPEC)
    print(f"build {SPEC} ({graph.graph['gpus']} GPUs, {graph.number_of_nodes()} nodes, "
          f"{graph.number_of_edges()} links): {time.perf_counter() - t0:.2f} s (excluded)")
    t_init, _ = _timed(lambda: FabricCostModel(graph), repeats=1)
    print(f"model set-up (link index): {t_init * 1e3:.0f} ms (excluded)")

    def one(placement, algorithm="auto", sizes=64 * 2 ** 20):
        m = FabricCostModel(graph, placement=placement, algorithm=algorithm)
        t0 = time.perf_counter()
        r = m.sweep("all-reduce", sizes, 64)
        return time.perf_counter() - t0, r

    runs = [one("contiguous") for _ in range(3)]
    t, r = min(runs, key=lambda x: x[0])
    print(f"one all-reduce, 64 GPUs contiguous, auto over {len(FabricCostModel(graph).algorithms)}"
          f" algorithms x 3 protocols: {t * 1e3:.1f} ms (target < 50 ms) "
          f"-> {r.algorithm[0]}/{r.protocol[0]}, busbw {r.busbw[0] / 1e9:.1f} GB/s")
    t, r = min((one("contiguous", "ring") for _ in range(3)), key=lambda x: x[0])
    print(f"one all-reduce, 64 GPUs contiguous, ring only: {t * 1e3:.1f} ms")
    t, r = one("spread")
    print(f"one all-reduce, 64 GPUs spread over all 16 pods, auto: {t * 1e3:.0f} ms "
          f"(4,032 distinct inter-pod routes for one-shot; no target) -> {r.algorithm[0]}")

    sizes30 = 2.0 ** np.arange(10, 40)
    t1 = min(one("contiguous")[0] for _ in range(3))
    t30 = min(one("contiguous", sizes=sizes30)[0] for _ in range(3))
    print(f"30 sizes vs 1 size (cold model each): {t30 * 1e3:.1f} ms vs {t1 * 1e3:.1f} ms "
          f"(ratio {t30 / t1:.2f}; target: little more than one)")
    warm = FabricCostModel(graph)
    warm.collective_time("all-reduce", 1e6, 64)
    w1, _ = _timed(lambda: warm.collective_time("all-reduce", 1e6, 64), repeats=20)
    w30, _ = _timed(lambda: warm.collective_time("all-reduce", sizes30, 64), repeats=20)
    print(f"warm collective_time: 1 size {w1 * 1e6:.0f} us, 30 sizes {w30 * 1e6:.0f} us")

    for algorithm in ("auto", "ring"):
        m = FabricCostModel(graph)
        t0 = time.perf_counter()
        c = concurrent_cost(m, 8, "all-reduce", sizes30, algorithm=algorithm)
        dt = time.perf_counter() - t0
        print(f"all {len(c.groups)} TP-8 groups at once ({algorithm}, 30 sizes): {dt:.2f} s "
              f"(target < 5 s) -> max slowdown {c.slowdown.max():.2f}, "
              f"{c.algorithm[0]} at 1 KiB, {c.algorithm[-1]} at 512 GiB")


# ------------------------------------------------------------------ scale (issue 12)

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024 / 1e9


import numpy as np
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from topologies import build

t0 = time.perf_counter()
{setup}
t1 = time.perf_counter()
c1 = time.process_time()
rss_setup = _status("VmRSS:")
{timed}
t2 = time.perf_counter()
print(json.dumps({{"setup": t1 - t0, "seconds": t2 - t1, "cpu": time.process_time() - c1,
                  "rss_setup": rss_setup, "peak": _status("VmHWM:"), "note": note}}))
"""

_FT16K = "g = build('fat-tree:k=64,pods=16')"
_AR = ("m = FabricCostModel(g, validated=True)\n"
       "r = m.sweep('all-reduce', 64 * 2 ** 20, {p})\n"
       "note = f'{{r.algorithm[0]}}/{{r.protocol[0]}}, busbw {{r.busbw[0] / 1e9:.1f}} GB/s'")

#: (label, setup code (untimed), timed code (sets ``note``), seconds target, GB target)
SCALE_CASES = [
    ("whole-cluster all-reduce, 16,384 GPUs, auto over every algorithm (model set-up + "
     "query; build excluded)", _FT16K, _AR.format(p=16384), 1.0, 0.5),
    ("all-reduce on a 4,096-GPU group of the 16k fat tree, auto", _FT16K, _AR.format(p=4096),
     1.0, None),
    ("all 2,048 TP-8 groups at once, random placement, auto, 30 sizes", _FT16K,
     "m = FabricCostModel(g, placement='random', validated=True)\n"
     "c = concurrent_cost(m, 8, 'all-reduce', 2.0 ** np.arange(10, 40))\n"
     "note = f'{c.algorithm[0]} at 1 KiB, {c.algorithm[-1]} at 512 GiB, max slowdown '"
     "f'{c.slowdown.max():.2f}'", 1.0, 0.5),
    ("131,072-GPU fat tree (k=128, 32 pods): build + first 64-GPU all-reduce", "pass",
     "g = build('fat-tree:k=128,pods=32')\n" + _AR.format(p=64), 1.5, None),
]

GROWTH = (512, 1024, 2048, 4096, 8192, 16384)


def _child(setup, timed, cap_gb=8, timeout=300):
    code = _CHILD.format(root=str(ROOT), cap=int(cap_gb * 2 ** 30), setup=setup, timed=timed)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout} s"}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        if "MemoryError" in out.stderr:
            last = f"out of memory (more than the {cap_gb} GB cap)"
        return {"error": last}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _verdict(value, target, unit):
    if target is None:
        return ""
    return f" (target < {target:g} {unit}: {'ok' if value < target else 'MISSED'})"


def scale() -> None:
    for label, setup, timed, t_target, m_target in SCALE_CASES:
        r = _child(setup, timed)
        if "error" in r:
            print(f"{label}: FAILED: {r['error']}")
            continue
        print(f"{label}: {r['seconds']:.2f} s{_verdict(r['seconds'], t_target, 's')} "
              f"(CPU {r['cpu']:.2f} s); "
              f"peak RSS {r['peak']:.2f} GB{_verdict(r['peak'], m_target, 'GB')} "
              f"(after set-up {r['rss_setup']:.2f} GB, set-up {r['setup']:.2f} s) "
              f"-> {r['note']}")
    times = []
    for p in GROWTH:
        r = _child(_FT16K, _AR.format(p=p))
        times.append(r.get("seconds", float("nan")))
    import numpy as np

    ok = np.isfinite(times)
    slope = np.polyfit(np.log(np.array(GROWTH)[ok]), np.log(np.array(times)[ok]), 1)[0] \
        if ok.sum() >= 2 else float("nan")
    plogp = np.polyfit(np.log(GROWTH), np.log(np.array(GROWTH) * np.log(GROWTH)), 1)[0]
    print("auto all-reduce time by group size: " + ", ".join(
        f"{p}: {t:.3g} s" for p, t in zip(GROWTH, times, strict=True))
        + f"; growth exponent {slope:.2f} (p log p over this range: {plogp:.2f})")


if __name__ == "__main__":
    if sys.argv[1:] == ["scale"]:
        scale()
    else:
        main()
        scale()
