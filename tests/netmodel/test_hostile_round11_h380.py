"""Hostile input, round 11 (h380), through the command line: one line naming the value and
what is allowed, exit status 2, no traceback, nothing written."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.profiles import _shipped
from netmodel.study.sweep import parse_param
from tests.netmodel.cli_helpers import one_line_error, run_cli

BELOW = "below the smallest number netmodel reads (2.225e-308); write 0 for zero"


def test_a_profile_value_below_the_smallest_is_one_line(tmp_path):
    """Before: infer ran with layer_overhead_s = 1e-400 read as no overhead, exit 0."""
    text = (_shipped() / "vllm-dgx-h100.toml").read_text()
    old = "value = 0.0002675556089174325"
    assert old in text
    path = tmp_path / "p.toml"
    path.write_text(text.replace(old, "value = 1e-400", 1))
    r = run_cli(["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8",
                 "--batch", "4", "--profile", path])
    assert one_line_error(r) == f"error: {path} holds the number 1e-400, {BELOW}"


# sweep: a range's values were made before the sweep's work was counted. With
# NETMODEL_MAX_SWEEP_POINTS raised, LO:HI:100000000000000 raised numpy's MemoryError
# ('Unable to allocate 728. TiB', traceback, exit 1) and --points 300000000 ran over a
# minute in 3.2 GB; each value is a search at least, so the searches bound
# (NETMODEL_MAX_SWEEP_SEARCHES, 20,000) now refuses them before any value is made. And a
# range of one value (--points 1, LO:HI:1) swept LO alone, its HI dropped without a word.

def test_a_range_of_more_values_than_searches_is_refused_before_it_is_made(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_SWEEP_POINTS", "1e15")
    with pytest.raises(UserError) as err:
        parse_param("adjust.hop_latency=0.1us:10us:100000000000000", ["lite-flat"])
    assert str(err.value) == ("sweep: about 100,000,000,000,000 searches, over the limit of "
                              "20,000; sweep fewer points, scenarios or models, or raise "
                              "NETMODEL_MAX_SWEEP_SEARCHES")
    # at the bound itself the values are made
    assert len(parse_param("adjust.hop_latency=0.1us:10us:20000", ["lite-flat"]).values) \
        == 20_000


def test_a_range_of_one_value_is_refused_unless_lo_is_hi():
    said = ("sweep parameter adjust.hop_latency range '0.1us:10us{}' of 1 value would sweep its "
            "LO alone; give 2 or more values (N, or --points), or the one value")
    with pytest.raises(UserError) as err:
        parse_param("adjust.hop_latency=0.1us:10us:1", ["lite-flat"])
    assert str(err.value) == said.format(":1")
    with pytest.raises(UserError) as err:
        parse_param("adjust.hop_latency=0.1us:10us", ["lite-flat"], 1)
    assert str(err.value) == said.format("")
    assert parse_param("adjust.hop_latency=1us:1us:1", ["lite-flat"]).values == (1e-6,)
    assert parse_param("adjust.hop_latency=0.1us:10us:2", ["lite-flat"]).values == (1e-7, 1e-5)


def test_sweep_points_1_on_a_range_is_one_line():
    r = run_cli(["sweep", "--scenarios", "lite-flat", "--param",
                 "adjust.hop_latency=0.1us:10us", "--points", "1"])
    one_line_error(r, "range '0.1us:10us' of 1 value would sweep its LO alone")
