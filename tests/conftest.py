"""Shared test fixtures: the published reference data beside the project root."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"

#: The most test processes ``-n auto`` (pyproject's addopts) starts: each one collects the
#: whole suite itself (about 24 s of CPU and 300 MB), so past a few the collection outweighs
#: what the extra processes run.
MOST_WORKERS = 4


def pytest_xdist_auto_num_workers(config) -> int:
    """pytest-xdist's ``-n auto``: one process a core this process may run on, at most
    :data:`MOST_WORKERS` (2 on a 2-core CI machine)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MOST_WORKERS))


#: A full (oldest-generation) collection once every this many of the middle generation's
#: while the tests run (Python's default: 10); see :func:`pytest_collection`.
OLDEST_EVERY = 100


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Collect with the cyclic garbage collector off, then freeze what collection made.

    Collection imports every test module and every module's doctests (about 420,000
    objects that live to the end): with the collector on, the heap growing past each
    quarter triggered a full collection, about 50 of them, 8-10 s of a process's 22-25 s
    of collecting (each xdist worker collects the whole suite). Frozen
    (:func:`gc.freeze`), those objects are not walked again by the tests' own
    collections. Nothing a test checks changes; a test may unfreeze (compute.workers
    does after a forked job) and the collector goes on as plain.

    The tests then run with a full collection every 100 collections of the middle
    generation, not every 10 (:data:`OLDEST_EVERY`): a process's process-wide caches
    grow to a gigabyte, and tests/netmodel/test_[a-b]*.py in one process took 39 full
    collections, 4.4-4.8 s of its 100-110 s of CPU; 8 with 1.4-1.6 s after (peak memory
    2-20% higher, garbage cycles freed later)."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, OLDEST_EVERY)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """``../shared/reference`` (published measurements); skips the test where it is absent."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data folder {REFERENCE} is absent (published measurements "
                    "live beside the project root in shared/reference)")
    return REFERENCE
