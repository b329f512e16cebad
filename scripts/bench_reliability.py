#!/usr/bin/env python
"""Benchmark of blast radius and availability (issue 9's speed targets).

Prints ``name: figure (target)`` lines, each case in a fresh Python process (its own peak
resident set, VmHWM):

* static blast radius of every component class of a 16,384-GPU fabric (< 5 s): lite-flat
  and h100-dgx at 16,384 GPUs (copies of their fabric), and one natively 16,384-GPU
  leaf-spine of Lites (128 leaves of 128, 128 spines: every component of one big fabric);
  the time includes the fabric search for the best TP and batch;
* availability of 16,384 GPUs x 1 year x 1,000 trials (< 10 s on 2 cores, < 1 GB), with
  2% spares per pod and globally, and without spares; then 131,072 GPUs x 1 year x 100
  trials for scale, and x 1,000 trials with 2% spares anywhere in the cluster;
* static blast radius of one torus of GPUs alone: 32x32x16 (16,384 GPUs), and 64x64x32
  (131,072) without ``--quick``;
* static blast radius of an OCS fabric of huge port counts (Llama-3-8B): 16 GPUs each
  wired to every one of 2,048 OCS, and 4,096 without ``--quick`` (each spare site on
  every OCS: work per failure that grew with the ports);
* the instance graphs of lite-ocs with 1,024, 2,048 and 4,096 ports a Lite (its 128
  Lites; 4,096 without ``--quick``): every instance size's circuits set, as ``compare``
  and the fabric search set them (``scenario_fabric.instance_graph``);
* availability of one 16,384-GPU cell with 2% spares (a flat fabric of Lites and a
  rail-optimized cell, pod spares; the rail-optimized cell with group spares).
* study lite-gpu's reliability part for Llama-3-8B on h100-dgx and lite-flat: its spare
  chains built and solved, and their GMRES solves (alone: ``--chains``).
* the Monte Carlo spare search (``spares_needed``, 200 trials x 1 year) of lite-flat's
  Llama-3-70B decode at 1,024 and 4,096 GPUs, global and pod spares: time, peak memory and
  the loss systems it ran (alone: ``--spares-search``).
* the Monte Carlo reliability summary (``reliability_summary(method="monte-carlo")``) of
  lite-flat, lite-ocs and h100-dgx's Llama-3-70B decode at 1,024 to 131,072 GPUs (16,384
  with ``--quick``): time, peak memory, failures drawn and runs integrated (alone:
  ``--summary``).

Wall times count while other processes share the cores; the CPU time of the case is
printed beside them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench_child import IMPORT_LINE, run_child

ROOT = Path(__file__).resolve().parents[1]

#: The [collective] and [sources] tables both benchmark scenarios share.
_COLLECTIVE_AND_SOURCES = """[collective]
placement = "contiguous"
algorithm = "auto"
links = "scale-up"
calibration = "default"
[sources]
bandwidth = "benchmark"
latency = "benchmark"
"""

BIG_LEAF_SPINE = """name = "lite-leaf-spine-16k"
description = "16,384 Lites on one non-blocking leaf-spine of 256-port CPO switches"
gpu = "Lite"
[fabric]
builder = "leaf-spine"
leaves = 128
radix = 256
gpu = "$gpu"
bandwidth = "$scaleup"
medium = "co-packaged-optics"
""" + _COLLECTIVE_AND_SOURCES

NVL72_64 = """name = "nvl72-64"
description = "64 GB200 NVL72-like racks under one spine tier of 256-port switches"
gpu = "B200-HGX"
[fabric]
builder = "nvl72"
racks = 64
spine_radix = 256
gpu = "$gpu"
""" + _COLLECTIVE_AND_SOURCES

#: One 16,384-Lite flat fabric: 4 planes of one 16,384-port switch each (a plane's
#: failure slows every instance: each one's spare swap worked out in turn).
FLAT_16K = """name = "lite-flat-16k"
description = "16,384 Lites one hop apart through 4 switch planes of 16,384 ports"
gpu = "Lite"
[fabric]
builder = "flat"
n = 16384
planes = 4
radix = 16384
gpu = "$gpu"
bandwidth = "$scaleup"
medium = "co-packaged-optics"
""" + _COLLECTIVE_AND_SOURCES

#: One 16,384-H100 rail-optimized cell (2,048 servers under 512 rail leaves and 32 spines
#: of 512 ports; TP 4): 24,576 routes for the instances' footprints, 1,083 effects each
#: over the whole cell.
DGX_16K = """name = "dgx-16k"
description = "2,048 DGX H100 servers on one rail-optimized fabric"
gpu = "H100-SXM"
[fabric]
builder = "rail-optimized"
domains = 2048
spine_radix = 512
gpu = "$gpu"
scaleup_bandwidth = "$scaleup"
nic_bandwidth = "$scaleout"
nvlinks = "$nvlinks"
in_network_reduction = "$reduction"
""" + _COLLECTIVE_AND_SOURCES

_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from netmodel.study.availability import availability
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_files import load_scenario_text

scenario = {scenario!r}
if scenario.startswith("name ="):
    scenario = load_scenario_text(scenario)
elif scenario.startswith("fabric "):   # a builder's spec, as blast-radius --fabric takes it
    from netmodel.study.reliability_fabric import fabric_cluster_scenario

    scenario = fabric_cluster_scenario(scenario[len("fabric "):])
t0, c0 = time.perf_counter(), time.process_time()
c = build_cluster(scenario, {model!r}, "decode", gpus={gpus})
t1, c1 = time.perf_counter(), time.process_time()
out = {{"gpus": c.gpus, "tp": c.tp, "build": t1 - t0}}
if {what!r} == "blast":
    b = blast_radius(None, None, cluster=c)
    t2, c2 = time.perf_counter(), time.process_time()
    out.update(seconds=t2 - t0, cpu=c2 - c0, classes=len(b.rows), symmetry=len(b.effects),
               components=int(sum(len(v) for v in c.components.values())))
else:
    c.effects()
    t2, c2 = time.perf_counter(), time.process_time()
    a = availability(None, None, cluster=c, spares={spares!r}, placement={placement!r},
                     trials={trials}, horizon={horizon!r}, seed=0)
    t3, c3 = time.perf_counter(), time.process_time()
    out.update(seconds=t3 - t2, cpu=c3 - c2, effects=t2 - t1, effects_cpu=c2 - c1,
               mean=a.mc.mean,
               ci=a.mc.mean_ci, analytic=a.analytic.mean, events=a.mc.events_per_year)
out["rss_gb"] = peak_rss_gb()
print(json.dumps(out))
"""


