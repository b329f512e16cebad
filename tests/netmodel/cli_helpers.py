"""Helpers the command-line tests of tests/netmodel share: run ``netmodel`` in process and
check that bad input got one clear line and exit status 2."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from click.testing import CliRunner, Result

from netmodel.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def run_cli(args: Sequence[object], cwd: Path | str | None = None,
            env: Mapping[str, str] | None = None) -> Result:
    """``netmodel ARGS`` run in process (each argument as ``str``), in ``cwd`` if given
    (restored after), with ``env`` added to the environment."""
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, [str(a) for a in args], prog_name="netmodel", env=env)
    finally:
        os.chdir(old)


def one_line_error(r: Result, *needles: str) -> str:
    """Assert ``r`` exited 2 with one line ``error: ...`` holding every needle, and no
    traceback; return the line."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert "Traceback" not in r.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def measured_csv(tmp_path: Path) -> Path:
    """``tmp_path / "measured.csv"``: the measurements CSV docs/compute.md shows (its
    ``measured.csv`` block), for ``calibrate``."""
    text = (ROOT / "docs" / "compute.md").read_text()
    csv = text.split("<!-- file: measured.csv -->\n```csv\n")[1].split("```")[0]
    path = tmp_path / "measured.csv"
    path.write_text(csv)
    return path


def refused_file(tmp_path: Path, name: str, text: str, argv: Sequence[str]) -> tuple[str, str]:
    """``netmodel ARGV`` with ``text`` written to ``tmp_path/name`` in place of the argument
    ``FILE``: its one-line refusal (exit status 2 asserted) and the file's path."""
    path = tmp_path / name
    path.write_text(text)
    r = run_cli([*(str(path) if a == "FILE" else a for a in argv)])
    assert r.exit_code == 2, r.output
    return one_line_error(r), str(path)
