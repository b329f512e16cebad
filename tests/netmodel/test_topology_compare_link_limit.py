"""``netmodel topology compare`` counts the links of every fabric once built and refuses a
comparison over its limit (NETMODEL_MAX_COMPARE_LINKS) before any row (h237). Split from
tests/netmodel/test_topology_compare_cut_points.py (h329), whose tests of the blast radius's
graph pieces are tests/topologies/test_hardware_radius_cut_points.py."""

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.topology_compare import compare_topologies


def test_compare_counts_its_links_before_any_row(monkeypatch):
    # before: fat-tree:k=128 against a ring ran 65 s and 2.95 GB with nothing said up
    # front; now the links of every fabric are counted once built and a comparison over the
    # limit is refused with its estimate. fat-tree:k=8 has 8^3/4 = 128 GPUs and
    # 3 x 128 = 384 links (GPU-edge, edge-aggregation, aggregation-core), ring:n=8 has 8
    monkeypatch.setenv("NETMODEL_MAX_COMPARE_LINKS", "391")
    with pytest.raises(UserError, match=r"^topology compare: about 392 links \(largest "
                                         r"'fat-tree:k=8', 384; .* over the limit of 391; "
                                         r"compare smaller fabrics, or raise "
                                         r"NETMODEL_MAX_COMPARE_LINKS$"):
        compare_topologies(["fat-tree:k=8", "ring:n=8"])
    out = CliRunner().invoke(cli, ["topology", "compare", "fat-tree:k=8", "ring:n=8"])
    assert out.exit_code == 2 and "over the limit of 391" in out.output
    assert "Traceback" not in out.output
    monkeypatch.setenv("NETMODEL_MAX_COMPARE_LINKS", "392")
    assert [r.links for r in compare_topologies(["fat-tree:k=8", "ring:n=8"]).rows] == [384, 8]
