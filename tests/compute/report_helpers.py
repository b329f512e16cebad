"""The report modules of scripts/accuracy_inference.py (scripts/inference_reports/), for the
tests that check them: scripts/ is put on the import path to import them, then taken off."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def inference_reports(*names: str) -> list[ModuleType]:
    """The modules ``inference_reports.NAME`` of ``names``, in order."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        return [importlib.import_module(f"inference_reports.{n}") for n in names]
    finally:
        sys.path.remove(str(SCRIPTS))
