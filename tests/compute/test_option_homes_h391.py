"""The roofline's options and the parallel rules are imported from their one home (h391).

``compute.roofline_options`` and ``compute.parallel_rules`` declare what ``compute.roofline``,
``memory``, ``mtp`` and ``parallel`` import for their own use; an import of one of those names
from a module that merely uses it works only while that module keeps using it
(``netmodel/study/sweep.py`` imported ``RooflineOptions`` from ``compute.roofline``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import compute.parallel_rules as parallel_rules
import compute.roofline_options as roofline_options

ROOT = Path(__file__).resolve().parents[2]
HOMES = (roofline_options, parallel_rules)
#: Text every ``from compute.x import ...`` statement holds (a backslash may continue the
#: line between the words); only files holding it are parsed.
FROM_COMPUTE = re.compile(r"\bfrom[\s\\]+compute\s*\.")


def _declared() -> dict[str, str]:
    """Every top-level name each home module defines itself (assigned or def/class)."""
    out: dict[str, str] = {}
    for module in HOMES:
        tree = ast.parse(Path(module.__file__).read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                out[node.name] = module.__name__
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out.update({t.id: module.__name__ for t in targets if isinstance(t, ast.Name)})
    return out


def test_the_homes_declare_what_moved():
    declared = _declared()
    for name in ("RooflineOptions", "option_help", "MODES", "DEFAULT_RESERVE",
                 "check_acceptance", "PP_RULE", "DENSE_MLP_TP_DEGREES"):
        assert name in declared, name


def test_no_module_imports_them_from_elsewhere():
    declared = _declared()
    # an import of a name holds the name as a word: a file without any is not parsed
    names = re.compile(r"\b(?:" + "|".join(map(re.escape, declared)) + r")\b")
    wrong = []
    for path in sorted(ROOT.glob("**/*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".git", "build", "venv", ".venv"}:
            continue
        text = path.read_text()
        if not FROM_COMPUTE.search(text) or not names.search(text):
            continue   # no 'from compute.' import, or none of the names, to parse for
        tree = ast.parse(text, filename=str(rel))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("compute."):
                wrong += [f"{rel}:{node.lineno}: {a.name} from {node.module}"
                          for a in node.names
                          if a.name in declared and declared[a.name] != node.module]
    assert wrong == []
