"""A cap's reason (topologies.limits.capped(..., why=...)) is given only where the cap itself
refuses the fabric, not where the fabric is over the memory limits alone (h276): blast-radius
caps its fabrics at 262,144 nodes and at the edge limit of the moment, so a 20,000-GPU full
mesh (199,990,000 edges, over the 10,000,000-edge limit, 20,000 nodes well under the cap) was
told 'the reliability models take a fabric of up to 131,072 GPUs ...; use a smaller fabric'
in place of the limit's own advice (raise NETMODEL_MAX_FABRIC_EDGES), which lets it build."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.limits import capped, check_size

WHY = "the caller takes 10 nodes"


def test_over_the_edge_limit_alone_gets_the_limits_advice(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_EDGES", "100")
    # the cap's edges are the limit's (as fabric_cap's max_edges()); its nodes not reached
    with capped(10, 100, why=WHY), pytest.raises(UserError) as e:
        check_size("full-mesh", nodes=5, edges=200)
    text = str(e.value)
    assert "over the limit of 10 nodes and 100 edges" in text
    assert "NETMODEL_MAX_FABRIC_EDGES" in text and WHY not in text


def test_over_the_cap_still_gets_its_reason(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_EDGES", "100")
    with capped(10, 100, why=WHY), pytest.raises(UserError, match=f"100 edges; {WHY}$"):
        check_size("ring", nodes=11, edges=11)          # nodes over the cap's 10
    with capped(10, 100, why=WHY), pytest.raises(UserError, match=f"100 edges; {WHY}$"):
        check_size("ring", nodes=11, edges=200)         # both: the cap refuses it anyway
    with capped(10, 50, why=WHY), pytest.raises(UserError, match=f"50 edges; {WHY}$"):
        check_size("ring", nodes=5, edges=60)           # edges over the cap's tighter 50


def test_blast_radius_of_a_mesh_over_the_edge_limit_says_raise_it():
    r = run_cli(["blast-radius", "--model", "Llama-3-70B", "--fabric", "full-mesh:n=20000"])
    one_line_error(r, "199,990,000 edges", "over the limit of 262,144 nodes and 10,000,000 "
                   "edges", "raise NETMODEL_MAX_FABRIC_NODES / NETMODEL_MAX_FABRIC_EDGES")
    assert "131,072 GPUs" not in r.output
