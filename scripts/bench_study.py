#!/usr/bin/env python
"""Benchmark of the full Lite-GPU study: ``netmodel study lite-gpu`` end to end.

Runs the command as a user does (a fresh Python process, every figure, CSV, JSON and
summary.md written) and prints ``name: figure (target)`` lines: wall time, CPU time (the
command and the processes it forks), peak memory, and the time of each part as the command
reports it on stderr. The study forks up to two processes beside the main one; its memory
is the sum of their proportional set sizes (PSS: a page shared after the fork counts once,
split between its sharers), sampled every 25 ms from /proc, with the main process's own
high-water mark beside it (on a system without /proc, the main process's alone), in a
second run: the sampler's reads would slow the timed one. Targets: the brief's < 10 s on 2
cores, issue 12's < 4 s and < 0.5 GB. The machine's load average is printed first: other
work on the cores stretches every wall time.

The modules run from compiled bytecode, as after ``pip install`` (which compiles them):
compiled once, before the timed runs, into the tree's ``__pycache__`` folders (which git
ignores), with ``PYTHONDONTWRITEBYTECODE`` unset for the study's processes; where the
environment sets that variable, every run recompiled every module it imports (about 1.5 s
of CPU a study), which no installed netmodel does.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_child import IMPORT_LINE

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict:
    """The study's environment: this tree first, its bytecode read and kept."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _compile() -> None:
    """The packages' bytecode, compiled once before any timed run."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "compute", "topologies",
                    "netmodel"], env=_env(), cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from /proc (empty once it has exited)."""
    out = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in f.read().split():
                    out += _tree(int(child))
    except OSError:
        pass
    return out


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return int(f.read().split("Pss:")[1].split()[0])
    except (OSError, IndexError, ValueError):
        return 0


class _TreeMemory:
    """Peak of the summed PSS of a process tree, sampled every ``every`` seconds."""

    def __init__(self, pid: int, every: float = 0.025):
        self.pid, self.every, self.peak_kib, self.processes = pid, every, 0, set()
        self.ok = os.path.exists(f"/proc/{pid}/smaps_rollup")
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while self.ok and not self._done.is_set():
            pids = _tree(self.pid)
            self.processes.update(pids)
            self.peak_kib = max(self.peak_kib, sum(_pss_kib(p) for p in pids))
            time.sleep(self.every)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def _once(extra: list[str], label: str, watched: bool) -> tuple:
    """One run of the study: ``(wall s, CPU s, stderr, file names, tree memory or None)``;
    the tree's memory is sampled only when ``watched`` (the sampler reads /proc every 25
    ms, CPU taken from the study's two cores, so the timed run is not sampled)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = _env()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        cmd = [sys.executable, "-c",
               IMPORT_LINE
               + "from netmodel.cli.main import main\n"
               "try:\n    main(sys.argv[1:])\n"
               "except SystemExit as e:\n    code = e.code\n"
               "else:\n    code = 0\n"
               "print(f'peak_kib={peak_rss_bytes() // 1024}', file=sys.stderr)\n"
               "from netmodel.cli.entry import leave\n"   # as the netmodel script ends
               "leave(code)\n",
               "study", "lite-gpu", "--out", str(Path(tmp) / "results"), *extra]
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        watch = _TreeMemory(proc.pid) if watched else None
        _, stderr = proc.communicate()
        if watch is not None:
            watch.stop()
        wall = time.perf_counter() - t0
        if proc.returncode:
            raise SystemExit(f"{label}: exit status {proc.returncode}\n{stderr}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        files = sorted(p.name for p in (Path(tmp) / "results").iterdir())
    return wall, cpu, stderr, files, watch


def _run(extra: list[str], label: str) -> None:
    """The study timed in one run and its memory sampled in a second."""
    wall, cpu, stderr, files, _ = _once(extra, label, watched=False)
    *_, err2, _, watch = _once(extra, label, watched=True)
    main_peak = int(re.search(r"peak_kib=(\d+)", err2).group(1)) * 1024
    parts = re.search(r"time per part: (.*)", stderr)
    if watch.ok:
        memory = (f"peak {watch.peak_kib * 1024 / 1e9:.2f} GB in all ({len(watch.processes)} "
                  f"processes, PSS sampled every 25 ms in a second run; the main process "
                  f"{main_peak / 1e9:.2f} GB)")
    else:
        memory = f"peak {main_peak / 1e9:.2f} GB (the main process; no /proc to sum the others)"
    print(f"{label}: {wall:.1f} s wall, {cpu:.1f} s CPU (targets < 10 s on 2 cores; issue 12: "
          f"< 4 s), {memory} (target < 0.5 GB); {len(files)} files")
    if parts:
        print(f"  parts: {parts.group(1)}")


def main() -> None:
    _compile()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    _run([], "netmodel study lite-gpu (every part, every figure)")
    _run(["--no-plot"], "netmodel study lite-gpu --no-plot")


if __name__ == "__main__":
    main()
