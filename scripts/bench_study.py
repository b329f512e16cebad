#!/usr/bin/env python
"""Benchmark of the full Lite-GPU study: ``netmodel study lite-gpu`` end to end.

Runs the command as a user does (a fresh Python process, every figure, CSV, JSON and
summary.md written) and prints ``name: figure (target)`` lines: wall time, CPU time (the
command and the workers that draw its figures), peak memory of the main process, and the
time of each part as the command reports it on stderr. Targets: the brief's < 10 s on 2
cores, issue 12's < 4 s and < 0.5 GB. The machine's load average is printed first: other
work on the cores stretches every wall time.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(extra: list[str], label: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        cmd = [sys.executable, "-c",
               "import resource, sys\n"
               "from netmodel.cli.main import main\n"
               "try:\n    main(sys.argv[1:])\n"
               "except SystemExit as e:\n    code = e.code\n"
               "else:\n    code = 0\n"
               "peak = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
               "print(f'peak_kib={peak}', file=sys.stderr)\n"
               "sys.exit(code)\n",
               "study", "lite-gpu", "--out", str(Path(tmp) / "results"), *extra]
        run = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, check=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        files = sorted(p.name for p in (Path(tmp) / "results").iterdir())
    peak = re.search(r"peak_kib=(\d+)", run.stderr)
    parts = re.search(r"time per part: (.*)", run.stderr)
    print(f"{label}: {wall:.1f} s wall, {cpu:.1f} s CPU (targets < 10 s on 2 cores; issue 12: "
          f"< 4 s), peak {int(peak.group(1)) / 2**20:.2f} GiB (target < 0.5 GB); "
          f"{len(files)} files")
    if parts:
        print(f"  parts: {parts.group(1)}")


def main() -> None:
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    _run([], "netmodel study lite-gpu (every part, every figure)")
    _run(["--no-plot"], "netmodel study lite-gpu --no-plot")


if __name__ == "__main__":
    main()
