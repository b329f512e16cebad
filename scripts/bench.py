#!/usr/bin/env python
"""Run every benchmark and print its figures: `python scripts/bench.py [PART ...]`, each PART
one of :data:`PARTS` (all of them by default).

Each part lives in its own `scripts/bench_<part>.py` with a `main()` that prints lines of
`name: figure (target)`. Speed targets from the issues are checked here, not in unit tests.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

PARTS = ("compute", "topologies", "collectives", "study", "reliability", "calibrate")
HERE = Path(__file__).resolve().parent


def _run(part: str) -> None:
    path = HERE / f"bench_{part}.py"
    if not path.exists():
        print(f"[{part}] no benchmark yet ({path.name} missing)")
        return
    spec = importlib.util.spec_from_file_location(f"bench_{part}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    print(f"[{part}]")
    t0 = time.perf_counter()
    argv, sys.argv = sys.argv, [str(path)]   # a part parses its own options, not bench.py's
    try:
        module.main()
    finally:
        sys.argv = argv
    print(f"[{part}] done in {time.perf_counter() - t0:.1f} s")


def main(argv: list[str]) -> None:
    """Run the parts ``argv`` names (every part when it names none). ``-h``/``--help``
    prints the usage; a name that is no part is one ``error:`` line naming the parts, exit
    status 2, before any part runs."""
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: python scripts/bench.py [PART ...]  (PART: {', '.join(PARTS)}; "
              f"default all)\n\n{__doc__.strip()}")
        return
    unknown = [a for a in argv if a not in PARTS]
    if unknown:
        print(f"error: unknown benchmark part {unknown[0]!r}; known: {', '.join(PARTS)}",
              file=sys.stderr)
        sys.exit(2)
    for part in argv or PARTS:
        _run(part)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    main(sys.argv[1:])
