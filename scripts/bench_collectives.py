#!/usr/bin/env python
"""Benchmark of the collective model on fat trees of 16,384 and 131,072 GPUs.

Prints ``name: figure (target)`` lines, each case in its own Python process so that its
peak resident memory (VmHWM) is its own; a case is capped at 8 GB of address space and
300 s, so that one that would exhaust the machine reports it instead. Graph building is
done before the clock starts unless the case says otherwise; graphs come from
:func:`topologies.build`, which checks them, so models are made with ``validated=True``
(the graph is checked once). Every timed query starts from a fresh model (cold caches), as
a user's first question would; the issue-4 cases warm the interpreter on another model first
(as that issue measured), the issue-12 cases do not. Wall and CPU seconds are both printed: on a shared machine
the CPU time is the steadier figure.

Targets. Issue 4: one all-reduce of a 64-GPU group < 50 ms; all 2,048 TP-8 groups of the
fabric at once < 5 s; a sweep over 30 message sizes costs little more than one size.
Issue 12: the whole-cluster all-reduce over 16,384 GPUs with ``auto`` over every algorithm
< 1 s and < 0.5 GB; ``auto`` on a 4,096-GPU group < 1 s, growing in the group size close to
``p log p`` at most; all 2,048 TP-8 groups at once with random placement and ``auto`` < 1 s
and < 0.5 GB; the 131,072-GPU fat tree built and its first 64-GPU all-reduce costed < 1.5 s.

``python scripts/bench_collectives.py [scale] [--only SUBSTRING]`` (``scale``: only the
issue-12 cases; ``--only``: only the cases whose label contains SUBSTRING, the growth line
included only when it matches "growth").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from bench_child import IMPORT_LINE

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
import numpy as np
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from topologies import build

SIZES30 = 2.0 ** np.arange(10, 40)
t0 = time.perf_counter()
{setup}
t1 = time.perf_counter()
c1 = time.process_time()
rss_setup = status_gb("VmRSS:")
note = ""
{timed}
t2 = time.perf_counter()
print(json.dumps({{"setup": t1 - t0, "seconds": t2 - t1, "cpu": time.process_time() - c1,
                  "rss_setup": rss_setup, "peak": status_gb("VmHWM:"), "note": note}}))
"""

_FT16K = "g = build('fat-tree:k=64,pods=16')"
# issue 4 timed a fresh model in a warm interpreter: warm it on another model first
_WARM = _FT16K + "\nFabricCostModel(g, validated=True).sweep('all-reduce', 1e6, 8)"


def _sweep(p, placement="contiguous", algorithm="auto", sizes="64 * 2 ** 20"):
    return (f"m = FabricCostModel(g, placement={placement!r}, algorithm={algorithm!r}, "
            "validated=True)\n"
            f"r = m.sweep('all-reduce', {sizes}, {p})\n"
            "note = f'{r.algorithm[0]}/{r.protocol[0]}, busbw {r.busbw[0] / 1e9:.1f} GB/s'")


def _together(placement, algorithm):
    return (f"m = FabricCostModel(g, placement={placement!r}, validated=True)\n"
            f"c = concurrent_cost(m, 8, 'all-reduce', SIZES30, algorithm={algorithm!r})\n"
            "note = (f'{c.algorithm[0]} at 1 KiB, {c.algorithm[-1]} at 512 GiB, max slowdown '"
            "f'{c.slowdown.max():.2f}')")


# the two 16k scenarios of the cluster-scale compare (written to a temporary folder)
_SCENARIO_TAIL = ('[collective]\nplacement = "contiguous"\nalgorithm = "auto"\n'
                  'links = "scale-up"\ncalibration = "default"\n'
                  '[sources]\nbandwidth = "benchmark"\nlatency = "benchmark"\n')
_FT16K_TOML = ('name = "ft16k"\ndescription = "16,384 H100 on a k=64 fat tree"\n'
               'gpu = "H100-SXM"\n[fabric]\nbuilder = "fat-tree"\nk = 64\npods = 16\n'
               'gpu = "$gpu"\n' + _SCENARIO_TAIL)
