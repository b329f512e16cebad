"""availability's threshold bound estimates its work before doing it (stop 46).

f1df613's bound multiplies truncated generating functions over the refusal types; on
16,384 Lites of lite-flat with 2% global spares that is 11 types, 75,582 terms and 5.7e9
pairs a product, and the run did not finish in ten minutes (the benchmark's case, and the
hang a dependency-range run reported). Past MISSED_PAIRS the bound is not worked out and
the reading is flagged; the run takes about 2 s.
"""

from __future__ import annotations

import json
import math

from netmodel.study import availability_threshold as at
from tests.netmodel.cli_helpers import run_cli


def test_the_limit_is_what_its_comment_says():
    assert math.comb(5 + at.MOST_MOMENTS, at.MOST_MOMENTS) == 1287
    assert 1287 ** 2 <= at.MISSED_PAIRS < math.comb(6 + 8, 8) ** 2
    assert math.comb(11 + 8, 8) == 75582


def test_a_large_global_pool_is_flagged_not_worked_out():
    r = run_cli(["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B",
                 "--gpus", "16384", "--spares", "2%", "--spare-placement", "global",
                 "--trials", "10", "-q", "--no-plot", "--json"])
    assert r.exit_code == 0, r.output
    a = json.loads(r.output)["analytic"]
    assert a["fallback"] == [] and a["threshold_low"] is True
