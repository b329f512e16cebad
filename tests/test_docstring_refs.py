"""Cross-references in the packages' docstrings and comments name what exists.

A module split moves functions and tables to new modules; a docstring that still names one
relatively (``:func:`evaluate_grid``` in a module that no longer holds it) then points at
nothing. Each Sphinx-style reference to a module-level name (``:func:``, ``:class:``,
``:data:``, ``:mod:``, ``:obj:``; the target after ``<`` where one is given) must resolve: a
dotted name of the packages by import, any other name in the referring module's namespace
(its own definitions and imports). ``:meth:`` and ``:attr:`` are left out: the router's and
the concurrent costing's mixins name methods of the class they are composed into.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("compute", "topologies", "netmodel")
ROLE = re.compile(r":(?:func|class|data|mod|obj):`(?:[^`<]*<)?~?\.?([\w.]+)(?:\(\))?>?`")


def _modules():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__main__":
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


def _has(obj, name: str) -> bool:
    """``name`` on ``obj``: an attribute, a dataclass field, or an instance attribute its
    class sets (``self.name = ...``)."""
    if hasattr(obj, name) or name in getattr(obj, "__dataclass_fields__", {}):
        return True
    if inspect.isclass(obj):
        try:
            return re.search(rf"\bself\.{name}\b\s*[:=]", inspect.getsource(obj)) is not None
        except (OSError, TypeError):
            return False
    return False


def _resolves(module, target: str) -> bool:
    parts = target.split(".")
    if parts[0] in PACKAGES:
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
                break
            except ImportError:
                continue
        rest = parts[i:]
    elif parts[0] in ("np", "numpy", "nx", "networkx", "click", "math", "dataclasses"):
        return True                     # another library's name
    else:
        obj, rest = module, parts
        if not _has(module, parts[0]):  # a method or attribute of one of the module's classes
            classes = [c for c in vars(module).values() if inspect.isclass(c)
                       and getattr(c, "__module__", "") == module.__name__]
            return any(_has(c, parts[0]) for c in classes) and len(parts) == 1
    for name in rest:
        if not _has(obj, name):
            return False
        obj = getattr(obj, name, None)
        if obj is None:
            return True                 # an instance attribute: nothing further to check
    return True


def dangling_references() -> list[str]:
    bad = []
    for name, path in _modules():
        module = importlib.import_module(name)
        text = path.read_text()
        for m in ROLE.finditer(text):
            if not _resolves(module, m.group(1)):
                bad.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    return bad


def test_docstring_cross_references_resolve():
    bad = dangling_references()
    assert bad == []


def test_a_dangling_reference_is_found():
    import compute.pipeline_time as mod

    assert _resolves(mod, "compute.roofline.evaluate_grid")
    assert _resolves(mod, "pipeline_latency")           # the module's own
    assert not _resolves(mod, "evaluate_grid")          # lives in compute.roofline
    assert not _resolves(mod, "compute.roofline.no_such_function")