_LS16K_TOML = ('name = "ls16k"\ndescription = "16,384 Lites on a leaf-spine of 256-port '
               'switches"\ngpu = "Lite"\n[fabric]\nbuilder = "leaf-spine"\nleaves = 128\n'
               'radix = 256\ngpu = "$gpu"\nbandwidth = "$scaleup"\n'
               'medium = "co-packaged-optics"\n' + _SCENARIO_TAIL)
_COMPARE16K_SETUP = f"""import contextlib, io, tempfile
from pathlib import Path
from netmodel.cli.main import main
d = Path(tempfile.mkdtemp(prefix='bench_compare16k_'))
(d / 'ft16k.toml').write_text({_FT16K_TOML!r})
(d / 'ls16k.toml').write_text({_LS16K_TOML!r})"""
_COMPARE16K = """out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main(['compare', '--scenarios', f'{d}/ft16k.toml,{d}/ls16k.toml', '--models',
              'Llama-3-70B,DeepSeek-V3,Llama-3.1-405B', '--phase', 'both', '--no-plot',
              '--instances', 'all', '--parallelism', 'all', '-q', '--json'])
except SystemExit as exc:
    assert not exc.code, exc.code
note = f'{len(out.getvalue()):,} bytes of JSON'"""

# 'netmodel collective' as a user types it (the graph built inside, timed): all-reduce
# and all-to-all of 64 MiB over 4,096 of a k=32 fat tree's 8,192 Lites, its alternatives'
# line listing direct's one-shot step of 16.8 million transfers
_CLI_SETUP = "import contextlib, io\nfrom netmodel.cli.main import main"


def _cli(op):
    return f"""out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main(['collective', {op!r}, '--fabric', 'fat-tree:k=32,gpu=Lite', '--group', '4096',
              '--size', '64MiB'])
except SystemExit as exc:
    assert not exc.code, exc.code
note = out.getvalue().splitlines()[-1]"""


def _mixed(spec):
    """Random groups of 2 to 16 GPUs (seed 0) over the GPUs of ``spec``, as
    tests/netmodel/test_concurrent_time_parallel.py draws them (fabric_helpers.random_groups)."""
    return f"""g = build({spec!r})
rng = np.random.default_rng(0)
perm = rng.permutation([x for x, d in g.nodes(data=True) if d.get('kind') == 'gpu']).tolist()
groups, i = [], 0
while i + 16 <= len(perm):
    s = int(rng.integers(2, 17))
    groups.append(tuple(perm[i:i + s]))
    i += s"""


# 102 groups over the 1,024 GPUs of a k=16 fat tree with 2:1 leaves; 912 over the 8,192 of a
# k=32 one (past the schedule's budget: lockstep, see concurrent_time._TIMED_WORK)
_MIXED1K = _mixed("fat-tree:k=16,oversubscription=2")
_MIXED8K = _mixed("fat-tree:k=32,oversubscription=2")
_MIXED_TIMED = ("m = FabricCostModel(g, validated=True)\n"
                "c = concurrent_cost(m, groups, 'all-reduce', 2 ** 20)\n"
                "note = (f'{len(groups)} groups, schedule {c.schedule[0]}, makespan '"
                "f'{c.makespan[0] * 1e3:.3f} ms')")

# 'netmodel collective' on an 8x4x4 torus of 128 GPUs with one cable failed (--fail): auto's
# pairwise all-to-all costed on four models (healthy and degraded, the group's order and the
# greedy ring order), each of its 127 shifts a joint split's linear programme
_TORUS_FAIL = """out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main(['collective', 'all-to-all', '--fabric', 'torus:dims=8x4x4', '--group', '128',
              '--size', '64MiB', '--fail', 'gpu0/gpu16'])
except SystemExit as exc:
    assert not exc.code, exc.code
note = next(x for x in out.getvalue().splitlines() if x.startswith('time '))"""

