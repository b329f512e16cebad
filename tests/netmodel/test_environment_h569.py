"""``netmodel`` in a hostile environment (scripts/hostile_round19.py): the C locale without
Python's UTF-8 mode, a standard output closed before the start, a HOME that cannot hold
matplotlib's folders.

Before: under ``LC_ALL=C PYTHONUTF8=0`` every command that read a packaged data file
(compute/data/limits.toml, gpus.toml, ...) died in a ``UnicodeDecodeError`` traceback, exit
1, as the files were read in the locale's encoding (ASCII), not UTF-8; ``netmodel hardware
>&-`` exited 0 and said nothing, its output dropped; ``HOME=/dev/null netmodel topology
plot`` printed matplotlib's two warnings (``mkdir -p failed ...``, ``Matplotlib created a
temporary cache directory ...``) after its output, and rebuilt the font cache each run.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from netmodel.cli import process as cli_process

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compute", "topologies", "netmodel")
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def _env(**put: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING",
                                                             "MPLCONFIGDIR")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env | put


def _texts_without_encoding(tree: ast.AST) -> list[int]:
    """Lines of pathlib's ``read_text()`` and ``open(x[, text mode])`` calls that name no
    encoding (the locale's would be used). Files are written by ``open`` (compute.outputs
    writes bytes); a ``write_text`` here is click's help formatter's."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or any(k.arg == "encoding" for k in node.keywords):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        if name == "read_text" and isinstance(f, ast.Attribute):
            # pathlib's (compute.config_files.read_text, a function, reads UTF-8 itself)
            out.append(node.lineno)
        elif name == "open" and isinstance(f, ast.Name):
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            text = mode is None or (isinstance(mode, ast.Constant) and "b" not in mode.value)
            if text and node.args and not (isinstance(node.args[0], ast.Constant)
                                           and isinstance(node.args[0].value, int)):
                out.append(node.lineno)
    return out


def test_every_text_read_and_written_names_its_encoding():
    """No file is read or written in the locale's encoding: the packaged data files hold
    UTF-8 ('±', 'µ'), which the C locale's ASCII cannot decode."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "read_text(" not in text and "open(" not in text:
                continue   # nothing to check: not parsed
            lines = _texts_without_encoding(ast.parse(text))
            if lines:
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}


def test_the_check_finds_a_read_without_encoding():
    tree = ast.parse("p.read_text()\nopen(f)\nopen(f, 'w')\nopen(f, 'rb')\n"
                     "p.read_text(encoding='utf-8')\nos.open(f, 1)\nread_text(f, 'x')\n"
                     "p.write_text(t)\n")
    assert _texts_without_encoding(tree) == [1, 2, 3]


def test_c_locale_runs_a_command_that_reads_every_kind_of_packaged_file(tmp_path):
    """cost reads the GPU, model, economics, limits, network-cost and scenario files."""
    r = subprocess.run([sys.executable, "-m", "netmodel", "cost", "--scenario", "h100-dgx",
                        "--model", "Llama-3-8B", "--max-batch", "8"], capture_output=True,
                       env=_env(**C_LOCALE), cwd=tmp_path, timeout=120, check=False)
    assert (r.returncode, r.stderr) == (0, b"")
    assert b"$ per M tokens" in r.stdout or b"tokens" in r.stdout


def test_stdout_closed_is_output_lost(tmp_path):
    """``>&-``: the command runs to its end, then one line and status 1, as /dev/full."""
    r = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "netmodel",
                        "hardware"], capture_output=True, env=_env(), cwd=tmp_path,
                       timeout=60, check=False)
    assert r.returncode == 1
    assert r.stderr == b"error: cannot write the output to standard output: " \
                       b"Bad file descriptor\n"


def test_stdout_closed_on_a_user_error_keeps_status_2(tmp_path):
    r = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "netmodel",
                        "hardware", "NoSuchGPU"], capture_output=True, env=_env(),
                       cwd=tmp_path, timeout=60, check=False)
    assert r.returncode == 2
    assert r.stderr.startswith(b"error: unknown GPU 'NoSuchGPU'")
    assert r.stderr.count(b"\n") == 1


@pytest.fixture
def no_matplotlib_folder(monkeypatch, tmp_path):
    """No MPLCONFIGDIR nor XDG folders; the temporary folder is ``tmp_path/tmp``."""
    for var in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    return tmp_path / "tmp"


def test_a_home_that_holds_nothing_gets_a_folder_of_its_own(monkeypatch,
                                                             no_matplotlib_folder):
    monkeypatch.setenv("HOME", "/dev/null")
    cli_process.matplotlib_folder()
    folder = Path(os.environ["MPLCONFIGDIR"])
    assert folder == no_matplotlib_folder / f"netmodel-matplotlib-{os.getuid()}"
    st = folder.stat()
    assert folder.is_dir() and st.st_mode & 0o777 == 0o700 and st.st_uid == os.getuid()


def test_a_folder_others_may_write_is_not_used(monkeypatch, no_matplotlib_folder):
    monkeypatch.setenv("HOME", "/dev/null")
    shared = no_matplotlib_folder / f"netmodel-matplotlib-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    cli_process.matplotlib_folder()
    folder = Path(os.environ["MPLCONFIGDIR"])
    assert folder != shared and folder.parent == no_matplotlib_folder
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_home_that_will_do_is_left_alone(monkeypatch, tmp_path, no_matplotlib_folder):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    cli_process.matplotlib_folder()
    assert "MPLCONFIGDIR" not in os.environ
    assert list(home.iterdir()) == [] and list(no_matplotlib_folder.iterdir()) == []


def test_drawing_with_home_dev_null_says_nothing_on_stderr(tmp_path):
    r = subprocess.run([sys.executable, "-m", "netmodel", "topology", "plot", "ring:n=4",
                        "-o", str(tmp_path / "f.png")], capture_output=True,
                       env=_env(HOME="/dev/null"), cwd=tmp_path, timeout=120, check=False)
    assert (r.returncode, r.stderr) == (0, b"")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_refusal_quoting_what_latin1_cannot_hold_is_one_escaped_line(tmp_path):
    """``PYTHONIOENCODING=latin-1 netmodel models 'Llama→'`` was a UnicodeEncodeError
    traceback, exit 1, where the refusal quoted the name; now its escape, exit 2."""
    r = subprocess.run([sys.executable, "-m", "netmodel", "models", "Llama\u2192"],
                       capture_output=True, env=_env(PYTHONIOENCODING="latin-1"),
                       cwd=tmp_path, timeout=60, check=False)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.startswith(b"error: unknown model 'Llama\\u2192'; known: ")
    assert r.stderr.count(b"\n") == 1


@pytest.mark.parametrize("encoding, text, written", [
    ("latin-1", "caf\u00e9 \u2192 \u0663", b"caf\xe9 \\u2192 \\u0663"),
    ("ascii", "caf\u00e9", b"caf\\xe9"),
    # an argument's byte that was not UTF-8 (a file name): the byte again
    ("utf-8", "f\udce9.json", b"f\xe9.json"),
    ("ascii", "\udcff\u00e9\udc80", b"\xff\\xe9\x80"),
])
def test_the_streams_write_what_the_encoding_cannot_hold_as_an_escape(encoding, text,
                                                                      written):
    assert text.encode(encoding, cli_process.ESCAPE) == written