#: The instance graphs of lite-ocs with ``ports`` ports a Lite, for each size of ``sizes``.
_INSTANCE_CHILD = """
import json, time
from dataclasses import replace
from netmodel.study.scenario_fabric import build_fabric, instance_graph
from netmodel.study.scenario_catalog import get_scenario

s = get_scenario("lite-ocs")
s = replace(s, fabric={{**s.fabric, "ports": {ports}}})
t0, c0 = time.perf_counter(), time.process_time()
g = build_fabric(s)
t1 = time.perf_counter()
edges = sum(instance_graph(s, g, size).number_of_edges() for size in {sizes!r})
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({{"build": t1 - t0, "seconds": t2 - t1, "cpu": c2 - c0, "edges": edges,
                  "rss_gb": peak_rss_gb()}}))
"""


#: study lite-gpu's reliability part for Llama-3-8B (closed forms: reliability_summary and
#: the spare curve) on two of its scenarios, each at its own GPU count and TP: the spare
#: pools' Markov chains of the busy count (availability_busy._chain_of), their build
#: (the time in _chain_of but its steady-state solves) and solves timed apart, and the
#: chains of holdings (availability_threshold._HeldChain, built and solved; CPU), and the
#: GMRES solves of the chains past DIRECT_STATES (availability_solve._solve; CPU).
_CHAIN_CHILD = """
import json, time
import netmodel.study.availability_busy as ab
import netmodel.study.availability_solve as asv
import netmodel.study.availability_threshold as at
from netmodel.study.availability import spare_curve
from netmodel.study.lite_gpu_parts import REFERENCE_SPARES
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_summary import reliability_summary

out = {{"chains": 0, "given_up": 0, "chain_cpu": 0.0, "solve_cpu": 0.0, "held": 0,
        "held_cpu": 0.0, "gmres": 0, "gmres_cpu": 0.0, "gmres_states": 0}}
chain_of, steady, held, solve = ab._chain_of, ab._steady_state, at._HeldChain, asv._solve

def timed_chain(caps, classes):
    c0 = time.process_time()
    got = chain_of(caps, classes)
    out["chain_cpu"] += time.process_time() - c0
    out["chains"] += 1
    out["given_up"] += got is None
    return got

def timed_steady(*args, **kw):
    c0 = time.process_time()
    got = steady(*args, **kw)
    out["solve_cpu"] += time.process_time() - c0
    return got

def timed_held(*args):
    c0 = time.process_time()
    try:
        return held(*args)
    finally:
        out["held"] += 1
        out["held_cpu"] += time.process_time() - c0

def timed_solve(a, *args, **kw):
    c0 = time.process_time()
    try:
        return solve(a, *args, **kw)
    finally:
        out["gmres"] += 1
        out["gmres_cpu"] += time.process_time() - c0
        out["gmres_states"] = max(out["gmres_states"], a.shape[0])

ab._chain_of, ab._steady_state, at._HeldChain = timed_chain, timed_steady, timed_held
at._solve = asv._solve = timed_solve
clusters = [build_cluster(s, "Llama-3-8B", "decode") for s in {scenarios!r}]
t0, c0 = time.perf_counter(), time.process_time()
for s, c in zip({scenarios!r}, clusters):
    r = reliability_summary(s, "Llama-3-8B", "decode", cluster=c, spares=REFERENCE_SPARES,
                            method="analytic")
    spare_curve(c, r.spares_needed_placement or r.spare_placement, fallback=True)
out.update(seconds=time.perf_counter() - t0, cpu=time.process_time() - c0,
           build_cpu=out["chain_cpu"] - out["solve_cpu"],
           clusters=[f"{{c.gpus}} x {{c.gpu.name}} TP {{c.tp}}" for c in clusters],
           rss_gb=peak_rss_gb())
print(json.dumps(out))
"""

