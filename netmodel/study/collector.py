"""The collector's youngest generation collected less often while the study (and a
cluster's blast radius) makes millions of small objects that live: :func:`few_collections`."""

from __future__ import annotations

import functools
import gc

__all__ = ["GC_YOUNG", "few_collections"]


#: Allocations between two collections of the youngest generation while the study runs
#: and while its files are written (Python's default: 700). The study allocates millions
#: of small objects that live (caches, rows, artists) and makes few cycles: at 700 the
#: collector ran about a thousand times and rescanned the caches in full several times,
#: 0.4-1 s of CPU. At 20,000 a study still made about 24 young and one middle collection
#: here and 10 in the forked processes, 0.45 s of CPU (each young collection traverses the
#: large caches made since the last one, and the middle one all of them again); at 500,000
#: one (0.13 s), for about 30 MiB more at the peak (cycles freed later: 207 -> 237 MiB).
#: Figures drawn at writing (one process: NETMODEL_JOBS=1 or one core) made 240 young, 22
#: middle and 2 full collections at 700 (0.5 s); at 500,000 one young one (0.1 s).
GC_YOUNG = 500_000


def few_collections(fn):
    """Decorator: run ``fn`` with the youngest generation collected every
    :data:`GC_YOUNG` allocations (forked workers inherit it), then restore the
    collector's thresholds. Changes when garbage cycles are freed, never a result."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        before = gc.get_threshold()
        gc.set_threshold(max(before[0], GC_YOUNG), *before[1:])
        try:
            return fn(*args, **kwargs)
        finally:
            gc.set_threshold(*before)

    return wrapper
