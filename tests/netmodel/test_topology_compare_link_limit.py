"""``netmodel topology compare`` counts the links of its fabrics and refuses a comparison
over its limit (NETMODEL_MAX_COMPARE_LINKS) before any row (h237), and before building a
fabric past it (h380). Split from
tests/netmodel/test_topology_compare_cut_points.py (h329), whose tests of the blast radius's
graph pieces are tests/topologies/test_hardware_radius_cut_points.py."""

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.fabric_ref import _build_spec
from netmodel.study.topology_compare import compare_topologies


def test_compare_counts_its_links_before_any_row(monkeypatch):
    # before: fat-tree:k=128 against a ring ran 65 s and 2.95 GB with nothing said up
    # front; now the links of every fabric are counted once built and a comparison over the
    # limit is refused with its estimate. fat-tree:k=8 has 8^3/4 = 128 GPUs and
    # 3 x 128 = 384 links (GPU-edge, edge-aggregation, aggregation-core), ring:n=8 has 8
    # (h380) each fabric is built with the links left as a cap on its build, so the ring
    # is refused before it is built, by its builder's estimate
    monkeypatch.setenv("NETMODEL_MAX_COMPARE_LINKS", "391")
    _build_spec.cache_clear()   # a spec built before (cached) is not built again
    with pytest.raises(UserError, match=r"^topology compare: fabric 'ring:n=8': ring: the "
                                         r"fabric would have about 8 nodes and 8 edges, over "
                                         r"the limit of [0-9,]+ nodes and 7 edges; topology "
                                         r"compare holds at most 391 links together \(384 in "
                                         r"the fabrics before it\); compare smaller fabrics, "
                                         r"or raise NETMODEL_MAX_COMPARE_LINKS$"):
        compare_topologies(["fat-tree:k=8", "ring:n=8"])
    out = CliRunner().invoke(cli, ["topology", "compare", "fat-tree:k=8", "ring:n=8"])
    assert out.exit_code == 2 and "at most 391 links together" in out.output
    assert "Traceback" not in out.output
    monkeypatch.setenv("NETMODEL_MAX_COMPARE_LINKS", "392")
    assert [r.links for r in compare_topologies(["fat-tree:k=8", "ring:n=8"]).rows] == [384, 8]