#: The scenarios of :data:`_CHAIN_CHILD`: study lite-gpu's H100 one and a Lite one.
_CHAIN_SCENARIOS = ("h100-dgx", "lite-flat")

#: The Monte Carlo spare search (availability.spares_needed, as reliability_summary runs
#: it: 200 trials over a year, seed 0) of one cluster and placement: its answer, the
#: time and the loss systems it ran (each pool size tried is granted on one draw of the
#: failures; sizes that grant alike run once).
_SEARCH_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from netmodel.study import availability as av
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_cluster import build_cluster

c = build_cluster({scenario!r}, {model!r}, "decode", gpus={gpus})
event_kinds(c, {placement!r})   # the kinds (blast radius) kept on the cluster, not timed
made = []
if hasattr(av, "PoolRuns"):
    class Counted(av.PoolRuns):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)
    av.PoolRuns = Counted
t0, c0 = time.perf_counter(), time.process_time()
k = av.spares_needed(c, {placement!r})
out = {{"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, "spares": k,
        "gpus": c.gpus, "runs": sum(r.runs for r in made),
        "integrated": sum(r.integrated for r in made), "rss_gb": peak_rss_gb()}}
print(json.dumps(out))
"""

#: The spare searches of :data:`_SEARCH_CHILD`: lite-flat, Llama-3-70B decode.
_SEARCHES = ((1024, "global"), (4096, "global"), (1024, "pod"), (4096, "pod"))


def _spares_search() -> None:
    """:data:`_SEARCH_CHILD`'s cases (alone: ``--spares-search``). The search tries
    every pool below its bound (the time below need not fall as the pool grows), and
    each size was a whole simulation; now every size is granted on one draw, sizes that
    grant alike once. CPU, 2 shared cores at load 7-9, HEAD vs HEAD + that back to back,
    2 runs each: global 1,024 / 4,096 GPUs 2.99-3.30 / 9.78-11.60 -> 0.14-0.18 /
    0.62-0.79 s (65 simulations -> 5 loss systems, both answering 64); pod 0.22-0.31 /
    2.06-2.42 -> 0.12-0.18 / 0.96-1.01 s (None, 6 sizes; 512, 17 sizes, 7 integrated);
    peak RSS 0.12 / 0.16 -> 0.12 / 0.15 GB."""
    for gpus, placement in _SEARCHES:
        r = run_child(IMPORT_LINE + _SEARCH_CHILD.format(
            root=str(ROOT), scenario="lite-flat", model="Llama-3-70B", gpus=gpus,
            placement=placement), cwd=ROOT)
        print(f"Monte Carlo spare search, lite-flat Llama-3-70B decode, {r['gpus']:,} GPUs "
              f"{placement} (200 trials x 1 y): {r['spares']} spares in {r['seconds']:.2f} s "
              f"(CPU {r['cpu']:.2f} s); {r['runs']} loss systems, {r['integrated']} "
              f"integrated, on one draw; peak RSS {r['rss_gb']:.2f} GB")


#: The Monte Carlo reliability summary (reliability_summary(method="monte-carlo"): 200
#: trials over a year, seed 0, 1% spares) of one scenario's Llama-3-70B decode at a GPU
#: count: the cluster built and its blast radius and event kinds worked out untimed, then
#: the summary timed; its peak memory, the failures drawn (chunks of trials) and the runs
#: integrated. Each placement's pools (none, the reference, the search's) share a draw.
_SUMMARY_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from netmodel.study import availability_mc as amc
from netmodel.study import availability_mc_pools as amp
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_summary import reliability_summary

c = build_cluster({scenario!r}, "Llama-3-70B", "decode", gpus={gpus})
c.effects(), event_kinds(c, "pod"), event_kinds(c, "global")   # the blast radius, untimed
count = {{"draws": 0, "integrated": 0}}

def counted(f, key):
    def g(*a, **kw):
        count[key] += 1
        return f(*a, **kw)
    return g

amc._draw = amp._draw = counted(amc._draw, "draws")
amc._integrate = amp._integrate = counted(amc._integrate, "integrated")
t0, c0 = time.perf_counter(), time.process_time()
r = reliability_summary({scenario!r}, "Llama-3-70B", "decode", cluster=c,
                        method="monte-carlo")
out = {{"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, "gpus": c.gpus,
        "spares_needed": r.spares_needed, "where": r.spares_needed_placement,
        "rss_gb": peak_rss_gb(), **count}}
print(json.dumps(out))
"""

