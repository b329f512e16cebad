"""Hostile ocs_cabling graph attributes (round 4): counts that the graph's OCS ports and
circuits cannot hold are refused in one line, not printed as 'OCS 100000 of 544 used'."""
import pytest

from compute.errors import UserError
from topologies import fat_tree, ocs, realize, validate


def _realized():
    g = realize(ocs(gpus=16, ports=4), "ring")  # 64 fibres, 4 OCS x 136 = 544 ports
    cabling = g.graph["ocs_cabling"]
    assert {k: v for k, v in cabling.items() if k != "fibres"} == {
        "medium": "co-packaged-optics", "cables": 64, "lanes": 576}
    assert len(cabling["fibres"]["gpu"]) == 64   # each fibre's own facts (h508)
    assert sum(d["ports"] for _, d in g.nodes(data=True) if d["kind"] == "ocs") == 544
    return g


@pytest.mark.parametrize("cables, lanes, match", [
    (545, 576, "545 cables but the graph's OCS have 544 ports"),
    (10**32, 10**32, "the graph's OCS have 544 ports"),
    (0, 10, "0 cables, fewer than the 2 x 16 its circuits ride on"),
    (31, 576, "31 cables, fewer than the 2 x 16"),
    (64, 63, "63 lanes on 64 cables"),
])
def test_cabling_that_cannot_fit_is_refused(cables, lanes, match):
    g = _realized()
    g.graph["ocs_cabling"] = {"medium": "co-packaged-optics", "cables": cables, "lanes": lanes}
    with pytest.raises(UserError, match=match) as e:
        validate(g)
    assert "\n" not in str(e.value)


def test_cabling_bounds_are_inclusive():
    g = _realized()
    for cables in (32, 544):  # 2 fibres a circuit; one fibre per OCS port
        g.graph["ocs_cabling"] = {"medium": "co-packaged-optics", "cables": cables,
                                  "lanes": cables}
        assert validate(g) is g


def test_cabling_on_a_fabric_without_ocs_is_refused():
    g = fat_tree(4)
    g.graph["ocs_cabling"] = {"medium": "fibre", "cables": 5, "lanes": 5}
    with pytest.raises(UserError, match="have 0 ports"):
        validate(g)
