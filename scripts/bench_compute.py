#!/usr/bin/env python
"""Benchmark of compute/: the Lite-GPU study grid and `netmodel --help` start-up.

Prints ``name: figure (target)`` lines. The study grid (3 models x 6 GPU types x 2 phases,
every TP degree x batch 1..1024, for the ring and the ideal network) is evaluated on one
core (the process is pinned where the OS allows), plotting excluded; target < 1 s. Then
the search over TP x PP x EP x attention DP x batch (Llama-3-70B and Mixtral-8x7B on Lites);
target >= 1,000,000 configurations/s; the same at PP 1 without and with two-batch overlap.
Then ``evaluate()`` one configuration at a time (target
>= 50,000 configurations/s; also at random batches, so no batch repeats within a few
calls), beside the one-cell grid it ran before, and ``evaluate_many``
scoring a list of 100,000 (configuration, batch) pairs as arrays. Last, ``netmodel
--help`` and the slowest ``--help`` of every group and command (target < 0.3 s each).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pin_one_core():
    """Pin this process to one CPU; return (description, the previous CPU set or None)."""
    if hasattr(os, "sched_setaffinity"):
        before = os.sched_getaffinity(0)
        cpu = min(before)
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}", before
    return "not pinned (no sched_setaffinity)", None


def _best_of(once, repeats: int):
    """``once()`` run once to warm caches (catalog parsing, imports), then ``repeats``
    times: ``(its last result, best wall seconds, best CPU seconds)``."""
    once()
    times, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        result = once()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return result, min(times), min(cpu)


def study_grid(repeats: int = 3) -> None:
    sys.path.insert(0, str(ROOT))
    import inspect

    from netmodel.study.lite_gpu import NETWORKS, run_full_study, run_lite_gpu_study

    # the study's own networks (ring and ideal; 'bound' is there to be chosen, not run)
    networks = inspect.signature(run_full_study).parameters["networks"].default

    def once():
        parts = [run_lite_gpu_study(comm_factory=NETWORKS[n], network=n) for n in networks]
        return sum(parts[1:], parts[0])

    study, best, best_cpu = _best_of(once, repeats)
    configs = sum(s.evaluated for s in study.searches)
    print(f"study lite-gpu grid: {len(study.searches)} searches, {configs} configurations "
          f"in {best:.3f} s (best of {repeats}) (target < 1 s)")
    print(f"study lite-gpu grid: {configs / best:,.0f} configurations/s "
          f"({configs / best_cpu:,.0f} per CPU second) (target >= 1,000,000)")


def parallel_grid(repeats: int = 3) -> None:
    """The SLO search over TP x PP x EP x attention DP x batch: Llama-3-70B (PP 1, 2, 4,
    every attention-DP degree) and Mixtral-8x7B (also every EP degree) on Lites, up to 64
    GPUs, both phases, ring network."""
    sys.path.insert(0, str(ROOT))
    from compute.search import search

    cases = [("Llama-3-70B", dict(pp=(1, 2, 4), attention_dp=True)),
             ("Mixtral-8x7B", dict(pp=(1, 2, 4), ep=True, attention_dp=True))]

    def once():
        return [search(m, "Lite", phase, max_gpus=64, **kw) for m, kw in cases
                for phase in ("prefill", "decode")]

    results, best, best_cpu = _best_of(once, repeats)
    configs = sum(r.evaluated for r in results)
    rows = sum(len(r.configurations) for r in results)
    print(f"TP x PP x EP x DP-attention grid: {len(results)} searches, {rows} configurations "
          f"x batch 1..1024 = {configs} in {best:.3f} s (best of {repeats})")
    print(f"TP x PP x EP x DP-attention grid: {configs / best:,.0f} configurations/s "
          f"({configs / best_cpu:,.0f} per CPU second: the figure when other processes share "
          f"the core) (target >= 1,000,000)")


def two_batch_grid(repeats: int = 3) -> None:
    """parallel_grid's searches at PP 1 (two-batch overlap is modelled on one pipeline
    stage), without and with ``two_batch_overlap``: what timing every cell as two
    micro-batches costs (one grid of the half batches, then the two streams' schedule)."""
    sys.path.insert(0, str(ROOT))
    from compute.roofline_options import RooflineOptions
    from compute.search import search

    cases = [("Llama-3-70B", dict(attention_dp=True)),
             ("Mixtral-8x7B", dict(ep=True, attention_dp=True))]
    for label, options in (("off", None), ("on", RooflineOptions(two_batch_overlap=True))):
        def once(options=options):
            return [search(m, "Lite", phase, max_gpus=64, options=options, **kw)
                    for m, kw in cases for phase in ("prefill", "decode")]

        results, _, best_cpu = _best_of(once, repeats)
        configs = sum(r.evaluated for r in results)
        print(f"TP x EP x DP-attention grid (PP 1), two-batch overlap {label}: {configs} in "
              f"{best_cpu:.3f} CPU s, {configs / best_cpu:,.0f} configurations per CPU second")


def _rate(run, count: int, seconds: float = 1.0, repeats: int = 3) -> tuple[float, float]:
    """Best (calls per wall second, per CPU second) of ``repeats`` runs of about
    ``seconds`` each; ``run()`` scores ``count`` configurations."""
    run()
    wall, cpu = 0.0, 0.0
    for _ in range(repeats):
        t0, c0, n = time.perf_counter(), time.process_time(), 0
        while time.perf_counter() - t0 < seconds:
            run()
            n += count
        wall = max(wall, n / (time.perf_counter() - t0))
        cpu = max(cpu, n / max(time.process_time() - c0, 1e-9))
    return wall, cpu


def single_configurations() -> None:
    """``evaluate()`` one configuration at a time (3 models x 2 GPU types x TP 1-8 x 4
    batches x 2 phases, names as a user gives them), the one-cell grid it ran before, and
    ``evaluate_many`` on 100,000 random (configuration, batch) pairs."""
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from compute.evaluate_many import evaluate_many
    from compute.evaluate_one import evaluate
    from compute.roofline import evaluate_grid, make_workload

    cases = [(m, g, t, b, ph) for m in ("Llama-3-70B", "Llama-3-8B", "Mixtral-8x7B")
             for g in ("H100-SXM", "Lite") for t in (1, 2, 4, 8) for b in (1, 8, 64, 256)
             for ph in ("prefill", "decode")]

    def one():
        for c in cases:
            evaluate(*c)

    def grid():
        for m, g, t, b, ph in cases:
            evaluate_grid(m, g, [t], [b], make_workload(ph)).result(0, 0)

    wall, cpu = _rate(one, len(cases))
    print(f"evaluate() one configuration at a time: {wall:,.0f} configurations/s "
          f"({cpu:,.0f} per CPU second) (target >= 50,000)")
    rng = random.Random(0)   # the same configurations, each at batches it has not had
    fresh = [(m, g, t, rng.randint(1, 4096), ph) for m, g, t, _, ph in cases * 10]

    def spread():
        for c in fresh:
            evaluate(*c)

    wall_f, cpu_f = _rate(spread, len(fresh))
    print(f"evaluate() on {len(fresh)} configurations at random batches 1..4096: "
          f"{wall_f:,.0f} configurations/s ({cpu_f:,.0f} per CPU second)")
    wall_g, cpu_g = _rate(grid, len(cases))
    print(f"one-cell evaluate_grid (evaluate's path before): {wall_g:,.0f} configurations/s "
          f"({cpu_g:,.0f} per CPU second): evaluate() is {cpu / cpu_g:.1f}x faster")
    rng = np.random.default_rng(0)
    n = 100_000
    tps = rng.choice([1, 2, 4, 8], n)
    batches = rng.integers(1, 1025, n)

    def many():
        evaluate_many("Llama-3-70B", "H100-SXM", tps, batches, "decode")

    wall_m, cpu_m = _rate(many, n)
    print(f"evaluate_many() on {n:,} (TP, batch) pairs: {wall_m:,.0f} configurations/s "
          f"({cpu_m:,.0f} per CPU second)")


def help_time(repeats: int = 5) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "netmodel", "--help"], cwd=ROOT, env=env,
                       check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    print(f"netmodel --help: {min(times):.3f} s (best of {repeats}; median "
          f"{sorted(times)[len(times) // 2]:.3f} s) (target < 0.3 s)")
    subcommand_help_time(env)


