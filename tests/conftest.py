"""Shared test fixtures: the published reference data beside the project root."""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """``../shared/reference`` (published measurements); skips the test where it is absent."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data folder {REFERENCE} is absent (published measurements "
                    "live beside the project root in shared/reference)")
    return REFERENCE
