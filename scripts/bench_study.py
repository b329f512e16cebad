#!/usr/bin/env python
"""Benchmark of the full Lite-GPU study: ``netmodel study lite-gpu`` end to end.

Prints ``name: figure (target)`` lines: the wall time of the command as a user runs it (a
fresh Python process, every figure, CSV, JSON and summary.md written; target < 30 s on 2
cores), then where the time goes, measured in this process: the ideal-network part, the
fabric comparison, the per-hop latency sweep and writing the files with their figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def end_to_end() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "netmodel", "study", "lite-gpu", "--out",
                        str(Path(tmp) / "results"), "--quiet"], check=True, env=env,
                       cwd=ROOT, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - t0
        files = sorted(p.name for p in (Path(tmp) / "results").iterdir())
    print(f"netmodel study lite-gpu end to end (figures included): {seconds:.1f} s "
          f"(target < 30 s on 2 cores; {len(files)} files: {', '.join(files)})")
    return seconds


def breakdown() -> None:
    sys.path.insert(0, str(ROOT))
    from netmodel.study.compare import run_compare
    from netmodel.study.lite_gpu import (
        BASELINE,
        DEFAULT_GPUS,
        DEFAULT_MODELS,
        NETWORKS,
        SWEEP_GPU,
        SWEEP_HOP_LATENCY,
        FullStudy,
        fabric_scenarios,
        run_lite_gpu_study,
        write_full_study,
    )
    from netmodel.study.sweep import parse_param, run_sweep

    t0 = time.perf_counter()
    parts = [run_lite_gpu_study(comm_factory=NETWORKS[n], network=n) for n in NETWORKS]
    ideal = parts[0] + parts[1]
    t1 = time.perf_counter()
    scens = fabric_scenarios(DEFAULT_GPUS)
    fabric = run_compare(DEFAULT_MODELS, scens)
    t2 = time.perf_counter()
    swept = [s for s in scens if s.gpu in (BASELINE, SWEEP_GPU)]
    param = parse_param(SWEEP_HOP_LATENCY, swept)
    sweep = run_sweep(swept, [param], DEFAULT_MODELS, ["decode"])
    t3 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        write_full_study(FullStudy(ideal, fabric, sweep), Path(tmp) / "r")
    t4 = time.perf_counter()
    searches = len(fabric.rows)
    print(f"  ideal and ring networks ({len(ideal.rows)} searches): {t1 - t0:.2f} s")
    print(f"  fabric comparison ({len(scens)} scenarios, {searches} searches): {t2 - t1:.2f} s")
    print(f"  per-hop latency sweep ({len(swept)} scenarios x {len(param.values)} values x "
          f"{len(DEFAULT_MODELS)} models): {t3 - t2:.2f} s")
    print(f"  writing CSV, JSON, summary.md and 5 figures: {t4 - t3:.2f} s")


def main() -> None:
    end_to_end()
    breakdown()


if __name__ == "__main__":
    main()
