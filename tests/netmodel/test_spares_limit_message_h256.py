"""A spare pool larger than the cluster is refused naming what is allowed (h256): the line
said only that 64 spares "exceed the cluster's 32 GPUs", not the range taken (the brief's
rule: name the value and what is allowed). Global spares sit outside the cells, so a user
may well ask for more than the cluster; the limit is 100% of it.
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "-q",
         "--no-plot", "--spare-placement", "global"]


@pytest.mark.parametrize("text, n", [("64", "64"), ("101%", "33")])
def test_too_many_spares_names_the_range(text, n):
    assert one_line_error(run_cli([*AVAIL, "--spares", text])) == (
        f"error: --spares {text!r} ({n}) exceed the cluster's 32 GPUs; allowed: 0 to 32 "
        f"(100%), a pool as large as the cluster")


def test_a_pool_as_large_as_the_cluster_is_taken():
    r = run_cli([*AVAIL, "--spares", "100%", "--trials", "20"])
    assert r.exit_code == 0, r.output
    assert "spares 32 (global, 32 reachable)" in r.output.splitlines()[0]