# a failed rail leaf (its 32 GPUs without a NIC) under the first 2,048 GPUs of a 4,096-GPU
# rail-optimized fabric (the routes to and from them: route_search._stand_in)
_RAIL4K_LEAF0 = ("from netmodel.collectives.degraded import degrade\n"
                 "g = degrade(build('rail-optimized:domains=512,spine_radix=256'), "
                 "nodes=['leaf0'])\n"
                 "gpus = [x for x, k in g.nodes(data='kind') if k == 'gpu'][:2048]")

# lite-ocs with 1,024 optical ports a Lite (its 128 Lites: 131,072 fibres), its healthy
# 16-GPU model set (collective_setup, as 'collective --scenario' sets it)
_OCS1K_SETUP = ("from dataclasses import replace\n"
                "from netmodel.study.collective_setup import collective_setup\n"
                "from netmodel.study.scenario_catalog import get_scenario\n"
                "s = get_scenario('lite-ocs')\n"
                "setup = collective_setup(scenario=replace(s, fabric={**s.fabric, "
                "'ports': 1024}))\n"
                "group = setup.model(16).group(16)")

# direct all-to-all of 1,024 GPUs (8 a server) with 4 NICs a server (the NIC-less GPUs'
# routes through their group's NIC, routed at once: route_dags._stand_in_many) and with one
# NIC a GPU beside it
def _rail1k(nics):
    return (f"g = build('rail-optimized:domains=128,nics_per_server={nics}')",
            "m = FabricCostModel(g, validated=True)\n"
            "r = m.cost('all-to-all', 64 * 2 ** 20, 1024, 'direct')\n"
            "note = f'{r.time * 1e3:.4f} ms, bottleneck {r.bottleneck[0]}'")


#: (label, setup code (untimed), timed code (may set ``note``), seconds target, GB target)
CASES = [
    ("one all-reduce, 64 GPUs contiguous, auto over every algorithm and protocol", _WARM,
     _sweep(64), 0.05, None),
    ("one all-reduce, 64 GPUs contiguous, ring only", _WARM, _sweep(64, algorithm="ring"),
     None, None),
    ("one all-reduce, 64 GPUs spread over all 16 pods, auto", _WARM, _sweep(64, "spread"),
     None, None),
    ("30 sizes, 64 GPUs contiguous, auto (target: little more than one size)", _WARM,
     _sweep(64, sizes="SIZES30"), None, None),
    ("warm collective_time, 64 GPUs, 30 sizes (after a first call)", _FT16K +
     "\nm = FabricCostModel(g, validated=True)\nm.collective_time('all-reduce', 1e6, 64)",
     "for _ in range(100):\n    m.collective_time('all-reduce', SIZES30, 64)\n"
     "note = 'per call: 1/100 of the time'", None, None),
    ("all 2,048 TP-8 groups at once, contiguous, ring, 30 sizes", _FT16K,
     _together("contiguous", "ring"), 5.0, None),
    ("all 2,048 TP-8 groups at once, contiguous, auto, 30 sizes", _FT16K,
     _together("contiguous", "auto"), 5.0, None),
    ("102 random groups of 2-16 GPUs at once on a 1,024-GPU 2:1 fat tree, auto, 1 MiB "
     "all-reduce (groups of different sizes and algorithms: the schedule in time)",
     _MIXED1K, _MIXED_TIMED, None, None),
    ("912 random groups of 2-16 GPUs at once on an 8,192-GPU 2:1 fat tree, auto, 1 MiB "
     "all-reduce (the schedule in time past its budget: lockstep)", _MIXED8K, _MIXED_TIMED,
     None, None),
    ("direct all-to-all, 64 MiB, 1,024 GPUs of rail-optimized, 4 NICs for 8 GPUs a server "
     "(before their legs through a shared NIC were routed at once: 18.9 s, CPU 18.9 s, "
     "peak RSS 1.00 GB)", *_rail1k(4), None, None),
    ("the same with one NIC a GPU (nics_per_server=8)", *_rail1k(8), None, None),
]

