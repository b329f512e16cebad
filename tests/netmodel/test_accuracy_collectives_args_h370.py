"""scripts/accuracy_collectives.py reads its arguments: ``--help`` prints the usage and
exits 0 without the report, and an unknown argument is refused (exit 2) before any work.
Both ran the whole report before, ``--help`` and a misspelt ``--markdwon`` alike."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "accuracy_collectives.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=300)


def test_help_prints_the_usage_and_no_report():
    run = _run("--help")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: accuracy_collectives.py [-h] [--markdown]")
    assert "Worst error" not in run.stdout


def test_unknown_argument_is_refused_with_status_2():
    run = _run("--markdwon")
    assert run.returncode == 2
    assert run.stdout == ""
    assert "unrecognized arguments: --markdwon" in run.stderr
