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
import re
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
    # the tests' helper modules (imported plainly; the test files are rewritten, below)
    compileall.compile_dir(ROOT / "tests", quiet=1, rx=re.compile(r"(^|/)test_[^/]*\.py$"))
    _rewrite_tests(config)


def _rewrite_tests(config) -> None:
    """Write pytest's cached rewrite of each test file (and conftest) under the paths the
    session was given, where missing or stale, before the xdist workers start.

    pytest rewrites a test module's asserts on import and caches the result beside it, but
    not where ``sys.dont_write_bytecode`` is set (``PYTHONDONTWRITEBYTECODE``, as in CI):
    there every process rewrote and compiled every test file (973 when written) each run,
    22-23 s of the 38-39 s of CPU one process took to collect the suite (16 s with the
    cache), and each xdist worker collects the whole suite. Here they are rewritten once,
    by pytest's own functions (the same code objects its import hook makes and would
    cache), split over the cores (the workers would each do all of it); pytest reads a
    cached file only where its source hash is the file's. Collecting the suite with 2
    workers (``-k`` matching nothing): 88.8 s of CPU -> 71.9 s on a fresh clone, 37.8 s
    where the cache is up to date. Anything unexpected (another pytest's internals,
    ``--assert=plain``) leaves it to pytest as before."""
    import fnmatch
    import os

    try:
        from _pytest.assertion import rewrite as rw

        if config.getoption("assertmode") != "rewrite":
            return
        if not all(hasattr(rw, name) for name in ("get_cache_dir", "PYC_TAIL", "_read_pyc",
                                                  "_rewrite_test", "_write_pyc",
                                                  "try_makedirs", "assertstate_key")):
            return
        patterns = [*config.getini("python_files"), "conftest.py"]
        files = set()
        for arg in config.args:
            path = Path(arg.split("::")[0]).resolve()
            found = [path] if path.is_file() else path.rglob("*.py") if path.is_dir() else ()
            files.update(f for f in found if any(fnmatch.fnmatch(f.name, p) for p in patterns))
        stale = sorted(f for f in files
                       if rw._read_pyc(f, rw.get_cache_dir(f) / (f.name[:-3] + rw.PYC_TAIL))
                       is None)
    except Exception:  # noqa: BLE001 - pytest rewrites on import, as without this
        return
    if not stale:
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    procs = max(1, min(cores or 1, 4, len(stale) // 20))
    import multiprocessing

    # every procs-th file to a forked process, the first share here (a fork: nothing pickled)
    try:
        others = [multiprocessing.get_context("fork").Process(
            target=_rewrite, args=(rw, config, stale[k::procs])) for k in range(1, procs)]
        for p in others:
            p.start()
    except Exception:  # noqa: BLE001 - what is not written is rewritten on import
        others = []
    _rewrite(rw, config, stale[::procs])
    for p in others:
        p.join()


def _rewrite(rw, config, files: list) -> None:
    """pytest's rewrite of each test file of ``files``, cached where its import hook caches
    it (a file pytest cannot read or parse is left to its import, which reports it)."""
    for fn in files:
        try:
            source_hash, co = rw._rewrite_test(fn, config)
            cache = rw.get_cache_dir(fn)
            if rw.try_makedirs(cache):
                rw._write_pyc(config.stash[rw.assertstate_key], co, source_hash,
                              cache / (fn.name[:-3] + rw.PYC_TAIL))
        except Exception:  # noqa: BLE001, S112 - left to pytest's import
            continue


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
