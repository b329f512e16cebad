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


def test_help_prints_the_parts_and_runs_none(tmp_path, monkeypatch, capsys):
    # `python scripts/bench.py --help` was refused as "unknown benchmark part '--help'", exit 1
    bench = _load_bench()
    monkeypatch.setattr(bench, "HERE", tmp_path)            # no part file: nothing could run
    bench.main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: python scripts/bench.py [PART ...]  (PART: compute, "
                          "topologies, collectives, study, reliability, calibrate; default all)")
    assert "no benchmark yet" not in out


def test_an_unknown_part_is_refused_before_any_part_runs(tmp_path, monkeypatch, capsys):
    # `bench.py compute stdy` ran the compute part, then exited 1 on 'stdy'
    bench = _load_bench()
    (tmp_path / "bench_compute.py").write_text("def main():\n    print('compute ran')\n")
    monkeypatch.setattr(bench, "HERE", tmp_path)
    try:
        bench.main(["compute", "stdy"])
    except SystemExit as exc:
        status = exc.code
    else:
        status = None
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert captured.err == ("error: unknown benchmark part 'stdy'; known: compute, topologies, "
                            "collectives, study, reliability, calibrate\n")
