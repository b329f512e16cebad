"""The builders' names that help texts list are a declared list the registry is held to,
read by the import system's own finders: they were scraped by a regular expression from
the ``@builder("NAME")`` lines of the package's ``.py`` files and the file was opened by
its ``.py`` path, so an install of compiled files alone (or a zip archive) failed every
``--help`` naming builders with a traceback (FileNotFoundError: .../builder_names.py),
found no name at all where the package was loaded, and a builder registered as
``@builder('x')`` or ``@builder(name="x")`` or in a subpackage was left out of help texts
until a test ran."""

from __future__ import annotations

import compileall
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from topologies.builder_names import BUILDERS, NAMES
from topologies.registry import REGISTRY, builder

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compute", "topologies", "netmodel")
#: what the help shows of the builders: a spec NAME[:KEY=VALUE,...] of a builder (...; ...)
LISTED = "a spec NAME[:KEY=VALUE,...] of a builder (" + ", ".join(NAMES) + ";"

_HELP = ("import sys\nfrom netmodel.cli.options import builder_names, fabric_help\n"
         "print(fabric_help().startswith({listed!r}), builder_names() == {names!r}, "
         "sorted(m for m in ('topologies', 'numpy', 'networkx') if m in sys.modules), "
         "sys.modules['netmodel'].__file__.startswith({where!r}))")


def _run(path: str, where: str) -> str:
    code = _HELP.format(listed=LISTED, names=NAMES, where=where)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=where if Path(where).is_dir() else Path(where).parent,
                         env={"PYTHONPATH": path, "PATH": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def _copy(to: Path) -> None:
    for name in PACKAGES:
        shutil.copytree(ROOT / name, to / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def test_help_names_the_builders_from_compiled_files_alone(tmp_path):
    _copy(tmp_path)
    assert compileall.compile_dir(tmp_path, quiet=1, legacy=True)   # foo.pyc beside foo.py
    for source in tmp_path.rglob("*.py"):
        source.unlink()
    assert _run(str(tmp_path), str(tmp_path)) == "True True [] True"


def test_help_names_the_builders_from_a_zip_archive(tmp_path):
    _copy(tmp_path / "tree")
    archive = tmp_path / "netmodel.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in sorted((tmp_path / "tree").rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(tmp_path / "tree").as_posix())
    assert _run(str(archive), str(archive)) == "True True [] True"


@pytest.mark.parametrize("name", ["hypercube", "Fat-Tree", "fat_tree", ""])
def test_a_name_not_declared_is_refused_where_it_registers(name):
    with pytest.raises(ValueError, match=r"is not in NAMES of topologies/builder_names\.py"):
        builder(name)
    assert name not in REGISTRY


def test_every_declared_name_is_registered_when_the_builders_load():
    # topologies.specs refuses to load with a declared name no module registers
    code = ("import sys, types\nm = types.ModuleType('topologies.builder_names')\n"
            f"m.BUILDERS = {{**{BUILDERS!r}, 'hypercube': 'direct'}}\n"
            "m.NAMES = tuple(m.BUILDERS)\n"
            "sys.modules[m.__name__] = m\nimport topologies.specs\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        "ImportError: no builder module registers 'hypercube' of BUILDERS in "
        "topologies/builder_names.py: register it (@builder) in the module named there, "
        "or take it out of BUILDERS")
