"""Memory for a grid's large stage arrays, reused once every array made from it is gone.

A search at cluster scale (``compare --instances all --parallelism all`` at 16,384 GPUs)
evaluates grids of tens of millions of cells, each with eight ``(stages, configurations,
batches)`` arrays of up to 111 MB (:func:`compute.roofline.evaluate_grid`). Taken afresh
each time, every page of them is a page fault whose page (a 2 MB transparent huge page,
numpy asks for them) the kernel zeroes: 8-10 s of system time in that compare, more than
the arithmetic. :func:`empty` hands out such arrays as views of buffers kept here; a
buffer is handed out again only when nothing refers to it but this module (CPython counts
the references: an array made from a buffer, and every view of that array, holds one), so
an array a caller still holds is never written. Like :func:`numpy.empty`, the values are
whatever was there: every caller writes every element.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

#: Arrays smaller than this are plain :func:`numpy.empty`: the cluster-scale grids' stage
#: arrays are 61-111 MB; the Lite-GPU study's are under 10 MB, and keeping those idle in its
#: forked parts raised its peak (PSS of every process) from 0.37 to 0.47 GB.
MIN_BYTES = 32 * 2**20
#: At most this many bytes of buffers nothing refers to are kept (the smallest go first).
MAX_IDLE_BYTES = 2**30

_BUFFERS: list[np.ndarray] = []   # each a 1-D uint8 array owning its memory
_LOCK = threading.Lock()


def _refs(buffer: np.ndarray) -> int:
    return sys.getrefcount(buffer)


def _idle_refs() -> int:
    """References an idle buffer has where :func:`empty` counts them (the list's, the loop
    variable's, the calls'): measured as :func:`empty` measures, not assumed."""
    for b in [np.empty(1, dtype=np.uint8)]:
        return _refs(b)
    raise AssertionError  # pragma: no cover


_IDLE = _idle_refs()


def _counts_views() -> bool:
    """Whether this interpreter counts, as :func:`empty` needs it to, every array made from
    a buffer as a reference to it (a view, a view of a view) and forgets one when it goes;
    checked once, as :func:`empty` measures. Where it does not (an interpreter whose
    reference counts are deferred or borrowed), buffers are never reused: a buffer seen
    idle while an array still uses it would be overwritten under it."""
    for b in [np.empty(64, dtype=np.uint8)]:
        idle = _refs(b)
        v = b[:32].view(np.float64).reshape(2, 2)
        held = _refs(b)
        w = v[1:]
        del v
        still = _refs(b)
        del w
        return idle == _IDLE and held > idle and still > idle and _refs(b) == idle
    raise AssertionError  # pragma: no cover


#: False where :func:`_counts_views` fails: :func:`empty` is then :func:`numpy.empty`.
REUSE = _counts_views()


def empty(shape: tuple, dtype=float) -> np.ndarray:
    """An uninitialised array of ``shape`` and ``dtype``, as :func:`numpy.empty` gives,
    made from a kept buffer when one of at least its size is idle (the smallest such), else
    from a new one (the idle ones, all too small, are then let go); arrays under
    :data:`MIN_BYTES` are always fresh."""
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES or not REUSE:
        return np.empty(shape, dtype=dtype)
    with _LOCK:
        best = None
        idle = []
        for b in _BUFFERS:
            if _refs(b) == _IDLE:
                idle.append(b)
                if b.nbytes >= nbytes and (best is None or b.nbytes < best.nbytes):
                    best = b
        drop = set()
        if best is None:   # the idle ones are too small: freed (grids grow), this one new
            drop = {id(b) for b in idle}
            idle = []
            best = np.empty(nbytes, dtype=np.uint8)
            _BUFFERS.append(best)
        else:
            idle = [b for b in idle if b is not best]
        spare = sum(b.nbytes for b in idle)
        for b in sorted(idle, key=lambda b: b.nbytes):   # keep at most MAX_IDLE_BYTES idle
            if spare <= MAX_IDLE_BYTES:
                break
            spare -= b.nbytes
            drop.add(id(b))
        if drop:
            _BUFFERS[:] = [b for b in _BUFFERS if id(b) not in drop]
        return best[:nbytes].view(dtype).reshape(shape)


def kept_bytes() -> tuple[int, int]:
    """``(in use, idle)``: bytes of the kept buffers that arrays still refer to, and the
    others'."""
    with _LOCK:
        idle = sum(b.nbytes for b in _BUFFERS if _refs(b) == _IDLE)
        return sum(b.nbytes for b in _BUFFERS) - idle, idle


def release() -> None:
    """Forget every kept buffer (arrays made from them keep theirs alive)."""
    with _LOCK:
        _BUFFERS.clear()