SCALE_CASES = [
    ("whole-cluster all-reduce, 16,384 GPUs, auto over every algorithm (model set-up + "
     "query; build excluded)", _FT16K, _sweep(16384), 1.0, 0.5),
    ("all-reduce on a 4,096-GPU group of the 16k fat tree, auto", _FT16K, _sweep(4096),
     1.0, None),
    ("all 2,048 TP-8 groups at once, random placement, auto, 30 sizes", _FT16K,
     _together("random", "auto"), 1.0, 0.5),
    ("all 16 groups of 1,024 at once, random placement, auto, 64 MiB all-reduce (direct's "
     "16.7 million transfers left out by its lower bound)", _FT16K,
     "m = FabricCostModel(g, placement='random', validated=True)\n"
     "c = concurrent_cost(m, 1024, 'all-reduce', 64 * 2 ** 20)\n"
     "note = f'{c.algorithm[0]}, slowest {c.time.max() * 1e3:.3f} ms'", 2.0, 1.0),
    ("compare --instances all --parallelism all, 3 models, both phases, on a 16,384-H100 "
     "fat tree and a 16,384-Lite leaf-spine (every instance's direct and pairwise "
     "all-to-all and all-gather routed at once)", _COMPARE16K_SETUP, _COMPARE16K, None, None),
    ("degraded: direct all-to-all, 64 MiB, the first 2,048 GPUs of a 4,096-GPU "
     "rail-optimized fabric with rail leaf0 failed", _RAIL4K_LEAF0,
     "m = FabricCostModel(g)\nr = m.cost('all-to-all', 64 * 2 ** 20, gpus, 'direct')\n"
     "note = f'{r.time * 1e3:.4f} ms, bottleneck {r.bottleneck[0]}'", None, None),
    ("collective all-to-all --fabric torus:dims=8x4x4 --group 128 --size 64MiB --fail "
     "gpu0/gpu16 (CLI, build included; auto takes direct, but the alternatives' line costs "
     "pairwise on four models: the healthy one in the group's order folds its 108 "
     "programmes by the torus's rotation; the failed cable breaks the rotation, and the "
     "greedy ring order has none, so the other three solve their programmes once for a "
     "shift and its mirror (shift p - k sends shift k's transfers back), 189 programmes, "
     "the 127 of 2,000 flow variables or more over a few paths of each transfer at a time "
     "(column generation, route_joint_paths), the rest whole by the primal simplex: "
     "CPU 19.3 s back to back with 44-45 s solving them all whole (35 s of it, 9 s over "
     "paths), at load 5-6 on 2 shared cores, wall 35-49 s (90-112 s), peak RSS 0.26 GB; "
     "before that, each pair's shortest paths walked once for both orders: CPU 39-41 s "
     "with 78 s before, wall 52-69 s, peak RSS 0.28 GB; before, 376 solves, healthy greedy 33 "
     "s, degraded 18 s, degraded greedy 25 s, and the greedy order laying 16,256 routes "
     "for their hops, 9 s: CPU 76-80 s, 68 s of it in HiGHS, wall 113-134 s, 0.28 GB)",
     _CLI_SETUP, _TORUS_FAIL, None, None),
    ("degraded OCS: the circuits of every 16-GPU instance of lite-ocs at 1,024 ports a "
     "Lite re-set with ocs0 failed (collective --scenario --fail; before, each instance "
     "read the degraded cell's 130,944 fibres twice: CPU 7.3 s, peak RSS 0.39 GB)",
     _OCS1K_SETUP, "c = setup.circuits_after(16, (), ['ocs0'])(group)\n"
     "note = f\"{c.graph['circuits']:,} circuits\"", None, None),
    ("every algorithm's curve (as 'collective' lists them) of an all-reduce on 1,024 GPUs "
     "of a 4,096-GPU 3D torus 16x16x16 (direct's routes over the torus, about 120 M links "
     "estimated from a sample, left out before its pairs are described; before, 185 s and "
     "13.1 GB; then 27.0 s and 1.27 GB while a cap of 512 destinations' shortest paths "
     "rebuilt them step after step; then 2.88 s (CPU 2.83 s) and 1.12 GB with each "
     "destination's translated from one GPU's and 512 MiB of them kept)",
     "g = build('torus:dims=16x16x16')",
     "m = FabricCostModel(g, validated=True)\nc = m.curves('all-reduce', [64 * 2 ** 20], 1024)"
     "\nnote = ', '.join(sorted(c))", None, None),
    ("every algorithm's curve of an all-reduce on 2,032 GPUs of a 2,040-GPU SuperPOD "
     "(superpod:sus=8, as 'netmodel collective' lists them; direct's all-pairs step: 4.1 "
     "million pairs of signatures, a GPU's own switches each; before, 1.96 GB peak, most of "
     "it system time; 1.62 GB while each of the 4.1 million rows of its table of signature "
     "pairs had its pieces worked out and kept)", "g = build('superpod:sus=8')",
     "m = FabricCostModel(g, validated=True)\nc = m.curves('all-reduce', [64 * 2 ** 20], 2032)"
     "\nnote = f\"direct {c['direct'][0]:.4g} s\"", None, None),
    ("every algorithm's curve of an all-reduce on all 4,096 GPUs of a 3D torus 16x16x16 "
     "(the steps' shortest paths walked from one GPU's, none kept per destination; direct's "
     "16.7 million pairs refused from a sample before they are described; before, searched "
     "for each destination and rebuilt step after step past the 512 MiB cache: CPU 105 s "
     "under cProfile, peak RSS 6.4 GB, past its 300 s on 2 shared cores; then translated "
     "from one GPU's, and direct's pairs described and looked up before the refusal: "
     "60.8 s (CPU 43.8 s), 6.29 GB)", "g = build('torus:dims=16x16x16')",
     "m = FabricCostModel(g, validated=True)\nc = m.curves('all-reduce', [64 * 2 ** 20], 4096)"
     "\nnote = ', '.join(sorted(c))", None, None),
    ("every algorithm's curve of an all-reduce on 4,096 GPUs of a 131,072-GPU 3D torus "
     "32x64x64 (past DAG_NODES: the steps' pairs walked many at once from one GPU's "
     "shortest paths, none kept per destination; direct's 16.7 million pairs refused from "
     "a sample; before, each of the steps' pairs searched on its own, breadth first in "
     "Python: 236 s (CPU 121 s), 1.57 GB)", "g = build('torus:dims=32x64x64')",
     "m = FabricCostModel(g, validated=True)\nc = m.curves('all-reduce', [64 * 2 ** 20], 4096)"
     "\nnote = ', '.join(sorted(c))", None, None),
    ("an all-reduce of 1 GiB on 8 GPUs placed at random on a 27,000-GPU 3D torus 30x30x30 "
     "(auto; each step's joint split walks the shortest paths towards its destinations in "
     "the router's numpy arrays; before, searched node by node in Python for every step: "
     "the same times to the bit, CPU 22.6 s against 5.0 s for the query at load 8-12 on 2 "
     "shared cores)",
     "g = build('torus:dims=30x30x30')",
     "m = FabricCostModel(g, placement='random', validated=True)\n"
     "r = m.cost('all-reduce', 2 ** 30, 8)\nnote = f'{r.algorithm} {r.time * 1e3:.3f} ms'",
     None, None),
    ("collective all-reduce --fabric fat-tree:k=32,gpu=Lite --group 4096 --size 64MiB "
     "(CLI, build included; direct's 16.8 million transfers routed 65,536 at a time; "
     "before, in one plan: 24 s, 4.0 GB, 7.9 s of it system time)", _CLI_SETUP,
     _cli("all-reduce"), None, None),
    ("collective all-to-all --fabric fat-tree:k=32,gpu=Lite --group 4096 --size 64MiB "
     "(the same; direct's step and pairwise's 4,095 shifts; before: 27 s)", _CLI_SETUP,
     _cli("all-to-all"), None, None),
    ("pairwise all-to-all alone, 64 MiB, 4,096 of a k=32 fat tree's 8,192 Lites (its 4,095 "
     "shifts of 4,096 transfers, each routed and its link loads summed on its own: about "
     "1.1 ms CPU a shift; routed many shifts at once, in runs of 4 to 64 with one dense "
     "array of loads per run, the same loads bit for bit took 4.3-5.0 s CPU for them all "
     "against 5.2 s, each shift's 24,576 loaded links being most of the work)",
     "g = build('fat-tree:k=32,gpu=Lite')",
     "m = FabricCostModel(g, validated=True)\n"
     "r = m.cost('all-to-all', 64 * 2 ** 20, 4096, 'pairwise')\n"
     "note = f'{r.time * 1e3:.2f} ms, {len(r.steps)} steps'", None, None),
    ("131,072-GPU fat tree (k=128, 32 pods): build + first 64-GPU all-reduce", "pass",
     "tb = time.perf_counter()\ng = build('fat-tree:k=128,pods=32')\n"
     "tb = time.perf_counter() - tb\ntm = time.perf_counter()\n" + _sweep(64)
     + "\nnote += f' (build {tb:.2f} s, model + all-reduce {time.perf_counter() - tm:.2f} s)'",
     1.5, None),
]

