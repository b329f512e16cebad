"""Code speaks to its readers as the manual does: the comments, docstrings and strings of
every tracked file outside tests/ and docs/ (docs/: tests/test_docs_no_session_ids_h371.py)
name no development session's worker ID ('h500: the layout is chosen ...', 'helper 233'),
which means nothing to a reader; the change it names is said by what it did (and a commit
where one is wanted). Lower-case GPU names (h100, h20) are not IDs."""

import re
import subprocess
from pathlib import Path

from tests.test_docs_no_session_ids_h371 import _ids

ROOT = Path(__file__).resolve().parents[1]
#: 'helper' and its number, the other spelling of an ID.
HELPER = re.compile(r"\bhelper \d{2,3}\b", re.IGNORECASE)
TEXT = (".py", ".toml", ".md", ".txt", ".cfg", ".csv", ".yaml", ".yml", ".json")


#: Folders of a tree that is not a git checkout (an unpacked archive) whose files are not
#: the project's: build outputs, caches, virtual environments.
UNTRACKED = ("build", "dist", "results", "__pycache__", "venv")


def _tracked() -> list[str]:
    """The project's text files outside tests/ and docs/: git's list in a checkout, the
    tree's files less build outputs and hidden folders in an unpacked archive."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
               if p.is_file() and not any(part.startswith(".") or part in UNTRACKED
                                          or part.endswith(".egg-info")
                                          for part in p.relative_to(ROOT).parts[:-1])]
    return [p for p in out if p.endswith(TEXT) and not p.startswith(("tests/", "docs/"))]


def _found(text: str) -> list[str]:
    return [*_ids(text), *(m.group(0) for m in HELPER.finditer(text))]


def test_the_patterns_find_ids_and_not_gpus():
    assert _found("# h500: the layout (helper 233), an h100, vllm-dgx-h100") == \
        ["h500", "helper 233"]


def test_no_code_outside_tests_names_a_session_id():
    files = _tracked()
    assert "scripts/bench_reliability.py" in files and len(files) > 100
    found = []
    for rel in files:
        path = ROOT / rel
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            found += [f"{rel}:{number}: {i}" for i in _found(line)]
    assert found == []
