"""A package module's doctests pass run alone (``pytest topologies/registry.py``), not only in
the suite: with ``--import-mode=importlib`` pytest imported the module a second time after
its package had, and that copy's tables were empty (topologies.registry's REGISTRY: "unknown
fabric builder 'ring'; known: "; topologies.spec_grammar's ``_ABSENT``: ocs's ``logical``
unset with 'auto'). The root conftest.py imports each module the ordinary way first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("module", ["topologies/registry.py", "topologies/spec_grammar.py"])
def test_a_modules_doctests_pass_run_alone(module):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-p",
                          "no:cacheprovider", module], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "unknown fabric builder" not in out.stdout
