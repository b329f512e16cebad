"""``study lite-gpu --no-fabric``: what its help says it skips is what it skips."""

from __future__ import annotations

import re

from tests.netmodel.cli_helpers import run_cli

#: The files of part 1 (the GPUs alone), which --no-fabric keeps.
PART_ONE = {"study.csv", "study.json", "summary.md", "netmodel-manifest.json"}


def test_no_fabric_help_names_every_part_it_skips(tmp_path):
    # the help said 'Skip the fabric comparison and the sweep', while the run stops
    # after part 1: no blast radius, cost, serving or MoE files either
    r = run_cli(["study", "lite-gpu", "--no-fabric", "--no-plot", "-q", "--models",
                 "Llama-3-8B", "--gpus", "Lite", "--phases", "decode", "--out", tmp_path])
    assert r.exit_code == 0, r.output
    assert {p.name for p in tmp_path.iterdir()} == PART_ONE
    text = run_cli(["study", "lite-gpu", "--help"]).output
    help_ = " ".join(re.search(r"--no-fabric\s+(.*?)\n  --", text, re.S).group(1).split())
    # each other --no-X option's part (its help: 'Skip the X.') is one --no-fabric skips
    for part in ("fabric comparison", "paper's assumption", "crossovers", "packed",
                 "sweep", "blast radius", "cost", "serving", "MoE"):
        assert part in help_, (part, help_)
