"""The manual speaks to users: README.md and everything under docs/ (pages, example files,
generated figures' tables) name no development session's worker ID ('h253'), which means
nothing to a reader. Lower-case GPU names (an H100 as h100, an H20 as h20) are not IDs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: 'h' and 2-3 digits as a word of its own: not inside a name ('dgx-h100', 'h100-dgx',
#: 'gpus/h20-96gb', 'vllm-dgx-h100'), where it is a GPU's.
SESSION_ID = re.compile(r"(?<![\w/.-])h(\d{2,3})(?![\w-])")
GPU_NAMES = {"h20", "h100", "h200", "h800"}


def _ids(text):
    return [m.group(0) for m in SESSION_ID.finditer(text) if m.group(0) not in GPU_NAMES]


def test_the_pattern_finds_an_id_and_not_a_gpu():
    assert _ids('source = "what-if: h253\'s Lite die" (h359), h12') == ["h253", "h359", "h12"]
    assert _ids("h100-dgx, vllm-dgx-h100, gpus/h20-96gb, an h100, test_x_h253.py") == []


def test_readme_and_docs_name_no_session_id():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*"))]
    found = []
    for path in files:
        if not path.is_file() or path.suffix in (".png", ".svg", ".pdf"):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{number}: {i}" for i in _ids(line)]
    assert found == []
