"""pytest's hook for the packages' own modules (their doctests), whatever is collected.

With ``--import-mode=importlib`` (pyproject's addopts) pytest imports a module it collects
from its file: first the module's package, whose ``__init__`` may import the module, then
the file again as a second module object put in its place in ``sys.modules``. Its tables
that other modules fill as they load are then empty in that copy: ``pytest
topologies/registry.py`` run alone failed its doctests ("unknown fabric builder 'ring';
known: "), the builders having registered in the first ``topologies.registry``, and
``topologies/spec_grammar.py``'s said ``auto`` for ocs's ``logical`` (the first
``_ABSENT``). They passed in the full suite only because a test had imported the package
before. :func:`pytest_collect_file` imports each module the ordinary way first, and
pytest uses the module it then finds in ``sys.modules``.

It also chooses how hypothesis draws its examples. The default profile, ``deterministic``,
seeds each property from a hash of its test (hypothesis's ``derandomize``): every run of the
suite, CI's included, tries the same examples, so a property stated too broadly fails on the
day it is written, not at random on a later change's CI. ``explore`` draws fresh examples
each run, as hypothesis does by default, to hunt for what the fixed ones miss:
``python -m pytest --hypothesis-profile=explore`` (any failure it finds prints the
``@reproduce_failure``/seed to pin the case).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("deterministic")

ROOT = Path(__file__).resolve().parent
#: The packages whose modules pytest collects for their doctests (pyproject's testpaths).
PACKAGES = ("compute", "topologies", "netmodel")


def pytest_configure(config) -> None:
    """Compile the packages' and scripts' modules to bytecode once, in the first process
    (xdist's controller, before its workers start), into the tree's ``__pycache__``
    folders (which git ignores).

    Where ``PYTHONDONTWRITEBYTECODE`` is set (this project's cloud machines set it), no
    process writes what it compiles: every ``python -m netmodel`` a test starts compiled
    the modules it imports again, about 0.3 s of CPU each (a collective: 1.25 s -> 0.95 s
    of CPU), and the tests that start such processes took 94 s of CPU without bytecode
    against 68 s with it (the 27 files that start ``sys.executable``, one process).
    Compiling reads every module once (about 1 s); an up-to-date file is left as it is."""
    if hasattr(config, "workerinput"):   # an xdist worker: its controller compiled
        return
    import compileall

    for folder in (*PACKAGES, "scripts"):
        compileall.compile_dir(ROOT / folder, quiet=1)


def pytest_collect_file(file_path: Path, parent):
    """Import a package module about to be collected by its dotted name; collect nothing."""
    if file_path.suffix != ".py" or file_path.name in ("conftest.py", "__main__.py") \
            or not file_path.is_relative_to(ROOT):
        return None
    parts = file_path.relative_to(ROOT).with_suffix("").parts
    if parts[0] not in PACKAGES:
        return None
    if parts[-1] == "__init__":
        parts = parts[:-1]
    try:
        importlib.import_module(".".join(parts))
    except Exception:  # noqa: BLE001 - pytest's own import of the file reports it
        return None
    return None
