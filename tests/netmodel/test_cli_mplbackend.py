"""The command line draws with Agg whatever MPLBACKEND says (hostile pass h244): an
unknown backend name in the environment made ``import matplotlib`` raise a ValueError
traceback after the work was done, with nothing written."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_an_unknown_mplbackend_does_not_stop_a_figure(tmp_path):
    env = {**os.environ, "MPLBACKEND": "nosuchbackend", "PYTHONPATH": str(ROOT)}
    out = tmp_path / "ring.png"
    run = subprocess.run([sys.executable, "-m", "netmodel", "topology", "plot", "ring:n=8",
                          "-o", str(out)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert "Traceback" not in run.stderr
    assert run.returncode == 0, run.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
