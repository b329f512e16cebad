"""Other modules of netmodel.study read a Cluster through its public names: no module but
reliability_cluster (and reliability_footprint and reliability_recost, the Footprints and
Recosting mixins Cluster inherits) names one of the Cluster's private attributes on anything
but its own ``self`` (a class of its own may have a private of the same name)."""
import ast
from pathlib import Path

import netmodel.study

STUDY = Path(netmodel.study.__file__).parent


#: The modules of the Cluster and of its mixins, and the classes in them.
OWN = {"reliability_cluster.py": "Cluster", "reliability_footprint.py": "Footprints",
       "reliability_recost.py": "Recosting"}


def _cluster_privates() -> set:
    classes = []
    for module, name in OWN.items():
        tree = ast.parse((STUDY / module).read_text())
        classes += [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    assert len(classes) == len(OWN)
    names = set()
    for node in (x for cls in classes for x in ast.walk(cls)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "self":
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_privates_collected():
    # the ones reliability_spares used to read, so the scan below looks for them
    assert {"_switches", "_direct", "_local", "_evaluate", "_kinds", "_place", "_routed",
            "_links_local"} <= _cluster_privates()


def test_no_module_reads_cluster_privates():
    privates = _cluster_privates()
    found = []
    for path in sorted(STUDY.glob("*.py")):
        if path.name in OWN:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in privates \
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert found == []
