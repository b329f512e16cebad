"""The house's rules, enforced: packages and wings import only downward, and no module
imports another in a circle (imports inside functions count). docs/architecture.md shows
the same layers.

Layers, lowest first: compute < topologies < netmodel.collectives < netmodel.study <
netmodel.api < netmodel.cli. A module may import its own layer and the layers below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: (module prefix, rank): the longest matching prefix gives a module's layer.
LAYERS = (("compute", 0), ("topologies", 1), ("netmodel.collectives", 2), ("netmodel.__main__", 5),
          ("netmodel.study", 3), ("netmodel.api", 4), ("netmodel", 4), ("netmodel.cli", 5))
PACKAGES = ("compute", "topologies", "netmodel")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Project modules ``path`` imports anywhere (functions included)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _rank(module: str) -> int:
    best = max((p for p, _ in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return dict(LAYERS)[best]


@pytest.fixture(scope="module")
def graph():
    mods = _modules()
    known = set(mods)
    return {m: _imports(p, m, known) for m, p in mods.items()}


def _is_ancestor_package(a: str, b: str) -> bool:
    """Importing ``a.b`` runs ``a/__init__``: a package importing its own submodule (or a
    module its package) is not a layering question."""
    return b.startswith(a + ".") or a.startswith(b + ".")


def test_imports_only_go_down(graph):
    upward = [(m, t) for m, ts in graph.items() for t in ts
              if _rank(t) > _rank(m) and not _is_ancestor_package(m, t)
              and t != "netmodel"]
    assert upward == [], "imports from a lower layer to a higher one"


def test_no_import_cycles(graph):
    edges = {m: {t for t in ts if not _is_ancestor_package(m, t)} for m, ts in graph.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(m, stack):
        state[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [])
    assert cycles == []


def test_wings_say_their_job():
    for wing in ("collectives", "study", "cli"):
        doc = ast.get_docstring(ast.parse((ROOT / "netmodel" / wing / "__init__.py").read_text()))
        assert doc and len(doc.splitlines()) == 1, f"netmodel/{wing} needs a one-line job"


def test_the_rules_here_are_the_documented_ones():
    text = (ROOT / "docs" / "architecture.md").read_text()
    for prefix, _ in LAYERS:
        assert prefix in text, f"docs/architecture.md does not show the layer {prefix}"


def test_the_api_names_are_said_once():
    import netmodel
    from netmodel import api

    assert set(netmodel._API) == set(api.__all__)
    for name in api.__all__:
        assert getattr(netmodel, name) is getattr(api, name)
