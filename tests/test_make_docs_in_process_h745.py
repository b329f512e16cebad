"""scripts/make_docs.py ran a page's ``python -c ...`` and ``python scripts/...`` samples in
bash, a fresh interpreter each paying netmodel's imports again (docs/accuracy.md's two
scripts ~5 and ~10.5 s of CPU). Now a plain ``python SCRIPT.py ARG...`` or ``python -c
PROGRAM`` runs in this process, printing what a fresh interpreter prints, and leaves this
process as it found it; anything else, or a program that raises, still runs in bash."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from tests.compute.report_helpers import script

ROOT = Path(__file__).resolve().parents[1]

# What a fresh interpreter shows of itself: argv, __name__/__file__, sys.path[0], cwd,
# COLUMNS, PYTHONPATH's first entry, warnings (stdout flushed before stderr: a pipe would
# otherwise put stderr first, a terminal would not)
PROBE = ("import os, sys; f = globals().get('__file__'); "
         "print(sys.argv, __name__, f and (os.path.isabs(f), os.path.relpath(f)), "
         "repr(sys.path[0]), os.path.basename(os.getcwd())[:14], os.environ['COLUMNS'], "
         "os.environ['PYTHONPATH'].split(os.pathsep)[0], flush=True); "
         "sys.stderr.write('to stderr' + chr(10)); x = 1; import warnings; "
         "warnings.warn('careful'); warnings.warn('old', DeprecationWarning); "
         "warnings.warn('older', PendingDeprecationWarning)")


def _scratch(text: str) -> str:
    """``text`` with the page's scratch folder (another each run) named SCRATCH."""
    return re.sub(r"/\S*netmodel-docs-\w+", "SCRATCH", text)


def _page(tmp_path: Path, body: str) -> Path:
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(body)
    return page


def _project(tmp_path: Path, monkeypatch):
    md = script("make_docs")
    root = tmp_path / "project"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "probe.py").write_text(PROBE + "\nraise SystemExit(3)\n")
    monkeypatch.setattr(md, "ROOT", root)
    return md, root


def test_python_samples_print_what_a_fresh_interpreter_prints(tmp_path, monkeypatch):
    md, root = _project(tmp_path, monkeypatch)
    commands = ['python -c "' + PROBE.replace('"', '\\"') + '" a b',
                "python tools/probe.py --flag x"]
    assert [md._python_argv(c) is not None for c in commands] == [True, True]
    page = _page(root, "".join(f"<!-- sample: {c} -->\n" for c in commands))
    fresh = [b.new for b in md.blocks(page)]          # through bash: a fresh interpreter
    assert "exit status 3" in fresh[1] and "to stderr" in fresh[0]
    assert "UserWarning: careful" in fresh[0] and "DeprecationWarning: old" in fresh[0]
    assert "Warning: older" not in fresh[0]    # the filters a fresh interpreter starts with

    def no_shell(command, cwd):
        raise AssertionError(f"{command} went to bash")

    monkeypatch.setattr(md, "_shell", no_shell)
    before = (sys.argv[:], sys.path[:], os.getcwd(), dict(os.environ), sys.modules["__main__"],
              sys.stdout, sys.stderr)
    assert [_scratch(b.new) for b in md.blocks(page)] == [_scratch(f) for f in fresh]
    after = (sys.argv, sys.path, os.getcwd(), dict(os.environ), sys.modules["__main__"],
             sys.stdout, sys.stderr)
    assert after == before
    assert "x" not in vars(sys.modules["__main__"])


def test_what_bash_would_change_and_a_crash_go_to_bash(tmp_path, monkeypatch):
    md, root = _project(tmp_path, monkeypatch)
    for command in ("python tools/probe.py > out.txt", "python tools/probe.py *.py",
                    'python -c "print(\'$HOME\')"', "X=1 python tools/probe.py",
                    "python -m json.tool", "python tools/probe.py | head -1"):
        assert md._python_argv(command) is None, command
    page = _page(root, '<!-- sample: python -c "1/0" -->\n')
    [block] = md.blocks(page)
    # the traceback a fresh interpreter prints, its frames those of -c alone
    assert block.new.splitlines()[2:] == [
        "Traceback (most recent call last):", '  File "<string>", line 1, in <module>',
        "ZeroDivisionError: division by zero", "# exit status 1", "```"]


def test_a_pages_own_module_is_not_the_next_pages(tmp_path, monkeypatch):
    """Two pages each write a helper.py that their sample imports: in one process the second
    page must still import its own, as a fresh interpreter would."""
    md, root = _project(tmp_path, monkeypatch)
    out = []
    for value in ("first", "second"):
        page = _page(root, f"<!-- file: helper.py -->\n```python\nX = {value!r}\n```\n\n"
                           '<!-- sample: python -c "import helper; print(helper.X)" -->\n')
        [block] = md.blocks(page)
        out.append(block.new.splitlines()[2])
    assert out == ["first", "second"]
    assert "helper" not in sys.modules