def subcommand_help_time(env: dict, repeats: int = 3) -> None:
    """The slowest ``netmodel GROUP [COMMAND] --help`` (best of ``repeats`` each), and how
    many load numpy (their help reads a registry that lives beside it)."""
    from netmodel.cli.help_format import command_paths
    from netmodel.cli.main import cli

    code = ("import sys\nfrom netmodel.cli.main import main\n"
            "try:\n    main(sys.argv[1:] + ['--help'])\nexcept SystemExit:\n    pass\n"
            "print('numpy' in sys.modules)")
    best, with_numpy = {}, []
    for path in command_paths(cli)[1:]:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code, *path], cwd=ROOT, env=env,
                                 check=True, capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
        best[" ".join(path)] = min(times)
        if out.stdout.strip().endswith("True"):
            with_numpy.append(" ".join(path))
    slowest = max(best, key=best.get)
    print(f"slowest subcommand --help: netmodel {slowest} --help {best[slowest]:.3f} s (best "
          f"of {repeats}; {len(best)} groups and commands, median "
          f"{sorted(best.values())[len(best) // 2]:.3f} s; {len(with_numpy)} load numpy: "
          f"{', '.join(with_numpy) or 'none'}) (target < 0.3 s)")


def main() -> None:
    what, before = _pin_one_core()
    print(f"cpu: {what}")
    try:
        study_grid()
        parallel_grid()
        two_batch_grid()
        single_configurations()
    finally:
        if before is not None:  # scripts/bench.py runs the other parts in this process
            os.sched_setaffinity(0, before)
    help_time()


if __name__ == "__main__":
    main()
