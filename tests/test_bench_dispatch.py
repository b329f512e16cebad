"""scripts/bench.py runs each part as if the part were run alone."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_dispatch", ROOT / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_part_does_not_see_the_part_names_given_to_bench_py(tmp_path, monkeypatch, capsys):
    # `python scripts/bench.py collectives` handed ["collectives"] to bench_collectives.py's
    # own option parser, which refused it ("usage: bench_collectives.py [scale] ...", exit 1)
    bench = _load_bench()
    (tmp_path / "bench_compute.py").write_text(
        "import sys\n\ndef main():\n    print('part argv', sys.argv[1:])\n")
    monkeypatch.setattr(bench, "HERE", tmp_path)
    monkeypatch.setattr(sys, "argv", ["scripts/bench.py", "compute"])
    bench.main(["compute"])
    assert "part argv []" in capsys.readouterr().out
    assert sys.argv == ["scripts/bench.py", "compute"]      # given back afterwards
