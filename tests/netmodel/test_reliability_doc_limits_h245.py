"""docs/reliability.md states the Monte Carlo's work limits as the code holds them (h245).

The page said 2e9 failure events a run, the limit before MAX_EVENTS became 2e7."""

import re
from pathlib import Path

from netmodel.study.availability_mc import MAX_EVENTS, MAX_HORIZON, MAX_TRIALS
from netmodel.study.reliability_cluster import YEAR

DOC = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"


def test_the_monte_carlo_limits_read_as_the_code_holds_them():
    text = " ".join(DOC.read_text().split())
    m = re.search(r"The Monte Carlo draws at most (\S+) failure events per run and (\S+) "
                  r"trials, over at most a century", text)
    assert m is not None
    assert float(m.group(1)) == MAX_EVENTS
    assert int(m.group(2).replace(",", "")) == MAX_TRIALS
    assert MAX_HORIZON == 100 * YEAR   # "a century"
