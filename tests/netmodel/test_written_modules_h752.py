"""lite_gpu_warm_up.import_written_modules imports, before the blast radius's process is
forked, every module of the project that the blast radius (reliability_part) and the
writing of its files (lite_gpu_files._reliability_files, outside its figure) import: the
forked process then imports none of them again (it imported about 25 before)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import ast, importlib, inspect, sys
from netmodel.study import lite_gpu_files, lite_gpu_parts
from netmodel.study.lite_gpu_warm_up import import_written_modules

import_written_modules()
before = set(sys.modules)

def imports(fn):
    # the function's own imports, not those of a function defined in it (a figure's)
    todo, found = list(ast.parse(inspect.getsource(fn).lstrip()).body[0].body), []
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.ImportFrom):
            found.append(node.module)
        todo.extend(ast.iter_child_nodes(node))
    return found

names = imports(lite_gpu_parts.reliability_part) + imports(lite_gpu_files._reliability_files)
assert len(names) >= 5, names
for name in names:
    importlib.import_module(name)
print(sorted(m for m in set(sys.modules) - before
             if m.split(".")[0] in ("netmodel", "compute", "topologies")))
"""


def test_the_blast_radius_imports_nothing_new_after_the_fork():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
