#!/usr/bin/env python
"""Benchmark of the joint split of a step's transfers (``netmodel.collectives.route_joint``)
on ``lite-ocs``'s circuit torus of 128 Lites, as a user types the commands.

Prints ``name: figure (target)`` lines, each case in a fresh Python process (its own peak
resident set, VmHWM), wall and CPU seconds both (on a shared machine the CPU time is the
steadier figure):

* ``netmodel collective all-to-all --scenario lite-ocs --group 64 --size 16MiB``: pairwise's
  63 shifts on 64 of the torus's GPUs, each a linear programme;
* ``netmodel compare --models DeepSeek-V3 --scenarios lite-ocs --phases prefill`` (< 15 s):
  its MoE all-to-alls over 64 and 128 GPUs, 167 programmes in all. Before the programmes
  of a symmetric step (a shift on the whole torus) were decided on the programme folded by
  its symmetry, and a small fabric's shortest paths kept across steps: 66-70 s of CPU
  (94-158 s wall on 2 shared cores), most of it in the solves (a pairwise shift's whole
  programme 17-19 s, folded 0.07 s); after: 9.3-10.4 s of CPU.

``python scripts/bench_joint.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench_child import IMPORT_LINE, run_child

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import contextlib, io, json, time
from netmodel.cli.main import main
t0, c0 = time.perf_counter(), time.process_time()
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main({argv!r})
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps({{"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "peak": peak_rss_gb(), "lines": out.getvalue().splitlines()}}))
"""

#: ``(label, argv, target seconds or None, the output line to show)``
CASES = [
    ("collective all-to-all --scenario lite-ocs --group 64 --size 16MiB",
     ["collective", "all-to-all", "--scenario", "lite-ocs", "--group", "64", "--size", "16MiB"],
     None, "time "),
    ("compare --models DeepSeek-V3 --scenarios lite-ocs --phases prefill",
     ["compare", "--models", "DeepSeek-V3", "--scenarios", "lite-ocs", "--phases", "prefill",
      "--no-plot"], 15.0, "  lite-ocs@Lite"),
]


def main() -> None:
    for label, argv, target, show in CASES:
        r = run_child(IMPORT_LINE + _CHILD.format(argv=argv), cwd=ROOT)
        line = next((x.strip() for x in r["lines"] if x.startswith(show)), "")
        verdict = ("" if target is None else
                   f" (target < {target:g} s: {'met' if r['cpu'] < target else 'MISSED'} on CPU)")
        print(f"{label}: {r['seconds']:.2f} s wall, CPU {r['cpu']:.2f} s{verdict}; "
              f"peak RSS {r['peak']:.2f} GB; {line}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
