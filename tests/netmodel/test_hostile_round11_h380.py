"""Hostile input, round 11 (h380), through the command line: one line naming the value and
what is allowed, exit status 2, no traceback, nothing written."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.profiles import _shipped
from netmodel.study.sweep import parse_param
from tests.netmodel.cli_helpers import one_line_error, run_cli

# a [parameters.NAME] table's value: NAME's range (said before as 'write 0 for zero')
BELOW = ("below the smallest number netmodel reads (2.225e-308); layer_overhead_s must be "
         "a number from 0 to 1 s")


def test_a_profile_value_below_the_smallest_is_one_line(tmp_path):
    """Before: infer ran with layer_overhead_s = 1e-400 read as no overhead, exit 0."""
    text = (_shipped() / "vllm-dgx-h100.toml").read_text()
    old = "value = 0.0002675556089174325"
    assert old in text
    path = tmp_path / "p.toml"
    path.write_text(text.replace(old, "value = 1e-400", 1))
    r = run_cli(["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8",
                 "--batch", "4", "--profile", path])
    line = path.read_text().split("value = 1e-400")[0].count("\n") + 1   # named since h502
    assert one_line_error(r) == (f"error: {path} holds the number 1e-400 at line {line} "
                                 f"([parameters.layer_overhead_s] value), {BELOW}")


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
            "LO alone; give 2 or more values (N, or points), or the one value")
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


# topology compare built every fabric before counting their links together: 20 fat trees of
# k = 64..102 (9.1 million links, each under the 2,000,000 limit) ran 104.6 s and 4.0 GB
# before the refusal; now each is built with the links left as a cap (11.0 s, 0.85 GB).

def test_topology_compare_refuses_a_fabric_past_the_links_left_before_building_it(
        monkeypatch):
    from netmodel.study.fabric_ref import _build_spec
    from netmodel.study.fabric_ref import resolve_fabric as real
    from netmodel.study.topology_compare import compare_topologies
    from topologies import build

    _build_spec.cache_clear()   # a spec built before (cached) is not built again
    built = []

    def counting(ref, gpu=None):
        fabric = real(ref, gpu)
        built.append(ref)
        return fabric

    monkeypatch.setattr("netmodel.study.topology_compare.resolve_fabric", counting)
    monkeypatch.setenv("NETMODEL_MAX_COMPARE_LINKS", "1000")
    # fat-tree:k=8: 3 x 8^3/4 = 384 links; k=10: 750; k=12: 1,296
    with pytest.raises(UserError) as err:
        compare_topologies(["fat-tree:k=8", "fat-tree:k=10", "fat-tree:k=12"])
    assert str(err.value).startswith("topology compare: fabric 'fat-tree:k=10': fat-tree: the "
                                     "fabric would have about ")
    assert str(err.value).endswith("topology compare holds at most 1,000 links together (384 "
                                   "in the fabrics before it); compare smaller fabrics, or "
                                   "raise NETMODEL_MAX_COMPARE_LINKS")
    assert built == ["fat-tree:k=8"]   # k=10 and k=12 never built
    assert build("fat-tree:k=12").number_of_edges() == 1296   # the cap ends with the compare