GROWTH = (512, 1024, 2048, 4096, 8192, 16384)


def _child(setup, timed, cap_gb=8, timeout=300):
    code = IMPORT_LINE + _CHILD.format(root=str(ROOT), cap=int(cap_gb * 2 ** 30), setup=setup,
                                       timed=timed)
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


def _run(cases) -> None:
    for label, setup, timed, t_target, m_target in cases:
        r = _child(setup, timed)
        if "error" in r:
            print(f"{label}: FAILED: {r['error']}")
            continue
        sec = r["seconds"]
        shown = f"{sec * 1e3:.1f} ms" if sec < 0.1 else f"{sec:.2f} s"
        print(f"{label}: {shown}{_verdict(sec, t_target, 's')} (CPU {r['cpu']:.2f} s); "
              f"peak RSS {r['peak']:.2f} GB{_verdict(r['peak'], m_target, 'GB')} "
              f"(after set-up {r['rss_setup']:.2f} GB, set-up {r['setup']:.2f} s)"
              + (f" -> {r['note']}" if r["note"] else ""))


def growth() -> None:
    times = [_child(_FT16K, _sweep(p)).get("seconds", float("nan")) for p in GROWTH]
    ok = np.isfinite(times)
    slope = np.polyfit(np.log(np.array(GROWTH)[ok]), np.log(np.array(times)[ok]), 1)[0] \
        if ok.sum() >= 2 else float("nan")
    plogp = np.polyfit(np.log(GROWTH), np.log(np.array(GROWTH) * np.log(GROWTH)), 1)[0]
    print("auto all-reduce time by group size: " + ", ".join(
        f"{p}: {t:.3g} s" for p, t in zip(GROWTH, times, strict=True))
        + f"; growth exponent {slope:.2f} (p log p over this range: {plogp:.2f})")


def scale(only: str = "") -> None:
    _run([c for c in SCALE_CASES if only in c[0]])
    if only in "growth":
        growth()


def main() -> None:
    args = sys.argv[1:]
    only = ""
    if "--only" in args:
        i = args.index("--only")
        if i + 1 >= len(args):
            sys.exit("--only needs a SUBSTRING of a case's label")
        only = args[i + 1]
        del args[i:i + 2]
    if args not in ([], ["scale"]):
        sys.exit("usage: bench_collectives.py [scale] [--only SUBSTRING]")
    if not args:
        _run([c for c in CASES if only in c[0]])
    scale(only)
    if not args and not only:   # the joint split's cases (lite-ocs), their own script
        import bench_joint
        bench_joint.main()


if __name__ == "__main__":
    main()
