"""Shared test fixtures: the published reference data beside the project root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """``../shared/reference`` (published measurements); skips the test where it is absent."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data folder {REFERENCE} is absent (published measurements "
                    "live beside the project root in shared/reference)")
    return REFERENCE
