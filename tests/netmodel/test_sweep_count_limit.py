"""A sweep of a whole-number fabric parameter (a count) past what any fabric can be built
with (fabric.n=1e308) ran every point, showed '-' for each unbuildable one and exited 0.
The same for a count below 1 (fabric.n=0), which no builder takes (1e-400, which read as 0,
is refused as below the smallest number netmodel reads). Refused up front now, in one line
naming the value and the most a count may be: the largest of the node and edge limits and a switch's ports (topologies.limits, 10,000,000 by
default, settable)."""

import pytest

from compute.errors import UserError
from netmodel.study.sweep import parse_param
from tests.netmodel.cli_helpers import one_line_error, run_cli


@pytest.mark.parametrize("spec", ["fabric.n=64,1e308", "fabric.n=64:1e308", "fabric.n=10000001",
                                  "fabric.planes=2,1e20", "fabric.n=0,64"])
def test_count_past_the_limits_is_refused(spec):
    r = run_cli(["sweep", "--scenario", "lite-flat", "--param", spec, "--models", "Llama-3-8B"])
    one_line_error(r, "sweep parameter fabric.", "outside what can be built", "from 1 to 10,000,000")


def test_a_count_below_the_smallest_float_is_refused():
    r = run_cli(["sweep", "--scenario", "lite-flat", "--param", "fabric.n=64,1e-400",
                 "--models", "Llama-3-8B"])
    one_line_error(r, "fabric.n value '1e-400' is below the smallest number netmodel reads")


def test_limit_follows_the_settable_edge_limit(monkeypatch):
    assert parse_param("fabric.n=10000000", ["lite-flat"]).values == (1e7,)
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_EDGES", "20000000")
    assert parse_param("fabric.n=20000000", ["lite-flat"]).values == (2e7,)
    with pytest.raises(UserError, match="from 1 to 20,000,000"):
        parse_param("fabric.n=20000001", ["lite-flat"])


def test_buildable_counts_still_sweep():
    r = run_cli(["sweep", "--scenario", "lite-ocs", "--param", "fabric.ports=2:8:3",
                 "--models", "Llama-3-8B"])
    assert r.exit_code == 0, r.output
