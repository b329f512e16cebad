"""``study lite-gpu``'s stderr gives the whole run's time beside each part's: the parts
run side by side in forked processes, so their times add up to more than the run took
(71.5 s summed from the parts of a 30.4 s run on a loaded 2-core machine), and no line said
what the run took in all."""

from __future__ import annotations

import re

from tests.netmodel.cli_helpers import run_cli

TOTAL = re.compile(r"^time per part: (.*); in all (\d+\.\d) s wall, (\d+\.\d) s CPU "
                   r"\(forked parts included\)$", re.M)


def test_time_per_part_ends_with_the_whole_run(tmp_path):
    r = run_cli(["study", "lite-gpu", "--no-fabric", "--no-plot", "--models", "Llama-3-8B",
                 "--gpus", "Lite", "--phases", "decode", "--out", tmp_path / "o"])
    assert r.exit_code == 0, r.output
    m = TOTAL.search(r.stderr)
    assert m, r.stderr
    parts = dict(re.fullmatch(r"(.+) (\d+\.\d) s", p).groups() for p in m.group(1).split(", "))
    assert set(parts) == {"GPUs alone", "writing files"}
    # with --no-fabric nothing forks: the parts ran one after the other inside the run,
    # so they sum to at most its wall time (each rounded to 0.1 s: 0.05 s a part)
    wall = float(m.group(2))
    assert sum(map(float, parts.values())) <= wall + 0.05 * (len(parts) + 1)
    # (the CPU total can read 0.0 s here: after other tests the searches are cached)


def test_quiet_prints_no_times(tmp_path):
    r = run_cli(["study", "lite-gpu", "--no-fabric", "--no-plot", "-q", "--models",
                 "Llama-3-8B", "--gpus", "Lite", "--phases", "decode", "--out", tmp_path / "o"])
    assert r.exit_code == 0, r.output
    assert "time per part" not in r.stderr and "in all" not in r.stderr
