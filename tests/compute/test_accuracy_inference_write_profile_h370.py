"""scripts/accuracy_inference.py --write-profile PATH: a path that cannot take the profile
(its folder absent, not a .toml, a folder) is one ``error:`` line naming it, exit status 2,
no traceback and nothing written, before the fit (it was a UserError traceback, exit 1,
after it; a .txt path was written)."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "accuracy_inference.py"


@pytest.mark.parametrize(("name", "why"), [
    ("absent/profile.toml", "does not exist"),
    ("profile.txt", "must end in one of: .toml"),
    ("", "is an existing folder"),
])
def test_unwritable_profile_path_is_one_line_exit_2(tmp_path, name, why):
    target = tmp_path / name if name else tmp_path
    run = subprocess.run([sys.executable, str(SCRIPT), "--write-profile", str(target)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: profile file "), run.stderr
    assert why in lines[0] and str(target) in lines[0]
    assert "Traceback" not in run.stderr and run.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []
