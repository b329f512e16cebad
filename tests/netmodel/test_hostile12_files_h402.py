"""Round 12 of hostile inputs (files and their limits): wordings (each test failed on the
code before it)."""

from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.fabric_ref import _build_spec


def test_a_cap_of_one_link_is_said_in_the_singular(monkeypatch):
    """Before: 'over the limit of 2,000,000 nodes and 1 edges; topology compare holds at most
    1 links together'. ring:n=4 has 4 links, so a cap of 1 refuses it before it is built."""
    monkeypatch.setenv("NETMODEL_MAX_COMPARE_LINKS", "1")
    _build_spec.cache_clear()   # a spec built before (cached) is not built again
    out = CliRunner().invoke(cli, ["topology", "compare", "ring:n=4", "ring:n=3"])
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    assert ("the fabric would have about 4 nodes and 4 edges, over the limit of 2,000,000 "
            "nodes and 1 edge; topology compare holds at most 1 link together (0 in the "
            "fabrics before it)") in out.output, out.output


def test_a_fabric_limit_of_one_node_is_said_in_the_singular(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_NODES", "1")
    _build_spec.cache_clear()
    out = CliRunner().invoke(cli, ["topology", "show", "ring:n=4"])
    assert out.exit_code == 2
    assert "about 4 nodes and 4 edges, over the limit of 1 node and 10,000,000 edges" \
        in out.output, out.output