#: The summaries of :data:`_SUMMARY_CHILD`: three shipped scenarios at 1,024 to 131,072
#: GPUs (16,384 the largest with ``--quick``).
_SUMMARIES = ("lite-flat", "lite-ocs", "h100-dgx")
_SUMMARY_GPUS = (1024, 4096, 16384, 131072)


def _summaries(quick: bool) -> None:
    """:data:`_SUMMARY_CHILD`'s cases (alone: ``--summary``). The summary ran three whole
    simulations (pool without spares, the reference at pod and global) and two searches,
    each drawing the seed's failures again; now each placement draws them once for all its
    pools, no closed forms worked out unread. This case, HEAD vs HEAD + that back to back
    (2 shared cores, load 3-5), CPU s at 1,024 / 4,096 / 16,384 / 131,072 GPUs: lite-flat
    0.41 / 1.73 / 1.95 / 10.58 -> 0.39 / 1.96 / 1.72 / 10.74 (131,072 again, twice each:
    10.3-11.3 -> 9.7-10.0), lite-ocs 0.38 / 1.65 / 1.82 / 7.78 -> 0.29 / 1.36 / 1.88 /
    6.98, h100-dgx 0.28 / 0.38 / 1.38 / 19.09 -> 0.19 / 0.37 / 1.02 / 5.65; chunks drawn
    5 -> 2 (15-20 -> 6-8 at 131,072, a run of several chunks); peak RSS alike, 0.10-0.52
    GB. Below 16,384 GPUs the searches' loss systems dominate; at 131,072 on Lites the
    integration of the four pools' runs (each chunk's intervals sorted)."""
    for scenario in _SUMMARIES:
        for gpus in _SUMMARY_GPUS[:3] if quick else _SUMMARY_GPUS:
            r = run_child(IMPORT_LINE + _SUMMARY_CHILD.format(
                root=str(ROOT), scenario=scenario, gpus=gpus), cwd=ROOT)
            print(f"Monte Carlo reliability summary, {scenario} Llama-3-70B decode, "
                  f"{r['gpus']:,} GPUs (200 trials x 1 y): {r['seconds']:.2f} s (CPU "
                  f"{r['cpu']:.2f} s); {r['draws']} chunks drawn, {r['integrated']} "
                  f"integrated; {r['spares_needed']} spares needed ({r['where']}); "
                  f"peak RSS {r['rss_gb']:.2f} GB")


#: The instance sizes of the lite-ocs case: the powers of 2 of its 128 Lites.
_POWERS = (2, 4, 8, 16, 32, 64, 128)


