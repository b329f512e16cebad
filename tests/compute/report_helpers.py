"""Modules of scripts/ for the tests that check them: the report modules of
scripts/accuracy_inference.py (scripts/inference_reports/, scripts/ put on the import path
to import them, then taken off) and a script loaded from its file (:func:`script`)."""

from __future__ import annotations

import importlib
import importlib.util
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


def script(name: str) -> ModuleType:
    """The script ``scripts/NAME.py`` as a module, loaded once a session (registered under
    ``name``: dataclasses look their module up)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