def _run(what, scenario, gpus, *, spares="0", placement="pod", trials=1000,
         model="Llama-3-70B", horizon="1y") -> dict:
    code = _CHILD.format(root=str(ROOT), what=what, scenario=scenario, gpus=gpus,
                         spares=spares, placement=placement, trials=trials, model=model,
                         horizon=horizon)
    return run_child(IMPORT_LINE + code, cwd=ROOT)


def _verdict(value: float, target: float, unit: str) -> str:
    return f"target < {target:g} {unit}: {'ok' if value < target else 'MISSED'}"


def _chains() -> None:
    """:data:`_CHAIN_CHILD`'s case (alone: ``--chains``)."""
    r = run_child(IMPORT_LINE + _CHAIN_CHILD.format(scenarios=_CHAIN_SCENARIOS), cwd=ROOT)
    print(f"spare chains of study lite-gpu's reliability part, Llama-3-8B on "
          f"{' and '.join(r['clusters'])}: {r['chains']} chains ({r['given_up']} past "
          f"the limit) built in {r['build_cpu']:.2f} s CPU, solved in {r['solve_cpu']:.2f} s; "
          f"{r['held']} chains of holdings built and solved in {r['held_cpu']:.2f} s; "
          f"{r['gmres']} GMRES solves (up to {r['gmres_states']:,} states) in "
          f"{r['gmres_cpu']:.2f} s CPU; the part {r['seconds']:.2f} s (CPU {r['cpu']:.2f} s); "
          f"peak RSS {r['rss_gb']:.2f} GB")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    if "--chains" in argv:   # the spare chains' case alone
        _chains()
        return
    if "--spares-search" in argv:   # the Monte Carlo spare searches alone
        _spares_search()
        return
    if "--summary" in argv:   # the Monte Carlo reliability summaries alone
        _summaries(quick)
        return
    for label, scenario in (("lite-flat", "lite-flat"), ("h100-dgx", "h100-dgx"),
                            ("one 16,384-Lite leaf-spine", BIG_LEAF_SPINE)):
        r = _run("blast", scenario, 16384)
        print(f"blast radius, every class, {label} at {r['gpus']:,} GPUs: {r['seconds']:.2f} s "
              f"({_verdict(r['seconds'], 5, 's')}; CPU {r['cpu']:.2f} s); "
              f"{r['components']:,} components of a "
              f"copy in {r['symmetry']} symmetry classes, TP {r['tp']}; fabric search "
              f"{r['build']:.2f} s; peak RSS {r['rss_gb']:.2f} GB")
    # a cell of many switches (64 NVL72 racks: 239 switches, 4,608 GPUs; TP 2), 28 copies:
    # every instance a failure touches is re-costed on the cell's switches plus its members
    r = _run("blast", NVL72_64, 129024)
    print(f"blast radius, every class, 64 NVL72 racks x 28 at {r['gpus']:,} GPUs: "
          f"{r['seconds']:.2f} s ({_verdict(r['seconds'], 5, 's')}; CPU {r['cpu']:.2f} s); "
          f"{r['components']:,} components of a copy in {r['symmetry']} symmetry classes, "
          f"TP {r['tp']}; peak RSS {r['rss_gb']:.2f} GB")
    # one cell of GPUs alone (a torus: GPUs forward traffic, every instance's footprint
    # routed, every touched instance costed on the whole degraded cell): 16x16x16
    # took 76.6 s and 64x64x32 over 300 s and 6.5 GB before the local routes and keys;
    # then a copy made by removing failed parts from the validated cell is not validated
    # again (CLI, 2 shared cores): 32x32x16 8.1 / 8.4 -> 7.7 / 7.4 s, 64x64x32 68.7 ->
    # 61.8 s, peak RSS 0.27 and 1.57 GB both; then one degraded cell per failure for
    # every instance it touches (was one copy per instance), each pair routed once for
    # footprint and shape, one search per shortest-path part (this case, 2 shared cores):
    # 32x32x16 6.35 -> 3.72 s, 64x64x32 70.4 -> 35.8 s (CPU 52.2 -> 31.9 s), peak RSS
    # 0.27 / 0.28 and 1.61 / 1.63 GB. Later 64x64x32 took 33.5-34.1 s CPU, 1.52 GB; of it
    # 14.7 s the 671,744 components' local effects (Cluster._local: the members of every
    # instance a link's routes touch looked at; now only the GPUs a failure takes or is
    # wired to, 12.9 s) and 4-5 s young collections of the collector walking the cell's
    # graph and footprints (Cluster.effects now under collector.few_collections)
    # 32x32x16 had gone 3.6 -> 17.5 s CPU with the joint routing (14d52239): each
    # destination's shortest-path search walked the whole 16,384-GPU degraded cell; it now
    # stops at the step's farthest source (SearchedRoutes._dag's reach): 13.3 -> 3.7 s.
    # Then one cost model (one router) per degraded cell for every instance a failure
    # touches, the gpu-package class grouped and answered as its gpu-die twin, degraded
    # copies that share the cell's attribute dicts where a failure only removes parts, two
    # wired GPUs routed by their link and a shortest-path part searched from both ends
    # (this case, HEAD vs HEAD + that, back to back, 2 shared cores at load 3-5):
    # 64x64x32 CPU 31.1 -> 17.3 s (wall 46.4 -> 18.4 s), peak RSS 1.52 -> 1.19 GB;
    # 32x32x16 CPU 3.70 -> 2.38 s, 0.29 -> 0.25 GB
    for dims in ("32x32x16",) if quick else ("32x32x16", "64x64x32"):
        r = _run("blast", f"fabric torus:dims={dims}", None)
        print(f"blast radius, every class, one {dims} torus of {r['gpus']:,} GPUs: "
              f"{r['seconds']:.2f} s (CPU {r['cpu']:.2f} s); {r['components']:,} components "
              f"in {r['symmetry']} symmetry classes, TP {r['tp']}; peak RSS "
              f"{r['rss_gb']:.2f} GB")
    # one OCS cell whose GPUs (and spare sites) are each wired to every OCS. Before, a
    # failure's spare sites lost walked every site's OCS (set operations now), its
    # signature held each member's 4,096-entry place (a number now) and a spare shape the
    # hops of every two of its 4,096 OCS (runs now). This case, 2 shared cores: 2,048
    # ports 12.95 -> 4.14 s (CPU 8.00 -> 2.93 s), 4,096 28.6 -> 12.9 s (CPU 26.9 -> 7.3 s),
    # peak RSS 0.32 / 0.83 -> 0.31 / 0.82 GB; the CLI's blast-radius --json byte-identical
    # (4,096 ports 58.1 -> 17.2 s wall). What is left at 4,096 is mostly the fabric
    # search's and the re-costing's instance graphs (scenario_fabric.instance_graph).
    for ports in (2048,) if quick else (2048, 4096):
        r = _run("blast", f"fabric ocs:logical=ring,ports={ports}", None, model="Llama-3-8B")
        print(f"blast radius, every class, OCS of {ports:,} ports (ring, {r['gpus']} GPUs, "
              f"Llama-3-8B): {r['seconds']:.2f} s (CPU {r['cpu']:.2f} s); "
              f"{r['components']:,} components in {r['symmetry']} symmetry classes, TP "
              f"{r['tp']}; fabric search {r['build']:.2f} s; peak RSS {r['rss_gb']:.2f} GB")
    # Every copy count's circuit pairs were made before the first was tried (ports
    # x ports / 2 pairs an instance of 2). This case, 1,024 / 2,048 / 4,096 ports, 2
    # shared cores (load ~5): 13.1 / 33.4 / 128.2 s (CPU 4.5 / 13.6 / 54.8 s), peak RSS
    # 0.38 / 1.28 / 4.68 GB -> 4.8 / 11.6 / 23.5 s (CPU 2.4 / 5.0 / 10.1 s), 0.11 / 0.18
    # / 0.29 GB. What is left is topologies.optical.realize, ~1.5 s a call at 4,096 ports
    # (the fabric validated again each call, its fibres listed each call, every pair
    # checked one by one). Since then the built fabric is not validated again (fabric checks
    # 7 -> 0 at 4,096 ports; CPU 9.0 / 9.2 -> 7.8 / 7.8 s, peak RSS 0.284 GB both).
    # lite-ocs's circuits = "best" (add8774) set each size's ring and torus on the whole
    # cell, then the chosen one again: 4,096 ports 7.43 -> 32.7 s. Now the layout is
    # chosen on the first instance's circuits and the others' copied from it
    # (scenario_fabric.first_instance_layout, circuit_copies.alike_circuits), and the
    # router takes the kept shortest paths up to DAG_NODES nodes that links join (the
    # cell's 4,096 OCS, kept without links, sent every GPU pair to a search of its own).
    # CPU, 2 shared cores at load 6-9: 1,024 / 2,048 / 4,096 ports 6.31 / 12.43 / 32.35 ->
    # 2.80 / 4.67 / 8.34 s, peak RSS 0.26 / 0.32 / 0.45 -> 0.25 / 0.33 / 0.47 GB.
    # 9431dee's per-fibre cabling record (ocs_cabling["fibres"]) was read again by each
    # realize on a members' cell and checked value by value by each validate (20 times
    # 524,288 fibres at 4,096 ports): 4,096 ports 10.1 s CPU at d78a965, 29.4 s after it.
    # A built fabric's record is read once and shared (optical.ocs_cabling, members_cell),
    # its columns checked once (schema_circuits._CHECKED_FIBRES); CPU at load 8, 2 runs each:
    # 1,024 / 2,048 / 4,096 ports 7.86 / 14.84 / 29.1-29.7 -> 3.44 / 5.30 / 9.51-9.56 s,
    # peak RSS 0.31 / 0.43 / 0.68 -> 0.27 / 0.33 / 0.47 GB; sizes 3 and 5 at 1,024 ports
    # 1.15 -> 0.58 s.
    for ports in (1024, 2048) if quick else (1024, 2048, 4096):
        r = run_child(IMPORT_LINE + _INSTANCE_CHILD.format(ports=ports, sizes=_POWERS),
                      cwd=ROOT)
        print(f"instance graphs of lite-ocs, {ports:,} ports a Lite, sizes 2-128: "
              f"{r['seconds']:.2f} s (CPU {r['cpu']:.2f} s with the build of "
              f"{r['build']:.2f} s); {r['edges']:,} circuit edges; peak RSS "
              f"{r['rss_gb']:.2f} GB")
    # Instances of 3 (a triangle; 42 of lite-ocs's 128 Lites) cannot take ports/2
    # copies of their ring: each copy takes 3 OCS planes, so ports/3 fit, and every count
    # from ports/2 down was coloured and refused first (1,024 ports: 512 down to 341).
    # circuit_planes.most_copies starts at ports/3. 1,024 ports, 2 shared cores (load
    # 7-11 from other work): 757.9 s wall, CPU 215.7 s, 172 colourings, peak RSS 0.110 GB
    # -> 2.4-4.7 s wall, CPU 0.68 s, 1 colouring, 0.101 GB; the same 42 triangles of 341
    # copies (42,966 circuits). Instances of 5 took ports/3 copies too (the colouring in
    # ring order stops there: 341, 42,625 circuits; 839.5 s wall, CPU 222.1 s, 172
    # colourings, 0.110 GB); listed plane by plane they take 2 x ports / 5: 409 copies,
    # 51,125 circuits, 1 colouring, 2.2 s wall, CPU 1.07 s, 0.104 GB. Both sizes: 1,024
    # ports 9.0 s wall (CPU 1.76 s), 2,048 ports 39.6 s (CPU 5.98 s; load 8-9).
    for ports in (1024,) if quick else (1024, 2048):
        r = run_child(IMPORT_LINE + _INSTANCE_CHILD.format(ports=ports, sizes=(3, 5)),
                      cwd=ROOT)
        print(f"instance graphs of lite-ocs, {ports:,} ports a Lite, sizes 3 and 5: "
              f"{r['seconds']:.2f} s (CPU {r['cpu']:.2f} s with the build of "
              f"{r['build']:.2f} s); {r['edges']:,} circuit edges; peak RSS "
              f"{r['rss_gb']:.2f} GB")
    for spares, placement in (("2%", "pod"), ("2%", "global"), ("0", "pod")):
        r = _run("availability", "lite-flat", 16384, spares=spares, placement=placement)
        print(f"availability lite-flat 16,384 GPUs x 1 y x 1,000 trials, spares {spares} "
              f"{placement}: {r['seconds']:.2f} s ({_verdict(r['seconds'], 10, 's')}; CPU "
              f"{r['cpu']:.2f} s); peak "
              f"RSS {r['rss_gb']:.2f} GB ({_verdict(r['rss_gb'], 1, 'GB')}); "
              f"{r['events']:,.0f} failures/y; mean {r['mean']:.6f} +- {r['ci']:.1e} "
              f"(analytic {r['analytic']:.6f}); blast radius first {r['effects']:.2f} s")
    # One cell of 16,384 GPUs with spares. Every instance a failure slows had its
    # spare swap worked out with the failure's local effect and the cell's parts made
    # again (a plane of the flat fabric: 1,024 passes over all its GPUs); each effect
    # went over the whole cell's parts in Python (the rail-optimized cell's 1,083); the
    # footprints routed 24,576 pairs one at a time. See the commit for these lines'
    # figures before and after.
    for label, scenario, spares, placement, trials in (
            ("one 16,384-Lite flat fabric (4 planes)", FLAT_16K, "2%", "pod", 100),
            ("one 16,384-H100 rail-optimized cell", DGX_16K, "2%", "pod", 10),
            # With group spares each failure's recovery, by_group and the pools
            # walked every GPU of the cell for its group labels (~885 times): now once
            # (availability 404 s CPU). Then by_group takes a symmetry class's effect for
            # each group where its failure downs and slows nothing, recovery builds the
            # cell's parts only where needed, the blocking finds each kind's lead once:
            # availability 8.2 s CPU (the CLI run 369 -> 14.6 s CPU; JSON identical).
            # Then a failure that leaves the cell in one part is labelled without a pass
            # over its links (Cluster._still_connected; ~10,000 per-group evaluations):
            # the CLI run 16.3 -> 9.2 s CPU, JSON identical
            ("one 16,384-H100 rail-optimized cell", DGX_16K, "2%", "group", 10)):
        r = _run("availability", scenario, 16384, spares=spares, placement=placement,
                 trials=trials)
        print(f"availability, {label}, spares {spares} {placement}, {trials} trials: "
              f"effects {r['effects']:.2f} s (CPU {r['effects_cpu']:.2f} s), then "
              f"{r['seconds']:.2f} s (CPU {r['cpu']:.2f} s); peak RSS {r['rss_gb']:.2f} GB; "
              f"TP {r['tp']}; mean {r['mean']:.6f} (analytic {r['analytic']:.6f})")
    # The spare pools' chains were built one state at a time over dictionaries (4.7
    # million lookups in study lite-gpu --models Llama-3-8B --gpus H100-SXM,Lite); now a
    # level at a time over integer keys (availability_chain._breadth_first), the chains
    # of holdings too. See the commits for this line's figures before and after.
    _chains()
    _spares_search()
    _summaries(quick)
    if quick:
        print("availability 131,072 GPUs: skipped (--quick)")
        return
    r = _run("availability", "lite-flat", 131072, spares="2%", placement="pod", trials=100)
    print(f"availability lite-flat 131,072 GPUs x 1 y x 100 trials, 2% pod: "
          f"{r['seconds']:.2f} s (CPU {r['cpu']:.2f} s); peak RSS {r['rss_gb']:.2f} GB; {r['events']:,.0f} "
          f"failures/y; mean {r['mean']:.6f} +- {r['ci']:.1e} (analytic {r['analytic']:.6f})")
    # spares shared by the whole cluster: one lane of ~14,000 events a trial, the loss
    # system's longest (the CLI's default 1,000 trials)
    r = _run("availability", "lite-flat", 131072, spares="2%", placement="global")
    print(f"availability lite-flat 131,072 GPUs x 1 y x 1,000 trials, 2% global: "
          f"{r['seconds']:.2f} s (CPU {r['cpu']:.2f} s); peak RSS {r['rss_gb']:.2f} GB; "
          f"{r['events']:,.0f} failures/y; mean {r['mean']:.6f} +- {r['ci']:.1e} (analytic "
          f"{r['analytic']:.6f})")
    # few trials over a long horizon: 10 lanes of ~1.4 million events each, where the
    # loss system's rank loop took some 150 us a step whatever the lanes (past 900 s
    # wall, the CLI run timed out); now such lanes run one event at a time
    # (availability_mc_lanes._loss_lane): the CLI run 57 s wall, JSON identical at 10 y
    r = _run("availability", "lite-flat", 131072, spares="0.05%", placement="global",
             trials=10, horizon="100y")
    print(f"availability lite-flat 131,072 GPUs x 100 y x 10 trials, 0.05% global: "
          f"{r['seconds']:.2f} s (CPU {r['cpu']:.2f} s); peak RSS {r['rss_gb']:.2f} GB; "
          f"{r['events']:,.0f} failures/y; mean {r['mean']:.6f} +- {r['ci']:.1e} (analytic "
          f"{r['analytic']:.6f})")


if __name__ == "__main__":
    main()
